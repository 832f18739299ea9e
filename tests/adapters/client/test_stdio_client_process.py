"""How :class:`StdioClient` starts and ends its server process, on trio and on asyncio
(``tests/_backends.py``): the environment it gets (safe by default), where its stderr goes, and
a process that does not exit when its stdin closes, killed after ``exit_timeout``. The
"servers" here are short Python scripts: these checks need no MCP exchange."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from mcpwire_adapters.client.stdio import DEFAULT_ENV_KEYS, StdioClient, default_environment

from _backends import run

DUMP_ENV = "import json, os, sys; open(sys.argv[1], 'w').write(json.dumps(dict(os.environ)))"


def test_the_server_gets_a_safe_environment_plus_env(backend: str, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPWIRE_TEST_SECRET", "do not pass")
    seen: dict[str, dict[str, str]] = {}

    async def main() -> None:
        for inherit in (False, True):
            out = tmp_path / f"env-{inherit}.json"
            command = [sys.executable, "-c", DUMP_ENV, str(out)]
            async with StdioClient(command, env={"MCPWIRE_TEST_GIVEN": "1"}, inherit_env=inherit) as c:
                pass
            assert c.returncode == 0
            seen[str(inherit)] = json.loads(out.read_text())

    run(main, backend)
    safe = seen["False"]
    assert "MCPWIRE_TEST_SECRET" not in safe and safe["MCPWIRE_TEST_GIVEN"] == "1"
    assert safe["PATH"] == os.environ["PATH"]
    # Python may add a variable or two of its own (LC_CTYPE on some systems); nothing of ours else.
    assert set(default_environment()) <= set(safe) and set(default_environment()) <= set(DEFAULT_ENV_KEYS)
    assert not {k for k in safe if k in os.environ and k not in DEFAULT_ENV_KEYS and k != "LC_CTYPE"}
    everything = seen["True"]
    assert everything["MCPWIRE_TEST_SECRET"] == "do not pass" and everything["MCPWIRE_TEST_GIVEN"] == "1"


def test_stderr_is_passed_to_the_process_as_is(backend: str, tmp_path: Path) -> None:
    log = tmp_path / "stderr.txt"

    async def main() -> None:
        with log.open("wb") as sink:
            command = [sys.executable, "-c", "import sys; sys.stderr.write('diagnostics here')"]
            async with StdioClient(command, stderr=sink.fileno()) as c:
                pass
        assert c.returncode == 0

    run(main, backend)
    assert log.read_text() == "diagnostics here"


def test_a_server_that_does_not_exit_is_killed_after_exit_timeout(backend: str) -> None:
    stubborn = "import sys, time; sys.stdin.read(); time.sleep(60)"  # ignores the end of its stdin

    async def main() -> None:
        async with StdioClient([sys.executable, "-c", stubborn], exit_timeout=0.5) as c:
            left = time.monotonic()
        took = time.monotonic() - left
        assert c.returncode is not None and c.returncode < 0  # killed by a signal, not exited
        assert 0.4 < took < 10, took

    run(main, backend)
