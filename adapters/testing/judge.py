"""The one judge of the tools that test other servers: whether a server's answer conforms.

The rules a conforming answer keeps are written here, each once, as a function returning the
problems it finds (none: the answer keeps it), worded as the reports show them: the HTTP status
(:func:`status_rule`), the ``Allow`` header, no body at all or no response (a notification or a
posted response is never answered), a response's kind (a result, one of the expected error
codes, any error), its id (the request's echoed, or null), every message JSON-RPC 2.0 a server
may send (:func:`jsonrpc_fault`), the HTTP status each error code goes with (:data:`STATUS_OF`),
a result of its method's schema type, the shapes of particular results (:func:`cacheable`,
:func:`discover_shape`, :func:`error_data`, :func:`unsupported_version`), a listen stream's
acknowledgement, and what a fuzz sequence knows beyond its request (:func:`sequence_rules`).

Two expectations say which rules apply, and in which order the problems are listed:

- :class:`Expect`, declared by a row of the probe's table, judged by :func:`judge`: one status
  or a few, a result or one error code or any error, the id echoed or null, no body at all, an
  ``Allow`` header, rules of the result's shape. A check asserts only what it names.
- :class:`Demand`, read from a request as sent by the fuzzer's oracle
  (:func:`mcpwire_adapters.testing.fuzz.oracle.expect_for`), judged by :func:`judge_answer`
  after the rules every answer keeps whatever was sent (JSON-RPC 2.0 messages, a 200 of JSON or
  an event stream, a 202 with no body, an error with its code's HTTP status, a result of its
  schema type); :func:`judge_step` judges one step of a fuzz case by its kind.

The probe's multi-step checks (``probe/table.py``, ``probe/era_checks.py``) use these rules and
judge in their own steps only what belongs to their own sequence (a 2025-11-25 session, a
cancelled listen stream, a tampered round).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

import msgspec

from mcpwire.types import (
    CallToolResult,
    CompleteResult,
    DiscoverResult,
    GetPromptResult,
    InputRequiredResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    ReadResourceResult,
)

from .rawwire import BOM, NOT_JSON, SUB_KEY, VERSION, Reply, Request, media_type, sent_id

__all__ = [
    "ECHO", "ECHO_OR_NULL", "NULL", "STATUS_OF", "STEP_KINDS", "Demand", "Expect", "TargetFacts", "acknowledged_rule",
    "allow_rule",
    "cacheable", "code_rule", "discover_shape", "empty_rule", "error_data", "error_rule", "id_rule", "jsonrpc_fault",
    "judge", "judge_answer", "judge_step", "refusal_rule", "result_rule", "schema_rule", "sequence_rules",
    "status_of_code_rule", "status_rule", "unanswered_rule", "unsupported_version", "valid_id", "validity",
]

ECHO: Final = "echo"  # the response carries the request's id
NULL: Final = "null"  # the response's id is null
ECHO_OR_NULL: Final = "echo-or-null"
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
# The HTTP status of each error code sent as JSON (specification 2026-07-28: Basic, Error codes;
# the -32600 of a refusal before the body is read goes with that refusal's status; -32603 may also
# be 503 when overloaded). A -32602 or -32603 met while executing (an unknown tool, a bad argument,
# a crash) may come with 200: the specification fixes 400 only for the three MCP errors (-32020,
# -32021, -32022); a 400 for -32602 and a 500 for -32603 are mcpwire's choice, not a rule.
STATUS_OF = {-32700: {400}, -32600: {400, 403, 405, 406, 413, 415}, -32601: {404}, -32602: {400, 200}, -32020: {400},
             -32021: {400}, -32022: {400}, -32603: {500, 503, 200}}
# The typed result of each method (mcpwire.types mirrors the official schema, unknown members
# allowed): a result that does not decode as its type is not schema-valid.
RESULT_TYPES: dict[str, Any] = {
    "server/discover": DiscoverResult, "tools/list": ListToolsResult, "prompts/list": ListPromptsResult,
    "resources/list": ListResourcesResult, "resources/templates/list": ListResourceTemplatesResult,
    "resources/read": ReadResourceResult, "prompts/get": GetPromptResult, "tools/call": CallToolResult,
    "completion/complete": CompleteResult}
MRTR_METHODS = ("tools/call", "prompts/get", "resources/read")
# How a fuzz step is judged (a replay file's "judge"): by the oracle from the request alone; or,
# where the sequence knows more, "error" (a round whose requestState was altered), "listen" (a
# subscription's first event), "lines" (stdio framing: only each line's validity is certain).
STEP_KINDS = ("oracle", "error", "listen", "lines")


class TargetFacts(Protocol):
    """What the judge reads of a probe's target (a
    :class:`mcpwire_adapters.testing.probe.checks.Target`): stdio or HTTP, and its discover result."""

    @property
    def stdio(self) -> bool: ...

    @property
    def discover(self) -> dict[str, Any] | None: ...


@dataclass(frozen=True)
class Expect:
    """What a probe check expects a conforming server to answer: ``status`` (one or several),
    the JSON-RPC error ``code`` (None: a result), the ``id`` (ECHO the request's, NULL, or None:
    not looked at), ``empty`` (no body), the ``allow`` header, and ``more``: extra rules on the
    message (a list of problems)."""

    status: int | tuple[int, ...]
    code: int | None = None
    id: str | None = ECHO
    empty: bool = False
    allow: str | None = None
    more: Callable[[Any, TargetFacts], list[str]] | None = None
    refusable: bool = False  # with empty: on HTTP a 4xx whose body holds no response with an id also conforms
    any_error: bool = False  # an error of any code conforms (the specification only says which SHOULD be used)


@dataclass(frozen=True)
class Demand:
    """What a request calls for, as the fuzzer's oracle reads it. ``silent``: no answer (HTTP 202
    with no body); ``codes``: an error with one of these codes (None: a result or any error);
    ``statuses``: the HTTP status (None: any); ``id``: ECHO (the request's), NULL, ECHO_OR_NULL
    or None (not looked at); ``why``: the rules behind it, for the report."""

    silent: bool = False
    codes: frozenset[int] | None = None
    statuses: frozenset[int] | None = None
    id: str | None = None
    why: tuple[str, ...] = field(default_factory=tuple)

    @property
    def reason(self) -> str | None:
        """The first rule behind it (what a problem cites), if any."""
        return self.why[0] if self.why else None


# -- the rules ------------------------------------------------------------------------------------------
def valid_id(value: Any) -> bool:
    """Schema $defs RequestId: a string of at most 256 bytes or an integer in the int64 range."""
    if isinstance(value, str):
        return len(value.encode("utf-8", "surrogatepass")) <= 256
    return isinstance(value, int) and not isinstance(value, bool) and INT64_MIN <= value <= INT64_MAX


def status_rule(status: int, allowed: Collection[int], *, why: str | None = None) -> list[str]:
    """The HTTP status is one of ``allowed``."""
    if status in allowed:
        return []
    return [f"HTTP status {status}, expected {_listed(allowed)}" + _cited(why)]


def allow_rule(reply: Reply, methods: str) -> list[str]:
    """The ``Allow`` header names exactly ``methods``."""
    allow = reply.header("allow")
    if allow is None or [m.strip().upper() for m in allow.split(",")] != [methods]:
        return [f"Allow header {allow!r}, expected {methods!r}"]
    return []


def empty_rule(reply: Reply, *, stdio: bool) -> list[str]:
    """No body at all (on stdio: no line but the sentinel's answer)."""
    if not reply.body:
        return []
    return [f"{len(reply.body.splitlines())} lines in reply, expected none" if stdio
            else f"a body of {len(reply.body)} bytes, expected none"]


def refusal_rule(reply: Reply) -> list[str]:
    """A notification or response the server cannot accept is an HTTP error whose body MAY be a
    JSON-RPC error that has no id (streamable-http, sending messages to the server): no
    message in it with an id."""
    answered = [m for m in reply.messages() if isinstance(m, dict) and m.get("id") is not None]
    return [f"{len(answered)} response(s) with an id, expected none"] if answered else []


def unanswered_rule(responses: Sequence[dict[str, Any]], *, refused: bool, why: str | None) -> list[str]:
    """A notification or a posted response gets no response (``refused``: an HTTP error, whose
    body may hold an error without id, streamable-http#sending-messages)."""
    if refused:
        responses = [r for r in responses if r.get("id") is not None or "result" in r]
    return [f"{len(responses)} response(s) to a message that gets none" + _cited(why)] if responses else []


def result_rule(answer: dict[str, Any]) -> list[str]:
    """The response is a result."""
    return [] if "result" in answer else [f"an error {_short(answer.get('error'))}, expected a result"]


def error_rule(answer: dict[str, Any]) -> list[str]:
    """The response is an error (of any code)."""
    return [] if "error" in answer else ["a result, expected an error"]


def code_rule(answer: dict[str, Any], codes: Collection[int], *, why: str | None = None) -> list[str]:
    """The response is an error with one of ``codes``."""
    error = answer.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    if any(code == c for c in codes):
        return []
    if error is None:
        return [f"a result, expected error {_listed(codes)}" + _cited(why)]
    return [f"error code {code!r}, expected {_listed(codes)}" + _cited(why)]


def id_rule(answer: dict[str, Any], rule: str | None, sent: Any, *, why: str | None = None) -> list[str]:
    """The response's id: ECHO ``sent``, NULL, ECHO_OR_NULL (either), or None (not looked at)."""
    got = answer.get("id")
    if rule == ECHO and got != sent:
        return [f"id {got!r}, expected the request's id {sent!r}"]
    if rule == NULL and answer.get("id", "absent") is not None:
        return [f"id {answer.get('id', 'absent')!r}, expected null" + _cited(why)]
    if rule == ECHO_OR_NULL and got is not None and got != sent:
        return [f"id {got!r}, expected the request's id {sent!r} or null"]
    return []


def jsonrpc_fault(message: Any) -> str | None:
    """Why ``message`` is not a JSON-RPC 2.0 message a server may send (None: it is)."""
    if not isinstance(message, dict):
        return f"not a JSON-RPC message: {_short(message, 160)}"
    if message.get(NOT_JSON) == "not JSON":
        return f"not JSON: {_short(message.get('text'), 160)}"
    if message.get("jsonrpc") != "2.0":
        return f"jsonrpc {message.get('jsonrpc')!r}, expected '2.0': {_short(message, 160)}"
    if "method" in message:
        if not isinstance(message["method"], str):
            return f"a method that is not a string: {_short(message, 160)}"
        if "id" in message:
            return f"a request to the client (none in this revision: basic/patterns/mrtr): {_short(message, 160)}"
        return None
    if ("result" in message) == ("error" in message):
        return f"a response needs exactly one of result and error: {_short(message, 160)}"
    if "id" not in message or not (message["id"] is None or valid_id(message["id"])):
        return f"a response id must be a string, an integer or null: {_short(message, 160)}"
    if "error" in message:
        error = message["error"]
        if not isinstance(error, dict) or not isinstance(error.get("code"), int) or isinstance(error.get("code"), bool) \
                or not isinstance(error.get("message"), str):
            return f"an error needs an integer code and a string message: {_short(message, 160)}"
    elif not isinstance(message["result"], dict):
        return f"a result must be an object: {_short(message, 160)}"
    return None


def validity(reply: Reply) -> list[str]:
    """Only the rule every message keeps: it is JSON-RPC a server may send."""
    return [p for p in map(jsonrpc_fault, reply.messages() if reply.body else []) if p]


def status_of_code_rule(code: Any, status: int) -> list[str]:
    """An error sent as JSON comes with the HTTP status its code goes with (:data:`STATUS_OF`)."""
    if isinstance(code, int) and code in STATUS_OF and status not in STATUS_OF[code]:
        return [f"error {code} with HTTP {status}, basic#error-codes gives {_listed(STATUS_OF[code])}"]
    return []


def schema_rule(request: Request, result: Any) -> list[str]:
    """The result decodes as the schema type of the request's method (only a method this
    revision has, and a complete or input_required result: a task is another shape)."""
    try:
        message = json.loads(request.body.removeprefix(BOM))
    except ValueError:
        return []
    method = message.get("method") if isinstance(message, dict) else None
    if not isinstance(method, str) or method not in RESULT_TYPES or not isinstance(result, dict):
        return []
    kind = result.get("resultType", "complete")
    if kind == "input_required":
        if method not in MRTR_METHODS:
            return [f"an input_required result to {method} (basic/patterns/mrtr: only tools/call, prompts/get, "
                    "resources/read)"]
        target = InputRequiredResult
    elif kind == "complete":
        target = RESULT_TYPES[method]
    else:
        return []
    try:
        msgspec.convert(result, type=target, strict=True)
    except msgspec.ValidationError as exc:
        return [f"the result is not a valid {target.__name__} (schema): {exc}"]
    return []


def cacheable(key: str) -> Callable[[Any, TargetFacts], list[str]]:
    """specification: Server > Utilities > Caching: the six cacheable results carry ttlMs (integer >= 0) and cacheScope."""
    def rule(answer: Any, target: TargetFacts) -> list[str]:
        result = answer.get("result")
        if not isinstance(result, dict):
            return ["the result is not an object"]
        problems = []
        if not isinstance(result.get(key), list):
            problems.append(f"no {key} array")
        ttl = result.get("ttlMs")
        if not isinstance(ttl, int) or isinstance(ttl, bool) or ttl < 0:
            problems.append(f"ttlMs {ttl!r}, expected an integer >= 0")
        if result.get("cacheScope") not in ("public", "private"):
            problems.append(f"cacheScope {result.get('cacheScope')!r}, expected public or private")
        if result.get("resultType", "complete") != "complete":
            problems.append(f"resultType {result.get('resultType')!r}, expected complete")
        return problems
    return rule


def discover_shape(answer: Any, target: TargetFacts) -> list[str]:
    """specification: Server > Discovery: resultType, supportedVersions (with this revision), capabilities, ttlMs, cacheScope."""
    problems = cacheable("supportedVersions")(answer, target)
    result = answer.get("result")
    if isinstance(result, dict):
        if "resultType" not in result:
            problems.append("no resultType")
        versions = result.get("supportedVersions")
        if isinstance(versions, list) and VERSION not in versions:
            problems.append(f"supportedVersions {versions!r} lacks {VERSION}")
        if not isinstance(result.get("capabilities"), dict):
            problems.append("capabilities is not an object")
    return problems


def error_data(*keys: str) -> Callable[[Any, TargetFacts], list[str]]:
    """The error's ``data`` is an object holding ``keys``."""
    def rule(answer: Any, target: TargetFacts) -> list[str]:
        data = answer["error"].get("data")
        return [f"error.data {_short(data)} lacks {k}" for k in keys if not isinstance(data, dict) or k not in data]
    return rule


def unsupported_version(answer: Any, target: TargetFacts) -> list[str]:
    """$defs.UnsupportedProtocolVersionError: data.requested is what was sent, data.supported a non-empty subset
    of discover's supportedVersions."""
    data = answer["error"].get("data")
    if not isinstance(data, dict):
        return [f"error.data {_short(data)}, expected requested and supported"]
    problems = []
    if data.get("requested") != "v999.0.0":
        problems.append(f"data.requested {data.get('requested')!r}, expected 'v999.0.0'")
    supported = data.get("supported")
    offered = (target.discover or {}).get("supportedVersions")
    if not isinstance(supported, list) or not supported:
        problems.append(f"data.supported {supported!r}, expected a non-empty list")
    elif isinstance(offered, list) and not set(map(str, supported)) <= set(map(str, offered)):
        problems.append(f"data.supported {supported!r} is not a subset of supportedVersions {offered!r}")
    return problems


def acknowledged_rule(messages: Sequence[Any], listen_id: Any) -> list[str]:
    """A listen stream the server can serve (a well-formed subscriptions/listen for list changes
    it advertises) starts with notifications/subscriptions/acknowledged, carrying the listen
    request's id as its subscriptionId and a notifications object (basic/patterns/subscriptions).
    A fuzz case's listen may be mutated, so :func:`sequence_rules` holds it to less."""
    first = messages[0] if messages else None
    if not isinstance(first, dict) or first.get("method") != "notifications/subscriptions/acknowledged":
        return [f"first message {json.dumps(first)[:120]}, expected notifications/subscriptions/acknowledged"]
    problems = []
    params: dict[str, Any] = first["params"] if isinstance(first.get("params"), dict) else {}
    sub = params["_meta"].get(SUB_KEY) if isinstance(params.get("_meta"), dict) else None
    if sub != listen_id:
        problems.append(f"subscriptionId {sub!r}, expected the listen request's id {listen_id!r}")
    if not isinstance(params.get("notifications"), dict):
        problems.append("the acknowledgement has no notifications object")
    return problems


def sequence_rules(kind: str, messages: Sequence[Any]) -> list[str]:
    """What a fuzz sequence knows beyond the request (step ``kind`` "error" or "listen"): a round
    whose ``requestState`` was altered gets an error (basic/patterns/mrtr); a listen stream
    starts with its acknowledgement (basic/patterns/subscriptions)."""
    found = next((m.get("result") for m in messages if isinstance(m, dict) and "result" in m), None)
    if kind == "error" and isinstance(found, dict):
        return ["a result for a round whose requestState was altered: expected an error (basic/patterns/mrtr)"]
    if kind == "listen":
        first = messages[0] if messages else None
        if isinstance(first, dict) and "method" in first and first.get("method") != "notifications/subscriptions/acknowledged":
            return [f"the first message of a listen stream is {first.get('method')!r}, expected "
                    "notifications/subscriptions/acknowledged (basic/patterns/subscriptions)"]
        if isinstance(first, dict) and first.get("method") == "notifications/subscriptions/acknowledged":
            params = first.get("params")
            meta_ = params.get("_meta") if isinstance(params, dict) else None
            if isinstance(meta_, dict) and SUB_KEY in meta_ and not isinstance(meta_[SUB_KEY], (str, int)):
                return [f"subscriptionId {meta_[SUB_KEY]!r} is not an id"]
    return []


# -- a probe check: what its row expects ---------------------------------------------------------------
def judge(expect: Expect, request: Request, reply: Reply, target: TargetFacts) -> list[str]:
    """The problems with ``reply`` to a probe check's ``request`` (empty: it conforms)."""
    problems = []
    allowed = expect.status if isinstance(expect.status, tuple) else (expect.status,)
    if expect.refusable and not target.stdio and 400 <= reply.status < 500:
        return refusal_rule(reply)
    if not target.stdio:
        problems += status_rule(reply.status, allowed)
    if expect.allow is not None and not target.stdio:
        problems += allow_rule(reply, expect.allow)
    if expect.empty:
        return problems + empty_rule(reply, stdio=target.stdio)
    if expect.code is None and expect.id is None and expect.more is None:
        return problems
    answers = [m for m in reply.messages() if isinstance(m, dict) and ("result" in m or "error" in m)]
    if len(answers) != 1:
        return [*problems, f"{len(answers)} JSON-RPC responses in the body, expected 1"]
    answer = answers[0]
    if expect.any_error:
        kind = error_rule(answer)
    elif expect.code is None:
        kind = result_rule(answer)
    else:
        kind = code_rule(answer, (expect.code,))
    problems += kind
    problems += id_rule(answer, expect.id, request.rpc_id)
    if expect.more is not None and not kind:  # the shape of a result or error of the kind expected
        problems += expect.more(answer, target)
    return problems


# -- a fuzz case: what the request demands, and what every answer keeps ---------------------------------
def judge_answer(request: Request, reply: Reply, demand: Demand, *, stdio: bool) -> list[str]:
    """The problems with ``reply`` to ``request`` (empty: it conforms), which ``demand``s
    ``demand``; every message is held to :func:`jsonrpc_fault` too."""
    problems: list[str] = []
    kind = media_type(reply.header("content-type") or "")
    if not stdio:
        if demand.statuses is not None:
            problems += status_rule(reply.status, demand.statuses, why=demand.reason)
        if reply.status == 200 and kind not in ("application/json", "text/event-stream"):
            problems.append(f"a 200 with Content-Type {kind or 'none'!r} (streamable-http#message-flow: JSON or an event stream)")
        if reply.status == 202 and reply.body:
            problems.append(f"a 202 with a body of {len(reply.body)} bytes")
        if reply.status >= 300 and kind != "application/json":
            return problems  # a refusal's body need not be JSON-RPC
    responses = []
    for message in reply.messages() if reply.body else []:
        fault = jsonrpc_fault(message)
        if fault:
            problems.append(fault)
        elif "method" not in message:
            responses.append(message)
    if demand.silent:
        return problems + unanswered_rule(responses, refused=not stdio and reply.status >= 400, why=demand.reason)
    sent = sent_id(request)
    if stdio:
        # Requests may run concurrently on stdio (basic/transports/stdio): a line may answer an earlier
        # message, so only the answers carrying this request's id (or null, where it may) are its.
        responses = [r for r in responses if (r.get("id") == sent and sent is not None)
                     or (r.get("id") is None and demand.id in (NULL, ECHO_OR_NULL))]
        responses = responses[-1:] if all(r.get("id") is None for r in responses) else responses
    if not responses:
        if demand.id is not None and (stdio or reply.status in (200, 202) or kind == "application/json"):
            problems.append("no response to a request" + (f" (HTTP {reply.status})" if not stdio else ""))
        return problems
    if len(responses) > 1 and not stdio:  # on stdio an earlier line's late answer may share the id
        problems.append(f"{len(responses)} responses to one request")
    answer = responses[-1]
    problems += id_rule(answer, demand.id, sent, why=demand.reason)
    if demand.codes is not None:
        problems += code_rule(answer, demand.codes, why=demand.reason)
    error = answer.get("error")
    if not stdio and kind == "application/json":
        problems += status_of_code_rule(error.get("code") if isinstance(error, dict) else None, reply.status)
    if "result" in answer:
        problems += schema_rule(request, answer["result"])
    if not stdio and kind == "application/json" and "result" in answer and reply.status != 200:
        problems.append(f"a result with HTTP {reply.status}")
    return problems


def judge_step(kind: str, request: Request, reply: Reply | None, error: str | None,
               demand: Callable[[], Demand], *, stdio: bool) -> list[str]:
    """Every problem with the answer to one step of a fuzz case, judged as its ``kind`` (one of
    :data:`STEP_KINDS`) says; ``demand`` gives what the request demands (the oracle). No answer
    at all is a problem."""
    if reply is None:
        return [f"no answer: {error}"]
    if error is not None:  # some lines, then silence
        return [f"no complete answer: {error}"]
    if kind == "lines":
        return validity(reply)
    problems = judge_answer(request, reply, demand(), stdio=stdio)
    if kind == "listen":  # only the stream's first event was read
        problems = [p for p in problems if not p.startswith("no response")]
    return problems + sequence_rules(kind, reply.messages() if reply.body else [])


# -- wording ---------------------------------------------------------------------------------------------
def _listed(values: Collection[int]) -> str:
    """Alternatives as the reports list them: a sequence in its order; a set sorted, and as a
    range when it holds more than 20."""
    if isinstance(values, (set, frozenset)):
        if len(values) > 20:
            return f"{min(values)}-{max(values)}"
        values = sorted(values)
    return " or ".join(map(str, values))


def _cited(why: str | None) -> str:
    return f" ({why})" if why else ""


def _short(value: Any, width: int = 120) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) < width else text[:width - 3] + "..."
