"""Who may use what the engine issued, sans-IO: an initialize-era session is bound to the
principal that initialized it (``HttpRequest.principal``), and a ``requestState`` to the
principal it was issued to (MCP security best practices: session hijacking).

Another principal naming the session (POST of a request, a notification or a response, a
2025-03-26 batch, the GET stream with or without ``Last-Event-ID``, DELETE) gets exactly what an
unknown session id gets: HTTP 404 with the same JSON-RPC error, and the session is untouched
for its owner. A session opened without a principal (no auth) is bound to its id only, as
before. A ``requestState`` issued under one principal is refused under another (and without
one) exactly as a tampered one is: -32602 "Invalid or expired request state"; one issued
without a principal still verifies without one.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import msgspec
import pytest

import mcpwire
import mcpwire.tasks
from mcpwire import HttpExchange, HttpRequest, Keyring, ResponseBody, ResponseHead, SessionClosed
from mcpwire.sessions import HttpBatch, MemorySessionStore, ResumedStream, Session, SessionStream
from mcpwire.types import CallToolResult, Implementation, TextContent, Tool

NOW = 1_800_000_000.0
ERA = "2025-11-25"
STATELESS = "2026-07-28"
ALICE = '["https://as.example","alice","app"]'
MALLORY = '["https://as.example","mallory","app"]'
BASE = [(b"content-type", b"application/json"), (b"accept", b"application/json, text/event-stream")]
SSE = [(b"accept", b"text/event-stream")]
ELICIT: dict[str, Any] = {"method": "elicitation/create", "params": {
    "message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}}


class Args(msgspec.Struct):
    text: str = ""


def make_server(**kw: Any) -> mcpwire.Server:
    server = mcpwire.Server(Implementation(name="s", version="1"), keyring=Keyring.single(b"k" * 32),
                            session_ids=(f"sid-{i}" for i in itertools.count()), **kw)
    server.add_tool(Tool(name="t", input_schema={"type": "object"}))
    server.add_tool(Tool(name="typed", input_schema={}), arguments_type=Args)  # has a call fast path
    return server


def send(server: mcpwire.Server, body: Any, headers: list[tuple[bytes, bytes]] | None = None, method: str = "POST",
         principal: str | None = None, now: float = NOW) -> Any:
    data = body if isinstance(body, bytes) else json.dumps(body).encode() if body is not None else b""
    return server.receive_http(HttpRequest(method=method, target="/mcp", headers=BASE + (headers or []), body=data,
                                           principal=principal), now=now)


def raw(answer: Any) -> tuple[int, tuple[tuple[bytes, bytes], ...], bytes]:
    """A complete reply as its status, headers and body bytes, to compare answers exactly."""
    assert isinstance(answer, tuple), answer
    head = next(part for part in answer if isinstance(part, ResponseHead))
    return head.status, tuple(head.headers), b"".join(part.data for part in answer if isinstance(part, ResponseBody))


def decoded(answer: Any) -> tuple[int, Any]:
    status, _, body = raw(answer)
    return status, json.loads(body) if body else None


def initialize(server: mcpwire.Server, principal: str | None, version: str = ERA) -> list[tuple[bytes, bytes]]:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {"elicitation": {}}, "clientInfo": {"name": "c", "version": "1"}}}
    answer = send(server, init, principal=principal)
    status, headers, _ = raw(answer)
    assert status == 200
    session = [(b"mcp-session-id", dict(headers)[b"mcp-session-id"]), (b"mcp-protocol-version", version.encode())]
    assert decoded(send(server, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session,
                        principal=principal))[0] == 202
    return session


def unknown(session: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """The same headers naming a session id the server never issued."""
    return [(b"mcp-session-id", b"sid-never-issued"), *session[1:]]


PING: dict[str, Any] = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
CALL: dict[str, Any] = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                        "params": {"name": "t", "arguments": {}, "_meta": {"progressToken": "p"}}}


def test_another_principal_is_told_the_session_does_not_exist_for_every_post() -> None:
    server = make_server()
    session = initialize(server, ALICE)
    posts: list[Any] = [
        PING, CALL,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}},
        {"jsonrpc": "2.0", "id": 1, "result": {"action": "accept", "content": {"name": "Mallory"}}},  # an answer
    ]
    for body in posts:
        expected = raw(send(server, body, unknown(session), principal=MALLORY))
        assert expected[0] == 404
        for intruder in (MALLORY, None):  # another user, or a request the host let through unauthenticated
            assert raw(send(server, body, session, principal=intruder)) == expected, body
    # The owner's session is as it was, and answers the owner.
    assert decoded(send(server, PING, session, principal=ALICE)) == (200, {"jsonrpc": "2.0", "id": 9, "result": {}})
    exchange = send(server, CALL, session, principal=ALICE)
    assert isinstance(exchange, HttpExchange) and exchange.session is not None
    exchange.cancel()


def test_the_404_is_the_unknown_session_error() -> None:
    server = make_server()
    session = initialize(server, ALICE)
    assert decoded(send(server, PING, session, principal=MALLORY)) == (
        404, {"jsonrpc": "2.0", "id": 9, "error": {"code": -32600, "message": "Session not found"}})
    assert decoded(send(server, None, session + SSE, "GET", principal=MALLORY)) == (
        404, {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Session not found"}})


def test_another_principal_cannot_open_the_get_stream() -> None:
    server = make_server()
    session = initialize(server, ALICE)
    expected = raw(send(server, None, unknown(session) + SSE, "GET", principal=MALLORY))
    assert expected[0] == 404
    assert raw(send(server, None, session + SSE, "GET", principal=MALLORY)) == expected
    assert raw(send(server, None, session + SSE, "GET")) == expected
    stream = send(server, None, session + SSE, "GET", principal=ALICE)
    assert isinstance(stream, SessionStream)
    stream.cancel()


def test_another_principal_cannot_replay_the_sessions_events() -> None:
    server = make_server()
    session = initialize(server, ALICE)
    exchange = send(server, CALL, session, principal=ALICE)
    assert isinstance(exchange, HttpExchange)
    sent = exchange.progress(1, total=2, message="alice's secret") + exchange.complete(
        CallToolResult(content=[TextContent(text="alice's result")]))
    frames = [part.data for part in sent if isinstance(part, ResponseBody) and part.data]
    priming = frames[0].split(b"\n")[0].removeprefix(b"id: ")
    resume = session + SSE + [(b"last-event-id", priming)]
    expected = raw(send(server, None, unknown(session) + SSE + [(b"last-event-id", priming)], "GET", principal=MALLORY))
    assert expected[0] == 404
    for intruder in (MALLORY, None):
        assert raw(send(server, None, resume, "GET", principal=intruder)) == expected
    replay = send(server, None, resume, "GET", principal=ALICE)
    assert isinstance(replay, ResumedStream)
    assert b"".join(part.data for part in replay.start() if isinstance(part, ResponseBody)).endswith(
        b"".join(frames[1:]))


def test_another_principal_cannot_delete_the_session() -> None:
    server = make_server()
    session = initialize(server, ALICE)
    expected = raw(send(server, None, unknown(session), "DELETE", principal=MALLORY))
    assert expected[0] == 404
    assert raw(send(server, None, session, "DELETE", principal=MALLORY)) == expected
    assert raw(send(server, None, session, "DELETE")) == expected
    assert len(server.sessions) == 1
    assert decoded(send(server, PING, session, principal=ALICE))[0] == 200
    closed = send(server, None, session, "DELETE", principal=ALICE)
    assert isinstance(closed, SessionClosed) and raw(closed.reply)[0] == 200
    assert len(server.sessions) == 0


def test_another_principal_cannot_post_a_batch_on_the_session() -> None:
    server = make_server()
    session = initialize(server, ALICE, "2025-03-26")
    batch = json.dumps([PING, {**PING, "id": 10}]).encode()
    expected = raw(send(server, batch, unknown(session), principal=MALLORY))
    assert expected[0] == 404
    assert raw(send(server, batch, session, principal=MALLORY)) == expected
    owned = send(server, batch, session, principal=ALICE)
    assert isinstance(owned, HttpBatch) and [decoded(a)[0] for a in owned.answers] == [200, 200]


def test_each_message_of_a_batch_is_admitted_as_its_sender() -> None:
    # A 2025-11-25 task made from a batched call belongs to whoever posted the batch.
    tasks = mcpwire.tasks.Tasks(mcpwire.tasks.MemoryTaskStore(), (f"task-{i}" for i in itertools.count()), ttl_ms=60_000)
    server = make_server(tasks=tasks)
    session = initialize(server, ALICE, "2025-03-26")
    batch = send(server, json.dumps([CALL]).encode(), session, principal=ALICE)
    assert isinstance(batch, HttpBatch)
    (exchange,) = batch.answers
    assert isinstance(exchange, HttpExchange) and exchange.principal == ALICE
    exchange.cancel()


def test_a_session_opened_without_a_principal_is_bound_to_its_id_only() -> None:
    server = make_server()
    session = initialize(server, None)
    for anyone in (None, ALICE, MALLORY):
        assert decoded(send(server, PING, session, principal=anyone))[0] == 200
        stream = send(server, None, session + SSE, "GET", principal=anyone)
        assert isinstance(stream, SessionStream)
        stream.cancel()
    assert isinstance(send(server, None, session, "DELETE", principal=MALLORY), SessionClosed)


def test_the_session_remembers_its_principal_and_principals_must_be_strings() -> None:
    server = make_server()
    session = initialize(server, ALICE)
    stored = server.sessions.get(session[0][1].decode(), NOW)
    assert stored is not None and stored.principal == ALICE
    assert Session("x", ERA, {}, None, NOW).principal is None
    with pytest.raises(mcpwire.LocalProtocolError):
        Session("x", ERA, {}, None, NOW, principal=b"alice")  # type: ignore[arg-type]
    with pytest.raises(mcpwire.LocalProtocolError):
        send(server, PING, session, principal=42)  # type: ignore[arg-type]


def test_the_memory_store_keeps_the_principal() -> None:
    store = MemorySessionStore()
    store.add(Session("a", ERA, {}, None, NOW, principal=ALICE), NOW)
    found = store.get("a", NOW)
    assert found is not None and found.principal == ALICE


# -- requestState ------------------------------------------------------------------------------------

PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
STATELESS_CALL: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
    "name": "t", "arguments": {"q": 1}, "_meta": {PV: STATELESS, CAPS: {"elicitation": {}}}}}
STATELESS_HEADERS = [(b"mcp-protocol-version", STATELESS.encode()), (b"mcp-method", b"tools/call"), (b"mcp-name", b"t")]


def first_round(server: mcpwire.Server, principal: str | None, body: dict[str, Any] = STATELESS_CALL,
                headers: list[tuple[bytes, bytes]] = STATELESS_HEADERS) -> str:
    exchange = send(server, body, headers, principal=principal)
    assert isinstance(exchange, HttpExchange)
    answer = json.loads(b"".join(p.data for p in exchange.input_required({"name": ELICIT}, state={"step": 1})
                                 if isinstance(p, ResponseBody)))
    token = answer["result"]["requestState"]
    assert isinstance(token, str)
    return token


def second_round(server: mcpwire.Server, token: str, principal: str | None, body: dict[str, Any] = STATELESS_CALL,
                 headers: list[tuple[bytes, bytes]] = STATELESS_HEADERS) -> Any:
    params = {**body["params"], "requestState": token,
              "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}}}
    return send(server, {**body, "id": 2, "params": params}, headers, principal=principal)


def refused(answer: Any) -> None:
    """What a tampered requestState gets (tests/server/test_server_mrtr.py, ``rejected``)."""
    assert not isinstance(answer, HttpExchange), f"accepted: {answer.event}"
    status, body = decoded(answer)
    assert (status, body) == (400, {"jsonrpc": "2.0", "id": 2, "error": {
        "code": -32602, "message": "Invalid or expired request state"}})


def accepted(answer: Any) -> None:
    assert isinstance(answer, HttpExchange), raw(answer)
    assert answer.event.state == {"step": 1}  # type: ignore[union-attr]
    answer.cancel()


@pytest.mark.parametrize("sessions", [False, True])
def test_a_request_state_is_bound_to_its_principal(sessions: bool) -> None:
    server = make_server() if sessions else mcpwire.Server(
        Implementation(name="s", version="1"), keyring=Keyring.single(b"k" * 32))
    if not sessions:
        server.add_tool(Tool(name="t", input_schema={"type": "object"}))
    token = first_round(server, ALICE)
    refused(second_round(server, token, MALLORY))
    refused(second_round(server, token, None))
    accepted(second_round(server, token, ALICE))


def test_a_request_state_issued_without_a_principal_verifies_without_one_only() -> None:
    server = make_server()
    token = first_round(server, None)
    accepted(second_round(server, token, None))
    refused(second_round(server, token, ALICE))


def test_a_request_state_of_a_call_on_its_fast_path_is_bound_too() -> None:
    server = make_server()
    body: dict[str, Any] = {**STATELESS_CALL, "params": {**STATELESS_CALL["params"], "name": "typed", "arguments": {"text": "x"}}}
    headers = [(b"mcp-protocol-version", STATELESS.encode()), (b"mcp-method", b"tools/call"), (b"mcp-name", b"typed")]
    warm = send(server, body, headers, principal=ALICE)  # the first call teaches the memo its head
    assert isinstance(warm, HttpExchange)
    warm.cancel()
    fast = send(server, body, headers, principal=ALICE)
    assert isinstance(fast, HttpExchange) and type(fast._params) is bytes  # admitted on its fast path
    assert fast.principal == ALICE
    fast.cancel()
    token = first_round(server, ALICE, body, headers)
    refused(second_round(server, token, MALLORY, body, headers))
    accepted(second_round(server, token, ALICE, body, headers))


def test_request_scope_binds_the_principal() -> None:
    from mcpwire.server.tokens import request_scope

    params = {"name": "t", "arguments": {"a": 1}}
    assert request_scope("tools/call", params) == request_scope("tools/call", params, None)
    assert request_scope("tools/call", params, ALICE) != request_scope("tools/call", params)
    assert request_scope("tools/call", params, ALICE) != request_scope("tools/call", params, MALLORY)
    with pytest.raises(mcpwire.LocalProtocolError):
        request_scope("tools/call", params, 5)  # type: ignore[arg-type]
