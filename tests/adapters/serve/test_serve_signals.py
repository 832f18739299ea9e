"""The servers run as a program, as the README runs them: ``trio.run(serve_http, app, HOST, PORT)``
and ``trio.run(serve_stdio, app)`` / ``asyncio.run(serve_stdio(app))``.

Each says where it serves, one line on stderr (stdout is the stdio protocol's), and on SIGINT
(Ctrl-C) or SIGTERM stops gracefully: no new requests, those in flight finish within the grace
period, then it returns, so the program exits 0 with no traceback. A second signal stops at once.
Each case is a script run as a subprocess and signalled there.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from mcpwire_adapters import BlockingClient
from mcpwire_adapters.errors import TransportError

import mcpwire
from mcpwire.types import Implementation

REPO = Path(__file__).resolve().parents[3]
TIMEOUT = 20.0

_APP = """
import sys
import anyio
from mcpwire_adapters import App, Context

app = App("signal-test", "1.0")

@app.tool(description="Say so on stderr, wait the given seconds, answer")
async def wait(ctx: Context, arguments: dict) -> str:
    print("started", file=sys.stderr, flush=True)
    await anyio.sleep(float(arguments["seconds"]))
    return "waited"
"""

SCRIPTS = {
    # The README's server, to the letter but for the port.
    "http": _APP + "import trio\nfrom mcpwire_adapters import serve_http\ntrio.run(serve_http, app, '127.0.0.1', 0)\n",
    "stdio-trio": _APP + "import trio\nfrom mcpwire_adapters import serve_stdio\ntrio.run(serve_stdio, app)\n",
    "stdio-asyncio": _APP + "import asyncio\nfrom mcpwire_adapters import serve_stdio\nasyncio.run(serve_stdio(app))\n",
}


class Program:
    """A script run as a subprocess; its stderr read line by line, with a deadline."""

    def __init__(self, script: str) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", script], cwd=REPO, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.stderr = b""

    def wait_for(self, pattern: str) -> re.Match[bytes]:
        assert self.process.stderr is not None
        deadline = time.monotonic() + TIMEOUT
        while (found := re.search(pattern.encode(), self.stderr)) is None:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.process.stderr], [], [], max(0.0, left))
            chunk = os.read(self.process.stderr.fileno(), 4096) if ready else b""
            if not chunk:
                pytest.fail(f"no {pattern!r} on stderr within {TIMEOUT} s: {self.stderr.decode()!r}")
            self.stderr += chunk
        return found

    def finish(self) -> tuple[int, str]:
        """The exit code, once it exits on its own, and all it wrote to stderr."""
        assert self.process.stderr is not None
        code = self.process.wait(timeout=TIMEOUT)
        self.stderr += self.process.stderr.read()
        return code, self.stderr.decode()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def program(request: pytest.FixtureRequest) -> Iterator[Program]:
    started = Program(SCRIPTS[request.param])
    try:
        yield started
    finally:
        started.close()


@pytest.mark.parametrize("program", ["http"], indirect=True)
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_serve_http_says_where_and_stops_gracefully(program: Program, signum: signal.Signals) -> None:
    found = program.wait_for(r"mcpwire: serving signal-test 1\.0 at (http://127\.0\.0\.1:\d+/mcp) \(Ctrl-C to stop\)\n")
    url = found.group(1).decode()
    with BlockingClient.http(url, connect_timeout=5.0, read_timeout=TIMEOUT) as client, \
            ThreadPoolExecutor(1) as pool:
        call = pool.submit(client.call_tool, "wait", {"seconds": 1.0})
        program.wait_for("started\n")
        program.process.send_signal(signum)
        program.wait_for(r"mcpwire: stopping \(finishing requests for up to 10 s; Ctrl-C again to force\)\n")
        assert call.result(timeout=TIMEOUT).data["content"] == [{"type": "text", "text": "waited"}]
    code, stderr = program.finish()
    assert code == 0 and "Traceback" not in stderr, stderr
    assert stderr.endswith("mcpwire: stopped\n"), stderr


@pytest.mark.parametrize("program", ["http"], indirect=True)
def test_a_second_signal_stops_serve_http_at_once(program: Program) -> None:
    url = program.wait_for(r"at (http://127\.0\.0\.1:\d+/mcp)").group(1).decode()
    with BlockingClient.http(url, connect_timeout=5.0, read_timeout=TIMEOUT) as client, \
            ThreadPoolExecutor(1) as pool:
        call = pool.submit(client.call_tool, "wait", {"seconds": 60.0})
        program.wait_for("started\n")
        program.process.send_signal(signal.SIGINT)
        program.wait_for("mcpwire: stopping ")
        began = time.monotonic()
        program.process.send_signal(signal.SIGINT)
        code, stderr = program.finish()
        assert time.monotonic() - began < 5.0
        assert code == 0 and "Traceback" not in stderr, stderr
        assert "mcpwire: stopping now\n" in stderr
        with pytest.raises(TransportError):  # the call in flight was cut: its connection closed
            call.result(timeout=TIMEOUT)


@pytest.mark.parametrize("program", ["stdio-trio", "stdio-asyncio"], indirect=True)
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_serve_stdio_says_so_on_stderr_and_stops_gracefully(program: Program, signum: signal.Signals) -> None:
    program.wait_for(r"mcpwire: serving signal-test 1\.0 on stdio \(NDJSON\); close stdin to stop\n")
    assert program.process.stdin is not None and program.process.stdout is not None
    client = mcpwire.Client(Implementation(name="test", version="1"))
    program.process.stdin.write(client.call_tool("wait", {"seconds": 1.0}).line)
    program.process.stdin.flush()
    program.wait_for("started\n")
    program.process.send_signal(signum)  # stdin stays open: the signal alone stops it
    code, stderr = program.finish()
    assert code == 0 and "Traceback" not in stderr, stderr
    answers = [json.loads(line) for line in program.process.stdout.read().splitlines()]
    assert [a["result"]["content"] for a in answers] == [[{"type": "text", "text": "waited"}]]  # stdout: protocol only


def test_quiet_embedded_serve_http_prints_nothing_and_leaves_signals_alone() -> None:
    """Started in a nursery (embedded, not the program's main task) serve_http leaves SIGINT to the
    program; ``quiet=True`` keeps stderr silent."""
    script = _APP + textwrap.dedent("""
        import functools, signal, trio
        from mcpwire_adapters import serve_http

        async def main():
            async with trio.open_nursery() as nursery:
                await nursery.start(functools.partial(serve_http, app, "127.0.0.1", 0, quiet=True))
                print("up", file=sys.stderr, flush=True)
                await trio.sleep(30)

        try:
            trio.run(main)
        except* KeyboardInterrupt:  # (in a group: raised inside the nursery)
            print("the program's own KeyboardInterrupt", file=sys.stderr, flush=True)
    """)
    program = Program(script)
    try:
        program.wait_for("up\n")
        program.process.send_signal(signal.SIGINT)
        code, stderr = program.finish()
        assert code == 0 and stderr == "up\nthe program's own KeyboardInterrupt\n", stderr
    finally:
        program.close()
