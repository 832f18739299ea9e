"""One connection of the trio/h11 server: :class:`Connection`, its requests served one at a time.

Per connection, one request at a time (HTTP/1.1 persistent connections, RFC 9112 section 9.3):

1. read the request head within ``header_timeout`` (``keepalive_idle_timeout`` to wait for the
   first byte of a later request on a kept-alive connection); heads over ``max_header_bytes``
   get 431;
2. refuse before reading the body whatever the head alone decides (``Server.check_head``:
   413 when Content-Length is over ``app.server.http.max_body_bytes``, 405, 404, 403, 415,
   406), or as soon as a chunked body passes the limit: 413 with a JSON-RPC -32600 body,
   then close; the whole body must arrive within ``body_timeout`` (408 otherwise);
3. hand the request to the engine and write what it returns: a complete reply; an exchange,
   whose handler runs while the socket is watched (a peer that closes cancels the handler and
   the exchange: on HTTP a disconnect is the cancellation, specification: Basic > Patterns >
   Cancellation); or a listen stream, forwarded as SSE with a ``: keepalive`` comment every
   ``sse_keepalive_interval`` (the specification encourages keep-alive comments on listen
   streams: Basic > Transports > Streamable HTTP, Receiving Messages).

Who reads the socket (``reader.ConnectionReading``): while a connection waits for a
request, its own task; while responses are produced, a reader task feeding h11, so that
noticing a departed client costs no task per request. The reader starts with the first
response a connection produces and ends once the connection has been idle for a tick of the
server's timer: an idle connection is one task, and holds no h11 state machine until the first
byte of its next request.

A request whose body two HTTP parsers could frame differently (request smuggling: a
``Transfer-Encoding`` with a ``Content-Length``, a coding other than exactly ``chunked``, one on
HTTP/1.0, ``Content-Length`` values that disagree; RFC 9112 sections 6.1 and 6.3) is answered
400 and the connection closed, whatever followed its head unread (``plain.head_facts`` and h11).

Every error this driver answers by itself carries a JSON-RPC error body, never HTML or plain
text: 400/431 -32600 for malformed HTTP, 408/413 -32600, 500 -32603 for a bug, 503 -32603 at
the connection limit (:meth:`Connection.reject`). The server that accepted the connection
(``server.py``) keeps its deadlines on one timer and stops it when it drains
(:class:`Serving`: what a connection uses of it).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from typing import Protocol

import h11
import trio

from mcpwire import ErrorCode, HttpExchange, HttpListenStream, HttpRequest, RemoteProtocolError, ResponseBody, ResponseHead, error_reply

from ...errors import McpwireAdapterError
from ..answers import deliver
from .config import HttpServerConfig
from .plain import head_facts, plain_answer, reason, write_now
from .reader import RECEIVE_BYTES, ConnectionReading, Expired as _Expired, Gone as _PeerGone
from ...app.app import App
from ...app.context import principal_key

__all__ = ["Connection", "Serving"]

_log = logging.getLogger("mcpwire_adapters.http")

_LINGER_SECONDS = 1.0  # after an early refusal, drain what the client still sends so it reads our answer
_REJECT_SECONDS = 1.0  # time given to a connection over the limit to send its head

Output = ResponseHead | ResponseBody


class Serving(Protocol):
    """What a :class:`Connection` uses of the server that accepted it."""

    app: App
    config: HttpServerConfig
    connections: set[Connection]
    """The open connections: a connection leaves it once closed."""
    draining: bool
    """A graceful stop began: no new request, ``connection: close`` on the answers under way."""
    nursery: trio.Nursery | None
    """Where the connections' reader tasks run."""


class _Refused(McpwireAdapterError):
    """The request was answered by the driver itself; the connection must close."""


class Connection(ConnectionReading):
    """One client connection: an h11 state machine and the socket it drives (who reads the
    socket, and when: :class:`ConnectionReading`)."""

    __slots__ = (
        "server", "app", "config", "_send_lock", "_plain", "_written", "_body_done",
        "send_deadline", "alarm_deadline", "_alarm", "_head_request", "_linger",
    )

    def __init__(self, server: Serving, stream: trio.SocketStream) -> None:
        assert server.nursery is not None
        super().__init__(stream, server.nursery, server.config.max_header_bytes)
        self.server = server
        self.app = server.app
        self.config = server.config
        self._send_lock: trio.Lock | None = None  # made by the first write through h11
        self._plain = False  # this request may take a plain JSON answer written without h11
        self._written = False  # the answer went out without h11: start the next cycle afresh
        self._body_done = False  # _take_body saw the request's EndOfMessage
        self.send_deadline = math.inf  # when the write under way times out
        self.alarm_deadline = math.inf  # when to call _alarm (a listen stream's keepalive)
        self._alarm: Callable[[], None] | None = None
        self._head_request = False
        self._linger = False

    # -- lifecycle ------------------------------------------------------------------------------
    async def run(self) -> None:
        """Serve the connection's requests, one at a time, until it closes."""
        try:
            first = True
            # The head is read here, not in _cycle: an idle connection holds no _cycle frame.
            while True:
                request = await self._read_head(first)
                if request is None or not await self._cycle(request):
                    break
                del request  # nor the last request, while it waits for the next
                self._next_cycle()
                first = False
        except (_PeerGone, _Refused):
            pass
        except h11.RemoteProtocolError as exc:
            # Malformed HTTP, ambiguous framing included (head_facts, or h11's own refusals: a
            # Transfer-Encoding it does not take is its 501, ours 400): answered, then closed.
            status = 431 if exc.error_status_hint == 431 else 400
            await self._try_refuse(status, ErrorCode.INVALID_REQUEST, _h11_message(exc))
        except Exception:  # noqa: BLE001 - a bug must not take the server down
            _log.exception("unexpected error on an HTTP connection")
            await self._try_refuse(500, ErrorCode.INTERNAL_ERROR, "Internal error")
        finally:
            try:
                await self._close()
            finally:
                self.server.connections.discard(self)  # counted until closed, lingering included

    async def reject(self) -> None:
        """Answer a connection over the limit with 503 and close it."""
        with trio.move_on_after(min(_REJECT_SECONDS, self.config.header_timeout)):
            try:
                if await self._read_head(first=True) is not None:
                    await self._refuse(503, ErrorCode.INTERNAL_ERROR, "Server is at its connection limit")
            except (_PeerGone, _Refused, h11.ProtocolError):
                pass
        await self._close()

    def stop_if_idle(self) -> None:
        if self._idle:
            self.expire()

    def alarm(self, seconds: float, callback: Callable[[], None] | None) -> None:
        """The forwarder's keepalive timer (forwarder.Alarm), on the server's timer."""
        self._alarm = callback
        self.alarm_deadline = math.inf if callback is None else trio.current_time() + seconds

    def ring(self) -> None:
        callback, self._alarm, self.alarm_deadline = self._alarm, None, math.inf
        if callback is not None:
            callback()

    def abort_send(self) -> None:
        """A write blocked past ``send_timeout`` (a client that does not read): close the
        socket, which ends the write (and the reader) with ClosedResourceError."""
        self.send_deadline = math.inf
        self.stream.socket.close()

    async def _close(self) -> None:
        try:
            await self.stop_reading()  # a reader task ends before its socket is read here or closed
            if self._linger:
                # Half-close, then read what the client still sends for a moment: closing a socket
                # with unread data sends RST, which can destroy our answer before the client reads it.
                with trio.move_on_after(_LINGER_SECONDS):
                    try:
                        await self.stream.send_eof()
                        while await self.stream.receive_some(RECEIVE_BYTES):
                            pass
                    except (trio.BrokenResourceError, trio.ClosedResourceError, trio.BusyResourceError):
                        pass
        finally:
            await trio.aclose_forcefully(self.stream)

    async def _cycle(self, request: h11.Request) -> bool:
        """Serve one request. True when the connection may carry another."""
        # The request's headers, walked once: the head's size, whether the connection stays
        # open (HTTP/1.1 without "Connection: close", RFC 9112 9.3), and the pairs the engine takes,
        # as a tuple: Server.check_head's index of it is reused by receive_http.
        headers = tuple(request.headers.raw_items())
        # Ambiguous framing (Transfer-Encoding with Content-Length, ...) raises here, before
        # anything of the body is read or the connection is marked for the plain answer: run()
        # answers 400 and closes, so nothing hidden after the head is ever read as a request.
        size, keep_alive = head_facts(request.http_version, headers)
        if len(request.method) + len(request.target) + size > self.config.max_header_bytes:
            # h11 bounds only an incomplete head; one that arrived whole in a read is checked here.
            await self._refuse(431, ErrorCode.INVALID_REQUEST, "Request head too large")
        self._head_request = request.method == b"HEAD"
        # keep_alive is h11's own rule read ahead (h11 applies it only as it writes), for the plain
        # answer of _emit; held equal by test_head_facts_keeps_a_connection_alive_as_h11_does.
        self._plain = keep_alive and not self._head_request
        auth = self.config.auth  # OAuth (oauth_server.py): its metadata document, or a 401/403, or the principal set
        denial = auth.metadata_for(request.method.decode("latin-1"), request.target.decode("latin-1")) if auth else None
        body = b"" if denial is not None else await self._read_body(request, headers)
        if auth is not None and denial is None:
            denial = await auth.check_http(request.method.decode("latin-1"), request.target.decode("latin-1"),
                                           list(headers), body)
        reply = denial or self.app.server.receive_http(
            HttpRequest(
                method=request.method.decode("latin-1"), target=request.target.decode("latin-1"),
                headers=headers, body=body, principal=principal_key() if auth is not None else None,
            ),
            now=time.time(),
        )
        if isinstance(reply, HttpExchange):
            await self._run_exchange(reply)
        elif isinstance(reply, HttpListenStream):
            await self._run_listen(reply)
        elif await deliver(self.app, reply, self._emit, self.watch):
            raise _PeerGone  # the client left during a batch
        if self._written:  # a plain answer: h11 did not see it (_next_cycle)
            return not self.server.draining and not self._overflow
        return (
            self.h11.our_state is h11.DONE and self.h11.their_state is h11.DONE
            and not self.server.draining and not self._overflow
        )

    def _next_cycle(self) -> None:
        """Ready h11 for the next request. After an answer written without h11
        (:meth:`_write_plain`), h11 still waits to send one: a fresh state machine takes over
        the bytes the client already sent (a pipelined request), and its end of input."""
        # Held equal to h11's own next cycle by test_pipelined_plain_answers_come_in_order_and_close_is_honoured.
        self._plain = False
        if not self._written:
            self.h11.start_next_cycle()
            return
        self._written = False
        data, closed = self.h11.trailing_data
        self._h11 = None  # an idle connection holds no state machine: made again with the next bytes
        if data:
            self.h11.receive_data(data)
        if closed:
            self.h11.receive_data(b"")

    # -- reading --------------------------------------------------------------------------------
    def _next_event(self) -> h11.Event | type[h11.NEED_DATA] | type[h11.PAUSED]:
        try:
            return self.h11.next_event()
        except ValueError as exc:
            # h11 < 0.15 runs int() on a Content-Length of any length: past 4300 digits it raises.
            raise h11.RemoteProtocolError("bad Content-Length", error_status_hint=400) from exc

    async def _read_head(self, first: bool) -> h11.Request | None:
        """The next request head, or None when the client closed, idled out or was too slow."""
        if self.server.draining:
            return None
        event: h11.Event | type[h11.NEED_DATA] | type[h11.PAUSED] = h11.NEED_DATA
        if self._h11 is None:  # nothing read since the last answer: wait for the first byte
            buffered = False
        else:
            unread, _closed = self._h11.trailing_data
            buffered = bool(unread)  # pipelined bytes of this request already read
            event = self._next_event()
        if isinstance(event, h11.Request):
            return event  # whole in h11's buffer: no wait, no scope
        if event is not h11.NEED_DATA:
            return None  # ConnectionClosed
        waiting_idle = not buffered  # no byte of this request yet: drain() may close the connection
        wait = self.config.header_timeout if first or buffered else self.config.keepalive_idle_timeout
        # The deadline is the server timer's (no cancel scope); it moves only when a head
        # arrives in pieces after an idle wait.
        self._expired = False
        self.idle_since = now = trio.current_time()
        self.read_deadline = now + wait
        self._idle = waiting_idle
        try:
            while True:
                await self.receive()
                event = self._next_event()
                if waiting_idle:
                    waiting_idle = self._idle = False
                    if not first and event is h11.NEED_DATA:
                        # the idle wait is over; the whole head must now arrive in time
                        self.read_deadline = trio.current_time() + self.config.header_timeout
                if isinstance(event, h11.Request):
                    return event
                if event is not h11.NEED_DATA:
                    return None  # ConnectionClosed
        except _Expired:
            return None  # too slow, or closed by drain()
        finally:
            self._idle = False
            self.read_deadline = math.inf

    async def _read_body(self, request: h11.Request, headers: tuple[tuple[bytes, bytes], ...]) -> bytes:
        limit = self.app.server.http.max_body_bytes
        early = self.app.server.check_head(request.method, request.target, headers)
        if early is not None:  # refused on the head alone (413 on Content-Length, 405, 415, ...)
            await self._refuse_with(*early)
        if self.h11.they_are_waiting_for_100_continue:
            await self._send(h11.InformationalResponse(status_code=100, headers=[]))
        chunks: list[bytes] = []
        self._body_done = False
        size = self._take_body(chunks, 0, limit)
        if size >= 0 and not self._body_done:
            # Not all in h11's buffer yet: the rest must arrive within body_timeout (no
            # deadline at all when the body came with the head, as it mostly does).
            self._expired = False
            self.read_deadline = trio.current_time() + self.config.body_timeout
            try:
                while size >= 0 and not self._body_done:
                    await self.receive()
                    size = self._take_body(chunks, size, limit)
            except _Expired:
                pass
            finally:
                self.read_deadline = math.inf
        if size < 0:
            await self._refuse(413, ErrorCode.INVALID_REQUEST, f"Request body exceeds {limit} bytes")
        if self._body_done:
            return b"".join(chunks)
        late = f"Request body not received within {self.config.body_timeout} s"
        await self._refuse(408, ErrorCode.INVALID_REQUEST, late)
        raise AssertionError("unreachable")

    def _take_body(self, chunks: list[bytes], size: int, limit: int) -> int:
        """Move the body h11 holds into ``chunks`` until it needs data or the body ends
        (``_body_done``). Returns the size so far, or -1 past ``limit``."""
        while True:
            event = self.h11.next_event()
            if event is h11.NEED_DATA:
                return size
            if isinstance(event, h11.Data):
                size += len(event.data)
                if size > limit:
                    return -1
                chunks.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                self._body_done = True
                return size
            else:
                raise _PeerGone

    # -- writing --------------------------------------------------------------------------------
    async def _send(self, *events: h11.Event, framed: bytes = b"") -> None:
        # One write (one syscall, one deadline) for everything the engine produced at once:
        # a JSON answer's head, body and end go out together. ``framed``: bytes already framed.
        self._sending += 1
        try:
            lock = self._send_lock
            if lock is None:
                lock = self._send_lock = trio.Lock()
            async with lock:
                data = b"".join(self.h11.send(event) or b"" for event in events) if events else framed
                if data:
                    await self._send_all(data)
        finally:
            self.sent()

    async def _send_all(self, data: bytes) -> None:
        # One writer at a time (the lock): one deadline, the server timer's (abort_send).
        self.send_deadline = trio.current_time() + self.config.send_timeout
        try:
            await self.stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            raise _PeerGone from exc
        finally:
            self.send_deadline = math.inf

    async def _emit(self, outputs: Sequence[Output]) -> None:
        """Write engine output events: ResponseHead -> h11.Response (no Content-Length on SSE
        heads, so h11 frames the body chunked), ResponseBody -> Data, and EndOfMessage when
        ``more`` is False."""
        # Fast path of the h11 framing below, for a complete answer (_write_plain: plain.py). Held
        # equal by test_a_plain_answer_is_the_bytes_h11_frames, and with the write and the next
        # cycle by test_pipelined_plain_answers_come_in_order_and_close_is_honoured.
        if self._plain and len(outputs) == 2 and not self._sending and not self.server.draining:
            head, body = outputs
            rest = self._write_plain(head, body)
            if rest is not None:
                if rest:
                    await self._send(framed=rest)
                return
        events: list[h11.Event] = []
        for item in outputs:
            if isinstance(item, ResponseHead):
                headers = list(item.headers)
                if self.server.draining:
                    headers.append((b"connection", b"close"))
                events.append(h11.Response(status_code=item.status, headers=headers, reason=reason(item.status)))
            else:
                if item.data and not self._head_request:
                    events.append(h11.Data(data=item.data))
                if not item.more:
                    events.append(h11.EndOfMessage())
        await self._send(*events)

    def _write_plain(self, head: Output, body: Output) -> bytes | None:
        """A complete answer framed by its Content-Length, written as the engine made it
        (:func:`plain_answer`: no h11), by the connection's one writer (no lock). Tried once
        without blocking: what the socket did not take is returned, for :meth:`_send`
        (bounded by ``send_timeout`` like every write). None (nothing written) for anything
        else: h11 frames it."""
        if self.h11.their_state is not h11.DONE or self.h11.our_state is not h11.SEND_RESPONSE:
            return None
        out = plain_answer(head, body)
        if out is None:
            return None
        self._written = True
        self._plain = False
        try:  # fast path of self._send(framed=out); held equal by test_the_fast_path_tests_pass_through_trio_streams
            sent = write_now(self._socket, out)
        except OSError as exc:  # reset, broken pipe, closed
            raise _PeerGone from exc
        return out[sent:]

    async def _refuse(self, status: int, code: int, message: str) -> None:
        """Answer with a JSON-RPC error body and ``connection: close``; raises :class:`_Refused`."""
        await self._refuse_with(*error_reply(RemoteProtocolError(message, code=code, http_status=status)))

    async def _refuse_with(self, head: ResponseHead, body: ResponseBody) -> None:
        head = ResponseHead(status=head.status, headers=head.headers + ((b"connection", b"close"),))
        self._linger = True
        await self._emit([head, body])
        raise _Refused

    async def _try_refuse(self, status: int, code: int, message: str) -> None:
        if self.h11.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
            return  # a response already started: closing the connection is the only signal left
        try:
            await self._refuse(status, code, message)
        except (_Refused, _PeerGone, h11.LocalProtocolError):
            pass

    # -- the two long-lived shapes ------------------------------------------------------------------
    async def _run_exchange(self, exchange: HttpExchange) -> None:
        """Run the handler while watching the socket; a disconnect cancels both (on HTTP a
        disconnect is the cancellation)."""
        if await self.app.run_exchange_armed(exchange, self._emit, self.arm, trio.CancelScope()):
            raise _PeerGone

    async def _run_listen(self, stream: HttpListenStream) -> None:
        """Forward a listen stream as SSE (``App.forward_listen``) until it ends, the app drops
        it, or the client leaves."""
        forwarder = self.app.forward_listen(stream)  # before the first await: no event can be missed
        ended = await forwarder.run(
            self._emit, watch=self.watch, keepalive_interval=self.config.sse_keepalive_interval,
            alarm=self.alarm,
        )
        if not ended:
            raise _PeerGone  # an abrupt end carries no response: close the connection


def _h11_message(exc: h11.RemoteProtocolError) -> str:
    if exc.error_status_hint == 431:
        return "Request head too large"
    return "Malformed HTTP request"
