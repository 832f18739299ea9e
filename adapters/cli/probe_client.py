"""``mcpwire probe --client 'COMMAND ... {url}'`` and ``mcpwire fuzz --client ...``: run an MCP
client through the hostile server's scenarios (:mod:`mcpwire_adapters.testing.client_probe`)
and report what it broke; ``--stdio`` puts the hostile server behind ``{server}`` instead, for the
client to start; ``--replay FILE`` runs one replay file again. Exit 0 when no scenario breaks a
MUST (or a replay conforms now), 1 when one does, 4 on a bad command line. docs/probing-clients.md.
"""

from __future__ import annotations

import argparse
import random
import shlex
import sys
import time
from pathlib import Path

from .terminal import EXIT_OK, EXIT_USAGE, CliError, Terminal, clean, trio_run

__all__ = ["run_client_fuzz", "run_client_probe"]

EXIT_FOUND = 1
_MARKS = {"fail": "FAIL", "warn": "WARN", "advice": "NOTE"}


def _command(args: argparse.Namespace) -> str:
    command = str(args.client).strip()
    placeholder = "{server}" if args.stdio else "{url}"
    if not command:
        raise CliError("--client needs the command that runs the client", EXIT_USAGE)
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise CliError(f"--client: {exc}", EXIT_USAGE) from None
    if not any(placeholder in word for word in words):
        raise CliError(f"--client: the command must contain {placeholder} (where the hostile server goes"
                       + (", as the client's stdio server command)" if args.stdio else ": its URL)"), EXIT_USAGE)
    if args.url:
        raise CliError(f"--client takes no URL ({args.url!r}): the client is the target", EXIT_USAGE)
    if getattr(args, "junit", None):
        raise CliError("--junit reports the checks of a server; with --client, use --json", EXIT_USAGE)
    return command


def _write(where: str, text: str, term: Terminal) -> None:
    if where == "-":
        term.out(text.rstrip("\n"))
    else:
        Path(where).write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")


def run_client_probe(args: argparse.Namespace, term: Terminal) -> int:
    """``mcpwire probe --client``: every scenario (``--only``), or one replay file (``--replay``)."""
    from ..testing.client_probe.report import json_report, text_report
    from ..testing.client_probe.runner import probe_client, read_replay, run_scenario
    from ..testing.client_probe.scenarios import select_scenarios
    from ..testing.verdict import Finding

    command = _command(args)
    if args.timeout <= 0:
        raise CliError("--timeout must be more than 0", EXIT_USAGE)
    if args.replay:
        try:
            replay = read_replay(args.replay)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CliError(f"cannot replay {args.replay!r}: {exc}", EXIT_USAGE) from None
        if (replay.transport == "stdio") != bool(args.stdio):
            raise CliError(f"{args.replay} is a {replay.transport} case: run it " + (
                "with --stdio and {server}" if replay.transport == "stdio" else "without --stdio, with {url}"), EXIT_USAGE)
        for mutation in replay.mutations:
            term.say(f"replaying {replay.scenario.name}: {clean(mutation)}")
        run, outcome = trio_run(lambda: run_scenario(command, replay.scenario, stdio=args.stdio, timeout=args.timeout,
                                                     answers=replay.answers, own=replay.own))
        findings = [Finding.of(run, outcome).shown(strict=args.strict)]
    else:
        scenarios = select_scenarios(args.only, stdio=args.stdio)
        if not scenarios:
            raise CliError(f"no scenario matches {' '.join(args.only)!r}", EXIT_USAGE)

        def progress(done: int, total: int, scenario: object) -> None:
            if not getattr(args, "quiet", False):
                term.progress(done, total, f"scenario {getattr(scenario, 'name', '')}")

        findings = trio_run(lambda: probe_client(command, scenarios, stdio=args.stdio, timeout=args.timeout,
                                                 strict=args.strict, progress=progress))
        term.end_progress()
    text = text_report(command, findings, verbose=args.verbose)
    if args.json_file == "-":
        sys.stderr.write(text)
    else:
        term.out(text.rstrip("\n"))
    if args.json_file:
        _write(args.json_file, json_report(command, findings), term)
    if args.replay:
        failed = findings[0].status == "fail"
        term.out("reproduced: the client still breaks a MUST" if failed else "not reproduced: no MUST is broken now")
    return EXIT_FOUND if any(f.status == "fail" for f in findings) else EXIT_OK


def run_client_fuzz(args: argparse.Namespace, term: Terminal) -> int:
    """``mcpwire fuzz --client``: mutated answers, shrunk findings, replay files in ``--out``."""
    if args.replay:  # the same replay as the probe's
        args.only, args.verbose, args.json_file = [], False, None
        return run_client_probe(args, term)
    try:
        from ..testing.client_probe.fuzzing import fuzz_client
    except ImportError as exc:  # hypothesis is an extra
        raise CliError(str(exc), EXIT_USAGE) from None
    from ..testing.client_probe.report import process_line
    from ..testing.client_probe.scenarios import select_scenarios
    from ..testing.verdict import Problem

    command = _command(args)
    if args.max_examples < 1 or (args.time_budget is not None and args.time_budget <= 0) or args.timeout <= 0:
        raise CliError("--max-examples, --time-budget and --timeout must be more than 0", EXIT_USAGE)
    scenarios = select_scenarios(args.only, stdio=args.stdio)
    if not scenarios:
        raise CliError(f"no scenario matches {' '.join(args.only)!r}", EXIT_USAGE)
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    term.say(f"mcpwire fuzz --client {clean(command)}: seed {seed}, {len(scenarios)} scenarios, up to "
             f"{args.max_examples} cases" + (f" or {args.time_budget:g} s" if args.time_budget else ""))
    shown = [0.0]

    def progress(cases: int, found: int, seconds: float) -> None:
        if args.quiet or time.monotonic() - shown[0] < (0.25 if term.err_tty else 5.0):
            return
        shown[0] = time.monotonic()
        term.progress(cases, args.max_examples, f"cases, {found} found, {seconds:.0f} s")

    report = fuzz_client(command, scenarios, stdio=args.stdio, timeout=args.timeout, max_examples=args.max_examples,
                         time_budget=args.time_budget, seed=seed, out_dir=args.out, strict=args.strict,
                         progress=progress)
    term.end_progress()
    for number, (finding, mutations) in enumerate(zip(report.findings, report.mutations, strict=True), 1):
        first = finding.problems[0]
        term.out(f"{_MARKS.get(finding.status, 'FAIL')} {number}: {finding.subject.id}: {clean(first)}"
                 + (" (flaky)" if finding.flaky else ""))
        for problem in finding.problems[1:4]:
            term.out(f"      {clean(problem)}")
        if isinstance(first, Problem):
            term.out(f"      {first.rule.strength} ({first.rule.source}): \"{clean(first.rule.quote)}\""
                     + (f" {first.rule.url}" if first.rule.url else ""))
        for mutation in mutations or ["(the scenario as it is, unmutated)"]:
            term.out(f"      mutation: {clean(mutation)}")
        term.out(f"      {process_line(finding.subject)}")
        if finding.path is not None:
            term.out(f"      replay: mcpwire probe --client {shlex.quote(command)}" + (" --stdio" if args.stdio else "")
                     + f" --replay {shlex.quote(str(finding.path))}")
    failed = len(report.failures)
    term.out(f"{report.cases} cases in {report.seconds:.1f} s, seed {seed}: {failed} failure{'s' * (failed != 1)}"
             + "".join(f", {count} {word}" for count, word in (
                 (sum(f.status == "warn" for f in report.findings), "warned (SHOULD)"),
                 (sum(f.status == "advice" for f in report.findings), "with advice")) if count))
    return EXIT_FOUND if failed else EXIT_OK
