"""The probe's rules where the specification leaves a server a choice (found against the
SDKs' everything-servers, docs/probing-others.md): each is held to what the specification allows,
and each problem carries the strength of the rule it breaks (a MUST fails the check, a SHOULD
warns, this project's conventions are advice). Fake replies, no server: what is judged is the
judge."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import trio

from mcpwire_adapters.testing.judge import judge
from mcpwire_adapters.testing.probe.checks import Target
from mcpwire_adapters.testing.probe.eras_apart import post_only, version_header_missing
from mcpwire_adapters.testing.probe.exact_ids import IDS, ids_echoed
from mcpwire_adapters.testing.probe.runner import CHECKS
from mcpwire_adapters.testing.rawwire import Exchange, Reply, Request
from mcpwire_adapters.testing.verdict import Finding, Problem

HTTP = Target(url="http://127.0.0.1:1/mcp", host="127.0.0.1", loopback=True)
JSON = (("content-type", "application/json"),)
BY_ID = {c.id: c for c in CHECKS}


def _judge(check_id: str, reply: Reply) -> list[Problem]:
    check = BY_ID[check_id]
    assert check.build is not None and check.expect is not None
    request = check.build(HTTP)
    assert isinstance(request, Request)
    return judge(check.expect, request, reply, HTTP)


def _strengths(check_id: str, reply: Reply) -> list[str]:
    return [p.strength for p in _judge(check_id, reply)]


def _rules(problems: Sequence[str]) -> set[str]:
    """The rules ``problems`` break (each must name one)."""
    assert all(isinstance(p, Problem) for p in problems), problems
    return {p.rule.id for p in problems if isinstance(p, Problem)}


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
    # 2026-07-28 defines no client notification over HTTP (notifications/cancelled is stdio's): a
    # server may refuse even a well-formed one, with an HTTP error.
    assert _judge("notification.cancelled-202", Reply(400, JSON, _error(-32600, None))) == []
    assert _strengths("notification.cancelled-202", Reply(200, JSON, _error(-32600, None))) == ["MUST", "MUST"]
    # Answering a posted response breaks no rule of the official text: advice.
    assert _strengths("envelope.response-not-answered", Reply(400, JSON, _error(-32600, 1))) == ["advice"]


def test_invalid_params_met_while_executing_may_come_with_200() -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": "call-2", "error": {"code": -32602, "message": "x"}}).encode()
    check = BY_ID["tools.unknown-tool"]
    request = check.build(Target(**{**HTTP.__dict__, "discover": {"capabilities": {"tools": {}}}})) \
        if check.build is not None else None
    assert isinstance(request, Request) and check.expect is not None
    assert judge(check.expect, request, Reply(200, JSON, body), HTTP) == []
    assert judge(check.expect, request, Reply(400, JSON, body), HTTP) == []
    assert judge(check.expect, request, Reply(500, JSON, body), HTTP) == ["HTTP status 500, expected 400 or 200"]
    # A request missing a required _meta field: -32602 with 400 is a MUST of the basic page.
    assert _strengths("meta.missing", Reply(200, JSON, _error(-32602, 21))) == ["MUST"]


def test_the_body_of_an_http_refusal_is_not_judged_and_its_status_is_advice() -> None:
    for check_id, status in (("http.content-type-wrong", 415), ("http.accept-missing", 406)):
        assert _judge(check_id, Reply(status, JSON, _error(-32000, None))) == []
        assert _judge(check_id, Reply(status, (), b"")) == []
    # 400 instead of 415, or serving it: the specification names no status (this project's choice).
    assert _strengths("http.content-type-wrong", Reply(400, (), b"Invalid Content-Type header")) == ["advice"]
    assert _strengths("http.content-type-wrong", Reply(200, JSON, _error(-32600, None))) == ["advice"]
    # Accept is the client's rule: served (RFC 9110, no Accept is any type) or refused, either conforms.
    assert _judge("http.accept-missing", Reply(200, JSON, b"{}")) == []
    assert _judge("http.accept-json-only", Reply(400, (), b"")) == []
    assert _strengths("http.accept-json-only", Reply(500, (), b"")) == ["advice"]


def test_a_foreign_origin_is_403_a_must() -> None:
    # streamable-http: "If the Origin header is present and invalid, servers MUST respond with HTTP 403".
    check = BY_ID["http.origin-foreign-refused"]
    assert check.build is not None and check.expect is not None
    request = check.build(HTTP)
    assert isinstance(request, Request) and ("Origin", "http://evil.example.com") in request.headers
    assert not any(name.lower() == "host" for name, _ in request.headers)  # only the Origin is foreign
    assert judge(check.expect, request, Reply(403, (), b""), HTTP) == []
    assert [p.strength for p in judge(check.expect, request, Reply(200, JSON, b"{}"), HTTP)] == ["MUST"]


def test_the_codes_and_ids_of_refusals_are_advice_where_the_text_sets_none() -> None:
    """The two SDK servers: -32600 for params that are not an object, and a null id there; -32600
    for "_meta": null; a boolean progressToken or a bad _meta key served; a 257-byte id or 2**63
    served. None breaks a rule of the official text."""
    assert _strengths("envelope.params-not-object", Reply(400, JSON, _error(-32600, None))) == ["advice"]
    assert _strengths("envelope.params-not-object", Reply(400, JSON, _error(-32600, 6))) == ["advice"]
    assert _strengths("meta.null", Reply(400, JSON, _error(-32600, 21))) == ["advice"]
    served = json.dumps({"jsonrpc": "2.0", "id": 21, "result": {}}).encode()
    assert set(_strengths("meta.progress-token-bool", Reply(200, JSON, served))) == {"advice"}
    assert set(_strengths("meta.key-invalid", Reply(200, JSON, served))) == {"advice"}
    for check_id, big in (("envelope.id-too-long-refused", "x" * 257), ("envelope.id-too-large-refused", 2**63)):
        echoed = json.dumps({"jsonrpc": "2.0", "id": big, "result": {}}).encode()
        assert set(_strengths(check_id, Reply(200, JSON, echoed))) == {"advice"}
    # A tool result with isError for an unknown tool: the page gives no requirement keyword.
    unknown_tool = json.dumps({"jsonrpc": "2.0", "id": "call-2", "result": {"content": [], "isError": True}}).encode()
    check = BY_ID["tools.unknown-tool"]
    request = check.build(Target(**{**HTTP.__dict__, "discover": {"capabilities": {"tools": {}}}})) \
        if check.build is not None else None
    assert isinstance(request, Request) and check.expect is not None
    assert [p.strength for p in judge(check.expect, request, Reply(200, JSON, unknown_tool), HTTP)] == ["advice"]


def test_an_invalid_cursor_as_an_internal_error_is_a_should() -> None:
    # pagination: "Invalid cursors SHOULD result in an error with code -32602 (Invalid params)."
    check = BY_ID["pagination.cursor-not-string"]
    request = check.build(Target(**{**HTTP.__dict__, "discover": {"capabilities": {"tools": {}}}})) \
        if check.build is not None else None
    assert isinstance(request, Request) and check.expect is not None
    internal = json.dumps({"jsonrpc": "2.0", "id": "cursor-2", "error": {"code": -32603, "message": "[{...}]"}}).encode()
    problems = judge(check.expect, request, Reply(200, JSON, internal), HTTP)
    assert [(p.strength, p.rule.id) for p in problems] == [("SHOULD", "mcp.cursor")]  # advice says the same: once
    assert Finding.judged("cursor", problems, ()).status == "warn"


def test_an_id_comes_back_as_the_same_json_token() -> None:
    """The basic page: a response carries the same ID as its request. 2**63 rounded through a
    double, or sent back as a float or a string, or 1 as true, is another id (a MUST); an error
    may carry null for a request it deems malformed."""
    check = BY_ID["envelope.id-too-large-refused"]
    assert check.build is not None and check.expect is not None
    request = check.build(HTTP)
    assert isinstance(request, Request)
    for wrong in (b"9223372036854776000", b"9.223372036854775808e18", b"9223372036854775808.0", b'"9223372036854775808"'):
        body = b'{"jsonrpc": "2.0", "error": {"code": -32600, "message": "x"}, "id": ' + wrong + b"}"
        problems = judge(check.expect, request, Reply(400, JSON, body), HTTP)
        assert [(p.strength, p.rule.id) for p in problems if p.strength == "MUST"] == [("MUST", "mcp.error-id")], wrong
    exact = b'{"jsonrpc": "2.0", "error": {"code": -32600, "message": "x"}, "id": 9223372036854775808}'
    assert [p.strength for p in judge(check.expect, request, Reply(400, JSON, exact), HTTP)] == ["advice"]
    assert judge(check.expect, request, Reply(400, JSON, _error(-32600, None)), HTTP) == []
    one = BY_ID["method.unknown"]
    assert one.build is not None and one.expect is not None
    echoed = one.build(HTTP)
    assert isinstance(echoed, Request)
    for wrong_one in ("true", "1.0", '"unknown-1 "'):
        body = ('{"jsonrpc": "2.0", "error": {"code": -32601, "message": "x"}, "id": ' + wrong_one + "}").encode()
        assert "mcp.error-id" in [p.rule.id for p in judge(one.expect, echoed, Reply(404, JSON, body), HTTP)]


def _echoing(transform: Any) -> tuple[Any, list[Request]]:
    """A send answering every request with a result whose id is ``transform(the id sent)``."""
    sent: list[Request] = []

    async def send(request: Request) -> Exchange:
        sent.append(request)
        body = b'{"jsonrpc": "2.0", "result": {}, "id": ' + transform(request.rpc_id) + b"}"
        return request, Reply(200, JSON, body), None
    return send, sent


def test_every_id_shape_is_echoed_exactly() -> None:
    exact, sent = _echoing(lambda rpc_id: json.dumps(rpc_id, ensure_ascii=False).encode())
    assert trio.run(ids_echoed, HTTP, exact)[:2] == ("pass", "")
    assert [r.rpc_id for r in sent] == list(IDS)
    assert b'"id": 9223372036854775808,' in sent[IDS.index(2**63)].body  # sent as the integer token
    ascii_escaped, _ = _echoing(lambda rpc_id: json.dumps(rpc_id).encode())  # "\u00e9" is the same string
    assert trio.run(ids_echoed, HTTP, ascii_escaped)[0] == "pass"
    doubled, _ = _echoing(lambda rpc_id: json.dumps(float(rpc_id) if isinstance(rpc_id, int) and abs(rpc_id) > 2**53
                                                    else rpc_id, ensure_ascii=False).encode())
    status, detail, _, problems = trio.run(ids_echoed, HTTP, doubled)
    assert status == "fail" and len(problems) == 5, detail  # 2**53+1, 2**63-1, -2**63, 2**63, 10**20
    assert _rules(problems) == {"mcp.result-id"}
    cut, _ = _echoing(lambda rpc_id: json.dumps(rpc_id[:256] if isinstance(rpc_id, str) else rpc_id).encode())
    assert trio.run(ids_echoed, HTTP, cut)[1].count("expected the request's id") == 2  # 257 'x', 512 'é'


def test_a_missing_version_header_is_a_must_only_for_a_server_of_no_earlier_clients() -> None:
    """streamable-http: a server that supports clients older than 2025-06-18 MAY treat a request
    without MCP-Protocol-Version as 2025-03-26; one that does not MUST refuse it with -32020."""
    older_era = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Missing session ID"}})
    initialized = json.dumps({"jsonrpc": "2.0", "id": "init-older", "result": {"protocolVersion": "2025-03-26"}})
    refused_init = json.dumps({"jsonrpc": "2.0", "id": "init-older", "error": {"code": -32601, "message": "x"}})
    send, _ = _fake([Reply(400, JSON, older_era.encode()), Reply(200, JSON, initialized.encode())])
    status, detail, _, _ = trio.run(version_header_missing, HTTP, send)
    assert status == "pass" and detail.startswith("the server serves 2025-03-26 clients"), detail
    send, sent = _fake([Reply(400, JSON, older_era.encode()), Reply(200, JSON, refused_init.encode()),
                        Reply(200, JSON, refused_init.encode())])
    status, detail, _, problems = trio.run(version_header_missing, HTTP, send)
    # The id could be read, so the error's null id breaks the basic page's MUST too.
    assert status == "fail" and _rules(problems) == {"mcp.version-header-missing", "mcp.error-id"}, detail
    assert [json.loads(r.body)["params"]["protocolVersion"] for r in sent[1:]] == ["2025-03-26", "2024-11-05"]
    mismatch = json.dumps({"jsonrpc": "2.0", "id": 31, "error": {"code": -32020, "message": "x"}})
    send, sent = _fake([Reply(400, JSON, mismatch.encode())])
    assert trio.run(version_header_missing, HTTP, send)[0] == "pass" and len(sent) == 1


def _fake(replies: list[Reply]) -> tuple[Any, list[Request]]:
    sent: list[Request] = []

    async def send(request: Request) -> Exchange:
        sent.append(request)
        return request, replies[len(sent) - 1], None
    return send, sent


def _run(method: str, replies: list[Reply]) -> tuple[str, str, list[Request]]:
    send, sent = _fake(replies)
    verdict, detail, _, _ = trio.run(post_only(method), HTTP, send)
    return verdict, detail, sent


def test_get_and_delete_are_405_or_the_session_rule_of_a_server_keeping_sessions() -> None:
    allow = Reply(405, (("allow", "POST"),), b"")
    assert _run("GET", [allow])[:2] == ("pass", "")
    # RFC 9110: a 405 MUST carry Allow; 2026-07-28: a server of that revision only SHOULD answer 405.
    assert _run("DELETE", [Reply(405, (), b"")])[:2] == ("fail", "Allow header None, expected 'POST'")
    # 400 without a session: right only when the server keeps initialize-era sessions.
    initialized = Reply(200, (*JSON, ("mcp-session-id", "s1")), json.dumps(
        {"jsonrpc": "2.0", "id": "init", "result": {"protocolVersion": "2025-11-25"}}).encode())
    verdict, _, sent = _run("GET", [Reply(400, (), b""), initialized, Reply(202, (), b"")])
    assert verdict == "pass" and [r.method for r in sent] == ["GET", "POST", "POST"]
    stateless = Reply(200, JSON, json.dumps(
        {"jsonrpc": "2.0", "id": "init", "result": {"protocolVersion": "2025-11-25"}}).encode())
    verdict, detail, _ = _run("GET", [Reply(400, (), b""), stateless])
    assert verdict == "warn" and detail.startswith("HTTP status 400, expected 405")
    assert _run("GET", [Reply(200, (), b"")])[:2] == ("warn", "HTTP status 200, expected 405 (or 400 from a server keeping sessions)")


def test_no_check_of_a_cursor_the_server_never_issued() -> None:
    assert "pagination.cursor-tampered" not in BY_ID  # the specification says SHOULD


def test_an_unknown_resource_is_a_32602_error() -> None:
    # server/resources#error-handling (2026-07-28): "If the requested resource does not exist,
    # servers MUST return a JSON-RPC error with code -32602"; -32002 is 2025-11-25's code.
    check = BY_ID["resources.unknown-uri"]
    assert check.build is not None and check.expect is not None
    request = check.build(Target(**{**HTTP.__dict__, "discover": {"capabilities": {"resources": {}}}}))
    assert isinstance(request, Request)
    invalid = json.dumps({"jsonrpc": "2.0", "id": "read-1", "error": {"code": -32602, "message": "x"}}).encode()
    assert judge(check.expect, request, Reply(200, JSON, invalid), HTTP) == []
    old_code = json.dumps({"jsonrpc": "2.0", "id": "read-1", "error": {"code": -32002, "message": "x"}}).encode()
    assert [p.rule.id for p in judge(check.expect, request, Reply(200, JSON, old_code), HTTP)] == [
        "mcp.resource-not-found"]
    empty = json.dumps({"jsonrpc": "2.0", "id": "read-1", "result": {"contents": []}}).encode()
    assert [p.strength for p in judge(check.expect, request, Reply(200, JSON, empty), HTTP)] == ["MUST"]
