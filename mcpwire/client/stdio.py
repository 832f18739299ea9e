"""The client side of one stdio connection: NDJSON lines from a server's stdout, read with the
one-message reader of :mod:`mcpwire.client.stream` (several requests in flight told apart by
id), and what the connection itself ends (a closed stdout, a line past the bound)."""

from __future__ import annotations

from ..wire.envelope import RequestId
from ..wire.errors import ErrorCode, RemoteProtocolError
from ..wire.ndjson import LineReader, OversizeLine
from .events import ClientEvent, ErrorResult, OutgoingRequest
from .states import RequestState
from .stream import MAX_ENDED, TRANSPORT_ERROR, Engine, MalformedResult, _IN_FLIGHT, _key, _Tracker

__all__ = ["ClientStdioConnection"]


class ClientStdioConnection:
    """The client side of one stdio connection
    (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio>).

    Write :meth:`send`'s bytes to the server's stdin; feed its stdout to
    :meth:`receive_data` (any chunking) and :meth:`receive_eof`. Events carry the request id
    they belong to; a request leaves :attr:`in_flight` with its final event. :meth:`cancel`
    gives the ``notifications/cancelled`` line and forgets the request (on stdio the client
    cancels with it: <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/cancellation>).

    The connection itself ends every request in flight, each with an :class:`ErrorResult`
    -32000 that :meth:`lost` then names, when the server's stdout ends and when a line passes
    ``max_line_bytes``: a line too long to keep cannot be read, so whichever request it answered
    would wait for ever, and stdio cannot tell which one that was. Such requests are given up
    as cancelled ones are (a late answer is dropped); write :meth:`cancel`'s line for each so
    that the server stops the work. The reader skips the rest of that line unbuffered and reads
    the next lines as usual, so later requests are unaffected.
    A line that is not JSON (or not a message) is one event, ``ErrorResult(request_id=None)``,
    and ends nothing: it may have been anything, a stray line of text included.
    """

    def __init__(self, client: Engine, *, max_line_bytes: int = 4 * 1024 * 1024) -> None:
        self.client = client
        self._reader = LineReader(max_line_bytes)
        self._tracker = _Tracker(client)
        self._max = max_line_bytes
        self._lost: dict[tuple[type, RequestId], str] = {}  # the last MAX_ENDED of them

    @property
    def in_flight(self) -> int:
        return len(self._tracker.requests)

    def lost(self, request_id: RequestId) -> str | None:
        """Why this connection ended request ``request_id`` itself (the reason is its -32000
        :class:`ErrorResult`'s message): ``"server closed stdout"``, or a line past
        ``max_line_bytes``. ``None`` when it did not: the server answered it, it is in flight,
        or it ended too long ago to be remembered. A host tells the connection's failures
        from the server's own -32000 errors with it."""
        return self._lost.get(_key(request_id))

    def send(self, request: OutgoingRequest) -> bytes:
        self._tracker.add(request)
        return request.line

    def state_of(self, request: OutgoingRequest) -> RequestState | None:
        """Where ``request`` stands (``None``: never sent here, or long finished)."""
        return self._tracker.state_of(request.id)

    def cancel(self, request: OutgoingRequest, reason: str | None = None) -> bytes:
        """The ``notifications/cancelled`` line for ``request``; its late messages are then dropped."""
        line = self.client.cancel(request, reason)  # raises for initialize, before any state moves
        if self._tracker.state_of(request.id) in _IN_FLIGHT:
            self._tracker.move(request, "cancel")
        return line

    def receive_data(self, data: bytes) -> list[ClientEvent]:
        return self._lines(self._reader.feed(data))

    def receive_eof(self) -> list[ClientEvent]:
        """End of the server's stdout: every request still in flight gets a -32000 ErrorResult."""
        return self._lines(self._reader.close()) + self._lose("server closed stdout", "error")

    def _lose(self, reason: str, verb: str) -> list[ClientEvent]:
        """End every request in flight with a -32000 of the connection's own (see :meth:`lost`)."""
        out: list[ClientEvent] = []
        for request in list(self._tracker.requests.values()):
            self._tracker.move(request, verb)
            if len(self._lost) >= MAX_ENDED:
                del self._lost[next(iter(self._lost))]
            self._lost[_key(request.id)] = reason
            out.append(ErrorResult(request_id=request.id, code=TRANSPORT_ERROR, message=reason))
        return out

    def _lines(self, lines: list[bytes | OversizeLine]) -> list[ClientEvent]:
        out: list[ClientEvent] = []
        for line in lines:
            if isinstance(line, OversizeLine):
                # The size seen depends on chunking: left out, so chunking never changes the events.
                lost = self._lose(f"server sent a line of more than {self._max} bytes (max_line_bytes); "
                                  "the answer it may have carried cannot be read", "cancel")
                out.extend(lost or [ErrorResult(request_id=None, code=ErrorCode.INVALID_REQUEST,
                                                message=f"Message exceeds {self._max} bytes")])
                continue
            try:
                out.extend(self._tracker.message(line))
            except RemoteProtocolError as exc:
                # Attributed only when it ended one of our requests (MalformedResult); any
                # other id on a bad line is the peer's, not ours.
                rid = exc.request_id if isinstance(exc, MalformedResult) else None
                out.append(ErrorResult(request_id=rid, code=exc.code, message=exc.message, data=exc.data))
        return out
