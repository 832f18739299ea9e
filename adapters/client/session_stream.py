"""The GET stream of an initialize-era session, as the HTTP client reads it: opened on a connection
of its own, its events routed (the server's requests answered, list changes and resource updates
to the session's feed, log messages to the call in flight), reopened with ``Last-Event-ID``
after the stream's ``retry`` (specification 2025-11-25: Basic > Transports > Streamable HTTP,
Listening for Messages from the Server; Resumability and Redelivery). Also the two small socket
steps :mod:`mcpwire_adapters.client.http` shares with it. What it needs of the client is
:class:`StreamHost`."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol

import anyio
import anyio.abc
import h11

from mcpwire import (
    Client, ClientEvent, ListChanged, LogMessage, ProtocolError, ResourceUpdated, ServerRequest, SessionStreamParser,
)

from ..errors import McpwireAdapterError, TransportError
from .port import InputHandler
from .session_feed import SessionFeed

__all__ = ["DEFAULT_RETRY_MS", "SessionStreamReader", "StreamHost", "close_quietly", "receive_some"]

_log = logging.getLogger("mcpwire.client")

DEFAULT_RETRY_MS = 1000


class StreamHost(Protocol):
    """What the session stream needs of the HTTP client."""

    url: str
    client: Client
    max_response_bytes: int

    async def open_connection(self) -> anyio.abc.ByteStream: ...

    def encode_http_request(self, conn: h11.Connection, method: bytes, headers: Any, body: bytes) -> bytes: ...


class SessionStreamReader:
    """The GET stream of one initialize-era session, read by a task of the client's task group
    (specification 2025-11-25: Basic > Transports > Streamable HTTP, Listening for Messages
    from the Server). The server's requests on it are answered as they come (each in a task of
    its own, so a slow answer holds nothing up); list changes and resource updates go to the
    session's feed; log messages to the ``on_log`` of the one call in flight. When the server ends the stream (2025-11-25 polling) or the connection
    breaks, it is reopened after the stream's ``retry`` with ``Last-Event-ID``; ``max_failures``
    failed reopenings in a row, or an answer that is not an event stream (405: the server
    offers none; 404: the session is gone), end it. An idle stream has no read timeout."""

    max_failures = 3

    def __init__(self, http: StreamHost, tasks: anyio.abc.TaskGroup, feed: SessionFeed,
                 answer: Callable[[ServerRequest, InputHandler | None], Awaitable[None]],
                 log: Callable[[LogMessage], Coroutine[Any, Any, None]]) -> None:
        # The client hands over what the stream's events go to: its feed, and the session's
        # answering and logging of what names no request.
        self._http = http
        self._tasks = tasks
        self._feed = feed
        self._answer_server = answer
        self._log = log
        self.scope = anyio.CancelScope()
        self.running = True
        self.opened = anyio.Event()  # the first head arrived, or the stream gave up

    async def run(self) -> None:
        http = self._http
        last_event_id: str | None = None
        retry_ms: int | None = None
        failures = 0
        try:
            with self.scope:
                while True:
                    try:
                        parser = await self._once(last_event_id)
                    except TransportError as exc:
                        failures += 1
                        if failures > self.max_failures:
                            _log.info("the session stream of %s failed %d times: %s", http.url, failures, exc)
                            return
                    else:
                        failures = 0
                        last_event_id = parser.last_event_id or last_event_id
                        retry_ms = parser.retry_ms if parser.retry_ms is not None else retry_ms
                    await anyio.sleep((DEFAULT_RETRY_MS if retry_ms is None else retry_ms) / 1000)
        except _NoStream as exc:
            _log.info("%s", exc)
        finally:
            self.running = False
            self.opened.set()

    async def _once(self, last_event_id: str | None) -> SessionStreamParser:
        stream = await self._http.open_connection()
        try:
            return await self._read(stream, last_event_id)
        finally:
            await close_quietly(stream)

    async def _read(self, stream: anyio.abc.ByteStream, last_event_id: str | None) -> SessionStreamParser:
        """One GET, read to its end; the parser tells where to resume."""
        http = self._http
        conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=64 * 1024)
        try:
            await stream.send(http.encode_http_request(conn, b"GET", http.client.stream_headers(last_event_id), b""))
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
                return parser
            if isinstance(event, h11.Response):
                ctype = dict(event.headers).get(b"content-type", b"")
                try:
                    parser = SessionStreamParser(http.client, status=event.status_code, content_type=ctype,
                                                 max_event_bytes=http.max_response_bytes)
                except ProtocolError as exc:
                    raise _NoStream(f"{http.url} offers no session stream: {exc}") from exc
                self.opened.set()
            elif isinstance(event, h11.Data) and parser is not None:
                self._dispatch(self._parsed(parser, bytes(event.data)))
            elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                if parser is None:
                    raise TransportError(f"{http.url} ended the session stream before its head")
                self._dispatch(self._parsed(parser, None))
                return parser

    def _parsed(self, parser: SessionStreamParser, data: bytes | None) -> list[ClientEvent]:
        """The events of ``data`` (``None``: the end of the stream)."""
        try:
            return parser.close() if data is None else parser.feed(data)
        except ProtocolError as exc:  # an event over the size limit, say: the stream is unusable
            raise TransportError(f"the session stream of {self._http.url} broke the protocol: {exc}") from exc

    def _dispatch(self, events: list[ClientEvent]) -> None:
        for event in events:
            if isinstance(event, ServerRequest):
                self._tasks.start_soon(self._answer, event)
            elif isinstance(event, (ListChanged, ResourceUpdated)):
                self._feed.publish(event)
            elif isinstance(event, LogMessage):
                self._tasks.start_soon(self._log, event)

    async def _answer(self, event: ServerRequest) -> None:
        try:
            await self._answer_server(event, None)
        except TransportError as exc:  # SessionExpired included: the next request starts anew
            _log.info("could not answer %s from the session stream: %s", event.method, exc)


class _NoStream(McpwireAdapterError):
    """The GET was answered with something other than an event stream."""


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


