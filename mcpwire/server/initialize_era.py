"""The initialize-era half of the server engine: sessions over HTTP and stdio.

Owns (specification 2025-11-25, 2025-06-18, 2025-03-26: Basic > Lifecycle; Basic > Transports >
Streamable HTTP, Session Management, Multiple Connections, Resumability; 2025-03-26: JSON-RPC
batching): routing a message to its session (Mcp-Session-Id, 400 without it, 404 for a session
the store does not hold or another principal's, 400 for an unsupported MCP-Protocol-Version),
``initialize`` and the session's admission (the same method table and handlers as the stateless
half, the methods of that revision only, results shaped by initialize_era_results.py), the
session's GET stream (409 for a second one, in this process or any other that shares the
session store: ``SessionStore.claim_stream``; every event with an id; ``Last-Event-ID`` replay
from its EventStore, of a request's stream or of the GET stream, which then goes on),
DELETE, 2025-03-26 batches, and the stdio entry points :class:`~mcpwire.StdioConnection` calls.
:class:`~mcpwire.Server` inherits it; the annotations below name what it uses of the engine.

A session is bound to the principal that initialized it (``HttpRequest.principal``, MCP
security best practices: session hijacking): a POST, GET (with or without ``Last-Event-ID``)
or DELETE naming it from any other principal gets exactly the unknown session's answer (404,
-32600 "Session not found"), so nothing tells the session exists. A session initialized
without a principal is bound to its id only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Final, Iterator

import msgspec
from msgspec import UNSET, Raw

from ..wire.envelope import Notification, Request, Response, UnansweredMessage, decode_message, encode_error, encode_result
from ..wire.errors import ErrorCode, ProtocolError, RemoteProtocolError
from ..wire.headers import LAST_EVENT_ID, MCP_SESSION_ID, HeaderMismatch, HeaderView, protocol_version_header
from ..wire.meta import PROGRESS_TOKEN_META_KEY, RequestMeta, check_client_capabilities, check_notification_meta
from ..wire.methods import METHODS, MethodSpec, method_row
from ..wire.params import bad_params, check_cursor, decode_params
from ..wire.versions import INITIALIZE_ERA
from .catalog import Listing, ToolEntry
from .context import ServerContext
from .initialize_era_results import session_result
from .events import Cancelled, HttpBatch, InputArrived, SessionClosed, TaskChanged
from .exchange import Exchange, HttpExchange, http_exchange
from .accept import Accepts, read_accept
from .http import HttpPolicy, HttpRequest, admit_target, answer_reply, as_text, empty_reply, error_reply
from .listen import ResumedStream, SessionStream, StdioSessionStream
from .session import (
    BATCH_REVISIONS, MAX_BATCH, EventStore, Session, SessionStore, check_initialize, check_session_id,
    is_standalone, negotiate_version, owned_by,
)
from .admission import Admitted, Handler, HttpAnswer, Listen, names_version, refuse
from .listeners import Listeners
from .tasks import Tasks
from .task_engine import TASK_REVISIONS
from .tokens import CursorCodec, ExpiredCursor, check_now

__all__ = ["InitializeEraEngine"]

OLDEST: Final = INITIALIZE_ERA[-1]


class InitializeEraEngine:
    """The initialize-era methods of :class:`~mcpwire.Server` (see the module docstring)."""

    # What this half uses of the engine, set by Server.__init__.
    http: HttpPolicy
    instructions: str | None
    page_size: int
    max_listen_streams: int
    sessions: SessionStore
    _era: tuple[str, ...]
    _stateless_versions: tuple[str, ...]
    _session_ids: Iterator[str] | None
    _event_store: Callable[[], EventStore]
    _enabled: dict[str, bool]
    _logging: bool
    _list_changed: frozenset[str]
    _subscribe: bool
    _info_builtins: Any
    _context: ServerContext
    _cursor_codec: CursorCodec
    _listeners: Listeners
    _tools: Listing[ToolEntry]
    _lists: dict[str, Listing[Any]]
    _handlers: dict[str, Handler]
    _session_handlers: dict[str, Handler]
    _handed: frozenset[str]
    tasks: Tasks | None

    if TYPE_CHECKING:
        def receive_http(self, request: HttpRequest, *, now: float) -> HttpAnswer: ...
        def _list_request(self, message: Request, params: Any, meta: RequestMeta, page: bytes) -> Any: ...
        def _policy(self, method: str) -> Any: ...
        def capabilities(self) -> dict[str, Any]: ...
        @property
        def serves_stateless(self) -> bool: ...

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
        return (version or OLDEST) in BATCH_REVISIONS

    def _batch_http(self, request: HttpRequest, body: bytes, now: float, accepts: Accepts) -> HttpAnswer:
        session_ids = HeaderView(request.headers).all(MCP_SESSION_ID)
        if len(session_ids) > 1:
            return refuse(400, "Bad Request: repeated Mcp-Session-Id header", None)
        if self._find_session(session_ids[0], now, request.principal) is None:
            return refuse(404, "Session not found", None)  # the batch as a whole: nothing to answer on
        try:
            raws = msgspec.json.decode(body, type=list[msgspec.Raw])
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            return error_reply(RemoteProtocolError("Parse error", code=ErrorCode.PARSE_ERROR))
        if not raws:  # JSON-RPC 2.0: an empty array is one Invalid Request
            return error_reply(RemoteProtocolError("Invalid Request: empty batch", code=ErrorCode.INVALID_REQUEST))
        if len(raws) > MAX_BATCH:
            return error_reply(RemoteProtocolError(f"Invalid Request: more than {MAX_BATCH} messages in a batch",
                                                   code=ErrorCode.INVALID_REQUEST))
        if not accepts.streams and any(_answered(bytes(raw)) for raw in raws):
            return refuse(406, "Not Acceptable: a batch holding requests is answered on one event stream, and Accept"
                          " does not list text/event-stream")
        answers: list[Any] = []
        has_requests = False
        for raw in raws:
            item = bytes(raw)
            if item[:1] == b"[":  # a batch in a batch is not a message
                answers.append(error_reply(RemoteProtocolError("Invalid Request", code=ErrorCode.INVALID_REQUEST)))
                has_requests = True
                continue
            answer = self.receive_http(HttpRequest(method=request.method, target=request.target,
                                                   headers=request.headers, body=item,
                                                   principal=request.principal), now=now)
            answers.append(answer)
            if isinstance(answer, HttpExchange) or (isinstance(answer, tuple) and answer[0].status != 202):
                has_requests = True
        return HttpBatch(answers=answers, has_requests=has_requests, no_requests=empty_reply(202))

    def _era_version_refused(self, header_version: str | None, request_id: Any) -> HttpAnswer:
        """400 for a revision this server does not serve (2025-11-25: Streamable HTTP, Protocol
        Version Header), naming the header, the version taken and the versions to send."""
        taken = (f"unsupported protocol version {header_version} in MCP-Protocol-Version" if header_version
                 else f"no MCP-Protocol-Version header, which means {OLDEST}, a revision this server does not serve")
        send = self._era[0] if len(self._era) == 1 else f"one of {', '.join(self._era)}"
        return refuse(400, f"Bad Request: {taken}; send MCP-Protocol-Version: {send}", request_id)

    @property
    def _sessions_on(self) -> bool:
        return bool(self._era) and self._session_ids is not None

    def _find_session(self, session_id: bytes, now: float, principal: str | None) -> Session | None:
        """The live session ``session_id`` names, for a request of ``principal``: ``None`` when
        the store does not hold it (unknown, ended, expired) and when it is another
        principal's, which the caller answers alike (404)."""
        session = self.sessions.get(session_id.decode("latin-1"), now)
        if session is None or not owned_by(session, principal):
            return None
        return session

    def _route_era(
        self, message: Request | Notification | Response, view: HeaderView, now: float, principal: str | None = None,
        accepts: Accepts = Accepts.BOTH,
    ) -> HttpAnswer | None:
        """Which dialect a POST speaks: ``None`` for the stateless path, else the answer.

        A 2026-07-28 ``MCP-Protocol-Version`` header, or a request whose ``_meta`` names a
        protocol version, is stateless; so is a request with neither header nor session.
        An ``initialize`` opens a session; a request with ``Mcp-Session-Id`` belongs to it.
        """
        try:
            header_version = protocol_version_header(view)
        except HeaderMismatch:
            return None  # the stateless admission answers it (-32020)
        if header_version is not None and header_version not in INITIALIZE_ERA:
            if (
                view.first(MCP_SESSION_ID) is not None and self._sessions_on
                and header_version not in self._stateless_versions
            ):
                # A session's request naming a revision nobody speaks (2025-11-25: Streamable
                # HTTP, Protocol Version Header: 400 for an unsupported version).
                return self._era_version_refused(header_version, getattr(message, "id", None))
            return None
        if isinstance(message, Request) and names_version(message):
            return None
        session_ids = view.all(MCP_SESSION_ID)
        if not session_ids:
            if isinstance(message, Request) and message.method == "initialize":
                return self._initialize_http(message, now, principal, accepts)
            if header_version is None and self.serves_stateless:
                return None  # the stateless generation's request (its admission answers)
            if isinstance(message, Request) and self._sessions_on:
                # Before initialize (2025-11-25: Session Management: 400 without the header).
                return refuse(400, "Bad Request: Mcp-Session-Id header is required", message.id)
            if isinstance(message, Request):
                # Stateless legacy mode (no session ids): each request stands alone; without
                # the header it is 2025-03-26 (Protocol Version Header).
                revision = header_version or OLDEST
                if revision not in self._era:
                    return self._era_version_refused(header_version, message.id)
                session = Session(None, revision, {}, None, now)
                return self._session_http(message, session, revision, now, principal, accepts)
            return empty_reply(202)
        if not self._sessions_on:
            return None
        if len(session_ids) > 1:
            return refuse(400, "Bad Request: repeated Mcp-Session-Id header", getattr(message, "id", None))
        found = self._find_session(session_ids[0], now, principal)
        if found is None:
            return refuse(404, "Session not found", getattr(message, "id", None))
        session = found
        revision = header_version or OLDEST
        if revision not in self._era:
            return self._era_version_refused(header_version, getattr(message, "id", None))
        if isinstance(message, Notification):
            if message.method == "notifications/initialized":
                session.move("initialized")
                self.sessions.save(session)
            cancelled = Cancelled.parse(message)
            if cancelled is not None:  # the host cancels that request's work, if it still runs
                return msgspec.structs.replace(cancelled, session_id=str(session.id), reply=empty_reply(202))
            return empty_reply(202)
        if isinstance(message, Response):
            arrived = self._answer(session, message)
            reply = empty_reply(202)
            if arrived is not None:
                return InputArrived(exchange=arrived[0], ready=arrived[1], reply=reply)
            if type(message.id) is int and getattr(self.sessions, "shared", False):
                # The request that asked may wait in another process of the server.
                return InputArrived(exchange=None, ready=False, reply=reply, session_id=str(session.id), answer=message)
            return reply
        return self._session_http(message, session, revision, now, principal, accepts)

    def _session_client(self, view: HeaderView) -> bool:
        """Whether a request without a session id comes from the initialize era: it names such a
        revision in ``MCP-Protocol-Version``, or names none to a server of that era only."""
        try:
            version = protocol_version_header(view)
        except HeaderMismatch:
            return False
        return version in INITIALIZE_ERA if version is not None else not self.serves_stateless

    def _initialize_http(self, message: Request, now: float, principal: str | None, accepts: Accepts) -> HttpAnswer:
        try:
            session, result = self._initialize(message, now, self._session_ids, principal)
        except ProtocolError as exc:
            return error_reply(exc, message.id)
        extra = ((MCP_SESSION_ID, session.id.encode()),) if session.id is not None else ()
        return answer_reply(200, encode_result(message.id, result), accepts, extra)

    def _session_http(
        self, message: Request, session: Session, revision: str, now: float, principal: str | None, accepts: Accepts,
    ) -> HttpAnswer:
        try:
            admitted = self._admit_session(message, session, revision, now, principal)
        except ProtocolError as exc:
            # After admission, errors travel with HTTP 200 (those clients read other statuses as
            # a failed transport, and 404 as a lost session).
            return answer_reply(200, encode_error(message.id, exc), accepts)
        if isinstance(admitted, bytes):
            return answer_reply(200, admitted, accepts)
        if isinstance(admitted, TaskChanged):  # a 2025-11-25 tasks/cancel
            return msgspec.structs.replace(admitted, reply=answer_reply(200, admitted.reply, accepts))
        assert not isinstance(admitted, Listen)  # subscriptions/listen is not a session method
        event, params = admitted
        return http_exchange(accepts)(self._context, event, params, now, session=session, revision=revision,
                                      principal=principal)

    def _session_request(self, request: HttpRequest, view: HeaderView, now: float) -> HttpAnswer:
        """GET (the session's standalone SSE stream) and DELETE (end the session)."""
        refused = admit_target(request, self.http, view)
        if refused is not None:
            return refused
        method = as_text("method", request.method)
        if method == "GET":
            takes = read_accept(b",".join(view.all(b"accept")))
            if takes is None or not takes.streams:
                return refuse(406, "Not Acceptable: a GET stream needs Accept: text/event-stream")
        ids = view.all(MCP_SESSION_ID)
        if len(ids) > 1:
            return refuse(400, "Bad Request: repeated Mcp-Session-Id header")
        session = self._find_session(ids[0], now, request.principal)
        if session is None:
            return refuse(404, "Session not found")
        if method == "DELETE":
            self.sessions.remove(str(session.id))
            stream = session.stream
            waiting = session.close()
            for exchange in waiting:
                exchange.cancel()
            return SessionClosed(session_id=str(session.id), reply=empty_reply(200), waiting=waiting, stream=stream)
        replayed: list[bytes] = []
        last_event = view.first(LAST_EVENT_ID)
        if last_event is not None:
            last_id = last_event.decode("latin-1").strip()
            replay = session.events.replay(last_id)
            if replay is not None and not is_standalone(replay[0]):  # a request's stream
                return ResumedStream(self._context, session, *replay, position=int(last_id.rpartition("-")[2]))
            if replay is not None:  # the session's GET stream: what followed, then it goes on
                replayed = replay[1]
        return self._session_stream(session, replayed, now)

    def _session_stream(self, session: Session, replayed: list[bytes], now: float) -> HttpAnswer:
        """The session's one GET stream, wherever the server runs (the store's claim): 409 when
        it has one open, here or in another process of the server (2025-11-25: Streamable HTTP,
        Multiple Connections: a message goes on one stream only)."""
        if session.stream is not None:
            return refuse(409, "Conflict: the session already has an open GET stream")
        if len(self._listeners) >= self.max_listen_streams:
            return error_reply(ProtocolError("Too many open streams", code=ErrorCode.INTERNAL_ERROR, http_status=503))
        if not self.sessions.claim_stream(session, now):
            return refuse(409, "Conflict: the session already has an open GET stream")
        try:
            key = session.events.new_stream(standalone=True)
        except ProtocolError:
            self.sessions.release_stream(session)
            raise
        return SessionStream(self._context, session, self._session_kinds(), key, replayed=replayed,
                             release=self.sessions.release_stream)

    def _session_kinds(self) -> frozenset[str]:
        return frozenset(k for k in self._list_changed if self._enabled[k])

    def session_ended(self, session_id: str) -> SessionClosed:
        """Session ``session_id`` ended in another process of the server (its DELETE there,
        which the host's broker tells this one), or was found gone: what this process must end,
        as after a DELETE here (``App.session_closed``): its GET stream here, if one is open.
        ``reply`` is empty (there is no request to answer)."""
        return SessionClosed(session_id=session_id, reply=[], stream=self._listeners.session_stream(session_id))

    def stdio_session_stream(self, session: Session) -> StdioSessionStream | None:
        """The stream of what an initialize-era stdio session hears unasked (list_changed,
        resources/updated), from ``notifications/initialized`` on; ``None`` when it has one."""
        if session.stream is not None:
            return None
        return StdioSessionStream(self._context, session, self._session_kinds())

    # -- initialize era: the handshake and the session's requests ------------------------------------
    def _initialize(
        self, message: Request, now: float, ids: Iterator[str] | None, principal: str | None = None,
    ) -> tuple[Session, dict[str, Any]]:
        params = decode_params(METHODS["initialize"].decoder, message.params, message.id)
        requested, caps, info = check_initialize(params)
        check_client_capabilities(caps)
        revision = negotiate_version(requested, self._era)
        assert revision is not None  # only called when the era is enabled
        session = Session(None if ids is None else check_session_id(next(ids)), revision, caps, info, now,
                          self._event_store(), principal=principal)
        if session.id is not None and not self.sessions.add(session, now):
            raise ProtocolError("Too many sessions: try again later", code=ErrorCode.INTERNAL_ERROR, http_status=503)
        result: dict[str, Any] = {
            "protocolVersion": revision,
            "capabilities": self._era_capabilities(revision, principal),
            "serverInfo": self._info_builtins,
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return session, session_result(revision, "initialize", result)

    def _era_capabilities(self, revision: str, principal: str | None) -> dict[str, Any]:
        """The capabilities a session of ``revision`` is told of (shaped for it later): the
        stateless revision's, and 2025-11-25's ``tasks`` when the server runs tasks (Tasks:
        Server Capabilities; ``list`` only to an authenticated caller, whose tasks it lists)."""
        caps = self.capabilities()
        if self.tasks is not None and revision in TASK_REVISIONS:
            tasks: dict[str, Any] = {"list": {}} if principal is not None else {}
            caps["tasks"] = {**tasks, "cancel": {}, "requests": {"tools": {"call": {}}}}
        return caps

    def _admit_session(
        self, message: Request, session: Session, revision: str, now: float, principal: str | None = None,
    ) -> Admitted:
        method = message.method
        spec = method_row(method, revision)
        if spec is None or not self._session_method_enabled(spec):
            raise RemoteProtocolError(f"Method not found: {method}", code=ErrorCode.METHOD_NOT_FOUND)
        params = decode_params(spec.decoder, message.params, message.id)
        meta = check_notification_meta(params.meta)
        if method == "initialize":
            raise RemoteProtocolError("The session is already initialized", code=ErrorCode.INVALID_REQUEST)
        if spec.input_required and (params.input_responses is not UNSET or params.request_state is not UNSET):
            raise bad_params("Multi-round-trip inputs (inputResponses, requestState) are not part of protocol revision " + revision)
        if spec.session:
            if method == "logging/setLevel":
                session.set_level(params.level)
            elif method == "resources/subscribe":
                session.subscribe(params.uri)
            elif method == "resources/unsubscribe":
                session.unsubscribe(params.uri)
            if session.id is not None:  # a stored session (stdio's and stateless legacy's are not)
                self.sessions.save(session)
            return encode_result(message.id, {})
        request_meta = RequestMeta(
            protocol_version=revision, client_capabilities=session.client_capabilities,
            client_info=session.client_info, progress_token=meta.get(PROGRESS_TOKEN_META_KEY), raw=meta,
        )
        if spec.paginated:
            page = self._on_list_era(message, params, revision)
            if method in self._handed:  # the host answers it (hand_over_lists)
                return self._list_request(message, params, request_meta, self._era_page(method, page)), message.params
            return encode_result(message.id, Raw(page))
        tool = params.name if method == "tools/call" else None
        if type(tool) is str and tool in self._tools and not self._tools.listed_in(revision, tool):
            raise bad_params(f"Tool {tool} is not available in protocol revision {revision}")
        handler = self._session_handlers.get(method) or self._handlers[method]
        return handler(message, params, request_meta, now, principal)

    def _session_method_enabled(self, spec: MethodSpec) -> bool:
        if spec.name in ("resources/subscribe", "resources/unsubscribe"):
            return self._subscribe and self._enabled["resources"]
        if spec.name == "logging/setLevel":
            return self._logging
        if spec.capability == "tasks":
            return self.tasks is not None
        return spec.capability is None or self._enabled[spec.capability]

    def _era_page(self, method: str, page: bytes) -> bytes:
        """An initialize-era page with the members the stateless result type requires (the
        answer to a handed-over list is shaped for the revision again, which drops them)."""
        policy = self._policy(method)
        return page[:-1] + b',"ttlMs":%d,"cacheScope":"%s"}' % (policy.ttl_ms, policy.scope.encode())

    def _on_list_era(self, message: Request, params: Any, revision: str) -> bytes:
        """A list's result object as ``revision`` has it: the revision's own list of items, shaped
        and encoded at registration (its cursors are bound to the revision, whose list may be
        shorter)."""
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
        return b"".join(parts)

    def _answer(self, session: Session, response: Response) -> tuple[Exchange[Any], bool] | None:
        """A client's response to a server-to-client request: to the exchange that asked."""
        if response.id is None:
            return None
        found = session.answered(response.id)
        if found is None:
            return None  # not a request the session waits on: dropped
        exchange = found[0]
        return exchange, exchange.receive_answer(response)

    def opens_session(self, message: Request) -> bool:
        """Whether ``message`` opens an initialize-era session: an ``initialize`` whose
        ``_meta`` names no protocol version, on a server that speaks an initialize-era revision."""
        return bool(self._era) and message.method == "initialize" and not names_version(message)

    def uninitialized_line(self, message: Request) -> bytes | None:
        """Answer a request read from stdio before ``initialize``: ``ping`` is answered (Basic > Lifecycle: the one request a client may send
        first), anything else is -32600; ``None`` for a request whose ``_meta`` names a protocol
        version (a stateless client's: its admission answers, e.g. -32022 for a probe), or on a
        server that serves no initialize-era revision."""
        if not self._era or names_version(message):
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


def _answered(item: bytes) -> bool:
    """Whether a message of a batch gets an answer: a request, or one that is not a message."""
    if item[:1] == b"[":
        return True
    try:
        return type(decode_message(item)) is Request
    except UnansweredMessage:
        return False
    except RemoteProtocolError:
        return True
