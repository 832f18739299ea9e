"""mcpwire: a sans-IO protocol engine for the Model Context Protocol, revision 2026-07-28.

The core takes bytes (or a parsed HTTP request, or an NDJSON line) and returns typed events
and ready-to-send responses. It does no I/O, keeps no clock and draws no randomness: time
(``now``) and keys (:class:`Keyring`) are passed in. Drivers for trio/h11 and stdio live in
the separate ``mcpwire_adapters`` package.

Server side, in brief::

    server = Server(types.Implementation(name="demo", version="1.0"), keyring=Keyring.single(secret))
    server.add_tool(types.Tool(name="echo", description="Echo", input_schema={"type": "object"}))
    answer = server.receive_http(HttpRequest(method="POST", target="/mcp", headers=h, body=b), now=t)
    # answer is a complete (ResponseHead, ResponseBody) reply, an HttpExchange whose .event
    # the host answers with .complete()/.input_required()/.fail(), or an HttpListenStream.
"""

from . import framing, types
from .client.engine import Client
from .client.events import (
    ClientEvent, ErrorResult, InputRequired, ListChanged, ListenAck, LogMessage, OutgoingMessage, OutgoingRequest,
    Progress, ResourceUpdated, ResultReceived, ServerRequest,
)
from .client.states import RequestState
from .client.stdio import ClientStdioConnection
from .client.stream import HttpResponseParser, SessionStreamParser
from .server.catalog import ValidatorFactory
from .server.context import CachePolicy
from .server.engine import Server
from .server.events import (
    Cancelled, CompletionRequest, InputArrived, ListRequest, PromptGet, ResourceRead, ServerEvent, SessionClosed,
    ToolCall,
)
from .server.exchange import Exchange, HttpExchange, StdioExchange, resource_not_found
from .server.http import HttpPolicy, HttpRequest, ResponseBody, ResponseHead, error_reply
from .server.listen import HttpListenStream, ListenStream, StdioListenStream
from .server.states import ExchangeState, ListenState
from .server.stdio import StdioConnection
from .server.tokens import Keyring
from .server.validation import UNCHECKED, jsonschema_validator
from .wire.errors import ErrorCode, LocalProtocolError, ProtocolError, RemoteProtocolError
from .wire.meta import LOG_LEVELS, RequestMeta
from .wire.versions import PROTOCOL_VERSION

__version__ = "0.1.0"

__all__ = [
    "__version__", "PROTOCOL_VERSION", "LOG_LEVELS",
    # errors
    "ErrorCode", "ProtocolError", "RemoteProtocolError", "LocalProtocolError",
    # server: configuration
    "Server", "CachePolicy", "Keyring", "HttpPolicy", "ValidatorFactory", "jsonschema_validator", "UNCHECKED",
    # server: what goes in and out over HTTP
    "HttpRequest", "ResponseHead", "ResponseBody", "error_reply",
    # server: events and the objects that answer them
    "ServerEvent", "ToolCall", "ResourceRead", "PromptGet", "CompletionRequest", "ListRequest", "Cancelled",
    "RequestMeta",
    "Exchange", "HttpExchange", "StdioExchange", "resource_not_found",
    "ListenStream", "HttpListenStream", "StdioListenStream", "StdioConnection",
    "InputArrived", "SessionClosed",
    "ExchangeState", "ListenState",
    # client
    "Client", "OutgoingRequest", "HttpResponseParser", "ClientStdioConnection", "RequestState",
    "ClientEvent", "ResultReceived", "ErrorResult", "InputRequired", "Progress", "LogMessage",
    "ListenAck", "ListChanged", "ResourceUpdated",
    # client, initialize era
    "ServerRequest", "OutgoingMessage", "SessionStreamParser",
]  # fmt: skip
