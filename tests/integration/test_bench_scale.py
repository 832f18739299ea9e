"""The scaling-out benchmark (``tests/bench/bench_scale.py``, ``run.py --scale``) still runs and
reports: a tiny run (1 and 2 processes, 50 requests each, 3 fan-out trials) with a real
redis-server, ``mcpwire serve --redis --workers N`` and, with the ``bench`` extra, the SDK under
``uvicorn --workers N``. Nothing here judges a timing: the load generator checks every answer,
and this checks that each server answered them all and that the report has its rows.
"""

from __future__ import annotations

import importlib.util

import pytest
from _redis import redis_binary

from tests.bench import bench_e2e, bench_scale

SDK = importlib.util.find_spec("mcp") is not None


def test_scale_benchmark_measures_each_server_and_the_fan_out(monkeypatch: pytest.MonkeyPatch) -> None:
    redis_binary()  # skips without redis-server
    monkeypatch.setattr(bench_e2e, "WRK", None)  # the Python generator, which checks every answer, even where wrk is
    result = bench_scale.measure(conns=2, requests=50, seconds=5.0, rounds=1, warmup=10, trials=3,
                                 processes=(1, 2), with_sdk=SDK)
    kinds = ["ours-1", "ours-2"] + (["sdk-1", "sdk-2"] if SDK else [])
    for kind in kinds:
        figures = result[kind]
        assert isinstance(figures, dict), figures  # a string: the server failed, and says why
        assert figures["requests"] == 50 and figures["errors"] == 0, figures
        assert len(figures["rounds"]) == 1
    fanout = result["fanout"]
    assert isinstance(fanout, dict), fanout
    assert fanout["cross"]["trials"] == 3 and fanout["local"]["trials"] == 3
    report = bench_scale.render(result, (1, 2))
    assert "| 2 |" in report and "across processes" in report and "failed" not in report
