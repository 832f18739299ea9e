"""The hostile server's decisions and its data, without sockets or processes: an answer's
markers and framing, the rows a request finds, the 2025-11-25 session rules, the OAuth side,
and the replay file's form of an answer."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from mcpwire_adapters.testing.client_probe.hostile import HostileServer, Plan, Seen
from mcpwire_adapters.testing.client_probe.scenarios import SCENARIOS, by_name, select_scenarios
from mcpwire_adapters.testing.client_probe.script import (
    Answer, Await, Context, answer_from_json, answer_to_json, frames, render, split,
)

JSON = (("content-type", "application/json"), ("accept", "application/json, text/event-stream"))


def post(server: HostileServer, message: Any, *headers: tuple[str, str], at: float = 1.0) -> Plan:
    return server.receive(Seen("POST", "/mcp", JSON + headers, json.dumps(message).encode(), at))


def body(plan: Plan) -> bytes:
    return b"".join(p for p in plan.parts if isinstance(p, bytes))


def test_markers_are_replaced_and_dollars_escaped() -> None:
    asked = iter(range(7, 10))
    ctx = Context(id="r-1", n=3, session="s", ask=lambda: next(asked))
    got = render({"id": "$id", "n": "$n", "s": "$session", "state": "$state", "ask": "$ask", "cost": "$$5",
                  "big": {"$big": 4}}, ctx)
    assert got == {"id": "r-1", "n": 3, "s": "s", "state": "hostile-state-3", "ask": 7, "cost": "$5", "big": "AAAA"}
    assert ctx.asked == [7] and ctx.big == 4
    with pytest.raises(ValueError, match="unknown marker"):
        render("$nope", ctx)


def test_input_requests_only_of_a_declared_kind() -> None:
    result = {"resultType": "input_required", "inputRequests": "$inputs", "requestState": "$state"}
    assert "inputRequests" not in render(result, Context(capabilities={}))
    asked = render(result, Context(n=2, capabilities={"elicitation": {}}))["inputRequests"]
    assert [r["method"] for r in asked.values()] == ["elicitation/create"]
    asked = render(result, Context(capabilities={"roots": {}}))["inputRequests"]
    assert [r["method"] for r in asked.values()] == ["roots/list"]


def test_sse_frames_event_ids_retry_priming_and_await_points() -> None:
    events = iter(range(1, 10))
    ctx = Context(id=5, ask=lambda: 1001, event=lambda: f"ev-{next(events)}")
    answer = Answer("tools/call", kind="sse", event_ids=True, retry_ms=300, messages=(
        {"$prime": True}, {"jsonrpc": "2.0", "id": "$ask", "method": "ping"}, {"$await": True},
        {"jsonrpc": "2.0", "id": "$id", "result": {}}))
    parts = frames(answer, ctx, stdio=False)
    assert parts[0] == b"id: ev-1\nretry: 300\ndata: \n\n"
    assert parts[1] == b'id: ev-2\ndata: {"jsonrpc":"2.0","id":1001,"method":"ping"}\n\n'
    assert parts[2] == Await((1001,))
    first, ping, _, answer_ = parts
    assert isinstance(first, bytes) and isinstance(ping, bytes) and isinstance(answer_, bytes)
    assert answer_.startswith(b"id: ev-3\ndata: ") and b'"id":5' in answer_
    assert len(ctx.sent) == 2 and ctx.ends == [len(first) + len(ping), len(first) + len(ping) + len(answer_)]
    lines = frames(replace(answer, messages=answer.messages[1:]), Context(ask=lambda: 1), stdio=True)
    assert lines[0] == b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n'  # stdio: one message a line, no SSE


def test_split_cuts_the_bytes_across_parts_and_keeps_await_points() -> None:
    parts = split([b"abcd", Await(()), b"efgh"], [2, 5, 99])
    assert parts == [b"ab", b"cd", Await(()), b"e", b"fgh"]


def test_answer_json_round_trip_and_refusals() -> None:
    for scenario in SCENARIOS:
        for answer in scenario.script():
            assert answer_from_json(json.loads(json.dumps(answer_to_json(answer)))) == answer
    for bad in ({"to": "x", "kind": "xml"}, {"to": "x", "end": "never"}, {"nth": 1}, {"to": "x", "colour": 1},
                {"to": "x", "repeat": 0}, {"to": "x", "status": True}):
        with pytest.raises(ValueError):
            answer_from_json(bad)


def test_rows_by_occurrence_then_any_occurrence_then_the_fallback() -> None:
    server = HostileServer(by_name("tool-gone"))
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    first = post(server, {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}})
    second = post(server, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}})
    unknown = post(server, {"jsonrpc": "2.0", "id": 3, "method": "nope/nope", "params": {"_meta": meta}})
    assert b'"echo"' in body(first) and b'"echo_v2"' in body(second)
    assert unknown.status == 404 and json.loads(body(unknown))["error"]["code"] == -32601
    assert [r.row for r in server.records] == [0, 1, len(by_name("tool-gone").answers) + 8]
    assert first.length == len(body(first))  # a JSON body that ends has its Content-Length


def test_2025_sessions_initialize_opens_one_a_404_ends_it() -> None:
    server = HostileServer(by_name("session-404"))
    init = post(server, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}})
    session = dict(init.headers)["mcp-session-id"]
    assert json.loads(body(init))["result"]["protocolVersion"] == "2025-11-25"
    assert post(server, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).status == 400  # no session id
    assert post(server, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, ("mcp-session-id", "other")).status == 404
    held = ("mcp-session-id", session)
    assert post(server, {"jsonrpc": "2.0", "id": 4, "method": "tools/list"}, held).status == 200
    assert post(server, {"jsonrpc": "2.0", "id": 5, "method": "tools/call"}, held).status == 404  # the scenario's row
    assert post(server, {"jsonrpc": "2.0", "id": 6, "method": "tools/list"}, held).status == 404  # the session is gone
    modern = {"jsonrpc": "2.0", "id": 7, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}
    assert post(server, modern).status == 400  # a 2025-11-25 server knows nothing of modern requests
    assert post(server, "not an object").status == 400


def test_oauth_challenge_metadata_and_modes() -> None:
    base = "http://127.0.0.1:9"
    for mode in ("oauth", "oauth-issuer-mismatch", "oauth-no-pkce"):
        server = HostileServer(by_name(mode), base=base)
        refused = post(server, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert refused.status == 401 and 'resource_metadata="http://127.0.0.1:9/.well-known/' in dict(
            refused.headers)["www-authenticate"]
        prm = json.loads(body(server.receive(Seen("GET", "/.well-known/oauth-protected-resource/mcp", (), b"", 1))))
        assert prm == {"resource": base + "/mcp", "authorization_servers": [base + "/as"],
                       "bearer_methods_supported": ["header"]}
        meta = json.loads(body(server.receive(Seen("GET", "/.well-known/oauth-authorization-server/as", (), b"", 1))))
        assert (meta["issuer"] == base + "/as") == (mode != "oauth-issuer-mismatch")
        assert ("code_challenge_methods_supported" in meta) == (mode != "oauth-no-pkce")
    code = server.receive(Seen("GET", "/as/authorize?redirect_uri=http%3A%2F%2F127.0.0.1%3A1%2Fcb&state=s1", (), b"", 1))
    assert code.status == 302 and dict(code.headers)["location"].startswith("http://127.0.0.1:1/cb?code=")
    token = json.loads(body(server.receive(Seen("POST", "/as/token", (), b"grant_type=authorization_code", 1))))
    bearer = ("authorization", f"Bearer {token['access_token']}")
    assert post(server, {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {}}, bearer).status == 200


def test_selecting_scenarios_by_transport_and_pattern() -> None:
    assert {s.name for s in select_scenarios(["oauth*"], stdio=False)} == {"oauth", "oauth-issuer-mismatch",
                                                                        "oauth-no-pkce"}
    assert select_scenarios(["oauth*", "session-404", "cut-stream*"], stdio=True) == ()
    assert len(select_scenarios([], stdio=False)) == len(SCENARIOS)
