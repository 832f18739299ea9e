"""``mcpwire probe --client``: run an MCP client through the hostile server's scenarios and judge
what it did. This module owns the public entry points (:func:`run_scenario`, :func:`probe_client`),
the subject of a finding (:class:`ScenarioRun`) and the replay files (:func:`write_replay`,
:func:`read_replay`).

    findings = trio.run(probe_client, "mcpwire call {url} echo", SCENARIOS)

For each scenario: the hostile server starts (HTTP: a listener on 127.0.0.1, ``{url}`` in the
command replaced by its MCP endpoint; stdio: ``{server}`` replaced by the command that starts
it, for the client to spawn), the client command runs until it exits or ``timeout`` seconds
pass (then its process group is stopped), and every request it sent is judged
(:func:`~.checks.judge_run`). The client's environment gets ``MCP_PROBE_SCENARIO`` (the
scenario's name) and, for the OAuth scenarios, ``BROWSER`` (:mod:`.browser`, which follows the
authorization redirect as a person would). Needs trio and h11 (the ``probe`` extra).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeAlias

import trio

from ..verdict import Finding, Outcome, Problem
from .checks import judge_run
from .hostile import HostileServer, Record
from .http_listener import hostile_http
from .process import ProcessOutcome, fill, run_client
from .scenarios import WRONG_ID_TEXT, Scenario, by_name
from .script import Answer, answer_from_json, answer_to_json
from .stdio_server import read_records, write_setup

__all__ = ["FORMAT", "ClientFinding", "Replay", "ScenarioRun", "probe_client", "read_replay", "run_scenario",
           "stdio_server_command", "write_replay"]

FORMAT: Final = "mcpwire-client-probe/1"
STDIO_SERVER: Final = "mcpwire_adapters.testing.client_probe.stdio_server"
BROWSER_HELPER: Final = "mcpwire_adapters.testing.client_probe.browser"
SERVER_GRACE: Final = 5.0  # seconds a stdio server outlives the client's deadline, at most


@dataclass(frozen=True)
class ScenarioRun:
    """One run of a client through a scenario: the ``scenario``, the ``transport`` (``http``
    or ``stdio``), the ``answers`` the server had (its first ``own`` the scenario's), the
    ``argv`` run, how the ``process`` went, the ``records`` of every request and what answered
    it, and the MCP endpoint's ``url`` (HTTP)."""

    scenario: Scenario
    transport: str
    answers: tuple[Answer, ...]
    own: int
    argv: tuple[str, ...]
    process: ProcessOutcome
    records: tuple[Record, ...]
    url: str = ""

    @property
    def id(self) -> str:
        return f"{self.scenario.name} [{self.transport}]"


ClientFinding: TypeAlias = Finding[ScenarioRun]
"""What the client probe found in one scenario: ``subject`` is the :class:`ScenarioRun`."""


def stdio_server_command(setup: Path) -> list[str]:
    """The command line that starts the hostile stdio server with ``setup``."""
    return [sys.executable, "-m", STDIO_SERVER, str(setup)]


async def run_scenario(command: str, scenario: Scenario, *, stdio: bool = False, timeout: float = 20.0,
                       answers: Sequence[Answer] | None = None, own: int | None = None,
                       env: Mapping[str, str] | None = None) -> tuple[ScenarioRun, Outcome]:
    """Run the client ``command`` through ``scenario`` (with ``answers`` instead of its own: a
    replay, a fuzz case) and judge it."""
    script = tuple(answers) if answers is not None else scenario.script()
    own = len(scenario.answers) if own is None else own
    environment = {**(os.environ if env is None else env), "MCP_PROBE_SCENARIO": scenario.name,
                   "MCP_PROBE_TRANSPORT": "stdio" if stdio else "http"}
    if scenario.oauth:
        environment["BROWSER"] = f"{sys.executable} -m {BROWSER_HELPER} %s"
    watch = (WRONG_ID_TEXT,)
    if stdio:
        with tempfile.TemporaryDirectory(prefix="mcpwire-client-probe-") as folder:
            setup, log = Path(folder) / "setup.json", Path(folder) / "records.jsonl"
            write_setup(setup, scenario=scenario.name, answers=[answer_to_json(a) for a in script], own=own,
                        records=log, deadline=timeout + SERVER_GRACE)
            argv = fill(command, server=stdio_server_command(setup))
            process = await run_client(argv, timeout=timeout, env=environment, watch=watch)
            records = read_records(log)
        url = ""
    else:
        async with hostile_http(lambda origin: HostileServer(scenario, script, own=own, base=origin)) as (url, server):
            argv = fill(command, url=url)
            process = await run_client(argv, timeout=timeout, env=environment, watch=watch)
            await trio.sleep(0.05)  # let the listener see the client's connections close
        records = server.records
    run = ScenarioRun(scenario, "stdio" if stdio else "http", script, own, tuple(argv), process, tuple(records), url)
    return run, judge_run(scenario, records, process, stdio=stdio, mcp_url=url)


async def probe_client(command: str, scenarios: Sequence[Scenario], *, stdio: bool = False, timeout: float = 20.0,
                       strict: bool = False, env: Mapping[str, str] | None = None,
                       progress: Callable[[int, int, Scenario], None] | None = None) -> list[ClientFinding]:
    """Run ``command`` through each of ``scenarios`` in turn; one finding each, in order (without
    ``strict`` the advice is withheld). ``progress(done, total, scenario)`` is called before each."""
    findings = []
    for number, scenario in enumerate(scenarios):
        if progress is not None:
            progress(number, len(scenarios), scenario)
        run, outcome = await run_scenario(command, scenario, stdio=stdio, timeout=timeout, env=env)
        findings.append(Finding.of(run, outcome).shown(strict=strict))
    return findings


# -- replay files ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Replay:
    """What a replay file holds: the ``scenario``, the ``transport``, the exact ``answers`` (the
    first ``own`` the scenario's), and what was found then (``problems``, for the report)."""

    scenario: Scenario
    transport: str
    answers: tuple[Answer, ...]
    own: int
    problems: tuple[str, ...] = ()
    mutations: tuple[str, ...] = ()


def write_replay(path: Path, run: ScenarioRun, problems: Sequence[str], mutations: Sequence[str] = ()) -> Path:
    """Write ``run`` (its scenario and exact answers) as a replay file at ``path``."""
    data: dict[str, Any] = {
        "format": FORMAT, "scenario": run.scenario.name, "transport": run.transport, "own": run.own,
        "mutations": list(mutations), "answers": [answer_to_json(a) for a in run.answers],
        "found": [{"problem": str(p), **({"rule": p.rule.id, "strength": p.rule.strength} if isinstance(p, Problem)
                                        else {})} for p in problems],
        "replay": "mcpwire probe --client 'COMMAND ...' " + ("--stdio " if run.transport == "stdio" else "")
                  + f"--replay {path.name}"}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path


def read_replay(path: Path | str) -> Replay:
    """A replay file (ValueError for one that is not, KeyError for a scenario that does not exist)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"not a {FORMAT} file")
    answers = data.get("answers")
    if not isinstance(answers, list) or not all(isinstance(a, dict) for a in answers):
        raise ValueError("answers must be a list of objects")
    transport = data.get("transport", "http")
    if transport not in ("http", "stdio"):
        raise ValueError(f"transport must be http or stdio, not {transport!r}")
    found = data.get("found", [])
    return Replay(by_name(str(data.get("scenario"))), transport, tuple(answer_from_json(a) for a in answers),
                  int(data.get("own", 0)), tuple(str(f.get("problem", "")) for f in found if isinstance(f, dict)),
                  tuple(str(m) for m in data.get("mutations", [])))
