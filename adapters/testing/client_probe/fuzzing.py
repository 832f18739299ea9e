"""``mcpwire fuzz --client``: hypothesis mutates the hostile server's answers and runs the client
through each case; every case that breaks a rule is shrunk to the fewest, smallest mutations
that still break it and written as a replay file (the scenario and the exact answers), which
``mcpwire probe --client ... --replay FILE`` runs again.

    report = fuzz_client("mcpwire call {url} echo", SCENARIOS, max_examples=50, seed=1, out_dir="out")

A case is a scenario (drawn among ``scenarios``) and one to three :class:`Mutation` s of the
rows its plain run used: the body cut into separate writes (``split``), a message's ``id``
changed (half of these change the id of a request of the server's own, when the run met one,
to one drawn from the schema's whole RequestId space, :func:`request_ids`: long and non-ASCII
strings, integers past int64 and uint64, negative ones, and now and then no id at all; the
client's answer must carry the same JSON token type and value, and ``$await`` waits for it),
a member deleted, replaced by a value of another type or added (``field``), two
messages swapped (``order``), a message dropped or sent twice (``drop``, ``duplicate``), the
framing switched between JSON and SSE (``kind``), the HTTP ``status`` changed, or the
connection dropped at the end of the body (``cut``). A case fails when the client breaks a MUST
or a SHOULD (with ``strict``, advice too: a crash, a hang); each failure is kept once (by its
scenario, its rule and its wording without numbers).

The run is bounded by ``max_examples`` cases generated (shrinking a failure runs at most as many
again) and by ``time_budget`` seconds, shrinking included: past either bound a case is not run
and counts as passing, which ends the shrinking.
Hypothesis runs in the calling thread; each case is one ``trio.run`` of :func:`.runner.run_scenario`.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, Final

try:
    import hypothesis
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import strategies as st
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("mcpwire fuzz --client needs hypothesis: pip install 'mcpwire[probe]'") from exc

import trio

from ...errors import McpwireAdapterError
from ..verdict import ADVICE, FAIL, WARN, Finding, Problem, visible
from .runner import ClientFinding, run_scenario, write_replay
from .scenarios import Scenario
from .script import KINDS, Answer

__all__ = ["MUTATIONS", "ClientFuzzReport", "Mutation", "apply", "fuzz_client", "mutations_for", "request_ids"]

MUTATIONS: Final = ("split", "id", "field", "order", "drop", "duplicate", "kind", "status", "cut")
_VALUES: Final[tuple[Any, ...]] = (None, "", 0, -1, True, [], {}, "x" * 300, 2**63, 1.5, "\u0000\u202e")
_IDS: Final[tuple[Any, ...]] = (None, 0, -1, "hostile", True, 1.5, 2**53 + 1, "$$id", [1])
# Integers a client may hold wrongly: past a double's exact range, int64, uint64; 10**20, which
# a double prints 1e20; a hundred and one digits.
_EDGE_INTEGERS: Final = (2**53 + 1, 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64 - 1, 2**64, -(2**64), 10**20,
                         -(10**20), 10**100)
_ID_CHARACTERS: Final = st.characters(codec="utf-8")  # no lone surrogate: it is no JSON text
_STATUSES: Final = (200, 202, 204, 400, 401, 404, 405, 500)
Progress = Callable[[int, int, float], None]  # (cases run, findings, seconds)


@dataclass(frozen=True)
class Mutation:
    """One change to row ``row`` of a script: ``kind`` (one of :data:`MUTATIONS`) and its
    ``detail`` (the offsets, the new value, the member's path...)."""

    kind: str
    row: int
    detail: Any = None

    def describe(self, script: Sequence[Answer]) -> str:
        to = script[self.row].to if 0 <= self.row < len(script) else "?"
        return f"{self.kind} of the answer to {to} (row {self.row}): {json.dumps(self.detail, default=repr)[:120]}"


def apply(script: Sequence[Answer], mutations: Sequence[Mutation]) -> tuple[Answer, ...]:
    """``script`` with each of ``mutations`` applied in turn (one that no longer fits is skipped)."""
    rows = list(script)
    for m in mutations:
        if not 0 <= m.row < len(rows):
            continue
        row = rows[m.row]
        messages = list(row.messages)
        if m.kind == "split":
            row = replace(row, splits=tuple(m.detail))
        elif m.kind == "kind":
            row = replace(row, kind=m.detail)
        elif m.kind == "status":
            row = replace(row, status=m.detail)
        elif m.kind == "cut":
            row = replace(row, end="cut")
        elif messages:
            index = m.detail[0] % len(messages) if isinstance(m.detail, (list, tuple)) and m.detail else 0
            if m.kind == "id" and isinstance(messages[index], dict):
                messages[index] = {**messages[index], "id": m.detail[1]}
            elif m.kind == "field" and isinstance(messages[index], dict):
                messages[index] = _changed(messages[index], list(m.detail[1]), m.detail[2], m.detail[3])
            elif m.kind == "order" and len(messages) > 1:
                other = m.detail[1] % len(messages)
                messages[index], messages[other] = messages[other], messages[index]
            elif m.kind == "drop":
                del messages[index]
            elif m.kind == "duplicate":
                messages.insert(index, messages[index])
            row = replace(row, messages=tuple(messages))
        rows[m.row] = row
    return tuple(rows)


def _changed(value: Any, path: list[Any], action: str, new: Any) -> Any:
    """``value`` with the member at ``path`` deleted, replaced by ``new``, or a member added beside it."""
    if not path:
        return new if action == "replace" else value
    key, rest = path[0], path[1:]
    if isinstance(value, dict) and key in value:
        out = dict(value)
        if rest:
            out[key] = _changed(value[key], rest, action, new)
        elif action == "delete":
            del out[key]
        elif action == "replace":
            out[key] = new
        else:
            out["hostileExtra"] = new
        return out
    if isinstance(value, list) and isinstance(key, int) and 0 <= key < len(value):
        items = list(value)
        if rest:
            items[key] = _changed(items[key], rest, action, new)
        elif action == "delete":
            del items[key]
        else:
            items[key] = new
        return items
    return value


def _paths(value: Any, prefix: tuple[Any, ...] = (), depth: int = 0) -> list[tuple[Any, ...]]:
    """Every path to a member of ``value`` (markers and deep members left out)."""
    out: list[tuple[Any, ...]] = []
    if depth > 6:
        return out
    if isinstance(value, dict) and not any(str(k).startswith("$") for k in value):
        for k, v in value.items():
            out.append(prefix + (k,))
            out += _paths(v, prefix + (k,), depth + 1)
    elif isinstance(value, list):
        for i, v in enumerate(value[:5]):
            out.append(prefix + (i,))
            out += _paths(v, prefix + (i,), depth + 1)
    return out


def request_ids() -> st.SearchStrategy[Any]:
    """Ids for a request of the server's own: any schema-valid RequestId (a string or an integer
    of any size: the schema bounds neither), written as the template that renders to it (a
    string that starts with ``$`` gets one more), and now and then one that is no id (null, a
    boolean, a float, an array: answered with id null)."""
    strings = st.one_of(
        st.text(_ID_CHARACTERS, max_size=40),
        st.builds(lambda unit, times: unit * times, st.text(_ID_CHARACTERS, min_size=1, max_size=4),
                  st.integers(65, 2048)),  # past 256 bytes, up to 8 KiB of UTF-8
    ).map(lambda text: "$" + text if text.startswith("$") else text)
    return st.one_of(
        st.sampled_from(_EDGE_INTEGERS),
        st.integers(2**63, 10**40) | st.integers(-(10**40), -(2**63) - 1),  # past int64
        st.integers(),
        strings,
        st.sampled_from(_IDS),
    )


def _server_request(message: Any) -> bool:
    """A template of a request of the server's own (its id, ``$ask`` or written out, is the client's to echo)."""
    return isinstance(message, dict) and isinstance(message.get("method"), str) and "id" in message


def mutations_for(script: Sequence[Answer], rows: Sequence[int]) -> st.SearchStrategy[list[Mutation]]:
    """One to three mutations of the ``rows`` of ``script`` (the rows a plain run used)."""
    # The server's own requests (row, message): half the id mutations change one of theirs.
    asks = [(row, i) for row in sorted(rows) for i, m in enumerate(script[row].messages) if _server_request(m)]

    @st.composite
    def one(draw: st.DrawFn) -> Mutation:
        kind = draw(st.sampled_from(MUTATIONS))
        if kind == "id" and asks and draw(st.booleans()):
            row, index = draw(st.sampled_from(asks))
            return Mutation(kind, row, [index, draw(request_ids())])
        row = draw(st.sampled_from(sorted(rows)))
        answer = script[row]
        count = max(len(answer.messages), 1)
        if kind == "split":
            return Mutation(kind, row, sorted(draw(st.lists(st.integers(1, 400), min_size=1, max_size=4, unique=True))))
        if kind == "kind":
            return Mutation(kind, row, draw(st.sampled_from([k for k in KINDS if k != answer.kind])))
        if kind == "status":
            return Mutation(kind, row, draw(st.sampled_from(_STATUSES)))
        if kind == "cut":
            return Mutation(kind, row)
        index = draw(st.integers(0, count - 1))
        if kind == "id":
            own = bool(answer.messages) and _server_request(answer.messages[index])
            return Mutation(kind, row, [index, draw(request_ids() if own else st.sampled_from(_IDS))])
        if kind == "order":
            return Mutation(kind, row, [index, draw(st.integers(0, count - 1))])
        if kind == "field":
            message = answer.messages[index] if answer.messages else {}
            paths = _paths(message)
            if not paths:
                return Mutation("drop", row, [index])
            path = draw(st.sampled_from(paths))
            action = draw(st.sampled_from(("delete", "replace", "add")))
            return Mutation(kind, row, [index, list(path), action, draw(st.sampled_from(_VALUES))])
        return Mutation(kind, row, [index])

    return st.lists(one(), min_size=1, max_size=3)


@dataclass
class ClientFuzzReport:
    """What a fuzz run found: ``findings`` (each case that broke a rule, shrunk, with its replay
    file), how many ``cases`` in how many ``seconds``, the ``seed``."""

    command: str
    seed: int
    cases: int = 0
    seconds: float = 0.0
    findings: list[ClientFinding] = field(default_factory=list)
    mutations: list[list[str]] = field(default_factory=list)

    @property
    def failures(self) -> list[ClientFinding]:
        """The findings that break a MUST."""
        return [f for f in self.findings if f.status == FAIL]


class _CaseFailed(McpwireAdapterError):
    """A case that failed: its ``signature``, ``finding``, ``mutations`` and the ``script`` they change."""

    def __init__(self, signature: str, finding: ClientFinding, mutations: list[Mutation],
                 script: tuple[Answer, ...]) -> None:
        super().__init__(signature)
        self.signature, self.finding, self.mutations, self.script = signature, finding, mutations, script


def _signature(scenario: Scenario, problems: Sequence[str]) -> str:
    first = problems[0]
    rule = first.rule.id if isinstance(first, Problem) else ""
    return f"{scenario.name}|{rule}|" + re.sub(r"'[^']*'|\"[^\"]*\"|\d+", "_", str(first))[:80]


def fuzz_client(command: str, scenarios: Sequence[Scenario], *, stdio: bool = False, timeout: float = 10.0,
                max_examples: int = 100, time_budget: float | None = None, seed: int = 0, out_dir: str | Path = "",
                strict: bool = False, progress: Progress | None = None) -> ClientFuzzReport:
    """Fuzz the client ``command`` through ``scenarios``; write each finding's replay file to
    ``out_dir`` (none when empty)."""
    report = ClientFuzzReport(command, seed)
    started = time.monotonic()
    deadline = started + time_budget if time_budget else None
    plain: list[tuple[Scenario, tuple[Answer, ...], list[int]]] = []
    for scenario in scenarios:  # a plain run first: which rows the client meets
        run, outcome = trio.run(partial(run_scenario, command, scenario, stdio=stdio, timeout=timeout))
        report.cases += 1
        _keep(report, Finding.of(run, outcome), [], strict, out_dir)
        rows = sorted({r.row for r in run.records if r.row >= 0})
        if rows:
            plain.append((scenario, run.answers, rows))
    known = {_signature(f.subject.scenario, f.problems) for f in report.findings}
    if not plain:
        report.seconds = time.monotonic() - started
        return report
    attempt = 0
    while report.cases < max_examples and (deadline is None or time.monotonic() < deadline):
        failed = _search(command, plain, stdio, timeout, max_examples - report.cases, seed + attempt, deadline, strict,
                         known, report, progress, started)
        attempt += 1
        if failed is None:
            break
        known.add(failed.signature)
        failed = _shortest(command, failed, stdio=stdio, timeout=timeout, strict=strict, report=report)
        _keep(report, failed.finding, failed.mutations, strict, out_dir)
    report.seconds = time.monotonic() - started
    return report


def _case(command: str, scenario: Scenario, script: Sequence[Answer], mutations: Sequence[Mutation], *, stdio: bool,
          timeout: float, strict: bool) -> tuple[ClientFinding, list[str]]:
    """Run ``scenario`` with ``mutations`` of ``script``: the finding and its visible problems."""
    run, outcome = trio.run(partial(run_scenario, command, scenario, stdio=stdio, timeout=timeout,
                                    answers=apply(script, mutations), own=len(scenario.answers)))
    finding = Finding.of(run, outcome).shown(strict=strict)
    return finding, visible(finding.problems, strict=strict)


def _shortest(command: str, failed: _CaseFailed, *, stdio: bool, timeout: float, strict: bool,
              report: ClientFuzzReport) -> _CaseFailed:
    """``failed`` with each mutation left out in turn while the case still fails the same way
    (hypothesis shrinks each mutation; this drops the ones the failure does not need), then run
    once more as written: a failure that does not come again is flaky."""
    scenario, script = failed.finding.subject.scenario, failed.script
    mutations = list(failed.mutations)
    best = failed
    for mutation in list(mutations):
        if len(mutations) < 2:
            break
        fewer = [m for m in mutations if m is not mutation]
        finding, problems = _case(command, scenario, script, fewer, stdio=stdio, timeout=timeout, strict=strict)
        report.cases += 1
        if problems and _signature(scenario, problems) == failed.signature:
            mutations, best = fewer, _CaseFailed(failed.signature, finding, fewer, script)
    finding, problems = _case(command, scenario, script, mutations, stdio=stdio, timeout=timeout, strict=strict)
    report.cases += 1
    if not problems or _signature(scenario, problems) != failed.signature:
        best.finding.flaky = True
    return best


def _keep(report: ClientFuzzReport, finding: ClientFinding, mutations: list[Mutation], strict: bool,
          out_dir: str | Path) -> None:
    shown = finding.shown(strict=strict)
    if shown.status not in (FAIL, WARN) and not (strict and shown.status == ADVICE):
        return
    described = [m.describe(finding.subject.answers) for m in mutations]
    if out_dir:
        name = f"client-{finding.subject.scenario.name}-{len(report.findings) + 1}.json"
        shown.path = write_replay(Path(out_dir) / name, finding.subject, shown.problems, described)
    report.findings.append(shown)
    report.mutations.append(described)


def _search(command: str, plain: Sequence[tuple[Scenario, tuple[Answer, ...], list[int]]], stdio: bool, timeout: float,
            examples: int, seed: int, deadline: float | None, strict: bool, known: set[str], report: ClientFuzzReport,
            progress: Progress | None, started: float) -> _CaseFailed | None:
    """One hypothesis run: the first new failure, shrunk (None when none was found)."""
    cases = st.integers(0, len(plain) - 1).flatmap(
        lambda i: st.tuples(st.just(i), mutations_for(plain[i][1], plain[i][2])))
    last: list[_CaseFailed] = []
    limit = report.cases + 2 * examples  # the cases generated, and as many again to shrink a failure

    def body(drawn: tuple[int, list[Mutation]]) -> None:
        if (deadline is not None and time.monotonic() > deadline) or report.cases >= limit:
            return  # past the budget: a case that is not run passes, which ends the shrinking too
        index, mutations = drawn
        scenario, script, _ = plain[index]
        finding, problems = _case(command, scenario, script, mutations, stdio=stdio, timeout=timeout, strict=strict)
        report.cases += 1
        if progress is not None:
            progress(report.cases, len(report.findings), time.monotonic() - started)
        if finding.status in (FAIL, WARN) or (strict and finding.status == ADVICE and problems):
            signature = _signature(scenario, problems)
            if signature not in known:
                failed = _CaseFailed(signature, finding, list(mutations), script)
                last.append(failed)
                raise failed

    test = hypothesis.seed(seed)(given(cases)(body))
    test = settings(max_examples=max(examples, 1), database=None, derandomize=False, deadline=None,
                    verbosity=Verbosity.quiet, phases=(Phase.generate, Phase.shrink), print_blob=False,
                    suppress_health_check=list(HealthCheck), report_multiple_bugs=False)(test)
    try:
        test()
    except _CaseFailed as failed:
        return failed
    except (hypothesis.errors.Flaky, hypothesis.errors.FlakyFailure, BaseExceptionGroup):
        if last:  # it failed once and not again: timing, most likely
            last[-1].finding.flaky = True
            return last[-1]
    except hypothesis.errors.Unsatisfiable:  # pragma: no cover - every case redrawn
        return None
    return last[-1] if last else None


