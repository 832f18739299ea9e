"""Tests of ``mcpwire fuzz`` (``mcpwire_adapters.testing.fuzz.runner``).

Three targets: the conformance fixture over HTTP and over stdio, on which a small run finds
nothing; and a deliberately broken server (the standard library's HTTP server in a thread, on
127.0.0.1, forwarding to the fixture and planting one bug: an integer id comes back as a
string), on which the fuzzer finds the bug, shrinks it to a minimal request and writes a replay
file and a curl script that reproduce it. The budgets are small: a few seconds a test.
"""

from __future__ import annotations

import http.client
import io
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from _lines import FIXTURE_STDIO
from _stdlib_http import serving_http
import trio

from mcpwire_adapters.cli.fuzz import _report
from mcpwire_adapters.cli.terminal import Terminal
from mcpwire_adapters.testing.fuzz.cases import Step
from mcpwire_adapters.testing.fuzz.runner import FLAKY, Failure, FuzzReport, Slow, _slow_kind, fuzz, fuzz_stdio, replay
from mcpwire_adapters.testing.judge import rule
from mcpwire_adapters.testing.rawwire import Request, rpc
from mcpwire_adapters.testing.verdict import Problem

REPO = Path(__file__).resolve().parents[3]
CLI = [sys.executable, "-m", "mcpwire_adapters.cli"]
TIMEOUT = 60.0




def _forwarder(upstream: str, seen: list[str], *, plant: bool = True, slow_tool: str | None = None,
               slow_seconds: float = 0.0, sequence_bug: bool = False) -> type[BaseHTTPRequestHandler]:
    """A handler passing every request to ``upstream`` and its answer back, but for one planted
    bug (unless ``plant`` is False): an integer id in a JSON answer comes back as a string.
    ``slow_tool``: a tools/call of that tool is held ``slow_seconds`` first. ``sequence_bug``:
    the answer to a tools/call whose id is a string starting "seq-" (as the fuzzer's stateful
    sequences number their requests) comes back with "!" added to its id. ``seen`` gets the
    method of each request body, and the tool name of each tools/call."""
    parts = urlsplit(upstream)

    class Forward(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _forward(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            try:
                message = json.loads(body)
            except ValueError:
                message = None
            call = None
            if isinstance(message, dict):
                params = message.get("params")
                name = params.get("name") if isinstance(params, dict) else None
                seen.append(f"{message.get('method')}:{name}" if message.get("method") == "tools/call" else
                            str(message.get("method")))
                call = name if message.get("method") == "tools/call" else None
                if call is not None and call == slow_tool:
                    time.sleep(slow_seconds)
            connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=5)
            connection.putrequest(self.command, parts.path, skip_accept_encoding=True)
            for key, value in self.headers.items():  # each as sent, a repeated one repeated
                if key.lower() not in ("host", "connection", "content-length"):
                    connection.putheader(key, value)
            if body:
                connection.putheader("Content-Length", str(len(body)))
            connection.endheaders(body if body else None)
            answer = connection.getresponse()
            if (answer.getheader("content-type") or "").startswith("text/event-stream"):
                self._stream(answer)
                connection.close()
                return
            data = answer.read()
            headers = [(k, v) for k, v in answer.getheaders() if k.lower() not in ("content-length", "transfer-encoding",
                                                                                   "connection")]
            if plant and (answer.getheader("content-type") or "").startswith("application/json") and data:
                reply = json.loads(data)
                if isinstance(reply, dict) and isinstance(reply.get("id"), int):
                    reply["id"] = str(reply["id"])  # the planted bug
                    data = json.dumps(reply).encode()
            if sequence_bug and call is not None and (answer.getheader("content-type") or "").startswith(
                    "application/json") and data:
                reply = json.loads(data)
                if isinstance(reply, dict) and str(reply.get("id")).startswith("seq-"):
                    reply["id"] += "!"  # the planted bug: only a sequence's call shows it
                    data = json.dumps(reply).encode()
            connection.close()
            self.send_response(answer.status)
            for key, value in headers:
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, answer: http.client.HTTPResponse) -> None:
            """An event stream, passed on line by line until either side hangs up."""
            self.send_response(answer.status)
            self.send_header("Content-Type", answer.getheader("content-type") or "")
            self.send_header("Connection", "close")
            self.end_headers()
            try:
                while line := answer.readline():
                    self.wfile.write(line)
                    self.wfile.flush()
            except OSError:  # the client hung up, or the upstream went quiet past the timeout
                pass

        do_POST = do_GET = do_DELETE = do_PUT = do_PATCH = _forward

    return Forward


@pytest.fixture()
def broken(fixture_url: str) -> Iterator[tuple[str, list[str]]]:
    seen: list[str] = []
    with serving_http(_forwarder(fixture_url, seen)) as url:
        yield url, seen


@pytest.fixture()
def recording(fixture_url: str) -> Iterator[tuple[str, list[str]]]:
    seen: list[str] = []
    with serving_http(_forwarder(fixture_url, seen, plant=False)) as url:
        yield url, seen


def run(coroutine: Any) -> Any:
    async def go() -> Any:
        with trio.fail_after(TIMEOUT):
            return await coroutine()
    return trio.run(go)


# -- our fixture: nothing found --------------------------------------------------------------------------
def test_the_fixture_over_http_passes_a_small_run(fixture_url: str) -> None:
    report: FuzzReport = run(lambda: fuzz(fixture_url, max_examples=60, seed=1, tools=["test_simple_text"]))
    assert report.cases >= 60
    assert not report.failures, [(f.problems, [s.request.body for s in f.subject]) for f in report.failures]


def test_the_fixture_over_stdio_passes_a_small_run() -> None:
    report: FuzzReport = run(lambda: fuzz_stdio(FIXTURE_STDIO, max_examples=50, seed=2, timeout=5))
    assert report.cases >= 50
    assert not report.failures, [(f.problems, [s.request.body for s in f.subject]) for f in report.failures]


# -- a broken server: found, shrunk, replayable ---------------------------------------------------------------
def test_the_planted_bug_is_found_shrunk_and_replayable(broken: tuple[str, list[str]], fixture_url: str,
                                                         tmp_path: Path) -> None:
    url, _ = broken
    report: FuzzReport = run(lambda: fuzz(url, max_examples=60, seed=3, out_dir=str(tmp_path), sequences=False))
    found = [f for f in report.failures if "expected the request's id" in f.problems[0]]
    assert found, [f.problems for f in report.failures]
    failure = found[0]
    assert failure.path is not None and failure.path.exists()
    sent = json.loads(failure.subject[-1].request.body)
    assert sent["id"] == 0 and sent["method"] == "server/discover", sent  # shrunk to the simplest request
    document = json.loads(failure.path.read_text())
    assert document["target"] == {"kind": "http", "url": url}
    assert document["steps"][-1]["headers"] and document["curl"][0].startswith("curl ")
    script = failure.path.with_suffix(".sh").read_text()
    assert f"curl -sS -i -X POST {url}" in script and "Mcp-Method: server/discover" in script

    if subprocess.run(["sh", "-c", "command -v curl"], capture_output=True).returncode == 0:
        done = subprocess.run(["sh", str(failure.path.with_suffix(".sh"))], capture_output=True, timeout=30)
        assert b'"id": "0"' in done.stdout, done.stdout  # the curl script shows the bug too

    again = run(lambda: replay(failure.path))
    assert again.reproduced
    fixed = run(lambda: replay(failure.path, target=fixture_url))  # the same request to a server without the bug
    assert not fixed.reproduced, [p for _, _, p in fixed.steps]


def test_a_planted_stdio_bug_is_found_and_replayable(tmp_path: Path) -> None:
    broken = [sys.executable, str(Path(__file__).with_name("_fuzz_broken_stdio.py"))]
    report: FuzzReport = run(lambda: fuzz_stdio(broken, max_examples=20, seed=5, out_dir=str(tmp_path), timeout=5))
    found = [f for f in report.failures if "gets none" in f.problems[0]]
    assert found, [f.problems for f in report.failures]
    failure = found[0]
    sent = json.loads(failure.subject[-1].request.body)
    assert "id" not in sent and sent["method"].startswith("notifications/"), sent
    assert failure.path is not None
    lines = failure.path.with_suffix(".jsonl").read_bytes()
    assert lines == b"".join(s.request.body + b"\n" for s in failure.subject)
    assert json.loads(failure.path.read_text())["target"]["kind"] == "stdio"
    assert run(lambda: replay(failure.path)).reproduced
    assert not run(lambda: replay(failure.path, target=" ".join(FIXTURE_STDIO))).reproduced


# -- safe by default -------------------------------------------------------------------------------------------
def test_no_tool_is_called_unless_named(recording: tuple[str, list[str]]) -> None:
    url, seen = recording
    report: FuzzReport = run(lambda: fuzz(url, max_examples=25, seed=4, timeout=5))
    assert not report.failures, [f.problems for f in report.failures]
    assert seen and not [m for m in seen if m.startswith("tools/call")], seen
    seen.clear()
    run(lambda: fuzz(url, max_examples=25, seed=4, tools=["test_simple_text"], timeout=5))
    called = {m for m in seen if m.startswith("tools/call")}
    assert called <= {"tools/call:test_simple_text"}, called


def test_the_rate_limit_spaces_requests(fixture_url: str) -> None:
    # What the server offers is asked first; then at least two requests a case (the case, the liveness check).
    report: FuzzReport = run(lambda: fuzz(fixture_url, max_examples=4, seed=6, rate=10, sequences=False))
    assert report.cases == 4 and not report.failures
    assert report.seconds >= 0.7, report.seconds  # 8+ requests at 10/s after discovery


def test_a_tool_not_listed_is_refused(fixture_url: str) -> None:
    with pytest.raises(ValueError, match="no tool named nope"):
        run(lambda: fuzz(fixture_url, max_examples=1, tools=["nope"]))


# -- the command ---------------------------------------------------------------------------------------------
def test_cli_writes_failures_and_replays_them(broken: tuple[str, list[str]], fixture_url: str, tmp_path: Path) -> None:
    url, _ = broken
    done = subprocess.run([*CLI, "fuzz", url, "--max-examples", "15", "--seed", "3", "--no-sequences",
                           "--out", str(tmp_path), "--database", str(tmp_path / "db")],
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 1, done.stderr
    assert "FAIL 1:" in done.stdout and "seed 3" in done.stdout and "mcpwire fuzz" in done.stderr
    assert "progress 1 cases" in done.stderr  # the progress line (one every 5 s when stderr is not a terminal)
    assert (tmp_path / "failure-1.json").exists() and (tmp_path / "failure-1.sh").exists()
    assert any((tmp_path / "db").iterdir())  # hypothesis' examples kept for the next run
    again = subprocess.run([*CLI, "fuzz", "--replay", str(tmp_path / "failure-1.json")],
                           capture_output=True, text=True, timeout=TIMEOUT)
    assert again.returncode == 1 and "reproduced" in again.stdout, again.stdout + again.stderr
    fixed = subprocess.run([*CLI, "fuzz", "--replay", str(tmp_path / "failure-1.json"), fixture_url],
                           capture_output=True, text=True, timeout=TIMEOUT)
    assert fixed.returncode == 0 and "not reproduced" in fixed.stdout, fixed.stdout + fixed.stderr


def test_cli_fuzzes_a_command_after_dashes(tmp_path: Path) -> None:
    done = subprocess.run([*CLI, "fuzz", "--max-examples", "15", "--seed", "1", "--out", str(tmp_path), "--",
                           *FIXTURE_STDIO], capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert ": 0 failures" in done.stdout and not list(tmp_path.iterdir())


def test_cli_usage_errors() -> None:
    for argv, text in ((["fuzz"], "needs an http(s):// URL"), (["fuzz", "ftp://x"], "needs an http(s):// URL"),
                       (["fuzz", "http://127.0.0.1:9/mcp", "--rate", "-1"], "--rate")):
        done = subprocess.run([*CLI, *argv], capture_output=True, text=True, timeout=TIMEOUT)
        assert done.returncode == 4 and text in done.stderr, (argv, done.stderr)
    done = subprocess.run([*CLI, "fuzz", "http://127.0.0.1:9/mcp", "-q"], capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 3, done.stderr


# -- what is not a failure, and how far a failure shrinks ----------------------------------------------------
def test_a_request_past_the_timeout_is_slow_not_a_failure(fixture_url: str, tmp_path: Path) -> None:
    """A tool that runs longer than --timeout breaks no rule: the run reports it as slow, with the
    time it exceeded, and exits 0."""
    seen: list[str] = []
    with serving_http(_forwarder(fixture_url, seen, plant=False, slow_tool="test_simple_text", slow_seconds=2.5)) as url:
        done = subprocess.run([*CLI, "fuzz", url, "--tool", "test_simple_text", "--timeout", "1", "--max-examples", "12",
                               "--seed", "7", "--no-sequences", "-q", "--out", str(tmp_path)],
                              capture_output=True, text=True, timeout=TIMEOUT)
    assert "tools/call:test_simple_text" in seen
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FAIL" not in done.stdout and ": 0 failures" in done.stdout, done.stdout
    assert "SLOW: no answer within 1 s (--timeout) to " in done.stdout, done.stdout
    assert "tools/call of test_simple_text" in done.stdout, done.stdout
    assert "slow is not a failure" in done.stdout and not list(tmp_path.iterdir())


def test_a_failure_found_in_a_sequence_is_shrunk_to_its_one_request(fixture_url: str, tmp_path: Path) -> None:
    """A bug only a stateful sequence reaches (hypothesis shrinks it to server/discover and the
    call): the fuzzer's own shrinker sends the call alone, sees it fail the same way, and
    reports that one request."""
    with serving_http(_forwarder(fixture_url, [], plant=False, sequence_bug=True)) as url:
        report: FuzzReport = run(lambda: fuzz(url, max_examples=60, seed=5, tools=["test_simple_text"],
                                              out_dir=str(tmp_path)))
        found = [f for f in report.failures if "expected the request's id" in f.problems[0]]
        assert found, [f.problems for f in report.findings]
        steps = found[0].subject
        assert [json.loads(s.request.body)["method"] for s in steps] == ["tools/call"], [s.label for s in steps]
        assert json.loads(steps[0].request.body)["id"].startswith("seq-")
        assert found[0].path is not None and run(lambda: replay(found[0].path)).reproduced
        assert len(json.loads(found[0].path.read_text())["steps"]) == 1


def test_the_report_says_what_flaky_and_slow_mean() -> None:
    out, err = io.StringIO(), io.StringIO()
    step = Step(rpc("tools/call", rpc_id=3), label="valid")
    finding = Failure.judged([step], [Problem("id '3', expected the request's id 3", rule("mcp.result-id"))], [])
    finding.flaky = True
    _report(FuzzReport("http://127.0.0.1:1/mcp", 1, findings=[finding], slow=[Slow(step, 10.0, "tools/call of x", 2)]),
            Terminal(io.StringIO(), out, err))
    text = out.getvalue()
    assert "FAIL 1: id '3', expected the request's id 3 (flaky)" in text
    assert 'MUST (MCP 2026-07-28): "Result responses MUST include the same ID' in text
    assert f"(flaky) {FLAKY}" in text and "did not fail again when hypothesis replayed it" in FLAKY
    assert "SLOW: no answer within 10 s (--timeout) to 2 requests: tools/call of x" in text
    assert '      > POST valid: b\'{"jsonrpc": "2.0", "id": 3, "method": "tools/call"' in text, text


def test_over_stdio_a_step_is_a_line_and_a_null_method_is_named_by_its_case() -> None:
    out = io.StringIO()
    step = Step(Request("POST", (), b'{"jsonrpc": "2.0", "id": 8937, "method": null}'), label="envelope.method-type")
    _report(FuzzReport("server.py", 1, slow=[Slow(step, 1.0, _slow_kind(step))]), Terminal(io.StringIO(), out, io.StringIO()),
            stdio=True)
    text = out.getvalue()
    assert "SLOW: no answer within 1 s (--timeout) to 1 request: envelope.method-type" in text, text
    assert '      > LINE envelope.method-type: b\'{"jsonrpc": "2.0", "id": 8937, "method": null}\'' in text, text
