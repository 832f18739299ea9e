"""Streamable HTTP, the transport-level half: request and response shapes, admission steps 1-6.

Owns (wire reference sections 13.1, 13.2 steps 1-6, 13.3, 13.7):

- :class:`HttpRequest`, the parsed request the host hands in (method, target, headers, body);
- the output events :class:`ResponseHead` and :class:`ResponseBody`, which map one to one onto
  h11's Response/Data/EndOfMessage and ASGI's ``http.response.start``/``http.response.body``;
- :class:`HttpPolicy` (endpoint path, Origin and Host checks, body limit) and
  :func:`admit`, which runs admission steps 1-6 in the reference's order: POST (405 with
  ``Allow``), path (404), Origin (403), Host (403), body size (413), Content-Type (415),
  Accept (406), and strips a leading UTF-8 BOM. JSON parsing (step 6's 400) is the
  envelope's; the engine calls it next.

Every non-2xx answer carries a JSON-RPC error object, never a plain-text or HTML body.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final, Sequence, Union

import msgspec

from ..wire.envelope import RequestId, encode_error
from ..wire.errors import ErrorCode, ProtocolError, RemoteProtocolError
from ..wire.headers import HeaderView

__all__ = [
    "Headers",
    "HttpRequest",
    "ResponseHead",
    "ResponseBody",
    "HttpReply",
    "HttpOutput",
    "HttpPolicy",
    "LOOPBACK_HOSTS",
    "admit",
    "json_reply",
    "error_reply",
    "empty_reply",
    "sse_head",
]

Headers = Sequence[tuple[bytes, bytes]]


class HttpRequest(msgspec.Struct, frozen=True, kw_only=True):
    """One HTTP request as the host parsed it. Header names may be in any case."""

    method: str
    target: str
    headers: Headers
    body: bytes = b""


class ResponseHead(msgspec.Struct, frozen=True, kw_only=True):
    """Status line and headers; always the first output event of a response."""

    status: int
    headers: tuple[tuple[bytes, bytes], ...]


class ResponseBody(msgspec.Struct, frozen=True, kw_only=True):
    """A piece of the response body. ``more=False`` ends the response."""

    data: bytes
    more: bool = False


HttpOutput = list[Union[ResponseHead, ResponseBody]]
"""Output events in the order to send them."""

HttpReply = tuple[ResponseHead, ResponseBody]
"""A complete response: head and whole body."""

LOOPBACK_HOSTS: Final = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})

_JSON_HEADERS: Final = ((b"content-type", b"application/json"),)
_SSE_HEADERS: Final = (
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
)


class HttpPolicy(msgspec.Struct, frozen=True, kw_only=True):
    """Transport settings of an HTTP server engine.

    ``allowed_origins``: ``None`` (the default) admits a missing Origin and any http(s) Origin
    whose host is loopback (DNS-rebinding protection, section 13.7); otherwise the set of
    exact origins (``"https://app.example.com"``) admitted, or ``{"*"}`` for any.
    ``allowed_hosts``: ``None`` skips the Host check; otherwise the Host header (without port)
    must be one of them. ``max_body_bytes``: larger bodies are refused with 413.
    """

    path: str = "/mcp"
    allowed_origins: frozenset[str] | None = None
    allowed_hosts: frozenset[str] | None = None
    max_body_bytes: int = 4 * 1024 * 1024


def json_reply(status: int, body: bytes, extra: tuple[tuple[bytes, bytes], ...] = ()) -> HttpReply:
    """A complete ``application/json`` response."""
    headers = _JSON_HEADERS + ((b"content-length", b"%d" % len(body)),) + extra
    return ResponseHead(status=status, headers=headers), ResponseBody(data=body)


def error_reply(
    error: ProtocolError, request_id: RequestId | None = None, extra: tuple[tuple[bytes, bytes], ...] = ()
) -> HttpReply:
    """A complete error response: the error's HTTP status and a JSON-RPC error body."""
    rid = request_id if request_id is not None else error.request_id
    return json_reply(error.http_status, encode_error(rid, error), extra)


def empty_reply(status: int) -> HttpReply:
    """A response with no body (202 for notifications and posted responses)."""
    return ResponseHead(status=status, headers=((b"content-length", b"0"),)), ResponseBody(data=b"")


def sse_head() -> ResponseHead:
    """The head of an event-stream response (section 8.3)."""
    return ResponseHead(status=200, headers=_SSE_HEADERS)


def _refuse(status: int, message: str, extra: tuple[tuple[bytes, bytes], ...] = ()) -> HttpReply:
    error = RemoteProtocolError(message, code=ErrorCode.INVALID_REQUEST, http_status=status)
    return error_reply(error, None, extra)


def _host_of(authority: str) -> str:
    # "host:port", "[v6]:port" or "host" -> lowercase host (brackets kept for IPv6).
    authority = authority.strip().lower()
    if authority.startswith("["):
        return authority[: authority.find("]") + 1] if "]" in authority else authority
    return authority.rsplit(":", 1)[0] if authority.count(":") == 1 else authority


def _origin_allowed(origin: bytes, allowed: frozenset[str] | None) -> bool:
    try:
        text = origin.decode("ascii").strip()
    except UnicodeDecodeError:
        return False
    if allowed is not None:
        return "*" in allowed or text in allowed
    scheme, sep, rest = text.partition("://")
    if not sep or scheme.lower() not in ("http", "https") or "@" in rest or "/" in rest:
        return False
    return _host_of(rest) in LOOPBACK_HOSTS


@lru_cache(maxsize=256)
def _accept_ok(value: bytes) -> bool:
    # Clients send the same few Accept values over and over: parse each once.
    ranges = _media_types(value)
    return _accepts(ranges, "application/json") and _accepts(ranges, "text/event-stream")


def _media_types(value: bytes) -> list[tuple[str, float]]:
    # Accept header: comma-separated media ranges with optional q (RFC 9110 section 12.5.1).
    out = []
    for item in value.decode("latin-1").split(","):
        parts = item.split(";")
        media = parts[0].strip().lower()
        q = 1.0
        for param in parts[1:]:
            key, _, val = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(val.strip())
                except ValueError:
                    q = 0.0
        if media:
            out.append((media, q))
    return out


def _accepts(ranges: list[tuple[str, float]], media: str) -> bool:
    major = media.split("/")[0] + "/*"
    return any(q > 0 and r in (media, major, "*/*") for r, q in ranges)


def admit(request: HttpRequest, policy: HttpPolicy, view: HeaderView | None = None) -> bytes | HttpReply:
    """Admission steps 1-6 of section 13.2, up to (not including) JSON parsing.

    ``view`` indexes ``request.headers`` (built here when not given). Returns the body to
    parse (a leading UTF-8 BOM removed), or the complete reply that refuses the request.
    """
    if request.method != "POST":
        return _refuse(405, "Streamable HTTP accepts POST only", ((b"allow", b"POST"),))
    path = request.target
    if path != policy.path and (path := path.split("?", 1)[0]) != policy.path:
        return _refuse(404, f"No MCP endpoint at {path}")
    if view is None:
        view = HeaderView(request.headers)
    origin = view.first(b"origin")
    if origin is not None and (view.repeated(b"origin") or not _origin_allowed(origin, policy.allowed_origins)):
        return _refuse(403, "Origin is not allowed")
    if policy.allowed_hosts is not None:
        host = view.first(b"host")
        if host is None or view.repeated(b"host") or _host_of(host.decode("latin-1")) not in policy.allowed_hosts:
            return _refuse(403, "Host is not allowed")
    if len(request.body) > policy.max_body_bytes:
        return _refuse(413, f"Request body exceeds {policy.max_body_bytes} bytes")
    content_type = view.first(b"content-type")
    if (
        content_type is None
        or view.repeated(b"content-type")
        or (content_type != b"application/json" and content_type.split(b";", 1)[0].strip().lower() != b"application/json")
    ):
        return _refuse(415, "Expected application/json")
    accept = view.all(b"accept")
    if not _accept_ok(accept[0] if len(accept) == 1 else b",".join(accept)):
        return _refuse(406, "Accept must list application/json and text/event-stream")
    body = request.body
    if body[:3] == b"\xef\xbb\xbf":
        body = body[3:]
    return body
