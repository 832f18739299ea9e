"""The probe's checks of the initialize era that every transport shares (:data:`ERA_CHECKS`):
version negotiation, the InitializeResult, ping, the ids, an unknown method, a parse error, a
notification, tools/list, tasks, and batches (received in 2025-03-26; refused, as this project's
convention, later). Each runs in every revision the server negotiated whose text states its rule,
over Streamable HTTP (a session of its own), stdio (the process the runner initialized for the
revision) and, for 2024-11-05, HTTP+SSE (a connection of its own):
:mod:`mcpwire_adapters.testing.probe.era_channel` carries the messages, and each problem cites the
sentence of the revision it ran in (:meth:`~mcpwire_adapters.testing.probe.checks.Target.rule`).

The HTTP-only rules (sessions, the version header, the GET stream, resumption, the origin) are in
:mod:`mcpwire_adapters.testing.probe.era_http`; stdio's framing in
:mod:`mcpwire_adapters.testing.probe.era_stdio`; HTTP+SSE's own in
:mod:`mcpwire_adapters.testing.probe.legacy_checks`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from ..era_rules import ERA_REVISIONS, SESSION_REVISIONS
from ..era_wire import ERA_BASE, initialize, notification, request, response_of
from ..judge import ECHO, ECHO_OR_NULL, NULL, Expect, id_rule, id_rules, judge, problem, rule, validity
from ..rawwire import Exchange, Request, Send
from ..rawwire_sse import legacy_link
from ..rawwire_stdio import ping_sentinel, stdio_sender
from ..verdict import NOT_APPLICABLE, PASS, Outcome, Problem
from .checks import HTTP_SSE, STDIO, STREAMABLE_HTTP, Check, Target
from .era_channel import Call, Channel, channel
from .exact_ids import IDS

__all__ = ["ERA_CHECKS", "with_channel"]

ALL = (STREAMABLE_HTTP, STDIO, HTTP_SSE)
NOT_LEGACY = (STREAMABLE_HTTP, STDIO)
LIFECYCLE, PING = "basic/lifecycle#version-negotiation", "basic/utilities/ping#behavior-requirements"
INITIALIZATION, MESSAGES, BATCHING = "basic/lifecycle#initialization", "basic#responses", "basic#batching"
TASKS = "basic/utilities/tasks#protocol-errors"
Run = Callable[[Target, Channel, list[Exchange]], Awaitable[Outcome]]


def with_channel(run: Run) -> Callable[[Target, Send], Awaitable[Outcome]]:
    """A check's steps: ``run`` on a channel of the target's revision and transport (not
    applicable when none opens: the server negotiated no such session)."""
    async def steps(target: Target, send: Send) -> Outcome:
        evidence: list[Exchange] = []
        async with channel(target, send, evidence) as opened:
            if isinstance(opened, str):
                return Outcome(NOT_APPLICABLE, opened, evidence)
            return await run(target, opened, evidence)
    return steps


def judged(target: Target, call: Call, expects: Expect | tuple[Expect, ...], evidence: list[Exchange],
           note: str = "") -> Outcome:
    """``call``'s answer judged against ``expects`` (no reply at all breaks JSON-RPC's MUST)."""
    evidence.extend(call.exchanges)
    if call.reply is None:
        return Outcome.broken(rule("jsonrpc.reply"), f"no reply: {call.error}", evidence)
    return Outcome.judged(judge(expects, call.request, call.reply, target), evidence, note)


# -- version negotiation and the InitializeResult ----------------------------------------------------------
async def _negotiates(target: Target, send: Send) -> Outcome:
    """An initialize naming a revision nobody has gets another revision the server supports (or
    an error, as the lifecycle page's example of an initialization error shows)."""
    message = initialize("1999-01-01", "init-old")
    evidence: list[Exchange] = []
    if target.transport == STDIO:
        async with stdio_sender(target.command, timeout=target.timeout, sentinel=ping_sentinel) as own:
            sent = await own(Request("POST", (), json.dumps(message).encode(), rpc_id="init-old", answered=True))
        evidence.append(sent)
    elif target.transport == HTTP_SSE:
        async with legacy_link(target.url, timeout=target.timeout, rate=target.rate,
                                   headers=target.auth_headers()) as link:
            evidence.append(link.stream.exchange())
            evidence.append(await link.post(message))
            sent = await link.answer("init-old")
            evidence.append(sent)
    else:
        sent = await send(Request("POST", ERA_BASE, json.dumps(message).encode(), rpc_id="init-old"))
        evidence.append(sent)
    answer = response_of(sent[1])
    if answer is None:
        return Outcome.broken(rule("jsonrpc.reply"), f"no response to initialize: {sent[2] or 'none in the reply'}",
                              evidence)
    result = answer.get("result")
    if not isinstance(result, dict):
        return Outcome(PASS, "answered with an error (the lifecycle page's example of an initialization error)",
                       evidence)
    version = result.get("protocolVersion")
    if not isinstance(version, str) or version == "1999-01-01":
        return Outcome.broken(rule(target.rule("era.version-negotiation")),
                              f"protocolVersion {version!r}: expected another revision the server supports", evidence)
    return Outcome(PASS, f"answered {version}", evidence)


async def _initialize_result(target: Target, opened: Channel, evidence: list[Exchange]) -> Outcome:
    """The InitializeResult has the members the schema requires."""
    evidence.extend(target.opening)
    result = opened.initialized
    problems: list[str] = []
    info = result.get("serverInfo")
    if not isinstance(result.get("capabilities"), dict):
        problems.append(f"capabilities {json.dumps(result.get('capabilities'))[:80]}, expected an object")
    if not isinstance(info, dict) or not isinstance(info.get("name"), str) or not isinstance(info.get("version"), str):
        problems.append(f"serverInfo {json.dumps(info)[:80]}, expected an object with a string name and version")
    broken = rule(target.rule("era.initialize-result"))
    return Outcome.judged([Problem(p, broken) for p in problems], evidence)


# -- requests every revision has -------------------------------------------------------------------------------
def _empty(rule_id: str) -> Callable[[Any, Any], list[Problem]]:
    def more(answer: Any, facts: Any) -> list[Problem]:
        result = answer.get("result")
        if isinstance(result, dict) and not set(result) - {"_meta"}:  # _meta is reserved on every result
            return []
        return [problem(rule_id, f"ping answered {json.dumps(result)[:100]}, expected an empty result")]
    return more


async def _ping(target: Target, opened: Channel, evidence: list[Exchange]) -> Outcome:
    call = await opened.call(request("ping", "ping-1"))
    return judged(target, call, Expect(None, id=ECHO, more=_empty(target.rule("era.ping")),
                                       rule=target.rule("era.ping")), evidence)


async def _ids(target: Target, opened: Channel, evidence: list[Exchange]) -> Outcome:
    """A ping per id of :data:`~mcpwire_adapters.testing.probe.exact_ids.IDS`, each answer
    carrying that id exactly (an error may carry null)."""
    problems: list[Problem] = []
    for rpc_id in IDS:
        call = await opened.call(request("ping", rpc_id), answered=None)
        evidence.extend(call.exchanges)
        answer = call.answer()
        if answer is not None:
            problems += [p for p in id_rule(answer, ECHO_OR_NULL, rpc_id, echo=id_rules(target.revision))
                         if p not in problems]
    return Outcome.judged(problems, evidence)


async def _unknown_method(target: Target, opened: Channel, evidence: list[Exchange]) -> Outcome:
    call = await opened.call(request("mcpwire/no-such-method", "unknown-1"))
    return judged(target, call, (Expect(None, id=ECHO, any_answer=True, rule="jsonrpc.reply"),
                                 Expect(None, -32601, id=None, rule="mcpwire.era-method-not-found")), evidence)


async def _null_id(target: Target, opened: Channel, evidence: list[Exchange]) -> Outcome:
    """A request with ``"id": null`` is a request (JSON-RPC 2.0 section 4: only one without an id
    is a notification), refused by MCP (its ids are never null): an answer comes, with a null id."""
    call = await opened.call(request("ping", None), answered=None)
    return judged(target, call, (Expect(None, id=NULL, any_answer=True, rule="jsonrpc.reply"),
                                 Expect(None, -32600, id=None, rule="mcpwire.invalid-request")), evidence)


async def _parse_error(target: Target, opened: Channel, evidence: list[Exchange]) -> Outcome:
    call = await opened.call(raw=b'{"jsonrpc": "2.0", "id": 1,')
    if opened.link is not None and call.status >= 400 and not (call.reply and call.reply.messages()):
        # HTTP+SSE: the POST itself refused, so the message never became JSON-RPC; 2024-11-05 says
        # nothing of how a POST is answered.
        evidence.extend(call.exchanges)
        return Outcome.judged([problem("mcpwire.parse-error", f"refused with HTTP {call.status} and no JSON-RPC "
                                                              "error (-32700) on the stream")], evidence)
    return judged(target, call, (Expect(None, id=NULL, any_error=True, rule="jsonrpc.error-member"),
                                 Expect(None, -32700, id=None, rule="mcpwire.parse-error")), evidence)


async def _notification(target: Target, opened: Channel, evidence: list[Exchange]) -> Outcome:
    """A notification gets no response: on Streamable HTTP 202 with no body, or an HTTP error
    when the server cannot accept it; on stdio and on the SSE stream, nothing."""
    call = await opened.call(notification("notifications/cancelled", {"requestId": "never-sent"}), answered=False)
    evidence.extend(call.exchanges)
    if call.reply is None:
        return Outcome.broken(rule("jsonrpc.reply"), f"no reply: {call.error}", evidence)
    silent = target.rule("era.notification-silent") if target.revision in SESSION_REVISIONS else "jsonrpc.notification"
    answered = [m for m in call.reply.messages() if isinstance(m, dict) and ("result" in m or "error" in m)]
    if target.transport == STREAMABLE_HTTP:
        if 400 <= call.status < 500:
            answered = [m for m in answered if m.get("id") is not None]  # a refusal's body may be an error without id
            return Outcome.judged([problem(target.rule("era.notification-202"), f"{len(answered)} response(s) with an "
                                           "id in the refusal")] if answered else [], evidence,
                                  f"refused with HTTP {call.status}")
        problems = [] if call.status == 202 else [problem(target.rule("era.notification-202"),
                                                           f"HTTP status {call.status}, expected 202")]
        if call.reply.body:
            problems.append(problem(target.rule("era.notification-202"), f"a body of {len(call.reply.body)} bytes, "
                                                                          "expected none"))
        return Outcome.judged(problems, evidence)
    problems = [problem(silent, f"{len(answered)} response(s) to a notification")] if answered else []
    if target.transport == HTTP_SSE and call.status != 202:
        problems.append(problem("mcpwire.legacy-post-status", f"the POST was answered HTTP {call.status}"))
    return Outcome.judged(problems, evidence)


def _tools_shape(answer: Any, facts: Any) -> list[Problem]:
    if "result" not in answer:
        return []  # an error is an answer too (no text makes tools/list succeed)
    result = answer.get("result")
    tools = result.get("tools") if isinstance(result, dict) else None
    if not isinstance(tools, list) or not all(isinstance(t, dict) and isinstance(t.get("name"), str)
                                              and isinstance(t.get("inputSchema"), dict) for t in tools):
        return [problem("jsonrpc.result-by-method", "the result is not a ListToolsResult (schema): a tools array, "
                                                   "each with a string name and an inputSchema object")]
    return []


async def _tools_list(target: Target, opened: Channel, evidence: list[Exchange]) -> Outcome:
    if not isinstance(opened.initialized.get("capabilities"), dict) or "tools" not in opened.initialized["capabilities"]:
        return Outcome(NOT_APPLICABLE, "the server declares no tools capability", evidence)
    call = await opened.call(request("tools/list", "tools-1", {}))
    return judged(target, call, Expect(None, id=ECHO, any_answer=True, more=_tools_shape, rule="jsonrpc.reply"),
                  evidence)


async def _task_unknown(target: Target, opened: Channel, evidence: list[Exchange]) -> Outcome:
    caps = opened.initialized.get("capabilities")
    if not isinstance(caps, dict) or not isinstance(caps.get("tasks"), dict):
        return Outcome(NOT_APPLICABLE, "the server declares no tasks capability", evidence)
    call = await opened.call(request("tasks/get", 6, {"taskId": "mcpwire-probe-no-such-task"}))
    return judged(target, call, Expect(None, -32602, rule=target.rule("era.tasks-unknown")), evidence)


# -- batches ---------------------------------------------------------------------------------------------------
_BATCH = [request("ping", "batch-1"), request("ping", "batch-2")]


async def _batch_received(target: Target, opened: Channel, evidence: list[Exchange]) -> Outcome:
    """2025-03-26: a batch of two pings gets a response for each (an array, or one message each)."""
    call = await opened.call(_BATCH, rpc_id="batch-2")
    evidence.extend(call.exchanges)
    if call.reply is None:
        return Outcome.broken(rule(target.rule("era.batch-receive")), f"no response to a batch of two pings: {call.error}",
                              evidence)
    # (on stdio every line is era.stdio-output's to judge)
    problems: list[Problem] = [] if opened.stdio else validity(call.reply, revision=target.revision)
    found = [m for message in call.reply.messages() for m in (message if isinstance(message, list) else [message])
             if isinstance(m, dict) and ("result" in m or "error" in m)]
    for sent in ("batch-1", "batch-2"):
        if not any(m.get("id") == sent for m in found):
            problems.append(problem(target.rule("era.batch-receive"), f"no response with id {sent!r} to a batch of "
                                    f"two pings ({'HTTP ' + str(call.status) if call.status else 'stdio'})"))
    return Outcome.judged(problems, evidence)


async def _batch_refused(target: Target, opened: Channel, evidence: list[Exchange]) -> Outcome:
    """2025-06-18 on: a batch is no message of the revision; whatever answers is still
    JSON-RPC (MUST), and this project refuses it with -32600 and a null id (advice)."""
    call = await opened.call(_BATCH, answered=False) if opened.stdio else await opened.call(_BATCH)
    evidence.extend(call.exchanges)
    if call.reply is None:
        return Outcome.broken(rule("jsonrpc.reply"), f"no reply: {call.error}", evidence)
    problems: list[Problem] = [] if opened.stdio else validity(call.reply, revision=target.revision)
    answers = [m for m in call.reply.messages() if isinstance(m, dict) and "error" in m]
    code = answers[0]["error"].get("code") if len(answers) == 1 and isinstance(answers[0]["error"], dict) else None
    if code != -32600 or answers[0].get("id") is not None or (call.status not in (0, 400)):
        problems.append(problem("mcpwire.era-no-batch", f"{'HTTP ' + str(call.status) + ' ' if call.status else ''}"
                                f"{json.dumps(call.reply.messages())[:120]}, expected one error -32600 with a null id"))
    return Outcome.judged(problems, evidence)


def _era(cid: str, title: str, cites: str, sends: str, run: Run, enforces: tuple[str, ...], *,
         revisions: tuple[str, ...] = ERA_REVISIONS, transports: tuple[str, ...] = ALL) -> Check:
    return Check(f"era.{cid}", title, cites, sends, steps=with_channel(run), enforces=enforces, revisions=revisions,
                 transports=transports)


ERA_CHECKS: tuple[Check, ...] = (
    Check("era.version-negotiation", "initialize naming an unknown revision gets one the server supports", LIFECYCLE,
          "initialize with protocolVersion \"1999-01-01\" (on stdio, to a process of its own)", steps=_negotiates,
          enforces=("era.version-negotiation",), revisions=ERA_REVISIONS, transports=ALL),
    _era("initialize-result", "the InitializeResult has protocolVersion, capabilities and serverInfo", INITIALIZATION,
         "initialize naming the revision", _initialize_result, ("era.initialize-result",)),
    _era("ping", "ping answers an empty result with its id", PING, "ping", _ping, ("era.ping", "era.result-id")),
    _era("ids-echoed", "every id comes back exactly as sent", MESSAGES, "ping with ids 0, -1, 7, 2**31, 2**53+1, "
         "2**63-1, -2**63, 2**63, 10**20, \"\", \"7\", unicode, an escape, 256, 257 and 1024 bytes", _ids,
         ("era.result-id", "era.error-id")),
    _era("unknown-method", "an unknown method is answered, its id echoed (-32601)", MESSAGES,
         "a request for mcpwire/no-such-method", _unknown_method, ("jsonrpc.reply", "mcpwire.era-method-not-found")),
    _era("id-null-answered", "a request with \"id\": null is answered (-32600), not taken for a notification",
         MESSAGES, "ping with \"id\": null", _null_id, ("jsonrpc.reply", "mcpwire.invalid-request")),
    _era("parse-error", "a message that is not JSON is an error with a null id (-32700)", MESSAGES,
         "the bytes '{\"jsonrpc\": \"2.0\", \"id\": 1,' (cut short)", _parse_error,
         ("jsonrpc.error-member", "mcpwire.parse-error")),
    _era("notification", "a notification gets no response (HTTP: 202 with no body, or refused)",
         "basic/transports#sending-messages-to-the-server", "notifications/cancelled for a request never sent",
         _notification, ("era.notification-202", "era.notification-silent", "jsonrpc.notification")),
    _era("tools-list", "tools/list answers the tools, each with a name and an inputSchema", MESSAGES,
         "tools/list (when tools are declared)", _tools_list, ("jsonrpc.reply", "jsonrpc.result-by-method")),
    _era("tasks-unknown", "tasks/get of an unknown task is -32602 (when tasks are declared)", TASKS,
         "tasks/get with a taskId the server never issued", _task_unknown, ("era.tasks-unknown",),
         revisions=("2025-11-25",), transports=NOT_LEGACY),
    _era("batch-received", "a batch of two pings gets both responses", BATCHING, "[ping, ping] as one message",
         _batch_received, ("era.batch-receive",), revisions=("2025-03-26",), transports=NOT_LEGACY),
    _era("batch-refused", "a batch, which the revision does not have, is refused (-32600)", MESSAGES,
         "[ping, ping] as one message", _batch_refused, ("era.jsonrpc", "mcpwire.era-no-batch"),
         revisions=("2025-11-25", "2025-06-18"), transports=NOT_LEGACY),
)
