"""The server engine: :class:`Server`, assembled from its halves, and the admission of every request.

Owns (specification: Basic; Basic > Transports > Streamable HTTP; Basic > Patterns > Multi
round-trip requests and Subscriptions): the order in which a request is checked after
transport admission — envelope, MCP-Protocol-Version header against the body
(-32020/-32022), Mcp-Method/Mcp-Name/Mcp-Param-* (-32020), method lookup (-32601, also for
methods whose capability is not advertised), ``_meta`` (in the order of ``wire/meta.py``),
params; the request head decided before the body (``check_head``) and the call fast path's
use of it; and handing everything that needs application logic to the host as an
:class:`~mcpwire.Exchange` carrying a typed event. :class:`Server` is assembled from halves:
what is declared and the answers given from it (``server/discover``, the four lists:
``catalog_engine.py``), the handler requests (``handler_requests.py``), the initialize era
(``initialize_era.py``), subscriptions (``listen_engine.py``) and tasks (``task_engine.py``).

The engine never calls host code and keeps no per-request state after it answers: every
request stands alone (the stateless revision). Time comes in as ``now``, keys as a Keyring.
"""

from __future__ import annotations

from math import inf as INF
from typing import Any, Callable, Collection, Final, Iterator, Mapping

import msgspec
from msgspec import UNSET, Raw

from ..types import Implementation, Resource
from ..wire.envelope import (
    Request, UnansweredMessage, decode_message, decode_request_as, encode_error,
)
from ..wire.capabilities import TASKS_EXTENSION, declares_extension, extension_required
from ..wire.errors import ErrorCode, LocalProtocolError, MissingCapability, ProtocolError, RemoteProtocolError
from ..wire.headers import (
    MCP_SESSION_ID, HeaderMismatch, HeaderView, check_request_headers, index_headers, protocol_version_header,
)
from ..wire.meta import PROTOCOL_VERSION_META_KEY, SERVER_INFO_META_KEY, parse_request_meta
from ..wire.methods import CACHEABLE_METHODS, GENERIC_DECODER, METHODS, MethodSpec
from ..wire.params import decode_params, is_object
from ..wire.versions import INITIALIZE_ERA, PROTOCOL_VERSION, REVISIONS
from .catalog import Listing, PromptEntry, TemplateEntry, ToolEntry, ValidatorFactory, resource_key
from .context import CachePolicy, ServerContext
from .initialize_era_results import listing_shapes
from .events import TaskChanged, ToolCall
from .exchange import HttpExchange, StdioExchange, http_exchange
from .http import (
    HeaderInput, HttpPolicy, HttpReply, HttpRequest, admit, admit_body, admit_target, answer_reply, as_text,
    content_length, empty_reply, error_reply,
)
from .accept import Accepts
from .listen import (
    HttpListenStream, StdioListenStream,
)
from .session import EventStore, MemoryEventStore, MemorySessionStore, Session, SessionStore
from .listeners import Listeners
from .tasks import Tasks
from .tokens import CursorCodec, Keyring, RequestStateCodec, check_now
from .admission import Admitted, Handler, HttpAnswer, Listen, refuse
from .initialize_era import InitializeEraEngine
from .handler_requests import HandlerRequests, may_be_task
from .call_fast_path import CallFastPath, Key, FastCall
from .listen_engine import ListenEngine
from .task_engine import TasksEngine
from .catalog_engine import CatalogEngine

__all__ = ["Server"]

_encoder: Final = msgspec.json.Encoder()
_dict_decoder: Final = msgspec.json.Decoder(dict[str, Any])
_UNREAD: Final = Accepts.BOTH  # what check_head keeps for a head it did not admit: never read


def _listed(versions: tuple[str, ...]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    return versions[0] if len(versions) == 1 else f"{', '.join(versions[:-1])} or {versions[-1]}"


class Server(CatalogEngine, HandlerRequests, InitializeEraEngine, ListenEngine, TasksEngine):
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
    :meth:`list_changed` when such a list changes. ``call_memo``: how many heads of admitted
    ``tools/call`` requests to remember, so that a call with the same head goes straight to
    its body (``mcpwire/server/call_fast_path.py``; 0 remembers none).
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
        tasks: Tasks | None = None,
        call_memo: int = 256,
    ) -> None:
        if page_size < 1:
            raise LocalProtocolError("page_size must be at least 1")
        if type(call_memo) is not int or call_memo < 0:
            raise LocalProtocolError("call_memo must be a non-negative int")
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
        # check_head's index of a tuple of headers it passed, for receive_http to reuse when the
        # same (immutable) tuple comes back: one entry, matched by identity.
        # (headers, view, index, method, target, lane key, lane, accepts): method and target (and
        # what the client takes; read only then) when it admitted the head; no view when it passed
        # from the lanes' memo (then with its index and the lane it found).
        self._head_view: tuple[
            Any, HeaderView | None, dict[bytes, bytes] | None, Any, Any, Key | None, FastCall | None, Accepts
        ] | None = None
        self._fast_calls = CallFastPath(call_memo)
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
        self._request_state_ttl = request_state_ttl
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
        self.tasks = tasks
        """The tasks extension's tasks (``None``: the server serves no tasks)."""
        self._context = ServerContext(
            info=self._info_builtins, state_codec=self._state_codec, cache=self._cache, tools=self._tools,
            listeners=self._listeners, tasks=tasks,
        )
        self._discover: bytes | None = None
        self._handlers: dict[str, Handler] = {
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
            "tasks/get": self._on_task_get,
            "tasks/update": self._on_task_update,
            "tasks/cancel": self._on_task_cancel,
        }
        # The initialize-era rows of SESSION_METHODS (2025-11-25's tasks).
        self._session_handlers: dict[str, Handler] = {
            "tasks/get": self._on_session_task_get,
            "tasks/result": self._on_session_task_result,
            "tasks/list": self._on_session_task_list,
            "tasks/cancel": self._on_session_task_cancel,
        }
        self._lists: dict[str, Listing[Any]] = {
            "tools/list": self._tools,
            "resources/list": self._resources,
            "resources/templates/list": self._templates,
            "prompts/list": self._prompts,
        }
        self._handed: frozenset[str] = frozenset()  # the lists the host answers (hand_over_lists)

    def set_keyring(self, keyring: Keyring) -> None:
        """Sign ``requestState`` and cursors with ``keyring`` from now on, and verify with it: for
        a host that loads the keys shared by its processes after the server was built (``mcpwire
        serve --keys``). A token signed before is accepted only if its key is in ``keyring``."""
        self._state_codec = RequestStateCodec(keyring, ttl_seconds=self._request_state_ttl)
        self._cursor_codec = CursorCodec(keyring)
        self._context.state_codec = self._state_codec

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
        if type(now) is not float or not -INF < now < INF:  # check_now's common case written out
            check_now(now)
        headers = request.headers
        cached = self._head_view
        head_admitted = False
        method = request.method
        view: HeaderView | None = None
        index = None
        key = None
        lane: FastCall | None = None
        if cached is not None and cached[0] is headers:
            view, index = cached[1], cached[2]  # check_head indexed this very tuple
            self._head_view = None
            # ... and admitted its head, for this method and target: only the body is left to check
            head_admitted = cached[3] is not None and cached[3] == method and cached[4] == request.target
            if head_admitted:
                # and the lane it found for the head, if any, and what the client takes
                key, lane, accepts = cached[5], cached[6], cached[7]
        else:
            index = index_headers(headers)
            if index is not None and b"transfer-encoding" not in index:  # that one goes the full way (framing)
                key = self._fast_calls.key(method, request.target, index)
                if key is not None:
                    lane = self._fast_calls.find(key)
        if lane is not None:
            exchange = self._by_fast_path(lane, request, now)
            if exchange is not None:
                return exchange
        if view is None:
            view = HeaderView(headers, index)
        if method != "POST" and self._sessions_on and as_text("method", method) in ("GET", "DELETE"):
            if view.first(MCP_SESSION_ID) is not None:
                try:
                    return self._session_request(request, view, now)
                except LocalProtocolError:
                    raise  # the host misused the API: its error, not an answer
                except ProtocolError as exc:  # the session store failed (a shared store unreachable)
                    return error_reply(exc)
            if self._session_client(view):
                # Only a session has a GET stream and can be deleted (2025-11-25: Streamable
                # HTTP, Session Management: 400 without the header); the stateless generation's
                # GET and DELETE get its answer (405).
                refused = admit_target(request, self.http, view)
                return refused or refuse(400, "Bad Request: Mcp-Session-Id header is required")
        if not head_admitted:  # else check_head admitted it: accepts is what it decided
            admitted_head = admit(request, self.http, view)
            if not isinstance(admitted_head, Accepts):
                return admitted_head
            accepts = admitted_head
        body = admit_body(request, self.http)
        if type(body) is not bytes:
            return body  # type: ignore[return-value]
        if body[:1] == b"[" and self._batches_allowed(view):
            return self._batch_http(request, body, now, accepts)
        try:
            message = decode_message(body)
        except UnansweredMessage:
            return empty_reply(202)  # a malformed notification or response: still no answer
        except RemoteProtocolError as exc:
            return error_reply(exc)
        if self._era:
            try:
                routed = self._route_era(message, view, now, request.principal, accepts)
            except LocalProtocolError:
                raise  # the host misused the API: its error, not an answer
            except ProtocolError as exc:  # the session store failed: answered with the request's id
                return error_reply(exc, getattr(message, "id", None))
            if routed is not None:
                return routed
        if type(message) is not Request:
            # Never answered (JSON-RPC 2.0: no reply to a notification; a response answers
            # nothing we asked): the header checks are for requests only.
            return empty_reply(202)
        try:
            admitted = self._admit(message, view, now, request.principal)
        except ProtocolError as exc:
            return error_reply(exc, message.id)
        if type(admitted) is tuple:  # the host answers it
            event = admitted[0]
            if key is not None and type(event) is ToolCall and event.input_responses is None and event.state is None:
                entry = self._tools.get(event.name)
                if entry is not None:
                    self._fast_calls.learn(key, entry, event.meta.protocol_version, self.http, accepts)
            return http_exchange(accepts)(self._context, event, admitted[1], now, principal=request.principal)
        if isinstance(admitted, bytes):
            return answer_reply(200, admitted, accepts)
        if isinstance(admitted, TaskChanged):
            return msgspec.structs.replace(admitted, reply=answer_reply(200, admitted.reply, accepts))
        assert isinstance(admitted, Listen)
        if not accepts.streams:  # the one answer of 2026-07-28 that can only be an event stream
            return refuse(406, "Not Acceptable: subscriptions/listen answers with an event stream, and Accept does"
                          " not list text/event-stream", message.id)
        return HttpListenStream(self._context, admitted.request_id, admitted.meta, admitted.honoured)

    def _by_fast_path(self, lane: FastCall, request: HttpRequest, now: float) -> HttpExchange | None:
        """A call whose head was admitted before for this tool (``call_fast_path.py``), admitted on its
        body; ``None`` when the body is not exactly such a call: it then goes the full way."""
        entry = lane.entry
        if lane.policy is not self.http or self._tools.get(entry.tool.name) is not entry:
            return None
        body = admit_body(request, self.http)
        if type(body) is not bytes:
            return None
        message = decode_request_as(lane.decoder, body)  # a tools/call, by the lane's decoder
        if message is None:
            return None
        params = message.params
        try:
            # A first round (the task member is the initialize era's, ignored here).
            if params.name != entry.tool.name or params.input_responses is not UNSET or params.request_state is not UNSET:
                return None
            meta = parse_request_meta(params.meta, supported_versions=self._stateless_versions,
                                      offered_versions=self._offered)
            if meta.protocol_version != lane.version:
                return None
            # may_be_task is False for a tool without tasks: the common case skips the call.
            task_allowed = entry.task_support != "forbidden" and may_be_task(entry, meta)
        except ProtocolError:
            return None
        event = ToolCall(
            request_id=message.id, name=entry.tool.name, arguments=params.arguments, tool=entry.tool, meta=meta,
            task_allowed=task_allowed, owner=request.principal if task_allowed else None,
        )
        exchange = lane.exchange(self._context, event, body, now)
        if request.principal is not None:  # an input_required answer binds its requestState to it
            exchange.principal = request.principal
        return exchange

    def check_head(self, method: str | bytes, target: str | bytes, headers: HeaderInput) -> HttpReply | None:
        """Decide from the request head alone, before reading the body, whether to refuse it.

        Runs the transport admission steps the head decides, in :meth:`receive_http`'s order:
        method (405; for HEAD without a body), framing (400: ``Transfer-Encoding`` with
        ``Content-Length``, answered with ``connection: close``), path (404), Origin and Host (403),
        ``Content-Length`` over ``http.max_body_bytes`` (413), Content-Type (415), Accept
        (406). Returns the complete reply to send (then close the connection, or drain the
        unread body), or ``None``: read the body, stopping past ``http.max_body_bytes`` when
        it has no Content-Length, and hand the request to :meth:`receive_http`, which checks
        it all again. Takes what :class:`HttpRequest` takes. When ``headers`` is a ``tuple``
        and the same tuple object is the next :class:`HttpRequest`'s ``headers``,
        :meth:`receive_http` reuses the index of the headers built here instead of building it again.
        A head whose call was admitted before (``server/lanes.py``) passes from the memo, its
        ``Content-Length`` checked.
        """
        kept = type(headers) is tuple
        index = index_headers(headers)
        key = None if index is None or b"transfer-encoding" in index else self._fast_calls.key(method, target, index)
        if key is not None and index is not None:
            lane = self._fast_calls.find(key)
            size = index.get(b"content-length")
            if lane is not None and lane.policy is self.http and (
                size is None or (len(size) < lane.digits and size.isdigit())
                or (content_length(size) or 0) <= self.http.max_body_bytes
            ):
                # A head whose call was admitted before (call_fast_path.py): every step but the size passes again.
                self._head_view = (headers, None, index, method, target, key, lane, lane.accepts) if kept else None
                return None
        view = HeaderView(headers, index)
        head = HttpRequest(method=method, target=target, headers=())  # type: ignore[arg-type]
        if (
            method != "POST" and self._sessions_on and as_text("method", method) in ("GET", "DELETE")
            and view.first(MCP_SESSION_ID) is not None
        ):
            self._head_view = (headers, view, None, None, None, None, None, _UNREAD) if kept else None
            return admit_target(head, self.http, view)  # the rest is receive_http's
        length = None if view.repeated(b"content-length") else content_length(view.first(b"content-length"))
        admitted = admit(head, self.http, view, length or 0)
        if isinstance(admitted, Accepts):
            self._head_view = (headers, view, None, method, target, key, None, admitted) if kept else None
            return None
        self._head_view = (headers, view, None, None, None, None, None, _UNREAD) if kept else None
        return admitted

    def admit_line(
        self, message: Request, now: float, session: Session | None = None
    ) -> bytes | StdioExchange | StdioListenStream | TaskChanged:
        """Admit one request read from stdio (used by :class:`~mcpwire.StdioConnection`);
        ``session`` is the connection's initialize-era session, if it opened one.

        Returns a complete response message (without the newline), an exchange, a stream, or a
        :class:`TaskChanged` (its ``reply`` is the response message).
        """
        check_now(now)
        try:
            if session is not None:
                admitted = self._admit_session(message, session, session.revision, now)
            else:
                admitted = self._admit(message, None, now)
        except ProtocolError as exc:
            return encode_error(message.id, exc)
        if isinstance(admitted, (bytes, TaskChanged)):
            return admitted
        if isinstance(admitted, Listen):
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

    # -- admission ------------------------------------------------------------------------------
    def _check_headers(
        self, method: str, raw_params: Raw | Any, view: HeaderView, request_id: Any = None, spec: MethodSpec | None = None,
    ) -> Any:
        """The MCP-Protocol-Version and Mcp-* header checks (Streamable HTTP: protocol version header,
        server validation). Returns the decoded loose params. ``spec`` is ``METHODS.get(method)``."""
        params = decode_params(GENERIC_DECODER if spec is None else spec.decoder, raw_params, request_id)
        header_version = protocol_version_header(view)
        if header_version is None:
            raise self._missing_version()
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

    def _missing_version(self) -> HeaderMismatch:
        """-32020 for a request without ``MCP-Protocol-Version`` (Streamable HTTP, protocol version
        header): which header to send with which value, and the versions this server takes (also
        in ``data.supported``, as -32022 lists them)."""
        stateless, era = self._stateless_versions, _listed(self._era) if self._era else ""
        if stateless:
            value = stateless[0] if len(stateless) == 1 else f"one of {_listed(stateless)}"
            message = (f"Missing required header: send MCP-Protocol-Version: {value}, equal to the request's _meta"
                       f" {PROTOCOL_VERSION_META_KEY}")
            if era:
                message += f" (a client of {era} sends initialize first, to open a session)"
        else:
            message = (f"Missing required header: this server speaks {era}: send initialize to open a session,"
                       " then MCP-Protocol-Version: the version it agreed")
        return HeaderMismatch(message, data={"supported": list(self._offered)})

    def _method_enabled(self, spec: MethodSpec) -> bool:
        if spec.name == "subscriptions/listen":
            return bool(self._listen_kinds())
        if spec.extension is not None:
            return spec.extension == TASKS_EXTENSION and self.tasks is not None
        return spec.capability is None or self._enabled[spec.capability]

    def _admit(self, message: Request, view: HeaderView | None, now: float, principal: str | None = None) -> Admitted:
        method = message.method
        spec = METHODS.get(method)
        if view is not None:
            params = self._check_headers(method, message.params, view, message.id, spec)
        else:
            params = decode_params(GENERIC_DECODER if spec is None else spec.decoder, message.params, message.id)
        if spec is None or PROTOCOL_VERSION not in spec.revisions or not self._method_enabled(spec):
            raise RemoteProtocolError(f"Method not found: {method}", code=ErrorCode.METHOD_NOT_FOUND)
        meta = parse_request_meta(params.meta, supported_versions=self._stateless_versions,
                                  offered_versions=self._offered)
        if spec.extension is not None and not declares_extension(meta.client_capabilities, spec.extension):
            raise MissingCapability(extension_required(spec.extension))
        return self._handlers[method](message, params, meta, now, principal)
