"""Host callbacks may be plain or async: a callback's answer awaited when it is awaitable, and a
handler made a coroutine function once, at registration."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import anyio.to_thread

__all__ = ["as_async", "maybe_await"]

T = TypeVar("T")


async def maybe_await(value: T | Awaitable[T]) -> T:
    if inspect.isawaitable(value):
        return await value
    return value


def as_async(handler: Callable[..., Any]) -> Callable[..., Coroutine[Any, Any, Any]]:
    """The handler as a coroutine function, decided once at registration: an ``async def`` as it
    is, a plain function run in a worker thread so it cannot stall the loop. A thread cannot be
    interrupted: on cancellation it is abandoned and its answer, which the cancelled exchange
    would suppress anyway, is dropped."""
    if inspect.iscoroutinefunction(handler):
        return handler

    async def in_thread(*args: Any, **kwargs: Any) -> Any:
        return await anyio.to_thread.run_sync(lambda: handler(*args, **kwargs), abandon_on_cancel=True)

    return in_thread
