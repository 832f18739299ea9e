"""``mcpwire probe``: run the named checks against any MCP server over Streamable HTTP, the
HTTP+SSE transport of 2024-11-05, or stdio, in every revision it negotiates (2026-07-28 and the
initialize era: 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05), and report each as pass, fail
(a MUST of the official text of that revision is broken), warn (a SHOULD), advice (only this
project's stricter convention; with ``strict``) or not applicable, with the sentence of the
rule, its page, and the evidence. This module owns the public entry points (:func:`probe`,
:func:`probe_stdio`, :func:`select`) and the reports (:func:`text_report`, :func:`json_report`,
:func:`junit_report`); the checks are rows of :data:`mcpwire_adapters.testing.probe.table.CHECKS`.

    url = "http://127.0.0.1:8000/mcp"
    findings = await probe(url, rate=10.0)
    print(text_report(url, findings))

First the probe asks what the server speaks (:mod:`mcpwire_adapters.testing.probe.dialect`):
``server/discover``, then ``initialize`` naming each initialize-era revision, then, if every POST
is refused, the HTTP+SSE transport; over stdio, a process per revision. Then each check runs in
each negotiated revision whose text states its rule (``revisions`` narrows them, or names one
to probe whatever was negotiated), and the findings say which revision each ran in
(:attr:`Findings.negotiated`; the report links that revision's pages).

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
from collections.abc import Iterable, Sequence
from typing import Any, TypeAlias
from urllib.parse import urlsplit
from xml.etree import ElementTree

from ...client.session import TransportError
from .. import verdict
from ..era_rules import ERA_REVISIONS, LEGACY, METADATA_REVISIONS, SESSION_REVISIONS
from ..era_wire import initialize, notification, response_of
from ..judge import judge, rule
from ..rawwire import (VERSION, Exchange, Request, Send, first_result, http_sender, is_loopback_host, meta, paced,
                       rpc)
from ..rawwire_stdio import discover_sentinel, ping_sentinel, stdio_sender
from ..verdict import ADVICE, FAIL, NOT_APPLICABLE, PASS, STATUSES, WARN, Outcome, Problem
from .checks import HTTP_SSE, STDIO, STREAMABLE_HTTP, Check, Target, Tokens
from .dialect import Negotiated, negotiate_http, pages_of
from .table import CHECKS

__all__ = ["CHECKS", "REVISIONS", "Check", "Finding", "Findings", "Tokens", "evidence_json", "json_report", "junit_report", "probe",
           "probe_stdio", "select", "text_report"]

EVIDENCE_LIMIT = 2000  # bytes of each body kept in a finding's evidence
REVISIONS = (VERSION, *ERA_REVISIONS)  # newest first

Finding: TypeAlias = verdict.Finding[Check]
"""What the probe found about one check in one revision: ``subject`` is the :class:`Check`
(its ``revision`` the one it ran in; ``key`` says both)."""


class Findings(list[Finding]):
    """The findings of a run, in order, and what the server ``negotiated`` (None: not known)."""

    def __init__(self, findings: Iterable[Finding] = (), negotiated: Negotiated | None = None) -> None:
        super().__init__(findings)
        self.negotiated = negotiated


def select(patterns: Sequence[str]) -> tuple[Check, ...]:
    """The checks whose id matches one of the shell-style ``patterns`` (all when none given)."""
    if not patterns:
        return CHECKS
    return tuple(c for c in CHECKS if any(fnmatch.fnmatchcase(c.id, p) for p in patterns))


def _revisions(asked: Sequence[str] | None) -> list[str] | None:
    if asked is None:
        return None
    unknown = [r for r in asked if r not in REVISIONS]
    if unknown:
        raise ValueError(f"unknown revision {', '.join(unknown)}: one of {', '.join(REVISIONS)}")
    return [r for r in REVISIONS if r in asked]


def authorized(send: Send, token: str) -> Send:
    """``send``, with ``Authorization: Bearer token`` on every request that names none."""
    async def with_token(request: Request) -> Exchange:
        if any(k.lower() == "authorization" for k, _ in request.headers):
            return await send(request)
        return await send(Request(request.method, request.headers + (("Authorization", f"Bearer {token}"),),
                                  request.body, request.rpc_id, request.first_event_only, request.head_only,
                                  request.answered))
    return with_token


async def probe(url: str, checks: Sequence[Check] = CHECKS, *, rate: float = 10.0, call_tools: bool = False,
                timeout: float = 10.0, strict: bool = False, revisions: Sequence[str] | None = None,
                tokens: Tokens | None = None) -> Findings:
    """Run ``checks`` against the MCP endpoint ``url``, in each revision it negotiates (or in
    ``revisions``); one :data:`Finding` per check and revision, in order.

    First what the server speaks is asked (:func:`~mcpwire_adapters.testing.probe.dialect.negotiate_http`);
    a check whose connection fails, or that times out after ``timeout`` seconds, fails;
    :class:`TransportError` when the first server/discover gets no reply at all. Without
    ``strict`` the advice (this project's conventions beyond the official text) is withheld.
    ``tokens``: bearer tokens for a server that asks for authorization (the access token goes
    with every request but the auth checks' own). ``ValueError`` for a revision that is none."""
    wanted = _revisions(revisions)
    tokens = tokens or Tokens()
    parts = urlsplit(url)
    raw = http_sender(url, rate, timeout)
    send = authorized(raw, tokens.access) if tokens.access else raw
    negotiated = await negotiate_http(send, url, timeout=timeout, rate=rate,
                                      headers=(("Authorization", f"Bearer {tokens.access}"),) if tokens.access else ())
    if tokens.access and negotiated.challenge is None:  # does it ask for one at all? (the auth checks need to know)
        asked = await raw(Request("POST", (("Content-Type", "application/json"), ("Accept", "application/json, "
                                  "text/event-stream")), json.dumps(initialize(SESSION_REVISIONS[0])).encode()))
        negotiated.challenge = asked if asked[1] is not None and asked[1].status == 401 else None
    findings = Findings(negotiated=negotiated)
    for revision in _chosen(negotiated, wanted):
        transport = HTTP_SSE if revision == LEGACY else STREAMABLE_HTTP
        target = Target(url=url, host=parts.hostname or "", loopback=is_loopback_host(parts.hostname or ""),
                        call_tools=call_tools, revision=revision, transport=transport, discover=negotiated.discover,
                        initialized=negotiated.initialized.get(revision), timeout=timeout, rate=rate, tokens=tokens,
                        challenge=negotiated.challenge)
        only_auth = negotiated.challenge is not None and not tokens.access and revision not in negotiated.revisions
        if revision == VERSION and target.capability("tools") is not None:
            target.tools = await _tools(send)
        for check in checks:
            if check.id.startswith("auth.") and negotiated.challenge is None:
                continue  # the server asks for no authorization: nothing to check (the report says so)
            if check.holds(revision, transport) and (not only_auth or check.id.startswith("auth.")):
                findings.append((await _finding(check.bound(revision), target, send)).shown(strict=strict))
    return findings


def _chosen(negotiated: Negotiated, wanted: list[str] | None) -> list[str]:
    """The revisions to run the checks in: those asked for, else those negotiated; when nothing
    was negotiated, the auth checks' revisions if the server asks for authorization, else
    2026-07-28 (its checks then show what the server does get wrong)."""
    if wanted is not None:
        return wanted
    if negotiated.revisions:
        return list(negotiated.revisions)
    if negotiated.challenge is not None:
        negotiated.notes.append("the server asks for authorization: give a token to run the checks beyond auth.*")
        return list(METADATA_REVISIONS)
    negotiated.notes.append("no revision was negotiated: checked as 2026-07-28")
    return [VERSION]


async def _tools(send: Send) -> list[dict[str, Any]] | None:
    listed = first_result((await send(rpc("tools/list", {"_meta": meta()}, rpc_id="probe-tools")))[1])
    tools = (listed or {}).get("tools")
    return [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else None


async def probe_stdio(command: Sequence[str], checks: Sequence[Check] = CHECKS, *, rate: float = 10.0,
                      call_tools: bool = False, timeout: float = 10.0, strict: bool = False,
                      revisions: Sequence[str] | None = None) -> Findings:
    """Run ``checks`` against a server started as ``command`` that speaks NDJSON on stdio: a
    process for 2026-07-28 (``server/discover`` first), then one per initialize-era revision
    (``initialize`` naming it first), each revision's checks on its process (or those of
    ``revisions`` only). The HTTP-only checks of 2026-07-28 are not applicable. Each process is
    stopped (stdin closed) after its checks."""
    wanted = _revisions(revisions)
    negotiated = Negotiated(STDIO)
    findings = Findings(negotiated=negotiated)
    base = dict(url=shlex.join(command), host="", loopback=False, call_tools=call_tools, stdio=True, transport=STDIO,
                command=tuple(command), timeout=timeout, rate=rate)
    answered = False
    if wanted is None or VERSION in wanted:
        answered = await _stdio_2026(command, checks, base, findings, strict=strict, forced=wanted is not None)
    for revision in ERA_REVISIONS:
        if wanted is not None and revision not in wanted:
            continue
        async with stdio_sender(command, timeout=timeout, sentinel=ping_sentinel) as raw_send:
            send = paced(raw_send, rate)
            opening = await send(Request("POST", (), json.dumps(initialize(revision, f"probe-{revision}")).encode(),
                                         rpc_id=f"probe-{revision}", sentinel=False))  # its answer, or a null id
            answered = answered or opening[1] is not None or bool(raw_send.transcript)
            result = (response_of(opening[1]) or {}).get("result")
            version = result.get("protocolVersion") if isinstance(result, dict) else None
            if version != revision:
                if version is not None:
                    negotiated.notes.append(f"initialize naming {revision} was answered with {version}")
                if wanted is None:
                    continue
            else:
                negotiated.revisions.append(revision)
                negotiated.initialized[revision] = result if isinstance(result, dict) else {}
            note = await send(Request("POST", (), json.dumps(notification("notifications/initialized")).encode(),
                                      answered=False))
            target = Target(**base, revision=revision, initialized=negotiated.initialized.get(revision),  # type: ignore[arg-type]
                            opening=(opening, note), transcript=raw_send.transcript)
            for check in checks:
                if check.holds(revision, STDIO):
                    findings.append((await _finding(check.bound(revision), target, send)).shown(strict=strict))
    if not answered:
        raise TransportError(f"no answer from {shlex.join(command)}")
    if wanted is None and not negotiated.revisions:
        negotiated.notes.append("no revision was negotiated: checked as 2026-07-28")
        await _stdio_2026(command, checks, base, findings, strict=strict, forced=True)
    return findings


async def _stdio_2026(command: Sequence[str], checks: Sequence[Check], base: dict[str, Any], findings: Findings, *,
                      strict: bool, forced: bool) -> bool:
    """The 2026-07-28 checks on a process of their own, if it answers server/discover with a
    result (or ``forced``); whether anything at all came back."""
    negotiated = findings.negotiated
    assert negotiated is not None
    async with stdio_sender(command, timeout=base["timeout"], sentinel=discover_sentinel) as raw_send:
        send = paced(raw_send, base["rate"])
        first = await send(rpc("server/discover", rpc_id="probe-discover"))
        target = Target(**base, discover=first_result(first[1]))
        if target.discover is not None and VERSION not in negotiated.revisions:
            negotiated.revisions.insert(0, VERSION)
            negotiated.discover = target.discover
        if target.discover is not None or forced:
            if target.capability("tools") is not None:
                target.tools = await _tools(send)
            for check in checks:
                if check.holds(VERSION, STDIO):
                    findings.append((await _finding(check, target, send)).shown(strict=strict))
        return first[1] is not None or bool(raw_send.transcript)


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
    """The findings as one JSON document: url, what the server negotiated (transport,
    revisions and their pages), counts, and per check and revision its id, key, revision,
    citation, status, detail, problems (each with its rule's strength, sentence and page), how
    many advice problems were withheld, and evidence (bodies cut at 2,000 bytes)."""
    counts = {s: sum(f.status == s for f in findings) for s in STATUSES}
    negotiated = getattr(findings, "negotiated", None)
    revisions = negotiated.revisions if negotiated is not None else []
    return json.dumps({"target": url, "protocolVersion": revisions[0] if revisions else VERSION,
                       "negotiated": negotiated.as_json() if negotiated is not None else None, "counts": counts,
                       "checks": [
        {"id": f.subject.id, "key": f.subject.key, "revision": f.subject.revision, "title": f.subject.title,
         "cites": f.subject.cite or f.subject.cites, "sends": f.subject.sends, "status": f.status, "detail": f.detail,
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
                                      name=finding.subject.key)
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


_TRANSPORT_NAMES = {STREAMABLE_HTTP: "Streamable HTTP", HTTP_SSE: "HTTP+SSE", STDIO: "stdio"}


def _negotiated_lines(negotiated: Negotiated | None) -> list[str]:
    """What the server negotiated: the transport, each revision with its page, the notes."""
    if negotiated is None:
        return []
    revisions = ", ".join(negotiated.revisions) or "none"
    asks = negotiated.transport == STDIO or negotiated.challenge is not None
    lines = [f"negotiated: {_TRANSPORT_NAMES.get(negotiated.transport, negotiated.transport)}, revisions {revisions}"
             + (" (the server asks for authorization)" if negotiated.challenge is not None else "")
             + ("" if asks else " (no authorization asked for: the auth.* checks do not apply)")]
    lines += [f"  {revision}: {page}" for revision, page in pages_of(negotiated.transport, negotiated.revisions)]
    lines += [f"  note: {_safe(note)}" for note in negotiated.notes]
    return lines


def text_report(url: str, findings: Sequence[Finding], *, verbose: bool = False) -> str:
    """A human report: what the server negotiated (the transport, and each revision with the
    page of its specification), then one line per check and revision; for each check that did not pass, each problem with
    the strength and the sentence of the rule it breaks (and the page), then what was sent and
    received. The last line counts them; exit status is non-zero only on failures (MUST)."""
    lines = [f"mcpwire probe {_safe(url)}", *_negotiated_lines(getattr(findings, "negotiated", None)), ""]
    for f in findings:
        lines.append(f"{_MARKS[f.status]}  {f.subject.key:40} {f.subject.title}")
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
