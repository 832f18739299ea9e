"""A mistyped option is reported by the subcommand it was given to, with that subcommand's usage
(the one listing the options the user meant), exit 4; a mistake before any subcommand keeps the
top-level usage. Run in-process: the parser exits before any I/O."""

from __future__ import annotations

import pytest

from mcpwire_adapters.cli.commands import main


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 4
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    return captured.err.splitlines()


@pytest.mark.parametrize(("argv", "command", "unknown"), [
    (["call", "http://127.0.0.1:9/mcp", "add", "--bogus"], "call", "--bogus"),
    (["call", "http://127.0.0.1:9/mcp", "add", "{}", "--jsn"], "call", "--jsn"),
    (["inspect", "http://127.0.0.1:9/mcp", "--bogus"], "inspect", "--bogus"),
    (["serve", "app.py", "--prot", "8000"], "serve", "--prot 8000"),
    (["keys", "show", "keys.json", "--bogus"], "keys", "--bogus"),
    (["probe", "http://127.0.0.1:9/mcp", "--bogus"], "probe", "--bogus"),
    (["--bogus", "call", "http://127.0.0.1:9/mcp", "add"], "call", "--bogus"),
])
def test_an_unknown_option_gets_the_subcommands_usage(argv: list[str], command: str, unknown: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    lines = _refused(argv, capsys)
    assert lines[0].startswith(f"usage: mcpwire {command} "), lines
    assert lines[-1] == f"mcpwire {command}: error: unrecognized arguments: {unknown}", lines


def test_the_subcommands_usage_lists_its_options(capsys: pytest.CaptureFixture[str]) -> None:
    usage = " ".join(_refused(["call", "http://127.0.0.1:9/mcp", "add", "--bogus"], capsys)[:-1])
    for option in ("--log-level", "--no-input", "--root", "URL TOOL [JSON]"):
        assert option in usage, usage


def test_without_a_subcommand_the_top_level_usage_stays(capsys: pytest.CaptureFixture[str]) -> None:
    lines = _refused(["frobnicate"], capsys)
    assert lines[0] == "usage: mcpwire [-h] [--version] COMMAND ..."
    assert lines[-1].startswith("mcpwire: error: argument COMMAND: invalid choice: 'frobnicate'")
