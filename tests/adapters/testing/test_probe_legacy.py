"""``mcpwire probe`` against the HTTP+SSE transport of 2024-11-05: a server whose POSTs fail as
the backwards-compatibility section of 2025-03-26 describes is probed by its GET stream (the
first event names the POST endpoint; answers come back on the stream). A raw server right about
every rule passes; one wrong about one rule fails that check (``_era_servers.legacy_server``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
import trio
from _era_servers import LEGACY_FAULTS, legacy_server
from _stdlib_http import serving_http

from mcpwire_adapters.testing.probe.runner import CHECKS, Check, Findings, json_report, probe, select, text_report
from mcpwire_adapters.testing.verdict import Problem

TIMEOUT = 60.0


def run_probe(url: str, checks: Sequence[Check] = CHECKS, **options: Any) -> Findings:
    async def go() -> Findings:
        with trio.fail_after(TIMEOUT):
            return await probe(url, checks, rate=0, timeout=1.5, **options)  # a wrong id is waited for this long
    return trio.run(go)


def test_a_server_of_the_http_sse_transport_is_detected_and_passes() -> None:
    with serving_http(legacy_server()) as url:
        findings = run_probe(url, strict=True)
        report = text_report(url, findings)
    negotiated = findings.negotiated
    assert negotiated is not None and (negotiated.transport, negotiated.revisions) == ("http+sse", ["2024-11-05"])
    assert negotiated.endpoint is not None and negotiated.endpoint.startswith(url.rsplit("/", 1)[0] + "/messages?")
    assert [(f.subject.key, f.status, f.detail) for f in findings if f.status != "pass"] == []
    keys = [f.subject.key for f in findings]
    assert {"legacy.endpoint-first@2024-11-05", "era.ping@2024-11-05", "era.ids-echoed@2024-11-05",
            "era.unknown-method@2024-11-05", "era.parse-error@2024-11-05"} <= set(keys)
    assert not any(k.startswith(("era.session", "era.batch", "auth.")) for k in keys)  # Streamable HTTP's only
    assert "negotiated: HTTP+SSE, revisions 2024-11-05" in report
    assert "https://modelcontextprotocol.io/specification/2024-11-05/basic/transports#http-with-sse" in report
    assert '"transport": "http+sse"' in json_report(url, findings)


@pytest.mark.parametrize("fault", sorted(LEGACY_FAULTS))
def test_each_check_fails_a_server_breaking_its_rule(fault: str) -> None:
    checks = select(["era.ping", "legacy.*"]) if fault == "wrong-id" else CHECKS  # each wrong id is waited for
    with serving_http(legacy_server(fault)) as url:
        findings = run_probe(url, checks, strict=True, revisions=["2024-11-05"])
    not_passed = {f.subject.id: f for f in findings if f.status != "pass"}
    check = LEGACY_FAULTS[fault]
    assert check in not_passed, [(f.subject.key, f.status, f.detail) for f in findings]
    finding = not_passed[check]
    problem = finding.problems[0]
    assert isinstance(problem, Problem)
    if fault in ("message-event", "answer-on-post"):  # "Server messages are sent as SSE message events": advice
        assert finding.status == "advice" and "legacy.message-events@2024-11-05" in {
            p.rule.id for p in finding.problems if isinstance(p, Problem)}
    else:
        assert finding.status == "fail" and problem.strength == "MUST", finding.problems
        assert problem.rule.source in ("MCP 2024-11-05", "JSON-RPC 2.0"), problem.rule
