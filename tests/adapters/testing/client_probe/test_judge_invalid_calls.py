"""The client judge asks of the answers to a server's invalid calls what JSON-RPC 2.0 asks, no
more: a call whose id can be read gets a Response with that id (section 5), an error for an
invalid Request object (5.1: -32600), to which the MCP rules of its method (ping's empty result)
do not apply; and an error with id null is the answer JSON-RPC gives when no id could be read
("If there was an error in detecting the id in the Request object (e.g. Parse error/Invalid
Request), it MUST be Null."), not a stray response; nor is an error carrying the id of a
message of the server's that was no request (no method) nor a valid response. An initialize
answer that is no valid JSON-RPC response (or came with a non-2xx status) is no initialization:
the rules that follow one do not bind; and the initialize request is never cancelled. A request
in an application/json body held open was never delivered (a client reads such a body to its
end). Traffic fed straight into the hostile server, as in test_judge.py."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from mcpwire_adapters.testing.client_probe.fuzzing import Mutation, apply
from mcpwire_adapters.testing.client_probe.scenarios import by_name
from mcpwire_adapters.testing.client_probe.script import Await
from mcpwire_adapters.testing.verdict import Problem

from test_judge import ACCEPT, Wire, era_headers, initialize, rules_of

INVALID_ERROR = {"code": -32600, "message": "Invalid Request"}


def hostile_call(change: list[Any]) -> tuple[Wire, str]:
    """basic-2025 whose call's stream sends its ping changed by the ``field`` mutation
    ``change`` (path, how, value); the client initialized and called the tool."""
    script = apply(by_name("basic-2025").script(), [Mutation("field", 0, [0, *change])])
    assert script[0].to == "tools/call" and by_name("basic-2025").script()[0].messages[0]["method"] == "ping"
    wire = Wire("basic-2025", script=script)
    session = initialize(wire)
    wire.send("POST", {"jsonrpc": "2.0", "method": "notifications/initialized"}, *era_headers(session))
    plan = wire.send("POST", {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo"}},
                     *era_headers(session))
    if change[0] != ["id"]:
        assert plan.parts[1] == Await((1001,))  # the call's stream awaits the answer to its ping
    return wire, session


@pytest.mark.parametrize("change", [[["jsonrpc"], "delete", None], [["jsonrpc"], "replace", "1.0"]])
def test_an_invalid_call_is_answered_by_an_error_with_its_id(change: list[Any]) -> None:
    wire, session = hostile_call(change)
    rules = rules_of(wire.judge())
    assert "jsonrpc.reply" in rules and "2025.ping" not in rules  # unanswered: JSON-RPC's rule, not ping's
    wire.send("POST", {"jsonrpc": "2.0", "id": 1001, "error": INVALID_ERROR}, *era_headers(session))
    rules = rules_of(wire.judge())
    assert not {"jsonrpc.reply", "2025.ping", "jsonrpc.response-id"} & set(rules)


def test_a_valid_ping_still_needs_its_empty_result() -> None:
    wire, session = hostile_call([["jsonrpc"], "replace", "2.0"])  # unchanged: a valid ping
    assert "2025.ping" in rules_of(wire.judge())
    wire.send("POST", {"jsonrpc": "2.0", "id": 1001, "error": INVALID_ERROR}, *era_headers(session))
    assert "2025.ping" in rules_of(wire.judge())  # an error is no empty result


def test_an_error_with_id_null_is_no_stray_response() -> None:
    wire, session = hostile_call([["id"], "replace", True])  # an id JSON-RPC does not allow: cannot be read
    wire.send("POST", {"jsonrpc": "2.0", "id": None, "error": INVALID_ERROR}, *era_headers(session))
    rules = rules_of(wire.judge())
    assert "jsonrpc.response-id" not in rules and "jsonrpc.reply" not in rules
    wire.send("POST", {"jsonrpc": "2.0", "id": None, "result": {}}, *era_headers(session))  # a result: stray
    assert "jsonrpc.response-id" in rules_of(wire.judge())


def test_a_message_without_a_method_answered_with_its_id_is_no_stray_response() -> None:
    wire, session = hostile_call([["method"], "delete", None])  # {"jsonrpc": "2.0", "id": 1001}: no request
    wire.send("POST", {"jsonrpc": "2.0", "id": 1001, "error": INVALID_ERROR}, *era_headers(session))
    assert rules_of(wire.judge()) == []  # section 5: the id could be read, so the error carries it
    wire.send("POST", {"jsonrpc": "2.0", "id": 1001, "result": {}}, *era_headers(session))  # a result: stray
    wire.send("POST", {"jsonrpc": "2.0", "id": 1002, "error": INVALID_ERROR}, *era_headers(session))  # never sent
    problems = [p for p in wire.judge().problems if isinstance(p, Problem)]
    assert [(p.rule.id, "id 1001" in str(p), "id 1002" in str(p)) for p in problems] == [
        ("jsonrpc.response-id", True, False), ("jsonrpc.response-id", False, True)]


def initialize_answered(change: Callable[[dict[str, Any]], dict[str, Any]], status: int = 200) -> Wire:
    """basic-2025 whose answer to initialize (row 1) is its message changed by ``change``, with
    HTTP ``status``; the client sent initialize, then (refusing the answer: no initialization)
    a ping without a session."""
    script = by_name("basic-2025").script()
    row = script[1]
    assert row.to == "initialize" and len(row.messages) == 1
    row = replace(row, messages=(change(dict(row.messages[0])),), status=status)
    wire = Wire("basic-2025", script=(script[0], row, *script[2:]))
    initialize(wire)
    wire.send("POST", {"jsonrpc": "2.0", "id": 2, "method": "ping"}, ACCEPT)
    return wire


def without(key: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda message: {k: v for k, v in message.items() if k != key}


def with_(key: str, value: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda message: {**message, key: value}


@pytest.mark.parametrize(("change", "status"), [
    (without("jsonrpc"), 200), (with_("jsonrpc", "1.0"), 200), (with_("error", INVALID_ERROR), 200),
    (with_("jsonrpc", "2.0"), 404),
], ids=["no jsonrpc", "jsonrpc 1.0", "result and error", "HTTP 404"])
def test_an_initialize_answer_that_is_no_valid_response_is_no_initialization(
        change: Callable[[dict[str, Any]], dict[str, Any]], status: int) -> None:
    rules = rules_of(initialize_answered(change, status).judge())
    assert not {"2025.initialized", "2025.session-id", "2025.version-header"} & set(rules), rules


def test_after_a_valid_initialize_result_the_rules_bind() -> None:
    rules = rules_of(initialize_answered(with_("jsonrpc", "2.0")).judge())
    assert {"2025.initialized", "2025.session-id", "2025.version-header"} <= set(rules)


def test_a_client_must_not_cancel_its_initialize() -> None:
    wire = initialize_answered(without("jsonrpc"))  # the client refused the answer, and its ping is unanswered
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}
    wire.send("POST", cancel, ACCEPT)  # the ping's id: no initialize
    assert "2025.initialize-cancel" not in rules_of(wire.judge())
    wire.send("POST", {**cancel, "params": {"requestId": 1, "reason": "timed out"}}, ACCEPT)
    assert "2025.initialize-cancel" in rules_of(wire.judge())


def called(scenario: str, mutation: Mutation) -> Wire:
    """``scenario`` with its answers changed by ``mutation``; the client initialized and called the tool."""
    wire = Wire(scenario, script=apply(by_name(scenario).script(), [mutation]))
    session = initialize(wire)
    wire.send("POST", {"jsonrpc": "2.0", "method": "notifications/initialized"}, *era_headers(session))
    wire.send("POST", {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo"}},
              *era_headers(session))
    return wire


def test_a_request_in_a_json_body_held_open_was_never_delivered() -> None:
    held = called("endless-requests", Mutation("kind", 0, "json"))  # the body: the ping, never ended
    assert rules_of(held.judge()) == []  # a client reads an application/json body to its end
    call = held.server.records[-1]
    assert call.ended == "hold" and call.delivered and call.readable() == []
    ended = called("basic-2025", Mutation("kind", 0, "json"))  # the body: the ping, ended
    assert rules_of(ended.judge()) == ["2025.ping"]  # read whole, and never answered
