"""The instruction benchmark (``tests/bench/bench_instructions.py``) still runs and reports.

Nothing here judges a timing or a count: the apps must answer the benchmark's call under
uvicorn's protocol with the same bytes (the benchmark refuses to time them otherwise), the
report must have its rows, and a count under valgrind (when installed) must be a plausible
positive number of instructions.
"""

from __future__ import annotations

import pytest

from tests.bench import bench_instructions


def test_both_apps_answer_alike_under_uvicorns_protocol(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench_instructions, "VALGRIND", None)
    result = bench_instructions.measure(rounds=1, n1=1, n2=2)
    timed = result["timed_ns"]
    assert set(timed) == {"uvicorn.raw", "uvicorn.ours", "wsgi.plain", "wsgi.ours"}
    assert all(figures["median_ns"] > 0 and figures["rounds"] == 1 for figures in timed.values())
    report = bench_instructions.render(result)
    assert "| AsgiApp |" in report and "| WsgiApp " in report and "valgrind is not installed" in report


def test_a_feed_keeps_one_connection_alive() -> None:
    variants, close = bench_instructions.uvicorn_variants()
    try:
        for variant in variants:
            assert variant.batch(3) > 0  # three more requests on the same keep-alive connection
    finally:
        close()


@pytest.mark.skipif(bench_instructions.VALGRIND is None, reason="valgrind is not installed (apt-get install valgrind)")
def test_a_count_under_valgrind() -> None:
    per_call = bench_instructions.count("floor.call", 20, 60)
    assert 1_000 < per_call < 1_000_000  # a decode and an encode: thousands of instructions, not a failed run
