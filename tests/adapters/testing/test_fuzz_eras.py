"""``mcpwire fuzz`` of the initialize era: a session opened first (HTTP: every request carries its
``Mcp-Session-Id`` and, from 2025-06-18, its ``MCP-Protocol-Version``), or a stdio connection
opened by ``initialize``. Our fixture passes a short run in each revision, strict included; a raw
server breaking one MUST is found, the failure shrunk to its one request and replayed on a
session of its own (``_era_servers.py``, ``_era_stdio_server.py``). Budgets of a few seconds.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
from _lines import FIXTURE_STDIO
from _era_servers import session_server
from _stdlib_http import serving_http

from mcpwire_adapters.testing.fuzz.runner import FuzzReport, fuzz, fuzz_stdio, replay
from mcpwire_adapters.testing.verdict import Problem

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
TIMEOUT = 90.0




def run_bounded(coroutine: Any) -> Any:
    """``coroutine()`` run on trio, bounded by TIMEOUT."""
    async def go() -> Any:
        with trio.fail_after(TIMEOUT):
            return await coroutine()
    return trio.run(go)


def shown(report: FuzzReport) -> list[tuple[str, list[str], list[bytes]]]:
    """A report's findings as an assertion message shows them."""
    return [(f.status, list(f.problems), [s.request.body[:200] for s in f.subject]) for f in report.findings]


@pytest.mark.parametrize("revision", ["2025-11-25", "2025-06-18", "2025-03-26"])
def test_the_fixture_passes_a_short_run_in_each_revision(fixture_url: str, revision: str) -> None:
    report: FuzzReport = run_bounded(lambda: fuzz(fixture_url, max_examples=60, seed=5, revision=revision, strict=True,
                                           all_tools=True, timeout=5))
    assert report.cases >= 30 and report.findings == [], shown(report)


def test_the_fixture_passes_a_short_run_over_stdio() -> None:
    report: FuzzReport = run_bounded(lambda: fuzz_stdio(FIXTURE_STDIO, max_examples=60, seed=5, revision="2025-03-26",
                                                 strict=True, timeout=3))
    assert report.cases >= 30 and report.findings == [], shown(report)


def test_by_default_an_initialize_era_server_is_fuzzed_in_its_newest_revision() -> None:
    with serving_http(session_server("2025-06-18")) as url:
        report: FuzzReport = run_bounded(lambda: fuzz(url, max_examples=20, seed=1, strict=True, timeout=3))
    assert report.findings == [], shown(report)


def test_a_session_server_breaking_a_must_is_found_shrunk_and_replayed(tmp_path: Path) -> None:
    """A server that answers a session it never issued: the 404 the transport requires."""
    with serving_http(session_server("2025-11-25", "session-echo")) as url:
        report: FuzzReport = run_bounded(lambda: fuzz(url, max_examples=150, seed=2, revision="2025-11-25", out_dir=str(tmp_path),
                                               timeout=3))
        assert report.failures, shown(report)
        failure = report.failures[0]
        problem = failure.problems[0]
        assert isinstance(problem, Problem) and problem.rule.id == "era.session-ended@2025-11-25", failure.problems
        assert len(failure.subject) == 1 and failure.path is not None
        document = json.loads(failure.path.read_text())
        assert document["context"]["revision"] == "2025-11-25" and document["context"]["session"]
        again = run_bounded(lambda: replay(failure.path))  # on a session of its own
        assert again.failed, [p for _, _, p in again.steps]
    with serving_http(session_server("2025-11-25")) as fixed:
        assert not run_bounded(lambda: replay(failure.path, target=fixed)).reproduced


def test_a_stdio_server_answering_a_notification_is_found_and_replayed(tmp_path: Path) -> None:
    command = [sys.executable, str(HERE / "_era_stdio_server.py"), "2025-03-26", "notify-answer"]
    report: FuzzReport = run_bounded(lambda: fuzz_stdio(command, max_examples=100, seed=3, revision="2025-03-26",
                                                 out_dir=str(tmp_path), timeout=2))
    assert report.failures, shown(report)
    failure = report.failures[0]
    assert {p.rule.id for p in failure.problems if isinstance(p, Problem)} == {"era.notification-silent@2025-03-26"}
    assert failure.path is not None
    assert run_bounded(lambda: replay(failure.path)).failed


# -- the oracle of the initialize era, request by request --------------------------------------------------------
def _demand(revision: str, body: Any, *, drop: tuple[str, ...] = (), extra: tuple[tuple[str, str], ...] = (),
            session: str | None = "s1") -> Any:
    from mcpwire_adapters.testing.era_wire import ERA_BASE, EraSession
    from mcpwire_adapters.testing.fuzz.era_oracle import expect_era
    from mcpwire_adapters.testing.fuzz.oracle import Context
    from mcpwire_adapters.testing.rawwire import Request

    headers = ERA_BASE + EraSession(revision, "s1", {}).headers(drop=drop) + extra
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return expect_era(Request("POST", headers, raw), Context(revision=revision, session_id=session,
                                                               capabilities=frozenset({"tools"})))


def _refusal(demand: Any) -> tuple[str, list[int]] | None:
    return None if demand.refusal is None else (demand.refusal.rule, sorted(demand.refusal.statuses)[:2])


PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
NOTE = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}


def test_what_each_request_calls_for_on_a_session() -> None:
    # The session header: a request without it SHOULD be 400; one naming another session MUST be 404;
    # a notification without it may be taken (the sentence names requests).
    assert _refusal(_demand("2025-06-18", PING, drop=("Mcp-Session-Id",))) == ("era.session-required@2025-06-18", [400])
    assert _refusal(_demand("2025-06-18", PING, extra=(("Mcp-Session-Id", "other"),), drop=("Mcp-Session-Id",))) == (
        "era.session-ended@2025-06-18", [404])
    assert _demand("2025-06-18", NOTE, drop=("Mcp-Session-Id",)).why[0].startswith("not settled")
    # MCP-Protocol-Version: an unsupported one MUST be 400 (2025-06-18 on); another known revision is not settled.
    bad = (("MCP-Protocol-Version", "1999-01-01"),)
    assert _refusal(_demand("2025-11-25", PING, drop=("MCP-Protocol-Version",), extra=bad)) == (
        "era.version-header@2025-11-25", [400])
    assert _demand("2025-11-25", PING, drop=("MCP-Protocol-Version",),
                   extra=(("MCP-Protocol-Version", "2025-06-18"),)).why[0].startswith("not settled")
    # A foreign Origin: 403 in 2025-11-25, any refusal before.
    evil = (("Origin", "http://evil.example"),)
    assert _refusal(_demand("2025-11-25", PING, extra=evil)) == ("era.origin@2025-11-25", [403])
    assert _refusal(_demand("2025-03-26", PING, extra=evil)) == ("era.origin@2025-03-26", [400, 401])
    # Notifications, responses, requests.
    note = _demand("2025-03-26", NOTE)
    assert note.silent and note.rule == "era.notification-202@2025-03-26"
    assert _demand("2025-03-26", PING).id == "echo"
    unknown = _demand("2025-03-26", {**PING, "method": "fuzz/nothing"})
    assert [f.rule for f in unknown.faults] == ["mcpwire.era-method-not-found"]  # its code is advice
    assert _demand("2025-03-26", {**PING, "id": None}).id == "echo-or-null"  # answered: null is its id
    assert _demand("2025-03-26", b'{"jsonrpc": "2.0", "id": 1,').faults[0].rule == "jsonrpc.error-member"


def test_a_batch_is_received_in_2025_03_26_only() -> None:
    batch = [PING, {**PING, "id": 2}, NOTE]
    received = _demand("2025-03-26", batch)
    assert received.batch == (1, 2) and received.rule == "era.batch-receive@2025-03-26"
    assert _demand("2025-03-26", [NOTE]).silent
    later = _demand("2025-11-25", batch)
    assert [f.rule for f in later.faults] == ["mcpwire.era-no-batch"] and not later.batch
