"""One response on its way from the event loop to the WSGI thread that writes it: :class:`Pipe`.

The request's task on the loop thread puts the engine's outputs (lists of ``ResponseHead`` /
``ResponseBody``) with :meth:`Pipe.put`; the WSGI thread takes them with :meth:`Pipe.get` and
yields their bytes to the server. The other way goes one fact, that the client is gone
(:meth:`Pipe.depart`: the response iterable was closed early, or the server said the client
left), which the task sees as :class:`PeerGone` from its next put and through :meth:`Pipe.watch`
(``App.run_exchange``'s ``watch``: the handler and the exchange are cancelled).

Invariants: at most ``capacity`` batches wait in the pipe (a put beyond waits for room, at most
its ``timeout``, then counts as a departed client: a client that stops reading cannot make the
loop hold a response's output without bound); puts happen on the loop thread only, gets on one
WSGI thread only; the loop is woken only through ``wake`` (its ``call_soon_threadsafe``), so
every anyio event here is made, awaited and set on the loop thread. After :meth:`end` nothing
more is put; the WSGI thread reads :data:`END` (the response is complete) or :data:`ABANDONED`
(leave it unfinished, so that the server closes the connection).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Final

import anyio

from mcpwire import ResponseBody, ResponseHead

from ...errors import PeerGone

__all__ = ["ABANDONED", "END", "Batch", "Marker", "Pipe"]

Batch = Sequence[ResponseHead | ResponseBody]
"""One ``emit`` of the engine's outputs, in the order to write them."""


class Marker:
    """The end of a response: :data:`END` or :data:`ABANDONED`."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


END: Final = Marker("END")
"""What :meth:`Pipe.get` gives once the response is complete."""
ABANDONED: Final = Marker("ABANDONED")
"""What :meth:`Pipe.get` gives when the response must be left unfinished (the app dropped a
listen stream, or a bug after the head was sent)."""


class Pipe:
    """A bounded, one-way pipe of output batches from the loop to one WSGI thread (module
    docstring). ``wake(callback)`` runs ``callback`` on the loop thread (thread-safe)."""

    __slots__ = ("_wake", "_capacity", "_lock", "_ready", "_items", "_departed", "_space", "_gone", "started")

    def __init__(self, wake: Callable[[Callable[[], object]], object], capacity: int) -> None:
        self._wake = wake
        self._capacity = capacity
        self._lock = threading.Lock()
        self._ready = threading.Condition(self._lock)
        self._items: deque[Batch | Marker] = deque()
        self._departed = False
        self._space: anyio.Event | None = None  # loop side: a put waiting for room
        self._gone: anyio.Event | None = None  # loop side: watch() waiting for the departure
        self.started = False  # loop side: a ResponseHead was put (a later failure leaves the response unfinished)

    # -- the loop's side --------------------------------------------------------------------------
    async def put(self, batch: Batch, timeout: float) -> None:
        """Hand ``batch`` to the WSGI thread, waiting at most ``timeout`` seconds for room.
        Raises :class:`PeerGone` when the client is gone, or when no room came in time."""
        if batch and isinstance(batch[0], ResponseHead):
            self.started = True
        with anyio.move_on_after(timeout):
            while True:
                with self._lock:
                    if self._departed:
                        raise PeerGone("the client is gone")
                    if len(self._items) < self._capacity:
                        self._items.append(batch)
                        self._ready.notify()
                        return
                    space = self._space = anyio.Event()
                await space.wait()
        raise PeerGone(f"the client read nothing for {timeout} s")

    def end(self, complete: bool) -> None:
        """Nothing more comes: the response is complete (``complete``), or it must be left
        unfinished. Never waits (the marker may go past ``capacity``)."""
        with self._lock:
            self._items.append(END if complete else ABANDONED)
            self._ready.notify()

    async def watch(self, gone: Callable[[], None]) -> None:
        """Wait until the client is gone, then call ``gone()`` (``App.run_exchange``'s ``watch``)."""
        with self._lock:
            departed = self._departed
            if not departed:
                event = self._gone = anyio.Event()
        if not departed:
            await event.wait()
        gone()

    # -- the WSGI thread's side -------------------------------------------------------------------
    def get(self, timeout: float | None) -> Batch | Marker | None:
        """The next batch or marker, or ``None`` when nothing came within ``timeout`` seconds."""
        with self._lock:
            if not self._items and not self._ready.wait_for(self._has_items, timeout):
                return None
            item = self._items.popleft()
            space, self._space = self._space, None
        if space is not None:
            self._wake(space.set)
        return item

    def _has_items(self) -> bool:
        return bool(self._items)

    def depart(self) -> None:
        """The client is gone (or the server stopped writing this response): the loop's next put
        raises :class:`PeerGone` and :meth:`watch` calls its ``gone``. Idempotent."""
        with self._lock:
            if self._departed:
                return
            self._departed = True
            wakes: list[Any] = [event for event in (self._space, self._gone) if event is not None]
            self._space = self._gone = None
        for event in wakes:
            self._wake(event.set)
