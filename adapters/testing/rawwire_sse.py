"""Long-lived event streams for the tools that test other servers: an HTTP response of
``text/event-stream`` read as it arrives (:class:`EventStream`, opened by :func:`event_stream`),
and the HTTP+SSE transport of revision 2024-11-05 on top of it (:class:`LegacyLink`, opened by
:func:`legacy_link`).

A stream is read by a task of its own into :class:`~mcpwire.framing.SSEReader` (bounded: an
event past 1 MiB ends the reading, and at most :data:`MAX_EVENTS` events are kept), so a check
can send requests on other connections and wait, until a deadline, for the event that answers
them. Nothing here judges what comes back: that is :mod:`mcpwire_adapters.testing.judge`'s.

HTTP+SSE (specification 2024-11-05: Basic > Transports > HTTP with SSE): the client opens the
SSE stream with a GET, the server's first event is ``endpoint``, naming the URI to POST each
message to; the server's messages come back as ``message`` events on the stream.
:meth:`LegacyLink.post` sends one message there (an exchange like any other), and
:meth:`LegacyLink.answer` waits for the response with a given id on the stream.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urljoin, urlsplit

import anyio
import anyio.abc
import h11

from mcpwire.framing import SSEEvent, SSEReader

from .judge import same_id
from .rawwire import MAX_BODY, TIMED_OUT, Exchange, Reply, Request, Send, http_exchange, media_type, paced

__all__ = ["LEGACY_HEADERS", "MAX_EVENTS", "EventStream", "LegacyLink", "event_stream", "legacy_link",
           "stream_exchange"]

MAX_EVENTS = 1000  # events kept per stream; later ones are counted, not kept
MAX_EVENT = 1024 * 1024
LEGACY_HEADERS: tuple[tuple[str, str], ...] = (("Content-Type", "application/json"),)
"""The headers of a message posted to the HTTP+SSE endpoint: a JSON body (the answer comes on the stream)."""


@dataclass
class EventStream:
    """A response being read: its ``status`` and ``headers`` (status 0: no response head within
    the time allowed, ``error`` says why), the ``events`` dispatched so far (each ``event``,
    ``data`` and ``id``), every ``id`` an event block carried (even one without data, such as a
    priming event), the raw ``body`` (up to 1 MiB, for the evidence) and whether it ``ended``."""

    request: Request
    status: int = 0
    headers: tuple[tuple[str, str], ...] = ()
    events: list[SSEEvent] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    body: bytearray = field(default_factory=bytearray)
    ended: bool = False
    error: str | None = None
    _changed: anyio.Event = field(default_factory=anyio.Event)

    @property
    def is_event_stream(self) -> bool:
        return media_type(self.header("content-type") or "") == "text/event-stream"

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    def messages(self) -> list[Any]:
        """The JSON value of each event's data so far (text that is not JSON as a string)."""
        out = []
        for event in self.events:
            try:
                out.append(json.loads(event.data))
            except ValueError:
                out.append(event.data)
        return out

    def exchange(self) -> Exchange:
        """What was sent and what came so far, as an exchange (for the evidence and the judge)."""
        if self.status == 0:
            return self.request, None, self.error or "no response head"
        return self.request, Reply(self.status, self.headers, bytes(self.body)), None

    async def wait_for(self, found: Callable[[SSEEvent], bool], deadline: float, start: int = 0) -> SSEEvent | None:
        """The first event from index ``start`` on for which ``found`` holds, waiting until
        ``deadline`` (``anyio.current_time()``'s clock) or the end of the stream; None if none came."""
        seen = start
        while True:
            for event in self.events[seen:]:
                if found(event):
                    return event
            seen = len(self.events)
            if self.ended or anyio.current_time() >= deadline:
                return None
            changed = self._changed
            with anyio.move_on_after(max(0.0, deadline - anyio.current_time())):
                await changed.wait()

    async def wait_events(self, count: int, deadline: float) -> bool:
        """Wait until ``count`` events have come (True), the stream ended or ``deadline`` passed."""
        return await self.wait_for(lambda e: True, deadline, start=count - 1) is not None if count > 0 else True

    def _note(self) -> None:
        changed, self._changed = self._changed, anyio.Event()
        changed.set()


async def _read(stream: anyio.abc.ByteStream, conn: h11.Connection, out: EventStream, head: anyio.Event,
                reader: SSEReader) -> None:
    """Read the response into ``out`` until it ends (or the task is cancelled)."""
    try:
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                try:
                    chunk = await stream.receive(65536)
                except anyio.EndOfStream:
                    chunk = b""
                conn.receive_data(chunk)
                continue
            if isinstance(event, h11.Response):
                out.status = event.status_code
                out.headers = tuple((k.decode("latin-1"), v.decode("latin-1")) for k, v in event.headers)
                head.set()
            elif isinstance(event, h11.Data):
                if len(out.body) < MAX_BODY:
                    out.body += event.data[:MAX_BODY - len(out.body)]
                if out.is_event_stream:
                    before = reader.last_event_id
                    for dispatched in reader.feed(event.data):
                        if len(out.events) < MAX_EVENTS:
                            out.events.append(dispatched)
                    if reader.last_event_id is not None and reader.last_event_id != before:
                        out.ids.append(reader.last_event_id)
                out._note()
            elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                return
    except Exception as exc:  # noqa: BLE001 - a broken stream is what was observed, not a crash of the tool
        out.error = f"{type(exc).__name__}: {exc}"
    finally:
        out.ended = True
        head.set()
        out._note()


@asynccontextmanager
async def event_stream(url: str, request: Request, *, timeout: float) -> AsyncIterator[EventStream]:
    """Send ``request`` (a GET, usually) to ``url`` on a connection of its own and read the
    response as it arrives, until the block exits (then the connection is closed). The response
    head is awaited for up to ``timeout`` seconds before the block runs (``status`` 0 if none
    came)."""
    parts = urlsplit(url)
    out = EventStream(request)
    if parts.scheme != "http" or not parts.hostname:
        out.error, out.ended = f"not an http URL: {url!r}", True
        yield out
        return
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    sent = [("Host", parts.netloc), ("User-Agent", "mcpwire-probe"), *request.headers]
    if request.body or request.method not in ("GET", "HEAD", "DELETE"):
        sent.append(("Content-Length", str(len(request.body))))
    conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=64 * 1024)
    try:
        with anyio.fail_after(timeout):
            stream = await anyio.connect_tcp(parts.hostname, parts.port or 80)
    except (OSError, TimeoutError) as exc:
        out.error, out.ended = f"cannot connect: {exc!r}", True
        yield out
        return
    async with stream, anyio.create_task_group() as group:
        try:
            data = conn.send(h11.Request(method=request.method, target=target, headers=sent)) or b""
            data += (conn.send(h11.Data(data=request.body)) or b"") if request.body else b""
            data += conn.send(h11.EndOfMessage()) or b""
            await stream.send(data)
        except (h11.LocalProtocolError, OSError, anyio.BrokenResourceError) as exc:
            out.error, out.ended = f"cannot send: {exc!r}", True
            yield out
            group.cancel_scope.cancel()
            return
        head = anyio.Event()
        group.start_soon(_read, stream, conn, out, head, SSEReader(MAX_EVENT))
        with anyio.move_on_after(timeout):
            await head.wait()
        if out.status == 0 and out.error is None:
            out.error = f"{TIMED_OUT} {timeout:g} s"
        try:
            yield out
        finally:
            group.cancel_scope.cancel()


async def stream_exchange(url: str, request: Request, *, timeout: float, linger: float,
                          events: int | None = None) -> EventStream:
    """Open the stream of ``request``, read it for ``linger`` seconds after its head (or until
    ``events`` events came, or it ended), then hang up: what came."""
    async with event_stream(url, request, timeout=timeout) as stream:
        if stream.status and stream.is_event_stream:
            await stream.wait_events(events or MAX_EVENTS + 1, anyio.current_time() + linger)
        return stream


def _answer_to(rpc_id: Any, or_null: bool = False) -> Callable[[SSEEvent], bool]:
    """Whether an event carries a response (a result or an error) with id ``rpc_id`` (or
    ``or_null``: an error with a null id)."""
    def found(event: SSEEvent) -> bool:
        try:
            message = json.loads(event.data)
        except ValueError:
            return False
        if not isinstance(message, dict) or not ("result" in message or "error" in message):
            return False
        return same_id(message.get("id"), rpc_id) or (or_null and "error" in message and message.get("id") is None)
    return found


@dataclass
class LegacyLink:
    """An open HTTP+SSE connection (2024-11-05): the ``stream`` (its first event should be
    ``endpoint``), the ``endpoint`` URL it named (None: no endpoint event came first), and the
    sender of POSTs."""

    stream: EventStream
    endpoint: str | None
    send: Send
    timeout: float

    async def post(self, message: Any, *, raw: bytes | None = None,
                   headers: Sequence[tuple[str, str]] = LEGACY_HEADERS) -> Exchange:
        """POST one message (``raw``: these bytes instead) to the endpoint."""
        body = raw if raw is not None else json.dumps(message).encode()
        rpc_id = message.get("id") if isinstance(message, dict) else None
        return await self.send(Request("POST", tuple(headers), body, rpc_id=rpc_id))

    async def answer(self, rpc_id: Any, *, wait: float | None = None, or_null: bool = False, start: int = 0) -> Exchange:
        """The response with id ``rpc_id`` on the stream (``or_null``: or an error with a null
        id), from event ``start`` on, waiting up to ``wait`` (else the timeout), as an exchange
        whose reply holds the one event (or why none came)."""
        begun = anyio.current_time()
        event = await self.stream.wait_for(_answer_to(rpc_id, or_null), begun + (self.timeout if wait is None else wait),
                                           start=start)
        shown = Request("SSE", (("Accept", "text/event-stream"),), b"", rpc_id=rpc_id)
        if event is None:
            why = "the stream ended" if self.stream.ended else f"{TIMED_OUT} {self.timeout if wait is None else wait:g} s"
            return shown, None, f"no response with id {rpc_id!r} on the SSE stream: {why}"
        block = (f"event: {event.event}\n" + "".join(f"data: {line}\n" for line in event.data.split("\n")) + "\n")
        return shown, Reply(200, (("content-type", "text/event-stream"),), block.encode()), None


@asynccontextmanager
async def legacy_link(url: str, *, timeout: float, rate: float = 0.0,
                      headers: Sequence[tuple[str, str]] = ()) -> AsyncIterator[LegacyLink]:
    """GET ``url`` as 2024-11-05's SSE endpoint and wait for its first event; yield the link
    (its ``endpoint`` resolved against ``url``, None when the first event is not ``endpoint``),
    whose POSTs go to the endpoint, at most ``rate`` a second (0: no limit), with ``headers``
    (but Accept) as well."""
    opening = Request("GET", (("Accept", "text/event-stream"), *headers))
    async with event_stream(url, opening, timeout=timeout) as stream:
        endpoint = None
        if stream.status == 200 and stream.is_event_stream:
            first = await stream.wait_for(lambda e: True, anyio.current_time() + timeout)
            if first is not None and first.event == "endpoint" and first.data.strip():
                endpoint = urljoin(url, first.data.strip())

        async def post(request: Request) -> Exchange:
            if endpoint is None:
                return request, None, "no endpoint event named a URI to post to"
            extra = tuple((k, v) for k, v in headers if k.lower() != "accept")  # the GET's own, such as Authorization
            request = replace(request, headers=request.headers + extra)
            try:
                return request, await http_exchange(endpoint, request, timeout=timeout), None
            except TimeoutError:
                return request, None, f"{TIMED_OUT} {timeout:g} s"
            except Exception as exc:  # noqa: BLE001 - a failed exchange is a finding, not a crash
                return request, None, f"{type(exc).__name__}: {exc}"

        yield LegacyLink(stream, endpoint, paced(post, rate), timeout)
