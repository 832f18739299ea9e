"""The official clients through ``mcpwire probe --client``: what they do that the probe must read
right, beyond the findings. What each breaks is held to docs/probing-others.md's table of client
findings, row for row, by tests/interop/test_probe_clients.py (every client, transport and
scenario); this file checks, on the real clients, the ways they speak that the table does not
show:

- the TypeScript SDK v2 client (``@modelcontextprotocol/client``, pinned by tests/interop;
  tests/interop/peers/ts2_probe_client.mjs, its version negotiation in ``auto`` mode) speaks
  2026-07-28 where the server does and falls back to ``initialize`` when a 2025-11-25 server
  refuses its ``server/discover`` probe; over stdio it starts the server twice, the first time
  for the probe alone, and the probe judges each process as a connection of its own;
- it and the Python SDK's ``Client`` (``mcp``, pinned in the dev extra;
  tests/interop/peers/sdk_client.py) stop ``input_required`` rounds after 10.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping, Sequence
from importlib import import_module
from pathlib import Path
from typing import Any

import trio

from mcpwire_adapters.testing.client_probe.runner import ClientFinding, probe_client
from mcpwire_adapters.testing.client_probe.scenarios import select_scenarios

ROOT = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(ROOT / "tests" / "interop"))  # its _node: Node 22 and the pinned SDK (not a package)
_node = import_module("_node")

PEERS = ROOT / "tests" / "interop" / "peers"
TIMEOUT = 10.0


def probe(command: str, patterns: Sequence[str], *, stdio: bool = False,
          env: Mapping[str, str] | None = None) -> dict[str, ClientFinding]:
    findings = trio.run(lambda: probe_client(command, select_scenarios(patterns, stdio=stdio), stdio=stdio,
                                             timeout=TIMEOUT, strict=True, env=env))
    return {f.subject.scenario.name: f for f in findings}


def sent(finding: ClientFinding) -> list[tuple[int, str, str, int]]:
    """(connection, method, era, status) of each JSON-RPC request or notification the client sent."""
    out = []
    for record in finding.subject.records:
        message: Any = record.message()
        if isinstance(message, dict) and "method" in message:
            out.append((record.connection, message["method"], record.era, record.status))
    return out


def v2_client() -> str:
    setup = _node.node_or_skip(_node.node_setup_client_v2)
    return shlex.join([str(setup.node), str(PEERS / "ts2_probe_client.mjs"), str(setup.modules)])


def test_the_typescript_v2_client_negotiates_and_falls_back_over_http() -> None:
    http = probe(f"{v2_client()} http {{url}}", ["basic", "basic-2025"])
    assert http["basic"].status == "pass" and http["basic-2025"].status == "pass"
    assert [(method, era) for _, method, era, _ in sent(http["basic"])] == [
        ("server/discover", "2026-07-28"), ("tools/list", "2026-07-28"), ("tools/call", "2026-07-28")]
    fallback = sent(http["basic-2025"])
    assert fallback[0][1:] == ("server/discover", "2026-07-28", 400)  # a 2025-11-25 server's answer to it
    assert [method for _, method, _, _ in fallback[1:3]] == ["initialize", "notifications/initialized"]


def test_the_typescript_v2_client_over_stdio_probes_on_a_process_of_its_own() -> None:
    stdio = probe(f"{v2_client()} stdio {{server}}", ["basic", "basic-2025"], stdio=True)
    assert stdio["basic"].status == "pass" and stdio["basic-2025"].status == "pass"
    assert [(c, m) for c, m, _, _ in sent(stdio["basic"])] == [
        (1, "server/discover"), (2, "tools/list"), (2, "tools/call")]
    assert [(c, m) for c, m, _, _ in sent(stdio["basic-2025"])] == [
        (1, "server/discover"), (2, "initialize"), (2, "notifications/initialized"), (2, "tools/list"),
        (2, "tools/call")]


def test_the_clients_of_2026_07_28_stop_input_required_rounds_after_10() -> None:
    python = f"{shlex.quote(sys.executable)} {shlex.quote(str(PEERS / 'sdk_client.py'))} client {{url}}"
    for command in (python, f"{v2_client()} http {{url}}"):
        rounds = probe(command, ["endless-rounds"])["endless-rounds"]
        assert rounds.status == "pass", rounds.problems
        calls = [m for _, m, era, _ in sent(rounds) if m == "tools/call" and era == "2026-07-28"]
        assert len(calls) == 11, (command, len(calls))  # the call, then 10 retries
