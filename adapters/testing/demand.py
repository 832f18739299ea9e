"""What a fuzzed request demands of its answer, and the judging of the answer against it: the
fuzzer's half of the one judge (:mod:`mcpwire_adapters.testing.judge` holds the rules, their
strengths, and the probe's half).

- :class:`Fault`: one rule a request breaks, as the fuzzer's oracle reads it
  (:func:`mcpwire_adapters.testing.fuzz.oracle.expect_for`), each naming its rule of
  :data:`~mcpwire_adapters.testing.judge.RULES`, with the answers that report it;
- :class:`Demand`: what the request calls for: no answer, an HTTP refusal, an error reporting
  one of its faults, or (no fault) a result or any error, and the id the answer carries;
- :func:`judge_answer`: the problems with an answer, after the rules every answer keeps
  whatever was sent (JSON-RPC 2.0 messages, a 200 of JSON or an event stream, a 202 with no
  body, an error with its code's HTTP status, a result of its schema type);
- :func:`judge_step`: one step of a fuzz case, by its kind (:data:`STEP_KINDS`); an answer that
  did not come in time is no problem (the runner reports the request as slow);
  :func:`sequence_rules`: what a sequence knows beyond its request.

Past the envelope a request can break several rules at once and the specification does not say
which one a server reports first, so an error reporting any of them conforms; a problem breaks
the strongest rule left unreported (:func:`fault_rule`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .era_rules import era_rule
from .judge import (
    ECHO_OR_NULL,
    NULL,
    STATUS_OF,
    allow_rule,
    cited,
    id_rule,
    id_rules,
    jsonrpc_fault,
    listed,
    problem,
    rule,
    same_id,
    schema_rule,
    status_of_code_rule,
    status_rule,
    unanswered_rule,
    valid_id,
    validity,
)
from .rawwire import SUB_KEY, VERSION, Reply, Request, media_type, sent_id, timed_out
from .verdict import STRENGTHS, Problem

__all__ = ["ACCEPTED_OR_REFUSED", "STEP_KINDS", "Demand", "Fault", "fault_rule", "judge_answer", "judge_step",
           "sequence_rules"]

# How a fuzz step is judged (a replay file's "judge"): by the oracle from the request alone; or,
# where the sequence knows more, "error" (a round whose requestState was altered), "listen" (a
# subscription's first event), "lines" (stdio framing: only each line's validity is certain).
STEP_KINDS = ("oracle", "error", "listen", "lines")
_RANK = {s: i for i, s in enumerate(STRENGTHS)}


@dataclass(frozen=True)
class Fault:
    """One rule a request breaks, as the fuzzer's oracle reads it: ``rule`` (a :data:`RULES`
    key), the error ``codes`` that report it (None: any error), the HTTP ``statuses`` it goes
    with (None: the status its code goes with, :data:`STATUS_OF`), and ``advice``: the stricter
    answer this project's conventions expect for the same fault, if any."""

    rule: str
    codes: frozenset[int] | None = None
    statuses: frozenset[int] | None = None
    advice: Fault | None = None

    def reports(self, code: Any, status: int, *, stdio: bool) -> bool:
        """Whether an error of ``code`` with ``status`` reports this fault (its code, and on HTTP its status)."""
        return (self.codes is None or code in self.codes) and (stdio or self.statuses is None or status in self.statuses)


@dataclass(frozen=True)
class Demand:
    """What a request calls for, as the fuzzer's oracle reads it. ``silent``: no answer (HTTP 202
    with no body, or a refusal with no response that has an id), breaking ``rule`` otherwise;
    ``refusal``: an HTTP refusal (its statuses; the body is not judged); ``faults``: the rules
    the request breaks (an error reporting any one of them conforms; none: a valid request, a
    result or any error); ``id``: ECHO (the request's), NULL, ECHO_OR_NULL or None (not looked
    at; NULL breaks JSON-RPC's rule); ``why``: the rules behind it, for the report;
    ``refusable``: on HTTP a 4xx refusal conforms as well (an Accept the client should have
    sent otherwise); ``batch``: the ids of a batch's requests, each to be answered (2025-03-26)."""

    silent: bool = False
    faults: tuple[Fault, ...] = ()
    refusal: Fault | None = None
    id: str | None = None
    rule: str = "jsonrpc.reply"
    why: tuple[str, ...] = field(default_factory=tuple)
    refusable: bool = False  # HTTP: a 4xx refusal conforms too (its body not judged but as JSON-RPC)
    batch: tuple[Any, ...] = ()  # a batch: the ids of its requests, each answered (breaking ``rule`` otherwise)

    @property
    def reason(self) -> str | None:
        """The first rule behind it (what a problem cites), if any."""
        return self.why[0] if self.why else None

    @property
    def codes(self) -> frozenset[int] | None:
        """The error codes this project's conventions expect (None: a result or any error)."""
        strict = [f.advice or f for f in self.faults]
        if not strict or any(f.codes is None for f in strict):
            return None
        return frozenset(c for f in strict for c in f.codes or ())

    @property
    def statuses(self) -> frozenset[int] | None:
        """The HTTP statuses this project's conventions expect (None: any)."""
        if self.silent:
            return ACCEPTED_OR_REFUSED
        if self.refusal is not None:
            return self.refusal.statuses
        strict = [f.advice or f for f in self.faults]
        codes = self.codes
        if not strict or codes is None:
            return None
        given = [s for f in strict for s in (f.statuses or ())]
        return frozenset(given) if given else frozenset(s for c in codes for s in STATUS_OF.get(c, (frozenset(), ""))[0])


# A notification or a posted response: 202 with no body when the server accepts it, an HTTP error
# when it cannot (streamable-http, sending messages to the server), never an answer with an id.
ACCEPTED_OR_REFUSED = frozenset({202, *range(400, 500)})


def fault_rule(answer: dict[str, Any], faults: Sequence[Fault], status: int, *, stdio: bool,
               why: str | None = None, code_statuses: bool = True) -> list[Problem]:
    """The answer to a request with ``faults`` is an error reporting one of them (its code, and
    on HTTP its status); a problem breaks the strongest rule it leaves unreported. Then, if no
    fault it reports is reported the way this project's conventions say, that advice.
    ``code_statuses``: where a fault names no status, the status its code goes with
    (:data:`STATUS_OF`, 2026-07-28's) is held too."""
    if not faults:
        return []
    strongest = min(faults, key=lambda f: _RANK[rule(f.rule).strength])
    codes = None if any(f.codes is None for f in faults) else frozenset(c for f in faults for c in f.codes or ())
    error = answer.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    if error is None:
        return [problem(strongest.rule, f"a result, expected {'an error' if codes is None else 'error ' + listed(codes)}"
                        + cited(why))]
    reporting = [f for f in faults if f.codes is None or code in f.codes]
    if not reporting:
        return [problem(strongest.rule, f"error code {code!r}, expected {listed(codes or ())}" + cited(why))]
    problems = []
    if not stdio and all(f.statuses is not None for f in reporting):
        if not any(status in (f.statuses or ()) for f in reporting):
            worst = min(reporting, key=lambda f: _RANK[rule(f.rule).strength])
            problems.append(problem(worst.rule, f"error {code} with HTTP {status}, expected "
                                           f"{listed({s for f in reporting for s in f.statuses or ()})}" + cited(why)))
    elif not stdio and code_statuses:
        problems += status_of_code_rule(code, status)
    strict = [f.advice or f for f in reporting]
    advice = next((f.advice for f in reporting if f.advice is not None), None)
    if advice is not None and not any(f.reports(code, status, stdio=stdio) for f in strict):
        if advice.codes is not None and code not in advice.codes:
            problems.append(problem(advice.rule, f"error code {code!r}, expected {listed(advice.codes)}" + cited(why)))
        elif advice.statuses is not None:
            problems.append(problem(advice.rule, f"error {code} with HTTP {status}, expected {listed(advice.statuses)}"))
    return problems


def sequence_rules(kind: str, messages: Sequence[Any]) -> list[Problem]:
    """What a fuzz sequence knows beyond the request (step ``kind`` "error" or "listen"): a round
    whose ``requestState`` was altered gets an error (advice: basic/patterns/mrtr requires it
    only where the state matters); a listen stream starts with its acknowledgement
    (basic/patterns/subscriptions)."""
    found = next((m.get("result") for m in messages if isinstance(m, dict) and "result" in m), None)
    if kind == "error" and isinstance(found, dict):
        return [problem("mcpwire.request-state", "a result for a round whose requestState was altered: expected an error")]
    if kind == "listen":
        first = messages[0] if messages else None
        if isinstance(first, dict) and "method" in first and first.get("method") != "notifications/subscriptions/acknowledged":
            return [problem("mcp.listen-ack", f"the first message of a listen stream is {first.get('method')!r}, expected "
                                         "notifications/subscriptions/acknowledged")]
        if isinstance(first, dict) and first.get("method") == "notifications/subscriptions/acknowledged":
            params = first.get("params")
            meta_ = params.get("_meta") if isinstance(params, dict) else None
            if isinstance(meta_, dict) and SUB_KEY in meta_ and not valid_id(meta_[SUB_KEY]):
                return [problem("mcp.listen-ack", f"subscriptionId {meta_[SUB_KEY]!r} is not an id")]
    return []


def _era_rules(revision: str) -> tuple[str, str]:
    """The rules of an answer's Content-Type and of a 202's body, as ``revision`` states them."""
    if revision == VERSION:
        return "mcp.request-content-type", "mcp.notification-202"
    return era_rule("era.request-content-type", revision), era_rule("era.notification-202", revision)


def judge_answer(request: Request, reply: Reply, demand: Demand, *, stdio: bool,
                 revision: str = VERSION) -> list[Problem]:
    """The problems with ``reply`` to ``request`` (empty: it conforms), which ``demand``s
    ``demand``; every message is held to :func:`jsonrpc_fault` too. ``revision``: the one the
    request was sent in (an initialize-era session: its rows of the table; no 2026-07-28 result
    types, statuses of codes or ban on requests from the server)."""
    era = revision != VERSION
    content_rule, accepted_rule = _era_rules(revision)
    problems: list[Problem] = []
    kind = media_type(reply.header("content-type") or "")
    wants_answer = not demand.silent and demand.refusal is None and demand.id is not None
    if not stdio:
        if demand.refusal is not None and demand.refusal.statuses is not None:
            problems += status_rule(reply.status, demand.refusal.statuses, rule_id=demand.refusal.rule, why=demand.reason)
        if reply.status == 200 and kind not in ("application/json", "text/event-stream"):
            problems.append(problem(content_rule, f"a 200 with Content-Type {kind or 'none'!r}, expected "
                                                  "application/json or text/event-stream"))
        if reply.status == 202 and reply.body:
            problems.append(problem(accepted_rule, f"a 202 with a body of {len(reply.body)} bytes"))
        problems += allow_rule(reply, "POST") if reply.status == 405 and request.method != "POST" else []
        if demand.refusable and 400 <= reply.status < 500:
            return problems + validity(reply, revision=revision) if kind == "application/json" else problems
        if reply.status >= 300 and kind != "application/json":
            if (wants_answer or demand.batch) and kind != "text/event-stream":  # no JSON-RPC response at all
                problems.append(problem(demand.rule if demand.batch else "jsonrpc.reply",
                                        f"no JSON-RPC response: HTTP {reply.status} with Content-Type {kind or 'none'!r}"))
            return problems  # a refusal's body need not be JSON-RPC
    responses = []
    for message in _flat(reply.messages() if reply.body else []):
        fault = jsonrpc_fault(message, server_requests=era,
                              jsonrpc_rule=era_rule("era.jsonrpc", revision) if era else "mcp.jsonrpc")
        if fault:
            problems.append(fault)
        elif "method" not in message:
            responses.append(message)
    if demand.silent:
        return problems + unanswered_rule(responses, refused=not stdio and reply.status >= 400, rule_id=demand.rule,
                                          why=demand.reason)
    if demand.batch:
        missing = [i for i in demand.batch if not any(same_id(r.get("id"), i) for r in responses)]
        return problems + [problem(demand.rule, f"no response with id {i!r} to a batch" + cited(demand.reason))
                           for i in missing]
    sent = sent_id(request)
    if stdio:
        # Requests may run concurrently on stdio (basic/transports/stdio): a line may answer an earlier
        # message, so only the answers carrying this request's id (or null, where it may) are its.
        responses = [r for r in responses if (same_id(r.get("id"), sent) and sent is not None)
                     or (r.get("id") is None and demand.id in (NULL, ECHO_OR_NULL))]
        responses = responses[-1:] if all(r.get("id") is None for r in responses) else responses
    if not responses:
        if wants_answer:
            shown = "" if stdio else f" (HTTP {reply.status})"
            problems.append(problem("jsonrpc.reply", "no response to a request" + shown))
        return problems
    if len(responses) > 1 and not stdio and not request.body.lstrip().startswith(b"["):
        # (on stdio an earlier line's late answer may share the id; an array may be a batch, answered by several)
        problems.append(problem("jsonrpc.reply", f"{len(responses)} responses to one request"))
    answer = responses[-1]
    problems += id_rule(answer, demand.id, sent, why=demand.reason, echo=id_rules(revision))
    error = answer.get("error")
    if demand.faults:
        problems += fault_rule(answer, demand.faults, reply.status, stdio=stdio or kind != "application/json",
                               why=demand.reason, code_statuses=not era)
    elif not stdio and kind == "application/json" and not era:
        problems += status_of_code_rule(error.get("code") if isinstance(error, dict) else None, reply.status)
    if "result" in answer and not era:
        problems += schema_rule(request, answer["result"])
    if not stdio and kind == "application/json" and "result" in answer and reply.status != 200:
        problems.append(problem("mcpwire.error-status", f"a result with HTTP {reply.status}"))
    return problems


def _flat(messages: Iterable[Any]) -> list[Any]:
    """The messages, a batch's (an array) one by one."""
    return [m for message in messages for m in (message if isinstance(message, list) and message else [message])]


def judge_step(kind: str, request: Request, reply: Reply | None, error: str | None,
               demand: Callable[[], Demand], *, stdio: bool, revision: str = VERSION) -> list[Problem]:
    """Every problem with the answer to one step of a fuzz case, judged as its ``kind`` (one of
    :data:`STEP_KINDS`) says; ``demand`` gives what the request demands (the oracle). No answer
    within the time allowed is no problem (the request may take that long: the runner reports it
    as slow); no answer because the connection failed, or the server closed its output, is one."""
    if timed_out(error):
        return []
    if reply is None:
        return [problem("jsonrpc.reply", f"no answer: {error}")]
    if error is not None:  # some lines, then the end of the output
        return [problem("jsonrpc.reply", f"no complete answer: {error}")]
    if kind == "lines":
        return validity(reply, revision=revision)
    problems = judge_answer(request, reply, demand(), stdio=stdio, revision=revision)
    if kind == "listen":  # only the stream's first event was read
        problems = [p for p in problems if not p.startswith("no response")]
    return problems + sequence_rules(kind, reply.messages() if reply.body else [])
