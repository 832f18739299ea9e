"""The README's demo command runs: the demo server and client talk and the process exits 0."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_demo_runs_every_step() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo.py")], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for expected in (
        "server: mcpwire-demo listening on http://127.0.0.1:",
        '"supportedVersions": ["2026-07-28"]',
        "progress 3.0/3.0: step 3",
        "server asks (name): What is your name?",
        "Hello, Ada!",
        "JSON-RPC error -32602 Unknown tool: nope",
        "done: every step above went over HTTP on 127.0.0.1.",
    ):
        assert expected in out, out
