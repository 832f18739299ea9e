"""The official clients through ``mcpwire probe --client``: the Python SDK's ``ClientSession``
(``mcp``, pinned in the dev extra; tests/interop/peers/sdk_client.py) and the TypeScript SDK v1
client (pinned by tests/interop; tests/interop/peers/ts_probe_client.cjs). Both speak 2025-11-25
only, so the 2026-07-28 scenarios are not applicable to them. What each breaks is written here
as it was found and checked by hand against the sentence and the SDK's code (the whole list, with
the scenarios too slow for this suite, is in docs/probing-others.md, "Clients"):

- both: a 404 on the session ends the run instead of a new ``initialize`` (a MUST of
  2025-11-25's session management);
- the Python SDK takes a response with another id, on the call's SSE stream, as the call's
  answer (its streamable HTTP client rewrites every response id on that stream to the request's;
  advice: no sentence binds the client there);
- the TypeScript SDK v1 uses authorization server metadata whose issuer is not the one its URL
  was built from (its auth.js says so: it does not check it), and proceeds when the metadata
  lists no code_challenge_methods_supported (two MUSTs of the authorization pages).
"""

from __future__ import annotations

import shlex
import sys
from importlib import import_module
from collections.abc import Mapping, Sequence
from pathlib import Path

import trio

from mcpwire_adapters.testing.client_probe.runner import ClientFinding, probe_client
from mcpwire_adapters.testing.client_probe.scenarios import select_scenarios
from mcpwire_adapters.testing.verdict import Problem

ROOT = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(ROOT / "tests" / "interop"))  # its _node: Node 22 and the pinned SDK (not a package)
node_or_skip = import_module("_node").node_or_skip

PEERS = ROOT / "tests" / "interop" / "peers"
TIMEOUT = 10.0


def probe(command: str, patterns: Sequence[str], *, stdio: bool = False,
          env: Mapping[str, str] | None = None) -> dict[str, ClientFinding]:
    findings = trio.run(lambda: probe_client(command, select_scenarios(patterns, stdio=stdio), stdio=stdio,
                                             timeout=TIMEOUT, strict=True, env=env))
    return {f.subject.scenario.name: f for f in findings}


def rules(finding: ClientFinding) -> list[str]:
    return [p.rule.id for p in finding.problems if isinstance(p, Problem)]


def test_the_python_sdk_client_session() -> None:
    client = f"{shlex.quote(sys.executable)} {shlex.quote(str(PEERS / 'sdk_client.py'))}"
    http = probe(f"{client} http {{url}}", ["basic", "basic-2025", "session-404", "wrong-id"])
    assert http["basic"].status == "n/a" and "never spoke 2026-07-28" in http["basic"].detail
    assert http["basic-2025"].status == "pass"
    assert http["session-404"].status == "fail" and rules(http["session-404"]) == ["2025.session-404"]
    assert http["wrong-id"].status == "advice" and rules(http["wrong-id"]) == ["robust.wrong-id"]
    stdio = probe(f"{client} stdio {{server}}", ["basic-2025"], stdio=True)
    assert stdio["basic-2025"].status == "pass"
    modern = probe(f"{client} client {{url}}", ["basic"])  # its Client, which speaks 2026-07-28
    assert modern["basic"].status == "pass"


def test_the_typescript_sdk_v1_client() -> None:
    setup = node_or_skip()
    client = f"{shlex.quote(str(setup.node))} {shlex.quote(str(PEERS / 'ts_probe_client.cjs'))}"
    http = probe(f"{client} http {{url}}", ["basic-2025", "session-404", "cut-stream-resumable", "oauth-*"],
                 env=setup.env)
    assert http["basic-2025"].status == "pass" and http["cut-stream-resumable"].status == "pass"
    assert http["session-404"].status == "fail" and rules(http["session-404"]) == ["2025.session-404"]
    assert http["oauth-issuer-mismatch"].status == "fail"
    assert set(rules(http["oauth-issuer-mismatch"])) == {"2025.oauth-issuer"}
    assert http["oauth-no-pkce"].status == "fail" and set(rules(http["oauth-no-pkce"])) == {"2025.oauth-no-pkce"}
    stdio = probe(f"{client} stdio {{server}}", ["basic-2025"], stdio=True, env=setup.env)
    assert stdio["basic-2025"].status == "pass"
