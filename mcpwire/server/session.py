"""Initialize-era sessions: the handshake, what a session remembers, and where sessions live.

Owns (specification 2025-11-25: Basic > Lifecycle, Basic > Transports > Streamable HTTP,
session management; Server > Utilities > Logging; Server > Resources, subscriptions; schema
$defs InitializeRequestParams, InitializeResult):

- version negotiation: the requested revision when the server speaks it, else the newest
  initialize-era revision it speaks;
- :class:`Session`: what one ``initialize`` fixes for the rest of the connection (revision,
  client capabilities and info, the principal it was opened for), what later requests change
  (the ``logging/setLevel`` threshold, resource subscriptions), and the server-to-client
  requests waiting for their answers. Its states are ``SESSION`` (``states.py``);
- :class:`SessionStore`, the interface of where sessions live, and :class:`MemorySessionStore`,
  the bounded in-memory default: at most ``max_sessions`` at once and an idle expiry; a new
  ``initialize`` while the store is full (after expired sessions are dropped) is refused with
  HTTP 503 and -32603, and no live session is ever evicted to make room. The store also holds
  the rule of one GET stream per session wherever the server runs (``claim_stream``: a store
  shared by several processes holds it for them all);
- :class:`EventStore`, where a session keeps the SSE events it sent, for resumption with
  ``Last-Event-ID`` (2025-11-25: Streamable HTTP, Resumability and Redelivery: event ids
  unique within the session, replay only of the stream the id belongs to), and
  :class:`MemoryEventStore`, its bounded default. A stream's events are numbered from 1 for as
  long as it lasts (ids never repeat); the newest :data:`MAX_EVENTS` of each are kept.

Session ids come from the host (the core draws no randomness): a Streamable HTTP server is
given an iterator of fresh ids. On stdio the connection is the session and has no id.

A session opened by an authenticated caller is bound to it (MCP security best practices:
session hijacking): :func:`owned_by` is false for a request of any other principal, or of
none, and the engine answers such a request as it answers an unknown session id (404).
A session opened without a principal is bound to its id only.
"""

from __future__ import annotations

import hmac
from collections import deque
from itertools import islice
from typing import Any, Final, Protocol

from ..wire.envelope import RequestId
from ..wire.errors import ErrorCode, LocalProtocolError, ProtocolError
from ..wire.meta import LOG_LEVELS
from ..wire.params import bad_params, is_absolute_uri
from ..wire.versions import INITIALIZE_ERA
from .states import SESSION, SessionState

__all__ = [
    "Session", "SessionStore", "MemorySessionStore", "EventStore", "MemoryEventStore", "negotiate_version",
    "check_initialize", "check_session_id", "check_principal", "owned_by", "MAX_SUBSCRIPTIONS", "MAX_PENDING_INPUTS",
    "MAX_STREAMS", "MAX_EVENTS", "BATCH_REVISIONS", "MAX_BATCH", "STANDALONE", "is_standalone",
]

MAX_SUBSCRIPTIONS: Final = 1000
"""Resource subscriptions one session may hold; more is -32602."""
MAX_PENDING_INPUTS: Final = 64
"""Server-to-client requests one session may have waiting for answers at once."""
BATCH_REVISIONS: Final = frozenset({"2025-03-26"})
"""Revisions whose receivers take JSON-RPC batches (2025-03-26: a MUST; 2025-06-18 removed them)."""
MAX_BATCH: Final = 64
"""Messages in one batch; a longer one is refused whole (-32600)."""
MAX_STREAMS: Final = 32
"""SSE streams of one session kept for resumption (the newest)."""
MAX_EVENTS: Final = 256
"""Events of one stream kept for resumption (the newest): a ``Last-Event-ID`` older than
those cannot be replayed."""
STANDALONE: Final = "g"
"""How the key of a session's standalone stream (its GET stream) begins, and a request's
stream's key never does: a ``Last-Event-ID`` of the first resumes the session's GET stream,
of the second the request's output (:func:`is_standalone`)."""


def is_standalone(key: str) -> bool:
    """Whether stream ``key`` (the part of an event id before its last "-") is a session's GET stream."""
    return key.startswith(STANDALONE)


def negotiate_version(requested: str, supported: tuple[str, ...]) -> str | None:
    """The revision to answer an ``initialize`` asking for ``requested``: itself when the server
    speaks it, else the newest initialize-era revision the server speaks (the client then
    decides whether it can go on); ``None`` when the server speaks none."""
    era = [v for v in supported if v in INITIALIZE_ERA]
    if requested in era:
        return requested
    return era[0] if era else None


def check_initialize(params: Any) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """Validate ``initialize`` params (schema $defs InitializeRequestParams): protocolVersion a
    string, capabilities an object, clientInfo an Implementation with string name and version.
    Returns ``(protocolVersion, capabilities, clientInfo)``; -32602 otherwise."""
    version, caps, info = params.protocol_version, params.capabilities, params.client_info
    if type(version) is not str:
        raise bad_params("initialize requires a string protocolVersion")
    if type(caps) is not dict:
        raise bad_params("initialize requires a capabilities object")
    if type(info) is not dict or type(info.get("name")) is not str or type(info.get("version")) is not str:
        raise bad_params("initialize requires clientInfo with string name and version")
    return version, caps, info


def check_session_id(value: str) -> str:
    """A session id must be 1 to 255 visible ASCII characters (0x21 to 0x7E; Streamable HTTP,
    session management): checked on the ids the host hands in, so none that a client could not
    send back is ever issued."""
    if type(value) is not str or not 0 < len(value) < 256 or not all("!" <= c <= "~" for c in value):
        raise LocalProtocolError(f"A session id must be 1 to 255 visible ASCII characters, not {value!r:.60}")
    return value


def check_principal(principal: Any) -> str | None:
    """``HttpRequest.principal`` as the engine binds sessions and request states to it: a
    ``str`` or ``None`` (LocalProtocolError otherwise: the host's auth layer must hand over
    an opaque string, for example ``AccessToken.principal``)."""
    if principal is not None and type(principal) is not str:
        raise LocalProtocolError(f"HttpRequest.principal must be a str or None, not {type(principal).__name__}")
    return principal


def owned_by(session: Session, principal: str | None) -> bool:
    """Whether a request of ``principal`` may use ``session``: always for a session opened
    without a principal (bound to its id only), else only the same principal, compared in
    constant time (principals are not secrets, but it costs nothing)."""
    bound = session.principal
    if bound is None:
        return True
    given = check_principal(principal)
    return given is not None and hmac.compare_digest(_utf8(bound), _utf8(given))


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


class Session:
    """One initialize-era session (HTTP: named by ``Mcp-Session-Id``; stdio: the connection).

    ``revision``, ``client_capabilities`` and ``client_info`` are fixed by ``initialize``;
    ``log_level`` is the last ``logging/setLevel`` (``None`` until then: every level is sent);
    ``subscriptions`` the resource URIs of ``resources/subscribe``. ``last_seen`` is the time
    of the last request, for idle expiry. ``principal`` is the authenticated caller that sent
    ``initialize`` (``HttpRequest.principal``; ``None`` without auth, and on stdio): only its
    requests may use the session (:func:`owned_by`). A store that writes sessions elsewhere
    keeps it, and reads a session written without it as ``None``.
    """

    __slots__ = (
        "id", "revision", "client_capabilities", "client_info", "log_level", "subscriptions", "state",
        "created", "last_seen", "stream", "events", "task_ids", "principal", "_pending", "_next_id",
    )

    def __init__(
        self, session_id: str | None, revision: str, client_capabilities: dict[str, Any],
        client_info: dict[str, Any] | None, now: float, events: EventStore | None = None, *,
        first_request_id: int = 1, principal: str | None = None,
    ) -> None:
        self.id = session_id
        self.principal = check_principal(principal)
        self.revision = revision
        self.client_capabilities = client_capabilities
        self.client_info = client_info
        self.log_level: str | None = None
        self.subscriptions: set[str] = set()
        self.state = SESSION.initial
        self.created = now
        self.last_seen = now
        self.stream: Any = None
        """The open standalone GET stream (HTTP), if any."""
        # Server-to-client requests waiting for answers: id -> (the exchange that asked, its
        # input key). Typed loosely so that this module needs nothing from exchange.py.
        self._pending: dict[tuple[type, RequestId], tuple[Any, str]] = {}
        # The ids of the server's requests count up from first_request_id: a store shared by
        # several processes starts each process's copy of a session elsewhere, so that an
        # answer names the one request that asked, whichever process it reaches.
        if type(first_request_id) is not int or not 1 <= first_request_id <= 2**53 - 2**32:
            raise LocalProtocolError("first_request_id is an int from 1 to 2**53 - 2**32")
        self._next_id = first_request_id - 1
        self.events: EventStore = events if events is not None else MemoryEventStore()
        """The SSE events of the session's streams (its POST streams and its GET stream), for
        resumption with Last-Event-ID."""
        self.task_ids: set[str] = set()
        """The tasks its ``tools/call`` requests created (2025-11-25): their status
        notifications go to the session's stream."""

    # -- lifecycle --------------------------------------------------------------------------------
    def move(self, verb: str) -> None:
        self.state = SESSION.move(self.state, verb)

    @property
    def open(self) -> bool:
        return self.state is not SessionState.CLOSED

    def close(self) -> list[Any]:
        """End the session: the exchanges still waiting for input are returned (the host
        cancels them); later answers to their requests are dropped."""
        self.move("close")
        waiting = list({id(ex): ex for ex, _ in self._pending.values()}.values())
        self._pending.clear()
        return waiting

    # -- requests the client sends ------------------------------------------------------------
    def set_level(self, level: Any) -> None:
        if type(level) is not str or level not in LOG_LEVELS:
            raise bad_params("Invalid log level", {"level": level} if type(level) is str else None)
        self.log_level = level

    def subscribe(self, uri: Any) -> None:
        uri = self._uri(uri)
        if uri not in self.subscriptions and len(self.subscriptions) >= MAX_SUBSCRIPTIONS:
            raise bad_params(f"A session holds at most {MAX_SUBSCRIPTIONS} resource subscriptions")
        self.subscriptions.add(uri)

    def unsubscribe(self, uri: Any) -> None:
        self.subscriptions.discard(self._uri(uri))

    @staticmethod
    def _uri(uri: Any) -> str:
        if type(uri) is not str or not uri or not is_absolute_uri(uri):
            raise bad_params("uri must be an absolute URI string")
        return uri

    def covers(self, uri: str) -> bool:
        """Whether ``uri`` is (under) one of the session's resource subscriptions."""
        return any(uri == s or uri.startswith(s.rstrip("/") + "/") for s in self.subscriptions)

    # -- requests the server sends ------------------------------------------------------------
    def ask(self, exchange: Any, key: str) -> int:
        """A fresh id for a server-to-client request of ``exchange`` (answering input ``key``)."""
        if len(self._pending) >= MAX_PENDING_INPUTS:
            raise ProtocolError(
                f"More than {MAX_PENDING_INPUTS} requests to the client are waiting for answers",
                code=ErrorCode.INTERNAL_ERROR,
            )
        self._next_id += 1
        self._pending[(int, self._next_id)] = (exchange, key)
        return self._next_id

    def answered(self, request_id: RequestId) -> tuple[Any, str] | None:
        """The exchange and input key a client's response answers (``None``: not a request
        the session is waiting on, which is dropped)."""
        return self._pending.pop((type(request_id), request_id), None)

    def forget(self, ids: list[int]) -> None:
        """Stop waiting for these requests (their exchange ended): late answers are dropped."""
        for rid in ids:
            self._pending.pop((int, rid), None)

    @property
    def waiting(self) -> int:
        return len(self._pending)


class EventStore(Protocol):
    """Where a session keeps the SSE events it sent, for resumption with ``Last-Event-ID``
    (2025-11-25: Streamable HTTP, Resumability and Redelivery). One per session; the default
    is :class:`MemoryEventStore`. Event ids are ``<stream>-<n>``: ``n`` counts the stream's
    events from 1 and never repeats, however many are kept."""

    def new_stream(self, *, standalone: bool = False) -> str:
        """A key for a new SSE stream (the part of its event ids before "-"), unique in the
        session. ``standalone``: the session's GET stream, whose key begins with
        :data:`STANDALONE`; a request's stream's key never does."""
        ...

    def next_event_id(self, key: str) -> str:
        """The id of the next event of stream ``key``."""
        ...

    def record(self, key: str, frame: bytes, *, last: bool = False) -> None:
        """Keep a frame sent on stream ``key`` (``last``: the stream's final frame)."""
        ...

    def replay(self, last_event_id: str) -> tuple[str, list[bytes], bool] | None:
        """What a GET with ``Last-Event-ID`` resumes: the stream's key, the frames sent after
        that event, and whether the stream had ended; ``None`` for an id not kept (an unknown
        stream, or an event older than the frames the store still holds)."""
        ...


class MemoryEventStore:
    """A session's events in this process's memory, bounded: the newest :data:`MAX_STREAMS`
    streams, the newest :data:`MAX_EVENTS` frames of each."""

    __slots__ = ("_streams", "_events", "_counts", "_ended")

    def __init__(self) -> None:
        self._streams = 0
        self._events: dict[str, deque[bytes]] = {}
        self._counts: dict[str, int] = {}  # events sent on each stream, kept or not
        self._ended: set[str] = set()

    def new_stream(self, *, standalone: bool = False) -> str:
        self._streams += 1
        key = f"{STANDALONE}{self._streams}" if standalone else str(self._streams)
        self._events[key] = deque(maxlen=MAX_EVENTS)
        self._counts[key] = 0
        while len(self._events) > MAX_STREAMS:
            oldest = next(iter(self._events))
            del self._events[oldest], self._counts[oldest]
            self._ended.discard(oldest)
        return key

    def next_event_id(self, key: str) -> str:
        return f"{key}-{self._counts.get(key, 0) + 1}"

    def record(self, key: str, frame: bytes, *, last: bool = False) -> None:
        events = self._events.get(key)
        if events is not None:
            events.append(frame)
            self._counts[key] += 1
        if last:
            self._ended.add(key)

    def replay(self, last_event_id: str) -> tuple[str, list[bytes], bool] | None:
        key, _, seq = last_event_id.rpartition("-")
        events = self._events.get(key)
        if events is None or not (seq.isascii() and seq.isdigit()):  # the client's header: "²" is a digit too
            return None
        dropped = self._counts[key] - len(events)
        if not dropped <= int(seq) <= self._counts[key]:
            return None
        return key, list(islice(events, int(seq) - dropped, None)), key in self._ended


class SessionStore(Protocol):
    """Where a server's sessions live. The in-memory default is :class:`MemorySessionStore`;
    a shared store for several processes implements the same methods, and says so with
    ``shared = True``: a client's answer that no request of this process waits for is then
    handed to the host (:class:`InputArrived` with no exchange) to pass to the other processes.
    A store that writes sessions elsewhere keeps each one's ``principal`` with what
    ``initialize`` fixed: the engine refuses a session to any other principal (404)."""

    def get(self, session_id: str, now: float) -> Session | None:
        """The live session, its ``last_seen`` moved to ``now``; ``None`` when unknown,
        ended or expired (the caller answers 404)."""
        ...

    def add(self, session: Session, now: float) -> bool:
        """Keep a new session; ``False`` when the store has no room."""
        ...

    def remove(self, session_id: str) -> Session | None:
        ...

    def save(self, session: Session) -> None:
        """The engine changed what ``session`` remembers (``notifications/initialized``,
        ``logging/setLevel``, ``resources/subscribe`` or ``unsubscribe``): a store shared by
        several processes writes it where the others read it; an in-memory one has nothing to do."""
        ...

    def claim_stream(self, session: Session, now: float) -> bool:
        """Take the session's one GET stream (Streamable HTTP: a message goes on one stream
        only, never on several). The engine asks after finding none open in this process
        (``session.stream``); ``False`` when a stream of another process of the server holds
        it (the engine answers 409). The engine gives it back with :meth:`release_stream`
        when that stream ends, however it ends."""
        ...

    def release_stream(self, session: Session) -> None:
        """The session's GET stream that :meth:`claim_stream` let open here has ended."""
        ...

    def __len__(self) -> int:
        ...


class MemorySessionStore:
    """Sessions in this process's memory, bounded: at most ``max_sessions`` (default 1000),
    each dropped after ``idle_timeout`` seconds without a request (default 1800; a session
    with an open GET stream or a request waiting for input is not idle), and at most
    ``max_sessions_per_principal`` (default 100; ``None``: no such bound) for one principal.

    When a bound is reached, a new session takes the place of the oldest session never used
    after its ``initialize`` (no request has named it since), of that principal for the
    per-principal bound, of anyone for the whole store; only when there is none is it
    refused (the engine answers 503). So a flood of bare initializes neither locks new
    clients out nor pushes out a session in use, and one principal cannot fill the store."""

    def __init__(
        self, *, max_sessions: int = 1000, idle_timeout: float = 1800.0, max_sessions_per_principal: int | None = 100,
    ) -> None:
        if max_sessions < 1 or not idle_timeout > 0 or (max_sessions_per_principal is not None and max_sessions_per_principal < 1):
            raise LocalProtocolError(
                "max_sessions and max_sessions_per_principal must be at least 1 and idle_timeout positive"
            )
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.max_sessions_per_principal = max_sessions_per_principal
        self._sessions: dict[str, Session] = {}
        self._unused: dict[str, None] = {}  # ids never named since their initialize, oldest first
        self._per_principal: dict[str, int] = {}

    def _expired(self, session: Session, now: float) -> bool:
        busy = session.stream is not None or session.waiting
        return not session.open or (not busy and now - session.last_seen > self.idle_timeout)

    def _drop(self, session_id: str) -> Session | None:
        session = self._sessions.pop(session_id, None)
        self._unused.pop(session_id, None)
        if session is not None and session.principal is not None:
            left = self._per_principal[session.principal] - 1
            if left:
                self._per_principal[session.principal] = left
            else:
                del self._per_principal[session.principal]
        return session

    def _evict_unused(self, principal: str | None = None) -> bool:
        """Drop the oldest never-used session (of ``principal`` when given); whether there was one."""
        for key in self._unused:
            if principal is None or self._sessions[key].principal == principal:
                self._drop(key)
                return True
        return False

    def get(self, session_id: str, now: float) -> Session | None:
        session = self._sessions.get(session_id)
        if session is None:
            return None
        if self._expired(session, now):
            self._drop(session_id)
            return None
        session.last_seen = max(session.last_seen, now)
        if self._unused:
            self._unused.pop(session_id, None)
        return session

    def add(self, session: Session, now: float) -> bool:
        if session.id is None:
            raise LocalProtocolError("Only a session with an id can be stored")
        if session.id in self._sessions:
            raise LocalProtocolError(f"Session id {session.id!r} was issued twice: the host's ids must be unique")
        principal, cap = session.principal, self.max_sessions_per_principal
        if principal is not None and cap is not None and self._per_principal.get(principal, 0) >= cap:
            self._purge(now)
            if self._per_principal.get(principal, 0) >= cap and not self._evict_unused(principal):
                return False
        if len(self._sessions) >= self.max_sessions:
            self._purge(now)
            if len(self._sessions) >= self.max_sessions and not self._evict_unused():
                return False
        self._sessions[session.id] = session
        self._unused[session.id] = None
        if principal is not None:
            self._per_principal[principal] = self._per_principal.get(principal, 0) + 1
        return True

    def _purge(self, now: float) -> None:
        for key in [k for k, s in self._sessions.items() if self._expired(s, now)]:
            self._drop(key)

    def remove(self, session_id: str) -> Session | None:
        return self._drop(session_id)

    def save(self, session: Session) -> None:
        pass  # the session object is the stored one

    def claim_stream(self, session: Session, now: float) -> bool:
        return True  # one process: the engine found no GET stream open on the session here

    def release_stream(self, session: Session) -> None:
        pass

    def __len__(self) -> int:
        return len(self._sessions)
