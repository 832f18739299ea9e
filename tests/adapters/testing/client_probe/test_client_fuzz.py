"""``mcpwire fuzz --client``: mutations of the answers as data, a short run that finds a client's
crash, shrinks it to the one mutation it needs and writes a replay file that ``mcpwire probe
--client --replay`` runs again. A long run is documented in docs/probing-clients.md."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from mcpwire_adapters.cli import main
from mcpwire_adapters.testing.client_probe.fuzzing import Mutation, apply, fuzz_client
from mcpwire_adapters.testing.client_probe.runner import read_replay
from mcpwire_adapters.testing.client_probe.scenarios import by_name, select_scenarios
from mcpwire_adapters.testing.verdict import Problem

HERE = Path(__file__).resolve().parent
FRAGILE = f"{shlex.quote(sys.executable)} {shlex.quote(str(HERE / '_broken_client.py'))} fragile {{url}}"


def test_mutations_change_only_the_row_they_name() -> None:
    script = by_name("wrong-id").script()
    mutated = apply(script, [Mutation("order", 0, [0, 1]), Mutation("id", 0, [1, "other"]),
                             Mutation("field", 0, [0, ["result", "content"], "delete", None]),
                             Mutation("split", 1, [3]), Mutation("status", 2, 500), Mutation("cut", 3),
                             Mutation("kind", 4, "sse"), Mutation("drop", 99, [0])])
    first = mutated[0].messages
    assert first[0]["id"] == "$id" and "content" not in first[0]["result"]  # swapped, then its member deleted
    assert first[1]["id"] == "other"
    assert (mutated[1].splits, mutated[2].status, mutated[3].end, mutated[4].kind) == ((3,), 500, "cut", "sse")
    assert mutated[5:] == script[5:]


def test_a_short_run_finds_a_crash_shrinks_it_and_the_replay_reproduces_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = fuzz_client(FRAGILE, select_scenarios(["basic"], stdio=False), timeout=5.0, max_examples=20, seed=1,
                         time_budget=60.0, out_dir=tmp_path, strict=True)
    assert report.cases <= 1 + 2 * 20 + 4 and report.findings  # the plain run, the cases and their shrinking, ours
    finding, mutations = report.findings[0], report.mutations[0]
    assert finding.status == "advice" and [p.rule.id for p in finding.problems if isinstance(p, Problem)] == [
        "robust.crash"]
    assert len(mutations) == 1 and finding.path is not None
    replay = read_replay(finding.path)
    assert replay.scenario.name == "basic" and replay.mutations == tuple(mutations)
    assert replay.answers != by_name("basic").script()  # the exact answers, mutated
    assert json.loads(finding.path.read_text())["found"][0]["rule"] == "robust.crash"
    capsys.readouterr()
    status = main(["probe", "--client", FRAGILE, "--replay", str(finding.path), "--strict"])
    out = capsys.readouterr().out
    assert status == 0  # advice is never a failure
    assert "NOTE  basic [http]" in out and "the client crashed" in out
    assert main(["probe", "--client", FRAGILE, "--replay", str(finding.path), "--stdio"]) == 4  # an http case


def test_the_fuzz_command_line_runs_bounded_and_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["fuzz", "--client", FRAGILE, "--only", "basic", "--max-examples", "3", "--budget", "30",
                   "--seed", "5", "--out", str(tmp_path), "-q"])
    out = capsys.readouterr().out
    assert status == 0  # no MUST broken (without --strict a crash is withheld advice)
    assert "cases in" in out and "seed 5: 0 failures" in out
