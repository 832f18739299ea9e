"""Benchmarks of mcpwire against the physical floor (msgspec alone) and the official Python SDK.

Not part of the test suite (no ``test_*.py`` here, so pytest never collects it). Run it with::

    .venv/bin/python tests/bench/run.py [--quick] [--json out.json] [--no-sdk] [--profile]

(or ``python -m tests.bench`` from the repository root). See docs/performance.md.
"""
