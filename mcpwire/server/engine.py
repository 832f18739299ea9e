"""The server engine: admission of every request, and the answers it can give by itself.

Owns (specification: Basic; Basic > Transports > Streamable HTTP; Server > Utilities >
Pagination and Caching; Basic > Patterns > Multi round-trip requests and Subscriptions): the order in which a
request is checked after transport admission — envelope, MCP-Protocol-Version header against
the body (-32020/-32022), Mcp-Method/Mcp-Name/Mcp-Param-* (-32020), method lookup (-32601,
also for methods whose capability is not advertised), ``_meta`` (in the order of ``wire/meta.py``), params;
answering ``server/discover`` and the four list methods from the declared catalog (with signed
cursors and cache fields); and handing everything that needs application logic to the host
as an :class:`~mcpwire.Exchange` carrying a typed event.

The engine never calls host code and keeps no per-request state after it answers: every
request stands alone (the stateless revision). Time comes in as ``now``, keys as a Keyring.
"""

from __future__ import annotations

from typing import Any, Callable, Collection, Final, Iterator, Literal, Mapping, Union

import msgspec
from msgspec import UNSET, Raw

from ..types import CallToolResult, Implementation, Prompt, Resource, ResourceTemplate, TextContent, Tool
from ..wire.envelope import (
    Notification, Request, RequestId, Response, UnansweredMessage, decode_message, encode_error, encode_result,
)
from ..wire.errors import ErrorCode, LocalProtocolError, ProtocolError, RemoteProtocolError
from ..wire.headers import (
    LAST_EVENT_ID, MCP_SESSION_ID, HeaderMismatch, HeaderView, check_request_headers, protocol_version_header,
)
from ..wire.meta import (
    PROGRESS_TOKEN_META_KEY, PROTOCOL_VERSION_META_KEY, SERVER_INFO_META_KEY, RequestMeta, check_client_capabilities,
    check_notification_meta, parse_request_meta,
)
from ..wire.methods import CACHEABLE_METHODS, GENERIC_DECODER, METHODS, MethodSpec
from ..wire.params import bad_params, check_cursor, check_string_map, decode_params, is_absolute_uri, is_object
from ..wire.versions import INITIALIZE_ERA, PROTOCOL_VERSION, REVISIONS
from .catalog import (
    Listing, PromptEntry, TemplateEntry, ToolEntry, ValidatorFactory, match_template,
    prepare_prompt, prepare_template, prepare_tool, resource_key, struct_schema,
)
from .context import CachePolicy, ServerContext
from .era import listing_shapes, session_result
from .events import (
    Cancelled, CompletionRequest, HttpBatch, InputArrived, PromptGet, ResourceRead, ServerEvent, SessionClosed, ToolCall,
)
from .exchange import Exchange, HttpExchange, StdioExchange
from .http import (
    HeaderInput, HttpPolicy, HttpReply, HttpRequest, admit, admit_target, as_text, content_length, empty_reply,
    error_reply, json_reply,
)
from .listen import (
    LIST_FLAGS, HttpListenStream, ListenStream, ResumedStream, SessionStream, StdioListenStream, StdioSessionStream,
    check_list_kind, check_uri, parse_filter,
)
from .session import (
    BATCH_REVISIONS, MAX_BATCH, EventStore, MemoryEventStore, MemorySessionStore, Session, SessionStore, check_initialize, check_session_id,
    negotiate_version,
)
from .listeners import Listeners
from .states import ListenState
from .mrtr import check_answers, check_input_responses, check_request_state, open_round
from .tokens import CursorCodec, ExpiredCursor, Keyring, RequestStateCodec, check_now, request_scope
from .validation import MISSING_VALIDATOR, UNCHECKED, jsonschema_validator

__all__ = ["Server"]

_encoder: Final = msgspec.json.Encoder()
_dict_decoder: Final = msgspec.json.Decoder(dict[str, Any])


def _disagree(tool: str, member: str, derive: str, option: str, given: type[Any]) -> str:
    type_name = getattr(given, "__name__", repr(given))
    return (
        f"Tool {tool!r}: the {member} given disagrees with {option}={type_name}, so every correct call would"
        f" fail. Pass {derive} to derive it from the type, or exactly Server.tool_schema({type_name})"
    )


class _Listen(msgspec.Struct, frozen=True):
    request_id: RequestId
    meta: RequestMeta
    honoured: dict[str, Any]


_Admitted = Union[bytes, tuple[ServerEvent, Any], _Listen]

HttpAnswer = Union[HttpReply, HttpExchange, HttpListenStream, InputArrived, SessionClosed, Cancelled, HttpBatch]
"""What :meth:`Server.receive_http` returns."""

_OLDEST: Final = INITIALIZE_ERA[-1]


def _refuse(status: int, message: str, request_id: Any = None, code: int = ErrorCode.INVALID_REQUEST) -> HttpReply:
    return error_reply(RemoteProtocolError(message, code=code, http_status=status), request_id)


class Server:
    """A sans-IO MCP 2026-07-28 server engine.

    Declare what the server offers (``add_tool``, ``add_resource``, ``add_template``,
    ``add_prompt``; ``tools()``, ``resources()``, ``templates()``, ``prompts()`` list what is
    registered), then feed requests: :meth:`receive_http` for Streamable HTTP,
    ``StdioConnection(server).receive_line`` for stdio. Each returns either a complete answer
    to send, or an Exchange / ListenStream for the host to drive.

    ``keyring`` signs requestState tokens and pagination cursors; processes behind one load
    balancer share it. ``validator`` compiles the raw JSON Schemas of tools (arguments of a
    tool declared without ``arguments_type``, structuredContent of one with an outputSchema
    but no ``output_type``). The default (``None``) is :func:`mcpwire.jsonschema_validator`,
    loaded when the first such schema is registered; without the ``jsonschema`` library that
    registration raises :class:`LocalProtocolError`. ``validator=mcpwire.UNCHECKED`` leaves
    them unchecked on purpose. Schemas that accept every object (``{"type": "object"}``, see
    :meth:`add_tool`) need no validator. ``list_changed`` (default ``False``: advertise only
    what you send) advertises ``listChanged`` (and serves subscriptions/listen for it) on
    every list (``True``), or only on the kinds named (``{"tools", "prompts"}``); call
    :meth:`list_changed` when such a list changes.
    """

    def __init__(
        self,
        info: Implementation,
        *,
        keyring: Keyring,
        instructions: str | None = None,
        tools: bool = True,
        resources: bool = True,
        prompts: bool = True,
        completions: bool = False,
        logging: bool = True,
        list_changed: bool | Collection[str] = False,
        resource_subscribe: bool = False,
        cache: Mapping[str, CachePolicy] | None = None,
        page_size: int = 100,
        validator: ValidatorFactory | None = None,
        http: HttpPolicy = HttpPolicy(),
        max_listen_streams: int = 256,
        supported_versions: tuple[str, ...] = REVISIONS,
        request_state_ttl: float = 300,
        session_ids: Iterator[str] | None = None,
        sessions: SessionStore | None = None,
        event_store: Callable[[], EventStore] = MemoryEventStore,
    ) -> None:
        if page_size < 1:
            raise LocalProtocolError("page_size must be at least 1")
        self.info = info
        self.instructions = instructions
        self.http = http
        if not supported_versions:
            raise LocalProtocolError("supported_versions must name at least one protocol revision")
        self.supported_versions = supported_versions
        # Every revision but the initialize-era ones is stateless (a later one too): those are
        # what server/discover and -32022 list, the versions a request's _meta may name.
        self._stateless_versions = tuple(v for v in supported_versions if v not in INITIALIZE_ERA)
        self._era = tuple(v for v in supported_versions if v in INITIALIZE_ERA)
        # What a -32022 names: a server of the initialize era only names those revisions, so
        # the client knows to open a session (and a person reading it, why).
        self._offered = self._stateless_versions or self._era
        self._session_ids = session_ids
        self.sessions: SessionStore = sessions if sessions is not None else MemorySessionStore()
        self._event_store = event_store  # makes each new session's EventStore
        self.page_size = page_size
        self.max_listen_streams = max_listen_streams
        self._validator = validator
        self._enabled = {"tools": tools, "resources": resources, "prompts": prompts, "completions": completions}
        self._logging = logging
        # True: listChanged on every list served; or the kinds ("tools", "prompts", "resources").
        if isinstance(list_changed, str) or (
            not isinstance(list_changed, bool) and not set(list_changed) <= {"tools", "prompts", "resources"}
        ):
            raise LocalProtocolError('list_changed is a bool or a collection of "tools", "prompts", "resources"')
        self._list_changed = frozenset(
            ("tools", "prompts", "resources") if list_changed is True else () if list_changed is False else list_changed
        )
        self._subscribe = resource_subscribe
        self._cache = dict(cache or {})
        for method, policy in self._cache.items():
            if method not in CACHEABLE_METHODS:
                raise LocalProtocolError(f"{method} results are not cacheable (only those with ttlMs in the schema)")
            if type(policy.ttl_ms) is not int or policy.ttl_ms < 0 or policy.scope not in ("public", "private"):
                raise LocalProtocolError(f"Invalid cache policy for {method}: {policy!r}")
        self._state_codec = RequestStateCodec(keyring, ttl_seconds=request_state_ttl)
        self._cursor_codec = CursorCodec(keyring)
        self._info_builtins = msgspec.to_builtins(info)
        self._result_meta = {SERVER_INFO_META_KEY: self._info_builtins}
        self._meta_json = _encoder.encode(self._result_meta)
        # Each list also keeps its items as every enabled initialize-era revision lists them.
        era = self._era
        self._tools: Listing[ToolEntry] = Listing(lambda e: e.tool.name, listing_shapes("tools/list", era))
        self._resources: Listing[Resource] = Listing(resource_key, listing_shapes("resources/list", era))
        self._templates: Listing[TemplateEntry] = Listing(
            lambda e: e.template.uri_template, listing_shapes("resources/templates/list", era)
        )
        self._prompts: Listing[PromptEntry] = Listing(lambda e: e.prompt.name, listing_shapes("prompts/list", era))
        self._listeners = Listeners()
        self._context = ServerContext(
            info=self._info_builtins, state_codec=self._state_codec, cache=self._cache, tools=self._tools,
            listeners=self._listeners,
        )
        self._discover: bytes | None = None
        self._handlers: dict[str, Callable[[Request, Any, RequestMeta, float], _Admitted]] = {
            "server/discover": self._on_discover,
            "tools/list": self._on_list,
            "resources/list": self._on_list,
            "resources/templates/list": self._on_list,
            "prompts/list": self._on_list,
            "tools/call": self._on_call_tool,
            "resources/read": self._on_read_resource,
            "prompts/get": self._on_get_prompt,
            "completion/complete": self._on_complete,
            "subscriptions/listen": self._on_listen,
        }
        self._lists: dict[str, Listing[Any]] = {
            "tools/list": self._tools,
            "resources/list": self._resources,
            "resources/templates/list": self._templates,
            "prompts/list": self._prompts,
        }

    # -- declaration ------------------------------------------------------------------------------
    def add_tool(
        self,
        tool: Tool,
        *,
        arguments_type: type[msgspec.Struct] | None = None,
        output_type: type[Any] | None = None,
    ) -> None:
        """Register (or replace) a tool.

        With ``arguments_type`` the arguments are decoded into that Struct, and the listed
        inputSchema is derived from it: give the tool ``input_schema={}`` (or exactly
        ``Server.tool_schema(arguments_type)``); any other inputSchema disagrees with the
        Struct and is refused. With ``output_type`` structuredContent is checked against it,
        and the outputSchema is derived from it the same way (leave it unset, or give exactly
        ``Server.tool_schema(output_type)``).

        Without them the schemas are raw JSON Schema, checked by the server's ``validator``.
        One that accepts every object (``"type": "object"``, at most an empty ``"properties"``,
        otherwise only annotations such as ``title``/``description``) needs no validator.
        The inputSchema must be an object schema. Raises :class:`LocalProtocolError`.
        """
        name = tool.name
        changes: dict[str, Any] = {}
        if arguments_type is not None:
            derived = struct_schema(arguments_type)
            if not tool.input_schema:
                changes["input_schema"] = derived
            elif tool.input_schema != derived:
                raise LocalProtocolError(_disagree(name, "inputSchema", "input_schema={}", "arguments_type", arguments_type))
        if output_type is not None:
            derived = struct_schema(output_type)
            if tool.output_schema is UNSET:
                changes["output_schema"] = derived
            elif tool.output_schema != derived:
                raise LocalProtocolError(_disagree(name, "outputSchema", "no output_schema", "output_type", output_type))
        if changes:
            tool = msgspec.structs.replace(tool, **changes)
        schema = tool.input_schema
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise LocalProtocolError(f"Tool {name!r}: inputSchema must be a JSON Schema with \"type\": \"object\"")
        entry = prepare_tool(
            tool, arguments_type=arguments_type, output_type=output_type, validator=lambda: self._schema_validator(name)
        )
        self._tools.put(entry, tool)

    def _schema_validator(self, tool_name: str) -> ValidatorFactory | None:
        """The factory for raw JSON Schemas (``None`` when the host chose UNCHECKED); the
        default is resolved, and jsonschema imported, on first need."""
        factory = self._validator
        if factory is None:
            factory = jsonschema_validator()
            if factory is None:
                raise LocalProtocolError(f"Tool {tool_name!r} {MISSING_VALIDATOR}")
            self._validator = factory
        return None if factory is UNCHECKED else factory

    def remove_tool(self, name: str) -> None:
        self._tools.remove(name)

    def add_resource(self, resource: Resource) -> None:
        self._resources.put(resource, resource)

    def remove_resource(self, uri: str) -> None:
        self._resources.remove(uri)

    def add_template(self, template: ResourceTemplate) -> None:
        self._templates.put(prepare_template(template), template)

    def remove_template(self, uri_template: str) -> None:
        self._templates.remove(uri_template)

    def add_prompt(self, prompt: Prompt) -> None:
        self._prompts.put(prepare_prompt(prompt), prompt)

    def remove_prompt(self, name: str) -> None:
        self._prompts.remove(name)

    # -- what is registered, in list order -------------------------------------------------------
    def tools(self) -> list[Tool]:
        """The registered tools as tools/list gives them (sorted by name; derived schemas in)."""
        return [entry.tool for entry in self._tools.values()]

    def resources(self) -> list[Resource]:
        """The registered resources as resources/list gives them (sorted by URI)."""
        return self._resources.values()

    def templates(self) -> list[ResourceTemplate]:
        """The registered resource templates as resources/templates/list gives them (sorted by
        template; resources/read matches a URI against them in this order)."""
        return [entry.template for entry in self._templates.values()]

    def prompts(self) -> list[Prompt]:
        """The registered prompts as prompts/list gives them (sorted by name)."""
        return [entry.prompt for entry in self._prompts.values()]

    @staticmethod
    def tool_schema(arguments_type: type[msgspec.Struct]) -> dict[str, Any]:
        """The inputSchema for a Struct-typed tool (``"type": "object"`` at the top)."""
        return struct_schema(arguments_type)

    def capabilities(self) -> dict[str, Any]:
        """The ServerCapabilities object advertised by server/discover."""
        caps: dict[str, Any] = {}
        def changed(kind: str) -> dict[str, Any]:
            return {"listChanged": True} if kind in self._list_changed else {}

        if self._enabled["tools"]:
            caps["tools"] = changed("tools")
        if self._enabled["resources"]:
            caps["resources"] = {**changed("resources"), **({"subscribe": True} if self._subscribe else {})}
        if self._enabled["prompts"]:
            caps["prompts"] = changed("prompts")
        if self._enabled["completions"]:
            caps["completions"] = {}
        if self._logging:
            caps["logging"] = {}
        return caps

    # -- input verbs ------------------------------------------------------------------------------
    def receive_http(self, request: HttpRequest, *, now: float) -> HttpAnswer:
        """Admit one Streamable HTTP request, in mcpwire's admission order (docs/server.md).

        Returns a complete reply to send, an :class:`HttpExchange` whose ``event`` the host
        answers, or an :class:`HttpListenStream` to keep open (write ``stream.start()`` first;
        a :class:`SessionStream` is an initialize-era session's GET stream). Initialize era
        also: :class:`InputArrived` (send its ``reply``; resume its exchange when ``ready``) and
        :class:`SessionClosed` (a DELETE) and :class:`Cancelled` (a posted
        ``notifications/cancelled``: send its ``reply``, cancel that request's work).
        """
        check_now(now)
        view = HeaderView(request.headers)
        method = request.method
        if method != "POST" and self._sessions_on and as_text("method", method) in ("GET", "DELETE"):
            if view.first(MCP_SESSION_ID) is not None:
                return self._session_request(request, view, now)
            if self._session_client(view):
                # Only a session has a GET stream and can be deleted (2025-11-25: Streamable
                # HTTP, Session Management: 400 without the header); the stateless generation's
                # GET and DELETE get its answer (405).
                refused = admit_target(request, self.http, view)
                return refused or _refuse(400, "Bad Request: Mcp-Session-Id header is required")
        body = admit(request, self.http, view)
        if not isinstance(body, bytes):
            return body
        if body[:1] == b"[" and self._batches_allowed(view):
            return self._batch_http(request, body, now)
        try:
            message = decode_message(body)
        except UnansweredMessage:
            return empty_reply(202)  # a malformed notification or response: still no answer
        except RemoteProtocolError as exc:
            return error_reply(exc)
        if self._era:
            routed = self._route_era(message, view, now)
            if routed is not None:
                return routed
        if isinstance(message, (Response, Notification)):
            # Never answered (JSON-RPC 2.0: no reply to a notification; a response answers
            # nothing we asked): the header checks are for requests only.
            return empty_reply(202)
        try:
            admitted = self._admit(message, view, now)
        except ProtocolError as exc:
            return error_reply(exc, message.id)
        if isinstance(admitted, bytes):
            return json_reply(200, admitted)
        if isinstance(admitted, _Listen):
            return HttpListenStream(self._context, admitted.request_id, admitted.meta, admitted.honoured)
        event, params = admitted
        return HttpExchange(self._context, event, params, now)

    # -- initialize era over HTTP -------------------------------------------------------------------
    def _batches_allowed(self, view: HeaderView) -> bool:
        """Batches are a 2025-03-26 feature: a request on a session of that revision (its header,
        or none, which means 2025-03-26). Anywhere else an array is refused like any non-object."""
        if not BATCH_REVISIONS & set(self._era) or not self._sessions_on or view.first(MCP_SESSION_ID) is None:
            return False
        try:
            version = protocol_version_header(view)
        except HeaderMismatch:
            return False
        return (version or _OLDEST) in BATCH_REVISIONS

    def _batch_http(self, request: HttpRequest, body: bytes, now: float) -> HttpAnswer:
        session_ids = HeaderView(request.headers).all(MCP_SESSION_ID)
        if len(session_ids) > 1:
            return _refuse(400, "Bad Request: repeated Mcp-Session-Id header", None)
        if self.sessions.get(session_ids[0].decode("latin-1"), now) is None:
            return _refuse(404, "Session not found", None)  # the batch as a whole: nothing to answer on
        try:
            raws = msgspec.json.decode(body, type=list[msgspec.Raw])
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            return error_reply(RemoteProtocolError("Parse error", code=ErrorCode.PARSE_ERROR))
        if not raws:  # JSON-RPC 2.0: an empty array is one Invalid Request
            return error_reply(RemoteProtocolError("Invalid Request: empty batch", code=ErrorCode.INVALID_REQUEST))
        if len(raws) > MAX_BATCH:
            return error_reply(RemoteProtocolError(f"Invalid Request: more than {MAX_BATCH} messages in a batch",
                                                   code=ErrorCode.INVALID_REQUEST))
        answers: list[Any] = []
        has_requests = False
        for raw in raws:
            item = bytes(raw)
            if item[:1] == b"[":  # a batch in a batch is not a message
                answers.append(error_reply(RemoteProtocolError("Invalid Request", code=ErrorCode.INVALID_REQUEST)))
                has_requests = True
                continue
            answer = self.receive_http(HttpRequest(method=request.method, target=request.target,
                                                   headers=request.headers, body=item), now=now)
            answers.append(answer)
            if isinstance(answer, HttpExchange) or (isinstance(answer, tuple) and answer[0].status != 202):
                has_requests = True
        return HttpBatch(answers=answers, has_requests=has_requests, no_requests=empty_reply(202))

    @property
    def _sessions_on(self) -> bool:
        return bool(self._era) and self._session_ids is not None

    def _route_era(self, message: Request | Notification | Response, view: HeaderView, now: float) -> HttpAnswer | None:
        """Which dialect a POST speaks: ``None`` for the stateless path, else the answer.

        A 2026-07-28 ``MCP-Protocol-Version`` header, or a request whose ``_meta`` names a
        protocol version, is stateless; so is a request with neither header nor session.
        An ``initialize`` opens a session; a request with ``Mcp-Session-Id`` belongs to it.
        """
        try:
            header_version = protocol_version_header(view)
        except HeaderMismatch:
            return None  # the stateless admission answers it (-32020)
        session_ids = view.all(MCP_SESSION_ID)
        if header_version is not None and header_version not in INITIALIZE_ERA:
            if session_ids and self._sessions_on and header_version not in self._stateless_versions:
                # A session's request naming a revision nobody speaks (2025-11-25: Streamable
                # HTTP, Protocol Version Header: 400 for an unsupported version).
                return _refuse(400, f"Bad Request: unsupported protocol version {header_version}",
                               getattr(message, "id", None))
            return None
        if isinstance(message, Request) and _names_version(message):
            return None
        if not session_ids:
            if isinstance(message, Request) and message.method == "initialize":
                return self._initialize_http(message, now)
            if header_version is None and self.serves_stateless:
                return None  # the stateless generation's request (its admission answers)
            if isinstance(message, Request) and self._sessions_on:
                # Before initialize (2025-11-25: Session Management: 400 without the header).
                return _refuse(400, "Bad Request: Mcp-Session-Id header is required", message.id)
            if isinstance(message, Request):
                # Stateless legacy mode (no session ids): each request stands alone; without
                # the header it is 2025-03-26 (Protocol Version Header).
                revision = header_version or _OLDEST
                if revision not in self._era:
                    return _refuse(400, f"Bad Request: unsupported protocol version {revision}", message.id)
                session = Session(None, revision, {}, None, now)
                return self._session_http(message, session, revision, now)
            return empty_reply(202)
        if not self._sessions_on:
            return None
        if len(session_ids) > 1:
            return _refuse(400, "Bad Request: repeated Mcp-Session-Id header", getattr(message, "id", None))
        found = self.sessions.get(session_ids[0].decode("latin-1"), now)
        if found is None:
            return _refuse(404, "Session not found", getattr(message, "id", None))
        session = found
        revision = header_version or _OLDEST
        if revision not in self._era:
            return _refuse(400, f"Bad Request: unsupported protocol version {revision}", getattr(message, "id", None))
        if isinstance(message, Notification):
            if message.method == "notifications/initialized":
                session.move("initialized")
            cancelled = Cancelled.parse(message)
            if cancelled is not None:  # the host cancels that request's work, if it still runs
                return msgspec.structs.replace(cancelled, session_id=str(session.id), reply=empty_reply(202))
            return empty_reply(202)
        if isinstance(message, Response):
            arrived = self._answer(session, message)
            reply = empty_reply(202)
            return reply if arrived is None else InputArrived(exchange=arrived[0], ready=arrived[1], reply=reply)
        return self._session_http(message, session, revision, now)

    def _session_client(self, view: HeaderView) -> bool:
        """Whether a request without a session id comes from the initialize era: it names such a
        revision in ``MCP-Protocol-Version``, or names none to a server of that era only."""
        try:
            version = protocol_version_header(view)
        except HeaderMismatch:
            return False
        return version in INITIALIZE_ERA if version is not None else not self.serves_stateless

    def _initialize_http(self, message: Request, now: float) -> HttpAnswer:
        try:
            session, result = self._initialize(message, now, self._session_ids)
        except ProtocolError as exc:
            return error_reply(exc, message.id)
        extra = ((MCP_SESSION_ID, session.id.encode()),) if session.id is not None else ()
        return json_reply(200, encode_result(message.id, result), extra)

    def _session_http(self, message: Request, session: Session, revision: str, now: float) -> HttpAnswer:
        try:
            admitted = self._admit_session(message, session, revision, now)
        except ProtocolError as exc:
            # After admission, errors travel with HTTP 200 (those clients read other statuses as
            # a failed transport, and 404 as a lost session).
            return json_reply(200, encode_error(message.id, exc))
        if isinstance(admitted, bytes):
            return json_reply(200, admitted)
        assert not isinstance(admitted, _Listen)  # subscriptions/listen is not a session method
        event, params = admitted
        return HttpExchange(self._context, event, params, now, session=session, revision=revision)

    def _session_request(self, request: HttpRequest, view: HeaderView, now: float) -> HttpAnswer:
        """GET (the session's standalone SSE stream) and DELETE (end the session)."""
        refused = admit_target(request, self.http, view)
        if refused is not None:
            return refused
        method = as_text("method", request.method)
        if method == "GET":
            accept = b",".join(view.all(b"accept")).lower()
            if b"text/event-stream" not in accept and b"*/*" not in accept and b"text/*" not in accept:
                return _refuse(406, "Not Acceptable: a GET stream needs Accept: text/event-stream")
        ids = view.all(MCP_SESSION_ID)
        if len(ids) > 1:
            return _refuse(400, "Bad Request: repeated Mcp-Session-Id header")
        session = self.sessions.get(ids[0].decode("latin-1"), now)
        if session is None:
            return _refuse(404, "Session not found")
        if method == "DELETE":
            self.sessions.remove(str(session.id))
            stream = session.stream
            waiting = session.close()
            for exchange in waiting:
                exchange.cancel()
            return SessionClosed(session_id=str(session.id), reply=empty_reply(200), waiting=waiting, stream=stream)
        last_event = view.first(LAST_EVENT_ID)
        if last_event is not None:
            replay = session.events.replay(last_event.decode("latin-1").strip())
            if replay is not None:
                return ResumedStream(self._context, session, *replay)
        if session.stream is not None:
            return _refuse(409, "Conflict: the session already has an open GET stream")
        if len(self._listeners) >= self.max_listen_streams:
            return error_reply(ProtocolError("Too many open streams", code=ErrorCode.INTERNAL_ERROR, http_status=503))
        return SessionStream(self._context, session, self._session_kinds())

    def _session_kinds(self) -> frozenset[str]:
        return frozenset(k for k in self._list_changed if self._enabled[k])

    def stdio_session_stream(self, session: Session) -> StdioSessionStream | None:
        """The stream of what an initialize-era stdio session hears unasked (list_changed,
        resources/updated), from ``notifications/initialized`` on; ``None`` when it has one."""
        if session.stream is not None:
            return None
        return StdioSessionStream(self._context, session, self._session_kinds())

    # -- initialize era: the handshake and the session's requests ------------------------------------
    def _initialize(self, message: Request, now: float, ids: Iterator[str] | None) -> tuple[Session, dict[str, Any]]:
        params = decode_params(METHODS["initialize"].decoder, message.params, message.id)
        requested, caps, info = check_initialize(params)
        check_client_capabilities(caps)
        revision = negotiate_version(requested, self._era)
        assert revision is not None  # only called when the era is enabled
        session = Session(None if ids is None else check_session_id(next(ids)), revision, caps, info, now,
                          self._event_store())
        if session.id is not None and not self.sessions.add(session, now):
            raise ProtocolError("Too many sessions: try again later", code=ErrorCode.INTERNAL_ERROR, http_status=503)
        result: dict[str, Any] = {
            "protocolVersion": revision,
            "capabilities": self._era_capabilities(),
            "serverInfo": self._info_builtins,
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return session, session_result(revision, "initialize", result)

    def _era_capabilities(self) -> dict[str, Any]:
        caps = self.capabilities()
        return caps

    def _admit_session(self, message: Request, session: Session, revision: str, now: float) -> _Admitted:
        method = message.method
        spec = METHODS.get(method)
        if spec is None or revision not in spec.revisions or not self._session_method_enabled(spec):
            raise RemoteProtocolError(f"Method not found: {method}", code=ErrorCode.METHOD_NOT_FOUND)
        params = decode_params(spec.decoder, message.params, message.id)
        meta = check_notification_meta(params.meta)
        if method == "initialize":
            raise RemoteProtocolError("The session is already initialized", code=ErrorCode.INVALID_REQUEST)
        if spec.input_required and (params.input_responses is not UNSET or params.request_state is not UNSET):
            raise bad_params("Tasks and multi-round-trip inputs are not supported in protocol revision " + revision)
        if spec.session:
            if method == "logging/setLevel":
                session.set_level(params.level)
            elif method == "resources/subscribe":
                session.subscribe(params.uri)
            elif method == "resources/unsubscribe":
                session.unsubscribe(params.uri)
            return encode_result(message.id, {})
        request_meta = RequestMeta(
            protocol_version=revision, client_capabilities=session.client_capabilities,
            client_info=session.client_info, progress_token=meta.get(PROGRESS_TOKEN_META_KEY), raw=meta,
        )
        if spec.paginated:
            return self._on_list_era(message, params, revision)
        tool = params.name if method == "tools/call" else None
        if type(tool) is str and tool in self._tools and not self._tools.listed_in(revision, tool):
            raise bad_params(f"Tool {tool} is not available in protocol revision {revision}")
        return self._handlers[method](message, params, request_meta, now)

    def _session_method_enabled(self, spec: MethodSpec) -> bool:
        if spec.name in ("resources/subscribe", "resources/unsubscribe"):
            return self._subscribe and self._enabled["resources"]
        if spec.name == "logging/setLevel":
            return self._logging
        return spec.capability is None or self._enabled[spec.capability]

    def _on_list_era(self, message: Request, params: Any, revision: str) -> bytes:
        """A list as ``revision`` has it: the revision's own list of items, shaped and encoded at
        registration (its cursors are bound to the revision, whose list may be shorter)."""
        method = message.method
        key = str(METHODS[method].list_key)
        listing = self._lists[method]
        cursor = check_cursor(params.cursor)
        version = f"{listing.version}@{revision}"
        offset = 0
        if cursor is not None:
            offset = self._cursor_codec.verify(cursor, method=method, catalog_version=version)
            if offset > listing.size(revision):
                raise ExpiredCursor("offset past end")
        items, nxt = listing.page(offset, self.page_size, revision)
        parts = [b'{"', key.encode(), b'":', bytes(items)]
        if nxt is not None:
            token = self._cursor_codec.issue(method=method, offset=nxt, catalog_version=version)
            parts.append(b',"nextCursor":"' + token.encode() + b'"')
        parts.append(b"}")
        return encode_result(message.id, Raw(b"".join(parts)))

    def _answer(self, session: Session, response: Response) -> tuple[Exchange[Any], bool] | None:
        """A client's response to a server-to-client request: to the exchange that asked."""
        if response.id is None:
            return None
        found = session.answered(response.id)
        if found is None:
            return None  # not a request the session waits on: dropped
        exchange = found[0]
        return exchange, exchange.receive_answer(response)

    def check_head(self, method: str | bytes, target: str | bytes, headers: HeaderInput) -> HttpReply | None:
        """Decide from the request head alone, before reading the body, whether to refuse it.

        Runs the transport admission steps the head decides, in :meth:`receive_http`'s order:
        method (405; for HEAD without a body), path (404), Origin and Host (403),
        ``Content-Length`` over ``http.max_body_bytes`` (413), Content-Type (415), Accept
        (406). Returns the complete reply to send (then close the connection, or drain the
        unread body), or ``None``: read the body, stopping past ``http.max_body_bytes`` when
        it has no Content-Length, and hand the request to :meth:`receive_http`, which checks
        it all again. Takes what :class:`HttpRequest` takes.
        """
        view = HeaderView(headers)
        head = HttpRequest(method=method, target=target, headers=())  # type: ignore[arg-type]
        if (
            self._sessions_on and as_text("method", method) in ("GET", "DELETE")
            and view.first(MCP_SESSION_ID) is not None
        ):
            return admit_target(head, self.http, view)  # the rest is receive_http's
        refusal = admit(head, self.http, view, content_length(view) or 0)
        return None if isinstance(refusal, bytes) else refusal

    def admit_line(
        self, message: Request, now: float, session: Session | None = None
    ) -> bytes | StdioExchange | StdioListenStream:
        """Admit one request read from stdio (used by :class:`~mcpwire.StdioConnection`);
        ``session`` is the connection's initialize-era session, if it opened one.

        Returns a complete response message (without the newline), an exchange or a stream.
        """
        check_now(now)
        try:
            if session is not None:
                admitted = self._admit_session(message, session, session.revision, now)
            else:
                admitted = self._admit(message, None, now)
        except ProtocolError as exc:
            return encode_error(message.id, exc)
        if isinstance(admitted, bytes):
            return admitted
        if isinstance(admitted, _Listen):
            return StdioListenStream(self._context, admitted.request_id, admitted.meta, admitted.honoured)
        event, params = admitted
        return StdioExchange(self._context, event, params, now, session=session, revision=session.revision if session else None)

    @property
    def open_streams(self) -> int:
        """How many listen streams are open: subscriptions/listen streams and initialize-era
        sessions' GET (or stdio) streams, at most ``max_listen_streams``."""
        return len(self._listeners)

    @property
    def serves_stateless(self) -> bool:
        """Whether a stateless (2026-07-28 or later) revision is enabled."""
        return bool(self._stateless_versions)

    def opens_session(self, message: Request) -> bool:
        """Whether ``message`` opens an initialize-era session: an ``initialize`` whose
        ``_meta`` names no protocol version, on a server that speaks an initialize-era revision."""
        return bool(self._era) and message.method == "initialize" and not _names_version(message)

    def uninitialized_line(self, message: Request) -> bytes | None:
        """Answer a request read from stdio before ``initialize``: ``ping`` is answered (Basic > Lifecycle: the one request a client may send
        first), anything else is -32600; ``None`` for a request whose ``_meta`` names a protocol
        version (a stateless client's: its admission answers, e.g. -32022 for a probe), or on a
        server that serves no initialize-era revision."""
        if not self._era or _names_version(message):
            return None
        if message.method == "ping":
            return encode_result(message.id, {})
        return encode_error(message.id, RemoteProtocolError("Server not initialized: send initialize first",
                                                            code=ErrorCode.INVALID_REQUEST))

    def initialize_line(self, message: Request, now: float) -> tuple[Session | None, bytes]:
        """Answer an ``initialize`` read from stdio: the connection's session (``None`` when
        refused) and the response message."""
        check_now(now)
        try:
            session, result = self._initialize(message, now, None)
        except ProtocolError as exc:
            return None, encode_error(message.id, exc)
        return session, encode_result(message.id, result)

    def receive_answer(self, session: Session, response: Response) -> InputArrived | None:
        """A client's response read from stdio: :class:`InputArrived` when it answers a
        server-to-client request the session waits on, else ``None`` (dropped)."""
        arrived = self._answer(session, response)
        return None if arrived is None else InputArrived(exchange=arrived[0], ready=arrived[1])

    # -- subscriptions ------------------------------------------------------------------------------
    def list_changed(self, kind: Literal["tools", "prompts", "resources"]) -> list[tuple[ListenStream[Any], Any]]:
        """Deliveries of a list_changed event to every open stream that asked for it (none
        when ``list_changed`` does not advertise ``kind``). An unknown ``kind`` raises
        :class:`LocalProtocolError`, whether or not a stream is open."""
        check_list_kind(kind)
        return [(s, s.list_changed(kind)) for s in self._listeners if s.wants(kind)]

    def resource_updated(self, uri: str) -> list[tuple[ListenStream[Any], Any]]:
        """Deliveries of a resources/updated event to every stream subscribed to ``uri`` (a
        str; anything else raises :class:`LocalProtocolError`, whether or not a stream is open)."""
        check_uri(uri)
        return [(s, s.resource_updated(uri)) for s in self._listeners if s.covers(uri)]

    def close_listeners(self) -> list[tuple[ListenStream[Any], Any]]:
        """End every open stream gracefully (at shutdown): the listen result for each."""
        return [(s, s.close()) for s in self._listeners if s.state is ListenState.OPEN]

    @property
    def open_listeners(self) -> int:
        return len(self._listeners)

    # -- admission ------------------------------------------------------------------------------
    def _check_headers(self, method: str, raw_params: Raw | Any, view: HeaderView, request_id: Any = None) -> Any:
        """The MCP-Protocol-Version and Mcp-* header checks (Streamable HTTP: protocol version header,
        server validation). Returns the decoded loose params."""
        spec = METHODS.get(method)
        params = decode_params(GENERIC_DECODER if spec is None else spec.decoder, raw_params, request_id)
        header_version = protocol_version_header(view)
        if header_version is None:
            raise HeaderMismatch("Missing or repeated required header: mcp-protocol-version")
        meta = params.meta
        body_version = meta.get(PROTOCOL_VERSION_META_KEY) if type(meta) is dict else None
        if type(body_version) is str:
            if body_version != header_version:
                raise HeaderMismatch(
                    "Protocol header does not match request metadata",
                    data={"header": header_version, "body": body_version},
                )
            if body_version not in self._stateless_versions:
                raise RemoteProtocolError(
                    "Unsupported protocol version",
                    code=ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
                    data={"requested": body_version, "supported": list(self._offered)},
                )
        mirrored: dict[str, Any] = {}
        annotations: tuple[Any, ...] = ()
        if spec is not None and spec.name_param is not None:
            mirrored[spec.name_param] = getattr(params, spec.name_param)
            if method == "tools/call" and type(params.name) is str:
                entry = self._tools.get(params.name)
                if entry is not None and entry.param_headers and is_object(params.arguments):
                    annotations = entry.param_headers
                    mirrored["arguments"] = decode_params(_dict_decoder, params.arguments, request_id)
        check_request_headers(view, method=method, params=mirrored, param_headers=annotations)
        return params

    def _method_enabled(self, spec: MethodSpec) -> bool:
        if spec.name == "subscriptions/listen":
            return bool(self._listen_kinds())
        return spec.capability is None or self._enabled[spec.capability]

    def _listen_kinds(self) -> set[str]:
        kinds = {k for k in self._list_changed if self._enabled[k]}
        if self._subscribe and self._enabled["resources"]:
            kinds.add("subscribe")
        return kinds

    def _admit(self, message: Request, view: HeaderView | None, now: float) -> _Admitted:
        method = message.method
        spec = METHODS.get(method)
        if view is not None:
            params = self._check_headers(method, message.params, view, message.id)
        else:
            params = decode_params(GENERIC_DECODER if spec is None else spec.decoder, message.params, message.id)
        if spec is None or PROTOCOL_VERSION not in spec.revisions or not self._method_enabled(spec):
            raise RemoteProtocolError(f"Method not found: {method}", code=ErrorCode.METHOD_NOT_FOUND)
        meta = parse_request_meta(params.meta, supported_versions=self._stateless_versions,
                                  offered_versions=self._offered)
        return self._handlers[method](message, params, meta, now)

    # -- answers the engine gives itself ------------------------------------------------------------
    def _policy(self, method: str) -> CachePolicy:
        return self._context.policy(method)

    def _on_discover(self, message: Request, params: Any, meta: RequestMeta, now: float) -> bytes:
        if self._discover is None:
            policy = self._policy("server/discover")
            result: dict[str, Any] = {
                "resultType": "complete",
                "supportedVersions": list(self._stateless_versions),
                "capabilities": self.capabilities(),
                "ttlMs": policy.ttl_ms,
                "cacheScope": policy.scope,
            }
            if self.instructions is not None:
                result["instructions"] = self.instructions
            result["_meta"] = {SERVER_INFO_META_KEY: self._info_builtins}
            self._discover = _encoder.encode(result)
        return encode_result(message.id, Raw(self._discover))

    def _on_list(self, message: Request, params: Any, meta: RequestMeta, now: float) -> bytes:
        method = message.method
        key = METHODS[method].list_key
        listing = self._lists[method]
        cursor = check_cursor(params.cursor)
        version = listing.version
        offset = 0
        if cursor is not None:
            offset = self._cursor_codec.verify(cursor, method=method, catalog_version=version)
            if offset > len(listing):
                raise ExpiredCursor("offset past end")
        items, nxt = listing.page(offset, self.page_size)
        policy = self._policy(method)
        parts = [b'{"resultType":"complete","', str(key).encode(), b'":', bytes(items)]
        parts.append(b',"ttlMs":%d,"cacheScope":"%s"' % (policy.ttl_ms, policy.scope.encode()))
        if nxt is not None:
            token = self._cursor_codec.issue(method=method, offset=nxt, catalog_version=version)
            parts.append(b',"nextCursor":"' + token.encode() + b'"')
        parts.append(b',"_meta":' + self._meta_json + b"}")
        return encode_result(message.id, Raw(b"".join(parts)))

    # -- requests for the host ------------------------------------------------------------------------
    def _mrtr(self, message: Request, params: Any, now: float) -> tuple[dict[str, Any] | None, Any]:
        responses = check_input_responses(params.input_responses)
        token = check_request_state(params.request_state)
        state: Any = None
        if token is not None:
            full = decode_params(_dict_decoder, message.params, message.id)
            kinds, state = open_round(self._state_codec.verify(
                token, method=message.method, scope=request_scope(message.method, full), now=now
            ))
            if responses:
                check_answers(responses, kinds)
        return responses, state

    def _on_call_tool(self, message: Request, params: Any, meta: RequestMeta, now: float) -> _Admitted:
        name = params.name
        if type(name) is not str or not name:
            raise bad_params("tools/call requires a non-empty string name")
        if params.arguments is not UNSET and not is_object(params.arguments):
            raise bad_params("tools/call arguments must be an object")
        entry = self._tools.get(name)
        if entry is None:
            raise bad_params(f"Unknown tool: {name}")
        responses, state = self._mrtr(message, params, now)
        try:
            if entry.arguments_decoder is not None:
                arguments: Any = decode_params(entry.arguments_decoder, params.arguments, message.id, typed=True)
            else:
                # A number Python cannot hold is the arguments' problem: a tool execution error.
                arguments = decode_params(_dict_decoder, params.arguments, message.id, typed=True)
                problem = entry.input_check(arguments) if entry.input_check is not None else None
                if problem is not None:
                    return self._tool_error(message.id, f"Invalid arguments for tool {name}: {problem}")
        except msgspec.ValidationError as exc:
            return self._tool_error(message.id, f"Invalid arguments for tool {name}: {exc}")
        event = ToolCall(
            request_id=message.id, name=name, arguments=arguments, tool=entry.tool, meta=meta,
            input_responses=responses, state=state,
        )
        return event, message.params

    def _tool_error(self, request_id: RequestId, text: str) -> bytes:
        # Schema violations are tool execution errors, not protocol errors (SEP-1303).
        result = CallToolResult(content=[TextContent(text=text)], is_error=True, meta={SERVER_INFO_META_KEY: self._info_builtins})
        return encode_result(request_id, result)

    def _on_read_resource(self, message: Request, params: Any, meta: RequestMeta, now: float) -> _Admitted:
        uri = params.uri
        if type(uri) is not str or not uri:
            raise bad_params("resources/read requires a non-empty string uri")
        if not is_absolute_uri(uri):
            raise bad_params("resources/read uri must be an absolute URI")
        responses, state = self._mrtr(message, params, now)
        matched = match_template(self._templates.values(), uri)
        event = ResourceRead(
            request_id=message.id, uri=uri, meta=meta, resource=self._resources.get(uri),
            template=matched[0].template if matched else None,
            variables=matched[1] if matched else {},
            input_responses=responses, state=state,
        )
        return event, message.params

    def _on_get_prompt(self, message: Request, params: Any, meta: RequestMeta, now: float) -> _Admitted:
        name = params.name
        if type(name) is not str or not name:
            raise bad_params("prompts/get requires a non-empty string name")
        arguments = check_string_map(params.arguments, "prompts/get arguments must map strings to strings")
        entry = self._prompts.get(name)
        if entry is None:
            raise bad_params(f"Unknown prompt: {name}")
        missing = [a for a in entry.required_arguments if a not in arguments]
        if missing:
            raise bad_params("Missing required prompt arguments", {"missing": missing})
        responses, state = self._mrtr(message, params, now)
        event = PromptGet(
            request_id=message.id, name=name, arguments=arguments, prompt=entry.prompt, meta=meta,
            input_responses=responses, state=state,
        )
        return event, message.params

    def _on_complete(self, message: Request, params: Any, meta: RequestMeta, now: float) -> _Admitted:
        ref = params.ref
        if type(ref) is not dict:
            raise bad_params("Completion requires a prompt or resource-template reference")
        ref_type = ref.get("type")
        if ref_type == "ref/prompt":
            ref_name = ref.get("name")
        elif ref_type == "ref/resource":
            ref_name = ref.get("uri")
        else:
            raise bad_params("Completion reference type is not supported")
        if type(ref_name) is not str:
            raise bad_params("Completion requires a prompt or resource-template reference")
        argument = params.argument
        if type(argument) is not dict or type(argument.get("name")) is not str or type(argument.get("value")) is not str:
            raise bad_params("Completion argument requires string name and value")
        context = params.context
        if context is not UNSET and type(context) is not dict:
            raise bad_params("Completion context must be an object")
        context_args = check_string_map(
            context.get("arguments", UNSET) if type(context) is dict else UNSET,
            "Completion context arguments must map strings to strings",
        )
        if ref_type == "ref/prompt" and ref_name not in self._prompts:
            raise bad_params(f"Unknown completion prompt: {ref_name}")
        if ref_type == "ref/resource" and ref_name not in self._templates:
            raise bad_params("Unknown completion resource template", {"uri": ref_name})
        event = CompletionRequest(
            request_id=message.id, ref_type=ref_type, ref_name=ref_name, argument_name=argument["name"],
            argument_value=argument["value"], context_arguments=context_args, meta=meta,
        )
        return event, message.params

    def _on_listen(self, message: Request, params: Any, meta: RequestMeta, now: float) -> _Admitted:
        requested = parse_filter(params.notifications)
        kinds = self._listen_kinds()
        honoured: dict[str, Any] = {}
        for flag, kind in LIST_FLAGS.items():
            if requested.get(flag) is True and kind in kinds:
                honoured[flag] = True
        if "subscribe" in kinds and requested.get("resourceSubscriptions"):
            honoured["resourceSubscriptions"] = list(requested["resourceSubscriptions"])
        if len(self._listeners) >= self.max_listen_streams:
            raise ProtocolError("Too many open subscription streams", code=ErrorCode.INTERNAL_ERROR, http_status=503)
        return _Listen(message.id, meta, honoured)


def _names_version(message: Request) -> bool:
    """Whether a request's ``_meta`` names a protocol version (a 2026-07-28 request)."""
    params = message.params
    if params is UNSET or PROTOCOL_VERSION_META_KEY.encode() not in bytes(params):
        return False
    try:
        decoded = _dict_decoder.decode(params)
    except (msgspec.DecodeError, RecursionError):
        return False
    meta = decoded.get("_meta")
    return type(meta) is dict and PROTOCOL_VERSION_META_KEY in meta
