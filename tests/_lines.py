"""A child process's output stream read line by line in a thread, so that a test waits for a
line with a deadline instead of blocking on the pipe (the CLI and durable-task tests use it)."""

from __future__ import annotations

import queue
import re
import threading
from typing import IO

__all__ = ["LineQueue"]


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
