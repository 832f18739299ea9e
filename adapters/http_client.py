"""A trio + h11 MCP client over Streamable HTTP, driving the sans-IO :class:`mcpwire.Client`.

    client = Client(Implementation(name="me", version="1"), capabilities={"elicitation": {"form": {}}})
    async with HttpClient("http://127.0.0.1:8000/mcp", client) as c:
        await c.discover()
        tools = await c.list_tools()
        result = await c.call_tool("echo", {"text": "hi"}, on_input=answer, on_progress=show)

:class:`Session` (:mod:`mcpwire_adapters.session`, re-exported here with :class:`Subscription`,
:class:`ServerError`, :class:`TransportError`, ``InputHandler`` and ``ListenEvent``) holds what
every transport shares: the -32022 version fallback (once per request), the MRTR loop
(``on_input`` gets the typed input requests of each round and returns the answers; at most
``max_rounds`` rounds), pagination, and turning an :class:`ErrorResult` into
:class:`ServerError`. :class:`HttpClient` adds one keep-alive connection (reused across
requests, reopened when the server closed it), connect and read timeouts, and a response
size limit. Requests on one HttpClient are sent one at a time. Cancelling the awaiting task
closes the connection, which is how HTTP cancels a request
(<https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/cancellation#transport-specific-cancellation>).

:meth:`Session.listen` opens a ``subscriptions/listen`` stream
(<https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions>) as a
:class:`Subscription`; over HTTP each one has its own connection, so requests keep flowing
on the shared one while it is open::

    async with c.listen({"toolsListChanged": True}) as sub:
        async for event in sub:      # ListenAck, then ListChanged / ResourceUpdated
            ...
"""

from __future__ import annotations

import ssl
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Self
from urllib.parse import urlsplit

import h11
import trio

from mcpwire import Client, ClientEvent, ErrorCode, ErrorResult, HttpResponseParser, InputRequired, OutgoingRequest, ResultReceived
from mcpwire.types import Implementation

# The transport-neutral half lives in .session (no h11 there); re-exported here, where it was.
from .session import EventHandler, InputHandler, ListenEvent, ServerError, Session, Subscription, TransportError

if TYPE_CHECKING:
    from mcpwire.auth import AuthorizationFlow

    from .oauth import OAuth

__all__ = [
    "EventHandler", "HttpClient", "InputHandler", "ListenEvent", "ServerError", "Session", "Subscription", "TransportError",
]

class HttpClient(Session):
    """Streamable HTTP over one keep-alive h11 connection (http or https)."""

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
        auth: OAuth | None = None,
    ) -> None:
        super().__init__(client or Client(Implementation(name="mcpwire", version="0.1.0")), max_rounds=max_rounds)
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
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
        self._stream: trio.abc.Stream | None = None
        self._conn: h11.Connection | None = None
        self._lock = trio.Lock()
        # OAuth (adapters/oauth.py, docs/auth.md): headers on every request; a 401/403 runs a flow.
        self.auth = auth
        self._auth = auth.bind(url) if auth is not None else None
        #: How many TCP connections were opened (keep-alive reuse is visible here).
        self.connections_opened = 0

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        stream, self._stream, self._conn = self._stream, None, None
        if stream is not None:
            with trio.CancelScope(shield=True):
                await trio.aclose_forcefully(stream)

    async def _open_stream(self) -> trio.abc.Stream:
        """A new TCP (and TLS) connection to the server, within ``connect_timeout``."""
        try:
            with trio.fail_after(self.connect_timeout):
                stream: trio.abc.Stream = await trio.open_tcp_stream(self._host, self._port)
                if self._https:
                    context = self._ssl or ssl.create_default_context()
                    tls = trio.SSLStream(stream, context, server_hostname=self._host)
                    await tls.do_handshake()
                    stream = tls
        except (OSError, trio.TooSlowError) as exc:
            raise TransportError(f"cannot connect to {self.url}: {exc!r}") from exc
        self.connections_opened += 1
        return stream

    async def _connect(self) -> tuple[trio.abc.Stream, h11.Connection]:
        if self._stream is not None and self._conn is not None and self._conn.our_state is h11.IDLE:
            return self._stream, self._conn
        await self.aclose()
        stream = await self._open_stream()
        self._stream, self._conn = stream, h11.Connection(h11.CLIENT, max_incomplete_event_size=64 * 1024)
        return self._stream, self._conn

    def _request_bytes(self, conn: h11.Connection, request: OutgoingRequest) -> bytes:
        headers = [(b"Host", self._authority), (b"Content-Length", str(len(request.body)).encode()),
                   *request.headers, *self._extra, *self._auth_headers()]
        return (conn.send(h11.Request(method=b"POST", target=self._target, headers=headers)) or b"") + (
            conn.send(h11.Data(data=request.body)) or b"") + (conn.send(h11.EndOfMessage()) or b"")

    def _auth_headers(self) -> list[tuple[bytes, bytes]]:
        if self._auth is None or self.auth is None:
            return []
        return [(k.encode(), v.encode()) for k, v in self._auth.headers(now=self.auth.clock())]

    def _auth_verdict(self, event: h11.Response) -> AuthorizationFlow | str:
        if self._auth is None or self.auth is None:
            return "ok"
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in event.headers]
        return self._auth.on_response(event.status_code, headers, now=self.auth.clock())

    def _subscription(self, request: OutgoingRequest) -> Subscription:
        return _HttpSubscription(self, request)

    async def _exchange(self, request: OutgoingRequest, on_event: Callable[[ClientEvent], Awaitable[None]]) -> ClientEvent:
        async with self._lock:
            if self._auth is None:
                return await self._send(request, on_event)
            self._auth.begin_request()
            while True:  # ends: ClientAuth bounds the attempts and raises AuthError past them
                try:
                    return await self._send(request, on_event)
                except _Reauthorize as again:
                    if again.flow is not None and self.auth is not None:
                        await self.auth.run(self._auth, again.flow)

    async def _send(self, request: OutgoingRequest, on_event: Callable[[ClientEvent], Awaitable[None]]) -> ClientEvent:
        for attempt in range(2):
            reused = self._stream is not None and attempt == 0
            stream, conn = await self._connect()
            try:
                return await self._round_trip(stream, conn, request, on_event)
            except _Stale:
                await self.aclose()
                if not reused:
                    raise TransportError(f"{self.url} closed the connection without a response") from None
            except _Reauthorize:
                raise  # the response was read whole; the connection stays usable
            except BaseException:
                await self.aclose()  # cancelled, timed out or broken: the connection is unusable
                raise
        raise TransportError(f"{self.url} closed the connection without a response")  # pragma: no cover

    async def _round_trip(self, stream: trio.abc.Stream, conn: h11.Connection, request: OutgoingRequest,
                          on_event: Callable[[ClientEvent], Awaitable[None]]) -> ClientEvent:
        try:
            await stream.send_all(self._request_bytes(conn, request))
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            raise _Stale() from exc
        parser: HttpResponseParser | None = None
        final: ClientEvent | None = None
        received = 0
        reauthorize: _Reauthorize | None = None
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                try:
                    with trio.fail_after(self.read_timeout):
                        data = await stream.receive_some(65536)
                except trio.TooSlowError:
                    raise TransportError(f"no data from {self.url} for {self.read_timeout} s") from None
                except (trio.BrokenResourceError, OSError) as exc:
                    if parser is None:
                        raise _Stale() from exc
                    raise TransportError(f"connection to {self.url} broke: {exc!r}") from exc
                if not data and parser is None and received == 0:
                    raise _Stale()
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
                ctype = dict(event.headers).get(b"content-type", b"")
                parser = HttpResponseParser(self.client, request, status=event.status_code, content_type=ctype,
                                            max_body_bytes=self.max_response_bytes)
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
                if parser is None:
                    raise _Stale()
                raise TransportError(f"{self.url} closed the connection mid-response")
        if conn.our_state is h11.DONE and conn.their_state is h11.DONE:
            conn.start_next_cycle()
        else:
            await self.aclose()
        if reauthorize is not None:
            raise reauthorize
        if final is None:
            return ErrorResult(request_id=request.id, code=ErrorCode.TRANSPORT_ERROR, message="no response")  # pragma: no cover
        return final

    @staticmethod
    async def _dispatch(events: list[ClientEvent], final: ClientEvent | None,
                        on_event: Callable[[ClientEvent], Awaitable[None]]) -> ClientEvent | None:
        for event in events:
            if isinstance(event, (ResultReceived, ErrorResult, InputRequired)):
                final = event
            else:
                await on_event(event)
        return final


class _HttpSubscription(Subscription):
    """A listen stream on a connection of its own: closing that connection cancels it (on HTTP
    a disconnect is the cancellation)."""

    def __init__(self, session: HttpClient, request: OutgoingRequest) -> None:
        super().__init__(session, request)
        self._http = session
        self._stream: trio.abc.Stream | None = None
        self._conn: h11.Connection | None = None
        self._parser: HttpResponseParser | None = None
        self._finished = False  # the response body ended

    async def _start(self) -> None:
        self._parser, self._finished = None, False
        self._stream = await self._http._open_stream()
        self._conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=64 * 1024)
        try:
            await self._stream.send_all(self._http._request_bytes(self._conn, self.request))
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
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
                    with trio.fail_after(self._http.read_timeout):
                        data = await stream.receive_some(65536)
                except trio.TooSlowError:
                    raise TransportError(f"no data from {url} for {self._http.read_timeout} s") from None
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
                    raise TransportError(f"connection to {url} broke: {exc!r}") from exc
                conn.receive_data(bytes(data))
            elif isinstance(event, h11.Response):
                if event.status_code in (301, 302, 307, 308):
                    raise TransportError(f"{url} redirects (HTTP {event.status_code}); not followed")
                ctype = dict(event.headers).get(b"content-type", b"")
                limit = self._http.max_response_bytes
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
            with trio.CancelScope(shield=True):
                await trio.aclose_forcefully(stream)


class _Stale(Exception):
    """A reused keep-alive connection was closed by the server before any response byte."""


class _Reauthorize(Exception):
    """The response was an OAuth challenge: run ``flow`` (None: just send again), then retry."""

    def __init__(self, flow: AuthorizationFlow | None) -> None:
        super().__init__("reauthorize")
        self.flow = flow
