"""stdio: small tools/call pipelined to a server process, ours against the SDK's.

Each server is a process of its own reading NDJSON on stdin (``ours``: ``mcpwire serve
tests.bench._workload:our_app --transport stdio``; ``sdk``: ``MCPServer.run(transport="stdio")``
with the same echo tool). Both take the 2026-07-28 stateless call with no initialize. A round
writes N calls (the workload's bytes, each with its own id) from a writer thread, keeping
WINDOW (128) calls in flight (past our driver's ``max_in_flight``, 64 by default: it holds the
extra ones and stops reading stdin until one ends, back-pressure), while the main thread reads
the N answers: calls per second from the first write to the last answer, and the server's CPU
time per call (``/proc/PID/stat``). Every answer is checked (its id, the echoed text). Rounds
alternate the servers' order; each figure is the median over the rounds. The latency at 64
concurrent callers is :mod:`tests.bench.bench_stdio_p99`.

    python -m tests.bench.bench_stdio [N] [ROUNDS] [WINDOW]
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import threading
import time
from typing import IO, Any

from .bench_e2e import REPO, _cpu_seconds

SDK_SERVER = "from tests.bench._workload import sdk_small_server; sdk_small_server().run(transport='stdio')"
COMMANDS = {
    "ours": [sys.executable, "-m", "mcpwire_adapters.cli", "serve", "tests.bench._workload:our_app",
             "--transport", "stdio"],
    "sdk": [sys.executable, "-c", SDK_SERVER],
}


def _calls(start: int, n: int) -> list[bytes]:
    from ._workload import CALL

    assert CALL.startswith(b'{"jsonrpc":"2.0","id":1,')
    return [CALL.replace(b'"id":1,', b'"id":%d,' % i, 1) + b"\n" for i in range(start, start + n)]


class StdioServer:
    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.proc = subprocess.Popen(COMMANDS[kind], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.next_id = 1

    def run(self, n: int, window: int = 128) -> dict[str, Any]:
        stdin, stdout = self.proc.stdin, self.proc.stdout
        assert stdin is not None and stdout is not None
        lines = _calls(self.next_id, n)
        self.next_id += n

        slots = threading.Semaphore(window)

        def write(out: IO[bytes]) -> None:
            for line in lines:
                if not slots.acquire(blocking=False):
                    out.flush()
                    slots.acquire()
                out.write(line)
            out.flush()

        cpu0 = _cpu_seconds(self.proc.pid)
        writer = threading.Thread(target=write, args=(stdin,))
        t0 = time.perf_counter()
        writer.start()
        seen = set()
        for _ in range(n):
            answer = json.loads(stdout.readline())
            assert answer.get("result", {}).get("content", [{}])[0].get("text") == "hello", (self.kind, answer)
            seen.add(answer["id"])
            slots.release()
        elapsed = time.perf_counter() - t0
        writer.join()
        cpu = _cpu_seconds(self.proc.pid) - cpu0
        assert len(seen) == n
        return {"calls": n, "seconds": elapsed, "calls_per_s": n / elapsed, "server_cpu_us_per_call": cpu * 1e6 / n}

    def stop(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def measure(kinds: list[str], *, n: int, rounds: int, window: int = 128, warmup: int = 200,
            progress: Any = None) -> dict[str, Any]:
    servers = {kind: StdioServer(kind) for kind in kinds}
    runs: dict[str, list[dict[str, Any]]] = {kind: [] for kind in kinds}
    try:
        for server in servers.values():
            server.run(warmup, window)
        for r in range(rounds):
            for kind in kinds if r % 2 == 0 else list(reversed(kinds)):
                result = servers[kind].run(n, window)
                runs[kind].append(result)
                if progress is not None:
                    progress(f"stdio {kind} round {r + 1}/{rounds}: {result['calls_per_s']:.0f} calls/s")
    finally:
        for server in servers.values():
            server.stop()
    out: dict[str, Any] = {}
    for kind, results in runs.items():
        out[kind] = {
            "calls_per_s": statistics.median(x["calls_per_s"] for x in results),
            "server_cpu_us_per_call": statistics.median(x["server_cpu_us_per_call"] for x in results),
            "rounds": results, "n": n, "window": window,
        }
    return out


if __name__ == "__main__":
    N = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    WINDOW = int(sys.argv[3]) if len(sys.argv) > 3 else 128
    result = measure(["ours", "sdk"], n=N, rounds=ROUNDS, window=WINDOW, progress=lambda m: print(m, file=sys.stderr))
    for kind, r in result.items():
        print(f"{kind}: {r['calls_per_s']:.0f} calls/s, server CPU {r['server_cpu_us_per_call']:.0f} us/call")
    print(f"ours/sdk: {result['ours']['calls_per_s'] / result['sdk']['calls_per_s']:.2f}x calls/s")
