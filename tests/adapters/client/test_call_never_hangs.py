"""A server that keeps a call busy without ever answering it: the call still ends.

- HttpClient against the client probe's hostile server (``endless-requests``: the call's SSE
  stream pings and asks, each once the last was answered, and never answers): the questions
  count against ``max_rounds``; past it the call is cancelled the way the session's transport
  cancels (an initialize-era POST of ``notifications/cancelled``) and fails with -32603.
- ``mcpwire call --timeout`` bounds the whole tool call, not each read: a tool that reports
  progress for ever (so no read ever times out) ends in exit status 3 soon after the timeout,
  over HTTP and over stdio; the time the person at the terminal takes to answer the server's
  question is not counted.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

from mcpwire import Client
from mcpwire.types import ElicitRequest, ElicitResult, Implementation
from mcpwire_adapters.client.http import HttpClient
from mcpwire_adapters.errors import ServerError
from mcpwire_adapters.testing.client_probe.hostile import HostileServer
from mcpwire_adapters.testing.client_probe.http_listener import hostile_http
from mcpwire_adapters.testing.client_probe.scenarios import select_scenarios

from _lines import LineQueue

CLI = [sys.executable, "-m", "mcpwire_adapters.cli"]
WAIT = 30.0  # every subprocess of these tests is bounded by it


def test_an_http_call_whose_stream_asks_for_ever_is_cancelled_after_max_rounds() -> None:
    (scenario,) = select_scenarios(["endless-requests"], stdio=False)
    asked: list[str] = []

    def accept(request: ElicitRequest) -> ElicitResult:
        asked.append(request.params.message)
        return ElicitResult(action="accept", content={})

    async def main() -> HostileServer:
        with trio.fail_after(WAIT):  # before: the call read pings and questions for ever
            async with hostile_http(lambda origin: HostileServer(scenario, base=origin)) as (url, server):
                client = Client(Implementation(name="t", version="1"), capabilities={"elicitation": {"form": {}}})
                async with HttpClient(url, client, max_rounds=3, elicitation=accept) as c:
                    with pytest.raises(ServerError) as caught:
                        await c.call_tool("echo", {"text": "hi"})
                assert caught.value.code == -32603
                assert caught.value.error.message == "input required for tools/call: more than 3 input rounds"
                return server

    server = trio.run(main)
    bodies = [json.loads(r.body) for r in server.records if r.method == "POST" and r.body]
    call = [b for b in bodies if b.get("method") == "tools/call"][-1]  # the first: the modern try, refused
    answers = [b for b in bodies if "method" not in b]  # the client's answers to the server's requests
    assert len(asked) == 3
    assert [("error" in b) for b in answers] == [False] * 6 + [False, True]  # ping, question x3; ping, refused
    assert answers[-1]["error"]["code"] == -32603
    cancels = [b["params"]["requestId"] for b in bodies if b.get("method") == "notifications/cancelled"]
    assert cancels == [call["id"]]


APP = '''
import anyio
from mcpwire_adapters import App, NeedInput

app = App("busy", "1.0")


@app.tool(description="Reports progress for ever; never answers")
async def forever(ctx, arguments):
    step = 0
    while True:
        step += 1
        await ctx.progress(step)
        await anyio.sleep(0.1)


@app.tool(description="Asks a name, then greets")
def greet(ctx, arguments):
    answer = ctx.input_responses.get("name")
    if answer is None:
        schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        return NeedInput(requests={"name": {"method": "elicitation/create",
                                            "params": {"message": "Name?", "requestedSchema": schema}}})
    return "Hello, " + answer["content"]["name"]
'''


@pytest.fixture
def app_dir(tmp_path: Path) -> Path:
    (tmp_path / "busy_app.py").write_text(APP)
    return tmp_path


@pytest.fixture
def url(app_dir: Path) -> Iterator[str]:
    process = subprocess.Popen([*CLI, "serve", "busy_app:app", "--port", "0"], cwd=app_dir, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    try:
        yield LineQueue(process.stderr).wait_for(r"serving busy 1\.0 at (http://127\.0\.0\.1:\d+/mcp)").group(1)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def call(app_dir: Path, args: list[str], stdin: Any = subprocess.DEVNULL) -> subprocess.Popen[str]:
    return subprocess.Popen([*CLI, "call", *args], cwd=app_dir, stdin=stdin, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(process: subprocess.Popen[str], stdin: str | None = None) -> tuple[str, str]:
    try:
        return process.communicate(stdin, timeout=WAIT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_call_timeout_bounds_the_whole_call_not_each_read(transport: str, app_dir: Path,
                                                          request: pytest.FixtureRequest) -> None:
    if transport == "http":
        args = [request.getfixturevalue("url"), "forever", "--timeout", "1"]
    else:
        args = ["forever", "--timeout", "1", "--", *CLI, "serve", str(app_dir / "busy_app.py") + ":app",
                "--transport", "stdio"]
    started = time.monotonic()
    out, err = finish(call(app_dir, args))  # before: progress every 0.1 s kept the call going for ever
    assert "error: no answer to tools/call 'forever' within 1 s (--timeout); the call was cancelled" in err, err
    assert "Traceback" not in err and out == ""
    assert time.monotonic() - started < 15


def test_the_time_spent_answering_at_the_terminal_is_not_counted(app_dir: Path, url: str) -> None:
    process = call(app_dir, [url, "greet", "--timeout", "1"], stdin=subprocess.PIPE)
    time.sleep(2.5)  # the person reads the question: longer than --timeout
    out, err = finish(process, "a\nAda\n")
    assert process.returncode == 0, (out, err)
    assert out.strip() == "Hello, Ada"
