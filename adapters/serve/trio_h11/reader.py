"""Who reads a trio/h11 server connection's socket, and when (the base of ``connection.Connection``).

Exactly one task reads a connection at a time, and an idle connection costs one task:

- the connection's own task reads the socket itself while it waits for a request head or body
  (:meth:`ConnectionReading.receive`): one non-blocking read, else a wait until the socket is
  readable, and no cancel scope. :meth:`expire` (the server's timer, or drain()) ends that wait
  the way closing the socket would, with ``trio.lowlevel.notify_closing``: the connection then
  closes, after a 408 when a body was late (the socket is still open for it);
- while a response is produced, a client that leaves must be noticed (``gone()``: on HTTP a
  disconnect is the cancellation) without a task per request. So the first response armed on a
  connection (:meth:`arm`) starts a reader task in the server's nursery, which feeds h11
  everything the client sends (a pipelined next request waits in h11's buffer, bounded by
  ``max_header_bytes``) and stays for the requests that follow, the connection's task then
  waiting for it on a parking lot; once the connection has sat idle for a tick of the server's
  timer, :meth:`stop_idle_reader` ends it and the connection's task reads for itself again;
- a listen stream's or a batch's watcher (:meth:`watch`, a task of its own already) reads in
  that task when no reader runs.

A reader being stopped is never doubled: a new one starts only once it has left (its last
step, if a response is armed meanwhile), so bytes are fed to h11 in the order they came.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

import h11
import trio

from ...errors import McpwireAdapterError
from ...app.app import PeerGone

__all__ = ["RECEIVE_BYTES", "ConnectionReading", "Expired", "Gone"]

RECEIVE_BYTES = 64 * 1024


class Gone(PeerGone):
    """The client closed or reset the connection, or stopped reading."""


class Expired(McpwireAdapterError):
    """A read waited past its deadline, or drain() closed an idle connection."""


class ConnectionReading:
    """The reading half of a server connection: its socket, its h11 state machine (which
    the connection replaces between requests), and who feeds it."""

    __slots__ = (
        "stream", "_socket", "_h11", "nursery", "max_header_bytes", "read_deadline", "idle_since",
        "_idle", "_expired", "_overflow", "_reader", "_own_read", "_data", "_fed", "_resume", "_eof",
        "_broken", "_gone", "_sending", "_left_while_sending",
    )

    def __init__(self, stream: trio.SocketStream, nursery: trio.Nursery, max_header_bytes: int) -> None:
        self.stream = stream
        # The socket read (receive) and a plain answer written (plain.write_now) without trio's
        # wrappers; None on Windows: both through trio's SocketStream, the general rule (held
        # equal by test_the_fast_path_tests_pass_through_trio_streams, which sets this None).
        self._socket = stream.socket if sys.platform != "win32" else None
        self.nursery = nursery  # where a reader task runs (the server's connections' nursery)
        self.max_header_bytes = max_header_bytes
        self._h11: h11.Connection | None = None  # made when a request's first bytes come (property h11)
        self.read_deadline = float("inf")  # when the read under way times out (the server's timer expires it)
        self.idle_since = 0.0  # when the connection began waiting for a next request (``_idle``)
        self._idle = False  # waiting for the next request on a kept-alive connection: drain() may close it
        self._expired = False  # the read wait is over: receive() raises Expired
        self._overflow = False  # pipelined bytes past max_header_bytes were dropped: close after this response
        self._reader: trio.CancelScope | None = None  # a reader (task or watcher) runs, or is about to
        self._own_read = False  # the connection's task waits for the socket itself
        self._data: trio.lowlevel.ParkingLot | None = None  # the connection's task waiting for the reader
        self._fed = 0  # times the reader fed h11: a wake-up with no new bytes is told apart
        self._resume: trio.Event | None = None  # the reader waiting for the task to consume
        self._eof = False  # the client closed (h11 was told) or reset the connection
        self._broken = False  # reset / broken: h11 was not told, receive() raises Gone
        self._gone: Callable[[], None] | None = None  # a response is being produced: call on EOF
        self._sending = 0  # writes under way (or waiting for their turn): a departure is noticed once it is over
        self._left_while_sending = False

    @property
    def h11(self) -> h11.Connection:
        """The connection's h11 state machine, made when first needed: a connection holds none
        while it waits for the first byte of a request (see ``Connection._next_cycle``)."""
        conn = self._h11
        if conn is None:
            conn = self._h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=self.max_header_bytes)
        return conn

    # -- the connection's task ---------------------------------------------------------------------
    async def receive(self) -> None:
        """Wait until more bytes of the client are in h11 (h11 said NEED_DATA). Raises
        :class:`Gone` when the client left, :class:`Expired` when :meth:`expire` ended the wait."""
        while True:
            if self._broken:
                raise Gone
            if self._expired:
                raise Expired
            if self._reader is None:
                break
            fed = self._fed
            if self._resume is not None:
                self._resume.set()
            assert self._data is not None
            await self._data.park()
            if self._fed != fed and not self._broken and not self._expired:
                return
            # else broken, expired, or the reader stopped with nothing new: read here
        if self._eof:
            raise Gone
        self._own_read = True
        try:
            # Fast path of self.stream.receive_some(RECEIVE_BYTES), the branch taken without a
            # socket of our own (Windows): one non-blocking read, else a wait for the socket (one
            # frame fewer held while idle than a method of its own; SocketStream.receive_some would
            # hold four more). Held equal by test_the_fast_path_tests_pass_through_trio_streams.
            sock = self._socket
            if sock is None:
                data = await self.stream.receive_some(RECEIVE_BYTES)
            else:
                waited = False
                while True:
                    fd = sock.fileno()
                    if fd < 0:
                        raise trio.ClosedResourceError
                    try:
                        read: bytes | None = os.read(fd, RECEIVE_BYTES)
                    except BlockingIOError:
                        read = None  # waited for below, not in this block: the error would be kept meanwhile
                    except OSError as exc:  # reset
                        raise trio.BrokenResourceError from exc
                    if read is not None:
                        data = read
                        break
                    await trio.lowlevel.wait_readable(sock)
                    waited = True
                if not waited:
                    await trio.lowlevel.cancel_shielded_checkpoint()  # the bytes are kept: no cancellation here
        except trio.ClosedResourceError as exc:
            if self._expired:
                raise Expired from None  # expire() woke the wait
            self._broken = True
            raise Gone from exc
        except trio.BrokenResourceError as exc:
            self._broken = True
            raise Gone from exc
        finally:
            self._own_read = False
        self.h11.receive_data(data)
        if not data:
            self._eof = True

    def expire(self) -> None:
        """End the read wait under way (its deadline passed, or drain() closes an idle
        connection): the connection's task gets :class:`Expired`."""
        self.read_deadline = float("inf")
        self._expired = True
        if self._own_read and self.stream.socket.fileno() >= 0:
            trio.lowlevel.notify_closing(self.stream.socket)
        if self._data is not None:
            self._data.unpark_all()

    def stop_idle_reader(self, since: float) -> None:
        """End the reader task of a connection waiting for its next request since ``since`` or
        before (the server's timer): an idle connection keeps one task."""
        if self._idle and self.idle_since <= since and self._reader is not None and self._gone is None:
            self._reader.cancel()

    async def stop_reading(self) -> None:
        """End the reader, if one runs, and wait until it has left (before the connection's
        task reads or closes the socket itself)."""
        self._gone = None
        while self._reader is not None:
            self._reader.cancel()
            assert self._data is not None
            await self._data.park()

    # -- while a response is produced --------------------------------------------------------------
    def arm(self, gone: Callable[[], None] | None) -> None:
        """While a response is produced: ``gone()`` is called when the client leaves."""
        self._gone = gone
        self._left_while_sending = False
        if gone is None:
            return
        if self._resume is not None:
            self._resume.set()  # a reader holding off (nobody watched) must read again: someone does
        if self._eof:
            # Already gone: noticed from another task, as a watcher would, once the handler has
            # run to its first suspension (not before it starts).
            self.nursery.start_soon(self._notice_late, gone)
        elif self._reader is None:
            self.nursery.start_soon(self._read, self._new_reader())

    async def watch(self, gone: Callable[[], None]) -> None:
        """For the App's watchers (batches, listen streams): ``gone()`` when the client
        disconnects; this task reads the socket meanwhile unless a reader already runs."""
        self._gone = gone
        self._left_while_sending = False
        if self._resume is not None:
            self._resume.set()
        try:
            if self._eof:
                await self._notice_late(gone)
            elif self._reader is None:
                await self._read(self._new_reader())
            await trio.sleep_forever()
        finally:
            self._gone = None

    def sent(self) -> None:
        """A write is over: a departure seen meanwhile is told now."""
        self._sending -= 1
        if self._left_while_sending and not self._sending:
            self._left_while_sending = False
            self._peer_left()

    # -- the reader --------------------------------------------------------------------------------
    def _new_reader(self) -> trio.CancelScope:
        if self._data is None:
            self._data = trio.lowlevel.ParkingLot()
        self._reader = scope = trio.CancelScope()
        return scope

    async def _read(self, scope: trio.CancelScope) -> None:
        """Be the connection's reader until EOF, a reset, or ``scope`` is cancelled."""
        try:
            with scope:
                await self._read_loop()
        finally:
            lot = self._data
            assert lot is not None
            if self._reader is scope:
                self._reader = None
                self._data = None  # nor a parking lot, once no reader runs (woken below)
                if scope.cancel_called and self._gone is not None and not self._eof:
                    # Stopped just as a response was armed (arm() saw this reader): the next one.
                    self.nursery.start_soon(self._read, self._new_reader())
            lot.unpark_all()

    async def _read_loop(self) -> None:
        """Everything the client sends goes into h11, whether the connection's task is reading
        a request (it is woken) or producing a response (a pipelined next request waits in
        h11's buffer; past ``max_header_bytes`` it is dropped and the connection closes after
        this response, RFC 9112 9.3.2: the client retries it). EOF or a reset calls the armed
        ``gone`` (a response being produced: the client left)."""
        limit = self.max_header_bytes
        assert self._data is not None
        try:
            while True:
                held = self._h11
                if self._gone is None and not self._overflow and held is not None:
                    unread, _closed = held.trailing_data
                    if len(unread) > limit:
                        # Not watching and the task has not consumed what it has: hold off reading
                        # (bounded buffering) until it asks for more.
                        self._resume = trio.Event()
                        try:
                            await self._resume.wait()
                        finally:
                            self._resume = None
                        continue
                data = await self.stream.receive_some(RECEIVE_BYTES)
                if not data:
                    self.h11.receive_data(b"")
                    self._fed += 1
                    break
                if not self._overflow:
                    self.h11.receive_data(data)
                    self._fed += 1
                    if self._gone is not None:
                        unread, _closed = self.h11.trailing_data
                        if len(unread) > limit:
                            self._overflow = True  # still read, so that a disconnect is seen, but hold nothing more
                self._data.unpark_all()
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self._broken = True
        self._eof = True
        self._data.unpark_all()
        self._peer_left()

    def _peer_left(self) -> None:
        """The client left: tell the armed ``gone``, but not in the middle of a write (one
        already started finishes, bounded by ``send_timeout``; the handler is cancelled where
        it next suspends)."""
        if self._gone is None:
            return
        if self._sending:
            self._left_while_sending = True
            return
        self._gone()

    async def _notice_late(self, gone: Callable[[], None]) -> None:
        await trio.lowlevel.cancel_shielded_checkpoint()
        if self._gone is gone:
            self._peer_left()
