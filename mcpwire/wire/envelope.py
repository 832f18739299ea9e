"""The JSON-RPC 2.0 envelope: stage one of decoding, and encoding of every outgoing message.

Owns (specification: Basic, Messages; JSON-RPC 2.0; schema $defs JSONRPCRequest,
JSONRPCNotification, JSONRPCResultResponse, JSONRPCErrorResponse, RequestId):

- classifying one JSON text as a request, a notification or a response, with ``params``,
  ``result`` and ``error`` kept as ``msgspec.Raw`` for the per-method second stage;
- the request-id bounds, a parameter of the decode (:class:`IdBounds`): :data:`SERVER_IDS`,
  the server's profile and mcpwire's choice (a string of at most 256 UTF-8 bytes, or an
  integer in int64), and :data:`SCHEMA_IDS`, the schema's RequestId (any string, any integer:
  what the client engine takes from a server, each echoed as the same JSON token);
- the rule that batching is forbidden (a JSON array is -32600): each Streamable HTTP body and
  each stdio line is a single JSON-RPC message (specification: Basic > Transports);
- encoding requests, notifications, results and errors, with encoders built once.

What is never answered (a notification by the specification's rule, Basic, Notifications: "The
receiver MUST NOT send a response"; a response, which a client MUST NOT send to a server, by
mcpwire's choice): a *notification* is an object whose ``method`` is a string and that has no
``id`` member at all (``"id": null`` is a request with an invalid id, as in JSON-RPC 2.0); a
*response* is an object with no ``method`` member and a ``result`` or ``error`` member. Either
one, however malformed otherwise, raises :class:`UnansweredMessage` rather than a plain error:
a server drops it, a client reports it.

Invariants: decoding never raises anything but :class:`RemoteProtocolError`; every error
carries the request id when it could be read, and ``null`` otherwise (JSON-RPC 2.0 section 5;
the MCP schema makes ``id`` optional on error responses, and every peer we know sends
``null``, so we do too). Duplicate keys in one object: the last one wins (msgspec's rule),
for the envelope and for params alike; documented in docs/limits.md.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, Union

import msgspec
from msgspec import UNSET, Raw, UnsetType

from ..types import RequestId
from .errors import ErrorCode, ProtocolError, RemoteProtocolError

__all__ = [
    "RequestId",
    "Request",
    "Notification",
    "Response",
    "ErrorObject",
    "UnansweredMessage",
    "MAX_ID_BYTES",
    "IdBounds",
    "SERVER_IDS",
    "SCHEMA_IDS",
    "decode_message",
    "decode_request_as",
    "request_fields",
    "check_request_id",
    "encode_request",
    "encode_notification",
    "encode_result",
    "encode_error",
    "encode_error_object",
]


MAX_ID_BYTES: Final = 256
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1


class IdBounds(msgspec.Struct, frozen=True, kw_only=True):
    """The request ids a decode takes (schema $defs.RequestId: a string or an integer, and
    never a float, a boolean or null): strings of at most ``max_bytes`` UTF-8 bytes (``None``:
    any length, within the transport's message bound) and integers within int64 when
    ``int64`` is set (else any integer: msgspec decodes integers of up to 4300 characters, a
    minus sign included, exactly, and they encode back as the same digits)."""

    max_bytes: int | None
    int64: bool

    @property
    def refusal(self) -> str:
        """The -32600 message for an id outside these bounds."""
        strings = "a string" if self.max_bytes is None else f"a string of at most {self.max_bytes} bytes"
        return f"Invalid Request: id must be {strings} or {'an int64' if self.int64 else 'an'} integer"


SERVER_IDS: Final = IdBounds(max_bytes=MAX_ID_BYTES, int64=True)
"""The server's profile (mcpwire's own bounds): past them a request is
-32600 with id null."""
SCHEMA_IDS: Final = IdBounds(max_bytes=None, int64=False)
"""The schema's RequestId, unbounded: what a client takes from a server (be exact in what we
send, take what the official text allows)."""


class _Envelope(msgspec.Struct):
    # Every member is loosely typed so that one decode reads whatever is there; the rules
    # are then checked in code, in the order that decides which error the peer gets.
    jsonrpc: Any = UNSET
    id: Any = UNSET
    method: Any = UNSET
    params: Raw | UnsetType = UNSET
    result: Raw | UnsetType = UNSET
    error: Raw | UnsetType = UNSET


class _Shape(msgspec.Struct):
    # What decides whether a message is answered, read from an object whose other members
    # hold numbers Python cannot (1e400): only the presence of id, result and error matters.
    id: Raw | UnsetType = UNSET
    method: Any = UNSET
    result: Raw | UnsetType = UNSET
    error: Raw | UnsetType = UNSET


class UnansweredMessage(RemoteProtocolError):
    """A notification or a response that breaks the envelope rules (bad ``jsonrpc``, id or
    error object, both ``result`` and ``error``...). It is still never answered (a notification
    by the specification's rule, Basic, Notifications; a response by mcpwire's):
    the server engine drops it (HTTP 202, no stdio line); the client engine reports it."""


class Request(msgspec.Struct, frozen=True, kw_only=True):
    """A JSON-RPC request whose envelope is valid. ``params`` is undecoded (stage two)."""

    id: RequestId
    method: str
    params: Raw | UnsetType = UNSET


class Notification(msgspec.Struct, frozen=True, kw_only=True):
    """A JSON-RPC notification (a string method and no id). Never answered."""

    method: str
    params: Raw | UnsetType = UNSET


class ErrorObject(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The ``error`` member of an error response (schema $defs.Error)."""

    code: int
    message: str
    data: Any | UnsetType = UNSET


class Response(msgspec.Struct, frozen=True, kw_only=True):
    """A JSON-RPC response: exactly one of ``result`` (undecoded) and ``error`` is set.

    ``id`` is ``None`` for an error the peer could not attribute to a request.
    """

    id: RequestId | None
    result: Raw | UnsetType = UNSET
    error: ErrorObject | UnsetType = UNSET


Message = Union[Request, Notification, Response]

_envelope_decoder: Final = msgspec.json.Decoder(_Envelope)
_shape_decoder: Final = msgspec.json.Decoder(_Shape)
_error_decoder: Final = msgspec.json.Decoder(ErrorObject)


def check_request_id(value: object, bounds: IdBounds = SERVER_IDS) -> RequestId | None:
    """Return ``value`` if it is a valid request id (schema $defs.RequestId within ``bounds``;
    by default the server's: a string of at most 256 UTF-8 bytes or an int64 integer), else
    ``None``."""
    # bool is a subclass of int in Python but true/false are not ids. An int64 is within any
    # bounds: the common case reads none of them.
    if type(value) is int:
        return value if _INT64_MIN <= value <= _INT64_MAX or not bounds.int64 else None
    if type(value) is str:
        limit = bounds.max_bytes
        # len(str) <= len(utf-8) <= 4 * len(str): skip the encode when the answer is certain.
        if limit is None or len(value) * 4 <= limit or len(value.encode("utf-8", "surrogatepass")) <= limit:
            return value
        return None
    return None


def decode_message(data: bytes | bytearray | memoryview, ids: IdBounds = SERVER_IDS) -> Message:
    """Stage one: classify one JSON text as a request, notification or response, taking the
    request ids ``ids`` allows (the server's bounds by default; the client engine passes
    :data:`SCHEMA_IDS`).

    Raises :class:`RemoteProtocolError` with code -32700 (not JSON) or -32600 (JSON, but not a
    valid JSON-RPC 2.0 message), and -32602 when a request's ``params`` is not an object. The
    error's ``request_id`` attribute holds the id when it could be read, else ``None``. A
    malformed notification or response raises the subclass :class:`UnansweredMessage`.
    """
    if type(data) is not bytes:
        data = bytes(data)
    if not data.isascii() and not _utf8(data):
        raise _error(ErrorCode.PARSE_ERROR, "Parse error: invalid UTF-8", None)
    try:
        env = _envelope_decoder.decode(data)
    except msgspec.ValidationError:
        # The typed decoder stops at the first value of the wrong type: the text as a whole
        # must be JSON before its shape is judged (-32700 comes first: '"x" 1' is not JSON).
        try:
            msgspec.json.decode(data)
        except msgspec.ValidationError:
            pass  # JSON, with a number Python cannot hold (1e400)
        except (msgspec.DecodeError, RecursionError):
            raise _error(ErrorCode.PARSE_ERROR, "Parse error", None) from None
        if bytes(data).lstrip()[:1] == b"{":
            # An object, but a member holds a number Python cannot (1e400): not a valid message.
            if _unanswered_shape(data):
                raise _unanswered("Invalid Request: a number is out of range", None) from None
            raise _invalid("Invalid Request: a number is out of range", None) from None
        # Valid JSON whose top level is not an object: a batch (forbidden) or a scalar.
        raise _invalid("Invalid Request: expected a JSON-RPC 2.0 object", None) from None
    except msgspec.DecodeError:
        raise _error(ErrorCode.PARSE_ERROR, "Parse error", None) from None
    except RecursionError:
        raise _error(ErrorCode.PARSE_ERROR, "Parse error: JSON nested too deeply", None) from None

    method = env.method
    if env.id is UNSET:
        if type(method) is str and env.jsonrpc == "2.0":
            if not isinstance(env.params, UnsetType) and not _is_object(env.params):
                # Notifications are never answered; bad params just make it unusable.
                return Notification(method=method, params=UNSET)
            return Notification(method=method, params=env.params)
        if type(method) is str:
            raise _unanswered("Invalid Request: expected a JSON-RPC 2.0 notification", None)
        if method is UNSET and (env.result is not UNSET or env.error is not UNSET):
            raise _unanswered("Invalid Request: response without id", None)
        raise _invalid("Invalid Request: expected a JSON-RPC 2.0 request", None)

    request_id = check_request_id(env.id, ids)
    if method is UNSET and (env.result is not UNSET or env.error is not UNSET):
        # A response. Error responses for unattributable failures carry id null.
        if request_id is None and env.id is not None:
            raise _unanswered("Invalid Request: invalid response id", None)
        if env.jsonrpc != "2.0":
            raise _unanswered("Expected a JSON-RPC 2.0 response", request_id)
        if (env.result is UNSET) == (env.error is UNSET):
            raise _unanswered("Invalid Request: a response has exactly one of result and error", request_id)
        if not isinstance(env.error, UnsetType):
            try:
                error = _error_decoder.decode(env.error)
            except msgspec.ValidationError:
                raise _unanswered("Invalid Request: malformed error object", request_id) from None
            return Response(id=request_id, error=error)
        return Response(id=request_id, result=env.result)

    if request_id is None:
        raise _invalid(ids.refusal, None)
    if env.jsonrpc != "2.0":
        raise _invalid("Expected a JSON-RPC 2.0 request", request_id)
    if type(method) is not str:
        raise _invalid("Invalid Request: method must be a string", request_id)
    params = env.params
    if params is not UNSET and not _is_object(params):
        raise _error(ErrorCode.INVALID_PARAMS, "Request params must be an object", request_id)
    return Request(id=request_id, method=method, params=params)


def request_fields(method: str) -> list[tuple[str, Any]]:
    """The envelope of a request of ``method`` as Struct fields, for :func:`decode_request_as`'s
    decoder: ``jsonrpc`` "2.0", an ``id``, ``method`` itself, typed so that msgspec checks them
    while it decodes. Every id they take, :func:`check_request_id` takes within
    :data:`SERVER_IDS`, the only bounds this fast path serves (a string id is taken up to a
    quarter of ``MAX_ID_BYTES`` characters; a longer one goes :func:`decode_message`'s way,
    which measures its bytes)."""
    return [("jsonrpc", Literal["2.0"]), ("id", _TypedRequestId), ("method", Literal[method])]


_TypedRequestId = Union[
    Annotated[int, msgspec.Meta(ge=_INT64_MIN, le=_INT64_MAX)],
    Annotated[str, msgspec.Meta(max_length=MAX_ID_BYTES // 4)],
]


def decode_request_as(decoder: msgspec.json.Decoder[Any], data: bytes) -> Any:
    """Stages one and two in one decode, for a request whose method and params type the
    caller knows ahead (``server/lanes.py``): ``decoder`` reads the whole message into a
    Struct with the fields of :func:`request_fields` and ``params``. Returns it when
    :func:`decode_message` would read a request of that method with this ``id`` and the params
    are of that type, else ``None`` (:func:`decode_message` then says what is wrong)."""
    if not data.isascii() and not _utf8(data):
        return None
    try:
        return decoder.decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        return None


def _utf8(data: bytes) -> bool:
    # msgspec validates UTF-8 only where it decodes strings, not inside members it skips
    # or keeps as Raw; JSON text must be UTF-8 throughout (RFC 8259 section 8.1). Callers
    # try isascii() first: most messages are ASCII.
    try:
        str(data, "utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _is_object(raw: Raw) -> bool:
    # msgspec strips leading whitespace, so a Raw object starts with '{'.
    return memoryview(raw)[0] == 0x7B  # "{"


def _error(code: int, message: str, request_id: RequestId | None) -> RemoteProtocolError:
    return RemoteProtocolError(message, code=code, request_id=request_id)


def _invalid(message: str, request_id: RequestId | None) -> RemoteProtocolError:
    return _error(ErrorCode.INVALID_REQUEST, message, request_id)


def _unanswered(message: str, request_id: RequestId | None) -> UnansweredMessage:
    return UnansweredMessage(message, code=ErrorCode.INVALID_REQUEST, request_id=request_id)


def _unanswered_shape(data: bytes | bytearray | memoryview) -> bool:
    # A notification (string method, no id member) or a response (no method member; result
    # or error), read without the members that may hold unrepresentable numbers.
    try:
        shape = _shape_decoder.decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        return False
    if shape.id is UNSET and type(shape.method) is str:
        return True
    return shape.method is UNSET and (shape.result is not UNSET or shape.error is not UNSET)


# ---------------------------------------------------------------------------------------------
# Encoding. One encoder, built once; the message Structs order members as JSON-RPC examples do.


class _RequestOut(msgspec.Struct, omit_defaults=True):
    jsonrpc: str
    id: RequestId
    method: str
    params: Any = None


class _NotificationOut(msgspec.Struct, omit_defaults=True):
    jsonrpc: str
    method: str
    params: Any = None


class _ResultOut(msgspec.Struct, gc=False):
    # Built, encoded and dropped at once: the garbage collector need not track it.
    jsonrpc: str
    id: RequestId
    result: Any


class _ErrorOut(msgspec.Struct):
    jsonrpc: str
    id: RequestId | None
    error: ErrorObject


_encoder: Final = msgspec.json.Encoder()


def encode_request(request_id: RequestId, method: str, params: Any = None) -> bytes:
    """Encode a JSON-RPC request (params omitted when ``None``)."""
    return _encoder.encode(_RequestOut("2.0", request_id, method, params))


def encode_notification(method: str, params: Any = None) -> bytes:
    """Encode a JSON-RPC notification (params omitted when ``None``)."""
    return _encoder.encode(_NotificationOut("2.0", method, params))


def encode_result(request_id: RequestId, result: Any) -> bytes:
    """Encode a result response. ``result`` is any msgspec-encodable value."""
    return _encoder.encode(_ResultOut("2.0", request_id, result))


def encode_error_object(
    request_id: RequestId | None, code: int, message: str, data: Any | UnsetType = UNSET
) -> bytes:
    """Encode an error response from its parts. A -32603 is always ``Internal error`` with no
    ``data``: the cause of an internal error never reaches the wire (mcpwire's rule; the host
    keeps the exception)."""
    if code == ErrorCode.INTERNAL_ERROR:
        message, data = "Internal error", UNSET
    return _encoder.encode(_ErrorOut("2.0", request_id, ErrorObject(code=code, message=message, data=data)))


def encode_error(request_id: RequestId | None, error: ProtocolError) -> bytes:
    """Encode an error response for ``error``."""
    return encode_error_object(request_id, error.code, error.message, error.data)
