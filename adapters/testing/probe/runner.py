"""``mcpwire probe``: run named checks of the MCP 2026-07-28 rules against any MCP server over
Streamable HTTP, and report each as pass, fail or not applicable, with evidence
(issue 15; the checks are rows of :data:`mcpwire_adapters.testing.probe.table.CHECKS`).

    findings = await probe("http://127.0.0.1:8000/mcp", rate=10.0)
    print(text_report(findings))

Every request is sent raw over its own connection (anyio + h11, as ``_fetch`` does for OAuth),
so a check can send what our client never would: a cut-short body, a boolean id, a missing
header. Only the named URL is contacted, at most ``rate`` requests per second, and tools are
called only with ``call_tools=True`` (tools have side effects); without it the checks that need
a tool call are not applicable. Runs under trio and asyncio alike.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import json
import math
import shlex
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit
from xml.etree import ElementTree

import anyio
import anyio.abc
import h11

from ...oauth.fetch import one_exchange
from .checks import Check, Exchange, Finding, Reply, Request, Send, Target, cite_url, judge, meta, rpc
from ..rawwire_stdio import stdio_sender
from .table import CHECKS
from ...client.session import TransportError

__all__ = ["CHECKS", "Check", "Finding", "evidence_json", "json_report", "junit_report", "probe", "probe_stdio", "select", "text_report"]

EVIDENCE_LIMIT = 2000  # bytes of each body kept in a finding's evidence
MAX_BODY = 1024 * 1024


class _Pace:
    """At most ``rate`` requests per second (the first goes at once)."""

    def __init__(self, rate: float) -> None:
        self.interval = 1.0 / rate if rate > 0 else 0.0
        self.next = -math.inf

    async def wait(self) -> None:
        now = anyio.current_time()
        if now < self.next:
            await anyio.sleep(self.next - now)
        self.next = max(now, self.next) + self.interval


async def exchange(url: str, request: Request, *, timeout: float) -> Reply:
    """Send ``request`` to ``url`` on a fresh connection and read the reply (up to 1 MiB; with
    ``first_event_only``, up to the end of the first SSE event, then hang up; with ``head_only``,
    up to the response head)."""

    def enough(status: int, headers: list[tuple[str, str]], body: bytearray) -> bool:
        # A whole event with data ends a streamed answer the check needs only the start of (a
        # keepalive comment before it does not count).
        return len(body) > MAX_BODY or request.head_only or (request.first_event_only and bool(
            Reply(0, tuple(headers), bytes(body)).messages(whole_events_only=True)))

    status, reply_headers, body = await one_exchange(
        url, request.method, request.headers, request.body, timeout=timeout, user_agent="mcpwire-probe", stop=enough)
    return Reply(status, tuple(reply_headers), body)


def select(patterns: Sequence[str]) -> tuple[Check, ...]:
    """The checks whose id matches one of the shell-style ``patterns`` (all when none given)."""
    if not patterns:
        return CHECKS
    return tuple(c for c in CHECKS if any(fnmatch.fnmatchcase(c.id, p) for p in patterns))


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def probe(url: str, checks: Sequence[Check] = CHECKS, *, rate: float = 10.0, call_tools: bool = False,
                timeout: float = 10.0) -> list[Finding]:
    """Run ``checks`` against the MCP endpoint ``url``; one :class:`Finding` per check, in order.

    First a well-formed server/discover (and tools/list, if tools are advertised) tells the
    checks what the server offers; then each check sends its request(s) and judges the reply.
    A check whose connection fails, or that times out after ``timeout`` seconds, fails;
    :class:`TransportError` when that first server/discover gets no reply at all."""
    parts = urlsplit(url)
    target = Target(url=url, host=parts.hostname or "", loopback=_loopback(parts.hostname or ""),
                    call_tools=call_tools)
    return await _run(target, http_sender(url, rate, timeout), checks, f"cannot reach {url}")


UNSENDABLE = "unsendable"
"""How an exchange's error starts when HTTP/1.1 cannot carry the request at all (a header value
h11 refuses): the request's fault, not the server's."""


def http_sender(url: str, rate: float, timeout: float) -> Send:
    """Send each request to ``url`` on a connection of its own, at most ``rate`` a second: the
    reply, or why there is none (no reply within ``timeout``, :data:`UNSENDABLE`, or what the
    connection raised). Never raises for a failure of the exchange."""
    async def send(request: Request) -> Exchange:
        try:
            return request, await exchange(url, request, timeout=timeout), None
        except TimeoutError:
            return request, None, f"no complete reply within {timeout} s"
        except h11.LocalProtocolError as exc:
            return request, None, f"{UNSENDABLE}: {exc}"
        except Exception as exc:  # noqa: BLE001 - any failure of the connection is a finding, not a crash
            return request, None, f"{type(exc).__name__}: {exc}"

    return paced(send, rate)


def paced(send: Send, rate: float) -> Send:
    """``send``, at most ``rate`` requests a second (0: no limit)."""
    pace = _Pace(rate)

    async def paced_send(request: Request) -> Exchange:
        await pace.wait()
        return await send(request)

    return paced_send


async def probe_stdio(command: Sequence[str], checks: Sequence[Check] = CHECKS, *, rate: float = 10.0,
                      call_tools: bool = False, timeout: float = 10.0) -> list[Finding]:
    """Run ``checks`` against a server started as ``command`` that speaks NDJSON on stdio; the
    HTTP-only checks are not applicable. The process is stopped (stdin closed) at the end."""
    target = Target(url=shlex.join(command), host="", loopback=False, call_tools=call_tools, stdio=True)
    async with stdio_sender(command, timeout=timeout) as raw_send:
        return await _run(target, paced(raw_send, rate), checks, f"no answer from {shlex.join(command)}")


async def _run(target: Target, send: Send, checks: Sequence[Check], unreachable: str) -> list[Finding]:
    first = await send(rpc("server/discover", rpc_id="probe-discover"))
    if first[1] is None:
        raise TransportError(f"{unreachable}: {first[2]}")
    target.discover = _result(first[1])
    if target.capability("tools") is not None:
        listed = _result((await send(rpc("tools/list", {"_meta": meta()}, rpc_id="probe-tools")))[1])
        tools = (listed or {}).get("tools")
        target.tools = [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else None

    findings = []
    for check in checks:
        if check.http_only and target.stdio:
            findings.append(Finding(check, "n/a", "a rule of HTTP; stdio has no statuses or headers"))
            continue
        if check.needs_tool_calls and not target.call_tools:
            findings.append(Finding(check, "n/a", "needs a tool call: pass --call-tools to allow it"))
            continue
        if check.steps is not None:
            status, detail, evidence = await check.steps(target, send)
            findings.append(Finding(check, status, detail, tuple(evidence)))
            continue
        assert check.build is not None and check.expect is not None
        built = check.build(target)
        if isinstance(built, str):
            findings.append(Finding(check, "n/a", built))
            continue
        sent = await send(built)
        if sent[1] is None:
            findings.append(Finding(check, "fail", f"no reply: {sent[2]}", (sent,)))
            continue
        problems = judge(check.expect, built, sent[1], target)
        findings.append(Finding(check, "fail" if problems else "pass", "; ".join(problems), (sent,)))
    return findings


def _result(reply: Reply | None) -> dict[str, Any] | None:
    if reply is None or reply.status not in (0, 200):  # 0: a stdio reply
        return None
    for message in reply.messages():
        result = message.get("result") if isinstance(message, dict) else None
        if isinstance(result, dict):
            return result
    return None


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


def json_report(url: str, findings: Sequence[Finding]) -> str:
    """The findings as one JSON document: url, counts, and per check its id, citation, status,
    detail and evidence (bodies cut at 2,000 bytes)."""
    counts = {s: sum(f.status == s for f in findings) for s in ("pass", "fail", "n/a")}
    return json.dumps({"target": url, "protocolVersion": "2026-07-28", "counts": counts, "checks": [
        {"id": f.check.id, "title": f.check.title, "cites": cite_url(f.check.cites) or f.check.cites,
         "sends": f.check.sends,
         "status": f.status, "detail": f.detail, "evidence": [evidence_json(e) for e in f.evidence]}
        for f in findings]}, indent=2)


def junit_report(url: str, findings: Sequence[Finding]) -> str:
    """JUnit XML for CI: one testcase per check; fail is a failure, not applicable is skipped."""
    suite = ElementTree.Element("testsuite", name="mcpwire probe", tests=str(len(findings)),
                                failures=str(sum(f.status == "fail" for f in findings)),
                                skipped=str(sum(f.status == "n/a" for f in findings)))
    ElementTree.SubElement(ElementTree.SubElement(suite, "properties"), "property", name="target", value=url)
    for finding in findings:
        case = ElementTree.SubElement(suite, "testcase", classname=f"mcpwire.probe.{finding.check.id.split('.')[0]}",
                                      name=finding.check.id)
        if finding.status == "fail":
            failure = ElementTree.SubElement(case, "failure", message=finding.detail)
            failure.text = json.dumps([evidence_json(e) for e in finding.evidence], indent=2)
        elif finding.status == "n/a":
            ElementTree.SubElement(case, "skipped", message=finding.detail)
    return ElementTree.tostring(suite, encoding="unicode", xml_declaration=True)


def text_report(url: str, findings: Sequence[Finding], *, verbose: bool = False) -> str:
    """A human report: one line per check, and for each failure what was sent and received."""
    lines = [f"mcpwire probe {_safe(url)}", ""]
    marks = {"pass": "PASS", "fail": "FAIL", "n/a": "N/A "}
    for f in findings:
        lines.append(f"{marks[f.status]}  {f.check.id:40} {f.check.title}")
        if f.status == "n/a" or (f.status == "fail" and f.detail):
            lines.append(f"      {_safe(f.detail)}")
        if f.status == "fail":
            lines.append(f"      rule: {cite_url(f.check.cites) or f.check.cites}")
        if f.status == "fail" or verbose:
            for request, reply, error in f.evidence:
                lines.append(f"      > {request.method} {' '.join(f'{k}: {v};' for k, v in request.headers)}")
                if request.body:
                    lines.append(f"      > {_safe(_cut(request.body)[:300])}")
                if reply is not None:
                    kind = reply.header("content-type") or "no content-type"
                    lines.append(f"      < {reply.status} ({_safe(kind)}) {_safe(_cut(reply.body)[:300])}")
                else:
                    lines.append(f"      < (no reply: {_safe(error)})")
    counts = {s: sum(f.status == s for f in findings) for s in ("pass", "fail", "n/a")}
    lines += ["", f"{counts['pass']} passed, {counts['fail']} failed, {counts['n/a']} not applicable"]
    return "\n".join(lines) + "\n"
