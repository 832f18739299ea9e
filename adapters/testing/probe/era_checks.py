"""The probe's checks of the initialize era: :data:`ERA_CHECKS`, a Streamable HTTP server's
sessions of revision 2025-11-25, each rule cited from that revision's specification; and
:func:`post_only`, the 2026-07-28 check of GET and DELETE that must tell the two eras apart.

Each check opens a session of its own (``initialize`` naming 2025-11-25, then
``notifications/initialized``) and judges one rule of it. A server that answers ``initialize``
with no session (an error, or a stateless server) makes them not applicable. HTTP only: on stdio
an ``initialize`` would turn the probe's one connection into a session for the checks after it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from ..judge import Expect, empty_rule, judge, status_rule
from ..rawwire import Exchange, Reply, Request, Send, media_type
from ..verdict import FAIL, NOT_APPLICABLE, PASS, Outcome
from .checks import Check, Target

__all__ = ["ERA_CHECKS", "post_only"]

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


def _status(sent: Exchange, evidence: list[Exchange], allowed: tuple[int, ...], *, empty: bool = False) -> Outcome:
    evidence.append(sent)
    reply = sent[1]
    if reply is None:
        return Outcome(FAIL, f"no reply: {sent[2]}", evidence)
    problems = status_rule(reply.status, allowed) or (empty_rule(reply, stdio=False) if empty else [])
    return Outcome.judged(problems, evidence)


async def _negotiates(target: Target, send: Send) -> Outcome:
    """An initialize naming a revision nobody has is answered with a revision the server speaks."""
    sent = await send(_post(_initialize("1999-01-01", rpc_id="init-old")))
    answer = _answer(sent[1])
    if sent[1] is None or answer is None:
        return Outcome(FAIL if sent[1] is None else NOT_APPLICABLE, "no JSON-RPC answer to initialize", [sent])
    result = answer.get("result")
    if not isinstance(result, dict):
        error = answer.get("error")
        return Outcome(NOT_APPLICABLE, f"initialize answered with an error {json.dumps(error)[:100]}: no initialize-era support",
                       [sent])
    version = result.get("protocolVersion")
    if not isinstance(version, str) or version == "1999-01-01":
        return Outcome(FAIL, f"protocolVersion {version!r}: expected another revision the server supports", [sent])
    return Outcome(PASS, "", [sent])


async def _ping(session: tuple[tuple[str, str], ...], send: Send, evidence: list[Exchange]) -> Outcome:
    sent = await send(_post({"jsonrpc": "2.0", "id": "ping-1", "method": "ping"}, session))
    evidence.append(sent)
    answer = _answer(sent[1])
    if answer is None or answer.get("id") != "ping-1":
        return Outcome(FAIL, "no response to ping with its id", evidence)
    if answer.get("result") != {}:
        return Outcome(FAIL, f"ping answered {json.dumps(answer)[:120]}, expected an empty result", evidence)
    return Outcome(PASS, "", evidence)


SessionHeaders = tuple[tuple[str, str], ...]


def _ping_with(headers: Callable[[SessionHeaders], SessionHeaders], version: str | None, rpc_id: int,
               allowed: tuple[int, ...]) -> Callable[[SessionHeaders, Send, list[Exchange]], Awaitable[Outcome]]:
    """A ping sent with ``headers(session)`` (and ``version`` in MCP-Protocol-Version), judged by
    its HTTP status alone."""
    async def run(session: SessionHeaders, send: Send, evidence: list[Exchange]) -> Outcome:
        ping = {"jsonrpc": "2.0", "id": rpc_id, "method": "ping"}
        return _status(await send(_post(ping, headers(session), version=version)), evidence, allowed)
    return run


_no_session_header = _ping_with(lambda session: (("MCP-Protocol-Version", ERA),), None, 2, (400,))
_unknown_session = _ping_with(lambda session: (("Mcp-Session-Id", "mcpwire-probe-no-such-session"),), ERA, 3, (404,))
_bad_version = _ping_with(lambda session: session, "1999-01-01", 5, (400,))
_ping_gone = _ping_with(lambda session: session, ERA, 4, (404,))


async def _deleted(session: SessionHeaders, send: Send, evidence: list[Exchange]) -> Outcome:
    gone = await send(Request("DELETE", _BASE + session + (("MCP-Protocol-Version", ERA),)))
    evidence.append(gone)
    if gone[1] is not None and gone[1].status == 405:
        return Outcome(NOT_APPLICABLE, "the server does not let clients end sessions (405)", evidence)
    return await _ping_gone(session, send, evidence)


async def _notification(session: tuple[tuple[str, str], ...], send: Send, evidence: list[Exchange]) -> Outcome:
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "never-sent"}}
    return _status(await send(_post(note, session)), evidence, (202,), empty=True)


async def _get_stream(session: tuple[tuple[str, str], ...], send: Send, evidence: list[Exchange]) -> Outcome:
    headers = (("Accept", "text/event-stream"), *session, ("MCP-Protocol-Version", ERA))
    sent = await send(Request("GET", headers, head_only=True))
    outcome = _status(sent, evidence, (200, 405))
    reply = sent[1]
    if outcome.status == PASS and reply is not None and reply.status == 200:
        kind = media_type(reply.header("content-type") or "")
        if kind != "text/event-stream":
            return Outcome(FAIL, f"Content-Type {kind!r}, expected text/event-stream (or HTTP 405)", evidence)
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
        return Outcome(FAIL, f"tasks/get of an unknown task answered {json.dumps(answer)[:120]}, expected -32602", evidence)
    return Outcome(PASS, "", evidence)


def post_only(method: str) -> Callable[[Target, Send], Awaitable[Outcome]]:
    """``method`` (GET or DELETE) without a session is 405 with ``Allow: POST`` (2026-07-28 has one
    endpoint, POST only); or 400 from a server that also keeps initialize-era sessions, where a
    request without ``Mcp-Session-Id`` is 400 (2025-11-25, session management): a GET or DELETE
    names no revision, so such a server cannot tell the eras apart. An initialize tells which."""
    async def steps(target: Target, send: Send) -> Outcome:
        evidence: list[Exchange] = []
        sent = await send(Request(method, (("Accept", "application/json, text/event-stream"),)))
        evidence.append(sent)
        reply = sent[1]
        if reply is None:
            return Outcome(FAIL, f"no reply: {sent[2]}", evidence)
        if reply.status == 405:
            return Outcome.judged(judge(Expect(405, id=None, allow="POST"), sent[0], reply, target), evidence)
        if reply.status == 400:
            session = await _open(send, evidence)
            if not isinstance(session, str):
                return Outcome(PASS, "", evidence)
            return Outcome.judged(status_rule(400, (405,), why=f"{session}, so 400 is not the session rule"), evidence)
        return Outcome.judged(status_rule(reply.status, (405,), why="or 400 from a server keeping sessions"), evidence)
    return steps


def _era(cid: str, title: str, cites: str, sends: str, run: Callable[..., Awaitable[Outcome]]) -> Check:
    return Check(f"era.{cid}", title, cites, sends, steps=_session_check(run), http_only=True)


ERA_CHECKS: tuple[Check, ...] = (
    Check("era.version-negotiation", "initialize naming an unknown revision gets one the server supports", LIFECYCLE,
          "initialize with protocolVersion \"1999-01-01\"", steps=_negotiates, http_only=True),
    _era("ping", "ping on a session answers an empty result", PING, "ping on a 2025-11-25 session", _ping),
    _era("session-required", "a request without Mcp-Session-Id after initialize is 400", SESSIONS,
         "ping without the Mcp-Session-Id header", _no_session_header),
    _era("session-unknown", "a request naming an unknown session is 404", SESSIONS,
         "ping with an Mcp-Session-Id the server never issued", _unknown_session),
    _era("session-deleted", "a session ended by DELETE is 404 afterwards", SESSIONS,
         "DELETE with the session id, then ping on it", _deleted),
    _era("version-header-unsupported", "an unsupported MCP-Protocol-Version on a session is 400", VERSION_HEADER,
         "ping with MCP-Protocol-Version: 1999-01-01", _bad_version),
    _era("notification-202", "a notification on a session is 202 with no body", SENDING,
         "notifications/cancelled on the session", _notification),
    _era("get-stream", "GET on a session opens an SSE stream or is 405", LISTENING,
         "GET with Accept: text/event-stream and the session id (read up to the response head)", _get_stream),
    _era("tasks-unknown", "tasks/get of an unknown task is -32602 (when tasks are declared)", TASK_ERRORS,
         "tasks/get with a taskId the server never issued", _task_unknown),
)
