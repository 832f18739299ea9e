"""``mcpwire probe`` against the everything-servers of the other SDKs (
docs/probing-others.md): the TypeScript SDK v2's server package (pinned in _node.py, installed
as the conformance runner is) behind ``peers/ts2_server.mjs``, and the Python SDK's MCPServer
(``mcp``, pinned in pyproject's bench extra) behind ``peers/sdk_server.py plain``.

Each asserts the exact set of failing checks: every one is a divergence checked by hand against
the wire reference and written down with its reproducer in docs/probing-others.md. A new failure
is a false alarm of the probe (or a new divergence to document); a missing one is a fix upstream.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

import pytest
import trio
from _node import PEERS, NodeSetup, node_or_skip, node_setup_v2, url_printed_by
from _peers import SDK_SERVER, served

from mcpwire_adapters.testing.probe.runner import Finding, probe

TIMEOUT = 30

# docs/probing-others.md, "TypeScript SDK v2"
TS2_DIVERGENCES = {
    "envelope.id-fraction-refused", "envelope.id-too-large-refused", "envelope.id-too-long-refused",
    "envelope.params-not-object", "meta.null", "meta.progress-token-bool", "meta.key-invalid",
    "http.accept-missing", "http.accept-json-only", "pagination.cursor-not-string",
}
# docs/probing-others.md, "Python SDK"
PY_DIVERGENCES = {
    "envelope.id-too-large-refused", "envelope.id-too-long-refused", "envelope.params-not-object",
    "meta.progress-token-bool", "meta.key-invalid", "version.header-missing", "http.content-type-wrong",
    "tools.unknown-tool",
}


@pytest.fixture(scope="module")
def node2() -> NodeSetup:
    return node_or_skip(node_setup_v2)


def ts2_server(node: NodeSetup) -> AbstractAsyncContextManager[str]:
    return url_printed_by([str(node.node), str(PEERS / "ts2_server.mjs"), str(node.modules)], timeout=TIMEOUT)


def _failing(findings: list[Finding]) -> set[str]:
    return {f.subject.id for f in findings if f.status == "fail"}


def test_the_probe_reports_the_ts_sdk_v2_divergences_and_nothing_else(node2: NodeSetup) -> None:
    async def main() -> set[str]:
        async with ts2_server(node2) as url:
            return _failing(list(await probe(url, rate=0)))

    assert trio.run(main) == TS2_DIVERGENCES


def test_the_probe_reports_the_python_sdk_divergences_and_nothing_else() -> None:
    with served(SDK_SERVER, "http", "plain") as url:
        findings = trio.run(lambda: probe(url, rate=0))
    assert _failing(list(findings)) == PY_DIVERGENCES
