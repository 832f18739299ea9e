"""``mcpwire serve --workers N`` (adapters/cli/workers.py): N processes on one port with
SO_REUSEPORT. Requests on separate connections are served by several processes, and a
multi-round-trip call whose rounds land on different processes completes (the workers share
the keyring of ``--keys FILE``). stdio and platforms without SO_REUSEPORT are refused."""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from mcpwire_adapters.cli import workers as _cli_workers
from mcpwire_adapters.cli.terminal import CliError
from mcpwire_adapters.state.keys import ENV, new_keyring, write_keyring

pytestmark = pytest.mark.skipif(not hasattr(socket, "SO_REUSEPORT"), reason="no SO_REUSEPORT here")

CLI = [sys.executable, "-m", "mcpwire_adapters.cli"]
TIMEOUT = 30.0
VERSION = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}

APP_SOURCE = '''
import os
from mcpwire_adapters import App, NeedInput

app = App("workers-test", "1.0")

@app.tool(description="The serving process", input_schema={"type": "object"})
async def pid(ctx, arguments):
    return str(os.getpid())

@app.tool(description="Ask a name on one process, greet on whichever answers the retry",
          input_schema={"type": "object"})
async def ask(ctx, arguments):
    answer = ctx.input_responses.get("name")
    if answer is None:
        return NeedInput(requests={"name": {"method": "elicitation/create", "params": {
            "message": "Name?", "requestedSchema": {"type": "object", "properties": {}}}}},
            state={"pid": os.getpid()})
    return f"{answer['content']['name']} {ctx.state['pid']} {os.getpid()}"
'''


@contextmanager
def workers(app_dir: Path, *extra: str) -> Iterator[tuple[int, set[int], subprocess.Popen[str]]]:
    """``mcpwire serve --workers 2 --port 0``: the port, the workers' pids, the parent process."""
    (app_dir / "workers_app.py").write_text(APP_SOURCE)
    env = {k: v for k, v in os.environ.items() if k != ENV}
    proc = subprocess.Popen([*CLI, "serve", "workers_app:app", "--port", "0", "--workers", "2", *extra],
                            cwd=app_dir, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    pids: set[int] = set()
    port = 0
    deadline = time.monotonic() + TIMEOUT
    try:
        while len(pids) < 2:
            assert time.monotonic() < deadline, "the workers did not start"
            line = proc.stderr.readline()
            assert line, f"the server exited: {proc.wait()}"
            found = re.search(r"worker \d/2 \(pid (\d+)\) serving .* at http://127\.0\.0\.1:(\d+)/mcp", line)
            if found:
                pids.add(int(found[1]))
                port = int(found[2])
        yield port, pids, proc
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(TIMEOUT)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def call(port: int, name: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """One tools/call on a connection of its own (so that the kernel picks a worker for it)."""
    params = {"name": name, "arguments": {}, "_meta": META, **(extra or {})}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
               "mcp-protocol-version": VERSION, "mcp-method": "tools/call", "mcp-name": name}
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    try:
        connection.request("POST", "/mcp", body, headers)
        response = connection.getresponse()
        assert response.status == 200
        answer: dict[str, Any] = json.loads(response.read())
        return answer
    finally:
        connection.close()


def test_requests_are_served_by_several_processes(tmp_path: Path) -> None:
    with workers(tmp_path) as (port, pids, proc):
        served = {int(call(port, "pid")["result"]["content"][0]["text"]) for _ in range(60)}
        assert served == pids  # both workers, and only they
    assert proc.returncode == 0


def test_rounds_of_one_call_cross_processes_with_the_shared_key_file(tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    write_keyring(new_keyring(), keys)
    with workers(tmp_path, "--keys", str(keys)) as (port, pids, _proc):
        crossed = set()
        for _ in range(40):
            first = call(port, "ask")["result"]
            assert first["resultType"] == "input_required"
            retry = call(port, "ask", {"requestState": first["requestState"],
                                       "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}}})
            name, asked, answered = retry["result"]["content"][0]["text"].split()
            assert name == "Ada" and {int(asked), int(answered)} <= pids
            if asked != answered:
                crossed.add((asked, answered))
            if len(crossed) == 2:
                break
        assert len(crossed) == 2  # each way: the token one worker signed, the other accepted


def test_stdio_and_a_platform_without_so_reuseport_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    done = subprocess.run([*CLI, "serve", "x:app", "--transport", "stdio", "--workers", "2"],
                          capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    assert done.returncode == 4 and "--workers is for HTTP" in done.stderr and "Traceback" not in done.stderr
    monkeypatch.setattr(_cli_workers, "reuse_port_available", lambda: False)
    args = argparse.Namespace(workers=2, transport="http")
    with pytest.raises(CliError, match="SO_REUSEPORT") as refused:
        _cli_workers.check_workers(args)
    assert refused.value.exit_code == 4
