"""What every MCP client transport shares: :class:`Session`, :class:`Subscription` and their errors.

The transport-neutral half of :class:`~mcpwire_adapters.client.http.HttpClient` and
:class:`~mcpwire_adapters.client.stdio.StdioClient`; it does not import h11, so a stdio client
never loads the HTTP machinery.

:class:`Session` holds the client logic: the -32022 version fallback (once per request), the
MRTR loop (``on_input`` gets the typed input requests of each round and returns the answers;
at most ``max_rounds`` rounds), pagination, and turning an :class:`ErrorResult` into
:class:`ServerError`; the request verbs built on :meth:`Session.send` (one method per
request, and the :class:`Page` a list's page comes as) are :mod:`.verbs`'s, which Session
inherits. A transport subclasses it and implements ``_exchange`` (send one request,
return its final event) and ``_subscription``. :meth:`Session.listen` opens a
``subscriptions/listen`` stream (specification: Basic > Patterns > Subscriptions) as a
:class:`Subscription`::

    async with session.listen({"toolsListChanged": True}) as sub:
        async for event in sub:      # ListenAck, then ListChanged / ResourceUpdated
            ...

Initialize-era servers (specification 2025-11-25; 2026-07-28: Basic > Versioning, Backward
Compatibility): :meth:`Session.connect` probes with ``server/discover`` and, when the answer
identifies an older server (``Client.probe_says_legacy``), falls back to ``initialize`` and
``notifications/initialized``; a host that pinned an initialize-era ``protocol_version`` starts
there. Over HTTP, a first request that fails as a modern request would not, sent without
``connect()``, runs the probe then (and is resent on the session); stdio probes before the
first request. The server's own requests (elicitation, sampling, roots, ping) are answered by
the same ``on_input`` handler the multi round-trip loop uses, the call's own or else the
session's; those on a call's own stream, valid or not, pings aside, count against
``max_rounds``. A session the server forgot (HTTP 404) is replaced by a new one, once per
request, with a warning on the ``mcpwire.client`` logger; a 404 on the handshake's
``notifications/initialized`` starts a new session too, at most ``MAX_NEW_SESSIONS`` (3) in a
row. ``listen`` on a session reads its GET stream (HTTP) or reads the server's notifications
(stdio), and turns ``resourceSubscriptions`` into ``resources/subscribe`` /
``resources/unsubscribe``.

Pages and caching: ``list_tools_page(cursor)`` and its kin return one :class:`Page` with its
``nextCursor`` and caching hints; a session given ``cache=`` (a
:class:`~mcpwire_adapters.client.cache.ResponseCache`) answers cacheable requests from it while fresh
(``_follow`` consults it, :meth:`Session.observe` invalidates it from every listen stream).

These names are also importable from :mod:`mcpwire_adapters.client.http`, as before.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import msgspec

from mcpwire import (
    Client, ClientEvent, ErrorCode, ErrorResult, InputRequired, ListChanged, LogMessage, OutgoingMessage,
    OutgoingRequest, Progress, ProtocolError, ResourceUpdated, ResultReceived, ServerRequest,
)
from mcpwire.sessions import INITIALIZE_ERA, InvalidMessage
from mcpwire.tasks import RELATED_TASK_META_KEY
from mcpwire.types import (
    SERVER_INFO_META_KEY, CreateMessageRequest, CreateMessageResult, DiscoverResult, ElicitRequest, ElicitResult, ListRootsRequest,
    ListRootsResult, Implementation, InitializeResult, InputRequest, ServerCapabilities,
)

from ..callbacks import maybe_await
from ..errors import InvalidResult, MaybeDelivered, ServerError, SessionExpired, TaskCancelled, TransportError
from .port import InputHandler
from .task_follower import TaskHandler
from .subscription import ListenEvent, SessionListen, Subscription
from .verbs import EventHandler, Page, SessionVerbs

if TYPE_CHECKING:
    from ..tracing import ClientTracing
    from .cache import ResponseCache

__all__ = [
    "ElicitationHandler", "EventHandler", "InputHandler", "InvalidResult", "ListenEvent", "MaybeDelivered", "Page",
    "RootsHandler", "SamplingHandler", "ServerError", "Session", "SessionExpired", "SessionListen", "Subscription",
    "TaskCancelled", "TaskHandler", "TransportError",
]

_log = logging.getLogger("mcpwire.client")

T = TypeVar("T")
ElicitationHandler = Callable[[ElicitRequest], "ElicitResult | Awaitable[ElicitResult]"]
SamplingHandler = Callable[[CreateMessageRequest], "CreateMessageResult | Awaitable[CreateMessageResult]"]
RootsHandler = Callable[[ListRootsRequest], "ListRootsResult | Awaitable[ListRootsResult]"]
# What each handler of Session(elicitation=, sampling=, roots=) makes the client declare, unless it
# declares the capability itself (URL-mode elicitation is declared by the host that handles it).
_HANDLER_CAPABILITIES: dict[str, dict[str, Any]] = {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}

MAX_NEW_SESSIONS = 3
"""How many sessions in a row a handshake opens when the server answers each one's
``notifications/initialized`` with 404 (it forgot the session at once): a bound, so that a
server that forgets every session gets a clear error, not a loop."""


class Session(SessionVerbs):
    """Transport-independent client logic; subclasses implement :meth:`_exchange`.

    ``on_input`` is the session's handler for input requests: it answers the server's own
    requests outside any call (on the GET stream, on stdio) and any call given no ``on_input``.
    ``on_log`` gets the log messages that belong to no call (an initialize-era session's GET
    stream, while no single call with an ``on_log`` is in flight). ``cache`` is a
    :class:`~mcpwire_adapters.client.cache.ResponseCache` for the cacheable requests (default: none).
    """

    _probe_first = False  # stdio: probe with server/discover before the first other request

    cancel_timeout: float = 5.0
    """Seconds a ``notifications/cancelled`` may take to send when the task awaiting a request
    on an initialize-era session is cancelled (:meth:`_notify_cancelled`); past them it is
    given up, and logged."""

    def __init__(self, client: Client, *, max_rounds: int = 8, max_pages: int = 100,
                 on_input: InputHandler | None = None, on_log: EventHandler | None = None,
                 elicitation: ElicitationHandler | None = None, sampling: SamplingHandler | None = None,
                 roots: RootsHandler | None = None, cache: ResponseCache | None = None) -> None:
        self.client = client
        self._handlers: dict[type, Callable[[Any], Any]] = {
            kind: handler for kind, handler in ((ElicitRequest, elicitation), (CreateMessageRequest, sampling),
                                                (ListRootsRequest, roots)) if handler is not None}
        for name, handler in (("elicitation", elicitation), ("sampling", sampling), ("roots", roots)):
            if handler is not None and name not in client.capabilities:
                client.capabilities[name] = _HANDLER_CAPABILITIES[name]
        if on_input is None and self._handlers:
            on_input = self._by_kind
        self.max_rounds = max_rounds
        self.max_pages = max_pages
        self.on_input = on_input
        self.on_log = on_log
        self.cache = cache
        """The :class:`~mcpwire_adapters.client.cache.ResponseCache` cacheable requests consult, if any."""
        self.tracing: ClientTracing | None = None
        """OpenTelemetry tracing of every request (:class:`mcpwire_adapters.tracing.ClientTracing`, the
        ``otel`` extra): a span each, its W3C trace context in the request's ``_meta``. Default: none."""
        self.discovered: ResultReceived | None = None
        self.initialized: ResultReceived | None = None
        """The ``initialize`` answer of the current initialize-era session, if any."""
        self.sessions_started = 0
        """How many initialize-era sessions this client opened (more than one: the server forgot one)."""
        self._era_known = False  # the first answer (or the probe) told which era the server speaks
        self._log_level: str | None = None  # the session's logging/setLevel
        self._tokens = 0  # progress tokens this session made up
        self._calls: list[tuple[InputHandler | None, EventHandler | None]] = []  # on_input, on_log per call
        self.task_inputs: dict[str, InputHandler | None] = {}  # the on_input of each task a call follows
        # One probe or handshake at a time: the transport gives its event loop's lock.
        self._setup_lock: contextlib.AbstractAsyncContextManager[object] = contextlib.nullcontext()

    async def _by_kind(self, requests: dict[str, InputRequest]) -> dict[str, Any]:
        """The session's on_input made of its elicitation, sampling and roots handlers."""
        answers: dict[str, Any] = {}
        for key, request in requests.items():
            handler = self._handlers.get(type(request))
            if handler is None:
                raise ServerError(ErrorResult(request_id=key, code=ErrorCode.INTERNAL_ERROR,
                                              message=f"no handler for {type(request).__name__}"))
            answers[key] = await maybe_await(handler(request))
        return answers

    # -- what the server said about itself ------------------------------------------------------
    @property
    def protocol_version(self) -> str:
        """The revision requests are built for (negotiated by ``initialize`` on a session)."""
        return self.client.protocol_version

    @property
    def server_capabilities(self) -> ServerCapabilities | None:
        found = self._server()
        return found.capabilities if found is not None else None

    @property
    def server_info(self) -> Implementation | None:
        """serverInfo of ``initialize``, or ``_meta["io.modelcontextprotocol/serverInfo"]`` of
        ``server/discover``."""
        found = self._server()
        if isinstance(found, InitializeResult):
            return found.server_info
        meta = found.meta if found is not None and isinstance(found.meta, dict) else {}
        try:
            return msgspec.convert(meta[SERVER_INFO_META_KEY], Implementation) if SERVER_INFO_META_KEY in meta else None
        except msgspec.ValidationError:
            return None

    @property
    def instructions(self) -> str | None:
        found = self._server()
        text = found.instructions if found is not None else None
        return text if isinstance(text, str) else None

    def _server(self) -> InitializeResult | DiscoverResult | None:
        if self.client.initialized is not None:
            return self.client.initialized
        value = self.discovered.value if self.discovered is not None else None
        return value if isinstance(value, DiscoverResult) else None

    # -- connecting -------------------------------------------------------------------------------
    async def connect(self) -> ResultReceived:
        """Learn what the server speaks: ``server/discover`` (after a -32022, once more with a
        version both speak), or, when the answer identifies an initialize-era server or the host
        pinned an initialize-era version, the ``initialize`` handshake. Returns the discover or
        initialize result (see :attr:`server_info`, :attr:`server_capabilities`)."""
        if self.client.initialize_era:
            return await self._handshake()
        try:
            found = await self._probe()
        except ServerError as exc:
            if not self.client.probe_says_legacy(exc.error):
                raise
            found = None
        except ProtocolError as exc:
            _log.info("server/discover failed (%s): trying initialize", exc)
            found = None
        if found is not None and not self.client.probe_says_legacy(found):
            self._era_known = True
            self.discovered = found
            return found
        return await self._handshake()

    async def _probe(self) -> ResultReceived | None:
        """Send the probe. ``None``: no answer in time (stdio bounds the wait: an initialize-era
        server may ignore requests sent before ``initialize``)."""
        return await self._send(self.client.discover())

    async def _handshake(self) -> ResultReceived:
        """``initialize`` and ``notifications/initialized``. A 404 on the notification (the first
        request that carries the new session's id) means the server forgot that session already:
        a new one is started (2025-11-25: Basic > Transports > Streamable HTTP, Session
        Management, "it MUST start a new session by sending a new InitializeRequest without a
        session ID attached"): at most :data:`MAX_NEW_SESSIONS` sessions in a row, then
        :class:`SessionExpired` says the server forgot each of them."""
        lost: SessionExpired | None = None
        for attempt in range(1, MAX_NEW_SESSIONS + 1):
            request = self.client.initialize()
            answer = await self._send(request)
            note = self.client.accept_initialize(answer, self._issued_session())
            self._era_known, self.initialized, self._log_level = True, answer, None
            self.sessions_started += 1
            try:
                await self._deliver(note)
            except SessionExpired as exc:
                if attempt < MAX_NEW_SESSIONS:
                    _log.warning("%s; starting a new session", exc)
                self.client.session_expired()
                self.initialized = None
                lost = exc
                continue
            await self._session_started()
            return answer
        assert lost is not None  # MAX_NEW_SESSIONS >= 1: the loop ran, and each turn that did not return lost one
        raise SessionExpired(f"the server forgot each of {MAX_NEW_SESSIONS} new sessions in a row right after "
                             f"initialize ({lost}); giving up", lost.session_id)

    async def _session_started(self) -> None:
        """A new initialize-era session is open (HTTP starts reading its GET stream)."""

    async def _deliver(self, message: OutgoingMessage) -> None:
        """Send a notification or an answer on the session (HTTP: POST; stdio: a line)."""
        raise NotImplementedError

    async def _notify_cancelled(self, request: OutgoingRequest, reason: str = "cancelled by the client") -> None:
        """Send ``notifications/cancelled`` for ``request`` on the initialize-era session, for a
        transport where a disconnect is not a cancellation (HTTP, 2025-11-25 and before: Basic >
        Transports > Streamable HTTP, "To cancel, the client SHOULD explicitly send an MCP
        CancelledNotification"; Basic > Utilities > Cancellation). Called from the cancelled
        task's cleanup: shielded from that cancellation, bounded by :attr:`cancel_timeout`;
        a failure is logged, never raised (the caller re-raises its cancellation)."""
        message = self.client.notification("notifications/cancelled", {"requestId": request.id, "reason": reason})
        with anyio.move_on_after(self.cancel_timeout, shield=True) as scope:
            try:
                await self._deliver(message)
            except Exception as exc:  # noqa: BLE001 - best effort: the request is cancelled anyway
                _log.warning("notifications/cancelled for %s (id %r) failed: %r", request.method, request.id, exc)
        if scope.cancelled_caught:
            _log.warning("notifications/cancelled for %s (id %r) not sent within %s s", request.method, request.id,
                         self.cancel_timeout)

    def _issued_session(self) -> str | None:
        """The session id the transport saw on the ``initialize`` answer (HTTP only)."""
        return None

    def _unrelated_handler(self, event: ServerRequest) -> InputHandler | None:
        """Who answers a server request that names no request of ours (the GET stream, a
        stdio line): the call following the task its related-task ``_meta`` names (2025-11-25
        tasks), else the ``on_input`` of the one call in flight, else the session's. Servers
        send a tool's questions there too (the TypeScript SDK v1 does, unless told otherwise)."""
        meta = event.params.get("_meta")
        related = meta.get(RELATED_TASK_META_KEY) if type(meta) is dict else None
        task_id = related.get("taskId") if type(related) is dict else None
        if type(task_id) is str and self.task_inputs.get(task_id) is not None:
            return self.task_inputs[task_id]
        if len(self._calls) == 1 and self._calls[0][0] is not None:
            return self._calls[0][0]
        return self.on_input

    async def _unrelated_log(self, event: LogMessage) -> None:
        """A log message that names no request (the GET stream): the one call in flight's
        ``on_log`` (servers log a tool's work there too), else the client's ``on_log``. The
        call may have ended by the time it is read: its answer travels on another connection."""
        handler = self._calls[0][1] if len(self._calls) == 1 and self._calls[0][1] is not None else self.on_log
        if handler is not None:
            await maybe_await(handler(event))

    async def _answer_server(self, event: ServerRequest, handler: InputHandler | None) -> None:
        """Answer one of the server's own requests through the input handler: the same that
        answers ``input_required`` rounds, so a tool is answered alike in both eras."""
        handler = handler or self._unrelated_handler(event)
        if event.method == "ping":
            message = self.client.answer(event, {})
        elif event.request is None and event.method in ("elicitation/create", "sampling/createMessage", "roots/list"):
            message = self.client.answer_error(event, ErrorCode.INVALID_PARAMS, f"Invalid params for {event.method}")
        elif event.request is None or handler is None:
            message = self.client.answer_error(event, ErrorCode.METHOD_NOT_FOUND, f"Method not found: {event.method}")
        else:
            key = str(event.request_id)
            try:
                answers = await maybe_await(handler({key: event.request}))
                message = self.client.answer(event, answers[key])
            except Exception as exc:  # the handler failed: the server hears -32603, the host the log
                _log.warning("input handler failed for %s: %r", event.method, exc)
                message = self.client.answer_error(event, ErrorCode.INTERNAL_ERROR, "Internal error")
        await self._deliver(message)

    async def _exchange(self, request: OutgoingRequest, on_event: Callable[[ClientEvent], Awaitable[None]]) -> ClientEvent:
        """Send ``request``; pass Progress/LogMessage events to ``on_event``; return the final event."""
        raise NotImplementedError

    async def send(
        self,
        request: OutgoingRequest,
        *,
        on_input: InputHandler | None = None,
        on_progress: EventHandler | None = None,
        on_log: EventHandler | None = None,
    ) -> ResultReceived:
        """Send ``request`` and follow it to a complete result: -32022 fallback, MRTR rounds.

        Raises :class:`ServerError` for a JSON-RPC error, and for an ``input_required`` when
        there is no ``on_input`` or the rounds exceed ``max_rounds`` (code -32603).
        """

        if request.method not in ("initialize", "server/discover"):
            modern = not self.client.initialize_era
            await self._ready()
            if modern and self.client.initialize_era:
                request = self.client.as_session_request(request)
        modern = not self.client.initialize_era
        try:
            return await self._send(request, on_input=on_input, on_progress=on_progress, on_log=on_log)
        except (ServerError, ProtocolError) as exc:
            # Over HTTP the first modern request is the probe (Streamable HTTP, Backward
            # Compatibility): a failure no modern server gives sends the real probe, and an
            # initialize-era answer to it means: open a session and send the request there.
            if not modern or request.method in ("initialize", "server/discover"):
                raise
            if isinstance(exc, ServerError) and not self.client.probe_says_legacy(exc.error):
                raise
            async with self._setup_lock:  # concurrent first requests: one probe
                if not self._era_known:
                    await self.connect()
            if not self.client.initialize_era:
                raise
        return await self._send(self.client.as_session_request(request), on_input=on_input,
                                on_progress=on_progress, on_log=on_log)

    async def _send(
        self,
        request: OutgoingRequest,
        *,
        on_input: InputHandler | None = None,
        on_progress: EventHandler | None = None,
        on_log: EventHandler | None = None,
    ) -> ResultReceived:
        # The server's requests on this request's stream (initialize era) are its rounds of
        # input, bounded by max_rounds as input_required rounds are (_follow): every one but a
        # ping, valid or not (an invalid one is answered with its JSON-RPC error, as
        # JSON-RPC 2.0 section 5 says), else a server that keeps sending requests nobody can answer keeps the
        # call alive for ever. Past the bound the request is cancelled the transport's way (the
        # scope), then fails.
        asked = 0
        refused: ServerError | None = None
        stop = anyio.CancelScope()

        async def on_event(event: ClientEvent) -> None:
            nonlocal asked, refused
            if isinstance(event, Progress) and on_progress is not None:
                await maybe_await(on_progress(event))
            elif isinstance(event, LogMessage) and on_log is not None:
                await maybe_await(on_log(event))
            elif isinstance(event, (ServerRequest, InvalidMessage)):
                if not (isinstance(event, ServerRequest) and event.method == "ping"):
                    asked += 1
                if asked <= self.max_rounds:
                    if isinstance(event, ServerRequest):
                        await self._answer_server(event, on_input)
                    else:
                        await self._deliver(self.client.reject(event))
                    return
                refused = refused or _input_refused(request.id, request.method, f"more than {self.max_rounds} input rounds")
                await self._deliver(self.client.reject(event) if isinstance(event, InvalidMessage) else
                                    self.client.answer_error(event, ErrorCode.INTERNAL_ERROR, refused.error.message))
                stop.cancel()

        call = (on_input, on_log)
        self._calls.append(call)
        try:
            with stop:
                if self.tracing is not None:
                    return await self.tracing.send(self, request, lambda traced: self._follow(traced, on_input, on_event))
                return await self._follow(request, on_input, on_event)
            assert refused is not None  # only on_event cancels the scope
            raise refused
        finally:
            self._calls.remove(call)

    async def _follow(self, request: OutgoingRequest, on_input: InputHandler | None,
                      on_event: Callable[[ClientEvent], Awaitable[None]]) -> ResultReceived:
        rounds = 0
        version_retried = False
        restarted = False
        while True:
            try:
                kept = await self._recall(request) if rounds == 0 else None
                final = kept if kept is not None else await self._exchange(request, on_event)
                if kept is None and rounds == 0 and isinstance(final, ResultReceived):
                    await self._remember(request, final)  # not after input rounds: never kept
            except SessionExpired as exc:
                if restarted or request.method == "initialize":
                    raise
                restarted = True
                async with self._setup_lock:  # concurrent requests that all got 404: one new session
                    if self.client.session_id == exc.session_id:
                        _log.warning("%s; starting a new session", exc)
                        self.client.session_expired()
                        await self._handshake()
                request = self.client.as_session_request(request)
                continue
            if isinstance(final, ResultReceived):
                if not self.client.initialize_era and request.method != "server/discover":
                    self._era_known = True  # a modern answer: the server speaks 2026-07-28
                if final.problem is not None and final.method == "tools/call":
                    raise InvalidResult(final)
                return final
            if isinstance(final, ErrorResult):
                if final.code == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION and not version_retried \
                        and not self.client.initialize_era and not self.client.probe_says_legacy(final):
                    version_retried = True
                    self._era_known = True
                    request = self.client.version_retry(request, final)
                    continue
                raise ServerError(final)
            assert isinstance(final, InputRequired)
            on_input = on_input or self.on_input  # a call given none: the session's handler
            rounds += 1
            if on_input is None or rounds > self.max_rounds:
                why = "no input handler" if on_input is None else f"more than {self.max_rounds} input rounds"
                raise _input_refused(final.request_id, request.method, why, final.data)
            answers = await maybe_await(on_input(final.input_requests))
            request = self.client.retry(final, answers)

    # -- the response cache -----------------------------------------------------------------------
    def _cache_where(self) -> tuple[str, str]:
        """The server this session talks to and the authorization context of its requests, as
        the response cache keys them. A transport that knows neither keeps its entries to this
        one session object (HTTP: the URL and a digest of the Authorization header; stdio: the
        command line and a digest of the server's environment)."""
        return f"{type(self).__name__}@{id(self):x}", ""

    def _caching(self) -> ResponseCache | None:
        # An initialize-era server gives no hints: nothing on such a session is kept or reused.
        return None if self.client.initialize_era else self.cache

    async def _recall(self, request: OutgoingRequest) -> ResultReceived | None:
        """A fresh kept result for ``request``, read as if just received, or ``None``."""
        cache = self._caching()
        if cache is None:
            return None
        server, context = self._cache_where()
        raw = await cache.get(server, context, request)
        if raw is None:
            return None
        try:
            return self.client.cached_result(request, raw)
        except ProtocolError:  # a store handed back bytes that are no result: ask the server
            _log.warning("the response cache held no valid result for %s; asking the server", request.method)
            return None

    async def _remember(self, request: OutgoingRequest, result: ResultReceived) -> None:
        cache = self._caching()
        if cache is not None and result.problem is None:
            server, context = self._cache_where()
            await cache.put(server, context, request, result)

    async def observe(self, events: list[ClientEvent]) -> None:
        """Every event read from a listen stream of this session passes here first (a
        ``subscriptions/listen`` stream, an initialize-era session's GET stream or stdio
        notifications): list changes and resource updates drop what the cache kept of them.
        :class:`Subscription` calls it; a host has no need to."""
        if self.cache is None:
            return
        server = None
        for event in events:
            if isinstance(event, (ListChanged, ResourceUpdated)):
                server = server or self._cache_where()[0]
                if isinstance(event, ListChanged):
                    await self.cache.list_changed(server, event.kind)
                else:
                    await self.cache.resource_updated(server, event.uri)

    async def ready(self) -> None:
        """Do now what the first request would: a pinned initialize-era session's handshake, or
        the probe on stdio (then ``client.request(...)`` builds for what the server speaks)."""
        await self._ready()

    async def _ready(self) -> None:
        """Before building a request: open the session of a host that pinned an
        initialize-era version (again, after the server forgot it or the client ended it);
        on stdio, probe before the first request."""
        while self._needs_setup():
            async with self._setup_lock:  # concurrent first requests: one handshake, one probe
                if not self._needs_setup():
                    break
                if self.client.initialize_era:
                    await self._handshake()
                else:
                    await self.connect()

    def _needs_setup(self) -> bool:
        if self.client.initialize_era:
            return self.client.initialized is None
        return self._probe_first and not self._era_known and any(v in INITIALIZE_ERA for v in self.client.supported_versions)

    # -- listening, as the transport does it -------------------------------------------------------
    def _subscription(self, request: OutgoingRequest) -> Subscription:
        raise NotImplementedError

    def _session_listen(self, notifications: Mapping[str, Any]) -> Subscription:
        raise NotImplementedError


def _input_refused(request_id: Any, method: str, why: str, data: Any = msgspec.UNSET) -> ServerError:
    """The -32603 a request fails with when the client gives no more input: no handler, or past
    ``max_rounds`` (input_required rounds, or the server's requests for input on its stream)."""
    return ServerError(ErrorResult(request_id=request_id, code=ErrorCode.INTERNAL_ERROR,
                                   message=f"input required for {method}: {why}", data=data))
