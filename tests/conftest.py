"""Shared test configuration: hypothesis profiles, and the repository root on ``sys.path`` (for
the ``fuzz`` package of property strategies and harnesses).

Profiles (``fuzz/README.md``): ``ci``, selected by default, is derandomized (the same examples
on every run, so CI is reproducible) with modest example counts and no per-example deadline
(the machine is shared; the fuzz suites bound time per example themselves). ``long`` runs many
more examples, randomized: ``HYPOTHESIS_PROFILE=long pytest tests/test_fuzz_*.py``.

Test order (pytest-randomly, in the ``dev`` extra): every run shuffles the test files, and the
tests within each file, from a seed printed after collection ("test order: ... seed=N"), so a
test that leans on another's side effects (module state, a shared fixture, an import, an
environment variable) fails somewhere instead of passing by luck. To reproduce a run's order:
``pytest -p randomly --randomly-seed=N`` (``-p randomly`` changes nothing when the plugin is
installed, and fails loudly when it is not); to run in file order: ``pytest -p no:randomly``.
Every test must also pass alone: ``pytest tests/test_x.py::test_y``.

pytest-randomly also reseeds Python's ``random`` module before each test; hypothesis keeps its
own seeding. Under ``ci`` (``derandomize=True``) each property test draws the same examples
whatever the order and seed: its seed is a hash of the test function. Under ``long`` the
examples vary from run to run; a failure prints its reproduction blob (``print_blob``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _lines import fixture_served
from _redis import RedisServer
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

settings.register_profile("ci", derandomize=True, max_examples=100, deadline=None, print_blob=True)
settings.register_profile(
    "long", max_examples=5000, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_report_collectionfinish(config: pytest.Config) -> list[str]:
    """The seed of a shuffled run, shown even under ``-q`` (which hides pytest-randomly's own
    report header), so that any run, CI's included, can be replayed in its order."""
    seed = getattr(config.option, "randomly_seed", None)
    if not config.pluginmanager.has_plugin("randomly") or not isinstance(seed, int):
        return []
    if not config.getoption("randomly_reorganize", True):
        return [f"test order: file order (random reseeded with {seed})"]
    return [f"test order: shuffled by pytest-randomly, seed={seed}; replay with "
            f"`pytest -p randomly --randomly-seed={seed}`, file order with `-p no:randomly`"]


@pytest.fixture(params=["trio", "asyncio"])
def backend(request: pytest.FixtureRequest) -> str:
    """The event loop a client-driver test body runs on (``tests/_backends.py``)."""
    return str(request.param)


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A real ``redis-server`` on a free port of 127.0.0.1, no persistence, stopped after the
    test (``tests/_redis.py``); the test is skipped when ``redis-server`` is not installed."""
    server = RedisServer(tmp_path / "redis")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def fixture_url() -> Iterator[str]:
    """The conformance fixture over HTTP (``tests/_lines.py``), served once per test module."""
    with fixture_served() as url:
        yield url
