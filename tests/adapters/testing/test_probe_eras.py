"""``mcpwire probe`` in the initialize era (2025-11-25, 2025-06-18, 2025-03-26) over Streamable
HTTP and stdio: what the server negotiates is reported with its pages, our own server limited to
one revision passes in it (the default run and the strict one), and a raw server right about
everything but one rule fails exactly the check of that rule, citing the MUST of the revision it
negotiated (``_era_servers.py``, ``_era_stdio_server.py``), so every check of the era can fail.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio
from _lines import FIXTURE_READY, serving
from _era_servers import SESSION_FAULTS, session_server
from _stdlib_http import serving_http

from mcpwire_adapters.testing.judge import RULES
from mcpwire_adapters.testing.probe.runner import Findings, json_report, probe, probe_stdio, select, text_report
from mcpwire_adapters.testing.verdict import Problem

HERE = Path(__file__).resolve().parent
ERA = ("2025-11-25", "2025-06-18", "2025-03-26")
TIMEOUT = 60.0


def run_probe(url: str, **options: Any) -> Findings:
    async def go() -> Findings:
        with trio.fail_after(TIMEOUT):
            return await probe(url, rate=0, **options)
    return trio.run(go)


def run_stdio(command: list[str], **options: Any) -> Findings:
    async def go() -> Findings:
        with trio.fail_after(TIMEOUT):
            return await probe_stdio(command, rate=0, timeout=3, **options)
    return trio.run(go)


@pytest.fixture(scope="module", params=ERA)
def one_revision(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """The conformance fixture serving one initialize-era revision over HTTP: (revision, URL)."""
    command = [sys.executable, str(HERE / "_era_fixture.py"), "http", request.param]
    with serving(command, FIXTURE_READY) as ready:
        yield request.param, str(json.loads(ready.group(0))["url"])


def _not_passed(findings: Findings) -> list[tuple[str, str, str]]:
    return [(f.subject.key, f.status, f.detail) for f in findings if f.status != "pass"]


def test_our_server_of_one_revision_passes_in_it(one_revision: tuple[str, str]) -> None:
    revision, url = one_revision
    for strict in (False, True) if revision == "2025-06-18" else (True,):  # strict: the default, and advice
        findings = run_probe(url, call_tools=True, strict=strict)
        assert findings.negotiated is not None and findings.negotiated.revisions == [revision]
        assert {f.subject.revision for f in findings} == {revision}
        # Its GET stream starts with a priming event (an id to resume from) in 2025-11-25 only.
        expected = [] if revision == "2025-11-25" else [
            (f"era.resume@{revision}", "n/a",
             "the GET stream gave no event id within 0.5 s (HTTP 200): the server offers no resumption"),
            (f"era.event-ids-unique@{revision}", "n/a",
             "event ids on 0 of the session's streams (two GET, two POST): nothing to compare")]
        assert _not_passed(findings) == expected
    report = text_report(url, findings)
    assert f"negotiated: Streamable HTTP, revisions {revision}" in report
    assert f"  {revision}: https://modelcontextprotocol.io/specification/{revision}/basic/transports#streamable-http" \
        in report
    document = json.loads(json_report(url, findings))
    assert document["protocolVersion"] == revision and document["negotiated"]["revisions"] == [revision]
    assert {c["revision"] for c in document["checks"]} == {revision}


def test_our_server_of_one_revision_passes_over_stdio() -> None:
    command = [sys.executable, str(HERE / "_era_fixture.py"), "stdio", "2025-03-26"]
    findings = run_stdio(command, call_tools=True, strict=True)
    assert findings.negotiated is not None and findings.negotiated.revisions == ["2025-03-26"]
    assert _not_passed(findings) == []
    assert [f.subject.key for f in findings][-1] == "era.stdio-output@2025-03-26"  # after everything else


def test_only_the_revisions_asked_for_are_probed(one_revision: tuple[str, str]) -> None:
    revision, url = one_revision
    findings = run_probe(url, checks=select(["era.ping"]), revisions=[revision, "2026-07-28"])
    assert [(f.subject.key, f.status) for f in findings] == [("era.ping@" + revision, "pass")]
    with pytest.raises(ValueError, match="unknown revision 1999-01-01"):
        run_probe(url, revisions=["1999-01-01"])


# -- a raw server wrong about one rule -------------------------------------------------------------------
def _cases() -> list[tuple[str, str]]:
    out = []
    for fault in SESSION_FAULTS:
        revisions = ("2025-03-26",) if fault == "no-batch" else ("2025-06-18",) if fault == "version-header" else (
            ERA if fault in ("wrong-id", "session-echo", "origin", "event-ids") else ("2025-11-25",))
        out += [(fault, revision) for revision in revisions]
    return out


# What else a fault breaks, besides its own check.
ALSO = {"wrong-id": {"era.ids-echoed"}, "session-echo": {"era.session-deleted"}, "get-response": {"era.resume"}}


def test_the_raw_session_server_passes_every_check() -> None:
    for revision in ERA:
        with serving_http(session_server(revision)) as url:
            findings = run_probe(url, strict=True)
        assert findings.negotiated is not None and findings.negotiated.revisions == [revision]
        assert _not_passed(findings) == [], _not_passed(findings)


@pytest.mark.parametrize("fault, revision", _cases())
def test_each_check_fails_a_server_breaking_its_rule(fault: str, revision: str) -> None:
    also = ALSO.get(fault, set()) | ({"era.batch-received"} if fault == "wrong-id" and revision == "2025-03-26" else set())
    # Those checks, and two the fault leaves alone: the raw server passes every check otherwise
    # (test_the_raw_session_server_passes_every_check).
    checks = select([SESSION_FAULTS[fault], *also, "era.initialize-result", "era.notification"])
    with serving_http(session_server(revision, fault)) as url:
        findings = run_probe(url, checks=checks, revisions=[revision])
    failed = {f.subject.id for f in findings if f.status == "fail"}
    assert failed == {SESSION_FAULTS[fault], *also} - ({"era.batch-received"} if revision != "2025-03-26" else set()), \
        _not_passed(findings)
    finding = next(f for f in findings if f.subject.id == SESSION_FAULTS[fault])
    problem = finding.problems[0]
    # The problem cites the MUST of the revision negotiated, its sentence and its page.
    assert isinstance(problem, Problem) and problem.strength == "MUST", finding.problems
    assert problem.rule.source in (f"MCP {revision}", "JSON-RPC 2.0"), problem.rule
    if problem.rule.source.startswith("MCP"):
        assert problem.rule.id.endswith(f"@{revision}") and f"/specification/{revision}/" in (problem.rule.url or "")
        assert RULES[problem.rule.id].quote in text_report(url, findings)


def test_a_missing_session_header_is_a_warning() -> None:
    """Servers that require a session id SHOULD answer a request without it 400: a server
    answering 200 is warned, not failed."""
    class Lenient(session_server("2025-06-18")):  # type: ignore[misc]
        def _session_refusal(self) -> int | None:
            if self.headers.get("Mcp-Session-Id") is None:
                return None
            return super()._session_refusal()  # type: ignore[no-any-return]

    with serving_http(Lenient) as url:
        findings = run_probe(url, checks=select(["era.session-required"]))
    assert [(f.subject.key, f.status, f.detail) for f in findings] == [
        ("era.session-required@2025-06-18", "warn", "HTTP status 200, expected 400")]


@pytest.mark.parametrize("one_revision", ["2025-06-18"], indirect=True)  # the command line, run once
def test_the_command_line_probes_and_fuzzes_one_revision(one_revision: tuple[str, str], tmp_path: Path) -> None:
    revision, url = one_revision
    cli = [sys.executable, "-m", "mcpwire_adapters.cli"]
    done = subprocess.run([*cli, "probe", url, "--revision", revision, "--only", "era.ping", "--rate", "0"],
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"PASS  era.ping@{revision}" in done.stdout and f"negotiated: Streamable HTTP, revisions {revision}" in done.stdout
    wrong = subprocess.run([*cli, "probe", url, "--revision", "1999-01-01"], capture_output=True, text=True,
                           timeout=TIMEOUT)
    assert wrong.returncode == 4 and "unknown revision 1999-01-01" in wrong.stderr, wrong.stderr
    fuzzed = subprocess.run([*cli, "fuzz", url, "--revision", revision, "--max-examples", "10", "--seed", "1", "-q",
                             "--out", str(tmp_path)], capture_output=True, text=True, timeout=TIMEOUT)
    assert fuzzed.returncode == 0 and "0 failures" in fuzzed.stdout, fuzzed.stdout + fuzzed.stderr
