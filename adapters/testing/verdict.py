"""What the probe and the fuzzer report: one outcome type and one finding type.

- :data:`Status`: how something tried came out: ``"pass"``, ``"fail"``, or ``"n/a"`` (not
  applicable: the target lacks what it needs, and the reason says what).
- :class:`Outcome`: a status with its detail and the exchanges it rests on; what a probe
  check's own steps return.
- :class:`Finding`: an outcome about a subject: a probe check (``mcpwire probe`` reports one
  per check; ``mcpwire_adapters.testing.probe.runner.Finding`` is ``Finding[Check]``) or a fuzz
  case, its steps shrunk (``mcpwire fuzz`` reports its failures;
  ``mcpwire_adapters.testing.fuzz.runner.Failure`` is ``Finding[list[Step]]``), with the
  fuzzer's ``flaky`` and ``path``.

Whether an answer conforms is decided in :mod:`mcpwire_adapters.testing.judge`, not here.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Generic, Literal, NamedTuple, TypeVar

from .rawwire import Exchange

__all__ = ["FAIL", "NOT_APPLICABLE", "PASS", "STATUSES", "Finding", "Outcome", "Status"]

Status = Literal["pass", "fail", "n/a"]
PASS: Final = "pass"
FAIL: Final = "fail"
NOT_APPLICABLE: Final = "n/a"
STATUSES: tuple[Status, ...] = (PASS, FAIL, NOT_APPLICABLE)  # the order the reports count them in

SubjectT = TypeVar("SubjectT")


class Outcome(NamedTuple):
    """``status``; ``detail``: for a failure its problems ("; " between them), for not
    applicable why, for a pass a note or nothing; ``evidence``: the exchanges, in order."""

    status: Status
    detail: str = ""
    evidence: Sequence[Exchange] = ()

    @classmethod
    def judged(cls, problems: Sequence[str], evidence: Sequence[Exchange]) -> Outcome:
        """A failure with ``problems``, or a pass when there are none."""
        return cls(FAIL if problems else PASS, "; ".join(problems), evidence)


@dataclass
class Finding(Generic[SubjectT]):
    """What was tried (``subject``) and how it came out: ``status``, ``detail`` and ``evidence``
    as in :class:`Outcome`, and ``problems``: a failure's problems one by one. ``flaky`` (the
    failure did not happen again when replayed) and ``path`` (its replay file, once written)
    are the fuzzer's."""

    subject: SubjectT
    status: Status
    detail: str = ""
    evidence: Sequence[Exchange] = ()
    problems: list[str] = field(default_factory=list)
    flaky: bool = False
    path: Path | None = None

    @classmethod
    def of(cls, subject: SubjectT, outcome: Outcome) -> Finding[SubjectT]:
        """``outcome``, about ``subject``."""
        status, detail, evidence = outcome
        return cls(subject, status, detail, tuple(evidence), [detail] if status == FAIL and detail else [])

    @classmethod
    def judged(cls, subject: SubjectT, problems: Sequence[str], evidence: Sequence[Exchange]) -> Finding[SubjectT]:
        """A failure of ``subject`` with ``problems``, or a pass when there are none."""
        return cls(subject, FAIL if problems else PASS, "; ".join(problems), tuple(evidence), list(problems))

    @property
    def check(self) -> SubjectT:
        """The probe's former name of :attr:`subject`; goes in the next release."""
        warnings.warn("Finding.check is now Finding.subject", DeprecationWarning, stacklevel=2)
        return self.subject

    @property
    def steps(self) -> SubjectT:
        """The fuzzer's former name of :attr:`subject` (its shrunk steps); goes in the next release."""
        warnings.warn("Failure.steps is now Failure.subject", DeprecationWarning, stacklevel=2)
        return self.subject
