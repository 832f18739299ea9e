"""``mcpwire probe`` and ``mcpwire fuzz`` against the servers of the official SDKs
(docs/probing-others.md), over every transport each offers, in every revision each negotiates:

- the Python SDK's MCPServer (``mcp``, pinned in pyproject's bench extra): Streamable HTTP
  (``peers/sdk_server.py http plain``), stdio (``... stdio plain``), and HTTP+SSE
  (``peers/sdk_sse_server.py``, its ``sse_app()``);
- the TypeScript SDK v1 (pinned in _node.py): Streamable HTTP and stdio (``peers/ts_server.cjs``),
  HTTP+SSE (``peers/ts_sse_server.cjs``, its SSEServerTransport on createMcpExpressApp);
- the TypeScript SDK v2's server package: Streamable HTTP and stdio (``peers/ts2_server.mjs``,
  its createMcpHandler and, with ``stdio``, its serveStdio).

Each peer and transport is probed once (``strict``), and the test asserts, by strength, the
exact checks that do not pass (:data:`EXPECTED`): failures (a MUST of the official text of the
revision the check ran in), warnings (a SHOULD) and advice (this project's own conventions),
each checked by hand against the sentence it quotes and listed in docs/probing-others.md, whose
table of findings is held equal to what the tools report. A new failure is a false alarm of the
probe (or a new divergence to document); a missing one is a fix upstream.

Over stdio a server that drops a line makes the probe wait, so the default run probes the stdio
peers in 2025-11-25 and 2025-03-26 only (the revisions with and without batches); with
``MCPWIRE_INTEROP_FULL=1`` every revision each negotiates (a long run: two minutes).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import trio
from _node import PEERS, NodeSetup, node_or_skip, node_setup, node_setup_v2, url_printed_by
from _peers import SDK_SERVER, served

from mcpwire_adapters.testing.fuzz.oracle import Context, check
from mcpwire_adapters.testing.fuzz.runner import FuzzReport, fuzz, fuzz_stdio
from mcpwire_adapters.testing.probe.runner import Findings, probe, probe_stdio
from mcpwire_adapters.testing.rawwire import Request, headers, http_exchange, meta
from mcpwire_adapters.testing.verdict import Problem

TIMEOUT = 120
REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "probing-others.md"
FULL = os.environ.get("MCPWIRE_INTEROP_FULL") == "1"
STDIO_REVISIONS = None if FULL else ("2025-11-25", "2025-03-26")  # the default run's, over stdio
ERA = ("2025-11-25", "2025-06-18", "2025-03-26")
SDK_SSE = str(PEERS / "sdk_sse_server.py")


def _each(name: str, revisions: tuple[str, ...] = ERA) -> set[str]:
    return {f"{name}@{r}" for r in revisions}


# docs/probing-others.md, "The findings": by peer and transport, the checks that do not pass.
ENVELOPE_DROPPED = {  # stdio, 2026-07-28: no answer at all to these lines
    "envelope.parse-error", "envelope.not-an-object", "envelope.batch-refused", "envelope.jsonrpc-missing",
    "envelope.jsonrpc-wrong", "envelope.method-not-string", "envelope.id-null-refused", "envelope.id-bool-refused",
    "envelope.id-object-refused", "envelope.id-fraction-refused", "envelope.params-not-object"}
EXPECTED: dict[tuple[str, str], dict[str, set[str]]] = {
    ("python", "http"): {
        "fail": {*_each("era.id-null-answered"), "era.batch-received@2025-03-26"},
        "advice": {"envelope.id-too-large-refused", "envelope.id-too-long-refused", "envelope.params-not-object",
                   "meta.progress-token-bool", "meta.key-invalid", "http.content-type-wrong", "tools.unknown-tool",
                   *_each("era.batch-refused", ERA[:2])}},
    ("python", "sse"): {"fail": {"era.id-null-answered@2024-11-05"}, "advice": {"era.parse-error@2024-11-05"}},
    ("python", "stdio"): {
        "fail": {*ENVELOPE_DROPPED, "method.removed.initialize", *_each("era.id-null-answered", (*ERA, "2024-11-05")),
                 *_each("era.parse-error", (*ERA, "2024-11-05")), "era.batch-received@2025-03-26"},
        "advice": {"envelope.id-too-large-refused", "envelope.id-too-long-refused", "meta.progress-token-bool",
                   "meta.key-invalid", "tools.unknown-tool", *_each("era.batch-refused", ERA[:2])}},
    ("typescript-v1", "http"): {
        "fail": _each("era.origin-foreign-refused"),
        "advice": {*_each("era.id-null-answered"), *_each("era.batch-refused", ERA[:2])}},
    ("typescript-v1", "sse"): {"fail": {"era.id-null-answered@2024-11-05", "legacy.origin-foreign-refused@2024-11-05"},
                               "advice": {"era.parse-error@2024-11-05"}},
    ("typescript-v1", "stdio"): {
        "fail": {*_each("era.id-null-answered", (*ERA, "2024-11-05")), *_each("era.parse-error", (*ERA, "2024-11-05")),
                 "era.batch-received@2025-03-26"},
        "advice": _each("era.batch-refused", ERA[:2])},
    ("typescript-v2", "http"): {
        "fail": {"envelope.id-too-large-refused", "envelope.id-echoed-exactly", *_each("era.ids-echoed")},
        "warn": {"pagination.cursor-not-string"},
        "advice": {"envelope.id-fraction-refused", "envelope.id-too-long-refused", "envelope.params-not-object",
                   "meta.null", "meta.progress-token-bool", "meta.key-invalid", *_each("era.batch-refused", ERA[:2])}},
    ("typescript-v2", "stdio"): {
        "fail": {*ENVELOPE_DROPPED, "envelope.id-too-large-refused", "meta.null", "meta.progress-token-bool",
                 "version.unsupported", *_each("era.id-null-answered", (*ERA, "2024-11-05")),
                 *_each("era.parse-error", (*ERA, "2024-11-05")), "era.batch-received@2025-03-26"},
        "warn": {"pagination.cursor-not-string"},
        "advice": {"envelope.id-too-long-refused", "meta.key-invalid", *_each("era.batch-refused", ERA[:2])}},
}
NEGOTIATED: dict[tuple[str, str], list[str]] = {  # over HTTP: what each negotiates
    ("python", "http"): ["2026-07-28", *ERA], ("typescript-v1", "http"): list(ERA),
    ("typescript-v2", "http"): ["2026-07-28", *ERA], ("python", "sse"): ["2024-11-05"],
    ("typescript-v1", "sse"): ["2024-11-05"]}
TS2_ROUNDED = (2**53 + 1, 2**63 - 1, -(2**63), 2**63)  # the ids the TypeScript SDK v2 rounds through a double


def _probed(revision: str, transport: str) -> bool:
    """Whether the default run (or the full one) probes ``revision`` over ``transport``."""
    return transport != "stdio" or STDIO_REVISIONS is None or revision in STDIO_REVISIONS


def _key_revision(key: str) -> str:
    return key.split("@")[1] if "@" in key else "2026-07-28"


# -- the peers, and one probe of each -----------------------------------------------------------------------------
def _node(setup: Callable[[], NodeSetup]) -> NodeSetup:
    return node_or_skip(setup)


async def _probe_peer(peer: str, transport: str) -> Findings:
    """``peer`` started, probed over ``transport`` (strict, tools called), stopped."""
    options: dict[str, Any] = dict(rate=0, strict=True, timeout={"http": 3.0, "sse": 0.5, "stdio": 1.0}[transport])
    if transport == "stdio":
        stdio = {"python": [sys.executable, SDK_SERVER, "stdio", "plain"]}
        if peer == "typescript-v1":
            node = _node(node_setup)
            stdio[peer] = ["env", f"NODE_PATH={node.modules}", str(node.node), str(PEERS / "ts_server.cjs"), "stdio"]
        elif peer == "typescript-v2":
            node = _node(node_setup_v2)
            stdio[peer] = [str(node.node), str(PEERS / "ts2_server.mjs"), str(node.modules), "stdio"]
        revisions = None if STDIO_REVISIONS is None else list(STDIO_REVISIONS)
        return await probe_stdio(stdio[peer], revisions=revisions, **options)
    if peer == "python":
        with served(*((SDK_SSE,) if transport == "sse" else (SDK_SERVER, "http", "plain"))) as url:
            return await probe(url, **options)
    node = _node(node_setup if peer == "typescript-v1" else node_setup_v2)
    command = (node.command("ts_sse_server.cjs") if transport == "sse" else node.command("ts_server.cjs", "http")
               if peer == "typescript-v1" else [str(node.node), str(PEERS / "ts2_server.mjs"), str(node.modules)])
    async with url_printed_by(command, env=node.env, timeout=TIMEOUT) as url:
        return await probe(url, **options)


_FOUND: dict[tuple[str, str], Findings] = {}


def probed(peer: str, transport: str) -> Findings:
    """The findings of ``peer`` over ``transport`` (probed once a test run)."""
    if (peer, transport) not in _FOUND:
        async def go() -> Findings:
            with trio.fail_after(TIMEOUT):
                return await _probe_peer(peer, transport)
        _FOUND[peer, transport] = trio.run(go)
    return _FOUND[peer, transport]


def _by_status(findings: list[Any]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for f in findings:
        if f.status in ("fail", "warn", "advice"):
            out.setdefault(f.status, set()).add(f.subject.key)
    return out


@pytest.mark.parametrize("peer, transport", sorted(EXPECTED))
def test_each_peer_breaks_exactly_the_rules_listed(peer: str, transport: str) -> None:
    findings = probed(peer, transport)
    expected = {status: {k for k in keys if _probed(_key_revision(k), transport)}
                for status, keys in EXPECTED[peer, transport].items()}
    assert _by_status(findings) == {s: k for s, k in expected.items() if k}, _by_status(findings)
    assert findings.negotiated is not None
    if transport != "stdio":
        assert findings.negotiated.revisions == NEGOTIATED[peer, transport], findings.negotiated.revisions
    # Without --strict the advice is withheld: only failures and warnings show.
    plain = [f.shown(strict=False) for f in findings]
    assert _by_status(plain) == {s: k for s, k in expected.items() if k and s != "advice"}


def test_every_must_the_typescript_v2_server_breaks_over_http_is_an_id_rounded() -> None:
    findings = probed("typescript-v2", "http")
    must = [p for f in findings for p in f.problems if isinstance(p, Problem) and p.strength == "MUST"]
    assert {p.rule.id for p in must} == {"mcp.error-id", *_each("era.error-id")}, must
    echoed = next(f for f in findings if f.subject.id == "envelope.id-echoed-exactly")
    assert echoed.problems == [f"id {_as_javascript_prints(i)}, expected the request's id {i} or null"
                               for i in TS2_ROUNDED]


def _as_javascript_prints(value: int) -> int:
    """``value`` held in a double, as JavaScript prints it (the shortest digits that round-trip,
    then zeros): what the TypeScript server echoes."""
    return int(Decimal(repr(float(value))))


def test_the_python_server_takes_a_request_without_the_version_header_for_2025_03_26() -> None:
    header = next(f for f in probed("python", "http") if f.subject.id == "version.header-missing")
    assert header.status == "pass" and header.detail.startswith("the server serves 2025-03-26 clients"), header.detail


# -- the table of docs/probing-others.md ---------------------------------------------------------------------------
_ROW = re.compile(r"^\| (?P<server>[^|]+?) \| (?P<transport>[^|]+?) \| `(?P<key>[^`]+)` \| (?P<strength>MUST|SHOULD|advice) \|")
_STRENGTH = {"fail": "MUST", "warn": "SHOULD", "advice": "advice"}
_PEERS = {"Python SDK": "python", "TypeScript SDK v1": "typescript-v1", "TypeScript SDK v2": "typescript-v2"}
_TRANSPORTS = {"Streamable HTTP": "http", "HTTP+SSE": "sse", "stdio": "stdio"}


def _documented() -> set[tuple[str, str, str, str]]:
    text = DOC.read_text()
    table = text.split("<!-- findings: begin -->", 1)[1].split("<!-- findings: end -->", 1)[0]
    rows = set()
    for line in table.splitlines():
        found = _ROW.match(line)
        if found:
            rows.add((_PEERS[found["server"]], _TRANSPORTS[found["transport"]], found["key"], found["strength"]))
    return rows


def test_the_docs_list_every_finding_the_tools_report() -> None:
    """docs/probing-others.md's table of findings is what the probe reports, row for row (in
    the default run, the stdio rows of the revisions it probes)."""
    documented = {row for row in _documented() if _probed(_key_revision(row[2]), row[1])}
    reported = {(peer, transport, f.subject.key, _STRENGTH[f.status]) for peer, transport in EXPECTED
                for f in probed(peer, transport) if f.status in _STRENGTH}
    assert documented == reported, {"not documented": sorted(reported - documented),
                                    "documented, not reported": sorted(documented - reported)}


# -- the fuzzer ------------------------------------------------------------------------------------------------------
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


def _must_rules(report: FuzzReport) -> set[str]:
    return {p.rule.id for f in report.failures for p in f.problems if isinstance(p, Problem) and p.strength == "MUST"}


def test_a_short_fuzz_of_each_sdk_finds_only_the_true_failures() -> None:
    """A fixed-seed run against each server: the Python SDK breaks no MUST of 2026-07-28, and in
    2025-03-26 only the ones listed (a batch refused, a request with a null id taken for a
    notification); every MUST the TypeScript SDK v2 breaks is an integer id past 2^53-1 coming
    back rounded; the TypeScript SDK v1's, a foreign Origin served."""
    with served(SDK_SERVER, "http", "plain") as url:
        py: FuzzReport = trio.run(lambda: fuzz(url, max_examples=150, seed=11, all_tools=True))
        era: FuzzReport = trio.run(lambda: fuzz(url, max_examples=60, seed=11, revision="2025-03-26", timeout=5))
    assert py.failures == [], [(f.problems, [s.request.body for s in f.subject]) for f in py.failures]
    assert _must_rules(era) <= {"era.batch-receive@2025-03-26", "jsonrpc.reply"}, [f.problems for f in era.failures]

    node2, node1 = _node(node_setup_v2), _node(node_setup)

    async def typescript() -> tuple[FuzzReport, FuzzReport]:
        async with url_printed_by([str(node2.node), str(PEERS / "ts2_server.mjs"), str(node2.modules)],
                                  timeout=TIMEOUT) as url:
            ts2 = await fuzz(url, max_examples=150, seed=11, all_tools=True)
        async with url_printed_by(node1.command("ts_server.cjs", "http"), env=node1.env, timeout=TIMEOUT) as url:
            ts1 = await fuzz(url, max_examples=60, seed=11, revision="2025-11-25", timeout=5)
        return ts2, ts1

    ts2, ts1 = trio.run(typescript)
    for failure in ts2.failures:
        sent = json.loads(failure.subject[-1].request.body)["id"]
        assert isinstance(sent, int) and abs(sent) > 2**53 - 1, (failure.problems, sent)
        assert {p.rule.id for p in failure.problems if isinstance(p, Problem) and p.strength == "MUST"} <= {
            "mcp.result-id", "mcp.error-id"}, failure.problems
    assert _must_rules(ts1) <= {"era.origin@2025-11-25"}, [f.problems for f in ts1.failures]


def test_a_short_fuzz_over_stdio_finds_only_the_listed_failures() -> None:
    """The Python SDK over stdio, 2025-11-25: every MUST broken is a line dropped (a parse error,
    an invalid request, a null id), JSON-RPC 2.0's "the Server MUST reply"."""
    report: FuzzReport = trio.run(lambda: fuzz_stdio([sys.executable, SDK_SERVER, "stdio", "plain"], max_examples=30,
                                                     seed=11, revision="2025-11-25", timeout=1))
    assert _must_rules(report) <= {"jsonrpc.reply", "jsonrpc.error-member"}, [f.problems for f in report.failures]
