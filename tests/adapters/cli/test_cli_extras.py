"""The ``mcpwire`` command where the extras it needs are not installed.

Every install gets the command (``mcpwire_adapters.cli:main``), but it runs on trio and h11:
``pip install 'mcpwire[client]'`` has no trio, a bare ``pip install mcpwire`` not even h11. There
the command says, in one line and exit 4 (a usage error), which extra to install, instead of a
traceback. Each case runs in a fresh interpreter where ``sys.modules[name] = None`` makes
``import name`` fail as it does when the package is not installed, both through the console
script's entry point and through ``python -m mcpwire_adapters.cli``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import mcpwire

REPO = Path(__file__).resolve().parents[3]
CLIENT_EXTRA = ("trio",)  # pip install 'mcpwire[client]': anyio and h11, no trio
BARE = ("trio", "h11", "anyio")  # pip install mcpwire: msgspec alone


def run_without(blocked: tuple[str, ...], *args: str, via_module: bool = False) -> subprocess.CompletedProcess[str]:
    block = "".join(f"sys.modules[{name!r}] = None; " for name in blocked)
    if via_module:
        start = "import runpy; runpy.run_module('mcpwire_adapters.cli', run_name='__main__', alter_sys=True)"
    else:  # what the installed `mcpwire` script does
        start = "from mcpwire_adapters.cli import main; sys.exit(main())"
    code = f"import sys; {block}sys.argv = ['mcpwire', *{list(args)!r}]\n{start}"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=str(REPO))


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 4, (done.returncode, done.stderr)
    assert done.stdout == "", done.stdout
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.mark.parametrize("blocked", [CLIENT_EXTRA, BARE], ids=["client-extra", "bare"])
@pytest.mark.parametrize("via_module", [False, True], ids=["script", "python-m"])
def test_serve_names_the_trio_extra(blocked: tuple[str, ...], via_module: bool) -> None:
    done = run_without(blocked, "serve", "x:y", via_module=via_module)
    assert one_line(done) == "error: mcpwire serve needs the 'trio' extra: pip install 'mcpwire[trio]'"


@pytest.mark.parametrize("blocked", [CLIENT_EXTRA, BARE], ids=["client-extra", "bare"])
def test_client_commands_name_the_trio_extra(blocked: tuple[str, ...]) -> None:
    done = run_without(blocked, "call", "http://127.0.0.1:1/mcp", "echo", '{"text": "hi"}')
    assert one_line(done) == "error: mcpwire call needs the 'trio' extra: pip install 'mcpwire[trio]'"
    done = run_without(blocked, "inspect", "--stdio", "python server.py")
    assert one_line(done) == "error: mcpwire inspect needs the 'trio' extra: pip install 'mcpwire[trio]'"


def test_probe_and_fuzz_name_the_probe_extra() -> None:
    done = run_without(BARE, "probe", "http://127.0.0.1:1/mcp")
    assert one_line(done) == "error: mcpwire probe needs the 'probe' extra: pip install 'mcpwire[probe]'"
    done = run_without(CLIENT_EXTRA, "fuzz", "--", "python", "server.py")
    assert one_line(done) == "error: mcpwire fuzz needs the 'probe' extra: pip install 'mcpwire[probe]'"


def test_help_without_the_extra_says_what_to_install_and_version_still_answers() -> None:
    """``--help`` needs the parser, which lives with the commands (on trio): it names the extra
    like any command; ``--version`` needs nothing."""
    for args in (("--help",), ()):
        done = run_without(BARE, *args)
        assert one_line(done) == "error: mcpwire needs the 'trio' extra: pip install 'mcpwire[trio]'"
    done = run_without(BARE, "--version")
    assert done.returncode == 0 and done.stdout == f"mcpwire {mcpwire.__version__}\n", (done.stdout, done.stderr)


def test_with_the_extras_installed_nothing_changes() -> None:
    done = run_without((), "--version")
    assert done.returncode == 0 and done.stdout == f"mcpwire {mcpwire.__version__}\n"
    done = run_without((), "serve", "no_such_module_for_mcpwire:app")
    assert done.returncode == 4 and "cannot import 'no_such_module_for_mcpwire'" in done.stderr, done.stderr
    assert "extra" not in done.stderr


def test_the_usage_exit_code_is_the_terminals() -> None:
    from mcpwire_adapters import cli
    from mcpwire_adapters.cli.terminal import EXIT_USAGE

    assert cli.EXIT_USAGE == EXIT_USAGE == 4
