"""The probe's check of the initialize era's stdio framing (:data:`ERA_STDIO_CHECKS`), each
revision's Basic > Transports > stdio: messages are delimited by newlines and contain none, and
nothing but MCP messages is written to stdout. It asks for answers whose strings hold line
breaks (a method name and a ping id with a newline in them, escaped in the JSON), then judges
every line the server wrote on the revision's connection so far (the sender's transcript), so it
runs after the revision's other checks.
"""

from __future__ import annotations

import json

from ..era_rules import ERA_REVISIONS
from ..era_wire import request
from ..judge import jsonrpc_fault, problem
from ..rawwire import Exchange, Request
from ..verdict import NOT_APPLICABLE, Outcome, Problem
from .checks import STDIO, Check, Target
from .era_channel import Channel, lines_reply
from .era_checks import with_channel

__all__ = ["ERA_STDIO_CHECKS", "output_problems"]


def output_problems(target: Target, lines: list[bytes]) -> list[Problem]:
    """What is wrong with ``lines`` as a stdio server's output: a line that is not JSON (and,
    when it and the lines after it join into JSON, a message with embedded newlines), or JSON
    that is not a JSON-RPC message a server may send. Blank lines are let through."""
    problems: list[Problem] = []
    index = 0
    while index < len(lines):
        line = lines[index].strip()
        index += 1
        if not line:
            continue
        try:
            message = json.loads(line)
        except ValueError:
            joined = line
            for later in range(index, min(index + 64, len(lines))):
                joined += b"\n" + lines[later]
                try:
                    json.loads(joined)
                except ValueError:
                    continue
                problems.append(problem(target.rule("era.stdio-newlines"), f"a message spread over lines {index} to "
                                        f"{later + 1}: {joined[:100]!r}"))
                index = later + 1
                break
            else:
                problems.append(problem(target.rule("era.stdio-only-messages"), f"line {index} is not JSON: "
                                                                                f"{line[:100]!r}"))
            continue
        fault = jsonrpc_fault(message, server_requests=True)
        if fault is not None:
            problems.append(problem(target.rule("era.stdio-only-messages"), f"line {index} is not a JSON-RPC message "
                                                                            f"a server may send: {fault}"))
    return problems


async def _output(target: Target, opened: Channel, evidence: list[Exchange]) -> Outcome:
    if target.transcript is None:
        return Outcome(NOT_APPLICABLE, "no transcript of the connection", evidence)
    for message in (request("mcpwire/no\nsuch-method", "lines-1"), request("ping", "lines\n2")):
        evidence.extend((await opened.call(message)).exchanges)
    lines = list(target.transcript)
    evidence.append((Request("LINE", (), b"(every line the server wrote on this connection)"), lines_reply(lines), None))
    return Outcome.judged(output_problems(target, lines), evidence,
                          f"{len(lines)} lines read on the connection, each one message")


ERA_STDIO_CHECKS: tuple[Check, ...] = (
    Check("era.stdio-output", "every line the server writes is one MCP message", "basic/transports#stdio",
          "a method name and a ping id holding a newline; then every line read on the connection",
          steps=with_channel(_output), enforces=("era.stdio-newlines", "era.stdio-only-messages"),
          revisions=ERA_REVISIONS, transports=(STDIO,)),
)
