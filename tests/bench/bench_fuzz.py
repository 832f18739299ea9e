"""The fuzzer's throughput (issue 15): cases per second of ``mcpwire fuzz`` against our
conformance fixture, over Streamable HTTP (a subprocess on 127.0.0.1) and over stdio (a
subprocess speaking NDJSON), with the same seed and no rate limit. A case over HTTP is one
request on a connection of its own plus the server/discover that shows the server alive; over
stdio, a barrier, the request and the server/discover that follows every message. Sequences and
shrinking count as cases too. Run through ``python -m tests.bench --fuzz`` (docs/performance.md).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import trio

from mcpwire_adapters.testing.fuzz.runner import FuzzReport, fuzz, fuzz_stdio

REPO = Path(__file__).resolve().parents[2]
FIXTURE = [sys.executable, str(REPO / "conformance" / "fixture.py")]


def _http(seconds: float, seed: int, tools: list[str]) -> FuzzReport:
    process = subprocess.Popen([*FIXTURE, "--port", "0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None and process.stdin is not None
    try:
        url = str(json.loads(process.stdout.readline())["url"])
        report: FuzzReport = trio.run(lambda: fuzz(url, max_examples=10**9, time_budget=seconds, seed=seed,
                                                   tools=tools, timeout=10))
        return report
    finally:
        process.stdin.close()
        process.wait(timeout=10)


def _stdio(seconds: float, seed: int, tools: list[str]) -> FuzzReport:
    report: FuzzReport = trio.run(lambda: fuzz_stdio([*FIXTURE, "--transport", "stdio"], max_examples=10**9,
                                                     time_budget=seconds, seed=seed, tools=tools, timeout=10))
    return report


def measure(seconds: float = 20.0, seed: int = 1, tools: tuple[str, ...] = ()) -> dict[str, Any]:
    """``{"http": {...}, "stdio": {...}}``: cases, seconds, cases/s and failures of each run."""
    out: dict[str, Any] = {}
    for name, run in (("http", _http), ("stdio", _stdio)):
        started = time.perf_counter()
        report = run(seconds, seed, list(tools))
        out[name] = {"cases": report.cases, "seconds": round(report.seconds, 2), "cases_per_s": round(report.rate, 1),
                     "failures": [f.problems[0] for f in report.failures],
                     "wall_seconds": round(time.perf_counter() - started, 2)}
    return out


def render(result: dict[str, Any], seconds: float) -> str:
    lines = [f"## Fuzzer throughput ({seconds:g} s per transport, conformance fixture)", "",
             "| transport | cases | seconds | cases/s | failures |", "|---|---:|---:|---:|---|"]
    for name, row in result.items():
        lines.append(f"| {name} | {row['cases']} | {row['seconds']} | {row['cases_per_s']} | "
                     f"{'; '.join(row['failures']) or 'none'} |")
    return "\n".join(lines)
