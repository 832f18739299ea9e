"""OpenTelemetry tracing of MCP requests, both roles (the ``otel`` extra: ``opentelemetry-api``).

A span per request with the attributes of the OpenTelemetry semantic conventions for MCP
(<https://opentelemetry.io/docs/specs/semconv/gen-ai/mcp/>), and the W3C trace context
(``traceparent``, ``tracestate``, and ``baggage``: whatever the configured propagators carry)
in the request's ``params._meta``, unprefixed, as those conventions say (the specification
lets any key follow the ``_meta`` key syntax: Basic, ``_meta``).

- Server: :class:`ServerTracing`, a middleware of the App (``app.add_middleware(ServerTracing())``,
  or :func:`trace_server`): a ``SERVER`` span around each request the App answers, its parent
  the context extracted from the request's ``_meta`` (the caller's span), the ambient span (an
  HTTP server instrumentation's, say) linked.
- Client: :class:`ClientTracing`, set on a session (``client.tracing = ClientTracing()``, or
  :func:`trace_client`): a ``CLIENT`` span around each request the session sends (its input
  rounds and retries included), its context injected into ``_meta``.

This module is the floor's bottom (with ``errors`` and ``callbacks``): it imports the core and
OpenTelemetry only, so the App and the client sessions may use it without importing each other;
nothing imports it unless tracing is asked for, and the core never does (it exposes ``_meta``,
the adapters read it). docs/tracing.md.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any, Final, Protocol
from urllib.parse import urlsplit

from opentelemetry import propagate, trace
from opentelemetry.trace import Link, Span, SpanKind, Status, StatusCode

import mcpwire
from mcpwire import ErrorResult, HttpExchange, OutgoingRequest, ResultReceived
from mcpwire.types import CallToolResult

__all__ = [
    "ClientTracing", "ServerTracing", "trace_client", "trace_server",
    "MCP_METHOD_NAME", "MCP_SESSION_ID", "MCP_PROTOCOL_VERSION", "MCP_RESOURCE_URI", "JSONRPC_REQUEST_ID",
    "GEN_AI_TOOL_NAME", "GEN_AI_PROMPT_NAME", "GEN_AI_OPERATION_NAME", "ERROR_TYPE", "RPC_RESPONSE_STATUS_CODE",
    "NETWORK_TRANSPORT", "NETWORK_PROTOCOL_NAME", "SERVER_ADDRESS", "SERVER_PORT", "TOOL_ERROR",
]

# The attribute names, exactly as the conventions define them (mcp.*, gen_ai.*, and the general
# error.*, jsonrpc.*, rpc.*, network.*, server.* registries they take).
MCP_METHOD_NAME: Final = "mcp.method.name"
MCP_SESSION_ID: Final = "mcp.session.id"
MCP_PROTOCOL_VERSION: Final = "mcp.protocol.version"
MCP_RESOURCE_URI: Final = "mcp.resource.uri"
JSONRPC_REQUEST_ID: Final = "jsonrpc.request.id"
GEN_AI_TOOL_NAME: Final = "gen_ai.tool.name"
GEN_AI_PROMPT_NAME: Final = "gen_ai.prompt.name"
GEN_AI_OPERATION_NAME: Final = "gen_ai.operation.name"
ERROR_TYPE: Final = "error.type"
RPC_RESPONSE_STATUS_CODE: Final = "rpc.response.status_code"
NETWORK_TRANSPORT: Final = "network.transport"
NETWORK_PROTOCOL_NAME: Final = "network.protocol.name"
SERVER_ADDRESS: Final = "server.address"
SERVER_PORT: Final = "server.port"
TOOL_ERROR: Final = "tool_error"
"""``error.type`` of a ``tools/call`` answered with ``isError`` (the conventions' value)."""

_INTERNAL_ERROR: Final = int(mcpwire.ErrorCode.INTERNAL_ERROR)


def _tracer(tracer_provider: trace.TracerProvider | None) -> trace.Tracer:
    return trace.get_tracer("mcpwire_adapters.tracing", mcpwire.__version__, tracer_provider=tracer_provider)


def _describe(method: str, params: Mapping[str, Any] | None, request_id: str | int | None,
             protocol_version: str | None, session_id: str | None) -> tuple[str, dict[str, Any]]:
    """The span name and attributes of a request, both roles alike: ``{method} {target}``,
    ``target`` the tool or prompt name (a resource URI is an attribute, never in the name: the
    conventions keep span names of low cardinality)."""
    attributes: dict[str, Any] = {MCP_METHOD_NAME: method}
    if request_id is not None:
        attributes[JSONRPC_REQUEST_ID] = str(request_id)
    if protocol_version is not None:
        attributes[MCP_PROTOCOL_VERSION] = protocol_version
    if session_id is not None:
        attributes[MCP_SESSION_ID] = session_id
    name = params.get("name") if params is not None else None
    target = name if isinstance(name, str) and method in ("tools/call", "prompts/get") else None
    if method == "tools/call":
        attributes[GEN_AI_OPERATION_NAME] = "execute_tool"
        if target is not None:
            attributes[GEN_AI_TOOL_NAME] = target
    elif method == "prompts/get" and target is not None:
        attributes[GEN_AI_PROMPT_NAME] = target
    uri = params.get("uri") if params is not None else None
    if isinstance(uri, str) and method in ("resources/read", "resources/subscribe", "resources/unsubscribe"):
        attributes[MCP_RESOURCE_URI] = uri
    return (method if target is None else f"{method} {target}"), attributes


def _error(span: Span, code: int | str, message: str) -> None:
    """The conventions' error: ``error.type`` (the JSON-RPC code, as a string, or a low-cardinality
    name), ``rpc.response.status_code`` for a JSON-RPC error, status ERROR with its message."""
    if isinstance(code, int):
        span.set_attribute(RPC_RESPONSE_STATUS_CODE, str(code))
    span.set_attribute(ERROR_TYPE, str(code))
    span.set_status(Status(StatusCode.ERROR, message))


def _failed(span: Span, exc: BaseException) -> None:
    """An exception that ended the operation and is no JSON-RPC answer: its class names it."""
    span.set_attribute(ERROR_TYPE, type(exc).__qualname__)
    span.set_status(Status(StatusCode.ERROR, str(exc) or type(exc).__name__))


def _tool_failed(span: Span, result: Any) -> None:
    if isinstance(result, CallToolResult) and result.is_error is True:
        _error(span, TOOL_ERROR, "isError")


# -- the server --------------------------------------------------------------------------------------
class _Request(Protocol):
    """What :class:`ServerTracing` reads of the App's ``Context`` (duck-typed: this module is
    below the App's floor)."""

    event: Any
    exchange: Any

    @property
    def method(self) -> str: ...
    @property
    def request_id(self) -> str | int: ...
    @property
    def session_id(self) -> str | None: ...
    @property
    def protocol_version(self) -> str: ...
    @property
    def meta(self) -> mcpwire.RequestMeta: ...
    @property
    def task_id(self) -> str | None: ...


def _carrier(meta: Mapping[str, Any]) -> dict[str, str]:
    """The propagators' keys of a request's ``_meta``, those holding strings only (``_meta``
    values are any JSON: a number there is no trace context)."""
    fields = propagate.get_global_textmap().fields
    return {key: value for key in fields if isinstance(value := meta.get(key), str)}


class ServerTracing:
    """The App's tracing middleware: a ``SERVER`` span per request the App answers (each run of
    its handler: an initialize-era request that asks its client runs once per round), named and
    attributed by the conventions, the child of the span named by the request's ``traceparent``
    (else of the ambient span), the ambient span linked. Register it first (outermost) so that
    its span holds the other middleware's time: ``app.add_middleware(ServerTracing(), ...)``.

    Errors: a :class:`mcpwire.ProtocolError` is its code (-32603 for a
    :class:`mcpwire.LocalProtocolError`, as answered); any other exception in a ``tools/call``
    (not a task) is ``tool_error``, as the App answers it (``isError``), and elsewhere -32603; a
    ``CallToolResult`` with ``isError`` is ``tool_error``; a cancellation is its class's name.
    ``tracer_provider``: the default is the global one."""

    def __init__(self, *, tracer_provider: trace.TracerProvider | None = None) -> None:
        self._tracer = _tracer(tracer_provider)

    async def __call__(self, ctx: _Request, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        method = ctx.method
        event = ctx.event
        params = {"name": getattr(event, "name", None), "uri": getattr(event, "uri", None)}
        name, attributes = _describe(method, params, ctx.request_id, ctx.protocol_version, ctx.session_id)
        exchange = ctx.exchange
        if isinstance(exchange, HttpExchange):
            attributes[NETWORK_TRANSPORT], attributes[NETWORK_PROTOCOL_NAME] = "tcp", "http"
        else:
            attributes[NETWORK_TRANSPORT] = "pipe"
        parent = None
        links: list[Link] = []
        carrier = _carrier(ctx.meta.raw)
        if carrier:
            remote = propagate.extract(carrier)
            if trace.get_current_span(remote).get_span_context().is_valid:
                parent = remote
                ambient = trace.get_current_span().get_span_context()
                if ambient.is_valid:
                    links.append(Link(ambient))
        with self._tracer.start_as_current_span(name, context=parent, kind=SpanKind.SERVER, attributes=attributes,
                                                links=links, record_exception=False,
                                                set_status_on_exception=False) as span:
            try:
                result = await call_next(ctx)
            except mcpwire.LocalProtocolError:
                _error(span, _INTERNAL_ERROR, "Internal error")
                raise
            except mcpwire.ProtocolError as exc:
                code = int(exc.code)
                _error(span, code, "Internal error" if code == _INTERNAL_ERROR else exc.message)
                raise
            except Exception as exc:
                if method == "tools/call" and ctx.task_id is None:
                    _error(span, TOOL_ERROR, str(exc) or type(exc).__name__)
                else:
                    _error(span, _INTERNAL_ERROR, "Internal error")
                span.record_exception(exc)
                raise
            except BaseException as exc:  # a cancellation: no answer goes out
                _failed(span, exc)
                raise
            _tool_failed(span, result)
            return result


def trace_server(app: Any, *, tracer_provider: trace.TracerProvider | None = None) -> ServerTracing:
    """Trace every request ``app`` (an :class:`~mcpwire_adapters.App`) answers: its
    :class:`ServerTracing` added as a middleware of every method it can wrap. Call it before
    adding other middleware, so that its span holds theirs. Returns the middleware."""
    tracing = ServerTracing(tracer_provider=tracer_provider)
    app.add_middleware(tracing)
    return tracing


# -- the client --------------------------------------------------------------------------------------
class ClientTracing:
    """What a client session traces its requests with (``session.tracing``): a ``CLIENT`` span
    around each request, from its first send to its complete result (input rounds, a version
    retry, a new session after a 404 included), named and attributed by the conventions, its
    context injected into the request's ``_meta``. A JSON-RPC error sets ``error.type`` and
    ``rpc.response.status_code`` to its code; a ``CallToolResult`` with ``isError``,
    ``tool_error``; any other exception (a transport failure, a cancellation), its class's name.
    ``tracer_provider``: the default is the global one."""

    def __init__(self, *, tracer_provider: trace.TracerProvider | None = None) -> None:
        self._tracer = _tracer(tracer_provider)

    async def send(
        self, session: Any, request: OutgoingRequest, send: Callable[[OutgoingRequest], Awaitable[ResultReceived]],
    ) -> ResultReceived:
        """``await send(request)`` in a span of its own, ``request`` carrying the span's context
        in ``_meta`` (``session.client.with_meta``). ``session``: the sending session (its
        ``client`` engine; ``url`` over HTTP, ``command`` over stdio)."""
        client = session.client
        name, attributes = _describe(request.method, request.params, request.id, client.protocol_version,
                                    client.session_id)
        attributes.update(_network(session))
        with self._span(name, attributes) as span:
            carrier: dict[str, str] = {}
            propagate.inject(carrier)
            try:
                result = await send(client.with_meta(request, carrier))
            except Exception as exc:
                error = getattr(exc, "error", None)
                if isinstance(error, ErrorResult):  # ServerError: the server's JSON-RPC error
                    _error(span, error.code, error.message)
                else:
                    _failed(span, exc)
                    span.record_exception(exc)
                raise
            except BaseException as exc:
                _failed(span, exc)
                raise
            _tool_failed(span, result.value)
            return result

    @contextlib.contextmanager
    def _span(self, name: str, attributes: dict[str, Any]) -> Iterator[Span]:
        with self._tracer.start_as_current_span(name, kind=SpanKind.CLIENT, attributes=attributes,
                                                record_exception=False, set_status_on_exception=False) as span:
            yield span


def _network(session: Any) -> dict[str, Any]:
    """The network attributes of a session: HTTP (``url``) over TCP, with the server's address
    and port; stdio (``command``) over a pipe."""
    url = getattr(session, "url", None)
    if isinstance(url, str):
        parts = urlsplit(url)
        found: dict[str, Any] = {NETWORK_TRANSPORT: "tcp", NETWORK_PROTOCOL_NAME: "http"}
        if parts.hostname:
            found[SERVER_ADDRESS] = parts.hostname
            found[SERVER_PORT] = parts.port or (443 if parts.scheme == "https" else 80)
        return found
    return {NETWORK_TRANSPORT: "pipe"} if getattr(session, "command", None) is not None else {}


def trace_client(session: Any, *, tracer_provider: trace.TracerProvider | None = None) -> ClientTracing:
    """Trace every request ``session`` (an ``HttpClient`` or a ``StdioClient``) sends from now on:
    its ``tracing`` set to a :class:`ClientTracing`. Returns it."""
    tracing = ClientTracing(tracer_provider=tracer_provider)
    session.tracing = tracing
    return tracing
