"""stdio: p50/p99 latency of small tools/call at 64 concurrent callers, ours against the SDK's.

The target of issue 16: "stdio: p99 at 64 connections no worse than the SDK's". Measured two
ways, each kind's servers started once before measuring (:mod:`tests.bench._stdio_fleet`):

- ``procs``: 64 server processes, one stdio connection each, one caller each doing
  back-to-back calls (write one call, read its answer, write the next);
- ``pipe``: one server process, 64 calls in flight on its one connection (each answer read is
  followed by the next call). Ours runs at its defaults (``max_in_flight=64``): nothing is held.

The load generator is one thread of this process: an epoll loop over every connection, so it
costs little and the same for both kinds. Its CPU time per call and the share of the wall time
it was busy are reported with each figure: the servers, not it, should set the pace. Latency is
from the write of a call to the read of its answer; every answer is checked (its id, the
echoed text). Rounds alternate the kinds' order (the machine's drift falls on both alike);
each figure is the median over the rounds of each round's percentile.

    python -m tests.bench.bench_stdio_p99 [SECONDS] [ROUNDS] [CONNS]
"""

from __future__ import annotations

import os
import selectors
import statistics
import sys
import time
from typing import Any

import msgspec

from ._stdio_fleet import Fleet

_DECODE = msgspec.json.Decoder()


def _call_line() -> tuple[bytes, bytes]:
    from ._workload import CALL

    head, tail = CALL.split(b'"id":1,', 1)
    return head + b'"id":', b"," + tail + b"\n"


def closed_loop(conns: list[tuple[int, int]], window: int, seconds: float) -> dict[str, Any]:
    """Keep ``window`` calls in flight on each (write fd, read fd) for ``seconds``, then wait for
    the last answers. Returns latencies (ns, sorted) and the generator's CPU time."""
    head, tail = _call_line()
    sent: list[dict[int, int]] = [{} for _ in conns]
    pending = [b""] * len(conns)
    next_id = 1
    perf = time.perf_counter_ns

    def send(ci: int) -> None:
        nonlocal next_id
        rid = next_id
        next_id += 1
        sent[ci][rid] = perf()
        os.write(conns[ci][0], b"%s%d%s" % (head, rid, tail))  # fits: the window is far below a pipe's 64 KiB

    selector = selectors.DefaultSelector()
    for ci, (_, r) in enumerate(conns):
        os.set_blocking(r, False)
        selector.register(r, selectors.EVENT_READ, ci)
    latencies: list[int] = []
    cpu0, t0 = time.thread_time(), time.perf_counter()
    deadline = perf() + int(seconds * 1e9)
    try:
        for ci in range(len(conns)):
            for _ in range(window):
                send(ci)
        outstanding = len(conns) * window
        while outstanding:
            for key, _ in selector.select(30):
                ci = key.data
                data = os.read(key.fd, 1 << 16)
                if not data:
                    raise RuntimeError("a server closed its stdout")
                *lines, pending[ci] = (pending[ci] + data).split(b"\n")
                now = perf()
                for line in lines:
                    answer = _DECODE.decode(line)
                    latencies.append(now - sent[ci].pop(answer["id"]))
                    assert answer["result"]["content"][0]["text"] == "hello", answer
                    if now < deadline:
                        send(ci)
                    else:
                        outstanding -= 1
    finally:
        selector.close()
    wall = time.perf_counter() - t0
    latencies.sort()
    return {"latencies_ns": latencies, "wall": wall, "generator_cpu": time.thread_time() - cpu0}


def _summary(run: dict[str, Any], server_cpu: float) -> dict[str, Any]:
    lat = run["latencies_ns"]

    def pct(p: float) -> float:
        return float(lat[min(len(lat) - 1, max(0, round(p / 100 * len(lat) + 0.5) - 1))] / 1e6)

    calls = len(lat)
    return {"calls": calls, "seconds": run["wall"], "calls_per_s": calls / run["wall"], "p50_ms": pct(50),
            "p99_ms": pct(99), "max_ms": lat[-1] / 1e6, "server_cpu_us_per_call": server_cpu * 1e6 / calls,
            "generator_cpu_us_per_call": run["generator_cpu"] * 1e6 / calls,
            "generator_busy": run["generator_cpu"] / run["wall"]}


def measure(kinds: list[str], *, conns: int = 64, seconds: float = 2.0, rounds: int = 3, warmup: float = 0.5,
            progress: Any = None) -> dict[str, Any]:
    """``{"procs": {kind: figures}, "pipe": {kind: figures}}``; each kind's fleets start first."""
    say = progress or (lambda message: None)
    fleets: dict[tuple[str, str], Fleet] = {}
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {"procs": {k: [] for k in kinds}, "pipe": {k: [] for k in kinds}}
    shapes = {"procs": (conns, 1), "pipe": (1, conns)}  # (server processes, calls in flight on each)
    try:
        started = time.perf_counter()
        for kind in kinds:
            for shape, (procs, _) in shapes.items():
                fleets[shape, kind] = Fleet(kind, procs)
        for fleet in fleets.values():
            fleet.started()
        say(f"stdio p99: {len(fleets)} fleets ({', '.join(kinds)}: {conns} + 1 server processes each) started in "
            f"{time.perf_counter() - started:.1f} s")
        for (shape, _), fleet in fleets.items():
            closed_loop(fleet.conns, shapes[shape][1], warmup)
        for r in range(rounds):
            for kind in kinds if r % 2 == 0 else list(reversed(kinds)):
                for shape, (_, window) in shapes.items():
                    fleet = fleets[shape, kind]
                    cpu0 = fleet.cpu_seconds()
                    run = closed_loop(fleet.conns, window, seconds)
                    result = _summary(run, fleet.cpu_seconds() - cpu0)
                    runs[shape][kind].append(result)
                    say(f"stdio p99 {shape} {kind} round {r + 1}/{rounds}: p50 {result['p50_ms']:.2f} ms, "
                        f"p99 {result['p99_ms']:.2f} ms, {result['calls_per_s']:.0f} calls/s, "
                        f"generator busy {100 * result['generator_busy']:.0f}%")
    finally:
        for fleet in fleets.values():
            fleet.stop()
    out: dict[str, Any] = {}
    for shape, by_kind in runs.items():
        out[shape] = {}
        for kind, results in by_kind.items():
            out[shape][kind] = {key: statistics.median(x[key] for x in results) for key in results[0]}
            out[shape][kind].update(rounds=results, conns=conns)
    return out


def render(result: dict[str, Any]) -> str:
    lines = ["| shape | server | p50 ms | p99 ms | calls/s | server CPU us/call | generator CPU us/call (busy) |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for shape, by_kind in result.items():
        for kind, r in by_kind.items():
            lines.append(f"| {shape} | {kind} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} | {r['calls_per_s']:,.0f} | "
                         f"{r['server_cpu_us_per_call']:.0f} | {r['generator_cpu_us_per_call']:.1f} "
                         f"({100 * r['generator_busy']:.0f}%) |")
        if "ours" in by_kind and "sdk" in by_kind:
            o, s = by_kind["ours"], by_kind["sdk"]
            lines.append(f"| {shape} | ours/SDK | {o['p50_ms'] / s['p50_ms']:.2f}x | {o['p99_ms'] / s['p99_ms']:.2f}x | "
                         f"{o['calls_per_s'] / s['calls_per_s']:.2f}x | | |")
    return "\n".join(lines)


if __name__ == "__main__":
    SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    CONNS = int(sys.argv[3]) if len(sys.argv) > 3 else 64
    print(render(measure(["ours", "sdk"], conns=CONNS, seconds=SECONDS, rounds=ROUNDS,
                         progress=lambda m: print(m, file=sys.stderr, flush=True))))
