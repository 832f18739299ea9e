"""Many stdio server processes of one kind, started once and cheaply, for bench_stdio's p99 at 64
connections.

A fresh interpreter that imports the official SDK costs about 0.6 s of CPU; 64 of them, two
minutes of a shared 2-core machine's time before anything is measured. So one *zygote* process
per kind imports the server's modules once, then forks one child per server; each child puts its
pipe pair on fds 0 and 1 and runs the very server the pipelined benchmark runs (``ours``: the
``mcpwire serve ... --transport stdio`` command's code; ``sdk``: ``MCPServer.run("stdio")``),
built after the fork. Both kinds start the same way, so neither is favoured.

    fleet = Fleet("ours", 64).started()   # once every child is forked; fleet.conns: (write fd, read fd)
    fleet.cpu_seconds()          # CPU time of the children so far (/proc)
    fleet.stop()                 # EOF on each stdin: each server ends as a client closing it would

Run as ``python -m tests.bench._stdio_fleet KIND R0,W0,R1,W1,...`` by :class:`Fleet` only.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from .bench_e2e import REPO, _cpu_seconds

OURS_ARGV = ["serve", "tests.bench._workload:our_app", "--transport", "stdio"]


def _prepare(kind: str) -> Any:
    """Import what the server needs, in the zygote; return the function a child runs."""
    if kind == "ours":
        from mcpwire_adapters import cli
        from mcpwire_adapters.cli import serve as _cli_serve  # noqa: F401 - imported once, before forking
        from mcpwire_adapters.serve import stdio as stdio_server  # noqa: F401

        from . import _workload  # noqa: F401

        return lambda: cli.main(OURS_ARGV)
    from . import _workload

    import mcp.server  # noqa: F401 - the import is the cost being shared

    return lambda: _workload.sdk_small_server().run(transport="stdio")


def _zygote(kind: str, fds: list[int]) -> None:
    serve = _prepare(kind)
    pids = []
    for i in range(0, len(fds), 2):
        pid = os.fork()
        if pid == 0:
            try:
                os.dup2(fds[i], 0)
                os.dup2(fds[i + 1], 1)
                for fd in fds:
                    os.close(fd)
                serve()
            finally:
                os._exit(0)
        pids.append(pid)
    for fd in fds:
        os.close(fd)
    print(" ".join(map(str, pids)), flush=True)
    for pid in pids:
        os.waitpid(pid, 0)


class Fleet:
    """``n`` servers of ``kind``, one pipe pair each."""

    def __init__(self, kind: str, n: int) -> None:
        self.kind = kind
        theirs: list[int] = []
        self.conns: list[tuple[int, int]] = []
        for _ in range(n):
            stdin_r, stdin_w = os.pipe()
            stdout_r, stdout_w = os.pipe()
            theirs += [stdin_r, stdout_w]
            self.conns.append((stdin_w, stdout_r))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.bench._stdio_fleet", kind, ",".join(map(str, theirs))],
            cwd=REPO, pass_fds=theirs, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        for fd in theirs:
            os.close(fd)
        self.pids: list[int] = []

    def started(self) -> Fleet:
        """Wait until every child is forked (start several fleets first: they start in parallel)."""
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the {self.kind} fleet did not start")
        self.pids = [int(p) for p in line.split()]
        return self

    def cpu_seconds(self) -> float:
        return sum(_cpu_seconds(pid) for pid in self.pids)

    def stop(self) -> None:
        for w, _ in self.conns:
            os.close(w)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            for pid in self.pids:
                try:
                    os.kill(pid, 9)
                except ProcessLookupError:
                    pass
            self.proc.kill()
            self.proc.wait()
        for _, r in self.conns:
            os.close(r)


if __name__ == "__main__":
    _zygote(sys.argv[1], [int(fd) for fd in sys.argv[2].split(",")])
