"""One request on its way between its WSGI thread and the event loop: :class:`Pipe`.

The loop hands the WSGI thread, in order: the head check's verdict (:data:`ADMITTED`, or the
refusal as a batch), then the engine's outputs (lists of ``ResponseHead`` / ``ResponseBody``;
:meth:`Pipe.offer` from a callback, :meth:`Pipe.put` from the request's task), then the end
(:data:`END`, or :data:`ABANDONED`). The WSGI thread takes them with :meth:`Pipe.get` and
yields their bytes to the server. The other way goes one fact, that the client is gone
(:meth:`Pipe.depart`: the response iterable was closed early, or the server said the client
left), which the task sees as :class:`PeerGone` from its next put and through the callback it
armed (:meth:`Pipe.arm`, ``App.run_exchange_armed``'s ``arm``: the handler and the exchange
are cancelled) or :meth:`Pipe.watch`.

A complete JSON answer is one batch: one lock released once wakes the WSGI thread for it (no
condition variable, no event made per wait). The same pipe carries an event stream, bounded.

Invariants: at most ``capacity`` batches wait in the pipe (a put beyond waits for room, at most
its ``timeout``, then counts as a departed client: a client that stops reading cannot make the
loop hold a response's output without bound); puts, offers and ends happen on the loop thread
only, gets on one WSGI thread only; the loop is woken only through ``wake`` (its
``call_soon_threadsafe``), so every anyio event here is made, awaited and set on the loop
thread, and an armed callback is called there, only while it is armed. After :meth:`end`
nothing more is put.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import Final

import anyio

from mcpwire import ResponseBody, ResponseHead

from ...errors import PeerGone

__all__ = ["ABANDONED", "ADMITTED", "END", "Batch", "Marker", "Pipe"]

Batch = Sequence[ResponseHead | ResponseBody]
"""One ``emit`` of the engine's outputs, in the order to write them."""


class Marker:
    """A fact of the request that is no output: :data:`ADMITTED`, :data:`END` or :data:`ABANDONED`."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


ADMITTED: Final = Marker("ADMITTED")
"""The head check passed: read the body and hand the request over."""
END: Final = Marker("END")
"""What :meth:`Pipe.get` gives once the response is complete."""
ABANDONED: Final = Marker("ABANDONED")
"""What :meth:`Pipe.get` gives when the response must be left unfinished (the app dropped a
listen stream, or a bug after the head was sent)."""


class Pipe:
    """A bounded, one-way pipe of one request's verdict and output batches from the loop to its
    WSGI thread, and of its client's departure back (module docstring). ``wake(callback)``
    runs ``callback`` on the loop thread (thread-safe)."""

    __slots__ = ("_wake", "_capacity", "_lock", "_signal", "_waiting", "_items", "_departed", "_space", "_armed", "started")

    def __init__(self, wake: Callable[[Callable[[], object]], object], capacity: int) -> None:
        self._wake = wake
        self._capacity = capacity
        self._lock = threading.Lock()  # guards the fields both threads touch
        self._signal = threading.Lock()  # held while nothing is ready: released to wake a waiting get()
        self._signal.acquire()
        self._waiting = False  # a get() waits on _signal (only an append releases it, once)
        self._items: deque[Batch | Marker] = deque()
        self._departed = False
        self._space: anyio.Event | None = None  # loop side: a put waiting for room
        self._armed: Callable[[], None] | None = None  # loop side: called when the client leaves
        self.started = False  # loop side: a ResponseHead was put (a later failure leaves the response unfinished)

    # -- the loop's side --------------------------------------------------------------------------
    def offer(self, item: Batch | Marker) -> None:
        """Hand ``item`` over now, from a callback on the loop, as the request's first item (so
        there is room for it). Never waits; a client already gone is not told."""
        if not isinstance(item, Marker) and item and isinstance(item[0], ResponseHead):
            self.started = True
        with self._lock:
            self._append(item)

    async def put(self, batch: Batch, timeout: float) -> None:
        """Hand ``batch`` to the WSGI thread, waiting at most ``timeout`` seconds for room.
        Raises :class:`PeerGone` when the client is gone, or when no room came in time."""
        if batch and isinstance(batch[0], ResponseHead):
            self.started = True
        space = self._room_for(batch)
        if space is None:  # the usual case: room at once, and no timeout armed for nothing
            return
        with anyio.move_on_after(timeout):
            while space is not None:
                await space.wait()
                space = self._room_for(batch)
            return
        raise PeerGone(f"the client read nothing for {timeout} s")

    def _room_for(self, batch: Batch) -> anyio.Event | None:
        """Append ``batch`` if there is room (``None``), else an event set when the WSGI thread
        takes an item; :class:`PeerGone` when the client is gone."""
        with self._lock:
            if self._departed:
                raise PeerGone("the client is gone")
            if len(self._items) < self._capacity:
                self._append(batch)
                return None
            space = self._space = anyio.Event()
            return space

    def end(self, complete: bool) -> None:
        """Nothing more comes: the response is complete (``complete``), or it must be left
        unfinished. Never waits (the marker may go past ``capacity``)."""
        with self._lock:
            self._append(END if complete else ABANDONED)

    def _append(self, item: Batch | Marker) -> None:
        # Under _lock: queue the item, and wake the WSGI thread if it waits.
        self._items.append(item)
        if self._waiting:
            self._waiting = False
            self._signal.release()

    def arm(self, gone: Callable[[], None] | None) -> None:
        """Call ``gone()`` on the loop when the client leaves (soon, if it has left already),
        until ``arm(None)``: ``App.run_exchange_armed``'s ``arm``. One callback at a time."""
        self._armed = gone
        if gone is not None and self._departed:
            self._wake(self._tell_departure)

    def _tell_departure(self) -> None:
        gone = self._armed
        if gone is not None:
            self._armed = None
            gone()

    async def watch(self, gone: Callable[[], None]) -> None:
        """Wait until the client is gone, then call ``gone()`` (a ``watch`` for ``App.run_batch``
        and ``ListenForwarder.run``)."""
        left = anyio.Event()
        self.arm(left.set)
        try:
            await left.wait()
        finally:
            self.arm(None)
        gone()

    # -- the WSGI thread's side -------------------------------------------------------------------
    def get(self, timeout: float | None) -> Batch | Marker | None:
        """The next batch or marker, or ``None`` when nothing came within ``timeout`` seconds."""
        with self._lock:
            wait = self._waiting = not self._items
        if wait:
            woken = self._signal.acquire(timeout=-1 if timeout is None else timeout)
            if not woken:
                with self._lock:
                    if self._waiting:  # still nothing
                        self._waiting = False
                        return None
                self._signal.acquire()  # an item came after the timeout, with its release: take both
        with self._lock:
            item = self._items.popleft()
            space, self._space = self._space, None
        if space is not None:
            self._wake(space.set)
        return item

    def depart(self) -> None:
        """The client is gone (or the server stopped writing this response): the loop's next put
        raises :class:`PeerGone` and the armed callback is called. Idempotent."""
        with self._lock:
            if self._departed:
                return
            self._departed = True
            space, self._space = self._space, None
        if space is not None:
            self._wake(space.set)
        self._wake(self._tell_departure)
