"""The distribution as ``python -m build`` makes it for PyPI, built once per test session and
shared by the tests that install it (``tests/integration/test_packaging.py``,
``tests/integration/test_extras_install.py``): :func:`built_dists`.

The source is copied first, without what a checkout accumulates (``.venv``, caches, and a stale
``build/`` folder, which setuptools would reuse, so that files deleted from the source could
still reach the wheel); the sdist is built from that copy and the wheel from the sdist. Needs
PyPI (or pip's cache) for the build backend, in build's isolated environment.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

__all__ = ["REPO", "built_dists"]

REPO = Path(__file__).resolve().parents[1]

_NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis", "results"
)
# One build per session (keyed by the session's temporary root): the test modules that need the
# wheel share it, whichever of them runs first.
_BUILT: dict[Path, dict[str, Path]] = {}


def built_dists(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``{"sdist": ..., "wheel": ...}``, built at the first call of the session."""
    key = tmp_path_factory.getbasetemp()
    if key not in _BUILT:
        tmp = tmp_path_factory.mktemp("dists")
        source = tmp / "src"
        shutil.copytree(REPO, source, ignore=_NOT_SOURCE, symlinks=True)
        result = subprocess.run([sys.executable, "-m", "build", "--outdir", str(tmp / "dist"), str(source)],
                                cwd=tmp, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, f"python -m build failed:\n{result.stdout}\n{result.stderr}"
        [sdist] = (tmp / "dist").glob("mcpwire-*.tar.gz")
        [wheel] = (tmp / "dist").glob("mcpwire-*.whl")
        _BUILT[key] = {"sdist": sdist, "wheel": wheel}
    return _BUILT[key]
