"""``mcpwire probe`` and ``mcpwire fuzz`` against the everything-servers of the other SDKs (
docs/probing-others.md): the TypeScript SDK v2's server package (pinned in _node.py, installed
as the conformance runner is) behind ``peers/ts2_server.mjs``, and the Python SDK's MCPServer
(``mcp``, pinned in pyproject's bench extra) behind ``peers/sdk_server.py plain``.

Each asserts, by strength, the exact set of checks that do not pass: failures (a MUST of the
official text broken), warnings (a SHOULD) and advice (this project's own conventions, with
``strict``), each checked by hand against the official text and written down with its reproducer
in docs/probing-others.md. A new failure is a false alarm of the probe (or a new divergence to
document); a missing one is a fix upstream.
"""

from __future__ import annotations

import json
from contextlib import AbstractAsyncContextManager
from decimal import Decimal

import pytest
import trio
from _node import PEERS, NodeSetup, node_or_skip, node_setup_v2, url_printed_by
from _peers import SDK_SERVER, served

from mcpwire_adapters.testing.fuzz.oracle import Context, check
from mcpwire_adapters.testing.fuzz.runner import FuzzReport, fuzz
from mcpwire_adapters.testing.probe.runner import Finding, probe
from mcpwire_adapters.testing.rawwire import Request, headers, http_exchange, meta
from mcpwire_adapters.testing.verdict import Problem

TIMEOUT = 30

# docs/probing-others.md, "TypeScript SDK v2". The one MUST it breaks: an integer id it cannot hold
# in a double (past 2^53-1) comes back rounded, neither the request's id nor null.
TS2_FAILED = {"envelope.id-too-large-refused", "envelope.id-echoed-exactly"}
TS2_ROUNDED = (2**53 + 1, 2**63 - 1, -(2**63), 2**63)  # the ids of envelope.id-echoed-exactly it rounds
TS2_WARNED = {"pagination.cursor-not-string"}  # -32603 (a dump of its validator's text): SHOULD be -32602
TS2_ADVISED = {
    "envelope.id-fraction-refused", "envelope.id-too-long-refused", "envelope.params-not-object", "meta.null",
    "meta.progress-token-bool", "meta.key-invalid",
}
# docs/probing-others.md, "Python SDK": no MUST, no SHOULD broken.
PY_ADVISED = {
    "envelope.id-too-large-refused", "envelope.id-too-long-refused", "envelope.params-not-object",
    "meta.progress-token-bool", "meta.key-invalid", "http.content-type-wrong", "tools.unknown-tool",
}


@pytest.fixture(scope="module")
def node2() -> NodeSetup:
    return node_or_skip(node_setup_v2)


def ts2_server(node: NodeSetup) -> AbstractAsyncContextManager[str]:
    return url_printed_by([str(node.node), str(PEERS / "ts2_server.mjs"), str(node.modules)], timeout=TIMEOUT)


def _by_status(findings: list[Finding]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for f in findings:
        out.setdefault(f.status, set()).add(f.subject.id)
    return out


def test_the_probe_reports_the_ts_sdk_v2_divergences_by_strength(node2: NodeSetup) -> None:
    async def main() -> tuple[list[Finding], list[Finding]]:
        async with ts2_server(node2) as url:
            return list(await probe(url, rate=0, strict=True)), list(await probe(url, rate=0))

    strict, plain = trio.run(main)
    found = _by_status(strict)
    assert found.get("fail") == TS2_FAILED, found
    assert found.get("warn") == TS2_WARNED and found.get("advice") == TS2_ADVISED, found
    # Every MUST problem is an id rounded through a double; the rest of each check is advice.
    must = [p for f in strict for p in f.problems if isinstance(p, Problem) and p.strength == "MUST"]
    assert {p.rule.id for p in must} == {"mcp.error-id"}, must
    echoed = next(f for f in strict if f.subject.id == "envelope.id-echoed-exactly")
    assert echoed.problems == [f"id {_as_javascript_prints(i)}, expected the request's id {i} or null"
                               for i in TS2_ROUNDED]
    # Without --strict the advice is withheld: those checks pass.
    assert _by_status(plain).get("fail") == TS2_FAILED and not _by_status(plain).get("advice")
    assert {f.subject.id for f in plain if f.withheld} == TS2_ADVISED | {"envelope.id-too-large-refused"}


def _as_javascript_prints(value: int) -> int:
    """``value`` held in a double, as JavaScript prints it (the shortest digits that round-trip,
    then zeros): what the TypeScript server echoes."""
    return int(Decimal(repr(float(value))))


def test_the_probe_reports_the_python_sdk_divergences_by_strength() -> None:
    with served(SDK_SERVER, "http", "plain") as url:
        strict = trio.run(lambda: probe(url, rate=0, strict=True))
        plain = trio.run(lambda: probe(url, rate=0))
    found = _by_status(list(strict))
    assert "fail" not in found and "warn" not in found, found
    assert found.get("advice") == PY_ADVISED, found
    # A request without MCP-Protocol-Version is taken for 2025-03-26, as the transport allows a
    # server that serves clients of that era.
    header = next(f for f in strict if f.subject.id == "version.header-missing")
    assert header.status == "pass" and header.detail.startswith("the server serves 2025-03-26 clients"), header.detail
    assert {f.status for f in plain} == {"pass", "n/a"}


def test_the_fuzzer_takes_an_echoed_257_byte_id_for_the_answer() -> None:
    """The Python SDK serves a 257-byte string id, echoed: the schema's RequestId is any string,
    so that is the request's answer (this project's refusal of it is advice), not "no response"."""
    body = json.dumps({"jsonrpc": "2.0", "id": "x" * 257, "method": "server/discover",
                       "params": {"_meta": meta()}}).encode()
    request = Request("POST", headers("server/discover"), body, rpc_id="x" * 257)
    with served(SDK_SERVER, "http", "plain") as url:
        reply = trio.run(lambda: http_exchange(url, request, timeout=TIMEOUT))
    assert reply.status == 200 and b'"id":"' + b"x" * 257 + b'"' in reply.body
    problems = check(request, reply, Context())
    assert [(p.strength, p.rule.id) for p in problems] == [("advice", "mcpwire.id-bounds")], problems


def test_a_short_fuzz_of_each_sdk_finds_only_the_true_failures(node2: NodeSetup) -> None:
    """A fixed-seed run against each server: the Python SDK breaks no MUST; every MUST the
    TypeScript SDK breaks is an integer id past 2^53-1 coming back rounded."""
    with served(SDK_SERVER, "http", "plain") as url:
        py: FuzzReport = trio.run(lambda: fuzz(url, max_examples=150, seed=11, all_tools=True))
    assert py.failures == [], [(f.problems, [s.request.body for s in f.subject]) for f in py.failures]

    async def main() -> FuzzReport:
        async with ts2_server(node2) as url:
            return await fuzz(url, max_examples=150, seed=11, all_tools=True)

    ts = trio.run(main)
    for failure in ts.failures:
        sent = json.loads(failure.subject[-1].request.body)["id"]
        assert isinstance(sent, int) and abs(sent) > 2**53 - 1, (failure.problems, sent)
        assert {p.rule.id for p in failure.problems if isinstance(p, Problem) and p.strength == "MUST"} <= {
            "mcp.result-id", "mcp.error-id"}, failure.problems
