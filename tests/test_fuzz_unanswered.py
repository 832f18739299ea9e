"""Invariant 6 (fuzz/README.md): a notification or a posted response is never answered.

A random notification (a string ``method``, no ``id`` member, anything else random) and a
random response object (no ``method`` member, a ``result`` or ``error`` member, anything else
random, a bad id included) get HTTP 202 with an empty body from ``Server.receive_http``, with
any MCP headers, and no line at all from ``StdioConnection``, where the requests around them
are answered as if they were not there (wire reference sections 1 and 13.2 step 7).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import mcpwire
from fuzz import invariants
from fuzz import strategies as S
from fuzz.bounds import budget, time_bound
from fuzz.targets import NOW, make_server

SERVER = make_server()
SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
UNANSWERED = {"notification": S.unanswered_notifications(), "response": S.unanswered_responses()}


def discover(request_id: str) -> bytes:
    meta = {"io.modelcontextprotocol/protocolVersion": mcpwire.PROTOCOL_VERSION,
            "io.modelcontextprotocol/clientCapabilities": {}}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "server/discover",
                       "params": {"_meta": meta}}).encode()


def assert_202(message: Any, headers: list[tuple[bytes, bytes]]) -> None:
    body = S.body_bytes(message)
    request = mcpwire.HttpRequest(method="POST", target="/mcp", headers=headers, body=body)
    with time_bound():
        answer = SERVER.receive_http(request, now=NOW)
    assert isinstance(answer, tuple), f"{answer!r} for {body[:300]!r}"
    head, out = answer
    assert head.status == 202 and out.data == b"" and out.more is False, (head, out, body[:300])
    invariants.reply_invariants(head, out)


def assert_no_line(message: Any, end: bytes) -> None:
    line = S.body_bytes(message)
    assert b"\n" not in line
    conn = mcpwire.StdioConnection(SERVER)
    with time_bound():
        outputs = conn.receive_data(discover("before") + b"\n" + line + end + discover("after") + b"\n", now=NOW)
    assert all(isinstance(o, bytes) for o in outputs), outputs
    ids = [m["id"] for o in outputs for m in invariants.line_invariants(o)]
    assert ids == ["before", "after"], (ids, line[:300])
    assert conn.in_flight == 0


@settings(max_examples=budget(150), suppress_health_check=SLOW)
@given(message=S.unanswered_notifications(), data=st.data())
def test_a_random_notification_gets_202_over_http(message: dict[str, Any], data: st.DataObject) -> None:
    event(f"jsonrpc {'ok' if message.get('jsonrpc') == '2.0' else 'bad'}")
    assert_202(message, data.draw(S.unanswered_headers(message)))


@settings(max_examples=budget(150), suppress_health_check=SLOW)
@given(message=S.unanswered_responses(), data=st.data())
def test_a_random_response_gets_202_over_http(message: dict[str, Any], data: st.DataObject) -> None:
    assert_202(message, data.draw(S.unanswered_headers(message)))


@settings(max_examples=budget(150), suppress_health_check=SLOW)
@given(message=S.unanswered_notifications(), end=st.sampled_from([b"\n", b"\r\n", b" \n"]))
def test_a_random_notification_writes_no_line_on_stdio(message: dict[str, Any], end: bytes) -> None:
    assert_no_line(message, end)


@settings(max_examples=budget(150), suppress_health_check=SLOW)
@given(message=S.unanswered_responses(), end=st.sampled_from([b"\n", b"\r\n", b" \n"]))
def test_a_random_response_writes_no_line_on_stdio(message: dict[str, Any], end: bytes) -> None:
    assert_no_line(message, end)


def test_the_strategies_make_what_they_say() -> None:
    # A notification has a string method and no id member; a response no method member and a
    # result or an error member (fuzz/README.md, invariant 6).
    @settings(max_examples=50, suppress_health_check=SLOW)
    @given(kind=st.sampled_from(sorted(UNANSWERED)), data=st.data())
    def check(kind: str, data: st.DataObject) -> None:
        message = data.draw(UNANSWERED[kind])
        if kind == "notification":
            assert isinstance(message["method"], str) and "id" not in message
        else:
            assert "method" not in message and ("result" in message or "error" in message)

    check()
