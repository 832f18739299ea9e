"""Replays every seed of the atheris corpora and every minimized finding through the harness's
own ``test_one_input``, without atheris, in the ordinary test run (fuzz/README.md).

Seeds must pass. A finding file is named ``<bug id>-<what>``; while the bug is listed in
``fuzz/findings.py`` its replay is an ``xfail(strict=True)``, afterwards an ordinary test.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from fuzz.findings import KNOWN

FUZZ = Path(__file__).resolve().parent.parent / "fuzz"
HARNESSES = ("http", "ndjson", "sse", "client")


def cases() -> list[object]:
    out: list[object] = []
    for harness in HARNESSES:
        for kind in ("corpus", "findings"):
            folder = FUZZ / kind / harness
            for path in sorted(folder.iterdir()) if folder.is_dir() else []:
                bug = path.name.split("-", 1)[0]
                marks = [pytest.mark.xfail(strict=True, reason=f"BUG {bug}: see fuzz/README.md")] if (
                    kind == "findings" and bug in KNOWN) else []
                out.append(pytest.param(harness, path, id=f"{harness}/{kind}/{path.name}", marks=marks))
    return out


@pytest.mark.parametrize(("harness", "path"), cases())
def test_replay(harness: str, path: Path) -> None:
    module = importlib.import_module(f"fuzz.atheris_{harness}")
    module.test_one_input(path.read_bytes())


def test_every_harness_has_seeds() -> None:
    for harness in HARNESSES:
        assert len(list((FUZZ / "corpus" / harness).iterdir())) >= 3, harness
