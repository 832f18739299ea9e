"""asyncio's own primitives for a driver that runs there (the ASGI app on asyncio): a timeout
armed only when a wait happens, and a cancel scope that is one task's ``cancel()``.

anyio's cancel scopes and ``fail_after`` work on both loops, but on asyncio each one costs a
backend lookup and a handful of objects per use; a request that never waits pays that for
nothing. These do what asyncio's ``asyncio.timeout`` does, with nothing made until it is needed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Generator, Sequence
from types import CoroutineType, TracebackType
from typing import Any, TypeVar

__all__ = ["TaskScope", "bounded", "on_asyncio", "on_suspension", "send_all_bounded"]

_T = TypeVar("_T")
_M = TypeVar("_M")


def on_asyncio() -> bool:
    """Whether the caller runs in an asyncio task (else on trio, through anyio)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no running asyncio loop: trio
        return False
    return True


class TaskScope:
    """A cancel scope for the current asyncio task, used as ``with TaskScope() as scope:``:
    ``scope.cancel()`` cancels the task (``Task.cancel``), and the ``CancelledError`` that this
    raises where the task next waits ends at the scope's exit, as ``asyncio.timeout`` ends its
    own (``Task.uncancel``: a cancellation of the task from elsewhere, before or during the
    scope, still propagates). Whoever calls :meth:`cancel` from inside the task must then reach
    an ``await`` before the scope exits, so that the cancellation is delivered there."""

    __slots__ = ("_task", "_cancelling", "cancel_called")

    def __enter__(self) -> TaskScope:
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("TaskScope needs a running asyncio task")
        self._task = task
        self._cancelling = task.cancelling()
        self.cancel_called = False
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


class _Rest:
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


async def on_suspension(coro: Coroutine[Any, Any, _T], suspended: Callable[[], None]) -> _T:
    """``await coro``, calling ``suspended()`` once if it suspends, right after its first wait
    began (a coroutine that finishes without waiting never calls it)."""
    try:
        pending = coro.send(None)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
    suspended()
    return await _Rest(coro, pending)


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
        return await _Rest(coro, pending)


async def send_all_bounded(send: Callable[[_M], Awaitable[None]], messages: Sequence[_M], seconds: float) -> None:
    """``await send(message)`` for each message in turn, within ``seconds`` in all (TimeoutError
    after), with a timer only from the first send that waits (a transport that takes every
    message at once makes none). ``send`` may return any awaitable; a coroutine is run at once
    up to its first wait."""
    remaining = iter(messages)
    for message in remaining:
        step: Awaitable[None] = send(message)
        if type(step) is CoroutineType:
            try:
                pending = step.send(None)
            except StopIteration:
                continue
            step = _Rest(step, pending)
        async with asyncio.timeout(seconds):
            await step
            for rest in remaining:
                await send(rest)
        return
