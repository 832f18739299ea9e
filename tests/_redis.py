"""A real ``redis-server`` for the tests that need one (the Redis stores, the broker, the
many-process integration tests): started on a free port of 127.0.0.1, with no persistence
(no RDB snapshot, no AOF) in a temporary folder, and stopped by the test or fixture that
started it. ``scripts/test`` installs Debian's ``redis-server`` when it is missing; without it
the tests that need Redis are skipped, saying why (a developer's machine without the package).

The ``redis_server`` fixture (``tests/conftest.py``) gives one server per test; a test that
restarts Redis mid-way uses :meth:`RedisServer.stop` and :meth:`RedisServer.start` (same port)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

__all__ = ["RedisServer", "free_port", "redis_binary"]

START_TIMEOUT = 20.0


def redis_binary() -> str:
    """The ``redis-server`` to run; skips the calling test when there is none."""
    found = shutil.which("redis-server")
    if found is None:
        pytest.skip("redis-server is not installed (scripts/test installs it: apt-get install -y redis-server)")
    return found


def free_port() -> int:
    """A TCP port of 127.0.0.1 nobody listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RedisServer:
    """One ``redis-server`` child process on 127.0.0.1:``port``, without persistence."""

    def __init__(self, folder: Path, port: int | None = None) -> None:
        self.binary = redis_binary()
        self.folder = folder
        self.port = port if port is not None else free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start it (again, on the same port) and wait until it answers PING."""
        assert self.process is None, "already running"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.folder), "--protected-mode", "yes", "--loglevel", "warning"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.process.returncode} (port {self.port} taken?)")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1.0) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(64).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("redis-server did not answer PING in time")
            time.sleep(0.02)

    def stop(self) -> None:
        """Stop it (SIGTERM, then SIGKILL after 10 s). Idempotent."""
        process, self.process = self.process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
