"""Engine bugs the fuzzers found and that are not fixed yet, by id (see fuzz/README.md).

Each gets a regression test (``xfail(strict=True)`` while open) in ``tests/``; its minimized
input sits in ``fuzz/findings/<harness>/<id>-*`` and ``tests/test_fuzz_corpus.py`` replays it.
To keep a long atheris run exploring past a known bug, list its id in ``FUZZ_TOLERATE`` (comma
separated): the harness then treats exactly that failure as a documented outcome. Once the
engine owner fixes a bug, its entry here goes and its tests become plain regression tests.

History: F1, F2 and F3 were fixed in commit bcd0d04; none is open.
"""

from __future__ import annotations

import os
from typing import Callable, Final

__all__ = ["KNOWN", "identify", "tolerating"]


# id -> does this exception (raised by a harness or a property) stand for that open bug?
KNOWN: Final[dict[str, Callable[[BaseException], bool]]] = {}


def identify(exc: BaseException) -> str | None:
    """The id of the known bug ``exc`` is, or None."""
    for bug, matches in KNOWN.items():
        if matches(exc):
            return bug
    return None


def tolerating(test_one_input: Callable[[bytes], None]) -> Callable[[bytes], None]:
    """``test_one_input``, with the known bugs listed in ``FUZZ_TOLERATE`` swallowed."""
    tolerated = {b for b in os.environ.get("FUZZ_TOLERATE", "").split(",") if b}
    if not tolerated:
        return test_one_input

    def run(data: bytes) -> None:
        try:
            test_one_input(data)
        except Exception as exc:
            if identify(exc) not in tolerated:
                raise

    return run
