"""What the probe and the fuzzer report: the strength of a rule, a rule broken, one outcome type
and one finding type.

- :data:`Strength`: how much a rule weighs, read from the official text that states it:
  ``"MUST"`` (MUST, MUST NOT, REQUIRED, SHALL: of the MCP specification or schema of the
  revision, JSON-RPC 2.0, an HTTP or OAuth RFC), ``"SHOULD"`` (SHOULD, RECOMMENDED) or
  ``"advice"`` (anything else: a convention of this project stricter than the official text).
- :class:`Rule`: one rule, its strength, the sentence that states it and the page it is on; the
  table of every rule is :data:`mcpwire_adapters.testing.judge.RULES`.
- :class:`Problem`: what is wrong with an answer, worded for the report (a ``str``), with the
  :class:`Rule` it breaks.
- :data:`Status`: how something tried came out: ``"pass"``, ``"fail"`` (a MUST is broken),
  ``"warn"`` (a SHOULD), ``"advice"`` (only a convention of this project; reported with
  ``--strict``), or ``"n/a"`` (not applicable: the target lacks what it needs, and the reason
  says what).
- :class:`Outcome`: a status with its detail, its problems and the exchanges it rests on; what a
  probe check's own steps return.
- :class:`Finding`: an outcome about a subject: a probe check (``mcpwire probe`` reports one
  per check; ``mcpwire_adapters.testing.probe.runner.Finding`` is ``Finding[Check]``) or a fuzz
  case, its steps shrunk (``mcpwire fuzz`` reports its findings;
  ``mcpwire_adapters.testing.fuzz.runner.Failure`` is ``Finding[list[Step]]``), with the
  fuzzer's ``flaky`` and ``path``.

Whether an answer conforms is decided in :mod:`mcpwire_adapters.testing.judge`, not here.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final, Generic, Literal, NamedTuple, TypeVar

from .rawwire import Exchange

__all__ = [
    "ADVICE", "FAIL", "MUST", "NOT_APPLICABLE", "PASS", "SHOULD", "STATUSES", "STRENGTHS", "WARN", "Finding",
    "Outcome", "Problem", "Rule", "Status", "Strength", "status_of", "visible",
]

Strength = Literal["MUST", "SHOULD", "advice"]
MUST: Final = "MUST"
SHOULD: Final = "SHOULD"
ADVICE: Final = "advice"
STRENGTHS: tuple[Strength, ...] = (MUST, SHOULD, ADVICE)  # strongest first

Status = Literal["pass", "fail", "warn", "advice", "n/a"]
PASS: Final = "pass"
FAIL: Final = "fail"
WARN: Final = "warn"
NOT_APPLICABLE: Final = "n/a"
STATUSES: tuple[Status, ...] = (PASS, FAIL, WARN, ADVICE, NOT_APPLICABLE)  # the order the reports count them in
_STATUS_OF: dict[Strength, Status] = {MUST: FAIL, SHOULD: WARN, ADVICE: ADVICE}

SubjectT = TypeVar("SubjectT")


@dataclass(frozen=True)
class Rule:
    """One rule a conforming answer keeps: ``id`` (its key in the table), ``strength``,
    ``source`` (the document: ``"MCP 2026-07-28"``, ``"JSON-RPC 2.0"``, ``"RFC 9110"``,
    ``"mcpwire"``), ``quote`` (the sentence that states it; for advice, the convention in our
    words) and ``url`` (the page, and anchor, that states it; None for this project's own)."""

    id: str
    strength: Strength
    source: str
    quote: str
    url: str | None = None


class Problem(str):
    """One thing wrong with an answer, as the reports word it, with the :class:`Rule` it breaks."""

    rule: Rule

    def __new__(cls, text: str, rule: Rule) -> Problem:
        problem = super().__new__(cls, text)
        problem.rule = rule
        return problem

    @property
    def strength(self) -> Strength:
        return self.rule.strength


def status_of(problems: Sequence[str]) -> Status:
    """``"pass"`` without problems, else the status of the strongest rule broken (a problem
    without a rule counts as a MUST)."""
    if not problems:
        return PASS
    found = {p.strength if isinstance(p, Problem) else MUST for p in problems}
    return next(_STATUS_OF[s] for s in STRENGTHS if s in found)


def visible(problems: Sequence[str], *, strict: bool) -> list[str]:
    """``problems``, without the advice ones unless ``strict``; the strongest first."""
    rank = {s: i for i, s in enumerate(STRENGTHS)}
    shown = [p for p in problems if strict or not (isinstance(p, Problem) and p.strength == ADVICE)]
    return sorted(shown, key=lambda p: rank[p.strength] if isinstance(p, Problem) else 0)


class Outcome(NamedTuple):
    """``status``; ``detail``: for a finding its problems ("; " between them), for not
    applicable why, for a pass a note or nothing; ``evidence``: the exchanges, in order;
    ``problems``: the problems one by one, each with its rule."""

    status: Status
    detail: str = ""
    evidence: Sequence[Exchange] = ()
    problems: Sequence[str] = ()

    @classmethod
    def judged(cls, problems: Sequence[str], evidence: Sequence[Exchange], note: str = "") -> Outcome:
        """The status of the strongest rule ``problems`` break, or a pass (with ``note``) when
        there are none."""
        ordered = visible(problems, strict=True)
        return cls(status_of(ordered), "; ".join(ordered) or note, evidence, tuple(ordered))

    @classmethod
    def broken(cls, rule: Rule, detail: str, evidence: Sequence[Exchange]) -> Outcome:
        """One problem, ``detail``, breaking ``rule``."""
        return cls.judged([Problem(detail, rule)], evidence)


@dataclass
class Finding(Generic[SubjectT]):
    """What was tried (``subject``) and how it came out: ``status``, ``detail`` and ``evidence``
    as in :class:`Outcome`, and ``problems``: its problems one by one, each with its rule (the
    strongest first). ``withheld``: how many advice problems are not shown (without
    ``strict``). ``flaky`` (the failure did not happen again when replayed) and ``path`` (its
    replay file, once written) are the fuzzer's."""

    subject: SubjectT
    status: Status
    detail: str = ""
    evidence: Sequence[Exchange] = ()
    problems: list[str] = field(default_factory=list)
    flaky: bool = False
    path: Path | None = None
    withheld: int = 0

    @classmethod
    def of(cls, subject: SubjectT, outcome: Outcome) -> Finding[SubjectT]:
        """``outcome``, about ``subject``."""
        status, detail, evidence, problems = outcome
        if status in (FAIL, WARN, ADVICE) and not problems and detail:
            problems = (detail,)
        return cls(subject, status, detail, tuple(evidence), list(problems))

    @classmethod
    def judged(cls, subject: SubjectT, problems: Sequence[str], evidence: Sequence[Exchange]) -> Finding[SubjectT]:
        """``subject`` with ``problems`` (its status their strongest rule's), or a pass when there are none."""
        return cls.of(subject, Outcome.judged(problems, evidence))

    def shown(self, *, strict: bool) -> Finding[SubjectT]:
        """This finding as reported: without ``strict`` its advice problems are withheld (and a
        finding with nothing else passes)."""
        if strict or not self.problems:
            return self
        kept = visible(self.problems, strict=False)
        withheld = len(self.problems) - len(kept)
        if not withheld:
            return self
        return replace(self, status=status_of(kept), detail="; ".join(kept), problems=kept, withheld=withheld)

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
