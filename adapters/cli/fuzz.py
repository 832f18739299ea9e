"""``mcpwire fuzz URL`` (or ``-- COMMAND ARGS``): fuzz an MCP server (:mod:`mcpwire_adapters.testing.fuzz.runner`)
and write each finding, shrunk, as a replay file with a curl script or a line file;
``mcpwire fuzz --replay FILE`` sends one again and judges it again. Each finding says the
strength of the rule it breaks (FAIL: a MUST; WARN: a SHOULD; NOTE: advice, with ``--strict``);
requests past ``--timeout`` are listed as slow, not failures. Exit 0 when no case breaks a MUST
(or a replay conforms now), 1 when one does (or a replay still fails), 3 when the server cannot
be reached at all, 4 on a bad command line. Over HTTP: Streamable HTTP, or the HTTP+SSE transport
of 2024-11-05 (``--revision 2024-11-05``, or found as the probe finds it). docs/fuzzing.md.
"""

from __future__ import annotations

import argparse
import random
import shlex
import time
from typing import TYPE_CHECKING, Any

from .terminal import EXIT_OK, EXIT_USAGE, CliError, Terminal, clean, trio_run

if TYPE_CHECKING:  # hypothesis is an extra: the runner is imported only when the command runs
    from ..testing.fuzz.runner import FuzzReport

__all__ = ["add_fuzz_parser", "run_fuzz"]

EXIT_FOUND = 1


def add_fuzz_parser(commands: Any) -> None:
    """Add ``fuzz`` to the ``mcpwire`` subcommands (``commands``: argparse's subparsers action)."""
    command = commands.add_parser("fuzz", help="fuzz a server: mutated and stateful traffic, shrunk replayable failures")
    command.add_argument("url", metavar="URL", nargs="?", help="the MCP endpoint, e.g. http://127.0.0.1:8000/mcp, or "
                         "the SSE endpoint of an HTTP+SSE server (with --stdio: the command that starts the server; "
                         "with --replay: replaces the file's target)")
    command.add_argument("--stdio", action="store_true",
                         help="URL is a command (split as a shell would) starting a server that speaks stdio; "
                              "or give the command after --")
    command.add_argument("--max-examples", type=int, default=200, metavar="N", help="at most N cases (default 200)")
    command.add_argument("--time-budget", "--budget", type=float, metavar="SECONDS", help="stop after this long")
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
                         help="longest wait for one answer: past it the request is reported as slow, which is no "
                              "failure (default 10)")
    command.add_argument("--strict", action="store_true",
                         help="also report advice: this project's conventions beyond the official text (never a "
                              "failure: the exit status counts MUST failures only)")
    command.add_argument("--replay", metavar="FILE", help="send a failure file again and check it again")
    command.add_argument("--revision", metavar="REVISION",
                         help="fuzz this revision (an initialize-era one: a session is opened first; 2024-11-05 over "
                              "HTTP: its HTTP+SSE transport, URL the SSE endpoint); default: 2026-07-28 if served, else "
                              "the newest the server negotiates, else HTTP+SSE when a GET of URL opens it")
    command.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    command.add_argument("--client", metavar="COMMAND",
                         help="fuzz an MCP client instead: COMMAND runs it, {url} replaced by the hostile server's URL "
                              "(with --stdio: {server} by the command that starts it); docs/probing-clients.md")
    command.add_argument("--only", action="append", default=[], metavar="PATTERN",
                         help="with --client: fuzz only the scenarios whose name matches (shell pattern, repeatable)")


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
    if args.client is not None:
        from .probe_client import run_client_fuzz

        return run_client_fuzz(args, term)
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
                                   progress=None if args.quiet else _Progress(term, args.max_examples),
                                   strict=args.strict, revision=args.revision)
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
    _report(report, term, stdio=bool(command))
    failed = len(report.failures)
    term.out(f"{report.cases} cases in {report.seconds:.1f} s ({report.rate:.1f}/s), seed {seed}: "
             f"{failed} failure{'s' * (failed != 1)}"
             + "".join(f", {count} {word}" for count, word in (
                 (sum(f.status == "warn" for f in report.findings), "warned (SHOULD)"),
                 (sum(f.status == "advice" for f in report.findings), "with advice"),
                 (sum(s.count for s in report.slow), "slow")) if count))
    return EXIT_FOUND if failed else EXIT_OK


_MARKS = {"fail": "FAIL", "warn": "WARN", "advice": "NOTE"}


def _report(report: FuzzReport, term: Terminal, *, stdio: bool = False) -> None:
    """Each finding with the strength and sentence of the rule it breaks, its steps (each a
    line over stdio, else its HTTP method) and its replay command; then the slow requests; then
    what "flaky" means, if any finding is."""
    from ..testing.fuzz.runner import FLAKY
    from ..testing.verdict import Problem

    for number, finding in enumerate(report.findings, 1):
        first = finding.problems[0]
        term.out(f"{_MARKS.get(finding.status, 'FAIL')} {number}: {clean(first)}" + (" (flaky)" if finding.flaky else ""))
        for problem in finding.problems[1:]:
            term.out(f"      {clean(problem)}")
        if isinstance(first, Problem):
            term.out(f"      {first.rule.strength} ({first.rule.source}): \"{clean(first.rule.quote)}\""
                     + (f" {first.rule.url}" if first.rule.url else ""))
        for step in finding.subject:
            term.out(_step(step, stdio))
        if finding.path is not None:
            term.out(f"      replay: mcpwire fuzz --replay {shlex.quote(str(finding.path))}")
    for slow in report.slow:
        term.out(f"SLOW: no answer within {slow.budget:g} s (--timeout) to {slow.count} request"
                 f"{'s' * (slow.count != 1)}: {clean(slow.kind)}")
        term.out(_step(slow.step, stdio))
    if report.slow:
        term.out("      slow is not a failure: no rule bounds how long a request may take (a tool may run that long)")
    if any(f.flaky for f in report.findings):
        term.out(f"(flaky) {FLAKY}")


def _step(step: Any, stdio: bool) -> str:
    """One step sent, as the report shows it: how it went (a line, or its HTTP method), the
    case's label and the start of its bytes."""
    return f"      > {'LINE' if stdio else clean(step.request.method)} {clean(step.label)}: {clean(step.request.body[:200])}"


def _replay(args: argparse.Namespace, term: Terminal, replay: Any) -> int:
    target = args.url if args.url else None
    try:
        result = trio_run(lambda: replay(args.replay, timeout=args.timeout, target=target))
    except (OSError, ValueError, KeyError) as exc:
        raise CliError(f"cannot replay {args.replay!r}: {exc}", EXIT_USAGE) from None
    from ..testing.verdict import status_of

    for step, sent, problems in result.steps:
        reply = sent[1]
        shown = f"HTTP {reply.status}" if reply is not None and reply.status else ("answered" if reply else "no answer")
        post = getattr(reply, "post", None)  # HTTP+SSE: the POST's status, and the answer on the stream
        if post is not None:
            shown = f"HTTP {post.status}, " + ("answered on the SSE stream" if reply is not None and reply.body
                                               else "nothing on the SSE stream")
        mark = _MARKS.get(status_of(problems), "ok  ")
        term.out(f"{mark} {clean(step.request.method)} {clean(step.label)} -> {shown}")
        for problem in problems:
            term.out(f"      {clean(problem)}")
    if result.failed:
        term.out("reproduced: the target still fails")
    elif result.reproduced:
        term.out("reproduced, as a warning or advice (no MUST broken)")
    else:
        term.out("not reproduced: the target conforms now")
    return EXIT_FOUND if result.failed else EXIT_OK
