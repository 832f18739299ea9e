"""Every HTTP header rule of MCP 2026-07-28, shared by the server and client engines.

Owns (specification: Basic > Transports > Streamable HTTP, protocol version header and server
validation; Server > Tools, x-mcp-header; SEP-2243):

* the header names ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``;
* :class:`HeaderView`, the one-pass, case-insensitive view of a request's headers;
* ``x-mcp-header`` annotations of a tool's ``inputSchema`` (:func:`param_headers`), checked
  once when a tool is registered (server) or listed (client), never per call;
* the value encoding (plain ASCII, or ``=?base64?<UTF-8 as base64>?=``) both ways;
* the initialize-era session headers ``Mcp-Session-Id`` and ``Last-Event-ID`` (specification
  2025-11-25: Basic > Transports > Streamable HTTP, session management and resumability) and
  what a client sends on a session (:func:`session_headers`);
* what a client sends (:func:`request_headers`) and what a server checks
  (:func:`check_request_headers`); every failure there is -32020 with HTTP 400 (schema $defs HeaderMismatchError).

Not here: comparing ``MCP-Protocol-Version`` with ``_meta`` (the engine owns ``_meta``; it
reads the header through :func:`protocol_version_header`), and Origin/Host (``server/http.py``).

Headers are ``(name, value)`` byte pairs as h11 and ASGI give them. Names compare ignoring
case; values are trimmed of SP/HTAB (RFC 9110 section 5.5 OWS) before any comparison.
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any, Final, Literal, TypeAlias, cast

import msgspec

from .errors import ErrorCode, LocalProtocolError, ProtocolError, RemoteProtocolError
from .methods import METHODS
from .versions import REVISIONS

__all__ = [
    "MCP_METHOD",
    "MCP_NAME",
    "MCP_PARAM_PREFIX",
    "MCP_PROTOCOL_VERSION",
    "MCP_SESSION_ID",
    "LAST_EVENT_ID",
    "NAMED_METHODS",
    "HeaderMismatch",
    "HeaderView",
    "normalise_headers",
    "InvalidParamHeader",
    "ParamHeader",
    "check_request_headers",
    "decode_param_value",
    "encode_param_value",
    "param_headers",
    "protocol_version_header",
    "request_headers",
    "session_headers",
    "index_headers",
]

# Lowercase, as looked up; emitted names use the display case below.
MCP_PROTOCOL_VERSION = b"mcp-protocol-version"
MCP_METHOD = b"mcp-method"
MCP_NAME = b"mcp-name"
MCP_PARAM_PREFIX = b"mcp-param-"
MCP_SESSION_ID = b"mcp-session-id"
LAST_EVENT_ID = b"last-event-id"

#: Methods whose ``Mcp-Name`` mirrors a params field, and which field (server validation).
NAMED_METHODS: Mapping[str, str] = {name: spec.name_param for name, spec in METHODS.items() if spec.name_param}
"""Methods whose request carries ``Mcp-Name``, and the params member it mirrors (the method table's column)."""

_ANNOTATION = "x-mcp-header"
_OWS = b" \t"
# RFC 9110 section 5.6.2 tchar. fullmatch, not match with "$", which would admit a trailing "\n".
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# The runner rejects "number" (http-invalid-tool-headers: invalid_number_header) although the
# SEP's constraint list says "number, string, boolean"; we follow the runner.
_Kind = Literal["string", "integer", "boolean"]
_Path = tuple[str, ...]
_Link: TypeAlias = "tuple[_Link, str] | None"  # a path as nested (parent, key) pairs
_KINDS: dict[object, _Kind] = {"string": "string", "integer": "integer", "boolean": "boolean"}
_PY_TYPES: dict[str, type] = {"string": str, "integer": int, "boolean": bool}
# Keywords whose values are JSON data, not subschemas: an "x-mcp-header" key inside is data.
_DATA_KEYWORDS = frozenset({_ANNOTATION, "const", "default", "enum", "examples"})
# Sentinel markers are case-sensitive: the runner's client check uses /^=\?base64\?(.*)\?=$/
# and the SEP prose says so; the SEP's test table ("=?BASE64?...?=" MUST be accepted)
# contradicts both and is being corrected (modelcontextprotocol#2936), so "=?BASE64?" is a
# literal value here.
_B64_OPEN = "=?base64?"
_B64_CLOSE = "?="
_B64_MIN = len(_B64_OPEN) + len(_B64_CLOSE)
_NUMBER = re.compile(rb"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
# RFC 9110 field-value without obs-text: VCHAR, SP, HTAB. A version is one token of VCHAR.
_FIELD_VALUE = re.compile(rb"[\t\x20-\x7e]*")
_VCHARS = re.compile(rb"[\x21-\x7e]+")


class HeaderMismatch(RemoteProtocolError):
    """An MCP header is missing, repeated, malformed or disagrees with the body: -32020, 400."""

    default_code = ErrorCode.HEADER_MISMATCH


class InvalidParamHeader(ProtocolError):
    """A tool's ``inputSchema`` carries an ``x-mcp-header`` annotation that breaks a rule.

    Code -32602. A server raises it to the host when the tool is registered; a client
    engine catches it per tool and leaves that tool out of the ``tools/list`` result
    (SEP-2243: one malformed tool must not hide the others).
    """

    default_code = ErrorCode.INVALID_PARAMS


_lower: Final = bytes.lower
_islower: Final = bytes.islower
_NO_REPEATS: Final[dict[bytes, list[bytes]]] = {}  # shared by every view whose names all come once; never written
_NONE_REPEATED: Final = _NO_REPEATS.__contains__


class HeaderView:
    """The request's headers, indexed once: ``HeaderView(headers)``.

    Keeps the first value of each name (lowercased) and every value of the names that
    repeat, so each lookup is one dict access. ``headers`` are ``(name, value)`` pairs of
    ``bytes``, indexed as they are: the loop checks their types as it goes. The common case,
    a list or tuple with every name once, is :func:`index_headers` (pass its ``index`` when
    you have it). Anything else (``str`` pairs, a mapping, other iterables of pairs) is
    converted by :func:`normalise_headers` and indexed again; :class:`LocalProtocolError`
    when it cannot be.
    """

    __slots__ = ("_first", "_more", "first", "repeated")

    first: Callable[[bytes], bytes | None]
    """``first(name)``: the first raw value of ``name`` (lowercase), untrimmed, or None (the
    index's own ``dict.get``: a lookup is one C call)."""
    repeated: Callable[[bytes], bool]
    """``repeated(name)``: whether ``name`` (lowercase) comes more than once."""

    def __init__(self, headers: Any, index: dict[bytes, bytes] | None = None) -> None:
        if index is None:
            index = index_headers(headers)
        if index is not None:  # the common case, every name once
            self._first = index
            self._more = _NO_REPEATS
            self.first = index.get
            self.repeated = _NONE_REPEATED
            return
        first: dict[bytes, bytes] = {}
        more: dict[bytes, list[bytes]] = {}
        try:
            for raw_name, value in headers:
                name = _lower(raw_name)
                if type(value) is not bytes:
                    raise TypeError(value)
                if name in first:
                    more.setdefault(name, [first[name]]).append(value)
                else:
                    first[name] = value
        except (TypeError, ValueError):
            if isinstance(headers, Iterator):  # one-shot: the pairs read are gone
                raise LocalProtocolError("HTTP headers that are not bytes pairs must come in a list or a mapping") from None
            first.clear()
            more.clear()
            for raw_name, value in normalise_headers(headers):
                name = raw_name.lower()
                if name in first:
                    more.setdefault(name, [first[name]]).append(value)
                else:
                    first[name] = value
        self._first = first
        self._more = more
        self.first = first.get
        self.repeated = more.__contains__

    def __contains__(self, name: bytes) -> bool:
        return name.lower() in self._first

    def all(self, name: bytes) -> list[bytes]:
        """Every raw value of ``name`` (lowercase), in order."""
        values = self._more.get(name)
        if values is None:
            value = self._first.get(name)
            return [] if value is None else [value]
        return list(values)

    def get_one(self, name: bytes, label: str | None = None) -> bytes | None:
        """The value of ``name``, trimmed of SP/HTAB, or None when absent.

        Raises :class:`HeaderMismatch` when the header is repeated. ``label`` is the
        display name used in the error message (default: ``name`` as given).
        """
        key = name.lower()
        if key in self._more:
            raise _missing(label or name.decode("latin-1"))
        value = self._first.get(key)
        return None if value is None else value.strip(_OWS)

    def require_one(self, name: bytes, label: str | None = None) -> bytes:
        """Like :meth:`get_one`, but a missing header is a :class:`HeaderMismatch` too."""
        value = self.get_one(name, label)
        if value is None:
            raise _missing(label or name.decode("latin-1"))
        return value


def index_headers(headers: Any) -> dict[bytes, bytes] | None:
    """:class:`HeaderView`'s common case without the view: ``headers`` a list or tuple of
    ``bytes`` pairs, each name once (in any case). Their index, lowercase name to raw value;
    ``None`` for anything else (the view then indexes them the general way)."""
    if type(headers) is not tuple and type(headers) is not list:
        return None
    index: dict[bytes, bytes] = {}
    try:
        for raw_name, value in headers:
            if type(value) is not bytes:
                return None
            # One store per header; names mostly come lowercase (h11, ASGI): those are kept.
            # bytes.islower and bytes.lower refuse any other type of name.
            index[raw_name if _islower(raw_name) else _lower(raw_name)] = value
    except (TypeError, ValueError):
        return None
    return index if len(index) == len(headers) else None


def _header_bytes(value: Any) -> bytes:
    if type(value) is bytes:
        return value
    if isinstance(value, str):
        try:
            return value.encode("latin-1")
        except UnicodeEncodeError:
            raise LocalProtocolError(f"HTTP header {value[:40]!r} is not Latin-1 text") from None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise LocalProtocolError(f"HTTP header names and values must be bytes or str, not {type(value).__name__}")


def normalise_headers(headers: Any) -> list[tuple[bytes, bytes]]:
    """Request headers as a list of ``(name, value)`` pairs of ``bytes``.

    Takes pairs of ``bytes`` or ``str`` (``str`` encoded as Latin-1, the way HTTP libraries
    decode them; ``bytearray``/``memoryview`` copied), a mapping (its ``items()``: a
    multi-valued mapping gives every pair), or any iterable of pairs. Anything else raises
    :class:`LocalProtocolError` saying what is expected.
    """
    if isinstance(headers, Mapping):
        headers = headers.items()
    elif isinstance(headers, (str, bytes, bytearray, memoryview)) or not isinstance(headers, Iterable):
        raise LocalProtocolError(
            f"HTTP headers must be (name, value) pairs of bytes or str, or a mapping; got {type(headers).__name__}"
        )
    out: list[tuple[bytes, bytes]] = []
    for pair in headers:
        try:
            name, value = pair
        except (TypeError, ValueError):
            raise LocalProtocolError(f"HTTP headers must be (name, value) pairs; got {pair!r:.60}") from None
        out.append((_header_bytes(name), _header_bytes(value)))
    return out


class ParamHeader(msgspec.Struct, frozen=True, kw_only=True):
    """One valid ``x-mcp-header`` annotation.

    ``argument`` is the top-level argument name; ``path`` the keys below it for a nested
    property (empty for a top-level one); ``header`` the annotation as written (the header
    sent is ``Mcp-Param-`` + ``header``); ``kind`` the property's JSON type.
    """

    argument: str
    header: str
    kind: _Kind
    path: _Path = ()

    @property
    def header_name(self) -> str:
        """The header's display name, ``Mcp-Param-<header>``."""
        return "Mcp-Param-" + self.header


def _missing(label: str) -> HeaderMismatch:
    return HeaderMismatch(f"Missing or repeated required header: {label}")


def param_headers(input_schema: Mapping[str, Any], *, tool: str | None = None) -> tuple[ParamHeader, ...]:
    """The ``x-mcp-header`` annotations of a tool's input schema, in schema order.

    Call it once per tool, never per call. Raises :class:`InvalidParamHeader` naming the
    property and the rule broken when an annotation is not a non-empty RFC 9110 token, sits on
    a property whose ``type`` is not exactly ``"string"``, ``"integer"`` or ``"boolean"``,
    repeats another ignoring case, or is not reached from the root through ``properties``
    keywords only (so not under ``items``, ``anyOf``, ``$defs``...). Nested properties
    reached through ``properties`` count: the SEP allows any depth, and other implementations mirror them
    (the runner tests only top-level ones). The walk uses an explicit stack: no recursion.
    """
    prefix = f"tool {tool!r}: " if tool is not None else ""
    found: list[ParamHeader] = []
    # (node, property path from the arguments, JSON location, reached via properties only).
    # Paths are linked (parent, key) pairs, materialized only for an annotation or an error,
    # so the walk stays linear in the schema size even for deep schemas.
    stack: list[tuple[Any, _Link, _Link, bool]] = [(input_schema, None, None, True)]
    while stack:
        node, path, location, reachable = stack.pop()
        children: list[tuple[Any, _Link, _Link, bool]] = []
        if isinstance(node, Mapping):
            if _ANNOTATION in node:
                found.append(_annotation(node, _unlink(path), location, reachable, prefix))
            for key, value in node.items():
                if key == "properties" and isinstance(value, Mapping):
                    for prop, sub in value.items():
                        children.append((sub, (path, prop), ((location, key), prop), reachable))
                elif key not in _DATA_KEYWORDS and isinstance(value, (Mapping, list)):
                    children.append((value, None, (location, key), False))
        elif isinstance(node, list):
            for index, item in enumerate(node):
                children.append((item, None, (location, str(index)), False))
        stack.extend(reversed(children))  # pop in document order
    seen: dict[str, ParamHeader] = {}
    for ann in found:
        other = seen.setdefault(ann.header.lower(), ann)
        if other is not ann:
            raise InvalidParamHeader(
                f"{prefix}x-mcp-header {ann.header!r} on property "
                f"{_dotted(ann)!r} repeats {other.header!r} on property {_dotted(other)!r}; "
                "names must be unique ignoring case"
            )
    return tuple(found)


def _unlink(link: _Link) -> _Path:
    keys: list[str] = []
    while link is not None:
        link, key = link
        keys.append(key)
    return tuple(reversed(keys))


def _dotted(ann: ParamHeader) -> str:
    return ".".join((ann.argument, *ann.path))


def _annotation(node: Mapping[str, Any], path: _Path, location: _Link, reachable: bool, prefix: str) -> ParamHeader:
    name = node[_ANNOTATION]
    declared = node.get("type")
    kind = _KINDS.get(declared) if isinstance(declared, str) else None
    where = f"x-mcp-header {name!r} on property {'.'.join(path)!r}"
    if not reachable or not path:
        problem = (
            f"x-mcp-header {name!r} at #/{'/'.join(_unlink(location))} is not on a property "
            "reached from the root through `properties` keywords only"
        )
    elif not isinstance(name, str):
        problem = f"{where} must be a string"
    elif not name:
        problem = f"{where} must not be empty"
    elif _TOKEN.fullmatch(name) is None:
        problem = f"{where} is not an RFC 9110 token (ASCII letters, digits, !#$%&'*+-.^_`|~)"
    elif kind is None:
        problem = f"{where} requires type string, integer or boolean, got {declared!r}"
    else:
        return ParamHeader(argument=path[0], header=name, kind=kind, path=path[1:])
    raise InvalidParamHeader(prefix + problem)


def _needs_base64(text: str) -> bool:
    # The runner's Ns: any code point outside 0x20-0x7E (so tab, CR, LF, DEL, non-ASCII), or
    # surrounding whitespace, which HTTP parsers would strip. The SEP also requires wrapping a
    # plain value that looks like the sentinel, so it is not mistaken for an encoded one.
    if not text:
        return False
    if not text.isascii() or not text.isprintable() or text[0] == " " or text[-1] == " ":
        return True
    return len(text) >= _B64_MIN and text.startswith(_B64_OPEN) and text.endswith(_B64_CLOSE)


def encode_param_value(value: str | int | bool) -> bytes:
    """A header value for ``value``: booleans ``true``/``false``, integers in decimal, strings
    as is when plain printable ASCII without leading or trailing space, else
    ``=?base64?<base64 of UTF-8>?=``. The empty string is sent as an empty value (SEP test
    table; the runner accepts it).
    """
    if isinstance(value, bool):
        return b"true" if value else b"false"
    if isinstance(value, int):
        try:
            return str(value).encode("ascii")
        except ValueError:  # more digits than int-to-str allows
            raise LocalProtocolError("integer header value has too many digits") from None
    if not isinstance(value, str):
        raise LocalProtocolError(f"cannot encode {type(value).__name__} as a header value")
    if _needs_base64(value):
        inner = binascii.b2a_base64(value.encode("utf-8"), newline=False).decode("ascii")
        return (_B64_OPEN + inner + _B64_CLOSE).encode("ascii")
    return value.encode("ascii")


def decode_param_value(raw: bytes, *, header: str = "header") -> str:
    """The text a received ``Mcp-Name`` or ``Mcp-Param-*`` value stands for.

    Trims SP/HTAB, unwraps ``=?base64?...?=`` (lowercase markers only; strict base64 with
    padding, as the runner's http-custom-header-server-validation requires), and decodes
    UTF-8. Raises :class:`HeaderMismatch` ``"<header> is malformed"`` for bad base64, bad
    UTF-8, or a plain value with bytes other than visible ASCII, SP and HTAB.
    """
    value = raw.strip(_OWS)
    if len(value) >= _B64_MIN and value.startswith(b"=?base64?") and value.endswith(b"?="):
        try:
            inner = value[len(_B64_OPEN) : -len(_B64_CLOSE)]
            return binascii.a2b_base64(inner, strict_mode=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise HeaderMismatch(f"{header} is malformed") from None
    if _FIELD_VALUE.fullmatch(value) is None:
        raise HeaderMismatch(f"{header} is malformed")
    return value.decode("ascii")


def _plain(value: str, what: str) -> bytes:
    # Method and version travel unencoded (the runner compares Mcp-Method raw); refuse what
    # could not arrive intact as a plain header value.
    if not value or not value.isascii() or not value.isprintable() or value != value.strip():
        raise LocalProtocolError(f"{what} {value!r} cannot be sent as a header value")
    return value.encode("ascii")


def _lookup(arguments: Mapping[str, Any], ann: ParamHeader) -> Any:
    """The argument an annotation mirrors, or None when absent (or below a non-object)."""
    value: Any = arguments.get(ann.argument)
    for key in ann.path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _client_value(ann: ParamHeader, value: Any) -> bytes:
    # JSON Schema counts 3.0 as an integer; send it as 3, which the server (and the runner's
    # numeric comparison) takes as equal to the body's 3.0.
    if ann.kind == "integer" and isinstance(value, float) and value.is_integer():
        value = int(value)
    expected = _PY_TYPES[ann.kind]
    if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
        raise LocalProtocolError(
            f"argument {_dotted(ann)!r} is mirrored into {ann.header_name} as {ann.kind}, got {type(value).__name__}"
        )
    return encode_param_value(cast("str | int | bool", value))


def request_headers(
    *,
    method: str,
    name: str | None,
    protocol_version: str,
    params_headers: Sequence[ParamHeader] = (),
    arguments: Mapping[str, Any] | None = None,
) -> list[tuple[bytes, bytes]]:
    """The MCP headers a client sends with a POST (protocol version header, Mcp-Method, Mcp-Name, Mcp-Param-*).

    ``name`` is params.name for tools/call and prompts/get, params.uri for resources/read,
    else None (see :data:`NAMED_METHODS`). For tools/call pass the tool's annotations (from
    :func:`param_headers`, computed at tools/list) and the arguments: each annotated argument
    present and not null becomes ``Mcp-Param-<header>``; absent and null ones send nothing.
    Raises :class:`LocalProtocolError` when an argument's JSON type is not the declared kind
    or the method/version cannot be a plain header value.
    """
    out = [
        (b"MCP-Protocol-Version", _plain(protocol_version, "protocol version")),
        (b"Mcp-Method", _plain(method, "method")),
    ]
    if name is not None:
        out.append((b"Mcp-Name", encode_param_value(name)))
    if arguments:
        for ann in params_headers:
            value = _lookup(arguments, ann)
            if value is not None:
                out.append((ann.header_name.encode("ascii"), _client_value(ann, value)))
    return out


def session_headers(
    *, protocol_version: str | None, session_id: str | None, last_event_id: str | None = None,
) -> list[tuple[bytes, bytes]]:
    """What an initialize-era client sends with every message after ``initialize``: the
    negotiated ``MCP-Protocol-Version`` (2025-06-18 and later require it; a 2025-03-26 server
    ignores it), the ``Mcp-Session-Id`` the server issued (if any), and on a GET that resumes a
    stream, ``Last-Event-ID``. Raises :class:`LocalProtocolError` for a value that cannot be a
    plain header value."""
    out: list[tuple[bytes, bytes]] = []
    if protocol_version is not None:
        out.append((b"MCP-Protocol-Version", _plain(protocol_version, "protocol version")))
    if session_id is not None:
        out.append((b"Mcp-Session-Id", _plain(session_id, "session id")))
    if last_event_id is not None:
        out.append((b"Last-Event-ID", _plain(last_event_id, "event id")))
    return out


def _matches(text: str, value: Any) -> bool:
    # By the body value's JSON type: a type that breaks the schema is then
    # reported as -32602 by argument validation, not guessed at here.
    if isinstance(value, str):
        return text == value
    if isinstance(value, bool):
        return text == ("true" if value else "false")  # lowercase only, as the SEP spells it
    if isinstance(value, (int, float)):
        # Numerically: "42.0" and "4.2e1" equal 42. repr() gives the float's shortest form,
        # so a body 0.1 equals a header "0.1" exactly.
        raw = text.encode("ascii", "replace")
        if _NUMBER.fullmatch(raw) is None:
            return False
        try:
            return Decimal(text) == Decimal(value if isinstance(value, int) else repr(value))
        except (InvalidOperation, ValueError):
            return False
    return False


def check_request_headers(
    view: HeaderView,
    *,
    method: str,
    params: Mapping[str, Any] | None,
    param_headers: Sequence[ParamHeader] = (),
) -> None:
    """Check ``Mcp-Method``, ``Mcp-Name`` and ``Mcp-Param-*`` against the decoded body.

    Call after the envelope decodes and the version header is checked, before executing.
    ``param_headers`` are the called tool's annotations (only used for tools/call; pass ()
    for an unknown tool). Raises :class:`HeaderMismatch` (-32020, HTTP 400) for the first
    failure. Body fields of the wrong JSON type are skipped here; params validation
    reports them as -32602.
    """
    expected_method = _METHOD_BYTES.get(method) or method.encode("utf-8")
    # Exact and case-sensitive: the runner sends "TOOLS/LIST" for tools/list and expects -32020.
    # The common case (one value, already trimmed) is one lookup; the rest takes require_one.
    if (
        (view.first(MCP_METHOD) != expected_method or view.repeated(MCP_METHOD))
        and view.require_one(MCP_METHOD, "Mcp-Method") != expected_method
    ):
        raise HeaderMismatch("Mcp-Method does not match the request body")
    field = NAMED_METHODS.get(method)
    if field is None or params is None:
        return
    expected = params.get(field)
    if isinstance(expected, str):
        raw = view.first(MCP_NAME)
        if raw is None or view.repeated(MCP_NAME):
            raw = view.require_one(MCP_NAME, "Mcp-Name")
        if (_name_value(raw) if len(raw) <= _CACHED_NAME else decode_param_value(raw, header="Mcp-Name")) != expected:
            raise HeaderMismatch("Mcp-Name does not match the request body")
    if method != "tools/call" or not param_headers:
        return
    arguments = params.get("arguments")
    if arguments is None:
        arguments = {}
    elif not isinstance(arguments, Mapping):
        return
    for ann in param_headers:
        label = ann.header_name
        key = MCP_PARAM_PREFIX + ann.header.lower().encode("ascii")
        value = _lookup(arguments, ann)
        if value is None:
            # Nothing in the body to mirror: a header here would let an intermediary act on
            # a value the server never sees (SEP-2243, header spoofing).
            if key in view:
                raise HeaderMismatch(f"{label} does not match the request body")
            continue
        if isinstance(value, (Mapping, list)):
            continue  # not mirrorable; argument validation answers -32602
        text = decode_param_value(view.require_one(key, label), header=label)
        if not _matches(text, value):
            raise HeaderMismatch(f"{label} does not match the request body")


_METHOD_BYTES: Final = {name: name.encode() for name in METHODS}


_CACHED_NAME: Final = 256  # bytes: the cache below holds at most 1024 values of at most this size


@lru_cache(maxsize=1024)
def _name_value(raw: bytes) -> str:
    # Clients send the same few names over and over (a tool's, a resource's): decode each once.
    return decode_param_value(raw, header="Mcp-Name")


_KNOWN_VERSIONS: dict[bytes, str] = {version.encode(): version for version in REVISIONS}


def protocol_version_header(view: HeaderView) -> str | None:
    """The ``MCP-Protocol-Version`` value, or None when absent (protocol version header).

    Raises :class:`HeaderMismatch` when repeated or not visible ASCII. Comparing it with
    ``_meta`` and answering -32022 belong to the engine.
    """
    # The common case, one exact known value, in two dict lookups (an untrimmed value that
    # equals a version trims to itself; a repeated header takes the full path and fails there).
    known = _KNOWN_VERSIONS.get(view._first.get(MCP_PROTOCOL_VERSION, b""))
    if known is not None and MCP_PROTOCOL_VERSION not in view._more:
        return known
    raw = view.get_one(MCP_PROTOCOL_VERSION, "MCP-Protocol-Version")
    if raw is None:
        return None
    known = _KNOWN_VERSIONS.get(raw)  # skip the character check
    if known is not None:
        return known
    if _VCHARS.fullmatch(raw) is None:
        raise HeaderMismatch("MCP-Protocol-Version is malformed")
    return raw.decode("ascii")
