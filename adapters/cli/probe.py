"""``mcpwire probe URL`` (or ``-- COMMAND ARGS``): run the named checks against an MCP server
over Streamable HTTP or stdio (:mod:`mcpwire_adapters.testing.probe.runner`) and print a report; ``--json FILE`` and ``--junit FILE`` write
the machine-readable ones (``-`` is stdout); ``--strict`` also reports this project's conventions
beyond the official text (advice). Exit 0 when no check fails (warnings and advice do not count),
1 when any breaks a MUST, 3 when the server cannot be reached at all (no reply to server/discover),
4 on a bad command line. docs/probing.md.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

from .terminal import EXIT_OK, EXIT_USAGE, CliError, Terminal, trio_run
from ..testing.probe.runner import Finding, Tokens, json_report, junit_report, probe, probe_stdio, select, text_report

__all__ = ["add_probe_parser", "run_probe"]

EXIT_CHECK_FAILED = 1


def add_probe_parser(commands: Any) -> None:
    """Add ``probe`` to the ``mcpwire`` subcommands (``commands``: argparse's subparsers action)."""
    command = commands.add_parser("probe", help="check a server against the wire rules (pass / fail / n/a)")
    command.add_argument("url", metavar="URL", nargs="?", help="the MCP endpoint, e.g. http://127.0.0.1:8000/mcp "
                         "(with --stdio: the command that starts the server; none with --client)")
    command.add_argument("--stdio", action="store_true",
                         help="URL is a command (split as a shell would) starting a server that speaks stdio; "
                              "or give the command after --")
    command.add_argument("--json", metavar="FILE", dest="json_file", help="write the JSON report here (- for stdout)")
    command.add_argument("--junit", metavar="FILE", help="write a JUnit XML report here (- for stdout)")
    command.add_argument("--only", action="append", default=[], metavar="PATTERN",
                         help="run only the checks whose id matches (shell pattern, repeatable), e.g. 'envelope.*'")
    command.add_argument("--rate", type=float, default=10.0, metavar="N",
                         help="at most N requests per second (default 10; 0: no limit)")
    command.add_argument("--call-tools", action="store_true",
                         help="allow checks that call the server's tools (tools have side effects; off by default)")
    command.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS",
                         help="longest wait for one reply (default 10)")
    command.add_argument("--strict", action="store_true",
                         help="also report advice: this project's conventions beyond the official text (never a "
                              "failure: the exit status counts MUST failures only)")
    command.add_argument("-v", "--verbose", action="store_true", help="show the evidence of passing checks too")
    command.add_argument("--client", metavar="COMMAND",
                         help="probe an MCP client instead: COMMAND runs it, {url} replaced by the hostile server's "
                              "URL (with --stdio: {server} by the command that starts it); docs/probing-clients.md")
    command.add_argument("--replay", metavar="FILE", help="with --client: run one replay file (mcpwire fuzz --client)")
    command.add_argument("--revision", action="append", metavar="REVISION",
                         help="probe only this revision, negotiated or not (repeatable; default: every revision the "
                              "server negotiates), e.g. 2025-06-18")
    command.add_argument("--token", metavar="TOKEN", help="a bearer token sent with every request (a server that asks "
                         "for authorization)")
    command.add_argument("--insufficient-scope-token", metavar="TOKEN",
                         help="a valid token with too small a scope (the auth.insufficient-scope check)")
    command.add_argument("--wrong-audience-token", metavar="TOKEN",
                         help="a valid token issued for another resource (the auth.wrong-audience check)")


def _write(where: str, text: str, term: Terminal) -> None:
    if where == "-":
        term.out(text.rstrip("\n"))
    else:
        Path(where).write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")


def run_probe(args: argparse.Namespace, term: Terminal) -> int:
    if args.client is not None or args.replay:
        from .probe_client import run_client_probe

        if args.client is None:
            raise CliError("--replay runs a client's replay file: give the client with --client", EXIT_USAGE)
        return run_client_probe(args, term)
    if not args.url:
        raise CliError("probe needs an http(s):// URL, a command after --, or --client COMMAND", EXIT_USAGE)
    command = shlex.split(args.url) if args.stdio else None
    if args.stdio and not command:
        raise CliError("--stdio needs a command that starts the server", EXIT_USAGE)
    if not args.stdio and not args.url.startswith(("http://", "https://")):
        raise CliError(f"probe needs an http(s):// URL or a command after --, got {args.url!r}", EXIT_USAGE)
    if args.rate < 0:
        raise CliError("--rate must be 0 or more", EXIT_USAGE)
    checks = select(args.only)
    if not checks:
        raise CliError(f"no check matches {' '.join(args.only)!r}", EXIT_USAGE)

    async def go() -> list[Finding]:
        options = dict(rate=args.rate, call_tools=args.call_tools, timeout=args.timeout, strict=args.strict,
                       revisions=args.revision)
        if command:
            return await probe_stdio(command, checks, **options)
        return await probe(args.url, checks, **options, tokens=Tokens(args.token, args.insufficient_scope_token,
                                                                      args.wrong_audience_token))

    try:
        findings = trio_run(go)  # TransportError (no reply to server/discover at all): exit 3 in cli.run
    except ValueError as exc:  # a --revision that is none
        raise CliError(str(exc), EXIT_USAGE) from None
    text = text_report(args.url, findings, verbose=args.verbose)
    if args.json_file == "-" or args.junit == "-":
        sys.stderr.write(text)
    else:
        term.out(text.rstrip("\n"))
    if args.json_file:
        _write(args.json_file, json_report(args.url, findings), term)
    if args.junit:
        _write(args.junit, junit_report(args.url, findings), term)
    return EXIT_CHECK_FAILED if any(f.status == "fail" for f in findings) else EXIT_OK

