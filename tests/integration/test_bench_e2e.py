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


@pytest.mark.parametrize("kind", ["wsgi", "wsgi-plain"])
def test_the_wsgi_kinds_give_every_answer_under_gunicorn(kind: str) -> None:
    """WsgiApp and the plain WSGI function it is measured against (the same gunicorn gthread
    settings) answer every call as the Python generator checks it: the same status and echo."""
    process = bench_e2e.ServerProcess(kind)
    try:
        result = bench_e2e.run_load(process.port, 2, 50, 10.0, check=True)
    finally:
        process.stop()
    assert result["requests"] == 50 and result["errors"] == 0, result


def test_the_wsgi_rows_give_the_share_of_the_servers_ceiling() -> None:
    from tests.bench import run

    def measured(*rates: float) -> dict[str, object]:
        """What ``bench_e2e.measure`` gives for a kind: its median round, with every round."""
        rounds = [{"rps": rate, "p50_ms": 1.0, "p99_ms": 2.0, "server_cpu_us_per_request": 100.0, "conns": 8}
                  for rate in rates]
        return {**sorted(rounds, key=lambda r: r["rps"])[len(rounds) // 2], "rounds": rounds}

    e2e = {"wsgi-plain": measured(4000.0, 4400.0, 4200.0), "wsgi": measured(2000.0, 1980.0, 2100.0)}
    rows = {row["key"]: row for row in run.build_rows({}, {}, {}, {}, e2e, with_sdk=False)}
    share = rows["e2e.wsgi.rps@plain"]
    assert share["ratio"] == pytest.approx(2000.0 / 4200.0) and share["against"] == "x plain WSGI"
    assert "per round 0.45, 0.50, 0.50" in share["measurement"]  # each round's pair, from the same run
    assert rows["e2e.wsgi.rps"]["value"] == 2000.0 and rows["e2e.wsgi-plain.rps"]["value"] == 4200.0
