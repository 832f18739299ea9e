"""asyncio's own primitives for a driver that runs there (the ASGI app on asyncio): timeouts
armed only when a wait happens (:func:`bounded`, or :class:`LateTimeout` for a step already
under way), a cancel scope that is one task's ``cancel()`` (made only when needed),
running a coroutine by hand up to its first wait (:func:`run_until_wait`, and
:func:`asgi_call`, the ASGI entry that runs a request that way), and telling trio from
asyncio without looking up the running loop (:func:`on_trio`).

anyio's cancel scopes and ``fail_after`` work on both loops, but on asyncio each one costs a
backend lookup and a handful of objects per use; a request that never waits pays that for
nothing. These do what asyncio's ``asyncio.timeout`` does, with nothing made until it is needed.

Every place the ASGI driver steps a coroutine by hand is here (``coro.send``, ``coro.throw``,
``next(coro.__await__())``): the driver's own modules only await, or call these.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Coroutine, Generator, MutableMapping
from types import TracebackType
from typing import Any, Protocol, TypeVar

__all__ = [
    "FINISHED", "LateTimeout", "Rest", "Stepped", "TaskScope", "asgi_call", "bounded", "on_trio", "run_until_wait",
]

_T = TypeVar("_T")
_Owner = TypeVar("_Owner")
_Receive = TypeVar("_Receive")
_Send = TypeVar("_Send")
_Scope = MutableMapping[str, Any]


def on_trio() -> bool:
    """Whether the caller runs on trio; otherwise on asyncio (anyio, and so the ASGI app, runs on
    one of the two). Without trio imported, asyncio (one probe of ``sys.modules``); otherwise
    told as anyio tells it: by sniffio, whose thread-local name trio sets while it runs (a
    thread-local lookup, several times the cost of that probe). No lookup of the running
    asyncio loop (on CPython 3.11 each costs a ``getpid`` system call): a request on asyncio
    finds its task only when it needs it."""
    modules = sys.modules
    if "trio" not in modules:  # the common case on asyncio: trio is not even imported (one dict probe)
        return False
    sniffio = modules.get("sniffio")
    return sniffio is not None and sniffio.thread_local.name == "trio"


class TaskScope:
    """A cancel scope for the asyncio task ``task`` (the current one), used as
    ``with TaskScope(task) as scope:``: ``scope.cancel()`` cancels the task (``Task.cancel``),
    and the ``CancelledError`` that this raises where the task next waits ends at the scope's
    exit, as ``asyncio.timeout`` ends its own (``Task.uncancel``: a cancellation of the task
    from elsewhere, before or during the scope, still propagates). Whoever calls :meth:`cancel`
    from inside the task must then reach an ``await`` before the scope exits, so that the
    cancellation is delivered there.

    The scope is entered as it is made (``__enter__`` returns it), so that an owner may make it
    only when it is first needed, and exit it by calling ``__exit__`` as a ``with`` would (only
    needed once ``cancel_called``). Made where the task first waits inside the code it scopes,
    or by a ``cancel()`` from inside the task before any wait, it is the scope entered at the
    start: until then nothing else ran, so the task's state is what it was there."""

    __slots__ = ("_task", "_cancelling", "cancel_called")

    def __init__(self, task: asyncio.Task[Any]) -> None:
        self._task = task
        self._cancelling = task.cancelling()
        self.cancel_called = False

    def __enter__(self) -> TaskScope:
        return self

    def cancel(self) -> None:
        if not self.cancel_called:
            self.cancel_called = True
            self._task.cancel()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool:
        if not self.cancel_called:
            return False
        return self._task.uncancel() <= self._cancelling and kind is asyncio.CancelledError


class LateTimeout:
    """``asyncio.timeout(seconds)`` for a step of ``task`` (the current one) already under way:
    made where the step's first wait begins (a step that never waits makes none). It is a
    :class:`TaskScope` entered now and cancelled by a timer: :meth:`end`, called as the step
    ends (with whether it ended by ``CancelledError``), disarms the timer and tells whether that
    cancellation was the timer's own (one from elsewhere still propagates)."""

    __slots__ = ("_scope", "_handle")

    def __init__(self, task: asyncio.Task[Any], seconds: float) -> None:
        self._scope = TaskScope(task)
        self._handle = task.get_loop().call_later(seconds, self._scope.cancel)

    def end(self, cancelled: bool) -> bool:
        """Disarm; True when the step ended (``cancelled``) by this timeout's own cancellation."""
        self._handle.cancel()
        return self._scope.__exit__(asyncio.CancelledError if cancelled else None, None, None)


class Rest:
    """The rest of a coroutine already run up to its first suspension, where it yielded
    ``pending`` (the future it waits on): awaiting this resumes it as the task would have,
    passing on what the task sends or throws (a cancellation included)."""

    __slots__ = ("coro", "pending")

    def __init__(self, coro: Coroutine[Any, Any, _T], pending: Any) -> None:
        self.coro = coro
        self.pending = pending

    def __await__(self) -> Generator[Any, Any, _T]:
        coro, value = self.coro, self.pending
        while True:
            try:
                sent = yield value
            except BaseException as exc:  # noqa: BLE001 - handed to the coroutine, as the task would
                try:
                    value = coro.throw(exc)
                except StopIteration as stop:
                    return stop.value  # type: ignore[no-any-return]
            else:
                try:
                    value = coro.send(sent)
                except StopIteration as stop:
                    return stop.value  # type: ignore[no-any-return]


FINISHED: Any = object()
"""What :func:`run_until_wait`'s first step gives for a coroutine that finished without waiting
(a coroutine may yield ``None`` itself: asyncio's bare ``yield``)."""


def run_until_wait(
    coro: Coroutine[Any, Any, Any], suspended: Callable[[], BaseException | None]
) -> Awaitable[Any] | None:
    """Run ``coro`` by hand up to its first wait, in the calling task. ``None`` when it finished
    without waiting (its value is dropped, its exception raised here). Otherwise ``suspended()``
    is called, right after the wait began, and the rest of ``coro`` is returned: the caller
    awaits it at once (``rest = run_until_wait(...)``, then ``if rest is not None: await rest``).
    When ``suspended()`` returns an exception, that wait is abandoned: the exception is thrown
    into ``coro`` there, and ``coro`` goes on from wherever it catches it.
    A plain function, not a coroutine: a coroutine that never waits costs no second frame.
    Its first step is ``next(coro.__await__(), FINISHED)``: a coroutine that returns ``None``
    there raises no ``StopIteration`` (``coro.send(None)`` would make and raise one, several
    times the cost of this call)."""
    pending = next(coro.__await__(), FINISHED)
    if pending is FINISHED:
        return None
    abandon = suspended()
    if abandon is not None:
        try:
            pending = coro.throw(abandon)
        except StopIteration:
            return None
    return Rest(coro, pending)


class Stepped(Protocol):
    """A request as :func:`asgi_call` serves it: ``serve()`` is the whole of it. While
    ``driving`` (on asyncio, nothing armed yet) it is run by hand, and ``suspended()`` is called
    where it first waits, as :func:`run_until_wait`'s ``suspended``."""

    driving: bool

    def serve(self) -> Coroutine[Any, Any, None]: ...

    def suspended(self) -> BaseException | None: ...


def asgi_call(
    request: Callable[[_Owner, _Scope, _Receive, _Send], Stepped],
    other: Callable[[_Owner, _Scope, _Receive, _Send], Awaitable[None]],
) -> Callable[[_Owner, _Scope, _Receive, _Send], Coroutine[Any, Any, None]]:
    """An ASGI 3 ``__call__``, for a class body (``__call__ = asgi_call(request, other)``): an
    ``http`` scope is ``request(owner, scope, receive, send)``, served as
    ``rest = run_until_wait(served.serve(), served.suspended)`` then ``await rest`` while it is
    ``driving``, else as ``await served.serve()``; any other scope is ``await other(owner,
    scope, receive, send)``."""

    async def __call__(owner: _Owner, scope: _Scope, receive: _Receive, send: _Send) -> None:
        """Serve one ASGI 3 scope: ``await asgi(scope, receive, send)``."""
        if scope["type"] != "http":
            await other(owner, scope, receive, send)
            return
        served = request(owner, scope, receive, send)
        if not served.driving:
            await served.serve()
            return
        # Fast path of run_until_wait(served.serve(), served.suspended), then its rest awaited:
        # the same steps written out, because that call costs ~830 instructions per request
        # (tests/bench/run.py --instructions). Held equal by test_asgi_call_steps_a_request_as_run_until_wait.
        coro = served.serve()
        pending = next(coro.__await__(), FINISHED)
        if pending is FINISHED:
            return
        abandon = served.suspended()
        if abandon is not None:
            try:
                pending = coro.throw(abandon)
            except StopIteration:
                return
        await Rest(coro, pending)

    return __call__


async def bounded(coro: Coroutine[Any, Any, _T], seconds: float) -> _T:
    """``await coro`` within ``seconds`` (TimeoutError after), with a timer only if it suspends:
    it runs at once up to its first wait, and a receive of a body the server already holds, or
    a send the transport takes at once, never waits (no timer handle made and cancelled per
    request)."""
    try:
        pending = coro.send(None)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
    async with asyncio.timeout(seconds):
        return await Rest(coro, pending)
