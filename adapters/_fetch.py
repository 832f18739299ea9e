"""One HTTP request on a connection of its own (anyio + h11), for OAuth on either role.

The client's authorization flow (discovery, registration, token requests) and the resource
server's verifiers (JWKS, introspection) make few, small requests, so each gets a fresh
connection that is closed afterwards. anyio runs it under trio and asyncio alike (the trio
client, the trio/h11 server, any ASGI server). Redirects are returned, never followed; the body
is read whole, up to ``max_bytes``; the whole exchange must finish within ``timeout`` seconds.
"""

from __future__ import annotations

import ssl
from urllib.parse import urlsplit

import anyio
import anyio.abc
import h11

from mcpwire.auth import HttpCall, HttpReply

from .session import TransportError

__all__ = ["fetch"]


async def fetch(call: HttpCall, *, timeout: float = 30.0, max_bytes: int = 1024 * 1024,
                ssl_context: ssl.SSLContext | None = None) -> HttpReply:
    """Send ``call`` and return the reply; :class:`TransportError` when that fails."""
    parts = urlsplit(call.url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise TransportError(f"not an http(s) URL: {call.url!r}")
    https = parts.scheme == "https"
    port = parts.port or (443 if https else 80)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    headers = [("Host", parts.netloc.rsplit("@", 1)[-1]), ("Connection", "close"), ("User-Agent", "mcpwire"),
               *call.headers]
    if call.method != "GET" or call.body:
        headers.append(("Content-Length", str(len(call.body))))
    conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=64 * 1024)
    status, reply_headers, body = 0, list[tuple[str, str]](), bytearray()
    try:
        with anyio.fail_after(timeout):
            stream: anyio.abc.ByteStream
            if https:
                stream = await anyio.connect_tcp(parts.hostname, port, tls=True, tls_standard_compatible=False,
                                                 ssl_context=ssl_context or ssl.create_default_context())
            else:
                stream = await anyio.connect_tcp(parts.hostname, port)
            async with stream:
                data = conn.send(h11.Request(method=call.method, target=target, headers=headers)) or b""
                data += (conn.send(h11.Data(data=call.body)) or b"") if call.body else b""
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
                    elif isinstance(event, h11.Data):
                        body += event.data
                        if len(body) > max_bytes:
                            raise TransportError(f"the response from {call.url} exceeds {max_bytes} bytes")
                    elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                        break
    except TimeoutError:
        raise TransportError(f"{call.method} {call.url} took longer than {timeout} s") from None
    except (OSError, anyio.BrokenResourceError, h11.ProtocolError) as exc:
        raise TransportError(f"{call.method} {call.url} failed: {exc!r}") from exc
    if status == 0:
        raise TransportError(f"{call.url} closed the connection without a response")
    return HttpReply(status=status, headers=tuple(reply_headers), body=bytes(body))
