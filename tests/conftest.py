"""Shared test configuration: hypothesis profiles, and the repository root on ``sys.path`` (for
the ``fuzz`` package of property strategies and harnesses).

Profiles (``fuzz/README.md``): ``ci``, selected by default, is derandomized (the same examples
on every run, so CI is reproducible) with modest example counts and no per-example deadline
(the machine is shared; the fuzz suites bound time per example themselves). ``long`` runs many
more examples, randomized: ``HYPOTHESIS_PROFILE=long pytest tests/test_fuzz_*.py``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

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
