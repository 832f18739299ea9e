"""``pytest --mcp-target`` shows, for each failed check, what was sent and what came back: the
response's status, type and body, the half that says what went wrong (it used to print
``reply: None`` for every failure). Run as a subprocess against the stdio server of
``_probe_broken_stdio.py``, which answers every line with ``"id": null``.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

BROKEN_STDIO = [sys.executable, str(Path(__file__).with_name("_probe_broken_stdio.py"))]


def test_a_failed_check_shows_the_response_it_got(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider",
                           "--mcp-target", shlex.join(BROKEN_STDIO), "--mcp-rate", "0", "-k", "id-null-refused"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    out = done.stdout
    assert done.returncode == 1, out[-3000:]
    assert "envelope.id-null-refused" in out and "  FAIL: " in out, out[-3000:]
    assert not re.search(r"reply:\s+None", out), out[-3000:]
    replies = [line for line in out.splitlines() if line.lstrip().startswith("reply:")]
    assert replies, out[-3000:]
    # What the broken server answered to a server/discover with a null id, verbatim: a result for it.
    answer = '(application/x-ndjson) {"jsonrpc": "2.0", "id": null, "result": {"supportedVersions": ["2026-07-28"]'
    assert any(answer in line for line in replies), replies
    requests = [line for line in out.splitlines() if line.lstrip().startswith("request:")]
    assert requests and all("None" not in line for line in requests), requests
