"""The client probe's reports: :func:`text_report` (one line a scenario; for each that did not
pass, its problems with the strength, sentence and page of each rule, how the client ended,
and what it sent) and :func:`json_report`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..verdict import ADVICE, FAIL, NOT_APPLICABLE, PASS, STATUSES, WARN, Problem
from .runner import ClientFinding, ScenarioRun

__all__ = ["json_report", "process_line", "text_report"]

_MARKS = {PASS: "PASS", FAIL: "FAIL", WARN: "WARN", ADVICE: "NOTE", NOT_APPLICABLE: "N/A "}
_SHOWN = 12  # requests shown of a scenario's evidence (then the last 3)


def _safe(text: Any) -> str:
    """``text`` with control characters escaped: what a client prints must not drive the terminal."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))


def process_line(run: ScenarioRun) -> str:
    """How the client ended: its exit status (or the deadline), how long it ran, its stderr's last line."""
    p = run.process
    status = f"killed at the deadline after {p.seconds:.1f} s" if p.timed_out else f"exit {p.exit_code} after {p.seconds:.1f} s"
    last = p.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
    return f"client: {status}" + (f"; stderr: {_safe(last[0][:200])}" if last[0] else "")


def _problem_lines(problems: Sequence[str], indent: str) -> list[str]:
    lines: list[str] = []
    by_rule: dict[str, list[str]] = {}
    for p in problems:
        by_rule.setdefault(p.rule.id if isinstance(p, Problem) else "", []).append(p)
    for grouped in by_rule.values():
        for p in grouped[:5]:
            lines.append(f"{indent}{p.rule.strength + ': ' if isinstance(p, Problem) else ''}{_safe(p)}")
        if len(grouped) > 5:
            lines.append(f"{indent}... and {len(grouped) - 5} more like it")
        first = grouped[0]
        if isinstance(first, Problem):
            lines.append(f"{indent}  {first.rule.source}: \"{_safe(first.rule.quote)}\""
                         + (f" {first.rule.url}" if first.rule.url else ""))
    return lines


def _requests(run: ScenarioRun, indent: str) -> list[str]:
    lines = []
    records = list(run.records)
    shown = records if len(records) <= _SHOWN + 3 else records[:_SHOWN] + records[-3:]
    for record in shown:
        if records.index(record) == _SHOWN and len(records) > _SHOWN + 3:
            lines.append(f"{indent}... {len(records) - _SHOWN - 3} more")
        headers = " ".join(f"{k}: {v};" for k, v in record.headers if k.startswith("mcp") or k in (
            "accept", "last-event-id", "authorization"))
        body = record.body[:160].decode("utf-8", "replace")
        ended = "" if record.ended in ("done", "") else f" ({record.ended})"
        lines.append(f"{indent}> {record.method} {_safe(record.target)} {_safe(headers)} {_safe(body)}".rstrip()
                     + f"  -> {record.status or 'line'}{ended}")
    return lines


def text_report(command: str, findings: Sequence[ClientFinding], *, verbose: bool = False) -> str:
    """One line per scenario, then the details of each that did not pass (or of every one, with
    ``verbose``); the last lines count them."""
    lines = [f"mcpwire probe --client {_safe(command)}", ""]
    for f in findings:
        lines.append(f"{_MARKS[f.status]}  {f.subject.id:34} {_safe(f.subject.scenario.summary)}")
        if f.status == NOT_APPLICABLE:
            lines.append(f"      {_safe(f.detail)}")
        elif f.status != PASS:
            lines += _problem_lines(f.problems or [f.detail], "      ")
        if f.status in (FAIL, WARN, ADVICE) or verbose:
            lines.append(f"      {process_line(f.subject)}")
            lines += _requests(f.subject, "      ")
    counts = {s: sum(f.status == s for f in findings) for s in STATUSES}
    lines += ["", f"{counts[PASS]} passed, {counts[FAIL]} failed (MUST), {counts[WARN]} warned (SHOULD), "
              + (f"{counts[ADVICE]} with advice, " if counts[ADVICE] else "") + f"{counts[NOT_APPLICABLE]} not applicable"]
    withheld = sum(f.withheld > 0 for f in findings)
    if withheld:
        lines.append(f"advice on {withheld} scenario{'s' * (withheld != 1)} withheld (robustness, beyond the official "
                     "text): --strict shows it")
    return "\n".join(lines) + "\n"


def _problem_json(p: str) -> dict[str, Any]:
    if not isinstance(p, Problem):
        return {"problem": p, "strength": "MUST"}
    r = p.rule
    return {"problem": str(p), "strength": r.strength, "rule": r.id, "source": r.source, "quote": r.quote, "url": r.url}


def json_report(command: str, findings: Sequence[ClientFinding]) -> str:
    """The findings as one JSON document: per scenario its status, problems (each with its rule),
    how the client ended, and every request it sent with what answered it."""
    counts = {s: sum(f.status == s for f in findings) for s in STATUSES}
    return json.dumps({"client": command, "counts": counts, "scenarios": [{
        "scenario": f.subject.scenario.name, "transport": f.subject.transport, "summary": f.subject.scenario.summary,
        "status": f.status, "detail": f.detail, "problems": [_problem_json(p) for p in f.problems],
        "withheld": f.withheld, "argv": list(f.subject.argv),
        "client": {"exit": f.subject.process.exit_code, "timed_out": f.subject.process.timed_out,
                   "seconds": round(f.subject.process.seconds, 3),
                   "stderr": f.subject.process.stderr.decode("utf-8", "replace")[-2000:]},
        "requests": [{"method": r.method, "target": r.target, "headers": [list(h) for h in r.headers],
                      "body": r.body[:2000].decode("utf-8", "replace"), "status": r.status, "ended": r.ended,
                      "answer": r.written[:2000].decode("utf-8", "replace")} for r in f.subject.records]}
        for f in findings]}, indent=2)
