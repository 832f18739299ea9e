"""``mcpwire probe`` over stdio in the initialize era: a process per revision, opened by
``initialize``, then that revision's checks, the last judging every line the server wrote. A raw
server of one revision (``_era_stdio_server.py``) right about every rule passes; one writing
something that is not a message on stdout, or a message over several lines, refusing a batch in
2025-03-26, or answering a notification, fails that check with the MUST of its revision.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import trio

from mcpwire_adapters.testing.probe.runner import Findings, probe_stdio, text_report
from mcpwire_adapters.testing.verdict import Problem

SERVER = str(Path(__file__).resolve().with_name("_era_stdio_server.py"))
TIMEOUT = 60.0


def run(revision: str, fault: str | None = None) -> Findings:
    command = [sys.executable, SERVER, revision, *([fault] if fault else [])]

    async def go() -> Findings:
        with trio.fail_after(TIMEOUT):
            return await probe_stdio(command, rate=0, timeout=2, strict=True)
    return trio.run(go)


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-03-26", "2025-11-25"])
def test_a_right_server_passes_in_its_revision(revision: str) -> None:
    findings = run(revision)
    assert findings.negotiated is not None and findings.negotiated.revisions == [revision]
    notes = findings.negotiated.notes
    assert all(note.endswith(f"was answered with {revision}") for note in notes), notes
    not_passed = [(f.subject.key, f.status, f.detail) for f in findings if f.status != "pass"]
    assert not_passed == [], not_passed
    report = text_report("server", findings)
    assert f"  {revision}: https://modelcontextprotocol.io/specification/{revision}/basic/transports#stdio" in report


FAULTS = {  # fault: the checks it fails, and the rule of the first problem of the first
    "stdout-log": ({"era.stdio-output"}, "era.stdio-only-messages"),
    "pretty": ({"era.stdio-output", "era.tools-list"}, "era.stdio-newlines"),
    "no-batch": ({"era.batch-received"}, "era.batch-receive"),
    "notify-answer": ({"era.notification"}, "era.notification-silent"),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_each_check_fails_a_server_breaking_its_rule(fault: str) -> None:
    findings = run("2025-03-26", fault)
    failed = {f.subject.id for f in findings if f.status == "fail"}
    checks, rule_name = FAULTS[fault]
    assert failed == checks, [(f.subject.key, f.status, f.detail) for f in findings if f.status != "pass"]
    first = next(f for f in findings if f.subject.id == sorted(checks)[0])
    rules = {p.rule.id for p in first.problems if isinstance(p, Problem)}
    assert f"{rule_name}@2025-03-26" in rules, first.problems
