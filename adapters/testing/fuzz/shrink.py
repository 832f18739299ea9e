"""The fuzzer's own shrinker, after hypothesis': a failing case is cut down to the fewest of its
steps that still fail the same way, at best the one request that fails alone.

hypothesis shrinks what it drew, within the kind of case it drew: a stateful sequence stays a
sequence (server/discover, then the step that failed), and a failure it could not replay
(``flaky``) is not shrunk at all. :func:`shortest` then replays subsets of the steps as sent,
each judged again, and keeps the shortest that ends in the same failure (the same signature):
first the failing step alone, then (when the failure is the server gone after the case) each
step alone followed by the liveness check, then the steps without each one in turn. A step
judged against what came before it (an altered ``requestState``) fails alone only if it fails
on its own: the replay decides, never a guess.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["shortest"]

StepT = TypeVar("StepT")
MAX_REPLAYS = 24  # replays in all: each sends its steps again, and the server is not ours


def shortest(steps: Sequence[StepT], fails: Callable[[list[StepT]], bool], *, last_is_check: bool = False) -> list[StepT]:
    """The shortest subsequence of ``steps`` for which ``fails`` (replaying it) is true, found
    with at most :data:`MAX_REPLAYS` replays; ``steps`` itself when none shorter fails.
    ``last_is_check``: the last step is the liveness check that found the server gone, kept at
    the end of each candidate."""
    check = list(steps[-1:]) if last_is_check else []
    body = list(steps[:-1]) if last_is_check else list(steps)
    budget = MAX_REPLAYS
    while len(body) > 1 and budget > 0:
        alone = [[body[-1]]] if not last_is_check else [[s] for s in reversed(body)]
        last = len(body) - (1 if last_is_check else 2)  # without the check, the failing step stays last
        fewer = [body[:i] + body[i + 1:] for i in range(last, -1, -1)]
        for candidate in alone + fewer:
            if budget == 0:
                break
            budget -= 1
            if fails(candidate + check):
                body = candidate
                break
        else:
            break
    return body + check
