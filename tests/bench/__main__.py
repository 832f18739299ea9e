"""``python -m tests.bench``: the same as ``python tests/bench/run.py``."""

from tests.bench.run import main

raise SystemExit(main())
