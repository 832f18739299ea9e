"""A child process's output stream read line by line in a thread, so that a test waits for a
line with a deadline instead of blocking on the pipe (the CLI and durable-task tests use it);
:func:`serving`, a server process that stops at the end of its stdin, and
:func:`fixture_served`, the conformance fixture over HTTP (:data:`FIXTURE_STDIO`: its command
over stdio)."""

from __future__ import annotations

import contextlib
import json
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO

__all__ = ["FIXTURE_READY", "FIXTURE_STDIO", "LineQueue", "fixture_served", "serving", "stop_by_stdin"]

FIXTURE = Path(__file__).resolve().parents[1] / "conformance" / "fixture.py"
FIXTURE_STDIO = [sys.executable, str(FIXTURE), "--transport", "stdio"]
#: The line a fixture over HTTP prints once it serves (conformance/run.py's handshake).
FIXTURE_READY = r"^\{.*conformanceReady.*\}$"


class LineQueue:
    """Lines of a child's stream, read by a thread; :meth:`wait_for` waits at most ``timeout``
    seconds for each line."""

    def __init__(self, stream: IO[str], timeout: float = 20.0) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self.timeout = timeout
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.put(line)
        self.lines.put("")

    def wait_for(self, pattern: str) -> re.Match[str]:
        """The first line (from here on) matching ``pattern``; fails when the stream ends first."""
        while True:
            line = self.lines.get(timeout=self.timeout)
            self.seen.append(line)
            assert line, f"stream ended before {pattern!r}: {self.seen}"
            found = re.search(pattern, line)
            if found:
                return found


def stop_by_stdin(process: subprocess.Popen[str]) -> None:
    """Close a server's stdin (which stops it) and wait for it to exit; kill it after 10 s."""
    assert process.stdin is not None
    process.stdin.close()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextlib.contextmanager
def serving(command: list[str], ready: str) -> Iterator[re.Match[str]]:
    """Run a server that stops at the end of its stdin; yield the stdout line matching ``ready``;
    stop it (killed after 10 s)."""
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True)
    assert process.stdout is not None and process.stdin is not None
    try:
        yield LineQueue(process.stdout).wait_for(ready)
    finally:
        stop_by_stdin(process)


@contextlib.contextmanager
def fixture_served() -> Iterator[str]:
    """The conformance fixture over HTTP on a free port of 127.0.0.1: its URL."""
    with serving([sys.executable, str(FIXTURE), "--port", "0"], FIXTURE_READY) as ready:
        yield str(json.loads(ready.group(0))["url"])
