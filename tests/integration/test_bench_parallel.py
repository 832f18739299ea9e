"""The parallel-calls benchmark (``tests/bench/bench_parallel.py``) still runs and reports.

A tiny run: a 5 ms tool, 2 concurrent calls, one try, 0.2 s of throughput, our client (on trio
and on asyncio) and (with the ``bench`` extra) the SDK's, against the benchmark's server on 127.0.0.1. Nothing here judges
a timing: the run checks every answer itself, and this checks that each client measured and
that the report has its lines.
"""

from __future__ import annotations

import importlib.util

import pytest

from tests.bench import bench_parallel, run

SDK = importlib.util.find_spec("mcp") is not None


@pytest.mark.parametrize("kinds", [["ours", "ours-asyncio"], pytest.param(["ours", "sdk"], marks=pytest.mark.skipif(
    not SDK, reason="the SDK is not installed (pip install -e '.[bench]')"))], ids=["ours-both-loops", "ours-and-sdk"])
def test_parallel_benchmark_measures_each_client(kinds: list[str]) -> None:
    result = bench_parallel.measure(kinds, n=2, sleep_ms=5, repeats=1, seconds=0.2, rounds=1)
    assert result["n"] == 2
    for kind in kinds:
        figures = result[kind]
        assert isinstance(figures, dict), figures  # a string: the client failed, and says why
        assert figures["one_ms"] >= 5 and figures["n_ms"] >= 5  # each call waited for the tool
        assert figures["calls_per_s"] > 0 and len(figures["rounds"]) == 1
    rows = run.build_rows({}, {}, {}, {}, {}, "sdk" in kinds, result)
    measured = [r["measurement"] for r in rows if r["section"] == "one client"]
    assert any("2 concurrent tools/call" in m for m in measured)
    assert any("(HttpClient, asyncio)" in m for m in measured) == ("ours-asyncio" in kinds)
    assert not any("FAILED" in m for m in measured)
    assert any("against the SDK's client" in m for m in measured) == ("sdk" in kinds)
