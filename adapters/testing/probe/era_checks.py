"""The probe's checks of the initialize era: :data:`ERA_CHECKS`, a Streamable HTTP server's
sessions of revision 2025-11-25, each rule cited from that revision's specification; and the
2026-07-28 checks that must tell the two eras apart: :func:`post_only` (GET and DELETE) and
:func:`version_header_missing` (a request without MCP-Protocol-Version).

Each check opens a session of its own (``initialize`` naming 2025-11-25, then
``notifications/initialized``) and judges one rule of it. A server that answers ``initialize``
with no session (an error, or a stateless server) makes them not applicable. HTTP only: on stdio
an ``initialize`` would turn the probe's one connection into a session for the checks after it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from ..judge import ECHO_OR_NULL, Expect, empty_rule, judge, rule, status_rule
from ..rawwire import Exchange, Reply, Request, Send, headers, media_type, meta
from ..verdict import NOT_APPLICABLE, PASS, Outcome
from .checks import Check, Target

__all__ = ["ERA_CHECKS", "post_only", "version_header_missing"]

ERA = "2025-11-25"
# The pages cited, spelled out so that the citation test can check them.
SESSIONS = "https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#session-management"
VERSION_HEADER = "https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#protocol-version-header"
SENDING = "https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#sending-messages-to-the-server"
LISTENING = ("https://modelcontextprotocol.io/specification/2025-11-25/basic/transports"
             "#listening-for-messages-from-the-server")
LIFECYCLE = "https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#version-negotiation"
PING = "https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/ping#behavior-requirements"
TASK_ERRORS = "https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks#protocol-errors"

_BASE = (("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream"))


def _post(message: dict[str, Any], session: tuple[tuple[str, str], ...] = (), *, version: str | None = ERA) -> Request:
    extra = (("MCP-Protocol-Version", version),) if version is not None and session else ()
    return Request("POST", _BASE + session + extra, json.dumps(message).encode(), rpc_id=message.get("id"))


def _initialize(version: str = ERA, rpc_id: Any = "init") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rpc_id, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "mcpwire-probe", "version": "1"}}}


def _answer(reply: Reply | None) -> dict[str, Any] | None:
    """The one JSON-RPC response in a reply, or None."""
    found = [m for m in (reply.messages() if reply is not None else []) if isinstance(m, dict)
             and ("result" in m or "error" in m)]
    return found[0] if len(found) == 1 else None


async def _open(send: Send, evidence: list[Exchange]) -> tuple[tuple[str, str], ...] | str:
    """A new 2025-11-25 session: its ``Mcp-Session-Id`` header, or why there is none."""
    sent = await send(_post(_initialize()))
    evidence.append(sent)
    answer = _answer(sent[1])
    if sent[1] is None:
        return f"no reply to initialize: {sent[2]}"
    result = answer.get("result") if answer is not None else None
    if not isinstance(result, dict) or result.get("protocolVersion") != ERA:
        return f"initialize naming {ERA} opened no {ERA} session (HTTP {sent[1].status})"
    session_id = sent[1].header("mcp-session-id")
    if not session_id:
        return "the server issues no Mcp-Session-Id: it keeps no sessions"
    session = (("Mcp-Session-Id", session_id),)
    note = await send(_post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session))
    evidence.append(note)
    return session


def _session_check(run: Callable[[tuple[tuple[str, str], ...], Send, list[Exchange]], Awaitable[Outcome]],
                   ) -> Callable[[Target, Send], Awaitable[Outcome]]:
    async def steps(target: Target, send: Send) -> Outcome:
        evidence: list[Exchange] = []
        session = await _open(send, evidence)
        if isinstance(session, str):
            return Outcome(NOT_APPLICABLE, session, evidence)
        return await run(session, send, evidence)
    return steps


def _status(sent: Exchange, evidence: list[Exchange], allowed: tuple[int, ...], rule_id: str, *,
            empty: bool = False) -> Outcome:
    evidence.append(sent)
    reply = sent[1]
    if reply is None:
        return Outcome.broken(rule(rule_id), f"no reply: {sent[2]}", evidence)
    problems = status_rule(reply.status, allowed, rule_id=rule_id)
    if not problems and empty and reply.status < 300:
        problems = empty_rule(reply, stdio=False, rule_id=rule_id)
    return Outcome.judged(problems, evidence)


async def _negotiates(target: Target, send: Send) -> Outcome:
    """An initialize naming a revision nobody has is answered with a revision the server speaks."""
    sent = await send(_post(_initialize("1999-01-01", rpc_id="init-old")))
    answer = _answer(sent[1])
    if sent[1] is None:
        return Outcome.broken(rule("jsonrpc.reply"), f"no reply to initialize: {sent[2]}", [sent])
    if answer is None:
        return Outcome(NOT_APPLICABLE, "no JSON-RPC answer to initialize", [sent])
    result = answer.get("result")
    if not isinstance(result, dict):
        error = answer.get("error")
        return Outcome(NOT_APPLICABLE, f"initialize answered with an error {json.dumps(error)[:100]}: no initialize-era support",
                       [sent])
    version = result.get("protocolVersion")
    if not isinstance(version, str) or version == "1999-01-01":
        return Outcome.broken(rule("era.version-negotiation"),
                              f"protocolVersion {version!r}: expected another revision the server supports", [sent])
    return Outcome(PASS, "", [sent])


async def _ping(session: tuple[tuple[str, str], ...], send: Send, evidence: list[Exchange]) -> Outcome:
    sent = await send(_post({"jsonrpc": "2.0", "id": "ping-1", "method": "ping"}, session))
    evidence.append(sent)
    answer = _answer(sent[1])
    if answer is None or answer.get("id") != "ping-1":
        return Outcome.broken(rule("era.ping"), "no response to ping with its id", evidence)
    if answer.get("result") != {}:
        return Outcome.broken(rule("era.ping"), f"ping answered {json.dumps(answer)[:120]}, expected an empty result",
                              evidence)
    return Outcome(PASS, "", evidence)


SessionHeaders = tuple[tuple[str, str], ...]


def _ping_with(session_headers: Callable[[SessionHeaders], SessionHeaders], version: str | None, rpc_id: int,
               allowed: tuple[int, ...], rule_id: str) -> Callable[[SessionHeaders, Send, list[Exchange]], Awaitable[Outcome]]:
    """A ping sent with ``session_headers(session)`` (and ``version`` in MCP-Protocol-Version),
    judged by its HTTP status alone."""
    async def run(session: SessionHeaders, send: Send, evidence: list[Exchange]) -> Outcome:
        ping = {"jsonrpc": "2.0", "id": rpc_id, "method": "ping"}
        return _status(await send(_post(ping, session_headers(session), version=version)), evidence, allowed, rule_id)
    return run


_no_session_header = _ping_with(lambda session: (("MCP-Protocol-Version", ERA),), None, 2, (400,),
                                "era.session-required")
_unknown_session = _ping_with(lambda session: (("Mcp-Session-Id", "mcpwire-probe-no-such-session"),), ERA, 3, (404,),
                              "era.session-ended")
_bad_version = _ping_with(lambda session: session, "1999-01-01", 5, (400,), "era.version-header")
_ping_gone = _ping_with(lambda session: session, ERA, 4, (404,), "era.session-ended")


async def _deleted(session: SessionHeaders, send: Send, evidence: list[Exchange]) -> Outcome:
    gone = await send(Request("DELETE", _BASE + session + (("MCP-Protocol-Version", ERA),)))
    evidence.append(gone)
    if gone[1] is not None and gone[1].status == 405:
        return Outcome(NOT_APPLICABLE, "the server does not let clients end sessions (405)", evidence)
    return await _ping_gone(session, send, evidence)


async def _notification(session: tuple[tuple[str, str], ...], send: Send, evidence: list[Exchange]) -> Outcome:
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "never-sent"}}
    sent = await send(_post(note, session))
    if sent[1] is not None and 400 <= sent[1].status < 500:  # it cannot accept it: an HTTP error is the rule then
        evidence.append(sent)
        return Outcome(PASS, f"refused with HTTP {sent[1].status}", evidence)
    return _status(sent, evidence, (202,), "era.notification-202", empty=True)


async def _get_stream(session: tuple[tuple[str, str], ...], send: Send, evidence: list[Exchange]) -> Outcome:
    headers = (("Accept", "text/event-stream"), *session, ("MCP-Protocol-Version", ERA))
    sent = await send(Request("GET", headers, head_only=True))
    outcome = _status(sent, evidence, (200, 405), "era.get-stream")
    reply = sent[1]
    if outcome.status == PASS and reply is not None and reply.status == 200:
        kind = media_type(reply.header("content-type") or "")
        if kind != "text/event-stream":
            return Outcome.broken(rule("era.get-stream"), f"Content-Type {kind!r}, expected text/event-stream "
                                                          "(or HTTP 405)", evidence)
    return outcome


async def _task_unknown(session: tuple[tuple[str, str], ...], send: Send, evidence: list[Exchange]) -> Outcome:
    init = next((e for e in evidence if e[0].body and b'"initialize"' in e[0].body), None)
    answer = _answer(init[1]) if init is not None else None
    caps = (answer or {}).get("result", {}).get("capabilities", {})
    if not isinstance(caps, dict) or not isinstance(caps.get("tasks"), dict):
        return Outcome(NOT_APPLICABLE, "the server declares no tasks capability", evidence)
    sent = await send(_post({"jsonrpc": "2.0", "id": 6, "method": "tasks/get",
                             "params": {"taskId": "mcpwire-probe-no-such-task"}}, session))
    evidence.append(sent)
    answer = _answer(sent[1])
    code = (answer or {}).get("error", {}).get("code") if isinstance((answer or {}).get("error"), dict) else None
    if code != -32602:
        return Outcome.broken(rule("era.tasks-unknown"), f"tasks/get of an unknown task answered "
                                                         f"{json.dumps(answer)[:120]}, expected -32602", evidence)
    return Outcome(PASS, "", evidence)


def post_only(method: str) -> Callable[[Target, Send], Awaitable[Outcome]]:
    """``method`` (GET or DELETE) without a session is 405 (a SHOULD of 2026-07-28 for a server
    that supports only that revision) with ``Allow: POST`` (RFC 9110: a 405 MUST carry Allow); or
    400 from a server that also keeps initialize-era sessions, where a request without
    ``Mcp-Session-Id`` is 400 (2025-11-25, session management): a GET or DELETE names no
    revision, so such a server cannot tell the eras apart. An initialize tells which."""
    async def steps(target: Target, send: Send) -> Outcome:
        evidence: list[Exchange] = []
        sent = await send(Request(method, (("Accept", "application/json, text/event-stream"),)))
        evidence.append(sent)
        reply = sent[1]
        if reply is None:
            return Outcome.broken(rule("mcp.get-delete-405"), f"no reply: {sent[2]}", evidence)
        if reply.status == 405:
            return Outcome.judged(judge(Expect(405, id=None, allow="POST", rule="mcp.get-delete-405"), sent[0], reply,
                                        target), evidence)
        if reply.status == 400:
            session = await _open(send, evidence)
            if not isinstance(session, str):
                return Outcome(PASS, "", evidence)
            return Outcome.judged(status_rule(400, (405,), rule_id="mcp.get-delete-405",
                                              why=f"{session}, so 400 is not the session rule"), evidence)
        return Outcome.judged(status_rule(reply.status, (405,), rule_id="mcp.get-delete-405",
                                          why="or 400 from a server keeping sessions"), evidence)
    return steps


OLDER = ("2025-03-26", "2024-11-05")  # the revisions before MCP-Protocol-Version was defined


async def version_header_missing(target: Target, send: Send) -> Outcome:
    """A 2026-07-28 request without MCP-Protocol-Version is 400 with -32020, unless the server
    supports clients of revisions earlier than 2025-06-18, which did not send the header: such a
    server MAY treat the request as 2025-03-26 (streamable-http, protocol version header). An
    ``initialize`` naming 2025-03-26 (or 2024-11-05), as such a client sends it, tells whether
    it does."""
    body = json.dumps({"jsonrpc": "2.0", "id": 31, "method": "server/discover", "params": {"_meta": meta()}}).encode()
    sent = await send(Request("POST", headers("server/discover", version=None), body, rpc_id=31))
    evidence = [sent]
    if sent[1] is None:
        return Outcome.broken(rule("jsonrpc.reply"), f"no reply: {sent[2]}", evidence)
    expected = Expect(400, -32020, rule="mcp.version-header-missing")
    problems = judge(expected, sent[0], sent[1], target)
    if not problems:
        return Outcome(PASS, "", evidence)
    for version in OLDER:
        older = await send(Request("POST", _BASE, json.dumps(_initialize(version, "init-older")).encode(),
                                   rpc_id="init-older"))
        evidence.append(older)
        result = (_answer(older[1]) or {}).get("result")
        if isinstance(result, dict) and result.get("protocolVersion") == version:
            # It may answer by that revision's rules; whatever it answers is still a JSON-RPC response.
            answered = judge(Expect(None, id=ECHO_OR_NULL, any_answer=True, rule="jsonrpc.reply"), sent[0], sent[1],
                             target)
            return Outcome.judged(answered, evidence, f"the server serves {version} clients, so it may take a "
                                                      "request without the header for one of theirs")
    return Outcome.judged(problems, evidence)


def _era(cid: str, title: str, cites: str, sends: str, run: Callable[..., Awaitable[Outcome]], rule_id: str) -> Check:
    return Check(f"era.{cid}", title, cites, sends, steps=_session_check(run), http_only=True, enforces=(rule_id,))


ERA_CHECKS: tuple[Check, ...] = (
    Check("era.version-negotiation", "initialize naming an unknown revision gets one the server supports", LIFECYCLE,
          "initialize with protocolVersion \"1999-01-01\"", steps=_negotiates, http_only=True,
          enforces=("era.version-negotiation",)),
    _era("ping", "ping on a session answers an empty result", PING, "ping on a 2025-11-25 session", _ping, "era.ping"),
    _era("session-required", "a request without Mcp-Session-Id after initialize is 400", SESSIONS,
         "ping without the Mcp-Session-Id header", _no_session_header, "era.session-required"),
    _era("session-unknown", "a request naming an unknown session is 404", SESSIONS,
         "ping with an Mcp-Session-Id the server never issued", _unknown_session, "era.session-ended"),
    _era("session-deleted", "a session ended by DELETE is 404 afterwards", SESSIONS,
         "DELETE with the session id, then ping on it", _deleted, "era.session-ended"),
    _era("version-header-unsupported", "an unsupported MCP-Protocol-Version on a session is 400", VERSION_HEADER,
         "ping with MCP-Protocol-Version: 1999-01-01", _bad_version, "era.version-header"),
    _era("notification-202", "a notification on a session is 202 with no body (or refused)", SENDING,
         "notifications/cancelled on the session", _notification, "era.notification-202"),
    _era("get-stream", "GET on a session opens an SSE stream or is 405", LISTENING,
         "GET with Accept: text/event-stream and the session id (read up to the response head)", _get_stream,
         "era.get-stream"),
    _era("tasks-unknown", "tasks/get of an unknown task is -32602 (when tasks are declared)", TASK_ERRORS,
         "tasks/get with a taskId the server never issued", _task_unknown, "era.tasks-unknown"),
)
