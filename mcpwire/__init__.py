"""mcpwire: a sans-IO protocol engine for the Model Context Protocol, revision 2026-07-28.

The core takes bytes (or a parsed HTTP request, or an NDJSON line) and returns typed events
and ready-to-send responses. It does no I/O, keeps no clock and draws no randomness: time
(``now``) and keys (:class:`Keyring`) are passed in. Drivers for trio/h11 and stdio live in
the separate ``mcpwire_adapters`` package.

Server side, in brief::

    server = Server(Implementation(name="demo", version="1.0"), keyring=Keyring.single(secret))
    server.add_tool(Tool(name="echo", description="Echo", input_schema={"type": "object"}))
    answer = server.receive_http(HttpRequest(method="POST", target="/mcp", headers=h, body=b), now=t)
    # answer is a complete (ResponseHead, ResponseBody) reply, an HttpExchange whose .event
    # the host answers with .complete()/.input_required()/.fail(), or an HttpListenStream.
"""

from . import types
from ._catalog import SchemaCheck, ValidatorFactory
from ._client import HTTP_ACCEPT, Client, OutgoingRequest, Paginator
from ._client_events import *  # noqa: F403
from ._client_events import __all__ as _client_events_all
from ._client_stream import TRANSPORT_ERROR, ClientStdioConnection, HttpResponseParser, MalformedResult
from ._envelope import ErrorObject, Notification, Request, RequestId, Response, decode_message
from ._errors import ErrorCode, LocalProtocolError, ProtocolError, RemoteProtocolError, http_status_for
from ._events import Cancelled, CompletionRequest, PromptGet, ResourceRead, ServerEvent, ToolCall
from ._exchange import Exchange, HttpExchange, StdioExchange, resource_not_found
from ._headers import HeaderMismatch, InvalidParamHeader, ParamHeader
from ._http import HttpOutput, HttpPolicy, HttpReply, HttpRequest, ResponseBody, ResponseHead, error_reply
from ._listen import HttpListenStream, ListenStream, StdioListenStream
from ._meta import LOG_LEVELS, PROTOCOL_VERSION, RequestMeta
from ._mrtr import MissingCapability
from ._ndjson import LineReader, OversizeLine
from ._server import CachePolicy, Server
from ._sse import SSEEvent, SSEReader, encode_comment, encode_event
from ._states import ExchangeState, ListenState
from ._stdio import StdioConnection, StdioOutput
from ._tokens import CursorCodec, ExpiredCursor, InvalidCursor, InvalidRequestState, Keyring, RequestStateCodec
from ._validation import jsonschema_validator
from .types import *  # noqa: F403  (the wire types are part of the public surface)
from .types import __all__ as _types_all

__version__ = "0.1.0"

__all__ = [
    "types",
    "__version__",
    # errors
    "ErrorCode", "ProtocolError", "RemoteProtocolError", "LocalProtocolError", "http_status_for",
    "HeaderMismatch", "InvalidParamHeader", "MissingCapability", "InvalidRequestState",
    "InvalidCursor", "ExpiredCursor",
    # envelope
    "Request", "Notification", "Response", "ErrorObject", "decode_message",
    # server engine
    "Server", "CachePolicy", "Keyring", "RequestStateCodec", "CursorCodec", "RequestMeta",
    "PROTOCOL_VERSION", "LOG_LEVELS", "ValidatorFactory", "SchemaCheck", "jsonschema_validator",
    "ToolCall", "ResourceRead", "PromptGet", "CompletionRequest", "Cancelled", "ServerEvent",
    "Exchange", "HttpExchange", "StdioExchange", "ExchangeState", "resource_not_found",
    "ListenStream", "HttpListenStream", "StdioListenStream", "ListenState",
    "StdioConnection", "StdioOutput", "ParamHeader",
    # client engine
    "Client", "OutgoingRequest", "Paginator", "HTTP_ACCEPT", "HttpResponseParser", "ClientStdioConnection",
    "TRANSPORT_ERROR", "MalformedResult",
    # HTTP
    "HttpRequest", "HttpPolicy", "ResponseHead", "ResponseBody", "HttpReply", "HttpOutput", "error_reply",
    # framing
    "SSEReader", "SSEEvent", "encode_event", "encode_comment", "LineReader", "OversizeLine",
]  # fmt: skip
__all__ += _client_events_all
__all__ += _types_all  # `+=` (not `+ list(...)`), so type checkers see these as re-exported
