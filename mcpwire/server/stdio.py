"""The stdio transport, server side: one connection's NDJSON stream (Basic > Transports > stdio).

Owns: splitting stdin bytes into lines (bounded; an oversize line is -32600 with id null,
unreadable JSON -32700 with id null), the requests in flight on this connection (bounded;
ids unique while in flight), back-pressure (below), and ``notifications/cancelled``: the
named request's exchange is cancelled at once, so it writes no late response, and a
:class:`Cancelled` event tells the host to stop its work (Basic > Patterns > Cancellation).
Notifications and posted responses get no answer.

Back-pressure (``max_held > 0``): a request that finds ``max_in_flight`` requests in flight
is held, not refused, and admitted (first in, first out) by :meth:`StdioConnection.release`
once one ends. Once ``max_held`` requests are held the connection *pauses*: it leaves the
lines after that point unread (:attr:`StdioConnection.reading` is False, the host stops
reading stdin, the pipe fills, the client blocks) -- but only while some request in flight
can end without the client (an exchange running its handler). When every request in flight
waits for the client (an exchange awaiting the answers to its server-to-client requests, a
listen stream, which ends only when cancelled), stopping would deadlock: the answer or the
cancellation is behind the requests in the pipe. Then reading goes on, responses and
notifications are handled at once, and a request past the held ones is refused with -32603
as without back-pressure. So what is bounded: requests in flight (``max_in_flight``),
requests held (``max_held``; a 2025-03-26 batch is read whole, so up to ``max_held + 63``),
and lines read but not handled (what one ``receive_data`` call brought past the pause point,
plus the unfinished line, at most ``max_line_bytes``). With ``max_held=0`` (the default)
nothing is held: past ``max_in_flight`` a request is refused with -32603, the safety net for a
host that does not stop reading.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Union

import msgspec

from ..wire.envelope import Notification, Request, Response, UnansweredMessage, decode_message, encode_error
from ..wire.errors import ErrorCode, LocalProtocolError, ProtocolError, RemoteProtocolError
from .events import Cancelled, InputArrived, TaskChanged
from .exchange import StdioExchange
from .listen import StdioListenStream
from ..wire.ndjson import LineReader, OversizeLine, encode_line
from .engine import Server
from .session import BATCH_REVISIONS, MAX_BATCH, Session
from .states import ExchangeState, ListenState
from .tokens import check_now

__all__ = ["StdioConnection", "StdioOutput"]

StdioOutput = Union[bytes, StdioExchange, StdioListenStream, Cancelled, InputArrived, TaskChanged]
"""What the connection hands back: bytes to write to stdout now, an exchange or stream for the
host to drive, a cancellation of one it is already driving, or a task changed by the client
(write its ``reply``, then resume or stop the task's work)."""


class StdioConnection:
    """One stdio connection to a :class:`Server`.

    Feed stdin with :meth:`receive_data` (any chunking) and :meth:`receive_eof`; each returns
    the outputs in order. Write bytes as they come; drive exchanges concurrently (their output
    is whole NDJSON lines, safe to interleave line by line); on :class:`Cancelled` stop the
    named request's work (its exchange already produces no more output).

    With ``max_held > 0`` (back-pressure, see the module's docstring): read stdin only while
    :attr:`reading` is True, and call :meth:`release` whenever a request in flight ends and
    whenever an exchange asks the client for input (it sent its server-to-client requests);
    :meth:`release` returns the outputs of the requests it admits, like :meth:`receive_data`.
    """

    def __init__(
        self, server: Server, *, max_line_bytes: int = 4 * 1024 * 1024, max_in_flight: int = 64, max_held: int = 0,
    ) -> None:
        if max_in_flight < 1 or max_held < 0:
            raise LocalProtocolError("max_in_flight must be positive and max_held not negative")
        self.server = server
        self.max_in_flight = max_in_flight
        self.max_held = max_held
        self.max_line_bytes = max_line_bytes
        self._reader = LineReader(max_line_bytes)
        self._in_flight: dict[Any, StdioExchange | StdioListenStream] = {}
        self._held: deque[Request] = deque()  # requests waiting for room, oldest first
        self._backlog: deque[bytes | OversizeLine] = deque()  # lines read, not handled: only while paused
        self._hold_limit = max_held  # max_held, or more while a batch is read whole
        self._dialect: str | None = None  # decided by the first request: "session" or "stateless"
        self.session: Session | None = None
        """The initialize-era session this connection opened, if any (stdio: the first
        request decides the dialect of the connection)."""

    def receive_data(self, data: bytes, *, now: float) -> list[StdioOutput]:
        """The next chunk of stdin. Fed while :attr:`reading` is False (a host that does not
        stop reading), it is handled whole: requests past the held ones are refused."""
        check_now(now)
        force = not self.reading
        self._backlog.extend(self._reader.feed(data))
        return self._drain(now, force)

    def receive_eof(self, *, now: float) -> list[StdioOutput]:
        """End of stdin: a last line without newline is still read. With back-pressure, call
        :meth:`release` as requests end until :attr:`waiting` is 0."""
        check_now(now)
        force = not self.reading
        self._backlog.extend(self._reader.close())
        return self._drain(now, force)

    def release(self, *, now: float) -> list[StdioOutput]:
        """Admit held requests while there is room, then handle the lines left unread while
        paused, up to the next pause. Cheap when nothing waits; harmless at any time."""
        check_now(now)
        if not self._held and not self._backlog:
            return []
        return self._drain(now, False)

    @property
    def reading(self) -> bool:
        """Whether the host should read stdin now: False while paused (``max_held`` requests
        held and a request in flight can still end without the client)."""
        held = self._held
        return not held or len(held) < self.max_held or not self._can_progress()

    @property
    def waiting(self) -> int:
        """Messages read but not handled yet: requests held for room, and lines left unread
        while paused (0 when nothing waits)."""
        return len(self._held) + len(self._backlog)

    def _can_progress(self) -> bool:
        # An exchange running its handler can end without the client; one awaiting the
        # client's answers, or a listen stream, cannot.
        self._prune()
        running = (ExchangeState.OPEN, ExchangeState.STREAMING)
        return any(type(v) is StdioExchange and v.state in running for v in self._in_flight.values())

    def _drain(self, now: float, force: bool) -> list[StdioOutput]:
        out: list[StdioOutput] = []
        if self._held:
            self._admit_held(now, out)
        backlog = self._backlog
        while backlog:
            if not force and self._held and not self.reading:
                break  # paused: the rest stays unread until release()
            line = backlog.popleft()
            if isinstance(line, OversizeLine):
                error = RemoteProtocolError(f"Message exceeds {self.max_line_bytes} bytes", code=ErrorCode.INVALID_REQUEST)
                out.append(encode_line(encode_error(None, error)))
                continue
            if line[:1] == b"[" and self.session is not None and self.session.revision in BATCH_REVISIONS:
                out.extend(self._batch(line, now))
            else:
                item = self.receive_line(line, now=now)
                if item is not None:
                    out.append(item)
            if self._held:
                self._admit_held(now, out)  # a cancellation may have made room
        return out

    def _admit_held(self, now: float, out: list[StdioOutput]) -> None:
        held = self._held
        while held and self._has_room():
            item = self._admit(held.popleft(), now)
            out.append(item)

    def _batch(self, line: bytes, now: float) -> list[StdioOutput]:
        """A JSON-RPC batch on a 2025-03-26 connection (that revision: a receiver MUST take
        batches): each message is handled as if it came on its own line, and each answer is a
        line of its own, as over HTTP, where a batch's answers are events of one stream."""
        try:
            raws = msgspec.json.decode(line, type=list[msgspec.Raw])
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            return [encode_line(encode_error(None, RemoteProtocolError("Parse error", code=ErrorCode.PARSE_ERROR)))]
        if not raws or len(raws) > MAX_BATCH:
            why = "empty batch" if not raws else f"more than {MAX_BATCH} messages in a batch"
            return [encode_line(encode_error(None, RemoteProtocolError(f"Invalid Request: {why}",
                                                                       code=ErrorCode.INVALID_REQUEST)))]
        out: list[StdioOutput] = []
        if self.max_held:
            self._hold_limit = self.max_held + len(raws) - 1  # read whole: its requests may all be held
        try:
            for raw in raws:
                item = self.receive_line(bytes(raw), now=now)  # a nested array is refused there
                if item is not None:
                    out.append(item)
        finally:
            self._hold_limit = self.max_held
        return out

    @property
    def in_flight(self) -> int:
        self._prune()
        return len(self._in_flight)

    def _prune(self) -> None:
        done = [k for k, v in self._in_flight.items() if v.state not in _IN_FLIGHT]
        for key in done:
            del self._in_flight[key]

    def _has_room(self) -> bool:
        if len(self._in_flight) < self.max_in_flight:
            return True
        self._prune()
        return len(self._in_flight) < self.max_in_flight

    def receive_line(self, line: bytes, *, now: float) -> StdioOutput | None:
        """One NDJSON line (without its newline). ``None``: nothing to do (a notification, a
        response, or a request held for room, which :meth:`release` admits later)."""
        check_now(now)
        try:
            message = decode_message(line)
        except UnansweredMessage:
            return None  # a malformed notification or response: never answered (JSON-RPC 2.0)
        except RemoteProtocolError as exc:
            return encode_line(encode_error(exc.request_id, exc))
        if isinstance(message, Response):
            return None if self.session is None else self.server.receive_answer(self.session, message)
        if isinstance(message, Notification):
            if message.method == "notifications/initialized" and self.session is not None:
                self.session.move("initialized")
                return self.server.stdio_session_stream(self.session)
            return self._notification(message)
        if self._dialect is None:
            if self.server.opens_session(message):
                self._dialect = "session"
                self.session, answer = self.server.initialize_line(message, now)
                if self.session is None:
                    self._dialect = None  # refused: the next request decides again
                return encode_line(answer)
            # Before initialize a ping (which no stateless request is without a version in its
            # _meta) is answered and decides nothing; so is anything on a server of the
            # initialize era only.
            early = self.server.uninitialized_line(message)
            if early is not None and (message.method == "ping" or not self.server.serves_stateless):
                return encode_line(early)
            if self.server.serves_stateless:
                # A server of the initialize era only stays undecided: its refusal of a
                # client's server/discover probe is followed by initialize (2026-07-28: stdio,
                # Backward Compatibility).
                self._dialect = "stateless"
        return self._request(message, now)

    def _request(self, message: Request, now: float) -> StdioOutput | None:
        key = (type(message.id), message.id)
        if key in self._in_flight:
            self._prune()
        if not self._held and self._has_room():
            return self._admit(message, now)
        if key in self._in_flight:
            return encode_line(encode_error(message.id, _DUPLICATE))
        if len(self._held) < self._hold_limit:
            self._held.append(message)
            return None
        error = ProtocolError(f"More than {self.max_in_flight} requests in flight", code=ErrorCode.INTERNAL_ERROR)
        return encode_line(encode_error(message.id, error))

    def _admit(self, message: Request, now: float) -> StdioOutput:
        key = (type(message.id), message.id)
        if key in self._in_flight:
            return encode_line(encode_error(message.id, _DUPLICATE))
        admitted = self.server.admit_line(message, now, self.session)
        if isinstance(admitted, bytes):
            return encode_line(admitted)
        if isinstance(admitted, TaskChanged):
            return msgspec.structs.replace(admitted, reply=encode_line(admitted.reply))
        self._in_flight[key] = admitted
        return admitted

    def _notification(self, message: Notification) -> Cancelled | None:
        cancelled = Cancelled.parse(message)
        if cancelled is None:
            return None
        self._prune()  # a request that already finished is not cancelled
        key = (type(cancelled.request_id), cancelled.request_id)
        target = self._in_flight.pop(key, None)
        if target is None:
            # A held request is dropped unanswered, as a cancelled one would end.
            for held in self._held:
                if (type(held.id), held.id) == key:
                    self._held.remove(held)
                    break
            return None
        target.cancel()
        return cancelled


# An exchange awaiting the client's answers is still in flight: its id is taken and a
# notifications/cancelled must reach it.
_IN_FLIGHT = frozenset({ExchangeState.OPEN, ExchangeState.STREAMING, ExchangeState.AWAITING,
                        ListenState.PENDING, ListenState.OPEN})
_DUPLICATE = RemoteProtocolError("Request id is already in flight", code=ErrorCode.INVALID_REQUEST)
