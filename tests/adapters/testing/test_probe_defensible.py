"""The probe's rules where the specification leaves a server a choice (found against the
SDKs' everything-servers, docs/probing-others.md): each is held to what the specification allows,
with fake replies, no server."""

from __future__ import annotations

import json
from typing import Any

import trio

from mcpwire_adapters.testing.judge import judge
from mcpwire_adapters.testing.probe.checks import Target
from mcpwire_adapters.testing.probe.era_checks import post_only
from mcpwire_adapters.testing.probe.runner import CHECKS
from mcpwire_adapters.testing.rawwire import Exchange, Reply, Request

HTTP = Target(url="http://127.0.0.1:1/mcp", host="127.0.0.1", loopback=True)
JSON = (("content-type", "application/json"),)
BY_ID = {c.id: c for c in CHECKS}


def _judge(check_id: str, reply: Reply) -> list[str]:
    check = BY_ID[check_id]
    assert check.build is not None and check.expect is not None
    request = check.build(HTTP)
    assert isinstance(request, Request)
    return judge(check.expect, request, reply, HTTP)


def _error(code: int, rpc_id: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rpc_id, "error": {"code": code, "message": "x"}}).encode()


def test_a_refused_notification_or_response_may_be_an_http_error_without_id() -> None:
    # streamable-http, sending messages: "If the server cannot accept the input, it MUST return an
    # HTTP error status code"; the body MAY be a JSON-RPC error that has no id.
    for check_id in ("notification.malformed-202", "envelope.response-not-answered"):
        assert _judge(check_id, Reply(202, (), b"")) == []
        assert _judge(check_id, Reply(400, JSON, _error(-32600, None))) == []
        assert _judge(check_id, Reply(400, (), b"")) == []
        assert _judge(check_id, Reply(400, JSON, _error(-32600, 1))) == ["1 response(s) with an id, expected none"]
        assert _judge(check_id, Reply(200, JSON, _error(-32600, None)))  # a 200 is an answer
    # A valid notification the server accepts is still 202 with no body.
    assert _judge("notification.cancelled-202", Reply(400, JSON, _error(-32600, None)))


def test_invalid_params_met_while_executing_may_come_with_200() -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": "call-2", "error": {"code": -32602, "message": "x"}}).encode()
    check = BY_ID["tools.unknown-tool"]
    request = check.build(Target(**{**HTTP.__dict__, "discover": {"capabilities": {"tools": {}}}})) \
        if check.build is not None else None
    assert isinstance(request, Request) and check.expect is not None
    assert judge(check.expect, request, Reply(200, JSON, body), HTTP) == []
    assert judge(check.expect, request, Reply(400, JSON, body), HTTP) == []
    assert judge(check.expect, request, Reply(500, JSON, body), HTTP) == ["HTTP status 500, expected 400 or 200"]
    # The _meta rules the official runner scores keep their 400.
    assert _judge("meta.missing", Reply(200, JSON, _error(-32602, 21))) != []


def test_the_body_of_an_http_refusal_is_not_judged() -> None:
    for check_id, status in (("http.content-type-wrong", 415), ("http.accept-missing", 406)):
        assert _judge(check_id, Reply(status, JSON, _error(-32000, None))) == []
        assert _judge(check_id, Reply(status, (), b"")) == []
        assert _judge(check_id, Reply(200, JSON, _error(-32600, None)))


def _fake(replies: list[Reply]) -> tuple[Any, list[Request]]:
    sent: list[Request] = []

    async def send(request: Request) -> Exchange:
        sent.append(request)
        return request, replies[len(sent) - 1], None
    return send, sent


def _run(method: str, replies: list[Reply]) -> tuple[str, str, list[Request]]:
    send, sent = _fake(replies)
    verdict, detail, _ = trio.run(post_only(method), HTTP, send)
    return verdict, detail, sent


def test_get_and_delete_are_405_or_the_session_rule_of_a_server_keeping_sessions() -> None:
    allow = Reply(405, (("allow", "POST"),), b"")
    assert _run("GET", [allow])[:2] == ("pass", "")
    assert _run("DELETE", [Reply(405, (), b"")])[:2] == ("fail", "Allow header None, expected 'POST'")
    # 400 without a session: right only when the server keeps initialize-era sessions.
    initialized = Reply(200, (*JSON, ("mcp-session-id", "s1")), json.dumps(
        {"jsonrpc": "2.0", "id": "init", "result": {"protocolVersion": "2025-11-25"}}).encode())
    verdict, _, sent = _run("GET", [Reply(400, (), b""), initialized, Reply(202, (), b"")])
    assert verdict == "pass" and [r.method for r in sent] == ["GET", "POST", "POST"]
    stateless = Reply(200, JSON, json.dumps(
        {"jsonrpc": "2.0", "id": "init", "result": {"protocolVersion": "2025-11-25"}}).encode())
    verdict, detail, _ = _run("GET", [Reply(400, (), b""), stateless])
    assert verdict == "fail" and detail.startswith("HTTP status 400, expected 405")
    assert _run("GET", [Reply(200, (), b"")])[:2] == ("fail", "HTTP status 200, expected 405 (or 400 from a server keeping sessions)")


def test_no_check_of_a_cursor_the_server_never_issued() -> None:
    assert "pagination.cursor-tampered" not in BY_ID  # the specification says SHOULD


def test_an_unknown_resource_is_any_json_rpc_error() -> None:
    # server/resources#error-handling: never empty contents, a JSON-RPC error; -32602 and
    # error.data.uri are SHOULD (the official runner warns without them).
    check = BY_ID["resources.unknown-uri"]
    assert check.build is not None and check.expect is not None
    request = check.build(Target(**{**HTTP.__dict__, "discover": {"capabilities": {"resources": {}}}}))
    assert isinstance(request, Request)
    old_code = json.dumps({"jsonrpc": "2.0", "id": "read-1", "error": {"code": -32002, "message": "x"}}).encode()
    assert judge(check.expect, request, Reply(200, JSON, old_code), HTTP) == []
    empty = json.dumps({"jsonrpc": "2.0", "id": "read-1", "result": {"contents": []}}).encode()
    assert judge(check.expect, request, Reply(200, JSON, empty), HTTP) == ["a result, expected an error"]
