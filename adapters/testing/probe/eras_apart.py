"""The 2026-07-28 checks that must tell the eras apart, on a server that may serve both:
:func:`post_only` (GET and DELETE) and :func:`version_header_missing` (a request without
MCP-Protocol-Version). A server that also serves the initialize era follows that era's rules for
traffic that names no revision, and an ``initialize`` tells the probe whether it does.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from ..era_wire import ERA_BASE, initialize, open_session, response_of
from ..judge import ECHO_OR_NULL, Expect, judge, rule, status_rule
from ..rawwire import Exchange, Request, Send, headers, meta
from ..verdict import PASS, Outcome
from .checks import Target

__all__ = ["OLDER", "post_only", "version_header_missing"]

OLDER = ("2025-03-26", "2024-11-05")  # the revisions before MCP-Protocol-Version was defined


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
            session = await open_session(send, "2025-11-25", evidence)
            if not isinstance(session, str) and session.session_id is not None:
                return Outcome(PASS, "", evidence)
            why = session if isinstance(session, str) else "the server issues no Mcp-Session-Id"
            return Outcome.judged(status_rule(400, (405,), rule_id="mcp.get-delete-405",
                                              why=f"{why}, so 400 is not the session rule"), evidence)
        return Outcome.judged(status_rule(reply.status, (405,), rule_id="mcp.get-delete-405",
                                          why="or 400 from a server keeping sessions"), evidence)
    return steps


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
        older = await send(Request("POST", ERA_BASE, json.dumps(initialize(version, "init-older")).encode(),
                                   rpc_id="init-older"))
        evidence.append(older)
        result = (response_of(older[1]) or {}).get("result")
        if isinstance(result, dict) and result.get("protocolVersion") == version:
            # It may answer by that revision's rules; whatever it answers is still a JSON-RPC response.
            answered = judge(Expect(None, id=ECHO_OR_NULL, any_answer=True, rule="jsonrpc.reply"), sent[0], sent[1],
                             target)
            return Outcome.judged(answered, evidence, f"the server serves {version} clients, so it may take a "
                                                      "request without the header for one of theirs")
    return Outcome.judged(problems, evidence)
