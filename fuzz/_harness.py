"""What the four atheris harnesses share: importing mcpwire under instrumentation, and main().

Each harness module defines ``test_one_input(data: bytes) -> None``, which raises only when an
invariant breaks. Without atheris installed the module still imports (instrumentation is then a
no-op), so ``tests/test_fuzz_corpus.py`` replays every corpus file and every finding through the
same function in the ordinary test run.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

try:
    import atheris
except ImportError:  # the property suites and corpus replay do not need it
    atheris = None


@contextlib.contextmanager
def instrumented(enabled: bool) -> Iterator[None]:
    """Import mcpwire with coverage instrumentation when ``enabled`` (the harness runs as a
    script) and atheris is installed; a plain import otherwise (replay under pytest)."""
    if not enabled or atheris is None or "mcpwire" in sys.modules:
        yield
        return
    with atheris.instrument_imports(include=["mcpwire"]):
        yield


def main(test_one_input: Callable[[bytes], None]) -> None:
    """Run libFuzzer: ``python fuzz/atheris_x.py fuzz/corpus/x -max_total_time=600``."""
    if atheris is None:
        raise SystemExit("atheris is not installed: pip install -e '.[fuzz]'")
    from fuzz.findings import tolerating

    atheris.Setup(sys.argv, tolerating(test_one_input))
    atheris.Fuzz()
