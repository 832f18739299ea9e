"""An anyio + h11 MCP client over Streamable HTTP, driving the sans-IO :class:`mcpwire.Client`.

    client = Client(Implementation(name="me", version="1"), capabilities={"elicitation": {"form": {}}})
    async with HttpClient("http://127.0.0.1:8000/mcp", client) as c:
        await c.discover()
        tools = await c.list_tools()
        result = await c.call_tool("echo", {"text": "hi"}, on_input=answer, on_progress=show)

The same class runs under ``trio.run`` and ``asyncio.run``: tasks, locks, timeouts and sockets
are anyio's (TLS through anyio's ``TLSStream``), and importing this module loads no trio. The
HTTP/1.1 read loop is our own, on h11: no HTTP proxies, no HTTP/2 (docs/client.md, "asyncio
and trio", says why and what to do instead).

:class:`Session` (:mod:`mcpwire_adapters.client.session`, re-exported here with :class:`Subscription`,
:class:`ServerError`, :class:`TransportError`, ``InputHandler`` and ``ListenEvent``) holds what
every transport shares: the -32022 version fallback (once per request), the MRTR loop
(``on_input`` gets the typed input requests of each round and returns the answers; at most
``max_rounds`` rounds), pagination, and turning an :class:`ErrorResult` into
:class:`ServerError`. :class:`HttpClient` adds a pool of keep-alive connections: each request
in flight has one of its own (at most ``max_connections``, 8, at once; the others wait), kept
alive and reused afterwards; connect and read timeouts, and a response size limit. Cancelling the awaiting task
closes the connection, which is how HTTP cancels a request
(<https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/cancellation#transport-specific-cancellation>);
on an initialize-era session, where a disconnect is not a cancellation, it also POSTs
``notifications/cancelled`` naming the request (not for ``initialize``), shielded from the
cancellation and given up after ``cancel_timeout`` (5 s; a failure is logged).

A request is sent once. A kept-alive connection the server closed while it was idle is found
dead before anything is written to it (:func:`_still_open`) and another one is taken, and a
request whose write failed (it did not reach the server whole) goes once more on a new
connection; but once the request is written, a failure of the connection (closed, reset,
unreadable HTTP, silent past ``read_timeout``) raises :class:`MaybeDelivered`: the server may
have processed it, and POST is not idempotent (RFC 9110 section 9.2.2). Only the GET that
resumes an initialize-era response stream (GET is idempotent) is sent again after it was
written. Every failure of h11, anyio or the socket reaches the caller as a
:class:`TransportError`, its cause chained.

Initialize-era servers (specification 2025-11-25: Basic > Transports > Streamable HTTP):
:meth:`Session.connect` probes and falls back to ``initialize``; the ``Mcp-Session-Id`` of the
answer is kept and sent (an ``initialize`` answered with a status other than 2xx opened no
session: ``RemoteProtocolError``, its ``data`` naming the status); the server's requests on a
response stream (and its invalid messages, with the JSON-RPC error the server engine would give;
both count against ``max_rounds``, pings aside) are answered with a POST on a connection
of their own (the response stream keeps the main one); a response stream that
ends early after an event id is resumed with a GET carrying ``Last-Event-ID`` after the
stream's ``retry`` delay (at most ``max_resumptions`` times per request); a 404 on the session
raises :class:`SessionExpired` to the session layer, which starts a new session (a 404 on the
``notifications/initialized`` of the handshake too, at most three sessions in a row); closing the
client sends ``DELETE`` to end the session. Inside ``async with``, the session's GET stream
(:mod:`mcpwire_adapters.client.session_stream`) is read in the background from the handshake
on, one per session: the server's requests on it are answered with the handler of the one call
in flight, else the client's ``on_input``; its log messages go to the ``on_log`` of the one call
in flight, else the client's; progress to the call whose token it names; list changes and
resource updates to :meth:`Session.listen`. A 404 on it makes the next request raise
:class:`SessionExpired` (a new session), as a 404 on a POST does.

:meth:`Session.listen` opens a ``subscriptions/listen`` stream
(<https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions>) as a
:class:`Subscription`; over HTTP each one has its own connection, so requests keep flowing
on the shared one while it is open::

    async with c.listen({"toolsListChanged": True}) as sub:
        async for event in sub:      # ListenAck, then ListChanged / ResourceUpdated
            ...
"""

from __future__ import annotations

import contextlib
import logging
import select
import ssl
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Self
from urllib.parse import urlsplit

import anyio
import anyio.abc
import h11

from mcpwire import (
    Client, ClientEvent, ErrorCode, ErrorResult, HttpResponseParser, InputRequired, OutgoingMessage, OutgoingRequest,
    Progress, ResultReceived, jsonschema_validator,
)
from mcpwire.sessions import InvalidMessage, Resume
from mcpwire.types import Implementation

# The transport-neutral half lives in .session (no h11 there); re-exported here, where it was.
from ..errors import MaybeDelivered, McpwireAdapterError, UsageError
from .cache import ResponseCache, http_where
from .session_feed import FeedListen, SessionFeed
from .session_stream import DEFAULT_RETRY_MS, SessionStreamReader, close_quietly, receive_some
from .session import (
    ElicitationHandler, EventHandler, InputHandler, ListenEvent, RootsHandler, SamplingHandler, ServerError, Session,
    SessionExpired, Subscription, TransportError,
)

if TYPE_CHECKING:
    from mcpwire.auth import AuthorizationFlow

    from ..oauth.client import OAuth

__all__ = [
    "ElicitationHandler", "EventHandler", "HttpClient", "InputHandler", "ListenEvent", "MaybeDelivered", "RootsHandler",
    "SamplingHandler", "ServerError", "Session", "SessionExpired", "Subscription", "TransportError",
]

_log = logging.getLogger("mcpwire.client")


class HttpClient(Session):
    """Streamable HTTP over one keep-alive h11 connection (http or https)."""

    drain_timeout: float = 1.0
    """Seconds ``aclose`` lets the session's GET stream run on after the ``DELETE`` that ended
    the session, so that what the server sent on it before is still handed on (the server
    closes the stream with the session)."""

    def __init__(
        self,
        url: str,
        client: Client | None = None,
        *,
        connect_timeout: float = 10.0,
        read_timeout: float = 60.0,
        max_response_bytes: int = 16 * 1024 * 1024,
        max_rounds: int = 8,
        extra_headers: Sequence[tuple[bytes, bytes]] = (),
        ssl_context: ssl.SSLContext | None = None,
        on_input: InputHandler | None = None,
        on_log: EventHandler | None = None,
        elicitation: ElicitationHandler | None = None,
        sampling: SamplingHandler | None = None,
        roots: RootsHandler | None = None,
        max_resumptions: int = 16,
        max_connections: int = 8,
        auth: OAuth | None = None,
        cache: ResponseCache | None = None,
    ) -> None:
        super().__init__(client or Client(Implementation(name="mcpwire", version="0.1.0"), validator=jsonschema_validator()),
                         max_rounds=max_rounds,
                         on_input=on_input, on_log=on_log, elicitation=elicitation, sampling=sampling, roots=roots)
        self._setup_lock = anyio.Lock()
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(f"not an http(s) URL: {url!r}")
        self.url = url
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port or (443 if self._https else 80)
        self._authority = parts.netloc.rsplit("@", 1)[-1].encode("ascii")
        self._target = ((parts.path or "/") + (f"?{parts.query}" if parts.query else "")).encode("ascii")
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.max_response_bytes = max_response_bytes
        self._extra = tuple(extra_headers)
        self._ssl = ssl_context
        if max_connections < 1:
            raise UsageError("max_connections must be at least 1")
        self.max_connections = max_connections
        self._idle: list[tuple[anyio.abc.ByteStream, h11.Connection]] = []  # keep-alive, newest last
        self._slots = anyio.Semaphore(max_connections)  # requests in flight, one connection each
        # Requests (by id) whose write began and that have no final answer yet: cancelling one of
        # an initialize-era session sends notifications/cancelled (_exchange).
        self._written: set[tuple[type, Any]] = set()
        self.max_resumptions = max_resumptions
        self._issued: str | None = None  # the Mcp-Session-Id of the last initialize answer
        self._stack = contextlib.AsyncExitStack()
        self._tasks: anyio.abc.TaskGroup | None = None  # open inside `async with`: the GET stream's tasks
        self._session_stream: SessionStreamReader | None = None
        self._feed = SessionFeed()
        self._gone: str | None = None  # a session the server answered 404 for on its GET stream
        # The requests in flight with a progress token, by token: their ids, and where their
        # events go (a server may report progress on the GET stream).
        self._progress_owners: dict[str | int, str | int] = {}
        self._progress_events: dict[str | int, Callable[[ClientEvent], Awaitable[None]]] = {}
        # OAuth (adapters/oauth/client.py, docs/auth.md): headers on every request; a 401/403 runs a flow.
        self.auth = auth
        self._auth = auth.bind(url) if auth is not None else None
        #: How many TCP connections were opened (keep-alive reuse is visible here).
        self.connections_opened = 0
        self.cache = cache  # a ResponseCache (adapters/client/cache.py), or None

    async def __aenter__(self) -> Self:
        self._stack = contextlib.AsyncExitStack()
        self._tasks = await self._stack.enter_async_context(anyio.create_task_group())
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            await self.aclose()
        finally:
            tasks, self._tasks = self._tasks, None
            if tasks is not None:
                tasks.cancel_scope.cancel()
            await self._stack.aclose()

    async def aclose(self) -> None:
        """End the initialize-era session, if the server issued one (DELETE; a 405 means the
        server does not let clients end sessions), stop its GET stream (once the server ended
        it, at most :attr:`drain_timeout` after an accepted DELETE), and close the connection."""
        reader, self._session_stream = self._session_stream, None
        gone = self._gone is not None and self._gone == self.client.session_id
        headers = self.client.end_session()  # the stream reopens no more: its session is over
        if headers is not None and not gone:
            with anyio.CancelScope(shield=True):
                status = 0
                with anyio.move_on_after(self.connect_timeout):
                    try:
                        status = await self._one_shot(b"DELETE", headers, b"")
                    except TransportError:
                        pass
                if reader is not None and reader.streaming and 200 <= status < 300:
                    with anyio.move_on_after(self.drain_timeout):
                        await reader.ended.wait()
        if reader is not None:
            reader.scope.cancel()
        self._feed.close()
        idle, self._idle = self._idle, []
        for stream, _ in idle:
            await close_quietly(stream)

    @property
    def progress_tokens(self) -> Mapping[str | int, str | int]:
        """The progress token of each request in flight that has one, naming the request."""
        return self._progress_owners

    async def open_connection(self) -> anyio.abc.ByteStream:
        """A new TCP (and TLS) connection to the server, within ``connect_timeout``, outside the
        keep-alive pool (counted in :attr:`connections_opened`). Requests get theirs from the
        pool; a listen stream and the session's GET stream hold one of their own as long as
        they last."""
        stream: anyio.abc.ByteStream
        try:
            with anyio.fail_after(self.connect_timeout):
                if self._https:
                    # Not standard-compatible: a server that closes without close_notify ends
                    # the stream (h11 tells a cut-off body from a whole one).
                    stream = await anyio.connect_tcp(self._host, self._port, tls=True, tls_hostname=self._host,
                                                     ssl_context=self._ssl or ssl.create_default_context(),
                                                     tls_standard_compatible=False)
                else:
                    stream = await anyio.connect_tcp(self._host, self._port)
        except (OSError, anyio.BrokenResourceError, anyio.EndOfStream) as exc:  # OSError: TimeoutError too
            raise TransportError(f"cannot connect to {self.url}: {exc!r}") from exc
        self.connections_opened += 1
        return stream

    async def _connect(self, reuse: bool) -> tuple[anyio.abc.ByteStream, h11.Connection, bool]:
        """An idle keep-alive connection (``reuse``), else a new one; and whether it was reused.
        An idle connection the server has closed meanwhile is closed here, nothing written to it."""
        while reuse and self._idle:
            stream, conn = self._idle.pop()
            if _still_open(stream):
                return stream, conn, True
            await close_quietly(stream)
        stream = await self.open_connection()
        return stream, h11.Connection(h11.CLIENT, max_incomplete_event_size=64 * 1024), False

    async def _release(self, stream: anyio.abc.ByteStream, conn: h11.Connection) -> None:
        """Back to the idle pool when the exchange ended cleanly, else closed."""
        if conn.our_state is h11.DONE and conn.their_state is h11.DONE:
            conn.start_next_cycle()
            if len(self._idle) < self.max_connections:
                self._idle.append((stream, conn))
                return
        await close_quietly(stream)

    def _request_bytes(self, conn: h11.Connection, request: OutgoingRequest | OutgoingMessage) -> bytes:
        return self.encode_http_request(conn, b"POST", request.headers, request.body)

    def encode_http_request(self, conn: h11.Connection, method: bytes, headers: Sequence[tuple[bytes, bytes]],
                            body: bytes) -> bytes:
        """The bytes of one HTTP request to the server on ``conn`` (an h11 client connection):
        ``Host``, ``Content-Length`` (not on a GET), ``headers``, ``extra_headers`` and the
        OAuth headers, then ``body``. Used for every request, listen stream and GET stream."""
        head = [(b"Host", self._authority), *([(b"Content-Length", str(len(body)).encode())] if method != b"GET" else []),
                *headers, *self._extra, *self._auth_headers()]
        out = conn.send(h11.Request(method=method, target=self._target, headers=head)) or b""
        if body:
            out += conn.send(h11.Data(data=body)) or b""
        return out + (conn.send(h11.EndOfMessage()) or b"")

    def _auth_headers(self) -> list[tuple[bytes, bytes]]:
        if self._auth is None or self.auth is None:
            return []
        return [(k.encode(), v.encode()) for k, v in self._auth.headers(now=self.auth.clock())]

    def _auth_verdict(self, event: h11.Response) -> AuthorizationFlow | str:
        if self._auth is None or self.auth is None:
            return "ok"
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in event.headers]
        return self._auth.on_response(event.status_code, headers, now=self.auth.clock())

    async def _one_shot(self, method: bytes, headers: Sequence[tuple[bytes, bytes]], body: bytes) -> int:
        """Send one message on a connection of its own, read the whole response, close; return
        the status. For what must not wait behind the main connection: answers to the server's
        requests while their call's response stream is open, notifications, DELETE."""
        stream = await self.open_connection()
        conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=64 * 1024)
        status = 0
        try:
            await stream.send(self.encode_http_request(conn, method, headers, body))
            size = 0
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    with anyio.fail_after(self.read_timeout):
                        data = await receive_some(stream)
                    size += len(data)
                    if size > self.max_response_bytes:
                        raise TransportError(f"response from {self.url} exceeds {self.max_response_bytes} bytes")
                    conn.receive_data(bytes(data))
                elif isinstance(event, h11.Response):
                    status = event.status_code
                elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                    return status
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError, h11.RemoteProtocolError) as exc:
            raise TransportError(f"{method.decode()} to {self.url} failed: {exc!r}") from exc
        finally:
            await close_quietly(stream)

    async def _deliver(self, message: OutgoingMessage) -> None:
        self._check_session()
        status = await self._one_shot(b"POST", message.headers, message.body)
        if status == 404 and self.client.session_id is not None:
            raise SessionExpired(f"{self.url} no longer knows session {self.client.session_id!r} (HTTP 404)",
                                 self.client.session_id)
        if not 200 <= status < 300:
            raise TransportError(f"{self.url} refused a message with HTTP {status}")

    async def _reject(self, event: InvalidMessage) -> None:
        await self._deliver(self.client.reject(event))

    def _issued_session(self) -> str | None:
        return self._issued

    def _cache_where(self) -> tuple[str, str]:
        creds = self._auth.credentials if self._auth is not None else None
        return http_where(self.url, self._extra, creds.access_token if creds is not None else None)

    def _subscription(self, request: OutgoingRequest) -> Subscription:
        return _HttpSubscription(self, request)

    def _session_listen(self, notifications: Mapping[str, Any]) -> Subscription:
        return FeedListen(self, notifications, self._feed, self._listening)

    async def _listening(self) -> None:
        if self._tasks is None:
            raise TransportError("listening to an initialize-era session needs `async with HttpClient(...)`")
        if self._session_stream is None or not self._session_stream.running:
            await self._start_session_stream()

    async def _session_started(self) -> None:
        # Every session gets its GET stream: the server may send on it what belongs to no
        # request (log messages, list changes, its own requests). The old session's stream
        # (if any) belongs to a session the server forgot.
        if self._session_stream is not None:
            self._session_stream.scope.cancel()
            self._session_stream = None
        if self._tasks is not None:
            await self._start_session_stream()

    async def _start_session_stream(self) -> None:
        # Wait for the stream's head (within connect_timeout): a server may send a call's
        # messages on the GET stream, and drops them when no stream is open yet.
        assert self._tasks is not None
        stream = self._session_stream = SessionStreamReader(
            self, self._tasks, self._feed, self._answer_server, self._unrelated_log, self._stream_progress,
            self._session_gone, self._reject)
        self._tasks.start_soon(stream.run)
        with anyio.move_on_after(self.connect_timeout):
            await stream.opened.wait()

    async def _stream_progress(self, event: Progress) -> None:
        on_event = self._progress_events.get(event.progress_token)
        if on_event is not None:  # else the call ended meanwhile
            await on_event(event)

    def _session_gone(self, session_id: str) -> None:
        self._gone = session_id

    def _check_session(self) -> None:
        """Raise :class:`SessionExpired` when the session's GET stream learned that the server
        forgot it: the session layer then starts a new one, as after a 404 on a POST."""
        session_id = self.client.session_id
        if session_id is not None and session_id == self._gone:
            raise SessionExpired(f"{self.url} no longer knows session {session_id!r} (HTTP 404 on its GET stream)",
                                 session_id)

    async def _exchange(self, request: OutgoingRequest, on_event: Callable[[ClientEvent], Awaitable[None]]) -> ClientEvent:
        # Cancelled once its write began, a request of an initialize-era session is cancelled
        # with notifications/cancelled, not by the disconnect alone (2025-11-25, Basic >
        # Transports > Streamable HTTP: "Disconnection SHOULD NOT be interpreted as the client
        # cancelling its request"); never initialize (Basic > Utilities > Cancellation). On
        # 2026-07-28 closing the connection is the cancellation, and nothing is sent.
        key = (type(request.id), request.id)
        era = self.client.initialize_era and request.method != "initialize"
        if era:
            self._check_session()
        token = request.progress_token if era else None
        if token is not None:
            self._progress_owners[token], self._progress_events[token] = request.id, on_event
        try:
            async with self._slots:
                if self._auth is None:
                    return await self._resumable(request, on_event)
                self._auth.begin_request()
                while True:  # ends: ClientAuth bounds the attempts and raises AuthError past them
                    try:
                        return await self._resumable(request, on_event)
                    except _Reauthorize as again:
                        if again.flow is not None and self.auth is not None:
                            await self.auth.run(self._auth, again.flow)
        except anyio.get_cancelled_exc_class():
            if era and key in self._written:
                self._written.discard(key)
                await self._notify_cancelled(request)  # shielded and bounded; the connection is closed already
            raise
        finally:
            self._written.discard(key)
            if token is not None and self._progress_owners.get(token) == request.id:
                del self._progress_owners[token], self._progress_events[token]

    async def _resumable(self, request: OutgoingRequest,
                         on_event: Callable[[ClientEvent], Awaitable[None]]) -> ClientEvent:
        """One request to its final event, resuming its response stream when it ends early."""
        outcome = await self._attempt(request, on_event, None)
        resumptions = 0
        while isinstance(outcome, Resume):
            # 2025-11-25: the response stream ended before the response, after an event id;
            # wait the stream's retry, then GET with Last-Event-ID for the rest (SEP-1699).
            resumptions += 1
            if resumptions > self.max_resumptions:
                raise TransportError(f"{request.method}: the response stream was resumed {self.max_resumptions} "
                                     "times without a response")
            await anyio.sleep((DEFAULT_RETRY_MS if outcome.retry_ms is None else outcome.retry_ms) / 1000)
            outcome = await self._attempt(request, on_event, outcome.last_event_id)
        return outcome

    async def _attempt(self, request: OutgoingRequest, on_event: Callable[[ClientEvent], Awaitable[None]],
                       resume_from: str | None) -> ClientEvent | Resume:
        """One try on a kept-alive connection, and a second on a new one only when the first
        provably did not deliver the request (``_Stale``): its write failed, or, for the GET
        resuming a stream (idempotent), the connection ended before a response head."""
        for attempt in range(2):
            stream, conn, reused = await self._connect(reuse=attempt == 0)
            try:
                outcome = await self._round_trip(stream, conn, request, on_event, resume_from)
            except _Stale as stale:
                await close_quietly(stream)
                if not reused:
                    raise TransportError(str(stale)) from stale.__cause__
            except _Reauthorize:
                self._written.discard((type(request.id), request.id))  # refused unheard: nothing runs
                await self._release(stream, conn)  # the challenge was read whole: the connection is reusable
                raise
            except BaseException:
                await close_quietly(stream)  # cancelled, timed out or broken: the connection is unusable
                raise
            else:
                await self._release(stream, conn)
                return outcome
        raise TransportError(f"{self.url} closed the connection without a response")  # pragma: no cover

    async def _round_trip(self, stream: anyio.abc.ByteStream, conn: h11.Connection, request: OutgoingRequest,
                          on_event: Callable[[ClientEvent], Awaitable[None]],
                          resume_from: str | None = None) -> ClientEvent | Resume:
        if resume_from is None:
            head = self._request_bytes(conn, request)
        else:
            head = self.encode_http_request(conn, b"GET", self.client.stream_headers(resume_from), b"")
        self._written.add((type(request.id), request.id))  # from here the server may have it (or part of it)
        try:
            await stream.send(head)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            # The write failed: the request did not reach the server whole, so nothing of it ran.
            sent = request.method if resume_from is None else f"the GET resuming {request.method}"
            raise _Stale(f"cannot send {sent} to {self.url}: {exc!r}") from exc
        # Written: from here on the server may have the request, and a failure is not resent.
        parser: HttpResponseParser | None = None
        final: ClientEvent | None = None
        received = 0
        reauthorize: _Reauthorize | None = None
        while True:
            try:
                event = conn.next_event()
            except h11.RemoteProtocolError as exc:  # a head or body cut off by the end of the connection, or no HTTP
                return self._interrupted(request, resume_from, parser,
                                         f"the response from {self.url} was cut off or unreadable ({exc})", exc)
            if event is h11.NEED_DATA:
                try:
                    with anyio.fail_after(self.read_timeout):
                        data = await receive_some(stream)
                except TimeoutError as exc:
                    raise self._lost(request, f"no data from {self.url} for {self.read_timeout} s") from exc
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
                    where = "before a response" if parser is None else "mid-response"
                    return self._interrupted(request, resume_from, parser,
                                             f"connection to {self.url} broke {where}: {exc!r}", exc)
                if not data and received == 0:  # h11 would call an end before any response byte a protocol error
                    return self._interrupted(request, resume_from, parser,
                                             f"{self.url} closed the connection without a response", None)
                received += len(data)
                if received > self.max_response_bytes:
                    raise TransportError(f"response from {self.url} exceeds {self.max_response_bytes} bytes")
                conn.receive_data(bytes(data))
                continue
            if isinstance(event, h11.Response):
                if event.status_code in (301, 302, 307, 308):
                    raise TransportError(f"{self.url} redirects (HTTP {event.status_code}); not followed")
                verdict = self._auth_verdict(event)
                if verdict != "ok":  # read the challenge's body to the end, keep the connection, send again
                    reauthorize = _Reauthorize(None if isinstance(verdict, str) else verdict)
                headers = dict(event.headers)
                if reauthorize is None and request.method == "initialize":
                    issued = headers.get(b"mcp-session-id")
                    self._issued = issued.decode("ascii", "replace") if issued else None
                elif reauthorize is None and event.status_code == 404 and self.client.initialize_era \
                        and self.client.session_id is not None:
                    raise SessionExpired(f"{self.url} no longer knows session {self.client.session_id!r} (HTTP 404)",
                                 self.client.session_id)
                ctype = headers.get(b"content-type", b"")
                parser = HttpResponseParser(self.client, request, status=event.status_code, content_type=ctype,
                                            max_body_bytes=self.max_response_bytes, resumed=resume_from is not None)
            elif isinstance(event, h11.Data):
                assert parser is not None
                if reauthorize is None:
                    final = await self._dispatch(parser.feed(bytes(event.data)), final, on_event)
            elif isinstance(event, h11.EndOfMessage):
                assert parser is not None
                if reauthorize is None:
                    final = await self._dispatch(parser.close(), final, on_event)
                break
            elif isinstance(event, h11.ConnectionClosed):
                where = "without a response" if parser is None else "mid-response"
                return self._interrupted(request, resume_from, parser, f"{self.url} closed the connection {where}", None)
        if reauthorize is not None:
            raise reauthorize
        if final is None and parser is not None and parser.resume is not None:
            return parser.resume
        if final is None:
            return ErrorResult(request_id=request.id, code=ErrorCode.TRANSPORT_ERROR, message="no response")  # pragma: no cover
        return final

    def _interrupted(self, request: OutgoingRequest, resume_from: str | None, parser: HttpResponseParser | None,
                     what: str, cause: BaseException | None) -> Resume:
        """The connection failed after the request was written (``what`` says how, ``cause`` is
        the error underneath): where to resume an initialize-era response stream that had event
        ids; else ``_Stale`` for a resuming GET that got no response head (idempotent: sent
        again on a new connection when this one was kept alive); else :class:`MaybeDelivered`."""
        if parser is not None:
            resume = parser.interrupted()
            if resume is not None:
                return resume
        elif resume_from is not None:
            raise _Stale(what) from cause
        raise self._lost(request, what) from cause

    @staticmethod
    def _lost(request: OutgoingRequest, what: str) -> MaybeDelivered:
        return MaybeDelivered(f"{what}; {request.method} (id {request.id!r}) may have been processed by the server, "
                              "and was not sent again", request.method, request.id)

    async def _dispatch(self, events: list[ClientEvent], final: ClientEvent | None,
                        on_event: Callable[[ClientEvent], Awaitable[None]]) -> ClientEvent | None:
        for event in events:
            if isinstance(event, (ResultReceived, ErrorResult, InputRequired)):
                final = event
            else:  # an InvalidMessage too: the session answers it, and counts it against max_rounds
                await on_event(event)
        return final


class _HttpSubscription(Subscription):
    """A listen stream on a connection of its own: closing that connection cancels it (on HTTP
    a disconnect is the cancellation)."""

    def __init__(self, session: HttpClient, request: OutgoingRequest) -> None:
        super().__init__(session, request)
        self._http = session
        self._stream: anyio.abc.ByteStream | None = None
        self._conn: h11.Connection | None = None
        self._parser: HttpResponseParser | None = None
        self._finished = False  # the response body ended

    async def _start(self) -> None:
        assert self.request is not None
        self._parser, self._finished = None, False
        self._stream = await self._http.open_connection()
        self._conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=64 * 1024)
        request = self.request
        try:
            await self._stream.send(self._http.encode_http_request(self._conn, b"POST", request.headers, request.body))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            raise TransportError(f"cannot send to {self._http.url}: {exc!r}") from exc

    async def _receive(self) -> list[ClientEvent] | None:
        stream, conn, url = self._stream, self._conn, self._http.url
        if self._finished or stream is None or conn is None:
            return None
        while True:
            try:
                event = conn.next_event()
            except h11.RemoteProtocolError as exc:
                raise TransportError(f"invalid HTTP from {url}: {exc}") from exc
            if event is h11.NEED_DATA:
                # The server sends a keepalive comment every few seconds on an idle stream, so
                # read_timeout of silence means the connection is dead.
                try:
                    with anyio.fail_after(self._http.read_timeout):
                        data = await receive_some(stream)
                except TimeoutError:
                    raise TransportError(f"no data from {url} for {self._http.read_timeout} s") from None
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
                    raise TransportError(f"connection to {url} broke: {exc!r}") from exc
                conn.receive_data(bytes(data))
            elif isinstance(event, h11.Response):
                if event.status_code in (301, 302, 307, 308):
                    raise TransportError(f"{url} redirects (HTTP {event.status_code}); not followed")
                ctype = dict(event.headers).get(b"content-type", b"")
                limit = self._http.max_response_bytes
                assert self.request is not None
                self._parser = HttpResponseParser(self._http.client, self.request, status=event.status_code,
                                                  content_type=ctype, max_body_bytes=limit, max_event_bytes=limit)
            elif isinstance(event, h11.Data):
                assert self._parser is not None
                events = self._parser.feed(bytes(event.data))
                if events:
                    return events
            elif isinstance(event, h11.EndOfMessage):
                assert self._parser is not None
                self._finished = True
                return self._parser.close()
            elif isinstance(event, h11.ConnectionClosed):
                raise TransportError(f"{url} closed the listen stream mid-response")

    async def _stop(self) -> None:
        stream, self._stream, self._conn = self._stream, None, None
        if stream is not None:
            await close_quietly(stream)


def _still_open(stream: anyio.abc.ByteStream) -> bool:
    """Whether an idle kept-alive connection can carry a request. Nothing is due on an idle
    HTTP/1.1 connection, so a socket with something to read is done with: the server closed or
    reset it (its idle timeout, say), or sent bytes no request asked for. Checked before writing,
    the request never meets a connection known dead (urllib3 and httpcore check alike); a
    stream that shows no socket cannot tell (True), and its write decides."""
    sock = stream.extra(anyio.abc.SocketAttribute.raw_socket, None)
    if sock is None:
        return True
    try:
        if sock.fileno() < 0:
            return False
        if hasattr(select, "poll"):
            poller = select.poll()
            poller.register(sock, select.POLLIN)
            return not poller.poll(0)  # POLLIN, POLLHUP or POLLERR: the end, a reset, or stray bytes
        readable, _, _ = select.select([sock], [], [], 0)
        return not readable
    except (OSError, ValueError):
        return False


class _Stale(McpwireAdapterError):
    """The request provably did not reach the server, so it may go again on a new connection: its
    write failed, or it was the GET resuming a response stream (idempotent) and the connection
    ended before a response head. ``_attempt`` retries once when the connection was a reused one."""


class _Reauthorize(McpwireAdapterError):
    """The response was an OAuth challenge: run ``flow`` (None: just send again), then retry."""

    def __init__(self, flow: AuthorizationFlow | None) -> None:
        super().__init__("reauthorize")
        self.flow = flow
