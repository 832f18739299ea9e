"""The GET stream of an initialize-era session, as the HTTP client reads it (specification
2025-11-25: Basic > Transports > Streamable HTTP, Listening for Messages from the Server;
Resumability and Redelivery; the same in 2025-06-18 and 2025-03-26).

Opened on a connection of its own once the session is initialized, and read by one task of
the client's task group for as long as the session lasts. What arrives on it goes where the same
messages on a call's response stream go: the server's requests are answered (each in a task of
its own, the answer POSTed), and so are its invalid messages (with the JSON-RPC error the
server engine would give, id null when none can be read); log messages and progress are handed on in the order they came;
list changes and resource updates go to the session's feed. The stream is reopened when it
ends or breaks, after its ``retry`` and with ``Last-Event-ID`` once it carried event ids; rounds
that bring nothing back off, bounded; and it stops for good when the server offers no stream
(405), forgot the session (404: the client's next request learns it), the session ends, or
``max_failures`` reopenings failed in a row. An idle stream has no read timeout. Also the two
small socket steps :mod:`mcpwire_adapters.client.http` shares with it. What it needs of the
client is :class:`StreamHost`."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

import anyio
import anyio.abc
import h11

from mcpwire import (
    Client, ClientEvent, ListChanged, LogMessage, ProtocolError, Progress, ResourceUpdated, ServerRequest,
    SessionStreamParser,
)
from mcpwire.sessions import InvalidMessage

from ..errors import McpwireAdapterError, TransportError
from .port import InputHandler
from .session_feed import SessionFeed

__all__ = [
    "DEFAULT_RETRY_MS", "MAX_BACKOFF_MS", "MIN_BACKOFF_MS", "SessionStreamReader", "StreamHost", "close_quietly",
    "receive_some",
]

_log = logging.getLogger("mcpwire.client")

DEFAULT_RETRY_MS = 1000
"""The wait before resuming or reopening a stream whose server named no ``retry``."""
MIN_BACKOFF_MS = 100
"""The least wait between two rounds of a stream that brings nothing (a ``retry`` of 0 included)."""
MAX_BACKOFF_MS = 30_000
"""The longest wait between two rounds of the session's GET stream."""


class StreamHost(Protocol):
    """What the session stream needs of the HTTP client."""

    url: str
    client: Client
    max_response_bytes: int

    @property
    def progress_tokens(self) -> Mapping[str | int, str | int]:
        """The progress token of each request in flight, naming the request."""
        ...

    async def open_connection(self) -> anyio.abc.ByteStream: ...

    def encode_http_request(self, conn: h11.Connection, method: bytes, headers: Any, body: bytes) -> bytes: ...


class SessionStreamReader:
    """The GET stream of one initialize-era session, read by :meth:`run` in a task of the
    client's task group until the session ends: the client cancels :attr:`scope` (a new
    session, ``aclose``), or the stream stops by itself (see the module). ``answer`` answers a
    server's request; ``log`` and ``progress`` take a log message and a progress notification;
    ``gone(session_id)`` hears that the server answered 404 for the session; ``reject`` answers
    an :class:`~mcpwire.sessions.InvalidMessage` (``client.reject``, POSTed).

    Between two rounds (one GET each) it waits the stream's ``retry`` (``DEFAULT_RETRY_MS``
    when the server named none). A round that failed (no connection, a refusal other than 404
    and 405, a broken head) or that brought neither a message nor an event id makes the next
    wait twice the last, from at least ``MIN_BACKOFF_MS`` up to ``MAX_BACKOFF_MS``;
    ``max_failures`` failed rounds in a row end the stream."""

    max_failures = 5

    def __init__(self, http: StreamHost, tasks: anyio.abc.TaskGroup, feed: SessionFeed,
                 answer: Callable[[ServerRequest, InputHandler | None], Awaitable[None]],
                 log: Callable[[LogMessage], Awaitable[None]],
                 progress: Callable[[Progress], Awaitable[None]],
                 gone: Callable[[str], None],
                 reject: Callable[[InvalidMessage], Awaitable[None]]) -> None:
        # The client hands over what the stream's events go to: its feed, and the session's
        # answering, logging and progress of what names no request.
        self._http = http
        self._tasks = tasks
        self._feed = feed
        self._answer_server = answer
        self._log = log
        self._progress = progress
        self._gone = gone
        self._reject = reject
        self._delivered = 0  # messages handed on, over all rounds
        self.scope = anyio.CancelScope()
        self.running = True
        self.streaming = False  # a GET's event stream is being read now
        self.opened = anyio.Event()  # the first round got its head, failed, or the stream stopped
        self.ended = anyio.Event()  # run() returned

    async def run(self) -> None:
        client = self._http.client
        session, session_id = client.initialized, client.session_id  # the session this stream is of
        last_event_id: str | None = None
        retry_ms: int | None = None
        failures = quiet = 0  # failed rounds in a row; rounds in a row that brought nothing
        try:
            with self.scope:
                while session is not None and client.initialized is session:
                    delivered = self._delivered
                    try:
                        parser = await self._once(client.stream_headers(last_event_id), session_id)
                    except TransportError as exc:
                        failures, quiet = failures + 1, quiet + 1
                        if failures >= self.max_failures:
                            _log.info("the session stream of %s failed %d times in a row; not reopened: %s",
                                      self._http.url, failures, exc)
                            return
                        _log.debug("the session stream of %s failed (%s); reopened later", self._http.url, exc)
                    else:
                        # A round brought something when it carried a message or an event id (a
                        # polling server's stream may carry only that: its retry is then as meant).
                        failures = 0
                        quiet = 0 if self._delivered > delivered or parser.last_event_id is not None else quiet + 1
                        last_event_id = parser.last_event_id or last_event_id
                        retry_ms = parser.retry_ms if parser.retry_ms is not None else retry_ms
                    self.opened.set()
                    if client.initialized is not session:
                        return  # the session ended meanwhile: its stream with it
                    await anyio.sleep(_wait_ms(retry_ms, quiet) / 1000)
        except _NoStream as exc:
            _log.debug("%s", exc)
        except _SessionGone as exc:
            _log.info("%s", exc)
            self._gone(exc.session_id)
        finally:
            self.running = False
            self.opened.set()
            self.ended.set()

    async def _once(self, headers: tuple[tuple[bytes, bytes], ...], session_id: str | None) -> SessionStreamParser:
        stream = await self._http.open_connection()
        try:
            return await self._read(stream, headers, session_id)
        finally:
            self.streaming = False
            await close_quietly(stream)

    async def _read(self, stream: anyio.abc.ByteStream, headers: tuple[tuple[bytes, bytes], ...],
                    session_id: str | None) -> SessionStreamParser:
        """One GET, read to its end; the parser tells where to resume."""
        http = self._http
        conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=64 * 1024)
        try:
            await stream.send(http.encode_http_request(conn, b"GET", headers, b""))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            raise TransportError(f"cannot send to {http.url}: {exc!r}") from exc
        parser: SessionStreamParser | None = None
        while True:
            try:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    conn.receive_data(await receive_some(stream))
                    continue
            except (h11.RemoteProtocolError, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
                if parser is None:
                    raise TransportError(f"the session stream of {http.url} broke: {exc!r}") from exc
                return parser  # dropped mid-stream: resumed from its last event id
            if isinstance(event, h11.Response):
                parser = self._opened(event, session_id)
                self.streaming = True
                self.opened.set()
            elif isinstance(event, h11.Data) and parser is not None:
                await self._dispatch(self._parsed(parser, bytes(event.data)))
            elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                if parser is None:
                    raise TransportError(f"{http.url} ended the session stream before its head")
                await self._dispatch(self._parsed(parser, None))
                return parser

    def _opened(self, head: h11.Response, session_id: str | None) -> SessionStreamParser:
        """The parser of a stream the server opened; else why there is none (Streamable HTTP:
        405, the server offers no GET stream; 404, it no longer knows the session)."""
        http, status = self._http, head.status_code
        if status == 405 or (status == 404 and session_id is None):
            raise _NoStream(f"{http.url} offers no session stream (HTTP {status})")
        if status == 404 and session_id is not None:
            raise _SessionGone(f"{http.url} no longer knows session {session_id!r} (HTTP 404 on its GET stream)",
                               session_id)
        if not 200 <= status < 300:
            raise TransportError(f"{http.url} refused the session stream with HTTP {status}")
        try:
            return SessionStreamParser(http.client, status=status, content_type=dict(head.headers).get(b"content-type"),
                                       max_event_bytes=http.max_response_bytes, progress_tokens=http.progress_tokens)
        except ProtocolError as exc:  # 2xx, but no event stream
            raise _NoStream(f"{http.url} offers no session stream: {exc}") from exc

    def _parsed(self, parser: SessionStreamParser, data: bytes | None) -> list[ClientEvent]:
        """The events of ``data`` (``None``: the end of the stream)."""
        try:
            return parser.close() if data is None else parser.feed(data)
        except ProtocolError as exc:  # an event over the size limit, say: the stream is unusable
            raise TransportError(f"the session stream of {self._http.url} broke the protocol: {exc}") from exc

    async def _dispatch(self, events: list[ClientEvent]) -> None:
        for event in events:
            self._delivered += 1
            if isinstance(event, ServerRequest):
                self._tasks.start_soon(self._answer, event)
            elif isinstance(event, InvalidMessage):
                self._tasks.start_soon(self._answer_invalid, event)
            elif isinstance(event, (ListChanged, ResourceUpdated)):
                self._feed.publish(event)
            elif isinstance(event, (LogMessage, Progress)):
                await self._hand_on(event)

    async def _hand_on(self, event: LogMessage | Progress) -> None:
        # In the stream's order, as a response stream's are. A failing host handler must not end
        # the session's stream: it is logged, and the next message goes on.
        try:
            await (self._log(event) if isinstance(event, LogMessage) else self._progress(event))
        except Exception as exc:  # noqa: BLE001 - the host's handler, whatever it raised
            _log.warning("the handler of a %s from the session stream failed: %r", type(event).__name__, exc)

    async def _answer(self, event: ServerRequest) -> None:
        try:
            await self._answer_server(event, None)
        except TransportError as exc:  # SessionExpired included: the next request starts anew
            _log.info("could not answer %s from the session stream: %s", event.method, exc)


    async def _answer_invalid(self, event: InvalidMessage) -> None:
        try:
            await self._reject(event)
        except TransportError as exc:
            _log.info("could not answer an invalid message from the session stream: %s", exc)


def _wait_ms(retry_ms: int | None, quiet: int) -> float:
    """The wait before the next round: the stream's ``retry`` after a round that brought
    messages; doubled for each round in a row that brought none, within the bounds."""
    wait = DEFAULT_RETRY_MS if retry_ms is None else retry_ms
    if quiet == 0:
        return float(min(wait, MAX_BACKOFF_MS))
    return float(min(max(wait, MIN_BACKOFF_MS) * 2 ** min(quiet - 1, 16), MAX_BACKOFF_MS))


class _NoStream(McpwireAdapterError):
    """The GET was answered with something other than an event stream: the server offers none."""


class _SessionGone(McpwireAdapterError):
    """The GET was answered 404: the server no longer knows the session."""

    def __init__(self, message: str, session_id: str) -> None:
        super().__init__(message)
        self.session_id = session_id


async def receive_some(stream: anyio.abc.ByteStream) -> bytes:
    """The next bytes from ``stream``; ``b""`` once the peer closed its side (h11's end of data)."""
    try:
        return await stream.receive(65536)
    except anyio.EndOfStream:
        return b""


async def close_quietly(stream: anyio.abc.ByteStream) -> None:
    """Close ``stream`` at once, even from a cancelled scope."""
    with anyio.CancelScope(shield=True):
        await anyio.aclose_forcefully(stream)
