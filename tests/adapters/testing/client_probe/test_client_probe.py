"""``mcpwire probe --client`` against real client processes: mcpwire's own clients (the CLI, an
HttpClient script, a BlockingClient script, StdioClient through ``--stdio``) break no MUST and
no SHOULD in any scenario, and never hang: each ends within the probe's deadline by its own
bounds (a read timeout, the CLI's ``--timeout`` over the whole call, ``max_rounds``, the size
limits); a deliberately broken client is failed with the sentence it breaks; the command
line's report, JSON and exit status."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
import trio

from mcpwire_adapters.cli import main
from mcpwire_adapters.testing.client_probe.runner import ClientFinding, probe_client
from mcpwire_adapters.testing.client_probe.scenarios import OK_TEXT, select_scenarios
from mcpwire_adapters.testing.verdict import Problem

HERE = Path(__file__).resolve().parent
PY = shlex.quote(sys.executable)
OURS = f"{PY} {shlex.quote(str(HERE / '_our_clients.py'))}"
BROKEN = f"{PY} {shlex.quote(str(HERE / '_broken_client.py'))}"
CLI = f"{PY} -m mcpwire_adapters.cli"
TIMEOUT = 4.0  # a client still running past it is stopped, and reported as a hang (robust.hang)
HOSTILE = ["invalid-json", "malformed-sse", "wrong-id", "cut-stream", "oversized", "endless-rounds", "endless-requests"]


def probe(command: str, patterns: Sequence[str] = (), *, stdio: bool = False) -> dict[str, ClientFinding]:
    findings = trio.run(lambda: probe_client(command, select_scenarios(patterns, stdio=stdio), stdio=stdio,
                                             timeout=TIMEOUT, strict=True))
    return {f.subject.scenario.name: f for f in findings}


def rules(finding: ClientFinding) -> set[str]:
    return {p.rule.id for p in finding.problems if isinstance(p, Problem)}


def no_must_nor_should(findings: dict[str, ClientFinding]) -> None:
    broken = {name: [str(p) for p in f.problems] for name, f in findings.items() if f.status in ("fail", "warn")}
    assert not broken


def no_hang(findings: dict[str, ClientFinding]) -> None:
    hung = {name: f.subject.process.stderr[-400:] for name, f in findings.items() if "robust.hang" in rules(f)}
    assert not hung


def completed(findings: dict[str, ClientFinding], names: Sequence[str]) -> None:
    """The client's run of each of ``names`` ended well: exit 0, the tool's text printed (the
    probe judges the traffic only: a client that fails after a well-behaved exchange passes it)."""
    ends = {name: (findings[name].subject.process.exit_code, findings[name].subject.process.stdout.strip(),
                   findings[name].subject.process.stderr[-300:]) for name in names}
    assert ends == {name: (0, OK_TEXT.encode(), b"") for name in names}


def test_the_mcpwire_command_line_passes_every_http_scenario(tmp_path: Path) -> None:
    store = shlex.quote(str(tmp_path / "tokens.json"))
    findings = probe(f"{CLI} call {{url}} echo --timeout 3 --oauth --token-store {store}")
    no_must_nor_should(findings)
    no_hang(findings)
    applicable = {name for name, f in findings.items() if f.status != "n/a"}
    assert applicable == {s.name for s in select_scenarios([], stdio=False)}  # it speaks both revisions, and OAuth
    assert {f.status for f in findings.values()} == {"pass"}  # no advice either: no hang, no memory growth
    assert findings["oauth"].status == "pass" and findings["oauth-issuer-mismatch"].status == "pass"
    resumed = findings["cut-stream-resumable"].subject.records
    assert any(r.method == "GET" and r.header("last-event-id") for r in resumed)


def test_an_httpclient_script_and_a_blockingclient_script_pass() -> None:
    http = probe(f"{OURS} http {{url}}", ["basic*", "session-404", "cut-stream-resumable", *HOSTILE])
    blocking = probe(f"{OURS} blocking {{url}}", ["basic", "basic-2025", "endless-requests"])
    no_must_nor_should(http)
    no_must_nor_should(blocking)
    no_hang({**http, **{f"blocking {name}": f for name, f in blocking.items()}})
    assert {f.status for f in (*http.values(), *blocking.values())} == {"pass"}
    completed(http, ["basic", "basic-2025"])
    completed(blocking, ["basic", "basic-2025"])


def test_stdioclient_through_stdio_passes() -> None:
    findings = probe(f"{OURS} stdio {{server}}", ["basic*", "list-changed", "tool-gone", *HOSTILE], stdio=True)
    no_must_nor_should(findings)
    no_hang(findings)
    assert {f.status for f in findings.values()} == {"pass"}
    assert findings["basic-2025"].status == "pass"  # the server's ping, a line on stdout, was answered
    completed(findings, ["basic", "basic-2025"])
    assert all(f.subject.transport == "stdio" and f.subject.records for f in findings.values())
    # Unreadable or oversized, the answer ends the call in the client's own error, not the deadline.
    for name in ("invalid-json", "oversized", "endless-requests"):
        process = findings[name].subject.process
        assert process.exit_code == 3 and not process.timed_out, (name, process.stderr)


def test_the_mcpwire_command_line_through_stdio_never_hangs() -> None:
    findings = probe(f"{CLI} call echo --timeout 2 -- {{server}}", [], stdio=True)
    no_must_nor_should(findings)
    no_hang(findings)
    assert {f.status for f in findings.values()} == {"pass"}
    assert {s.name for s in select_scenarios([], stdio=True)} <= set(findings)


def test_a_client_that_omits_the_version_header_fails_with_the_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["probe", "--client", f"{BROKEN} no-version {{url}}", "--only", "basic"])
    out = capsys.readouterr().out
    assert status == 1
    assert "FAIL  basic [http]" in out and "MUST: tools/call without MCP-Protocol-Version" in out
    assert ('"Every POST request to the MCP endpoint MUST include an `MCP-Protocol-Version` header." '
            "https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http"
            "#protocol-version-header") in out


def test_a_client_that_reuses_ids_fails_and_the_json_report_says_why(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["probe", "--client", f"{BROKEN} same-ids {{url}}", "--only", "list-changed", "--json", "-"])
    report = json.loads(capsys.readouterr().out)
    assert status == 1 and report["counts"]["fail"] == 1
    (scenario,) = report["scenarios"]
    problem = scenario["problems"][0]
    assert problem["rule"] == "2025.id-unique" and problem["strength"] == "MUST"
    assert problem["quote"] == "The request ID MUST NOT have been previously used by the requestor within the same session."
    assert scenario["requests"][2]["body"] == '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}'


def test_timing_and_oauth_rules_fail_a_client_that_breaks_them() -> None:
    eager = probe(f"{BROKEN} eager-resume {{url}}", ["cut-stream-resumable"])["cut-stream-resumable"]
    assert eager.status == "fail" and rules(eager) == {"2025.retry"}
    blind = probe(f"{BROKEN} blind-oauth {{url}}", ["oauth*"])
    assert {"2026.oauth-pkce", "2026.oauth-resource", "2026.oauth-state"} <= rules(blind["oauth"])
    assert "2026.oauth-issuer" in rules(blind["oauth-issuer-mismatch"])
    assert "2026.oauth-no-pkce" in rules(blind["oauth-no-pkce"])
    assert all(f.status == "fail" for f in blind.values())


def test_the_command_line_refuses_what_it_cannot_run(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["probe", "--client", "some-client --no-placeholder"]) == 4
    assert main(["probe", "--client", "client {url}", "--stdio"]) == 4  # stdio wants {server}
    assert main(["probe", "--client", "client {url}", "--only", "no-such-scenario"]) == 4
    assert main(["probe", "--replay", str(tmp_path / "x.json")]) == 4  # --replay needs --client
    (tmp_path / "bad.json").write_text('{"format": "something else"}')
    assert main(["probe", "--client", "client {url}", "--replay", str(tmp_path / "bad.json")]) == 4
    err = capsys.readouterr().err
    assert "must contain {url}" in err and "must contain {server}" in err and "no scenario matches" in err
