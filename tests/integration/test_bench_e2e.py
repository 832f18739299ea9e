"""The end-to-end benchmark's load generators (``tests/bench/bench_e2e.py``) still run: the
Python generator, which checks every answer, and wrk (where installed) with its Lua script, each
against our trio server on 127.0.0.1. Nothing here judges a timing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.bench import bench_e2e


@pytest.fixture(scope="module")
def server() -> Iterator[bench_e2e.ServerProcess]:
    process = bench_e2e.ServerProcess("ours")
    yield process
    process.stop()


def test_the_python_generator_checks_every_answer(server: bench_e2e.ServerProcess) -> None:
    result = bench_e2e.run_load(server.port, 2, 50, 10.0, check=True)
    assert result["requests"] == 50 and result["errors"] == 0, result
    assert 0 < result["p50_ms"] <= result["p99_ms"]


@pytest.mark.skipif(bench_e2e.WRK is None, reason="wrk is not installed (apt-get install wrk)")
def test_wrk_sends_the_same_call_and_counts_no_error(server: bench_e2e.ServerProcess) -> None:
    result = bench_e2e.run_load(server.port, 2, 50, 1.0)
    assert result["generator"] == "wrk"
    assert result["requests"] > 0 and result["errors"] == 0, result  # a refused call is a non-2xx: an error
    assert 0 < result["p50_ms"] <= result["p99_ms"]



@pytest.mark.parametrize("kind", ["raw-asgi-fast", "raw-asgi-fast-busy"])
def test_the_raw_asgi_apps_give_every_answer(kind: str) -> None:
    """The ASGI baseline and its calibration kind (the same app spinning 1 µs more per request)
    answer every call as the Python generator checks it."""
    process = bench_e2e.ServerProcess(kind)
    try:
        result = bench_e2e.run_load(process.port, 2, 50, 10.0, check=True)
    finally:
        process.stop()
    assert result["requests"] == 50 and result["errors"] == 0, result
