"""Scaling out on one host (issue 17): requests/s and p99 of ``mcpwire serve --redis URL --keys
FILE --workers N`` for N = 1, 2, 4, against the official SDK's recommended multi-worker setup
under the same load, and the notification fan-out latency across processes through Redis.

- **Ours**: ``mcpwire serve tests.bench._workload:our_app --workers N --redis URL --keys FILE``
  (N processes on one port with ``SO_REUSEPORT``; the kernel spreads the connections), with a
  real ``redis-server`` started on a free port of 127.0.0.1 (tests/_redis.py).
- **The SDK**: its stateless Streamable HTTP app (``streamable_http_app(stateless_http=True,
  json_response=True)``: no session for the workers to share, so any worker can answer any
  request) under ``uvicorn --workers N`` (uvicorn's own process manager,
  its default auto stack: httptools + uvloop when installed, as the bench extra has them).
- **The load**: bench_e2e's generator (one asyncio process, CONNS keep-alive connections, the
  same small ``tools/call`` as every end-to-end row), rounds interleaved over the six servers so
  that the machine's noise falls on all of them alike.
- **Fan-out**: two single-process servers A and B of tests/cluster_app.py on the same Redis; a
  ``subscriptions/listen`` stream (``toolsListChanged``) open on A; a ``tools/call touch``
  (which raises ``list_changed`` of tools) sent to B; the time from sending the call until A's
  stream delivers ``notifications/tools/list_changed``. The same with the call sent to A itself
  (no Redis hop), alternated trial by trial, as the baseline. The SDK has no broker between its
  workers (a change in one worker reaches only that worker's streams), so it has no row here.

Roles, one module (every process runs the same code)::

    python -m tests.bench.bench_scale serve KIND   # KIND: ours-N, sdk-N, fanout; prints the port,
                                                   # serves until stdin closes (env: BENCH_SCALE_*)

Run through ``python tests/bench/run.py --scale`` (docs/performance.md).
"""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from .bench_e2e import REPO, ServerProcess, interleaved_rounds, run_load

ENV_REDIS = "BENCH_SCALE_REDIS"
ENV_KEYS = "BENCH_SCALE_KEYS"
PROCESSES = (1, 2, 4)
START_TIMEOUT = 60.0
VERSION = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {}}


# -- the servers (child side) ------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _drain(stream: Any) -> None:
    """Keep reading a child's stderr once it is up, so that its pipe never fills."""
    threading.Thread(target=lambda: [None for _ in stream], daemon=True).start()


def _serve_until_stdin_closes(argv: list[str], ready: str, count: int, port: int | None = None) -> None:
    """Run ``argv``; once ``count`` lines of its stderr match ``ready``, print the port (the
    regex's group 1, or ``port``), wait for stdin to close, then stop it with SIGINT."""
    proc = subprocess.Popen(argv, cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    seen, found_port = 0, port
    deadline = time.monotonic() + START_TIMEOUT
    while seen < count:
        line = proc.stderr.readline()
        if not line or time.monotonic() > deadline:
            proc.kill()
            raise SystemExit(f"{' '.join(argv[2:5])} did not start: exit {proc.poll()}")
        found = re.search(ready, line)
        if found:
            seen += 1
            if found.groups():
                found_port = int(found[1])
    _drain(proc.stderr)
    print(found_port, flush=True)
    sys.stdin.read()
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def serve_ours(n: int) -> None:
    """``mcpwire serve --workers N --redis URL --keys FILE`` with the end-to-end rows' App."""
    argv = [sys.executable, "-m", "mcpwire_adapters.cli", "serve", "tests.bench._workload:our_app", "--port", "0",
            "--workers", str(n), "--redis", os.environ[ENV_REDIS], "--keys", os.environ[ENV_KEYS],
            "--redis-prefix", "bench-scale:"]
    _serve_until_stdin_closes(argv, r"serving .* at http://127\.0\.0\.1:(\d+)/", n)


def serve_fanout() -> None:
    """One process of tests/cluster_app.py (its ``touch`` tool raises ``list_changed``)."""
    argv = [sys.executable, "-m", "mcpwire_adapters.cli", "serve", f"{REPO / 'tests' / 'cluster_app.py'}:app",
            "--port", "0", "--redis", os.environ[ENV_REDIS], "--keys", os.environ[ENV_KEYS],
            "--redis-prefix", "bench-fanout:"]
    _serve_until_stdin_closes(argv, r"serving .* at http://127\.0\.0\.1:(\d+)/", 1)


def sdk_app() -> Any:
    """The factory ``uvicorn --factory`` calls in each worker: the SDK's stateless JSON app."""
    from ._workload import sdk_asgi, sdk_small_server

    return sdk_asgi(sdk_small_server())


def serve_sdk(n: int) -> None:
    """``uvicorn tests.bench.bench_scale:sdk_app --factory --workers N`` on a free port."""
    port = _free_port()
    argv = [sys.executable, "-m", "uvicorn", "tests.bench.bench_scale:sdk_app", "--factory", "--workers", str(n),
            "--host", "127.0.0.1", "--port", str(port), "--log-level", "info", "--no-access-log"]
    _serve_until_stdin_closes(argv, r"Application startup complete", n, port)


def _kind(kind: str) -> None:
    if kind == "fanout":
        serve_fanout()
        return
    side, _, n = kind.partition("-")
    {"ours": serve_ours, "sdk": serve_sdk}[side](int(n))


# -- fan-out latency (parent side) -------------------------------------------------------------------


def _call_request(port: int, method: str, params: dict[str, Any]) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}}).encode()
    head = ["POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}", "Content-Type: application/json",
            "Accept: application/json, text/event-stream", f"Mcp-Protocol-Version: {VERSION}",
            f"Mcp-Method: {method}", f"Content-Length: {len(body)}"]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


class _Listener:
    """A ``subscriptions/listen`` stream for ``toolsListChanged``, read from its raw socket."""

    NOTICE = b"notifications/tools/list_changed"

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=20)
        self.sock.sendall(_call_request(port, "subscriptions/listen", {"notifications": {"toolsListChanged": True}}))
        self.data = b""
        self.seen = 0
        while b"notifications/subscriptions/acknowledged" not in self.data:
            self._read()

    def _read(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise RuntimeError("the listen stream closed")
        self.data += chunk

    def wait_next(self) -> int:
        """Block until one more ``list_changed`` has arrived; the time it did (perf_counter_ns)."""
        while self.data.count(self.NOTICE) <= self.seen:
            self._read()
        arrived = time.perf_counter_ns()
        self.seen += 1
        return arrived

    def close(self) -> None:
        self.sock.close()


def _trial(listener: _Listener, trigger: http.client.HTTPConnection) -> float:
    """One change: ``touch`` sent through ``trigger``; ms until the listener has it."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "touch", "arguments": {}, "_meta": META}})
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
               "mcp-protocol-version": VERSION, "mcp-method": "tools/call", "mcp-name": "touch"}
    sent = time.perf_counter_ns()
    trigger.request("POST", "/mcp", body, headers)
    arrived = listener.wait_next()
    answer = trigger.getresponse()
    data = answer.read()
    if answer.status != 200 or b"touched" not in data:
        raise RuntimeError(f"touch failed: {answer.status} {data[:200]!r}")
    return (arrived - sent) / 1e6


def _summary(samples: list[float]) -> dict[str, Any]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, max(0, round(0.99 * len(ordered) + 0.5) - 1))]
    return {"trials": len(ordered), "median_ms": statistics.median(ordered), "p99_ms": p99, "max_ms": ordered[-1]}


def measure_fanout(trials: int) -> dict[str, Any]:
    """Listener on A; ``touch`` through B (across processes, through Redis) and through A (the
    same process, no hop), alternated; median and p99 of each."""
    a, b = ServerProcess("fanout", "tests.bench.bench_scale"), None
    listener = None
    try:
        b = ServerProcess("fanout", "tests.bench.bench_scale")
        listener = _Listener(a.port)
        via = {"cross": http.client.HTTPConnection("127.0.0.1", b.port, timeout=20),
               "local": http.client.HTTPConnection("127.0.0.1", a.port, timeout=20)}
        samples: dict[str, list[float]] = {"cross": [], "local": []}
        for _ in range(3):  # warm both paths (connections, the broker's subscription)
            for conn in via.values():
                _trial(listener, conn)
        for i in range(trials):
            order = ("cross", "local") if i % 2 == 0 else ("local", "cross")
            for key in order:
                samples[key].append(_trial(listener, via[key]))
        for conn in via.values():
            conn.close()
        return {key: _summary(values) for key, values in samples.items()}
    finally:
        if listener is not None:
            listener.close()
        for server in (a, b):
            if server is not None:
                server.stop()


# -- the run (parent side) ---------------------------------------------------------------------------


def _load_rounds(kinds: list[str], *, conns: int, requests: int, seconds: float, rounds: int, warmup: int,
                 progress: Any) -> dict[str, Any]:
    """Start each server, then alternate load runs across them; per server the median round by
    requests/s with every round, or why it failed to start. Every server is stopped on the way out."""
    servers: dict[str, ServerProcess] = {}
    runs: dict[str, list[dict[str, Any]]] = {}
    out: dict[str, Any] = {}
    try:
        for kind in kinds:
            try:
                servers[kind] = ServerProcess(kind, "tests.bench.bench_scale")
                run_load(servers[kind].port, conns, warmup, 30, check=True)
                runs[kind] = []
            except Exception as exc:  # report it; the other servers still run
                out[kind] = f"{type(exc).__name__}: {exc}"[:500]
                if progress is not None:
                    progress(f"scale {kind} failed to start: {out[kind]}")
        interleaved_rounds(servers, runs, rounds=rounds, conns=conns, requests=requests, seconds=seconds,
                           progress=progress, label="scale")
    finally:
        for server in servers.values():
            server.stop()
    for kind, results in runs.items():
        ranked = sorted(results, key=lambda x: x["rps"])
        median = dict(ranked[len(ranked) // 2])
        median["rounds"] = results
        out[kind] = median
    return out


def measure(*, conns: int, requests: int, seconds: float, rounds: int, warmup: int, trials: int,
            processes: tuple[int, ...] = PROCESSES, with_sdk: bool = True, progress: Any = None) -> dict[str, Any]:
    """Start Redis, a keyring file and every server; interleave ``rounds`` load runs over them;
    then the fan-out trials. Per server: the median round by requests/s, with every round."""
    if str(REPO / "tests") not in sys.path:
        sys.path.insert(0, str(REPO / "tests"))
    from _redis import RedisServer  # tests/_redis.py: a real redis-server on a free port

    from mcpwire_adapters.state.keys import new_keyring, write_keyring

    kinds = [f"ours-{n}" for n in processes] + ([f"sdk-{n}" for n in processes] if with_sdk else [])
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as folder:
        redis_server = RedisServer(Path(folder) / "redis")
        redis_server.start()
        try:
            keys = Path(folder) / "keys.json"
            write_keyring(new_keyring(), keys)
            os.environ[ENV_REDIS], os.environ[ENV_KEYS] = redis_server.url, str(keys)  # read by the children
            out: dict[str, Any] = {"redis": redis_server.url}
            out.update(_load_rounds(kinds, conns=conns, requests=requests, seconds=seconds, rounds=rounds,
                                    warmup=warmup, progress=progress))
            if progress is not None:
                progress(f"fan-out: {trials} trials across processes and {trials} in one, alternated")
            try:
                out["fanout"] = measure_fanout(trials)
            except Exception as exc:
                out["fanout"] = f"{type(exc).__name__}: {exc}"[:500]
        finally:
            redis_server.stop()
            os.environ.pop(ENV_REDIS, None)
            os.environ.pop(ENV_KEYS, None)
    return out


def _num(x: Any, digits: int = 0) -> str:
    return f"{x:,.{digits}f}" if isinstance(x, (int, float)) else "-"


def render(result: dict[str, Any], processes: tuple[int, ...] = PROCESSES) -> str:
    """Two markdown tables: the load side by side (ratios from the same run), then the fan-out."""
    lines = ["## Scaling out: processes on one host, one Redis", "",
             "| processes | ours req/s | ours p99 | ours x 1 process | SDK req/s | SDK p99 | SDK x 1 worker "
             "| ours / SDK | server CPU per request, ours / SDK |", "|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    base = {side: result.get(f"{side}-{processes[0]}") for side in ("ours", "sdk")}
    for n in processes:
        cells = [str(n)]
        got = {side: result.get(f"{side}-{n}") for side in ("ours", "sdk")}
        for side in ("ours", "sdk"):
            row, first = got[side], base[side]
            if isinstance(row, dict):
                scale = row["rps"] / first["rps"] if isinstance(first, dict) and first["rps"] else None
                errors = f" ({row['errors']} errors)" if row["errors"] else ""
                cells += [_num(row["rps"]) + errors, _num(row["p99_ms"], 2) + " ms", _num(scale, 2)]
            else:
                cells += ["failed" if isinstance(row, str) else "-", "-", "-"]
        o, s = got["ours"], got["sdk"]
        both = isinstance(o, dict) and isinstance(s, dict)
        cells.append(_num(o["rps"] / s["rps"], 2) if both and s["rps"] else "-")  # type: ignore[index]
        cells.append(f"{_num(o['server_cpu_us_per_request'])} / {_num(s['server_cpu_us_per_request'])} us"  # type: ignore[index]
                     if both else "-")
        lines.append("| " + " | ".join(cells) + " |")
    for kind in sorted(k for k, v in result.items() if isinstance(v, str) and k not in ("redis", "fanout")):
        lines.append(f"\n{kind} failed: {result[kind]}")
    lines += ["", "## Notification fan-out (listener on A, change through B / through A)", ""]
    fan = result.get("fanout")
    if isinstance(fan, dict):
        lines += ["| path | trials | median | p99 | max |", "|---|---:|---:|---:|---:|"]
        for key, label in (("cross", "across processes (through B, Redis pub/sub)"), ("local", "same process (through A)")):
            r = fan[key]
            lines.append(f"| {label} | {r['trials']} | {_num(r['median_ms'], 2)} ms | {_num(r['p99_ms'], 2)} ms "
                         f"| {_num(r['max_ms'], 2)} ms |")
    else:
        lines.append(f"fan-out failed: {fan}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if argv[:1] == ["serve"] and len(argv) == 2:
        _kind(argv[1])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
