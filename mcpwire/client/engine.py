"""The client engine: building requests, MRTR retries, version fallback, pagination.

Owns, client side (specification: Basic, ``_meta``; Basic > Versioning, Protocol Version
Negotiation (-32022); Basic > Transports > Streamable HTTP, Request Metadata; Basic >
Patterns > Multi Round-Trip Requests and Cancellation; Server > Utilities > Pagination):

- every outgoing request: a fresh id from this engine's own counter (never a global one),
  ``params._meta`` with protocolVersion, clientCapabilities (declared per request, never
  inferred) and clientInfo, plus logLevel / progressToken when asked; and, for HTTP, the
  headers (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*`` from the
  tool's ``x-mcp-header`` annotations learned at ``tools/list``, Content-Type, Accept);
- the MRTR retry: same method and params, a new id, ``inputResponses`` keyed as asked and
  ``requestState`` echoed exactly (omitted when the server sent none). State and answers
  belong to one call: a retry is built only from that call's :class:`InputRequired`;
- the -32022 fallback (:meth:`Client.version_retry`) and a bounded pagination helper;
- reading back a result a host's response cache kept (:meth:`Client.cached_result`; the
  caching hints themselves are ``ResultReceived.ttl_ms`` / ``cache_scope``, schema
  ``$defs.CacheableResult``): the core keeps nothing and reads no clock;
- cancellation: on stdio :meth:`Client.cancel` gives the ``notifications/cancelled`` line; on
  HTTP (2026-07-28) the host cancels by closing the response stream, nothing is sent (Basic >
  Patterns > Cancellation, Transport-Specific Cancellation); on an initialize-era HTTP session,
  where a disconnect is not a cancellation (2025-11-25: Basic > Transports), the host also
  POSTs ``notification("notifications/cancelled", {"requestId": ..., "reason": ...})``.

Initialize era (specification 2025-11-25: Basic > Lifecycle, Basic > Transports; 2026-07-28:
Basic > Versioning, Backward Compatibility): the same engine speaks to a server of the older
revisions once the host falls back to the handshake. :meth:`Client.probe_says_legacy` reads the
answer to a first modern request (``server/discover``, the probe) the way the specification
says; :meth:`Client.initialize` builds the handshake, :meth:`Client.accept_initialize` checks
the server's answer, keeps the session id and gives ``notifications/initialized``. From then on
every request is built for the negotiated revision (no per-request ``_meta`` fields, the
``MCP-Protocol-Version`` and ``Mcp-Session-Id`` headers instead of ``Mcp-Method``), and the
server's own requests are answered with :meth:`Client.answer` (an invalid one with
:meth:`Client.reject`).

Reading responses is ``_client_stream``'s. Tool schemas are kept exactly as received; a
``$ref`` is never resolved, remote or not (SEP-2106).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import msgspec
from msgspec import UNSET, UnsetType

from .events import ErrorResult, InputRequired, InvalidMessage, OutgoingMessage, OutgoingRequest, ResultReceived, ServerRequest
from .learned import Learned
from .stream import _Tracker
from ..wire.envelope import RequestId, encode_error_object, encode_notification, encode_request, encode_result
from ..wire.errors import ErrorCode, LocalProtocolError, RemoteProtocolError
from ..wire.headers import ParamHeader, request_headers, session_headers
from ..wire.meta import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    LOG_LEVEL_META_KEY,
    LOG_LEVELS,
    PROGRESS_TOKEN_META_KEY,
    PROTOCOL_VERSION,
    PROTOCOL_VERSION_META_KEY,
    check_client_capabilities,
)
from ..wire.methods import LIST_METHODS, METHODS, SERVER_REQUESTS
from ..wire.ndjson import encode_line
from ..wire.versions import INITIALIZE_ERA, REVISIONS
from ..types import DiscoverResult, Implementation, InitializeResult
from ..wire.validators import ValidatorFactory

__all__ = ["HTTP_ACCEPT", "MODERN_ERRORS", "Client", "OutgoingRequest", "Paginator"]

HTTP_ACCEPT: Final = b"application/json, text/event-stream"
_BASE_HEADERS: Final = ((b"Content-Type", b"application/json"), (b"Accept", HTTP_ACCEPT))
# Params members that belong to one MRTR round, never to the call itself.
_ROUND_KEYS: Final = ("inputResponses", "requestState")
# The _meta members a 2026-07-28 request carries and an initialize-era one does not.
_STATELESS_META: Final = (PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, LOG_LEVEL_META_KEY)


def _check_host_meta(meta: Mapping[str, Any]) -> None:
    """The host's own ``_meta`` keys may not name the ones this engine owns."""
    taken = [k for k in meta if k in _STATELESS_META or k == PROGRESS_TOKEN_META_KEY]
    if taken:
        raise LocalProtocolError(f"_meta keys {taken} are the engine's: use the verb's own arguments")


MODERN_ERRORS: Final = frozenset({
    ErrorCode.HEADER_MISMATCH, ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY, ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
})
"""The error codes only a 2026-07-28 (modern) server sends: an answer with one of them to the
probe identifies a modern server; any other error identifies an initialize-era one
(specification 2026-07-28: Basic > Versioning, Backward Compatibility)."""


def _check_own_capabilities(caps: Mapping[str, Any]) -> None:
    # The same rules the server applies (wire/meta.py, check_client_capabilities), but a bad
    # object here is the host's mistake, so it is a LocalProtocolError rather than an answer
    # for a peer.
    try:
        check_client_capabilities(caps)
    except RemoteProtocolError as exc:
        raise LocalProtocolError(exc.message, code=exc.code, data=exc.data) from None


class Client:
    """A sans-IO MCP client engine, 2026-07-28 first and the initialize-era revisions on fallback.
    One per connection or per logical client.

    ``capabilities`` is the ClientCapabilities object declared on every request (override it
    per call with ``capabilities=``); on an initialize-era session it is declared once, by
    ``initialize``. Typical flow: send :meth:`discover`; on an :class:`ErrorResult` with -32022
    send :meth:`version_retry`; when :meth:`probe_says_legacy` says so, send :meth:`initialize`
    and then the message :meth:`accept_initialize` gives. Send :meth:`list_tools` (the engine
    learns each tool's ``x-mcp-header`` annotations from the parsed result); send
    :meth:`call_tool`; on :class:`InputRequired` answer and send :meth:`retry`; on a
    :class:`ServerRequest` send :meth:`answer`.

    ``protocol_version`` is the revision requests are built for: 2026-07-28 by default; pin an
    initialize-era one (``"2025-11-25"``) to skip the probe and start with ``initialize``.
    ``supported_versions`` are the revisions this client accepts, from a -32022 list or an
    ``initialize`` answer (by default all four mcpwire speaks).
    """

    def __init__(
        self,
        client_info: Implementation,
        *,
        capabilities: Mapping[str, Any] | None = None,
        protocol_version: str = PROTOCOL_VERSION,
        supported_versions: tuple[str, ...] = REVISIONS,
        validator: ValidatorFactory | None = None,
    ) -> None:
        caps = dict(capabilities or {})
        _check_own_capabilities(caps)
        self.client_info = client_info
        self.capabilities = caps
        self.protocol_version = protocol_version
        self.supported_versions = supported_versions
        self.validator = validator
        """Compiles the outputSchema of each listed tool, so that ``structuredContent`` is
        checked (``ResultReceived.problem``); ``None``: not checked."""
        self._info = msgspec.to_builtins(client_info)
        self._next_id = 0
        self.learned = Learned()
        """What results taught this engine: tool header annotations, pending input rounds."""
        self.initialized: InitializeResult | None = None
        """The server's ``initialize`` answer on an initialize-era session, else ``None``."""
        self.session_id: str | None = None
        """The ``Mcp-Session-Id`` the server issued with its ``initialize`` answer, if any."""

    @property
    def initialize_era(self) -> bool:
        """Whether requests are built for an initialize-era revision (a session)."""
        return self.protocol_version in INITIALIZE_ERA

    # -- building requests ------------------------------------------------------------------------
    def new_id(self) -> int:
        """The next request id of this engine (1, 2, 3...)."""
        self._next_id += 1
        return self._next_id

    def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        capabilities: Mapping[str, Any] | None = None,
        log_level: str | None = None,
        progress_token: str | int | None = None,
        request_id: RequestId | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> OutgoingRequest:
        """Build any request. ``meta`` adds keys of the host's own to ``_meta``; neither it nor
        ``params`` may name the ``_meta`` keys this engine owns (LocalProtocolError)."""
        if log_level is not None and log_level not in LOG_LEVELS:
            raise LocalProtocolError(f"Unknown log level {log_level!r}")
        if meta:
            _check_host_meta(meta)
            params = {**(params or {}), "_meta": {**dict((params or {}).get("_meta") or {}), **meta}}
        if self.initialize_era:
            return self._session_request(method, params, capabilities, log_level, progress_token, request_id)
        caps = self.capabilities if capabilities is None else dict(capabilities)
        if capabilities is not None:
            _check_own_capabilities(caps)
        out = dict(params or {})
        full: dict[str, Any] = dict(out.pop("_meta", None) or {})
        full[PROTOCOL_VERSION_META_KEY] = self.protocol_version
        full[CLIENT_CAPABILITIES_META_KEY] = caps
        full[CLIENT_INFO_META_KEY] = self._info
        if log_level is not None:
            full[LOG_LEVEL_META_KEY] = log_level
        if progress_token is not None:
            full[PROGRESS_TOKEN_META_KEY] = progress_token
        out["_meta"] = full
        return self._build(method, out, self.new_id() if request_id is None else request_id)

    def _session_request(
        self, method: str, params: Mapping[str, Any] | None, capabilities: Mapping[str, Any] | None,
        log_level: str | None, progress_token: str | int | None, request_id: RequestId | None,
    ) -> OutgoingRequest:
        if capabilities is not None:
            raise LocalProtocolError("capabilities are declared once, by initialize, on an initialize-era session")
        if log_level is not None:
            raise LocalProtocolError("an initialize-era session sets its log level with logging/setLevel (set_log_level)")
        if self.initialized is None and method != "initialize":
            raise LocalProtocolError(f"{method} before initialize: the session is not initialized")
        out = dict(params or {})
        meta: dict[str, Any] = dict(out.pop("_meta", None) or {})
        if progress_token is not None:
            meta[PROGRESS_TOKEN_META_KEY] = progress_token
        if meta:
            out["_meta"] = meta
        return self._build(method, out, self.new_id() if request_id is None else request_id)

    def _build(self, method: str, params: dict[str, Any], request_id: RequestId) -> OutgoingRequest:
        if self.initialize_era:
            meta = params.get("_meta")
            token = meta.get(PROGRESS_TOKEN_META_KEY) if isinstance(meta, dict) else None
            return OutgoingRequest(
                id=request_id, method=method, params=params, body=encode_request(request_id, method, params or None),
                headers=_BASE_HEADERS + tuple(self._session_headers(method)),
                progress_token=token if isinstance(token, (str, int)) else None,
            )
        spec = METHODS.get(method)
        name_field = spec.name_param if spec is not None else None
        name = params.get(name_field) if name_field is not None else None
        annotations: tuple[ParamHeader, ...] = ()
        arguments = None
        if method == "tools/call" and isinstance(name, str):
            if name in self.rejected_tools:
                raise LocalProtocolError(
                    f"tool {name!r} has invalid x-mcp-header annotations and cannot be called: "
                    + self.rejected_tools[name]
                )
            annotations = self.learned.tool_headers.get(name, ())
            arguments = params.get("arguments")
        headers = request_headers(
            method=method,
            name=name if isinstance(name, str) else None,
            protocol_version=params["_meta"][PROTOCOL_VERSION_META_KEY],
            params_headers=annotations,
            arguments=arguments if isinstance(arguments, Mapping) else None,
        )
        meta = params["_meta"]
        token = meta.get(PROGRESS_TOKEN_META_KEY)
        return OutgoingRequest(
            id=request_id,
            method=method,
            params=params,
            body=encode_request(request_id, method, params),
            headers=_BASE_HEADERS + tuple(headers),
            progress_token=token if isinstance(token, (str, int)) else None,
        )

    def discover(self, **kw: Any) -> OutgoingRequest:
        """``server/discover``: send it first
        (<https://modelcontextprotocol.io/specification/2026-07-28/server/discover>)."""
        return self.request("server/discover", None, **kw)

    def list_tools(self, cursor: str | None = None, **kw: Any) -> OutgoingRequest:
        return self.request("tools/list", _cursor(cursor), **kw)

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                  task: Mapping[str, Any] | None = None, **kw: Any) -> OutgoingRequest:
        """``tools/call``. Raises :class:`LocalProtocolError` for a tool this engine rejected
        at ``tools/list`` (invalid ``x-mcp-header``), or for an argument whose JSON type does
        not match its annotation. ``task`` (``{}`` or ``{"ttl": ms}``) asks a 2025-11-25 server
        to run the call as a task (Tasks: Creating Tasks); the result is then a task
        (``result_type == "task"``) to follow with ``tasks/get`` and :meth:`task_result`."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        if task is not None:
            if self.protocol_version != "2025-11-25":
                raise LocalProtocolError("params.task is 2025-11-25's (the tasks extension: declare it instead)")
            params["task"] = dict(task)
        return self.request("tools/call", params, **kw)

    def list_resources(self, cursor: str | None = None, **kw: Any) -> OutgoingRequest:
        return self.request("resources/list", _cursor(cursor), **kw)

    def list_resource_templates(self, cursor: str | None = None, **kw: Any) -> OutgoingRequest:
        return self.request("resources/templates/list", _cursor(cursor), **kw)

    def read_resource(self, uri: str, **kw: Any) -> OutgoingRequest:
        return self.request("resources/read", {"uri": uri}, **kw)

    def list_prompts(self, cursor: str | None = None, **kw: Any) -> OutgoingRequest:
        return self.request("prompts/list", _cursor(cursor), **kw)

    def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None, **kw: Any) -> OutgoingRequest:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        return self.request("prompts/get", params, **kw)

    def complete(self, ref: Mapping[str, Any], argument_name: str, value: str, *,
                 context: Mapping[str, str] | None = None, **kw: Any) -> OutgoingRequest:
        """``completion/complete`` for ``argument_name`` of ``ref`` (``{"type": "ref/prompt",
        "name": ...}`` or ``{"type": "ref/resource", "uri": ...}``); ``context`` names the
        arguments already chosen (``context.arguments``)."""
        params: dict[str, Any] = {"ref": dict(ref), "argument": {"name": argument_name, "value": value}}
        if context is not None:
            params["context"] = {"arguments": dict(context)}
        return self.request("completion/complete", params, **kw)

    def get_task(self, task_id: str, **kw: Any) -> OutgoingRequest:
        """``tasks/get`` (tasks extension: Task Polling); the result's ``value`` is a
        :class:`~mcpwire.tasks.Task`. Declare the extension in ``capabilities``
        (``{"extensions": {"io.modelcontextprotocol/tasks": {}}}``)."""
        return self.request("tasks/get", {"taskId": task_id}, **kw)

    def update_task(self, task_id: str, input_responses: Mapping[str, Any], **kw: Any) -> OutgoingRequest:
        """``tasks/update``: answers to the task's outstanding ``inputRequests``."""
        responses = {k: msgspec.to_builtins(v) for k, v in input_responses.items()}
        return self.request("tasks/update", {"taskId": task_id, "inputResponses": responses}, **kw)

    def task_result(self, task_id: str, **kw: Any) -> OutgoingRequest:
        """``tasks/result`` (2025-11-25 sessions: the outcome of a task, waited for while it
        runs); its result is the call's, to read with :meth:`cached_result`."""
        return self.request("tasks/result", {"taskId": task_id}, **kw)

    def cancel_task(self, task_id: str, **kw: Any) -> OutgoingRequest:
        """``tasks/cancel`` (tasks extension: Task Cancellation)."""
        return self.request("tasks/cancel", {"taskId": task_id}, **kw)

    def listen(self, notifications: Mapping[str, Any], **kw: Any) -> OutgoingRequest:
        """``subscriptions/listen``: its id is the subscription id
        (<https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions>)."""
        return self.request("subscriptions/listen", {"notifications": dict(notifications)}, **kw)

    # -- follow-ups -------------------------------------------------------------------------------
    def retry(self, previous: OutgoingRequest | InputRequired, input_responses: Mapping[str, Any]) -> OutgoingRequest:
        """The MRTR retry answering an :class:`InputRequired`
        (<https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr>).

        ``previous`` is the event, or the request it answered (the engine keeps the last
        input_required parsed for each request, bounded, until it is retried). The retry has
        the same method and params (``_meta`` included), a new id, ``inputResponses``
        (Structs or dicts, keyed by the ids asked) and ``requestState`` exactly as received,
        or none when the server sent none. Raises :class:`LocalProtocolError` when no
        input_required is known for ``previous`` or an answer uses an id that was not asked.
        """
        if isinstance(previous, OutgoingRequest):
            event = self.learned.rounds.pop(previous.id, None)
            if event is None:
                raise LocalProtocolError(f"no input_required result is pending for request {previous.id!r}")
        else:
            event = previous
            self.learned.rounds.pop(event.request.id, None)
        previous, request = event, event.request
        unknown = set(input_responses) - set(previous.input_requests)
        if unknown:
            raise LocalProtocolError(f"input responses for ids that were not asked: {sorted(unknown)}")
        params = {k: v for k, v in request.params.items() if k not in _ROUND_KEYS}
        if input_responses or previous.input_requests:
            params["inputResponses"] = {k: msgspec.to_builtins(v) for k, v in input_responses.items()}
        if previous.request_state is not UNSET:
            params["requestState"] = previous.request_state
        return self._build(request.method, params, self.new_id())

    def version_retry(self, request: OutgoingRequest, error: ErrorResult) -> OutgoingRequest:
        """After -32022 (Unsupported protocol version), pick the first version in
        ``error.data.supported`` that this engine supports, make it the engine's version, and
        rebuild ``request`` with it and a new id. Raises :class:`LocalProtocolError` when the
        error is not -32022 or no version is shared. Retry at most once per request."""
        if error.code != ErrorCode.UNSUPPORTED_PROTOCOL_VERSION:
            raise LocalProtocolError("version_retry needs a -32022 error")
        offered = _offered(error)
        # The fallback of this error stays in the stateless era (the handshake is not a retry).
        common = [v for v in offered if v in self.supported_versions and v not in INITIALIZE_ERA]
        if not common:
            raise LocalProtocolError(
                f"no common protocol version: server supports {offered}, client supports "
                f"{list(self.supported_versions)}",
                code=ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
                data=error.data,
            )
        self.protocol_version = common[0]
        params = dict(request.params)
        params["_meta"] = {**params["_meta"], PROTOCOL_VERSION_META_KEY: self.protocol_version}
        return self._build(request.method, params, self.new_id())

    # -- the initialize era ------------------------------------------------------------------------
    def probe_says_legacy(self, answer: ResultReceived | ErrorResult | None) -> bool:
        """Whether the answer to the probe (a first modern request, best ``server/discover``)
        identifies an initialize-era server, so that the host falls back to :meth:`initialize`
        (specification 2026-07-28: Basic > Versioning, Backward Compatibility; Streamable HTTP
        and stdio, Backward Compatibility).

        ``answer`` is the probe's final event, or ``None`` when the server broke the protocol
        in its answer (an HTTP 4xx without a JSON-RPC body, a 404 or 405 of an endpoint that
        takes no such POST) or, on stdio, did not answer in time. A complete result is modern,
        unless it answered ``server/discover`` with neither a DiscoverResult nor at least its
        ``supportedVersions`` list (some older servers answer any unknown method with ``{}``); an error is modern only with a code of
        :data:`MODERN_ERRORS`, except a -32022 whose supported versions are all of the
        initialize era (a dual-era server serving only those). The fallback is never keyed
        to one other code.
        """
        if answer is None:
            return True
        if isinstance(answer, ErrorResult):
            if answer.code == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION:
                offered = _offered(answer)
                return bool(offered) and all(v in INITIALIZE_ERA for v in offered)
            return answer.code not in MODERN_ERRORS
        if answer.method != "server/discover" or isinstance(answer.value, DiscoverResult):
            return False
        # A sparse DiscoverResult (required members missing) still names its versions.
        return not isinstance(answer.data.get("supportedVersions"), list)

    def initialize(self, protocol_version: str | None = None) -> OutgoingRequest:
        """The ``initialize`` request (specification 2025-11-25: Basic > Lifecycle) asking for
        ``protocol_version``, else the pinned initialize-era :attr:`protocol_version`, else the
        newest initialize-era revision of :attr:`supported_versions`; with this engine's
        capabilities and clientInfo. It forgets any earlier session."""
        version = protocol_version or (self.protocol_version if self.initialize_era else None)
        if version is None:
            version = next((v for v in self.supported_versions if v in INITIALIZE_ERA), None)
        if version is None or version not in INITIALIZE_ERA:
            raise LocalProtocolError(
                f"no initialize-era revision to ask for (supported: {list(self.supported_versions)})"
            )
        self.protocol_version, self.initialized, self.session_id = version, None, None
        params = {"protocolVersion": version, "capabilities": self.capabilities, "clientInfo": self._info}
        return self._build("initialize", params, self.new_id())

    def accept_initialize(self, answer: ResultReceived, session_id: str | None = None) -> OutgoingMessage:
        """Take the server's ``initialize`` answer (and, over HTTP, the ``Mcp-Session-Id`` of
        its response); return ``notifications/initialized``, the message to send next.

        Raises :class:`RemoteProtocolError` when the answer is not an InitializeResult, or
        names a revision this client does not speak (the client then disconnects: 2025-11-25,
        Basic > Lifecycle, Version Negotiation).
        """
        if answer.method != "initialize" or not isinstance(answer.value, InitializeResult):
            raise RemoteProtocolError("the answer to initialize is not an InitializeResult")
        chosen = answer.value.protocol_version
        speaks = [v for v in self.supported_versions if v in INITIALIZE_ERA]
        if chosen not in speaks:
            raise RemoteProtocolError(
                f"the server chose protocol version {chosen!r}, which this client does not speak ({speaks})",
                code=ErrorCode.UNSUPPORTED_PROTOCOL_VERSION, data={"supported": speaks, "requested": chosen},
            )
        self.protocol_version, self.initialized, self.session_id = chosen, answer.value, session_id
        return self.notification("notifications/initialized")

    def session_expired(self) -> None:
        """The server no longer knows the session (HTTP 404 on a request carrying its id):
        forget it, so that the next request is a new :meth:`initialize`."""
        self.initialized, self.session_id = None, None

    def notification(self, method: str, params: Mapping[str, Any] | None = None) -> OutgoingMessage:
        """A notification to send on the session (``notifications/initialized``,
        ``notifications/roots/list_changed``...)."""
        body = encode_notification(method, dict(params) if params is not None else None)
        return OutgoingMessage(body=body, headers=_BASE_HEADERS + tuple(self._session_headers(method)))

    def answer(self, request: ServerRequest, result: Any) -> OutgoingMessage:
        """The response to a server's request: ``result`` is its result Struct (an ElicitResult,
        CreateMessageResult, ListRootsResult) or a JSON object; ``ping`` is answered with ``{}``.
        Raises :class:`LocalProtocolError` when a Struct is not the method's result type."""
        spec = SERVER_REQUESTS.get(request.method)
        if isinstance(result, msgspec.Struct) and spec is not None and not isinstance(result, spec.result):
            raise LocalProtocolError(f"{request.method} must be answered with {spec.result.__name__}")
        return OutgoingMessage(
            body=encode_result(request.request_id, result), headers=_BASE_HEADERS + tuple(self._session_headers(None))
        )

    def answer_error(self, request: ServerRequest, code: int, message: str, data: Any = UNSET) -> OutgoingMessage:
        """An error response to a server's request (-32601 when the client has no handler for
        it, -32602 for params it cannot read)."""
        body = encode_error_object(request.request_id, code, message, data)
        return OutgoingMessage(body=body, headers=_BASE_HEADERS + tuple(self._session_headers(None)))

    def reject(self, event: InvalidMessage) -> OutgoingMessage:
        """The error response to a message the server sent that is not a valid JSON-RPC message
        (an :class:`InvalidMessage`): its code and message, and the id it carried, or ``null``
        when none could be read (JSON-RPC 2.0 section 5), as the server engine answers one."""
        body = encode_error_object(event.request_id, event.code, event.message, event.data)
        return OutgoingMessage(body=body, headers=_BASE_HEADERS + tuple(self._session_headers(None)))

    def set_log_level(self, level: str) -> OutgoingRequest:
        """``logging/setLevel`` on an initialize-era session (2026-07-28 sends the level per request)."""
        if level not in LOG_LEVELS:
            raise LocalProtocolError(f"Unknown log level {level!r}")
        return self.request("logging/setLevel", {"level": level})

    def subscribe(self, uri: str) -> OutgoingRequest:
        """``resources/subscribe`` on an initialize-era session; updates then arrive on the GET stream."""
        return self.request("resources/subscribe", {"uri": uri})

    def unsubscribe(self, uri: str) -> OutgoingRequest:
        return self.request("resources/unsubscribe", {"uri": uri})

    def ping(self) -> OutgoingRequest:
        return self.request("ping")

    def stream_headers(self, last_event_id: str | None = None) -> tuple[tuple[bytes, bytes], ...]:
        """The headers of a GET on the session: the standalone stream of server messages, or,
        with ``last_event_id``, the resumption of a stream that ended early (2025-11-25:
        Streamable HTTP, Resumability and Redelivery)."""
        if self.initialized is None:
            raise LocalProtocolError("a GET stream needs an initialized session")
        return ((b"Accept", b"text/event-stream"),) + tuple(
            session_headers(protocol_version=self.protocol_version, session_id=self.session_id,
                            last_event_id=last_event_id))

    def end_session(self) -> tuple[tuple[bytes, bytes], ...] | None:
        """The headers of the DELETE ending the session (``None`` when the server issued no id:
        nothing to end), and the session is forgotten."""
        if self.session_id is None:
            return None
        headers = tuple(session_headers(protocol_version=self.protocol_version, session_id=self.session_id))
        self.session_expired()
        return headers

    def as_session_request(self, request: OutgoingRequest) -> OutgoingRequest:
        """``request`` (built for 2026-07-28, or for a session that expired) rebuilt for the
        current initialize-era session, with a new id: the fallback resends what the probe
        could not carry. A per-request ``logLevel`` is dropped (use :meth:`set_log_level`)."""
        params = {k: v for k, v in request.params.items() if k not in _ROUND_KEYS}
        meta = {k: v for k, v in dict(params.pop("_meta", None) or {}).items() if k not in _STATELESS_META}
        if meta:
            params["_meta"] = meta
        if self.initialized is None:
            raise LocalProtocolError(f"{request.method} before initialize: the session is not initialized")
        return self._build(request.method, params, self.new_id())

    def with_meta(self, request: OutgoingRequest, meta: Mapping[str, Any]) -> OutgoingRequest:
        """``request`` as it is (same id, method and params) with ``meta``'s keys added to its
        ``_meta``: for what an adapter attaches to every request once it is built, such as W3C
        trace context (``traceparent``, ``tracestate``; specification: Basic, ``_meta``). The
        keys this engine owns are refused as in :meth:`request` (LocalProtocolError)."""
        if not meta:
            return request
        _check_host_meta(meta)
        params = {**request.params, "_meta": {**dict(request.params.get("_meta") or {}), **meta}}
        return self._build(request.method, params, request.id)

    def _session_headers(self, method: str | None) -> list[tuple[bytes, bytes]]:
        return session_headers(
            protocol_version=None if method == "initialize" else self.protocol_version,
            session_id=None if method == "initialize" else self.session_id,
        )

    @staticmethod
    def may_cancel(request: OutgoingRequest) -> bool:
        """Whether a client may cancel ``request``: any but ``initialize``, which "MUST NOT be
        cancelled by clients" (specification 2025-11-25: Basic > Utilities > Cancellation)."""
        return request.method != "initialize"

    def cancel(self, request: OutgoingRequest, reason: str | None = None) -> bytes:
        """stdio only: the ``notifications/cancelled`` line for ``request``
        (<https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/cancellation>).

        On HTTP (2026-07-28) do not send anything: close the response stream (the connection).
        On an initialize-era HTTP session, POST ``notification("notifications/cancelled",
        {"requestId": request.id, "reason": ...})`` on the session as well. Raises
        :class:`LocalProtocolError` for a request :meth:`may_cancel` refuses (``initialize``).
        """
        if not self.may_cancel(request):
            raise LocalProtocolError(f"{request.method} must not be cancelled by clients (it is waited for or "
                                     "the connection closed)")
        params: dict[str, Any] = {"requestId": request.id}
        if reason is not None:
            params["reason"] = reason
        return encode_line(encode_notification("notifications/cancelled", params))

    def cached_result(self, request: OutgoingRequest, raw: bytes) -> ResultReceived:
        """A result kept by a response cache, read again as the answer to ``request``: ``raw`` is
        the ``raw`` of a complete :class:`ResultReceived` of the same method. It is typed (and, for
        tools/list, teaches header annotations) exactly as a result just received; the request
        is not in flight, and nothing goes on the wire. Raises :class:`RemoteProtocolError` when
        ``raw`` is not a complete result."""
        event = _Tracker(self)._result(request, msgspec.Raw(raw))
        if not isinstance(event, ResultReceived) or event.result_type != "complete":
            self.learned.rounds.pop(request.id, None)  # no round is pending for what was never sent
            raise RemoteProtocolError("a cached result must be a complete result")
        return event

    def paginate(self, method: str, *, max_pages: int = 100, **kw: Any) -> Paginator:
        """A :class:`Paginator` over a list method (tools/list, resources/list, ...)."""
        return Paginator(self, method, max_pages=max_pages, request_kw=kw)

    @property
    def rejected_tools(self) -> dict[str, str]:
        """Tools left out of tools/list results, with the rule their annotation broke."""
        return self.learned.rejected_tools


def _cursor(cursor: str | None) -> dict[str, Any] | None:
    return None if cursor is None else {"cursor": cursor}


class Paginator:
    """Follows ``nextCursor`` for one list method, at most ``max_pages`` pages
    (<https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/pagination>).

    Loop: ``req = pages.next_request()``; if ``None`` stop; send it; feed the final
    :class:`ResultReceived` to :meth:`add`. Items gather in :attr:`items`; :attr:`truncated` is True
    when the cap (or a repeated cursor) stopped the walk before the last page.
    """

    def __init__(self, client: Client, method: str, *, max_pages: int = 100, request_kw: Mapping[str, Any] | None = None) -> None:
        if method not in LIST_METHODS:
            raise LocalProtocolError(f"{method} is not paginated")
        self.client = client
        self.method = method
        self.max_pages = max_pages
        self.items: list[Any] = []
        self.pages = 0
        self.truncated = False
        self._kw = dict(request_kw or {})
        self._cursor: str | None | UnsetType = UNSET  # UNSET: first page not asked yet
        self._seen: set[str] = set()
        self._done = False

    def next_request(self) -> OutgoingRequest | None:
        if self._done:
            return None
        if self.pages >= self.max_pages:
            self.truncated = True
            self._done = True
            return None
        cursor = None if self._cursor is UNSET else self._cursor
        return self.client.request(self.method, _cursor(cursor), **self._kw)

    def add(self, result: ResultReceived) -> None:
        if result.method != self.method:
            raise LocalProtocolError("result of another method")
        self.pages += 1
        spec = METHODS[self.method]
        key = str(spec.list_key)
        items = getattr(result.value, _snake(key), None) if result.value is not None else None
        if items is None:
            # The page as a whole broke the schema (say, no ttlMs): keep the items that decode.
            raw = result.data.get(key)
            items = []
            for item in raw if isinstance(raw, list) else []:
                try:
                    items.append(msgspec.convert(item, spec.item))
                except msgspec.ValidationError:
                    continue
            if self.method == "tools/list":
                items = [t for t in items if t.name not in self.client.rejected_tools]
        self.items.extend(items)
        cursor = result.data.get("nextCursor")
        if not isinstance(cursor, str):
            self._done = True
        elif cursor in self._seen:
            self.truncated = True
            self._done = True
        else:
            self._seen.add(cursor)
            self._cursor = cursor


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name)


def _offered(error: ErrorResult) -> list[str]:
    """The versions a -32022 error names as supported (``data.supported``)."""
    data = error.data if isinstance(error.data, dict) else {}
    offered = data.get("supported")
    return [v for v in offered if isinstance(v, str)] if isinstance(offered, list) else []
