"""Durable tasks end to end: ``mcpwire serve tests/tasks_app.py:app --tasks-db FILE`` as real
processes on 127.0.0.1 (port 0), spoken to with raw HTTP requests (stdlib ``http.client``) and
raw NDJSON lines over stdio. A server is killed or stopped and another opens its file; two
serve one file at once; many tasks run concurrently; bad input is answered, not fatal.

Every wait has a deadline (a failure, never a pass); no assertion is about how long anything
took. Each server process is stopped (or killed) by the test that started it.
"""

from __future__ import annotations

import http.client
import json
import queue
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

import pytest
from _lines import LineQueue
from mcpwire_adapters.state.sqlite_tasks import STOPPED

from mcpwire.tasks import LOST_WORK

REPO = Path(__file__).resolve().parents[2]
APP = REPO / "tests" / "tasks_app.py"
TIMEOUT = 20.0
VERSION = "2026-07-28"
CAPABILITIES: dict[str, Any] = {"extensions": {"io.modelcontextprotocol/tasks": {}}, "elicitation": {"form": {}}}
META = {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": CAPABILITIES}
INTERNAL = {"code": -32603, "message": "Internal error"}
MAX_BODY = 64 * 1024  # tests/tasks_app.py


def message(method: str, params: dict[str, Any], request_id: int = 1) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method,
                       "params": {**params, "_meta": META}}).encode()


class HttpServed:
    """``mcpwire serve`` over HTTP in a child process; ``post`` sends one JSON-RPC request."""

    def __init__(self, *options: str, cwd: Path = REPO) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mcpwire_adapters.cli", "serve", f"{APP}:app", "--port", "0", *options],
            cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        assert self.process.stderr is not None
        self.stderr = LineQueue(self.process.stderr)
        self.store_line = self.stderr.wait_for(r"mcpwire: tasks kept in (.*)$").group(1)
        url = urlsplit(self.stderr.wait_for(r"serving tasks-app 1\.0 at (http://127\.0\.0\.1:\d+/mcp)").group(1))
        self.address = (url.hostname or "", url.port or 0)

    def post(self, method: str, params: dict[str, Any] | None = None, *, name: str | None = None,
             body: bytes | None = None) -> tuple[int, dict[str, Any]]:
        """The HTTP status and the JSON-RPC response (a JSON body, or the response of an SSE one)."""
        connection = http.client.HTTPConnection(*self.address, timeout=TIMEOUT)
        headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
                   "mcp-protocol-version": VERSION, "mcp-method": method}
        if name is not None:
            headers["mcp-name"] = name
        try:
            connection.request("POST", "/mcp", body if body is not None else message(method, params or {}), headers)
            response = connection.getresponse()
            data = response.read()
        finally:
            connection.close()
        if (response.getheader("content-type") or "").startswith("text/event-stream"):
            events = [json.loads(line[5:]) for line in data.decode().splitlines() if line.startswith("data:")]
            return response.status, next(e for e in events if "id" in e)
        return response.status, json.loads(data)

    def call(self, tool: str, arguments: dict[str, Any] | None = None) -> str:
        """Call a task tool; the task id of its CreateTaskResult."""
        status, answer = self.post("tools/call", {"name": tool, "arguments": arguments or {}}, name=tool)
        assert status == 200 and answer["result"]["resultType"] == "task", answer
        return str(answer["result"]["taskId"])

    def task(self, task_id: str) -> dict[str, Any]:
        status, answer = self.post("tasks/get", {"taskId": task_id}, name=task_id)
        assert status == 200, answer
        return dict(answer["result"])

    def wait_until(self, task_id: str, *statuses: str) -> dict[str, Any]:
        deadline = time.monotonic() + TIMEOUT
        while (task := self.task(task_id))["status"] not in statuses:
            assert time.monotonic() < deadline, f"task still {task['status']}, not {statuses}"
            time.sleep(0.05)
        return task

    def stop(self) -> None:
        """Ctrl-C: a graceful stop."""
        self.process.send_signal(signal.SIGINT)
        assert self.process.wait(timeout=TIMEOUT) == 0
        self.stderr.wait_for(r"mcpwire: stopped")

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(timeout=TIMEOUT)

    def __enter__(self) -> HttpServed:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.kill()


def error_of(answer: tuple[int, dict[str, Any]]) -> tuple[int, int, str]:
    status, body = answer
    return status, body["error"]["code"], body["error"]["message"]


def ack(answer: tuple[int, dict[str, Any]]) -> None:
    status, body = answer
    assert status == 200 and body["result"]["resultType"] == "complete", body
    assert set(body["result"]) == {"resultType", "_meta"}, body


def without_meta(task: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in task.items() if k != "_meta"}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "tasks.db"


# -- restart ------------------------------------------------------------------------------------
def test_a_killed_servers_tasks_after_a_restart(db: Path) -> None:
    with HttpServed("--tasks-db", str(db)) as first:
        assert first.store_line == str(db)
        done = first.call("slow_compute", {"seconds": 0, "label": "before"})
        result = first.wait_until(done, "completed")["result"]
        running = first.call("hold")
        waiting = first.call("confirm")
        assert first.wait_until(waiting, "input_required")["inputRequests"]["confirm"]["method"] == "elicitation/create"
        assert first.task(running)["status"] == "working"
        first.kill()

    with HttpServed("--tasks-db", str(db)) as second:
        finished = second.task(done)
        assert finished["status"] == "completed" and finished["result"] == result
        assert result["content"] == [{"type": "text", "text": "computed before"}]
        for task_id in (running, waiting):
            lost = second.task(task_id)
            assert lost["status"] == "failed" and lost["error"] == INTERNAL, lost
            assert lost["statusMessage"] == LOST_WORK and "inputRequests" not in lost
        # Updates to finished tasks are acknowledged and change nothing.
        before = without_meta(second.task(done))
        ack(second.post("tasks/update", {"taskId": done, "inputResponses": {"x": {"action": "accept"}}}, name=done))
        ack(second.post("tasks/update", {"taskId": waiting, "inputResponses": {
            "confirm": {"action": "accept", "content": {"ok": True}}}}, name=waiting))
        ack(second.post("tasks/cancel", {"taskId": done}, name=done))
        assert without_meta(second.task(done)) == before
        assert second.task(waiting)["status"] == "failed"
        assert error_of(second.post("tasks/get", {"taskId": "no-such-task"}, name="no-such-task")) == (
            400, -32602, "Failed to retrieve task: Task not found")
        # The new process's own tasks work as before.
        fresh = second.call("slow_compute", {"seconds": 0, "label": "after"})
        assert second.wait_until(fresh, "completed")["result"]["content"][0]["text"] == "computed after"
        second.stop()


def test_a_stdio_server_stopped_cleanly_then_read_over_http(db: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpwire_adapters.cli", "serve", f"{APP}:app", "--transport", "stdio",
         "--tasks-db", str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    try:
        answers: queue.Queue[bytes] = queue.Queue()

        def pump(stdout: IO[bytes]) -> None:
            for line in stdout:
                answers.put(line)

        threading.Thread(target=pump, args=(process.stdout,), daemon=True).start()

        def ask(line: bytes) -> dict[str, Any]:
            assert process.stdin is not None
            process.stdin.write(line + b"\n")
            process.stdin.flush()
            return dict(json.loads(answers.get(timeout=TIMEOUT)))

        def call(tool: str, request_id: int) -> str:
            answer = ask(message("tools/call", {"name": tool, "arguments": {}}, request_id))
            assert answer["result"]["resultType"] == "task", answer
            return str(answer["result"]["taskId"])

        running, waiting = call("hold", 1), call("confirm", 2)
        deadline = time.monotonic() + TIMEOUT
        while ask(message("tasks/get", {"taskId": waiting}, 3))["result"]["status"] != "input_required":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        # A line past the stdio limit (4 MiB) is answered -32600 and the connection goes on.
        huge = message("tasks/update", {"taskId": waiting, "inputResponses": {"confirm": {
            "action": "accept", "content": {"ok": True}, "pad": "x" * (4 * 1024 * 1024)}}}, 4)
        refused = ask(huge)
        assert refused["id"] is None and refused["error"]["code"] == -32600
        assert "exceeds" in refused["error"]["message"]
        still = ask(message("tasks/get", {"taskId": waiting}, 5))["result"]
        assert still["status"] == "input_required"
        process.stdin.close()  # end of input: a clean stop
        assert process.wait(timeout=TIMEOUT) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()

    with HttpServed("--tasks-db", str(db)) as reader:
        for task_id in (running, waiting):
            task = reader.task(task_id)
            assert task["status"] == "failed" and task["error"] == INTERNAL
            assert task["statusMessage"] == STOPPED  # failed as the first one closed its store
        reader.stop()


# -- two processes, one file ------------------------------------------------------------------------
def test_two_servers_share_one_file_while_both_run(tmp_path: Path) -> None:
    # The first uses serve's default file in its working directory; the second names it.
    with HttpServed(cwd=tmp_path) as first, HttpServed("--tasks-db", str(tmp_path / "mcpwire-tasks.db")) as second:
        assert first.store_line == "mcpwire-tasks.db"
        running = first.call("hold")
        slow = first.call("slow_compute", {"seconds": 1, "label": "shared"})
        # The second opened the file while the first's tasks run: they are not failed.
        assert second.task(running)["status"] == "working"
        assert second.task(slow)["status"] in ("working", "completed")
        done = second.wait_until(slow, "completed", "failed")
        assert done["status"] == "completed" and done["result"]["content"][0]["text"] == "computed shared"
        theirs = second.call("slow_compute", {"seconds": 0, "label": "second"})
        assert first.wait_until(theirs, "completed")["result"]["content"][0]["text"] == "computed second"
        first.kill()
        # The first is gone: the second reads its running task as failed.
        lost = second.task(running)
        assert lost["status"] == "failed" and lost["error"] == INTERNAL and lost["statusMessage"] == LOST_WORK
        second.stop()


# -- concurrency -----------------------------------------------------------------------------------
def test_many_concurrent_task_calls_all_complete(db: Path) -> None:
    count = 24
    with HttpServed("--tasks-db", str(db)) as served, ThreadPoolExecutor(count) as pool:
        ids = list(pool.map(lambda i: served.call("slow_compute", {"seconds": 0.3, "label": str(i)}), range(count)))
        assert len(set(ids)) == count
        finished = list(pool.map(lambda task_id: served.wait_until(task_id, "completed", "failed", "cancelled"), ids))
        assert [t["status"] for t in finished] == ["completed"] * count
        assert [t["result"]["content"][0]["text"] for t in finished] == [f"computed {i}" for i in range(count)]
        served.stop()
    with sqlite3.connect(db) as check:
        rows = dict(check.execute("SELECT task_id, status FROM tasks").fetchall())
    check.close()
    assert rows == dict.fromkeys(ids, "completed")


# -- bad input over the wire ----------------------------------------------------------------------
def test_bad_task_requests_are_answered(db: Path) -> None:
    with HttpServed("--tasks-db", str(db)) as served:
        for bad in (42, "", None, ["id"]):
            assert error_of(served.post("tasks/get", {"taskId": bad}, name=str(bad))) == (
                400, -32602, "taskId must be a non-empty string")
        assert error_of(served.post("tasks/get", {}))[1] == -32602
        assert error_of(served.post("tasks/get", {"taskId": "unknown"}, name="unknown"))[1:] == (
            -32602, "Failed to retrieve task: Task not found")
        waiting = served.call("confirm")
        served.wait_until(waiting, "input_required")
        assert error_of(served.post("tasks/update", {"taskId": waiting}, name=waiting)) == (
            400, -32602, "tasks/update requires inputResponses")
        not_objects: tuple[Any, ...] = ([], "yes", 3)
        for not_an_object in not_objects:
            assert error_of(served.post("tasks/update", {"taskId": waiting, "inputResponses": not_an_object},
                                        name=waiting)) == (400, -32602, "inputResponses must be an object")
        assert error_of(served.post("tasks/update", {"taskId": waiting, "inputResponses": {"confirm": "yes"}},
                                    name=waiting))[1] == -32602
        # The wrong shape for what the key asked (an ElicitResult): -32602 naming the key.
        status, code, text = error_of(served.post(
            "tasks/update", {"taskId": waiting, "inputResponses": {"confirm": {"action": 5}}}, name=waiting))
        assert (status, code) == (400, -32602) and text.startswith("inputResponses.confirm is not a valid")
        # Past the HTTP body limit: 413, and the server goes on.
        big = message("tasks/update", {"taskId": waiting, "inputResponses": {
            "confirm": {"action": "accept", "pad": "x" * MAX_BODY}}})
        assert error_of(served.post("tasks/update", name=waiting, body=big))[:2] == (413, -32600)
        assert served.task(waiting)["status"] == "input_required"  # none of that changed the task
        # A key it did not ask is ignored; the right answer finishes the task.
        ack(served.post("tasks/update", {"taskId": waiting, "inputResponses": {"other": {"x": 1}}}, name=waiting))
        assert served.task(waiting)["status"] == "input_required"
        ack(served.post("tasks/update", {"taskId": waiting, "inputResponses": {
            "confirm": {"action": "accept", "content": {"ok": True}}}}, name=waiting))
        done = served.wait_until(waiting, "completed", "failed")
        assert done["result"]["content"] == [{"type": "text", "text": "confirmed: True"}]
        before = without_meta(done)
        ack(served.post("tasks/update", {"taskId": waiting, "inputResponses": {
            "confirm": {"action": "decline"}}}, name=waiting))
        assert without_meta(served.task(waiting)) == before
        served.stop()


# -- serve's options --------------------------------------------------------------------------------
def test_serve_task_store_options(tmp_path: Path) -> None:
    plain = tmp_path / "plain_app.py"
    plain.write_text("from mcpwire_adapters import App\napp = App('plain', '1.0')\n")
    command = [sys.executable, "-m", "mcpwire_adapters.cli", "serve"]
    done = subprocess.run([*command, f"{plain}:app", "--tasks-db", str(tmp_path / "x.db")], capture_output=True,
                          text=True, timeout=TIMEOUT, cwd=tmp_path)
    assert done.returncode == 4 and "--tasks-db: the App serves no tasks" in done.stderr, done.stderr
    done = subprocess.run([*command, f"{APP}:app", "--tasks-db", str(tmp_path / "missing" / "x.db")],
                          capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp_path)
    assert done.returncode == 4 and "cannot open the task store" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    with HttpServed("--tasks-db", str(tmp_path / "idle.db")) as idle:
        assert list((tmp_path / "idle.db-owners").iterdir()) != []  # open: its owner lock file
        idle.stop()
    assert list((tmp_path / "idle.db-owners").iterdir()) == []  # closed on stop, empty as it was
    with HttpServed("--tasks-db", ":memory:", cwd=tmp_path) as served:
        assert served.store_line == "memory (lost when the server stops)"
        task_id = served.call("slow_compute", {"seconds": 0})
        assert served.wait_until(task_id, "completed")["status"] == "completed"
        served.stop()
    # No file: neither the one named for an App without tasks, nor the default.
    assert not list(tmp_path.glob("x.db*")) and not list(tmp_path.glob("mcpwire-tasks.db*"))
