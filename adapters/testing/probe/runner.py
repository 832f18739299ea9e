"""``mcpwire probe``: run the named checks of the MCP 2026-07-28 rules against any MCP server over
Streamable HTTP or stdio, and report each as pass, fail (a MUST of the official text is broken),
warn (a SHOULD), advice (only this project's stricter convention; with ``strict``) or not
applicable, with the sentence of the rule, its page, and the evidence. This module owns the
public entry points (:func:`probe`, :func:`probe_stdio`, :func:`select`) and the reports
(:func:`text_report`, :func:`json_report`, :func:`junit_report`); the checks are rows of
:data:`mcpwire_adapters.testing.probe.table.CHECKS`.

    url = "http://127.0.0.1:8000/mcp"
    findings = await probe(url, rate=10.0)
    print(text_report(url, findings))

Every request is sent raw over its own connection (:mod:`mcpwire_adapters.testing.rawwire`),
so a check can send what our client never would: a cut-short body, a boolean id, a missing
header. Only the named URL is contacted, at most ``rate`` requests per second, and tools are
called only with ``call_tools=True`` (tools have side effects); without it the checks that need
a tool call are not applicable. Each reply is judged by :mod:`mcpwire_adapters.testing.judge`;
each check gives a :data:`Finding`. Runs under trio and asyncio alike.
"""

from __future__ import annotations

import fnmatch
import json
import shlex
from collections.abc import Sequence
from typing import Any, TypeAlias
from urllib.parse import urlsplit
from xml.etree import ElementTree

from ...client.session import TransportError
from .. import verdict
from ..judge import judge, rule
from ..rawwire import Exchange, Send, first_result, http_sender, is_loopback_host, meta, paced, rpc
from ..rawwire_stdio import stdio_sender
from ..verdict import ADVICE, FAIL, NOT_APPLICABLE, PASS, STATUSES, WARN, Outcome, Problem
from .checks import Check, Target, cite_url
from .table import CHECKS

__all__ = ["CHECKS", "Check", "Finding", "evidence_json", "json_report", "junit_report", "probe", "probe_stdio", "select",
           "text_report"]

EVIDENCE_LIMIT = 2000  # bytes of each body kept in a finding's evidence

Finding: TypeAlias = verdict.Finding[Check]
"""What the probe found about one check: ``subject`` is the :class:`Check`."""


def select(patterns: Sequence[str]) -> tuple[Check, ...]:
    """The checks whose id matches one of the shell-style ``patterns`` (all when none given)."""
    if not patterns:
        return CHECKS
    return tuple(c for c in CHECKS if any(fnmatch.fnmatchcase(c.id, p) for p in patterns))


async def probe(url: str, checks: Sequence[Check] = CHECKS, *, rate: float = 10.0, call_tools: bool = False,
                timeout: float = 10.0, strict: bool = False) -> list[Finding]:
    """Run ``checks`` against the MCP endpoint ``url``; one :data:`Finding` per check, in order.

    First a well-formed server/discover (and tools/list, if tools are advertised) tells the
    checks what the server offers; then each check sends its request(s) and judges the reply.
    A check whose connection fails, or that times out after ``timeout`` seconds, fails;
    :class:`TransportError` when that first server/discover gets no reply at all. Without
    ``strict`` the advice (this project's conventions beyond the official text) is withheld."""
    parts = urlsplit(url)
    target = Target(url=url, host=parts.hostname or "", loopback=is_loopback_host(parts.hostname or ""),
                    call_tools=call_tools)
    return await _run(target, http_sender(url, rate, timeout), checks, f"cannot reach {url}", strict)


async def probe_stdio(command: Sequence[str], checks: Sequence[Check] = CHECKS, *, rate: float = 10.0,
                      call_tools: bool = False, timeout: float = 10.0, strict: bool = False) -> list[Finding]:
    """Run ``checks`` against a server started as ``command`` that speaks NDJSON on stdio; the
    HTTP-only checks are not applicable. The process is stopped (stdin closed) at the end."""
    target = Target(url=shlex.join(command), host="", loopback=False, call_tools=call_tools, stdio=True)
    async with stdio_sender(command, timeout=timeout) as raw_send:
        return await _run(target, paced(raw_send, rate), checks, f"no answer from {shlex.join(command)}", strict)


async def _run(target: Target, send: Send, checks: Sequence[Check], unreachable: str, strict: bool) -> list[Finding]:
    first = await send(rpc("server/discover", rpc_id="probe-discover"))
    if first[1] is None:
        raise TransportError(f"{unreachable}: {first[2]}")
    target.discover = first_result(first[1])
    if target.capability("tools") is not None:
        listed = first_result((await send(rpc("tools/list", {"_meta": meta()}, rpc_id="probe-tools")))[1])
        tools = (listed or {}).get("tools")
        target.tools = [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else None
    return [(await _finding(check, target, send)).shown(strict=strict) for check in checks]


async def _finding(check: Check, target: Target, send: Send) -> Finding:
    if check.http_only and target.stdio:
        return Finding.of(check, Outcome(NOT_APPLICABLE, "a rule of HTTP; stdio has no statuses or headers"))
    if check.needs_tool_calls and not target.call_tools:
        return Finding.of(check, Outcome(NOT_APPLICABLE, "needs a tool call: pass --call-tools to allow it"))
    if check.steps is not None:
        return Finding.of(check, await check.steps(target, send))
    assert check.build is not None and check.expect is not None
    built = check.build(target)
    if isinstance(built, str):
        return Finding.of(check, Outcome(NOT_APPLICABLE, built))
    sent = await send(built)
    if sent[1] is None:
        return Finding.of(check, Outcome.broken(rule("jsonrpc.reply"), f"no reply: {sent[2]}", (sent,)))
    return Finding.judged(check, judge(check.expect, built, sent[1], target), (sent,))


def _safe(text: Any) -> str:
    """``text`` with control characters escaped: a server's bytes must not drive the terminal."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))


# -- reports ------------------------------------------------------------------------------------------
def _cut(data: bytes) -> str:
    text = data[:EVIDENCE_LIMIT].decode("utf-8", "replace")
    return text + (f"... ({len(data) - EVIDENCE_LIMIT} more bytes)" if len(data) > EVIDENCE_LIMIT else "")


def evidence_json(exchange_: Exchange) -> dict[str, Any]:
    request, reply, error = exchange_
    out: dict[str, Any] = {"request": {"method": request.method, "headers": [list(h) for h in request.headers],
                                       "body": _cut(request.body)}}
    if reply is not None:
        out["response"] = {"status": reply.status, "headers": [list(h) for h in reply.headers],
                           "body": _cut(reply.body)}
    if error is not None:
        out["error"] = error
    return out


def problem_json(problem: str) -> dict[str, Any]:
    """A problem for the JSON report: its text, and its rule's strength, id, source, sentence and page."""
    if not isinstance(problem, Problem):
        return {"problem": problem, "strength": "MUST"}
    r = problem.rule
    return {"problem": str(problem), "strength": r.strength, "rule": r.id, "source": r.source, "quote": r.quote,
            "url": r.url}


def json_report(url: str, findings: Sequence[Finding]) -> str:
    """The findings as one JSON document: url, counts, and per check its id, citation, status,
    detail, problems (each with its rule's strength, sentence and page), how many advice
    problems were withheld, and evidence (bodies cut at 2,000 bytes)."""
    counts = {s: sum(f.status == s for f in findings) for s in STATUSES}
    return json.dumps({"target": url, "protocolVersion": "2026-07-28", "counts": counts, "checks": [
        {"id": f.subject.id, "title": f.subject.title, "cites": cite_url(f.subject.cites) or f.subject.cites,
         "sends": f.subject.sends, "status": f.status, "detail": f.detail,
         "problems": [problem_json(p) for p in f.problems], "withheld": f.withheld,
         "evidence": [evidence_json(e) for e in f.evidence]}
        for f in findings]}, indent=2)


def junit_report(url: str, findings: Sequence[Finding]) -> str:
    """JUnit XML for CI: one testcase per check; fail (a MUST broken) is a failure, not
    applicable is skipped; a warning or advice passes, its problems in the testcase's output."""
    suite = ElementTree.Element("testsuite", name="mcpwire probe", tests=str(len(findings)),
                                failures=str(sum(f.status == FAIL for f in findings)),
                                skipped=str(sum(f.status == NOT_APPLICABLE for f in findings)))
    ElementTree.SubElement(ElementTree.SubElement(suite, "properties"), "property", name="target", value=url)
    for finding in findings:
        case = ElementTree.SubElement(suite, "testcase", classname=f"mcpwire.probe.{finding.subject.id.split('.')[0]}",
                                      name=finding.subject.id)
        if finding.status == FAIL:
            failure = ElementTree.SubElement(case, "failure", message=finding.detail)
            failure.text = json.dumps([evidence_json(e) for e in finding.evidence], indent=2)
        elif finding.status == NOT_APPLICABLE:
            ElementTree.SubElement(case, "skipped", message=finding.detail)
        elif finding.status in (WARN, ADVICE):
            ElementTree.SubElement(case, "system-out").text = "\n".join(_problem_lines(finding.problems, ""))
    return ElementTree.tostring(suite, encoding="unicode", xml_declaration=True)


_MARKS = {PASS: "PASS", FAIL: "FAIL", WARN: "WARN", ADVICE: "NOTE", NOT_APPLICABLE: "N/A "}


def _problem_lines(problems: Sequence[str], indent: str) -> list[str]:
    """Each problem with its strength; after the problems of one rule, its sentence and page."""
    lines = []
    by_rule: dict[str, list[str]] = {}
    for problem in problems:
        by_rule.setdefault(problem.rule.id if isinstance(problem, Problem) else "", []).append(problem)
    for grouped in by_rule.values():
        for problem in grouped:
            strength = f"{problem.rule.strength}: " if isinstance(problem, Problem) else ""
            lines.append(f"{indent}{strength}{_safe(problem)}")
        first = grouped[0]
        if isinstance(first, Problem):
            r = first.rule
            lines.append(f"{indent}  {r.source}: \"{_safe(r.quote)}\"" + (f" {r.url}" if r.url else ""))
    return lines


def text_report(url: str, findings: Sequence[Finding], *, verbose: bool = False) -> str:
    """A human report: one line per check; for each check that did not pass, each problem with
    the strength and the sentence of the rule it breaks (and the page), then what was sent and
    received. The last line counts them; exit status is non-zero only on failures (MUST)."""
    lines = [f"mcpwire probe {_safe(url)}", ""]
    for f in findings:
        lines.append(f"{_MARKS[f.status]}  {f.subject.id:40} {f.subject.title}")
        if f.status == NOT_APPLICABLE:
            lines.append(f"      {_safe(f.detail)}")
        elif f.status != PASS:
            lines += _problem_lines(f.problems or [f.detail], "      ")
        if f.status in (FAIL, WARN, ADVICE) or verbose:
            for request, reply, error in f.evidence:
                lines.append(f"      > {request.method} {' '.join(f'{k}: {v};' for k, v in request.headers)}")
                if request.body:
                    lines.append(f"      > {_safe(_cut(request.body)[:300])}")
                if reply is not None:
                    kind = reply.header("content-type") or "no content-type"
                    lines.append(f"      < {reply.status} ({_safe(kind)}) {_safe(_cut(reply.body)[:300])}")
                else:
                    lines.append(f"      < (no reply: {_safe(error)})")
    counts = {s: sum(f.status == s for f in findings) for s in STATUSES}
    summary = (f"{counts[PASS]} passed, {counts[FAIL]} failed (MUST), {counts[WARN]} warned (SHOULD), "
               + (f"{counts[ADVICE]} with advice, " if counts[ADVICE] else "")
               + f"{counts[NOT_APPLICABLE]} not applicable")
    withheld = sum(f.withheld > 0 for f in findings)
    lines += ["", summary]
    if withheld:
        lines.append(f"advice on {withheld} check{'s' * (withheld != 1)} withheld (this project's conventions beyond "
                     "the official text): --strict shows it")
    return "\n".join(lines) + "\n"
