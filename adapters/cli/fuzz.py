"""``mcpwire fuzz URL`` (or ``-- COMMAND ARGS``): fuzz an MCP server (:mod:`mcpwire_adapters.testing.fuzz.runner`)
and write each failure, shrunk, as a replay file with a curl script or a line file;
``mcpwire fuzz --replay FILE`` sends one again and judges it again. Exit 0 when nothing is found
(or a replay conforms now), 1 when a case fails (or a replay still fails), 3 when the server
cannot be reached at all, 4 on a bad command line. docs/fuzzing.md.
"""

from __future__ import annotations

import argparse
import random
import shlex
import time
from typing import Any

from .terminal import EXIT_OK, EXIT_USAGE, CliError, Terminal, clean, trio_run

__all__ = ["add_fuzz_parser", "run_fuzz"]

EXIT_FOUND = 1


def add_fuzz_parser(commands: Any) -> None:
    """Add ``fuzz`` to the ``mcpwire`` subcommands (``commands``: argparse's subparsers action)."""
    command = commands.add_parser("fuzz", help="fuzz a server: mutated and stateful traffic, shrunk replayable failures")
    command.add_argument("url", metavar="URL", nargs="?", help="the MCP endpoint, e.g. http://127.0.0.1:8000/mcp "
                         "(with --stdio: the command that starts the server; with --replay: replaces the file's target)")
    command.add_argument("--stdio", action="store_true",
                         help="URL is a command (split as a shell would) starting a server that speaks stdio; "
                              "or give the command after --")
    command.add_argument("--max-examples", type=int, default=200, metavar="N", help="at most N cases (default 200)")
    command.add_argument("--time-budget", type=float, metavar="SECONDS", help="stop after this long")
    command.add_argument("--seed", type=int, help="the random seed (default: a new one, printed)")
    command.add_argument("--database", metavar="DIR",
                         help="keep hypothesis' examples here, so failures found once are tried first next time")
    command.add_argument("--out", default="mcpwire-fuzz", metavar="DIR",
                         help="write the failures here (default ./mcpwire-fuzz, made only when one is found)")
    command.add_argument("--rate", type=float, default=0.0, metavar="N",
                         help="at most N requests per second (default 0: no limit)")
    command.add_argument("--tool", action="append", default=[], metavar="NAME",
                         help="call this tool with generated arguments (repeatable; tools have side effects: "
                              "none is called unless named)")
    command.add_argument("--all-tools", action="store_true", help="call every listed tool with generated arguments")
    command.add_argument("--no-sequences", action="store_true", help="single requests only, no stateful sequences")
    command.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS",
                         help="longest wait for one answer: past it the case fails as a hang (default 10)")
    command.add_argument("--replay", metavar="FILE", help="send a failure file again and check it again")
    command.add_argument("-q", "--quiet", action="store_true", help="no progress line")


class _Progress:
    """The progress line on stderr: redrawn four times a second on a terminal, else every 5 s."""

    def __init__(self, term: Terminal, total: int) -> None:
        self.term, self.total, self.shown = term, total, 0.0

    def __call__(self, cases: int, failures: int, seconds: float) -> None:
        now = time.monotonic()
        if now - self.shown < (0.25 if self.term.err_tty else 5.0):
            return
        self.shown = now
        rate = cases / seconds if seconds > 0 else 0.0
        self.term.progress(cases, None, f"cases, {rate:.1f}/s, {failures} failure{'s' * (failures != 1)}, {seconds:.0f} s")


def run_fuzz(args: argparse.Namespace, term: Terminal) -> int:
    try:
        from ..testing.fuzz.runner import fuzz, fuzz_stdio, replay  # hypothesis is an extra: imported only for this command
    except ImportError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None

    if args.replay:
        return _replay(args, term, replay)
    if not args.url:
        raise CliError("fuzz needs an http(s):// URL, a command after --, or --replay FILE", EXIT_USAGE)
    command = shlex.split(args.url) if args.stdio else None
    if args.stdio and not command:
        raise CliError("--stdio needs a command that starts the server", EXIT_USAGE)
    if not args.stdio and not args.url.startswith(("http://", "https://")):
        raise CliError(f"fuzz needs an http(s):// URL or a command after --, got {args.url!r}", EXIT_USAGE)
    if args.rate < 0 or args.max_examples < 1 or (args.time_budget is not None and args.time_budget <= 0):
        raise CliError("--rate must be 0 or more, --max-examples and --time-budget more than 0", EXIT_USAGE)
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    options: dict[str, Any] = dict(max_examples=args.max_examples, time_budget=args.time_budget, seed=seed,
                                   database=args.database, out_dir=args.out, rate=args.rate, tools=args.tool,
                                   all_tools=args.all_tools, timeout=args.timeout, sequences=not args.no_sequences,
                                   progress=None if args.quiet else _Progress(term, args.max_examples))
    term.say(f"mcpwire fuzz {clean(args.url)}: seed {seed}, up to {args.max_examples} cases"
             + (f" or {args.time_budget:g} s" if args.time_budget else "")
             + (f", calling {', '.join(args.tool) or 'every tool'}" if args.tool or args.all_tools
                else ", no tool called (--tool NAME or --all-tools to call some)"))

    async def go() -> Any:
        if command:
            return await fuzz_stdio(command, **options)
        return await fuzz(args.url, **options)

    try:
        report = trio_run(go)  # TransportError (no answer to server/discover at all): exit 3 in cli.run
    except ValueError as exc:  # a --tool the server does not list
        raise CliError(str(exc), EXIT_USAGE) from None
    term.end_progress()
    for number, failure in enumerate(report.failures, 1):
        term.out(f"FAIL {number}: {clean(failure.problems[0])}" + (" (flaky)" if failure.flaky else ""))
        for problem in failure.problems[1:]:
            term.out(f"      {clean(problem)}")
        for step in failure.subject:
            term.out(f"      > {clean(step.request.method)} {clean(step.label)}: {clean(step.request.body[:200])}")
        if failure.path is not None:
            term.out(f"      replay: mcpwire fuzz --replay {shlex.quote(str(failure.path))}")
    term.out(f"{report.cases} cases in {report.seconds:.1f} s ({report.rate:.1f}/s), seed {seed}: "
             f"{len(report.failures)} failure{'s' * (len(report.failures) != 1)}")
    return EXIT_FOUND if report.failures else EXIT_OK


def _replay(args: argparse.Namespace, term: Terminal, replay: Any) -> int:
    target = args.url if args.url else None
    try:
        result = trio_run(lambda: replay(args.replay, timeout=args.timeout, target=target))
    except (OSError, ValueError, KeyError) as exc:
        raise CliError(f"cannot replay {args.replay!r}: {exc}", EXIT_USAGE) from None
    for step, sent, problems in result.steps:
        reply = sent[1]
        shown = f"HTTP {reply.status}" if reply is not None and reply.status else ("answered" if reply else "no answer")
        term.out(f"{'FAIL' if problems else 'ok  '} {clean(step.request.method)} {clean(step.label)} -> {shown}")
        for problem in problems:
            term.out(f"      {clean(problem)}")
    term.out("reproduced: the target still fails" if result.reproduced else "not reproduced: the target conforms now")
    return EXIT_FOUND if result.reproduced else EXIT_OK
