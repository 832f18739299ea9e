"""``pytest --mcp-target`` shows, for each failed check, what was sent and what came back: the
response's status, type and body, the half that says what went wrong (it used to print
``reply: None`` for every failure), and the rule broken; a check that only warns passes. Run as
a subprocess against the stdio server of ``_probe_broken_stdio.py``, which answers every line
with a result (``"id": null`` but for server/discover).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

BROKEN_STDIO = [sys.executable, str(Path(__file__).with_name("_probe_broken_stdio.py"))]


def _pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider",
                           "--mcp-target", shlex.join(BROKEN_STDIO), "--mcp-rate", "0", *args],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)


def test_a_failed_check_shows_the_response_it_got(tmp_path: Path) -> None:
    done = _pytest(tmp_path, "-k", "method.unknown")
    out = done.stdout
    assert done.returncode == 1, out[-3000:]
    assert "method.unknown" in out and "  FAIL (method.unknown): " in out, out[-3000:]
    assert not re.search(r"reply:\s+None", out), out[-3000:]
    replies = [line for line in out.splitlines() if line.lstrip().startswith("reply:")]
    assert replies, out[-3000:]
    # What the broken server answered to an unknown method, verbatim: a result with a null id.
    answer = '(application/x-ndjson) {"jsonrpc": "2.0", "id": null, "result": {}}'
    assert any(answer in line for line in replies), replies
    requests = [line for line in out.splitlines() if line.lstrip().startswith("request:")]
    assert requests and all("None" not in line for line in requests), requests
    # The rule each problem breaks: its strength, source and sentence.
    assert '  MUST (MCP 2026-07-28): "Result responses MUST include the same ID' in out, out[-3000:]


def test_a_warning_or_advice_passes_with_a_warning(tmp_path: Path) -> None:
    """A check that only breaks this project's convention passes, silently without
    --mcp-strict, with a ProbeWarning with it; only a MUST fails a test."""
    quiet = _pytest(tmp_path, "-k", "id-null-refused")
    assert quiet.returncode == 0 and "1 passed" in quiet.stdout and "ProbeWarning" not in quiet.stdout, quiet.stdout
    strict = _pytest(tmp_path, "-k", "id-null-refused", "--mcp-strict")
    assert strict.returncode == 0 and "1 warning" in strict.stdout, strict.stdout[-3000:]
    assert "ProbeWarning: mcp_probe[envelope.id-null-refused]: a result, expected error -32600" in strict.stdout
