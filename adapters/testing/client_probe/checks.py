"""What a scenario checks beyond the traffic rules (:mod:`.traffic`), and the verdict on one
run: whether the client reached the scenario's point at all (else the scenario is not
applicable), the scenario's own checks (``resume``, ``oauth``, ``memory``, ``wrong-id``,
``rounds``; a 404 on a session is judged in every run, by :mod:`.traffic`), and how the process went (a hang past the deadline, a crash): the
robustness rows are advice (docs/probing-clients.md says why).

    outcome = judge_run(scenario, records, process, stdio=False, mcp_url=url)
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from typing import Final
from urllib.parse import parse_qs, urlsplit

from ..rawwire import Exchange, Reply, Request
from ..verdict import ADVICE, NOT_APPLICABLE, Outcome, Problem
from .hostile import Record, classify
from .oauth import AS_METADATA_PATHS, ISSUER_PATH
from .process import ProcessOutcome, crash_signs
from .rules import problem
from .scenarios import ERA, MODERN, WRONG_ID_TEXT, Scenario
from .traffic import mcp_records, traffic_problems

__all__ = ["EVIDENCE_BYTES", "ROUND_BOUND", "evidence", "judge_run", "reached"]

ROUND_BOUND: Final = 64  # input_required rounds of one call past which a client is told it sets no bound
EVIDENCE_BYTES: Final = 2000
_MIB: Final = 1024 * 1024
_TOLERANCE: Final = 0.02  # seconds of clock slack when a reconnection is timed against retry


def judge_run(scenario: Scenario, records: Sequence[Record], process: ProcessOutcome, *, stdio: bool,
              mcp_url: str = "") -> Outcome:
    """The outcome of one run: its problems (the strongest sets the status), or not applicable
    when the client never reached the scenario's point and broke nothing stronger than advice."""
    end = process.started + process.seconds
    problems = traffic_problems(records, stdio=stdio, ended_at=end)
    for check in scenario.checks:
        problems += _CHECKS[check](scenario, records, process, mcp_url)
    if process.timed_out:
        problems.append(problem(f"still running after {process.seconds:.1f} s: stopped (SIGTERM, then its process group "
                                "killed)", "robust.hang"))
    crashed = crash_signs(process)
    if crashed is not None:
        problems.append(problem(f"the client crashed: {crashed}" + _tail(process), "robust.crash"))
    evidence_ = evidence(records)
    why = reached(scenario, records, stdio=stdio)
    if why is not None and all(isinstance(p, Problem) and p.strength == ADVICE for p in problems):
        return Outcome(NOT_APPLICABLE, why, evidence_)
    return Outcome.judged(problems, evidence_, note=f"exit {process.exit_code}")


def reached(scenario: Scenario, records: Sequence[Record], *, stdio: bool) -> str | None:
    """None when the client reached the scenario's point (its trigger); else why not."""
    if scenario.trigger == "oauth":
        if any(urlsplit(r.target).path in AS_METADATA_PATHS for r in records):
            return None
        return "the client never fetched the authorization server's metadata (it does not do OAuth, or was not asked to)"
    mcp = mcp_records(records, stdio=stdio)
    wanted = {MODERN: (MODERN,), ERA: (ERA,)}.get(scenario.revision, (MODERN, ERA))
    for record in mcp:
        message = record.message()
        if isinstance(message, dict) and message.get("method") == scenario.trigger and record.era in wanted:
            return None
    spoke = sorted({r.era for r in mcp})
    if not spoke:
        return "the client sent nothing"
    if not set(spoke) & set(wanted):
        return f"the client never spoke {' or '.join(wanted)} (it spoke {', '.join(spoke)})"
    return f"the client never sent {scenario.trigger}"


def _tail(process: ProcessOutcome) -> str:
    lines = process.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
    return (": " + " | ".join(line.strip() for line in lines))[:300] if lines else ""


# -- the scenarios' own checks ------------------------------------------------------------------------------
def _resume(scenario: Scenario, records: Sequence[Record], process: ProcessOutcome, url: str) -> list[Problem]:
    """A stream cut after an event id: the client polls with GET, Last-Event-ID, after retry."""
    cut = next((r for r in records if r.ended == "cut" and r.events), None)
    if cut is None:
        return []
    retries = _retry_values(cut)
    retry = retries[0] if retries else None
    gets = [r for r in records if r.method == "GET" and r.at >= cut.ended_at - _TOLERANCE]
    if not gets:
        return [problem(f"the stream of request {cut.index + 1} was cut after event {cut.events[-1]!r}; the client never "
                        "reconnected (no GET)", "poll", ERA)]
    resumed = next((g for g in gets if g.header("last-event-id") is not None), None)
    if resumed is None:
        return [problem(f"the client reconnected with GET but without Last-Event-ID (the last event id was "
                        f"{cut.events[-1]!r})", "last-event-id", ERA)]
    out = []
    if resumed.header("last-event-id") != cut.events[-1]:
        out.append(problem(f"GET with Last-Event-ID {resumed.header('last-event-id')!r}, the last event id was "
                           f"{cut.events[-1]!r}", "last-event-id", ERA))
    if retry is not None and resumed.at < cut.ended_at + retry / 1000 - _TOLERANCE:
        out.append(problem(f"reconnected {1000 * (resumed.at - cut.ended_at):.0f} ms after the stream was cut; its retry "
                           f"field asked for {retry} ms", "retry", ERA))
    return out


def _retry_values(record: Record) -> list[int]:
    return [int(line[6:].strip()) for line in record.written.decode("utf-8", "replace").splitlines()
            if line.startswith("retry:") and line[6:].strip().isdigit()]


def _oauth(scenario: Scenario, records: Sequence[Record], process: ProcessOutcome, url: str) -> list[Problem]:
    fetched = [r for r in records if urlsplit(r.target).path in AS_METADATA_PATHS and r.status == 200]
    if not fetched:
        return []
    era = next((r.era for r in mcp_records(records, stdio=False) if r.era), MODERN)
    used = [r for r in records if r.at >= fetched[0].at and urlsplit(r.target).path in (
        ISSUER_PATH + "/authorize", ISSUER_PATH + "/token", ISSUER_PATH + "/register")]
    if scenario.oauth == "issuer-mismatch":
        return [problem(f"the metadata named another issuer, yet the client used it: {r.method} {urlsplit(r.target).path}",
                        "oauth-issuer", era) for r in used[:3]]
    if scenario.oauth == "no-pkce":
        return [problem(f"the metadata has no code_challenge_methods_supported, yet the client proceeded: {r.method} "
                        f"{urlsplit(r.target).path}", "oauth-no-pkce", era) for r in used if "/register" not in r.target][:3]
    return _flow(records, era, url)


def _flow(records: Sequence[Record], era: str, url: str) -> list[Problem]:
    """The authorization code flow: PKCE S256, resource on both requests, state; then the token
    on every request."""
    out: list[Problem] = []
    challenges: dict[str, str] = {}
    for record in records:
        path = urlsplit(record.target).path
        if path == ISSUER_PATH + "/authorize":
            query = {k: v[0] for k, v in parse_qs(urlsplit(record.target).query).items()}
            if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
                out.append(problem(f"authorization request with code_challenge_method "
                                   f"{query.get('code_challenge_method')!r}", "oauth-pkce", era))
            out += _resource(query.get("resource"), "authorization request", era, url)
            if not query.get("state"):
                out.append(problem("authorization request without state", "oauth-state", era))
            location = dict(record.reply_headers).get("location", "")
            code = parse_qs(urlsplit(location).query).get("code", [""])[0]
            challenges[code] = query.get("code_challenge", "")
        elif path == ISSUER_PATH + "/token" and record.method == "POST":
            form = {k: v[0] for k, v in parse_qs(record.body.decode("utf-8", "replace")).items()}
            if form.get("grant_type") != "authorization_code":
                continue
            verifier = form.get("code_verifier", "")
            expected = challenges.get(form.get("code", ""))
            derived = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if not verifier or (expected is not None and derived != expected):
                out.append(problem("token request whose code_verifier " + ("is missing" if not verifier else
                                   "does not match the code_challenge (S256)"), "oauth-pkce", era))
            out += _resource(form.get("resource"), "token request", era, url)
    token_at = next((r.ended_at for r in records if urlsplit(r.target).path == ISSUER_PATH + "/token" and r.status == 200),
                    None)
    if token_at is not None:
        for record in mcp_records(records, stdio=False):
            if record.at > token_at and not (record.header("authorization") or "").lower().startswith("bearer "):
                out.append(problem(f"{record.method} {_method(record)} after the token was issued, without "
                                   "Authorization: Bearer", "oauth-bearer", era))
                break
    return out


def _method(record: Record) -> str:
    message = record.message()
    return str(message.get("method", "")) if isinstance(message, dict) else ""


def _resource(value: str | None, where: str, era: str, url: str) -> list[Problem]:
    if not value:
        return [problem(f"{where} without resource", "oauth-resource", era)]
    if url and _canonical(value) != _canonical(url):
        return [problem(f"{where} with resource {value!r}, the MCP server is {url!r}", "oauth-resource", era)]
    return []


def _canonical(uri: str) -> str:
    parts = urlsplit(uri)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path.rstrip('/')}"


def _memory(scenario: Scenario, records: Sequence[Record], process: ProcessOutcome, url: str) -> list[Problem]:
    big = next((r for r in records if r.big), None)
    if big is None or not process.memory:
        return []
    before = max((size for at, size in process.memory if at <= big.at), default=0)
    peak = max((size for at, size in process.memory if at > big.at), default=0)
    if not before or peak - before < big.big // 2:
        return []
    return [problem(f"the client's memory grew by {(peak - before) / _MIB:.0f} MiB (from {before / _MIB:.0f} to "
                    f"{peak / _MIB:.0f} MiB) while a {big.big / _MIB:.0f} MiB answer came in", "robust.memory")]


def _wrong_id(scenario: Scenario, records: Sequence[Record], process: ProcessOutcome, url: str) -> list[Problem]:
    if WRONG_ID_TEXT in process.found and process.exit_code == 0:
        return [problem(f"the client printed {WRONG_ID_TEXT!r} and exited 0: it took the response with another id as "
                        "its answer", "robust.wrong-id")]
    return []


def _rounds(scenario: Scenario, records: Sequence[Record], process: ProcessOutcome, url: str) -> list[Problem]:
    rounds = sum(1 for r in records for m in r.sent[:len(r.readable())]
                 if isinstance(m, dict) and isinstance(m.get("result"), dict)
                 and m["result"].get("resultType") == "input_required")
    if rounds > ROUND_BOUND:
        return [problem(f"the client went through {rounds} input_required rounds without giving up", "robust.rounds")]
    return []


_CHECKS = {"resume": _resume, "oauth": _oauth, "memory": _memory, "wrong-id": _wrong_id,
           "rounds": _rounds}


# -- evidence -------------------------------------------------------------------------------------------------
def evidence(records: Sequence[Record]) -> list[Exchange]:
    """The records as the probe's exchanges: each request, and the start of what answered it (or
    how its answer ended when it did not end whole)."""
    out: list[Exchange] = []
    for record in records:
        request = Request(record.method, record.headers, record.body[:EVIDENCE_BYTES], rpc_id=_id(record))
        reply = Reply(record.status, record.reply_headers, record.written[:EVIDENCE_BYTES])
        out.append((request, reply, None if record.ended in ("done", "") else f"the answer {_ENDINGS[record.ended]}"))
    return out


def _id(record: Record) -> object:
    message = record.message()
    return message.get("id") if classify(message) in ("request", "response") else None


_ENDINGS = {"cut": "was cut (the connection dropped mid-body)", "hold": "was held open until the client left",
            "gone": "was not read whole: the client left first", "open": "was still open when the run ended"}
