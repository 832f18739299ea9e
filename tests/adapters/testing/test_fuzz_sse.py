"""``mcpwire fuzz`` over the HTTP+SSE transport of 2024-11-05 (``mcpwire_adapters.testing.fuzz.legacy``):
the SSE stream opened, ``initialize`` posted to the endpoint its first event names, every case
posted there and its answer read on the stream by its id. A raw server right about every rule
gives no failure (found without ``--revision``, as the probe finds it); one breaking one MUST
fails exactly that rule, shrunk to its one request and replayed on a connection of its own; a
server that ends its stream is reported so, and the run goes on on a new stream. The raw servers
are ``_era_servers.legacy_server`` (its fault "drop-stream" for the dropped stream), its answers
made right about ids JSON-RPC does not allow (a boolean, an object, an array: an error with a
null id) and, where a test plants a bug, wrong about that one rule. Budgets of a few seconds.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _era_servers
import anyio
import pytest
from _era_servers import legacy_server
from _stdlib_http import serving_http
from test_fuzz_eras import run_bounded, shown

from mcpwire_adapters.testing.fuzz.cases import Step
from mcpwire_adapters.testing.fuzz.legacy import LegacyConnection, StreamAnswer, judge_legacy
from mcpwire_adapters.testing.fuzz.oracle import Context, expect_for
from mcpwire_adapters.testing.fuzz.runner import FuzzReport, _awaited, fuzz, replay
from mcpwire_adapters.testing.rawwire import Exchange, Reply, Request
from mcpwire_adapters.testing import rawwire_sse
from mcpwire_adapters.testing.rawwire_sse import LEGACY_HEADERS
from mcpwire_adapters.testing.verdict import visible
from mcpwire_adapters.testing.verdict import Problem

CLI = [sys.executable, "-m", "mcpwire_adapters.cli"]
TIMEOUT = 60.0
LEGACY = "2024-11-05"


def _must_rules(report: FuzzReport) -> set[str]:
    return {p.rule.id for f in report.failures for p in f.problems if isinstance(p, Problem) and p.strength == "MUST"}


Plant = Callable[[dict[str, Any], "dict[str, Any] | None"], "dict[str, Any] | None"]
_ANSWER = _era_servers.answer


def _answer(message: dict[str, Any], revision: str = LEGACY, fault: str | None = None) -> dict[str, Any] | None:
    """``_era_servers.answer``, but a request whose id JSON-RPC does not allow gets an error with a null id."""
    if "method" in message and isinstance(message.get("id"), (bool, dict, list)):
        return {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "invalid id"}}
    return _ANSWER(message, revision, fault)


@pytest.fixture(autouse=True)
def right_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_era_servers, "answer", _answer)


def _planted(monkeypatch: pytest.MonkeyPatch, plant: Plant, *, max_examples: int, seed: int) -> FuzzReport:
    """A short fuzz run of the raw server, its answers changed by ``plant(message, answer)``."""
    monkeypatch.setattr(_era_servers, "answer", lambda message, revision, fault: plant(
        message, _answer(message, revision, fault)))
    with serving_http(legacy_server()) as url:
        report: FuzzReport = run_bounded(lambda: fuzz(url, max_examples=max_examples, seed=seed, revision=LEGACY,
                                                      timeout=2))
    return report


def test_a_server_of_the_http_sse_transport_is_found_and_gives_no_failure() -> None:
    """Without --revision: every POST refused, a GET whose first event is endpoint (the probe's
    negotiation), so 2024-11-05 over HTTP+SSE."""
    with serving_http(legacy_server()) as url:
        report: FuzzReport = run_bounded(lambda: fuzz(url, max_examples=40, seed=5, timeout=2))
    assert report.cases >= 30 and report.findings == [], shown(report)


def test_a_wrong_id_on_the_stream_fails_that_rule_shrunk_and_replayed(tmp_path: Path) -> None:
    with serving_http(legacy_server("wrong-id")) as url:  # a ping is answered with its id and an "x"
        report: FuzzReport = run_bounded(lambda: fuzz(url, max_examples=40, seed=2, revision=LEGACY, timeout=2,
                                               out_dir=str(tmp_path)))
        assert _must_rules(report) == {"era.result-id@2024-11-05"}, shown(report)
        failure = report.failures[0]
        assert len(failure.subject) == 1 and json.loads(failure.subject[0].request.body)["method"] == "ping"
        path = failure.path
        assert path is not None
        document = json.loads(path.read_text())
        assert document["target"] == {"kind": "http+sse", "url": url} and document["context"]["revision"] == LEGACY
        assert document["answers"][0]["post"]["status"] == 202  # the POST's; the answer is the stream's event
        assert "event: message" in document["answers"][0]["body"]
        script = path.with_suffix(".sh").read_text()
        assert "curl -sN -H 'Accept: text/event-stream'" in script and '"$endpoint"' in script
        again = run_bounded(lambda: replay(path))  # on a connection of its own
        assert again.failed, [p for _, _, p in again.steps]
    with serving_http(legacy_server()) as fixed:
        assert not run_bounded(lambda: replay(path, target=fixed)).reproduced


def test_an_answered_notification_is_found_and_cut_to_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server answers notifications/cancelled with a null-id result: JSON-RPC's "MUST NOT
    reply to a Notification". Found alone or in a sequence (ping, then a cancel), the case is
    cut to the notification."""
    def plant(message: dict[str, Any], answer: dict[str, Any] | None) -> dict[str, Any] | None:
        if message.get("method") == "notifications/cancelled" and "id" not in message:
            return {"jsonrpc": "2.0", "id": None, "result": {}}
        return answer

    report = _planted(monkeypatch, plant, max_examples=40, seed=3)
    assert _must_rules(report) == {"jsonrpc.notification"}, shown(report)
    steps = report.failures[0].subject
    assert [json.loads(s.request.body).get("method") for s in steps] == ["notifications/cancelled"], shown(report)


def test_a_wrong_id_only_a_sequence_reaches_is_shrunk_to_its_one_request(monkeypatch: pytest.MonkeyPatch) -> None:
    """tools/list answered with a wrong id only when its id starts "seq-" (as a sequence numbers
    its requests): hypothesis keeps the sequence (ping, tools/list), the fuzzer's shrinker sends
    the tools/list alone on the stream, sees it fail the same way, and keeps it."""
    def plant(message: dict[str, Any], answer: dict[str, Any] | None) -> dict[str, Any] | None:
        if answer is not None and message.get("method") == "tools/list" and str(message.get("id")).startswith("seq-"):
            return {**answer, "id": f"{message['id']}!"}
        return answer

    report = _planted(monkeypatch, plant, max_examples=60, seed=5)
    assert _must_rules(report) == {"era.result-id@2024-11-05"}, shown(report)
    steps = report.failures[0].subject
    assert [json.loads(s.request.body)["method"] for s in steps] == ["tools/list"], shown(report)
    assert json.loads(steps[0].request.body)["id"].startswith("seq-")


# -- a server that ends its SSE stream ----------------------------------------------------------------------
def test_a_stream_the_server_ends_is_reported_and_the_run_goes_on() -> None:
    """Each case after the drop (and each replay while shrinking) is sent on a new stream."""
    opened: list[str] = []
    with serving_http(legacy_server("drop-stream", opened)) as url:
        report: FuzzReport = run_bounded(lambda: fuzz(url, max_examples=40, seed=4, revision=LEGACY, timeout=2,
                                               sequences=False))
    assert report.failures, shown(report)
    for failure in report.failures:  # the request awaiting its answer; or a notification, then the ping after it
        assert "the SSE stream ended" in failure.problems[0] and not failure.flaky, shown(report)
        assert json.loads(failure.subject[0].request.body)["method"] == "tools/list", shown(report)
    assert _must_rules(report) == {"jsonrpc.reply"}
    assert len(opened) >= 3, opened


def test_a_stream_past_half_the_events_it_keeps_is_opened_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stream keeps a bounded number of events (``rawwire_sse.MAX_EVENTS``), past which no answer
    would be seen: a case starts on a new stream once its stream has held half of them, so a long
    run does not turn every answer into a slow one."""
    monkeypatch.setattr(rawwire_sse, "MAX_EVENTS", 40)
    with serving_http(legacy_server()) as url:
        report: FuzzReport = run_bounded(lambda: fuzz(url, max_examples=50, seed=6, revision=LEGACY, timeout=1,
                                               sequences=False))
    assert report.findings == [], shown(report)
    assert sum(s.count for s in report.slow) <= 3, [(s.kind, s.count) for s in report.slow]  # a body the server drops


def test_cli_fuzzes_http_sse_with_its_revision_and_replays_its_failure(tmp_path: Path) -> None:
    with serving_http(legacy_server("wrong-id")) as url:
        done = subprocess.run([*CLI, "fuzz", url, "--revision", LEGACY, "--max-examples", "15", "--seed", "1",
                               "--timeout", "2", "-q", "--out", str(tmp_path)], capture_output=True, text=True,
                              timeout=TIMEOUT)
        assert done.returncode == 1, done.stdout + done.stderr
        assert "FAIL 1: id " in done.stdout and "MUST (MCP 2024-11-05)" in done.stdout, done.stdout
        again = subprocess.run([*CLI, "fuzz", "--replay", str(tmp_path / "failure-1.json")], capture_output=True,
                               text=True, timeout=TIMEOUT)
    assert again.returncode == 1 and "reproduced" in again.stdout, again.stdout + again.stderr
    assert "HTTP 202, answered on the SSE stream" in again.stdout, again.stdout


def test_an_id_echoed_where_null_is_due_is_this_request_s_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """``_era_servers.answer`` as it is echoes an id JSON-RPC does not allow (true): that
    response answers the request whose id it echoes (not an earlier one), so it is judged at
    once, not waited past as slow."""
    monkeypatch.setattr(_era_servers, "answer", _ANSWER)
    body = b'{"jsonrpc": "2.0", "id": true, "method": "ping"}'
    step = Step(Request("POST", LEGACY_HEADERS, body), label="envelope.id-invalid")
    context = Context(revision=LEGACY, http_sse=True, capabilities=frozenset({"tools"}))

    async def sent() -> Exchange:
        async with anyio.create_task_group() as group:
            connection = LegacyConnection(group, url, timeout=10)
            try:
                await connection.open()
                got = await connection.send(_awaited(step, context).request)  # waits for a null id
            finally:
                connection.close()
        return got

    with serving_http(legacy_server()) as url:
        started = time.monotonic()
        _, reply, error = run_bounded(sent)
    assert time.monotonic() - started < 5 and error is None and reply is not None
    assert reply.messages() == [{"jsonrpc": "2.0", "id": True, "result": {}}], reply
    problems = judge_legacy("oracle", step.request, reply, error, lambda: expect_for(step.request, context))
    assert [p.rule.id for p in problems if isinstance(p, Problem)][:1] == ["jsonrpc.response-id"], problems


# -- what one answer over HTTP+SSE is judged, answer by answer ------------------------------------------------
def _judged(body: bytes, post: Reply, events: bytes | None = b"", headers: tuple[tuple[str, str], ...] = (),
            strict: bool = True) -> list[tuple[str, str]]:
    """The problems (strength, rule) with ``post`` and, when the POST was accepted, the ``events``
    on the stream, answering ``body`` posted to a loopback HTTP+SSE server."""
    request = Request("POST", (("Content-Type", "application/json"), *headers), body)
    context = Context(revision=LEGACY, http_sse=True, capabilities=frozenset({"tools"}))
    reply: Reply = post if events is None else StreamAnswer(200, (("content-type", "text/event-stream"),), events,
                                                            post=post)
    problems = judge_legacy("oracle", request, reply, None, lambda: expect_for(request, context))
    return [(p.strength, p.rule.id) for p in visible(problems, strict=strict) if isinstance(p, Problem)]


def _event(message: dict[str, Any]) -> bytes:
    return f"event: message\ndata: {json.dumps(message)}\n\n".encode()


def test_what_each_answer_over_http_sse_is_judged() -> None:
    ping, accepted = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}', Reply(202, (), b"Accepted")
    assert _judged(ping, accepted, _event({"jsonrpc": "2.0", "id": 1, "result": {}})) == []
    # 2024-11-05 names no status for the POST: 202 is this project's advice.
    assert _judged(ping, Reply(200, (), b""), _event({"jsonrpc": "2.0", "id": 1, "result": {}})) == [
        ("advice", "mcpwire.legacy-post-status")]
    # A request refused at the POST with no JSON-RPC response: JSON-RPC's "MUST reply".
    assert _judged(b'{"id": 1, "method": "ping"}', Reply(400, (), b"Invalid message"), None) == [
        ("MUST", "jsonrpc.reply")]
    # Bytes that are not JSON refused at the POST: never a JSON-RPC message; advice only.
    assert _judged(b'{"jsonrpc": "2.0", "id": 1,', Reply(400, (), b"Parse error"), None) == [
        ("advice", "mcpwire.parse-error")]
    # A foreign Origin on a loopback server is refused (any 4xx); served, it breaks the MUST.
    evil = (("Origin", "http://evil.example"),)
    assert _judged(ping, Reply(403, (), b""), None, evil) == []
    assert _judged(ping, accepted, _event({"jsonrpc": "2.0", "id": 1, "result": {}}), evil) == [
        ("MUST", "era.origin@2024-11-05")]
    # A notification answered on the stream; refused at the POST, it is not answered at all.
    note = b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}'
    assert _judged(note, accepted, _event({"jsonrpc": "2.0", "id": None, "result": {}})) == [
        ("MUST", "jsonrpc.notification")]
    assert _judged(note, Reply(400, (), b"no"), None) == []
    # The answer in the POST's own response, not on the stream: the transport's sentence, no keyword.
    on_post = Reply(200, (("content-type", "application/json"),), b'{"jsonrpc": "2.0", "id": 1, "result": {}}')
    assert _judged(ping, on_post, None) == [("advice", "legacy.message-events@2024-11-05")]
