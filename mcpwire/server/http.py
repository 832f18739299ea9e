"""Streamable HTTP, the transport-level half: request and response shapes, admission steps 1-6.

Owns (specification: Basic > Transports > Streamable HTTP, and its security warning on Origin):

- :class:`HttpRequest`, the parsed request the host hands in (method, target, headers, body);
- the output events :class:`ResponseHead` and :class:`ResponseBody`, which map one to one onto
  h11's Response/Data/EndOfMessage and ASGI's ``http.response.start``/``http.response.body``;
- :class:`HttpPolicy` (endpoint path, Origin and Host checks, body limit) and
  :func:`admit`, which runs the transport admission steps in mcpwire's order: POST (405 with
  ``Allow``; a HEAD gets the same head and no body), path (404), Origin (403), Host (403),
  body size (413), Content-Type (415), Accept (406: a client that takes neither media type),
  returning what the client takes (``accept.py``); :func:`admit_body` strips a leading UTF-8
  BOM. JSON parsing (step 6's 400) is the envelope's; the engine calls it next. Given the
  body's ``length`` instead, the same function decides from the request head alone (for
  ``Server.check_head``);
- :func:`answer_reply`, a complete answer framed as the client takes it (JSON, or one SSE
  event for a client that takes only ``text/event-stream``);
- what hosts hand in: ``bytes`` header pairs, a ``str`` method and target and a ``bytes``
  body are the fast path; other header shapes are normalised by the header index
  (``wire/headers.py``), ``bytes`` methods and targets are decoded where they would
  otherwise be refused, bytes-like bodies copied; any other type is a
  :class:`LocalProtocolError` saying what is expected.

Every non-2xx answer carries a JSON-RPC error object, never a plain-text or HTML body.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any, Final, Sequence, Union

import msgspec

from ..wire.envelope import RequestId, encode_error
from ..wire.errors import ErrorCode, LocalProtocolError, ProtocolError, RemoteProtocolError
from ..wire.headers import HeaderView
from ..wire.sse import encode_event
from .accept import Accepts, read_accept

__all__ = [
    "Headers",
    "HeaderInput",
    "HttpRequest",
    "ResponseHead",
    "ResponseBody",
    "HttpReply",
    "HttpOutput",
    "HttpPolicy",
    "LOOPBACK_HOSTS",
    "admit",
    "admit_target",
    "as_text",
    "content_length",
    "json_reply",
    "answer_reply",
    "error_reply",
    "empty_reply",
    "sse_head",
    "batch_frames",
]

Headers = Sequence[tuple[bytes, bytes]]


HeaderInput = Union[
    Sequence[tuple[bytes, bytes]], Sequence[tuple[str, str]], Mapping[bytes, bytes], Mapping[str, str],
    Iterable[tuple[bytes, bytes]], Iterable[tuple[str, str]],
]
"""Request headers as frameworks hand them over: ``(name, value)`` pairs of ``bytes`` (h11,
ASGI: the fast path) or of ``str``, or a mapping (a multi-valued one gives every pair through
``items()``)."""


class HttpRequest(msgspec.Struct, frozen=True, kw_only=True):
    """One HTTP request as the host parsed it. Header names may be in any case.

    ``headers``: ``(name, value)`` pairs of ``bytes`` (what h11 and ASGI give; the fastest),
    pairs of ``str`` (encoded as Latin-1), or a mapping of either; a one-shot iterator only of
    ``bytes`` pairs. ``method`` and ``target``: ``str`` (``bytes`` are decoded as Latin-1).
    ``body``: the raw ``bytes`` (a ``bytearray`` or ``memoryview`` is copied; a ``str`` is
    refused, since the engine must see the bytes as sent). Any other type raises
    :class:`~mcpwire.LocalProtocolError` from :meth:`Server.receive_http` naming what is
    expected.

    ``principal``: who sent it, as the host authenticated it (an opaque string, for example the
    OAuth token's issuer and subject; ``None`` when unauthenticated). Tasks are bound to it: a
    task made for one principal is unknown (-32602) to requests of another. So are
    initialize-era sessions (a request naming another principal's session gets the unknown
    session's 404) and ``requestState`` tokens (another principal's is -32602, as a tampered one).
    """

    method: str
    target: str
    headers: HeaderInput
    body: bytes = b""
    principal: str | None = None


def as_text(member: str, value: Any) -> str:
    """A request's ``method`` or ``target`` as ``str`` (bytes decoded as Latin-1)."""
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("latin-1")
    raise LocalProtocolError(f"HttpRequest.{member} must be a str (or Latin-1 bytes), not {type(value).__name__}")


def _as_body(body: Any) -> bytes:
    if isinstance(body, (bytes, bytearray, memoryview)):
        return bytes(body)
    raise LocalProtocolError(f"HttpRequest.body must be the raw request body as bytes, not {type(body).__name__}")


class ResponseHead(msgspec.Struct, frozen=True, kw_only=True):
    """Status line and headers; always the first output event of a response."""

    status: int
    headers: tuple[tuple[bytes, bytes], ...]


class ResponseBody(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A piece of the response body. ``more=False`` ends the response."""

    data: bytes
    more: bool = False


HttpOutput = list[Union[ResponseHead, ResponseBody]]
"""Output events in the order to send them."""

HttpReply = tuple[ResponseHead, ResponseBody]
"""A complete response: head and whole body."""

LOOPBACK_HOSTS: Final = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})

_JSON_TYPE: Final = (b"content-type", b"application/json")
_SSE_HEADERS: Final = (
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
)


class HttpPolicy(msgspec.Struct, frozen=True, kw_only=True):
    """Transport settings of an HTTP server engine.

    A missing ``Origin`` is always admitted (non-browser clients send none); a present one is
    parsed strictly as ``scheme://host[:port]`` (RFC 6454), and a repeated one or one that is
    not such a value (``null`` included) is refused with 403.
    ``allowed_origins``: ``None`` (the default) admits an ``http`` or ``https`` Origin whose
    host is exactly ``localhost``, ``127.0.0.1`` or ``[::1]``, on any port (the DNS-rebinding
    protection Streamable HTTP requires); otherwise the set of origins admitted
    (``"https://app.example.com"``), each compared whole with the request's after both are
    serialized (lowercase, the scheme's default port left out), or ``{"*"}`` for any.
    ``allowed_hosts``: ``None`` skips the Host check; otherwise the Host header, parsed strictly
    as ``host[:port]``, must name one of them (compared without the port).
    ``max_body_bytes``: larger bodies are refused with 413.
    """

    path: str = "/mcp"
    allowed_origins: frozenset[str] | None = None
    allowed_hosts: frozenset[str] | None = None
    max_body_bytes: int = 4 * 1024 * 1024


# The heads of 200 JSON responses up to _SHARED_HEADS_BELOW bytes, each built once: answers come
# in few sizes, and a head is frozen, so every response of one size can share it (at most that
# many heads are kept).
_SHARED_HEADS_BELOW: Final = 4096
_shared_heads: dict[int, ResponseHead] = {}


def json_reply(status: int, body: bytes, extra: tuple[tuple[bytes, bytes], ...] = ()) -> HttpReply:
    """A complete ``application/json`` response."""
    length = len(body)
    if status == 200 and not extra and length < _SHARED_HEADS_BELOW:
        head = _shared_heads.get(length)
        if head is None:
            head = _shared_heads[length] = ResponseHead(status=200, headers=_json_headers(length))
        return head, ResponseBody(data=body)
    headers = _json_headers(length)
    return ResponseHead(status=status, headers=headers + extra if extra else headers), ResponseBody(data=body)


def answer_reply(
    status: int, body: bytes, accepts: Accepts, extra: tuple[tuple[bytes, bytes], ...] = ()
) -> HttpReply:
    """A complete answer framed as the client takes it (``accepts``, decided at admission): JSON,
    or for a client that takes only ``text/event-stream`` a 200 answer as an event stream of
    that one event (complete, so with its ``content-length``). Any other status stays JSON: the
    status says how the request ended, the three MCP-specific errors MUST be 400, and RFC 9110
    section 12.5.1 lets a server disregard Accept rather than refuse."""
    if accepts is _SSE_ONLY and status == 200:
        data = encode_event(body)
        headers = (*_SSE_HEADERS, (b"content-length", b"%d" % len(data)), *extra)
        return ResponseHead(status=200, headers=headers), ResponseBody(data=data)
    return json_reply(status, body, extra)


_SSE_ONLY: Final = Accepts.SSE


def _json_headers(length: int) -> tuple[tuple[bytes, bytes], ...]:
    return _JSON_TYPE, (b"content-length", b"%d" % length)


def error_reply(
    error: ProtocolError, request_id: RequestId | None = None, extra: tuple[tuple[bytes, bytes], ...] = ()
) -> HttpReply:
    """A complete error response: the error's HTTP status and a JSON-RPC error body."""
    rid = request_id if request_id is not None else error.request_id
    return json_reply(error.http_status, encode_error(rid, error), extra)


def empty_reply(status: int) -> HttpReply:
    """A response with no body (202 for notifications and posted responses)."""
    return ResponseHead(status=status, headers=((b"content-length", b"0"),)), ResponseBody(data=b"")


def batch_frames(outputs: list[Any] | tuple[Any, ...]) -> list[ResponseBody]:
    """One answer of an :class:`~mcpwire.sessions.HttpBatch` as events of the batch's stream:
    a JSON body becomes one event, an event stream's frames pass as they are, and no frame ends
    the stream (the host ends it once every answer has been sent)."""
    frames: list[ResponseBody] = []
    json_body = False
    for item in outputs:
        if isinstance(item, ResponseHead):
            json_body = dict(item.headers).get(b"content-type", b"").startswith(b"application/json")
        elif isinstance(item, ResponseBody) and item.data:
            frames.append(ResponseBody(data=encode_event(item.data) if json_body else item.data, more=True))
    return frames


def sse_head() -> ResponseHead:
    """The head of an event-stream response (Streamable HTTP: a POST answered as SSE)."""
    return ResponseHead(status=200, headers=_SSE_HEADERS)


def _refuse(status: int, message: str, extra: tuple[tuple[bytes, bytes], ...] = ()) -> HttpReply:
    error = RemoteProtocolError(message, code=ErrorCode.INVALID_REQUEST, http_status=status)
    return error_reply(error, None, extra)


_AMBIGUOUS_FRAMING: Final = _refuse(
    400, "Bad Request: Transfer-Encoding and Content-Length together", ((b"connection", b"close"),)
)
_SCHEME: Final = re.compile(r"[a-z][a-z0-9+.-]*")
_REG_NAME: Final = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*")  # DNS-style labels, an IPv4 address among them
_PORT: Final = re.compile(r"[0-9]{1,5}")
_DEFAULT_PORTS: Final = {"http": "80", "https": "443"}


def _authority(text: str) -> tuple[str, str] | None:
    """``host[:port]`` (already lowercase) split into the host and the port (``""`` when
    absent), or None unless it is exactly that: a registered name or IPv4 address of
    letters, digits, ``-`` and ``_`` in non-empty dot-separated labels, or a bracketed IPv6
    address (kept in brackets, in its compressed form), then nothing or ``:`` and 1 to 5
    digits up to 65535. No userinfo, path, query, fragment, whitespace or second colon."""
    if text.startswith("["):
        close = text.find("]")
        if close < 0 or "%" in text[:close]:  # no zone: it names an interface of the sender's
            return None
        try:
            host = "[" + ipaddress.IPv6Address(text[1:close]).compressed + "]"
        except ValueError:  # not an IPv6 address
            return None
        rest = text[close + 1:]
        if rest and not rest.startswith(":"):
            return None
        port = rest[1:] if rest else None
    else:
        host, sep, port_text = text.partition(":")
        if _REG_NAME.fullmatch(host) is None:
            return None
        port = port_text if sep else None
    if port is None:
        return host, ""
    if _PORT.fullmatch(port) is None or int(port) > 65535:
        return None
    return host, str(int(port))


def _origin(text: str) -> tuple[str, str, str] | None:
    """An Origin value parsed strictly as ``scheme://host[:port]`` (RFC 6454 section 7: the
    serialization of one origin, RFC 6454 section 6.2): ``(scheme, host, port)``, lowercase, the port
    ``""`` when absent or the scheme's default (80 for http, 443 for https), so that equal
    origins compare equal. None for ``null`` and for anything that is not such a value."""
    scheme, sep, rest = text.lower().partition("://")
    if not sep or _SCHEME.fullmatch(scheme) is None:
        return None
    parts = _authority(rest)
    if parts is None:
        return None
    host, port = parts
    return scheme, host, "" if port == _DEFAULT_PORTS.get(scheme) else port


def _serialized(parts: tuple[str, str, str]) -> str:
    scheme, host, port = parts
    return f"{scheme}://{host}:{port}" if port else f"{scheme}://{host}"


@lru_cache(maxsize=64)
def _allowed_origins(allowed: frozenset[str]) -> frozenset[str]:
    """An allow-list as serialized origins (entries that are not one origin never match)."""
    return frozenset(_serialized(parts) for entry in allowed if (parts := _origin(entry.strip())) is not None)


@lru_cache(maxsize=256)
def _origin_allowed(origin: bytes, allowed: frozenset[str] | None) -> bool:
    """Whether an ``Origin`` value is admitted. Without an allow-list: an ``http`` or ``https``
    origin whose host is loopback (``localhost``, ``127.0.0.1``, ``[::1]``), any port. With one:
    ``{"*"}`` admits anything; otherwise the origin, parsed and serialized, must equal a listed
    one (``null``, an opaque origin any sandboxed page sends, never does)."""
    if allowed is not None and "*" in allowed:
        return True
    try:
        parts = _origin(origin.decode("ascii").strip(" \t"))
    except UnicodeDecodeError:
        return False
    if parts is None:
        return False
    if allowed is None:
        return parts[0] in ("http", "https") and parts[1] in LOOPBACK_HOSTS
    return _serialized(parts) in _allowed_origins(allowed)


@lru_cache(maxsize=256)
def _host_allowed(host: bytes, allowed: frozenset[str]) -> bool:
    """Whether a ``Host`` value, parsed strictly as ``host[:port]`` (RFC 9110 section 7.2), names
    a listed host (compared without the port and in lowercase; an IPv6 address with or
    without its brackets). A value that is not ``host[:port]`` is never allowed."""
    parts = _authority(host.decode("latin-1").strip(" \t").lower())
    return parts is not None and parts[0] in _allowed_host_names(allowed)


@lru_cache(maxsize=64)
def _allowed_host_names(allowed: frozenset[str]) -> frozenset[str]:
    """``allowed_hosts`` as :func:`_authority` gives hosts: lowercase, an IPv6 address in
    brackets and compressed (``::1``, ``[::1]`` and ``[0::1]`` alike). An entry that is not a
    bare host (one with a port, a scheme or a path) matches nothing."""
    names = set()
    for entry in allowed:
        text = entry.strip().lower()
        if ":" in text and not text.startswith("["):
            text = f"[{text}]"  # a bare IPv6 address
        parts = _authority(text)
        if parts is not None:
            names.add(parts[0])
    return frozenset(names)


_NO_BODY: Final = ResponseBody(data=b"")


def content_length(value: bytes | None) -> int | None:
    """The size a ``Content-Length`` value (``None``: absent or repeated) announces when it is
    one run of digits (huge ones capped just past int64), else ``None``: framing errors are
    the HTTP library's to answer."""
    if value is None:
        return None
    if not value.isdigit():  # the usual value is bare digits: no copy stripped of them
        value = value.strip(b" \t")
        if not value.isdigit():
            return None
    return int(value) if len(value) <= 19 else 1 << 63


def admit_target(request: HttpRequest, policy: HttpPolicy, view: HeaderView) -> HttpReply | None:
    """The admission steps every method shares (POST, and GET and DELETE on an initialize-era
    session): framing (400), path (404), Origin (403), Host (403). ``None`` when they pass.

    Framing: a request that carries both ``Transfer-Encoding`` and ``Content-Length`` could
    have been framed differently by a proxy in front (request smuggling), so it is refused,
    400 with ``connection: close``: the server MUST close the connection after responding
    (RFC 9112 section 6.3). Whichever HTTP parser the host runs, nothing hidden after such a
    head is then read from that connection."""
    if view.first(b"transfer-encoding") is not None and view.first(b"content-length") is not None:
        return _AMBIGUOUS_FRAMING
    path = request.target
    if path != policy.path:
        if type(path) is not str:
            path = as_text("target", path)
        if path != policy.path and (path := path.split("?", 1)[0]) != policy.path:
            return _refuse(404, f"No MCP endpoint at {path}")
    origin = view.first(b"origin")
    if origin is not None and (view.repeated(b"origin") or not _origin_allowed(origin, policy.allowed_origins)):
        return _refuse(403, "Origin is not allowed")
    if policy.allowed_hosts is not None:
        host = view.first(b"host")
        if host is None or view.repeated(b"host") or not _host_allowed(host, policy.allowed_hosts):
            return _refuse(403, "Host is not allowed")
    return None


def admit(
    request: HttpRequest, policy: HttpPolicy, view: HeaderView | None = None, length: int | None = None
) -> Accepts | HttpReply:
    """The transport admission steps, up to (not including) JSON parsing.

    ``view`` indexes ``request.headers`` (built here when not given). Returns what the client
    takes (:class:`~mcpwire.server.accept.Accepts`, which every framing of its answers then
    follows), or the complete reply that refuses the request; :func:`admit_body` then gives the
    body to parse. With ``length`` (the size the head announces) the body is not looked at:
    the answer is what the head alone decides. A HEAD request is refused like any other method
    but without a body: the same status and headers, ``content-length`` included, as a GET's
    answer would carry (RFC 9110 sections 9.3.2 and 8.6).

    Accept (406) refuses only a client that takes neither ``application/json`` nor
    ``text/event-stream`` (``accept.py`` reads the header); what must stream is refused later,
    where it is known (a listen stream, a session request that asks its client).
    """
    method = request.method
    if method != "POST" and (type(method) is str or as_text("method", method) != "POST"):
        head, error = _refuse(405, "Streamable HTTP accepts POST only", ((b"allow", b"POST"),))
        return (head, _NO_BODY) if method in ("HEAD", b"HEAD") else (head, error)
    body = request.body
    if type(body) is not bytes:
        body = _as_body(body)
    if view is None:
        view = HeaderView(request.headers)
    refused = admit_target(request, policy, view)
    if refused is not None:
        return refused
    if (len(body) if length is None else length) > policy.max_body_bytes:
        return _too_large(policy)
    content_type = view.first(b"content-type")
    if (
        content_type != b"application/json"
        and (content_type is None or content_type.split(b";", 1)[0].strip().lower() != b"application/json")
    ) or view.repeated(b"content-type"):
        return _refuse(415, "Expected application/json")
    accept = view.first(b"accept")
    if accept is not None and view.repeated(b"accept"):
        accept = b",".join(view.all(b"accept"))  # one list (RFC 9110 section 5.3)
    takes = read_accept(accept)
    if takes is None:
        return _NOT_ACCEPTABLE
    return takes


_NOT_ACCEPTABLE: Final = _refuse(
    406, "Not Acceptable: answers are application/json or text/event-stream, and Accept lists neither"
    " (the specification asks a client to list both)")


def admit_body(request: HttpRequest, policy: HttpPolicy) -> bytes | HttpReply:
    """The body of a request whose head passed :func:`admit` (here or in ``Server.check_head``):
    the one step the body itself decides, its size (413). Returns the body to parse (a leading
    UTF-8 BOM removed), or the reply that refuses it."""
    body = request.body
    if type(body) is not bytes:
        body = _as_body(body)
    if len(body) > policy.max_body_bytes:
        return _too_large(policy)
    return body[3:] if body[:3] == _BOM else body


_BOM: Final = b"\xef\xbb\xbf"


def _too_large(policy: HttpPolicy) -> HttpReply:
    return _refuse(413, f"Request body exceeds {policy.max_body_bytes} bytes")
