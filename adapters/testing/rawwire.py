"""Raw HTTP exchanges for the tools that test other servers (the probe and the fuzzer): what is
sent and what comes back, byte for byte, and nothing about whether it conforms (that is
:mod:`mcpwire_adapters.testing.judge`).

This module owns:

- :class:`Request` (one raw HTTP request, or one stdio line) and :class:`Reply` (a status,
  headers and a body, and the JSON-RPC messages in it); :data:`Exchange` (a request, its reply
  or why there is none) and :data:`Send` (a coroutine making one exchange);
- builders of well-formed 2026-07-28 requests: :func:`meta` (a valid request ``_meta``),
  :func:`headers` (the headers a correct client sends), :func:`rpc` (a POST of one request);
  :func:`sent_id` and :func:`first_result` read a request's id and a reply's result back;
- the HTTP sender: :func:`http_exchange` (one request on a fresh connection, with anyio and h11,
  so a request may be anything, even what no client would send), :func:`http_sender` (one
  connection per request, never raising for a failed exchange; :data:`UNSENDABLE` marks a
  request HTTP/1.1 cannot carry), :func:`paced` (at most so many requests a second), and
  :func:`is_loopback_host`.

The stdio sender, one server process for a whole run, is
:func:`mcpwire_adapters.testing.rawwire_stdio.stdio_sender`.
"""

from __future__ import annotations

import ipaddress
import json
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import h11

from ..oauth.fetch import one_exchange

__all__ = [
    "BOM", "CAPS_KEY", "INFO_KEY", "MAX_BODY", "NDJSON", "NOT_JSON", "PV_KEY", "SUB_KEY", "TIMED_OUT", "UNSENDABLE",
    "VERSION", "Exchange", "Reply", "Request", "Send", "first_result", "headers", "http_exchange", "http_sender",
    "is_loopback_host", "media_type", "meta", "paced", "rpc", "sent_id", "timed_out",
]

VERSION = "2026-07-28"
PV_KEY = "io.modelcontextprotocol/protocolVersion"
CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"
INFO_KEY = "io.modelcontextprotocol/clientInfo"
SUB_KEY = "io.modelcontextprotocol/subscriptionId"
NDJSON = "application/x-ndjson"  # the content type a stdio Reply carries: its body is the lines read
NOT_JSON = "mcpwire-probe"  # the key of the stand-in Reply.messages gives for text that is not JSON
BOM = b"\xef\xbb\xbf"
MAX_BODY = 1024 * 1024

UNSENDABLE = "unsendable"
"""How an exchange's error starts when HTTP/1.1 cannot carry the request at all (a header value
h11 refuses): the request's fault, not the server's."""

TIMED_OUT = "no complete reply within"
"""How an exchange's error starts when the reply did not come (or did not end) within the time
allowed: the request may simply take that long, which breaks no rule (:func:`timed_out`)."""


def timed_out(error: str | None) -> bool:
    """Whether an exchange's ``error`` says its reply did not come within the time allowed."""
    return error is not None and error.startswith(TIMED_OUT)


@dataclass(frozen=True)
class Request:
    """One raw HTTP request; ``rpc_id`` is the JSON-RPC id the body carries (for the id rules)."""

    method: str
    headers: tuple[tuple[str, str], ...]
    body: bytes = b""
    rpc_id: Any = None
    first_event_only: bool = False  # an SSE stream: stop after its first event (subscriptions/listen)
    head_only: bool = False  # stop at the response head (a stream that may stay silent)
    answered: bool | None = None  # stdio: whether the server answers it (None: read from the body)
    sentinel: bool = True  # stdio: follow it with a sentinel (False: a request answered, read up to its answer)
    grace: float | None = None  # stdio: once the sentinel is answered, wait at most this long for its answer


def media_type(value: str) -> str:
    """The media type of a Content-Type (or Accept) value: no parameters, lower case."""
    return value.split(";")[0].strip().lower()


@dataclass(frozen=True)
class Reply:
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    def messages(self, *, whole_events_only: bool = False) -> list[Any]:
        """The JSON-RPC messages in the body: one JSON value, each NDJSON line, or each SSE
        ``data:`` event but one whose data is empty, which is not dispatched (WHATWG HTML,
        event stream interpretation: a priming event); ``whole_events_only``: only SSE events
        already ended, for a stream still being read; nothing for other types. Text that is not
        JSON stands as ``{NOT_JSON: "not JSON", "text": ...}``."""
        kind = media_type(self.header("content-type") or "")
        if whole_events_only and kind != "text/event-stream":
            return []
        if kind == NDJSON:
            return [_loads(line.decode("utf-8", "replace")) for line in self.body.splitlines() if line.strip()]
        if kind == "text/event-stream":
            out, data = [], list[str]()
            for line in self.body.decode("utf-8", "replace").replace("\r\n", "\n").split("\n"):
                if line.startswith("data:"):
                    data.append(line[5:].removeprefix(" "))
                elif not line and data:
                    if "\n".join(data):  # an event whose data is empty (a priming event) is no message
                        out.append(_loads("\n".join(data)))
                    data = []
            if data and "\n".join(data) and not whole_events_only:
                out.append(_loads("\n".join(data)))
            return out
        return [_loads(self.body.decode("utf-8", "replace"))] if self.body else []


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return {NOT_JSON: "not JSON", "text": text[:200]}


Exchange = tuple[Request, "Reply | None", "str | None"]  # request, reply, transport error
Send = Callable[[Request], Awaitable[Exchange]]


# -- building requests ------------------------------------------------------------------------------
def meta(**extra: Any) -> dict[str, Any]:
    """A valid request ``_meta`` of 2026-07-28 (``extra`` members added or replaced)."""
    return {PV_KEY: VERSION, CAPS_KEY: {}, INFO_KEY: {"name": "mcpwire-probe", "version": "1"}, **extra}


def headers(method: str | None, name: str | None = None, *, version: str | None = VERSION,
            content_type: str | None = "application/json",
            accept: str | None = "application/json, text/event-stream",
            extra: Sequence[tuple[str, str]] = ()) -> tuple[tuple[str, str], ...]:
    """The headers of a POST (each left out when given None), then ``extra``."""
    out = [("Content-Type", content_type), ("Accept", accept), ("MCP-Protocol-Version", version),
           ("Mcp-Method", method), ("Mcp-Name", name)]
    return tuple((k, v) for k, v in out if v is not None) + tuple(extra)


def rpc(method: str, params: Any = None, *, rpc_id: Any = 1, name: str | None = None,
        hdrs: tuple[tuple[str, str], ...] | None = None, raw: Any = None, **kw: Any) -> Request:
    """A POST of one JSON-RPC request (``raw``: this JSON value instead); ``params`` default to
    just a valid ``_meta``; headers are right unless ``hdrs`` replaces them."""
    body = raw if raw is not None else {"jsonrpc": "2.0", "id": rpc_id, "method": method,
                                        "params": {"_meta": meta()} if params is None else params}
    return Request("POST", hdrs if hdrs is not None else headers(method, name), json.dumps(body).encode(),
                   rpc_id=rpc_id, **kw)


def sent_id(request: Request) -> Any:
    """The id the request's body carries (None when it has none, or is not JSON)."""
    try:
        message = json.loads(request.body.removeprefix(BOM))
    except ValueError:
        return None
    return message.get("id") if isinstance(message, dict) else None


def first_result(reply: Reply | None) -> dict[str, Any] | None:
    """The first result object in a reply of HTTP 200 (or a stdio reply), or None."""
    if reply is None or reply.status not in (0, 200):  # 0: a stdio reply
        return None
    for message in reply.messages():
        result = message.get("result") if isinstance(message, dict) else None
        if isinstance(result, dict):
            return result
    return None


# -- sending over HTTP -------------------------------------------------------------------------------
def is_loopback_host(host: str) -> bool:
    """``localhost`` or a loopback IP address (a URL's host, without brackets)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def http_exchange(url: str, request: Request, *, timeout: float) -> Reply:
    """Send ``request`` to ``url`` on a fresh connection and read the reply (up to 1 MiB; with
    ``first_event_only``, up to the end of the first SSE event, then hang up; with ``head_only``,
    up to the response head)."""

    def enough(status: int, headers: list[tuple[str, str]], body: bytearray) -> bool:
        # A whole event with data ends a streamed answer the check needs only the start of (a
        # keepalive comment before it does not count).
        return len(body) > MAX_BODY or request.head_only or (request.first_event_only and bool(
            Reply(0, tuple(headers), bytes(body)).messages(whole_events_only=True)))

    status, reply_headers, body = await one_exchange(
        url, request.method, request.headers, request.body, timeout=timeout, user_agent="mcpwire-probe", stop=enough)
    return Reply(status, tuple(reply_headers), body)


def http_sender(url: str, rate: float, timeout: float) -> Send:
    """Send each request to ``url`` on a connection of its own, at most ``rate`` a second: the
    reply, or why there is none (no reply within ``timeout``, :data:`UNSENDABLE`, or what the
    connection raised). Never raises for a failure of the exchange."""
    async def send(request: Request) -> Exchange:
        try:
            return request, await http_exchange(url, request, timeout=timeout), None
        except TimeoutError:
            return request, None, f"{TIMED_OUT} {timeout:g} s"
        except h11.LocalProtocolError as exc:
            return request, None, f"{UNSENDABLE}: {exc}"
        except Exception as exc:  # noqa: BLE001 - any failure of the connection is a finding, not a crash
            return request, None, f"{type(exc).__name__}: {exc}"

    return paced(send, rate)


class _Pace:
    """At most ``rate`` requests per second (the first goes at once)."""

    def __init__(self, rate: float) -> None:
        self.interval = 1.0 / rate if rate > 0 else 0.0
        self.next = -math.inf

    async def wait(self) -> None:
        now = anyio.current_time()
        if now < self.next:
            await anyio.sleep(self.next - now)
        self.next = max(now, self.next) + self.interval


def paced(send: Send, rate: float) -> Send:
    """``send``, at most ``rate`` requests a second (0: no limit)."""
    pace = _Pace(rate)

    async def paced_send(request: Request) -> Exchange:
        await pace.wait()
        return await send(request)

    return paced_send
