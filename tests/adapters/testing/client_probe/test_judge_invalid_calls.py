"""The client judge asks of the answers to a server's invalid calls what JSON-RPC 2.0 asks, no
more: a call whose id can be read gets a Response with that id (section 5), an error for an
invalid Request object (5.1: -32600), to which the MCP rules of its method (ping's empty result)
do not apply; and an error with id null is the answer JSON-RPC gives when no id could be read
("If there was an error in detecting the id in the Request object (e.g. Parse error/Invalid
Request), it MUST be Null."), not a stray response. Traffic fed straight into the hostile
server, as in test_judge.py."""

from __future__ import annotations

from typing import Any

import pytest

from mcpwire_adapters.testing.client_probe.fuzzing import Mutation, apply
from mcpwire_adapters.testing.client_probe.scenarios import by_name
from mcpwire_adapters.testing.client_probe.script import Await

from test_judge import Wire, era_headers, initialize, rules_of

INVALID_ERROR = {"code": -32600, "message": "Invalid Request"}


def hostile_call(change: list[Any]) -> tuple[Wire, str]:
    """basic-2025 whose call's stream sends its ping changed by the ``field`` mutation
    ``change`` (path, how, value); the client initialized and called the tool."""
    script = apply(by_name("basic-2025").script(), [Mutation("field", 0, [0, *change])])
    assert script[0].to == "tools/call" and script[0].messages[0]["method"] == "ping"
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
