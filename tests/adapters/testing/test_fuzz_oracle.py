"""The fuzzer's oracle and strategies without a server: what each kind of request
calls for, read from the request alone (docs/fuzzing.md 'What is checked'), and the public
strategies in a hypothesis test of one's own."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpwire_adapters.testing.fuzz import strategies as mst
from mcpwire_adapters.testing.fuzz.cases import apply_header_mutation, decode_step, encode_step, headers_for, step_of, Info, Step
from mcpwire_adapters.testing.fuzz.oracle import Context, check, expect_for
from mcpwire_adapters.testing.judge import valid_id, within_bounds
from mcpwire_adapters.testing.rawwire import NDJSON, Reply, Request, meta
from mcpwire_adapters.testing.verdict import visible
from mcpwire_adapters.testing.fuzz.runner import curl_command

HTTP, STDIO = Context(), Context(stdio=True, loopback=False)


def message(**fields: Any) -> dict[str, Any]:
    value: dict[str, Any] = {"jsonrpc": "2.0", "id": 7, "method": "server/discover", "params": {"_meta": meta()}}
    value.update(fields)
    return value


def post(value: Any, body: bytes | None = None, **changes: Any) -> Request:
    return Request("POST", tuple(headers_for(value)), body if body is not None else json.dumps(value).encode(), **changes)


def test_valid_ids_are_the_schemas_and_the_bounds_are_ours() -> None:
    # schema $defs RequestId: ["string", "integer"], no bound on either.
    assert valid_id("x" * 256) and valid_id(2**63 - 1) and valid_id(-(2**63)) and valid_id("")
    assert valid_id("x" * 257) and valid_id(2**63) and valid_id(10**30)
    invalid: tuple[Any, ...] = (True, None, 1.5, [], {})
    assert not any(valid_id(v) for v in invalid)
    # This project's own bounds (256 bytes, int64): advice only.
    assert within_bounds("x" * 256) and within_bounds(2**63 - 1) and within_bounds(-(2**63))
    assert not within_bounds("x" * 257) and not within_bounds(2**63) and not within_bounds("é" * 129)


def test_an_id_beyond_our_bounds_echoed_is_an_answer() -> None:
    """A 257-byte string id, or 2**63, is one the schema allows: echoed exactly it is the answer
    (this project's refusal with -32600 is advice only, withheld without --strict)."""
    for big in ("x" * 257, 2**63):
        value = message(id=big)
        request = post(value)
        echoed = Reply(200, (("content-type", "application/json"),), json.dumps(
            {"jsonrpc": "2.0", "id": big, "result": {"resultType": "complete", "supportedVersions": ["2026-07-28"],
                                                     "capabilities": {}, "ttlMs": 0, "cacheScope": "private"}}).encode())
        problems = check(request, echoed, HTTP)
        assert [p.strength for p in problems] == ["advice"], problems  # not "no response to a request"
        assert visible(problems, strict=False) == []
        refused = Reply(400, (("content-type", "application/json"),), json.dumps(
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "x"}}).encode())
        assert check(request, refused, HTTP) == []
        rounded = Reply(400, (("content-type", "application/json"),), json.dumps(
            {"jsonrpc": "2.0", "id": float(big) if isinstance(big, int) else big[:-1],
             "error": {"code": -32600, "message": "x"}}).encode())
        assert [p.strength for p in check(request, rounded, HTTP)] == ["MUST"]


def test_what_each_request_calls_for() -> None:
    assert expect_for(post(message()), HTTP).codes is None  # valid: a result or any error, the id echoed
    assert expect_for(post(message()), HTTP).id == "echo"
    garbage = expect_for(post(message(), b"{not json"), HTTP)
    assert garbage.codes == frozenset({-32700}) and garbage.id == "null" and garbage.statuses == frozenset({400})
    assert expect_for(post([message()]), HTTP).codes == frozenset({-32600})  # no batches
    assert expect_for(post(message(id=True)), STDIO).id == "null"
    assert expect_for(post(message(params=[1])), HTTP).codes == frozenset({-32602})
    # params 1 or null are not JSON-RPC params at all (section 4.2: an array or an object): -32600 as well
    assert expect_for(post(message(params=1)), HTTP).codes == frozenset({-32600, -32602})
    assert expect_for(post(message(params=None)), HTTP).codes == frozenset({-32600, -32602})
    # A member JSON-RPC does not define ("prams"): a server may ignore it or refuse the request.
    assert expect_for(post(message(prams={})), HTTP).codes is None
    assert expect_for(post(message(prams={})), HTTP).id is None
    unknown = expect_for(post(message(method="fuzz/x")), HTTP)
    assert unknown.codes == frozenset({-32601}) and unknown.statuses == frozenset({404})
    notification = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    assert expect_for(post(notification), HTTP).silent and expect_for(post(notification), STDIO).silent
    response = {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert expect_for(post(response), HTTP).statuses == frozenset({202, *range(400, 500)})  # accepted, or refused
    no_version = message(params={"_meta": {k: v for k, v in meta().items() if "protocolVersion" not in k}})
    assert expect_for(post(no_version), HTTP).codes == frozenset({-32602, -32020})  # either rule may be reported
    assert expect_for(post(no_version), STDIO).codes == frozenset({-32602})
    method, dropped = apply_header_mutation(headers_for(message()), "headers.drop", "MCP-Protocol-Version")
    assert expect_for(Request(method, tuple(dropped), json.dumps(message()).encode()), HTTP).codes == frozenset({-32020})
    _, text = apply_header_mutation(headers_for(message()), "headers.content-type", "text/plain")
    assert expect_for(Request("POST", tuple(text), b"{}"), HTTP).statuses == frozenset({415})
    assert expect_for(Request("GET", (), b""), HTTP).statuses == frozenset({405})
    _, origin = apply_header_mutation(headers_for(message()), "headers.origin", "http://evil.example")
    assert expect_for(Request("POST", tuple(origin), b"{}"), HTTP).statuses == frozenset({403})  # a MUST of the transport
    # What the specification does not settle asserts nothing: a wildcard Accept, a BOM on stdio, duplicate keys.
    _, wild = apply_header_mutation(headers_for(message()), "headers.accept", "*/*")
    assert expect_for(Request("POST", tuple(wild), b"{}"), HTTP).id is None
    assert expect_for(post(message(), b"\xef\xbb\xbf{}"), STDIO).id is None
    assert expect_for(post(message(), b'{"id": 1, "id": 2}'), HTTP).id is None


def test_check_judges_the_answer() -> None:
    request = post(message(method="tasks/get"))  # a method whose result is not held to a type here
    good = Reply(200, (("content-type", "application/json"),), b'{"jsonrpc":"2.0","id":7,"result":{}}')
    assert check(request, good, HTTP) == []
    wrong_id = Reply(200, (("content-type", "application/json"),), b'{"jsonrpc":"2.0","id":"7","result":{}}')
    assert check(request, wrong_id, HTTP) == ["id '7', expected the request's id 7"]
    status = Reply(200, (("content-type", "application/json"),),
                   b'{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"x"}}')
    assert check(request, status, HTTP) == ["error -32600 with HTTP 200, expected 400 or 403 or 405 or 406 or 413 or 415"]
    assert check(request, status, HTTP)[0].strength == "advice"  # this project's mapping (docs/errors.md), no rule's
    not_found = Reply(200, (("content-type", "application/json"),),
                      b'{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"x"}}')
    assert [p.rule.id for p in check(request, not_found, HTTP)] == ["mcp.method-not-found"]  # 404: a MUST
    # A -32602 met while executing may come with 200 (only the three MCP errors are fixed at 400).
    invalid_params = Reply(200, (("content-type", "application/json"),),
                           b'{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"x"}}')
    assert check(request, invalid_params, HTTP) == []
    internal = Reply(200, (("content-type", "application/json"),),
                     b'{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"x"}}')
    assert check(request, internal, HTTP) == []
    asks = Reply(0, (("content-type", NDJSON),), b'{"jsonrpc":"2.0","id":1,"method":"roots/list"}\n'
                 b'{"jsonrpc":"2.0","id":7,"result":{}}')
    assert check(request, asks, STDIO)[0].startswith("a request to the client")
    notification = post({"jsonrpc": "2.0", "method": "notifications/fuzz"})
    answered = Reply(202, (("content-type", "application/json"),), b'{"jsonrpc":"2.0","id":null,"result":{}}')
    assert any("gets none" in p for p in check(notification, answered, HTTP))
    # A notification or response the server cannot accept is an HTTP error; its body MAY be an error
    # with no id (streamable-http, sending messages to the server), but never a response with an id.
    refused = Reply(400, (("content-type", "application/json"),),
                    b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}')
    assert check(notification, refused, HTTP) == []
    assert check(post({"jsonrpc": "2.0", "id": 1, "result": {}}), refused, HTTP) == []
    refused_with_id = Reply(400, (("content-type", "application/json"),),
                            b'{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"x"}}')
    assert any("gets none" in p for p in check(notification, refused_with_id, HTTP))
    assert any("gets none" in p for p in check(notification, refused, STDIO))  # stdio: never an answer


def test_replay_steps_round_trip_and_curl_keeps_the_headers() -> None:
    step = step_of(mst.Message(None, "bytes.bad-utf8", b'{"a":"\xff"}'), Info(stdio=False),
                   headers=[("Content-Type", "text/plain")])
    again = decode_step(json.loads(json.dumps(encode_step(step))))
    assert again == Step(step.request, "oracle", "bytes.bad-utf8")
    command = curl_command("http://127.0.0.1:1/mcp", Request("POST", (("Mcp-Method", "x"),), b"{}"))
    assert command == "curl -sS -i -X POST http://127.0.0.1:1/mcp -H Accept: -H Content-Type: -H 'Mcp-Method: x' " \
                      "--data-binary '{}'"


SCHEMA = {"type": "object", "required": ["a", "tags"], "properties": {
    "a": {"type": "integer", "minimum": 0, "maximum": 9}, "b": {"type": "string", "maxLength": 3},
    "tags": {"type": "array", "items": {"enum": ["x", "y"]}}, "c": {"type": ["boolean", "null"]}}}


@settings(max_examples=50, deadline=None)
@given(mst.from_schema(SCHEMA))
def test_from_schema_draws_valid_arguments(arguments: Any) -> None:
    jsonschema.validate(arguments, SCHEMA)


@settings(max_examples=50, deadline=None)
@given(mst.requests(), st.data())
def test_valid_requests_are_valid_and_mutations_are_labelled(request: mst.Message, data: st.DataObject) -> None:
    value = request.value
    assert value["jsonrpc"] == "2.0" and valid_id(value["id"]) and value["method"] != "tools/call"
    assert expect_for(post(value), HTTP).codes is None  # the oracle finds nothing wrong with it
    mutated = data.draw(mst.mutated(value))
    assert mutated.label.split(".")[0] in ("envelope", "meta", "params", "bytes")


def test_results_are_held_to_their_schema_type() -> None:
    listing = post(message(method="tools/list"))
    bad = Reply(200, (("content-type", "application/json"),), b'{"jsonrpc":"2.0","id":7,"result":{"tools":5}}')
    assert [p.split(":")[0] for p in check(listing, bad, HTTP)] == [
        "the result has no resultType", "the result is not a valid ListToolsResult (schema)"]
    asks = Reply(200, (("content-type", "application/json"),),
                 b'{"jsonrpc":"2.0","id":7,"result":{"resultType":"input_required","inputRequests":{}}}')
    assert check(listing, asks, HTTP)[0].startswith("an input_required result to tools/list")
    other = Reply(200, (("content-type", "application/json"),), b'{"jsonrpc":"2.0","id":7,"result":{"resultType":"task"}}')
    assert check(listing, other, HTTP) == []  # another shape (a task): not judged here


def test_accept_is_the_clients_rule_a_server_may_serve_or_refuse() -> None:
    """No Accept (any type, RFC 9110), or only one of the two types: served or refused (4xx),
    both conform; an Accept listing neither is this project's 406 (advice)."""
    served = Reply(200, (("content-type", "application/json"),), json.dumps(
        {"jsonrpc": "2.0", "id": 7, "result": {"resultType": "complete", "supportedVersions": ["2026-07-28"],
                                               "capabilities": {}, "ttlMs": 0, "cacheScope": "private"}}).encode())
    refused = Reply(406, (("content-type", "text/plain"),), b"Not Acceptable")
    for how, arg in (("headers.drop", "Accept"), ("headers.accept", "application/json"),
                     ("headers.accept", "text/event-stream")):
        _, changed = apply_header_mutation(headers_for(message()), how, arg)
        request = Request("POST", tuple(changed), json.dumps(message()).encode())
        assert check(request, served, HTTP) == [], (how, arg)
        assert check(request, refused, HTTP) == [], (how, arg)
    _, html = apply_header_mutation(headers_for(message()), "headers.accept", "text/html")
    neither = Request("POST", tuple(html), json.dumps(message()).encode())
    assert [(p.strength, p.rule.id) for p in check(neither, served, HTTP)] == [("advice", "mcpwire.accept")]
    assert check(neither, refused, HTTP) == []
