"""The stdio transport, server side: one connection's NDJSON stream (Basic > Transports > stdio).

Owns: splitting stdin bytes into lines (bounded; an oversize line is -32600 with id null,
unreadable JSON -32700 with id null), the requests in flight on this connection (bounded;
ids unique while in flight), and ``notifications/cancelled``: the named request's exchange
is cancelled at once, so it writes no late response, and a :class:`Cancelled` event tells
the host to stop its work (Basic > Patterns > Cancellation). Notifications and posted responses get no answer.
"""

from __future__ import annotations

from typing import Any, Union

import msgspec

from ..wire.envelope import Notification, Request, Response, UnansweredMessage, decode_message, encode_error
from ..wire.errors import ErrorCode, ProtocolError, RemoteProtocolError
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
    """

    def __init__(self, server: Server, *, max_line_bytes: int = 4 * 1024 * 1024, max_in_flight: int = 64) -> None:
        self.server = server
        self.max_in_flight = max_in_flight
        self.max_line_bytes = max_line_bytes
        self._reader = LineReader(max_line_bytes)
        self._in_flight: dict[Any, StdioExchange | StdioListenStream] = {}
        self._dialect: str | None = None  # decided by the first request: "session" or "stateless"
        self.session: Session | None = None
        """The initialize-era session this connection opened, if any (stdio: the first
        request decides the dialect of the connection)."""

    def receive_data(self, data: bytes, *, now: float) -> list[StdioOutput]:
        check_now(now)
        return self._lines(self._reader.feed(data), now)

    def receive_eof(self, *, now: float) -> list[StdioOutput]:
        """End of stdin: a last line without newline is still read."""
        check_now(now)
        return self._lines(self._reader.close(), now)

    def _lines(self, lines: list[bytes | OversizeLine], now: float) -> list[StdioOutput]:
        out: list[StdioOutput] = []
        for line in lines:
            if isinstance(line, OversizeLine):
                error = RemoteProtocolError(f"Message exceeds {self.max_line_bytes} bytes", code=ErrorCode.INVALID_REQUEST)
                out.append(encode_line(encode_error(None, error)))
                continue
            if line[:1] == b"[" and self.session is not None and self.session.revision in BATCH_REVISIONS:
                out.extend(self._batch(line, now))
                continue
            item = self.receive_line(line, now=now)
            if item is not None:
                out.append(item)
        return out

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
        for raw in raws:
            item = self.receive_line(bytes(raw), now=now)  # a nested array is refused there
            if item is not None:
                out.append(item)
        return out

    @property
    def in_flight(self) -> int:
        self._prune()
        return len(self._in_flight)

    def _prune(self) -> None:
        done = [k for k, v in self._in_flight.items() if v.state not in (ExchangeState.OPEN, ExchangeState.STREAMING, ListenState.PENDING, ListenState.OPEN)]
        for key in done:
            del self._in_flight[key]

    def receive_line(self, line: bytes, *, now: float) -> StdioOutput | None:
        """One NDJSON line (without its newline)."""
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

    def _request(self, message: Request, now: float) -> StdioOutput:
        self._prune()
        key = (type(message.id), message.id)
        if key in self._in_flight:
            error: ProtocolError = RemoteProtocolError("Request id is already in flight", code=ErrorCode.INVALID_REQUEST)
            return encode_line(encode_error(message.id, error))
        if len(self._in_flight) >= self.max_in_flight:
            error = ProtocolError(f"More than {self.max_in_flight} requests in flight", code=ErrorCode.INTERNAL_ERROR)
            return encode_line(encode_error(message.id, error))
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
        target = self._in_flight.pop((type(cancelled.request_id), cancelled.request_id), None)
        if target is None:
            return None
        target.cancel()
        return cancelled
