"""``mcpwire fuzz --client``: mutations of the answers as data, a short run that finds a client's
crash, shrinks it to the one mutation it needs and writes a replay file that ``mcpwire probe
--client --replay`` runs again; the ids of the server's own requests drawn from the schema's
whole RequestId space, and a client that answers such an id with another (one that bounds ids
as our server does) failed, while ours echo them, over HTTP and stdio. A long run is
documented in docs/probing-clients.md."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import hypothesis
import pytest
import trio
from hypothesis import HealthCheck

from mcpwire_adapters.cli import main
from mcpwire_adapters.testing.client_probe.fuzzing import Mutation, apply, fuzz_client, mutations_for
from mcpwire_adapters.testing.client_probe.runner import ClientFinding, read_replay, run_scenario
from mcpwire_adapters.testing.client_probe.scenarios import OK_TEXT, by_name, select_scenarios
from mcpwire_adapters.testing.verdict import Finding, Problem

HERE = Path(__file__).resolve().parent
PY = shlex.quote(sys.executable)
FRAGILE = f"{PY} {shlex.quote(str(HERE / '_broken_client.py'))} fragile {{url}}"
BOUNDED = f"{PY} {shlex.quote(str(HERE / '_bounded_ids_client.py'))} {{url}}"
CLI = f"{PY} -m mcpwire_adapters.cli call"
OURS = f"{PY} {shlex.quote(str(HERE / '_our_clients.py'))}"


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


# -- the ids of the server's own requests ---------------------------------------------------------------
INT64 = range(-(2**63), 2**63)


def drawn_ping_id(found: Callable[[Any], bool]) -> Any:
    """An id hypothesis draws for the ping of basic-2025's call stream (row 0, message 0) that
    ``found`` holds for."""
    def drawn(mutations: list[Mutation]) -> bool:
        return any(m.kind == "id" and m.detail[0] == 0 and found(m.detail[1]) for m in mutations)

    settings = hypothesis.settings(max_examples=5000, database=None, suppress_health_check=list(HealthCheck))
    mutations = hypothesis.find(mutations_for(by_name("basic-2025").script(), [0]), drawn, settings=settings)
    return next(m.detail[1] for m in mutations if m.kind == "id" and m.detail[0] == 0 and found(m.detail[1]))


@pytest.mark.parametrize(("what", "found"), [
    ("an integer past int64", lambda v: type(v) is int and v >= 2**63),
    ("an integer below int64", lambda v: type(v) is int and v < -(2**63)),
    ("a string past 256 bytes", lambda v: type(v) is str and len(v.encode()) > 256),
    ("a string that is not ASCII", lambda v: type(v) is str and not v.isascii()),
    ("an integer within int64", lambda v: type(v) is int and v in INT64),
])
def test_the_ids_of_the_server_s_requests_come_from_the_schema_s_whole_space(what: str, found: Callable[[Any], bool]) -> None:
    value = drawn_ping_id(found)
    assert found(value), what
    json.dumps(value).encode("utf-8")  # always JSON text: no lone surrogate


def mutated_case(command: str, mutation: Mutation, *, stdio: bool = False) -> ClientFinding:
    """basic-2025 with its answers changed by ``mutation`` (row 0: the call's stream, its ping
    first; row 1: the answer to initialize)."""
    scenario = by_name("basic-2025")
    answers = apply(scenario.script(), [mutation])
    run, outcome = trio.run(partial(run_scenario, command, scenario, stdio=stdio, timeout=4.0, answers=answers,
                                    own=len(scenario.answers)))
    return Finding.of(run, outcome)


def ping_case(command: str, request_id: Any, *, stdio: bool = False) -> ClientFinding:
    """basic-2025 with the id of the ping on the call's stream replaced by ``request_id``."""
    return mutated_case(command, Mutation("id", 0, [0, request_id]), stdio=stdio)


def test_a_client_that_answers_an_id_past_int64_with_id_null_fails() -> None:
    finding = ping_case(BOUNDED, 2**63)
    assert finding.status == "fail"
    texts = [str(p) for p in finding.problems]
    assert any("no response to the server's ping (id 9223372036854775808)" in t for t in texts), texts
    assert ping_case(BOUNDED, 2**63 - 1).status == "pass"  # the same client, an id within its bounds


# Each id as the script writes it, and as it goes on the wire ("$$..." is a literal "$...").
IDS = [(2**63, 2**63), (-(2**63) - 1, -(2**63) - 1), (10**20, 10**20), ("\u00e9\U0001f600" * 60,) * 2,
       ("$$x" * 100, "$x" + "$$x" * 99)]


def answers(finding: ClientFinding) -> list[Any]:
    """The ids of the client's responses, as JSON reads them (integers exactly)."""
    messages = [r.message() for r in finding.subject.records if r.method in ("POST", "LINE")]
    return [m["id"] for m in messages if isinstance(m, dict) and "method" not in m]


@pytest.mark.parametrize(("template", "request_id"), IDS, ids=["2**63", "-2**63-1", "10**20", "360 bytes", "dollars"])
def test_the_mcpwire_command_echoes_every_id_over_http(template: Any, request_id: Any) -> None:
    finding = ping_case(f"{CLI} {{url}} echo --timeout 3", template)
    assert finding.status == "pass", [str(p) for p in finding.problems]
    assert finding.subject.process.exit_code == 0
    assert answers(finding) == [request_id] and type(answers(finding)[0]) is type(request_id)


def test_stdioclient_echoes_an_id_past_uint64_over_stdio() -> None:
    finding = ping_case(f"{OURS} stdio {{server}}", 10**20, stdio=True)
    assert finding.status == "pass", [str(p) for p in finding.problems]
    assert answers(finding) == [10**20]


# -- what fuzzing our own clients found of the judge: no false failure --------------------------------------
def test_a_message_without_a_method_answered_with_its_id_passes_over_stdio() -> None:
    finding = mutated_case(f"{OURS} stdio {{server}}", Mutation("field", 0, [0, ["method"], "delete", None]), stdio=True)
    assert finding.status == "pass", [str(p) for p in finding.problems]
    assert (finding.subject.process.exit_code, finding.subject.process.stdout.strip()) == (0, OK_TEXT.encode())
    messages = [r.message() for r in finding.subject.records if r.method == "LINE"]
    refusals = [m for m in messages if isinstance(m, dict) and "error" in m]
    assert [(m["id"], m["error"]["code"]) for m in refusals] == [(1001, -32600)]


def test_an_initialize_result_without_jsonrpc_is_no_initialization_over_stdio() -> None:
    finding = mutated_case(f"{CLI} echo --timeout 1 -- {{server}}", Mutation("field", 1, [0, ["jsonrpc"], "delete", None]),
                           stdio=True)
    assert finding.subject.process.exit_code == 3  # the client refused the answer: its own error
    assert "2025.initialized" not in [p.rule.id for p in finding.problems if isinstance(p, Problem)], finding.problems
