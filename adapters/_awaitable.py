"""A callback's answer, awaited when it is awaitable (host callbacks may be plain or async)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable
from typing import TypeVar

__all__ = ["maybe_await"]

T = TypeVar("T")


async def maybe_await(value: T | Awaitable[T]) -> T:
    if inspect.isawaitable(value):
        return await value
    return value
