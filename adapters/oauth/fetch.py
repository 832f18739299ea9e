"""One HTTP request on a connection of its own (anyio + h11), for OAuth on either role.

The client's authorization flow (discovery, registration, token requests) and the resource
server's verifiers (JWKS, introspection) make few, small requests, so each gets a fresh
connection that is closed afterwards. anyio runs it under trio and asyncio alike (the trio
client, the trio/h11 server, any ASGI server). Redirects are returned, never followed; the body
is read whole, up to ``max_bytes``; the whole exchange must finish within ``timeout`` seconds.
"""

from __future__ import annotations

import ssl
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

import anyio
import anyio.abc
import h11

from mcpwire.auth import HttpCall, HttpReply

from ..errors import TransportError, UsageError

__all__ = ["Stop", "fetch", "one_exchange"]


Stop = Callable[[int, list[tuple[str, str]], bytearray], bool]
"""``stop(status, headers, body_so_far)``: True to stop reading the response early."""


async def one_exchange(
    url: str, method: str, headers: Sequence[tuple[str, str]], body: bytes, *, timeout: float,
    user_agent: str = "mcpwire", ssl_context: ssl.SSLContext | None = None, stop: Stop | None = None,
) -> tuple[int, list[tuple[str, str]], bytes]:
    """One request on a connection of its own: ``(status, headers, body)``; status 0 when the
    connection closed before a response head. ``Host`` is the URL's unless ``headers`` name one
    (the probe sends foreign ones on purpose). Raises ``ValueError`` for a URL that is not
    http(s), ``TimeoutError`` past ``timeout``, and what the connection raises (``OSError``,
    ``anyio.BrokenResourceError``, ``h11.ProtocolError``)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"not an http(s) URL: {url!r}")
    https = parts.scheme == "https"
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    sent = [("Connection", "close"), ("User-Agent", user_agent), *headers]
    if not any(k.lower() == "host" for k, _ in headers):
        sent.insert(0, ("Host", parts.netloc.rsplit("@", 1)[-1]))
    if body or method not in ("GET", "HEAD", "DELETE"):
        sent.append(("Content-Length", str(len(body))))
    conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=64 * 1024)
    status, reply_headers, received = 0, list[tuple[str, str]](), bytearray()
    with anyio.fail_after(timeout):
        stream: anyio.abc.ByteStream
        if https:
            stream = await anyio.connect_tcp(parts.hostname, parts.port or 443, tls=True, tls_standard_compatible=False,
                                             ssl_context=ssl_context or ssl.create_default_context())
        else:
            stream = await anyio.connect_tcp(parts.hostname, parts.port or 80)
        async with stream:
            data = conn.send(h11.Request(method=method, target=target, headers=sent)) or b""
            data += (conn.send(h11.Data(data=body)) or b"") if body else b""
            data += conn.send(h11.EndOfMessage()) or b""
            await stream.send(data)
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    try:
                        chunk = await stream.receive(65536)
                    except anyio.EndOfStream:
                        chunk = b""
                    conn.receive_data(chunk)
                elif isinstance(event, h11.Response):
                    status = event.status_code
                    reply_headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in event.headers]
                    if stop is not None and stop(status, reply_headers, received):
                        break
                elif isinstance(event, h11.Data):
                    received += event.data
                    if stop is not None and stop(status, reply_headers, received):
                        break
                elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                    break
    return status, reply_headers, bytes(received)


async def fetch(call: HttpCall, *, timeout: float = 30.0, max_bytes: int = 1024 * 1024,
                ssl_context: ssl.SSLContext | None = None) -> HttpReply:
    """Send ``call`` and return the reply; :class:`TransportError` when that fails."""

    def too_big(status: int, headers: list[tuple[str, str]], body: bytearray) -> bool:
        if len(body) > max_bytes:
            raise TransportError(f"the response from {call.url} exceeds {max_bytes} bytes")
        return False

    try:
        status, headers, body = await one_exchange(call.url, call.method, call.headers, call.body, timeout=timeout,
                                                   ssl_context=ssl_context, stop=too_big)
    except ValueError:
        raise TransportError(f"not an http(s) URL: {call.url!r}") from None
    except TimeoutError:
        raise TransportError(f"{call.method} {call.url} took longer than {timeout} s") from None
    except (OSError, anyio.BrokenResourceError, h11.ProtocolError) as exc:
        raise TransportError(f"{call.method} {call.url} failed: {exc!r}") from exc
    if status == 0:
        raise TransportError(f"{call.url} closed the connection without a response")
    return HttpReply(status=status, headers=tuple(headers), body=body)
