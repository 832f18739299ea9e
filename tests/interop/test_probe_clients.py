"""``mcpwire probe --client`` against the clients of the official SDKs (docs/probing-others.md,
"Clients"), each as a short script that connects, lists the tools and calls ``echo``:

- the Python SDK (``mcp``, pinned in the dev extra; ``peers/sdk_client.py``): its
  ``ClientSession`` over its Streamable HTTP and stdio clients, and its ``Client`` over HTTP;
- the TypeScript SDK v1 (pinned in _node.py; ``peers/ts_probe_client.cjs``), HTTP and stdio;
- the TypeScript SDK v2's client package (pinned in _node.py; ``peers/ts2_probe_client.mjs``,
  its version negotiation on), HTTP and stdio.

Each client and transport is probed once (``strict``), through every scenario of its transport,
and the docs' table of client findings is held equal to what the probe reports, row for row
(client, transport, scenario, rule, strength). A new row is a false alarm of the probe (or a new
divergence to document, checked by hand); a row gone is a fix upstream.

The scenarios that wait out the probe's deadline or move 50 MiB (:data:`FULL_ONLY`) run only
with ``MCPWIRE_INTEROP_FULL=1``; the default run (about 50 s) holds the other rows.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
import trio
from _node import PEERS, node_or_skip, node_setup, node_setup_client_v2

from mcpwire_adapters.testing.client_probe.runner import ClientFinding, probe_client
from mcpwire_adapters.testing.client_probe.scenarios import select_scenarios
from mcpwire_adapters.testing.verdict import Problem

TIMEOUT = 10.0  # seconds each client gets in a scenario
REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "probing-others.md"
FULL = os.environ.get("MCPWIRE_INTEROP_FULL") == "1"
# The scenarios of the full run only: a client that waits out the deadline there costs 10 s each.
FULL_ONLY = {("oversized", "http"), ("oversized", "stdio"), ("endless-requests", "http"),
             ("endless-requests", "stdio"), ("cut-stream", "http"), ("invalid-json", "stdio")}
CLIENTS = (("python-session", "http"), ("python-session", "stdio"), ("python-client", "http"),
           ("typescript-v1", "http"), ("typescript-v1", "stdio"), ("typescript-v2", "http"),
           ("typescript-v2", "stdio"))
# What each does not reach: the 2026-07-28 scenarios a client of 2025-11-25 only never meets, the
# OAuth ones a script without an OAuth provider never starts.
MODERN_ONLY = {"basic", "endless-rounds", "tool-gone"}
OAUTH = {"oauth", "oauth-issuer-mismatch", "oauth-no-pkce"}
NOT_APPLICABLE: dict[tuple[str, str], set[str]] = {
    ("python-session", "http"): MODERN_ONLY | OAUTH, ("python-session", "stdio"): MODERN_ONLY,
    ("python-client", "http"): OAUTH, ("typescript-v1", "http"): MODERN_ONLY,
    ("typescript-v1", "stdio"): MODERN_ONLY, ("typescript-v2", "http"): set(), ("typescript-v2", "stdio"): set()}


def _runs(scenario: str, transport: str) -> bool:
    """Whether this run (default or full) probes ``scenario`` over ``transport``."""
    return FULL or (scenario, transport) not in FULL_ONLY


def _command(client: str, transport: str) -> tuple[str, Mapping[str, str] | None]:
    """The client's command line for ``mcpwire probe --client``, and its environment."""
    target = "{server}" if transport == "stdio" else "{url}"
    if client.startswith("python"):
        mode = "client" if client == "python-client" else transport
        return f"{shlex.quote(sys.executable)} {shlex.quote(str(PEERS / 'sdk_client.py'))} {mode} {target}", None
    if client == "typescript-v1":
        v1 = node_or_skip(node_setup)
        return f"{shlex.quote(str(v1.node))} {shlex.quote(str(PEERS / 'ts_probe_client.cjs'))} {transport} {target}", v1.env
    v2 = node_or_skip(node_setup_client_v2)  # an ES module: the pinned modules folder is its first argument
    script = shlex.join([str(v2.node), str(PEERS / "ts2_probe_client.mjs"), str(v2.modules)])
    return f"{script} {transport} {target}", None


_FOUND: dict[tuple[str, str], list[ClientFinding]] = {}


def probed(client: str, transport: str) -> list[ClientFinding]:
    """The findings of ``client`` over ``transport``, every scenario this run probes (once a
    test run)."""
    if (client, transport) not in _FOUND:
        command, env = _command(client, transport)
        stdio = transport == "stdio"
        scenarios = [s for s in select_scenarios([], stdio=stdio) if _runs(s.name, transport)]
        _FOUND[client, transport] = trio.run(lambda: probe_client(command, scenarios, stdio=stdio, timeout=TIMEOUT,
                                                                  strict=True, env=env))
    return _FOUND[client, transport]


Row = tuple[str, str, str, str, str]  # client, transport, scenario, rule, strength


def _reported(client: str, transport: str) -> set[Row]:
    rows: set[Row] = set()
    for finding in probed(client, transport):
        if finding.status in ("fail", "warn", "advice"):
            for problem in finding.problems:
                assert isinstance(problem, Problem), problem  # every problem names its rule
                rows.add((client, transport, finding.subject.scenario.name, problem.rule.id, problem.strength))
    return rows


@pytest.mark.parametrize("client, transport", CLIENTS)
def test_each_client_reaches_the_scenarios_of_the_revisions_it_speaks(client: str, transport: str) -> None:
    """Not applicable: for a client of 2025-11-25 only, the 2026-07-28 scenarios; for a script
    without OAuth, the OAuth ones. The TypeScript SDK v2 reaches every one."""
    found = probed(client, transport)
    skipped = {f.subject.scenario.name for f in found if f.status == "n/a"}
    assert skipped == {s for s in NOT_APPLICABLE[client, transport] if _runs(s, transport)}, \
        {f.subject.scenario.name: f.detail for f in found if f.status == "n/a"}


# -- the table of docs/probing-others.md, "Clients" ------------------------------------------------------------
_ROW = re.compile(r"^\| (?P<clients>[^|]+?) \| (?P<transports>[^|]+?) \| `(?P<scenario>[^`]+)` \| `(?P<rule>[^`]+)` \| "
                  r"(?P<strength>MUST|SHOULD|advice) \|")
_CLIENT_NAMES = {"Python `ClientSession`": "python-session", "Python `Client`": "python-client",
                 "TypeScript v1": "typescript-v1", "TypeScript v2": "typescript-v2"}
_TRANSPORT_NAMES = {"HTTP": "http", "stdio": "stdio"}


def documented() -> set[Row]:
    """The rows of the docs' table of client findings, each row's clients and transports
    expanded (every pair one this test probes)."""
    text = DOC.read_text(encoding="utf-8")
    table = text.split("<!-- client findings: begin -->", 1)[1].split("<!-- client findings: end -->", 1)[0]
    rows: set[Row] = set()
    for line in table.splitlines():
        found = _ROW.match(line)
        if found is None:
            assert not line.startswith("| ") or line.startswith(("| Client", "| ---")), f"not a row: {line}"
            continue
        for name in found["clients"].split(", "):
            for transport in found["transports"].split(", "):
                pair = (_CLIENT_NAMES[name], _TRANSPORT_NAMES[transport])
                assert pair in CLIENTS, f"{name} over {transport} is not probed: {line}"
                rows.add((*pair, found["scenario"], found["rule"], found["strength"]))
    return rows


def test_the_docs_list_every_finding_the_probe_reports() -> None:
    """docs/probing-others.md's table of client findings is what the probe reports, row for row
    (in the default run, the rows of the scenarios it probes)."""
    expected = {row for row in documented() if _runs(row[2], row[1])}
    reported = set().union(*(_reported(client, transport) for client, transport in CLIENTS))
    assert expected == reported, {"not documented": sorted(reported - expected),
                                  "documented, not reported": sorted(expected - reported)}
