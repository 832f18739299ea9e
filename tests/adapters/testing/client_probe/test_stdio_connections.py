"""A client that starts the stdio server more than once (one process to probe the server's
revision, another for the session, as the TypeScript SDK v2 does in its ``auto`` mode): every
process's records are kept, and each connection is judged as one of its own (its own
handshake, its own ids), through the real hostile stdio server and a real client process
(``_respawning_client.py``)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import trio

from mcpwire_adapters.testing.client_probe.runner import run_scenario
from mcpwire_adapters.testing.client_probe.scenarios import by_name
from mcpwire_adapters.testing.verdict import Problem

CLIENT = f"{shlex.quote(sys.executable)} {shlex.quote(str(Path(__file__).with_name('_respawning_client.py')))}"


def test_each_server_process_is_a_connection_of_its_own() -> None:
    run, outcome = trio.run(lambda: run_scenario(f"{CLIENT} clean {{server}}", by_name("basic-2025"), stdio=True,
                                                 timeout=20))
    assert run.process.exit_code == 0, run.process.stderr
    methods = [(r.connection, r.message().get("method")) for r in run.records if isinstance(r.message(), dict)]
    assert methods[:3] == [(1, "initialize"), (1, "notifications/initialized"), (1, "tools/list")], methods
    assert methods[3:6] == [(2, "initialize"), (2, "notifications/initialized"), (2, "tools/list")], methods
    assert [r.index for r in run.records] == list(range(len(run.records)))
    # Both connections number their requests from 0: no id is reused within a connection.
    assert outcome.status == "pass", outcome.problems


def test_a_rule_broken_on_the_first_connection_is_reported() -> None:
    run, outcome = trio.run(lambda: run_scenario(f"{CLIENT} null-id-first {{server}}", by_name("basic-2025"),
                                                 stdio=True, timeout=20))
    assert run.process.exit_code == 0, run.process.stderr
    assert outcome.status == "fail"
    assert [p.rule.id for p in outcome.problems if isinstance(p, Problem)] == ["2025.request-id"], outcome.problems
