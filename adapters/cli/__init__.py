"""The ``mcpwire`` command: ``commands`` (the parser and the client commands), ``terminal`` (its input and
output), and one module per command group: ``serve``, ``workers``, ``keys``, ``oauth``, ``redis``,
``probe``, ``fuzz``. May import every other package; nothing imports it.

:func:`main` is the console entry point every install gets (``mcpwire = mcpwire_adapters.cli:main``),
while the commands run on trio and h11 (the ``trio`` extra): it imports them only when called, and
where an optional dependency a command needs is missing it prints one line naming the extra to
install (exit 4, a usage error) instead of a traceback. ``--version`` needs nothing.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .commands import CliError, load_app

__all__ = ["CliError", "load_app", "main"]

EXIT_USAGE = 4
"""``terminal.EXIT_USAGE``, the exit code of a bad command line (terminal imports trio: not here)."""

# The commands (build_parser); the first word of the command line that is one names the command.
_COMMANDS = frozenset({"serve", "keys", "inspect", "call", "read", "prompt", "complete", "listen", "probe", "fuzz"})
# An optional dependency of the command line -> the extra that installs it. trio, h11 and anyio
# are what every command runs on: the `trio` extra, or for probe and fuzz the `probe` extra.
_EXTRAS = {"trio": "trio", "h11": "trio", "anyio": "trio", "hypothesis": "probe", "joserfc": "oauth",
           "cryptography": "oauth", "redis": "redis", "jsonschema": "jsonschema"}
_PROBE_COMMANDS = frozenset({"probe", "fuzz"})


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mcpwire`` command; returns the exit code."""
    words = list(sys.argv[1:] if argv is None else argv)
    try:
        from .commands import main as run_command
    except ModuleNotFoundError as exc:
        if _missing_extra(exc, words) is None:
            raise
        if "--version" in words[:1]:  # argparse's --version: needs nothing installed
            import mcpwire

            print(f"mcpwire {mcpwire.__version__}")
            return 0
        return _say_missing(exc, words)
    try:
        return run_command(words)
    except ModuleNotFoundError as exc:
        if _missing_extra(exc, words) is None:
            raise
        return _say_missing(exc, words)


def _command(words: Sequence[str]) -> str | None:
    """The command the words name (the first word not an option), if it is one."""
    first = next((word for word in words if not word.startswith("-")), None)
    return first if first in _COMMANDS else None


def _missing_extra(exc: ModuleNotFoundError, words: Sequence[str]) -> str | None:
    """The extra that installs the module ``exc`` found missing, or None when it is not one of
    ours or is in fact installed (then the error is something else, shown as it is)."""
    top = (exc.name or "").partition(".")[0]
    extra = _EXTRAS.get(top)
    if extra is None:
        return None
    try:
        if importlib.util.find_spec(top) is not None:
            return None
    except (ImportError, ValueError):
        pass
    return "probe" if extra == "trio" and _command(words) in _PROBE_COMMANDS else extra


def _say_missing(exc: ModuleNotFoundError, words: Sequence[str]) -> int:
    command = _command(words)
    extra = _missing_extra(exc, words)
    who = f"mcpwire {command}" if command else "mcpwire"
    sys.stderr.write(f"error: {who} needs the '{extra}' extra: pip install 'mcpwire[{extra}]'\n")
    return EXIT_USAGE


def __getattr__(name: str) -> Any:
    """``CliError`` and ``load_app``, imported from the commands when first asked for."""
    if name in ("CliError", "load_app"):
        from . import commands

        return getattr(commands, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
