"""Tests of ``mcpwire fuzz`` (``mcpwire_adapters.testing.fuzz.runner``).

Three targets: the conformance fixture over HTTP and over stdio, on which a small run finds
nothing; and a deliberately broken server (the standard library's HTTP server in a thread, on
127.0.0.1, forwarding to the fixture and planting one bug: an integer id comes back as a
string), on which the fuzzer finds the bug, shrinks it to a minimal request and writes a replay
file and a curl script that reproduce it. The budgets are small: a few seconds a test.
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from _lines import fixture_served
from _stdlib_http import serving_http
import trio

from mcpwire_adapters.testing.fuzz.runner import FuzzReport, fuzz, fuzz_stdio, replay

REPO = Path(__file__).resolve().parents[3]
CLI = [sys.executable, "-m", "mcpwire_adapters.cli"]
FIXTURE_STDIO = [sys.executable, str(REPO / "conformance" / "fixture.py"), "--transport", "stdio"]
TIMEOUT = 60.0


@pytest.fixture(scope="module")
def fixture_url() -> Iterator[str]:
    with fixture_served() as url:
        yield url


def _forwarder(upstream: str, seen: list[str], *, plant: bool = True) -> type[BaseHTTPRequestHandler]:
    """A handler passing every request to ``upstream`` and its answer back, but for one planted
    bug (unless ``plant`` is False): an integer id in a JSON answer comes back as a string.
    ``seen`` gets the method of each request body, and the tool name of each tools/call."""
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
            if isinstance(message, dict):
                params = message.get("params")
                name = params.get("name") if isinstance(params, dict) else None
                seen.append(f"{message.get('method')}:{name}" if message.get("method") == "tools/call" else
                            str(message.get("method")))
            connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=5)
            connection.request(self.command, parts.path, body=body if body else None,
                               headers={k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")})
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
