"""Bounds of the property suites: time per example, example counts per profile, known bugs.

``time_bound`` turns a hang into a failure (the ``ci`` profile has no hypothesis deadline,
because the machine is shared and a slow example is not a bug; a stuck one is).
``budget(n)`` scales an example count written for the ``ci`` profile (100 examples) to the
loaded profile, so ``HYPOTHESIS_PROFILE=long`` lengthens every suite alike.
``tolerate_known`` lets a property keep exploring past a known, reported engine bug (its own
``xfail(strict=True)`` regression test keeps it visible).
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from typing import Any

from hypothesis import event, settings

from .findings import identify

__all__ = ["Hang", "time_bound", "budget", "tolerate_known", "PER_EXAMPLE_SECONDS"]

PER_EXAMPLE_SECONDS = 5.0


class Hang(AssertionError):
    """An example ran past its time bound."""


@contextlib.contextmanager
def time_bound(seconds: float = PER_EXAMPLE_SECONDS) -> Iterator[None]:
    """Fail with :class:`Hang` if the block runs longer than ``seconds`` (main thread only)."""

    def expire(signum: int, frame: Any) -> None:
        raise Hang(f"example ran longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def budget(examples: int) -> int:
    """``examples`` under the ``ci`` profile, scaled to the loaded profile's max_examples."""
    current = settings.default
    assert current is not None
    return max(1, examples * current.max_examples // 100)


@contextlib.contextmanager
def tolerate_known() -> Iterator[None]:
    """Swallow exactly the known bugs of ``fuzz.findings`` (recorded as a hypothesis event)."""
    try:
        yield
    except Exception as exc:
        bug = identify(exc)
        if bug is None:
            raise
        event(f"known bug {bug}")
