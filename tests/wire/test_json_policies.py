# ruff: noqa: UP031  (JSON text templates: %-formatting leaves their braces readable)
"""The JSON decoding policies of docs/limits.md ("JSON decoding policies"), each held here:
duplicate keys, very large numbers, deep nesting, NaN and Infinity, lone surrogates, a BOM.

Everything goes through the server engine's public entry points (HTTP and stdio) and is read
back through the same documented-outcome oracle as the fuzz suites.
"""

from __future__ import annotations

import inspect
import json
import sys
from typing import Any

import pytest

import mcpwire
from fuzz import invariants
from fuzz.targets import NOW, make_server

SERVER = make_server()
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
M = json.dumps(META)


def post(body: str | bytes, method: str = "server/discover", name: str | None = None,
         version: bytes = b"2026-07-28") -> Any:
    headers = [(b"Content-Type", b"application/json"), (b"Accept", b"application/json, text/event-stream"),
               (b"MCP-Protocol-Version", version), (b"Mcp-Method", method.encode())]
    if name is not None:
        headers.append((b"Mcp-Name", name.encode()))
    data = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else body
    return SERVER.receive_http(mcpwire.HttpRequest(method="POST", target="/mcp", headers=headers, body=data), now=NOW)


def answered(answer: Any) -> dict[str, Any]:
    """The JSON-RPC message of a complete reply (checked), or a marker for an exchange."""
    if isinstance(answer, mcpwire.HttpExchange):
        answer.cancel()
        return {"exchange": answer.event}
    assert isinstance(answer, tuple), answer
    message = invariants.reply_invariants(*answer)
    assert message is not None
    return message


def code(answer: Any) -> int | None:
    error = answered(answer).get("error")
    return None if error is None else error["code"]


def call(arguments: str, tool: str = "echo") -> str:
    return '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s","arguments":%s,"_meta":%s}}' % (
        tool, arguments, M)


# --- duplicate keys: the last one wins --------------------------------------------------------------


def test_duplicate_keys_in_the_envelope_last_wins() -> None:
    assert answered(post('{"jsonrpc":"2.0","id":1,"id":2,"method":"server/discover","params":{"_meta":%s}}' % M))["id"] == 2
    assert code(post('{"jsonrpc":"1.0","jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":%s}}' % M)) is None
    assert code(post('{"jsonrpc":"2.0","jsonrpc":"1.0","id":1,"method":"server/discover","params":{"_meta":%s}}' % M)) == -32600
    # The method that runs is the last one, and it is the one Mcp-Method must match.
    body = '{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"server/discover","params":{"_meta":%s}}' % M
    assert "supportedVersions" in answered(post(body, "server/discover"))["result"]
    assert code(post(body, "tools/list")) == -32020
    # params twice: the last object is the params.
    assert code(post('{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"x":1},"params":{"_meta":%s}}' % M)) is None
    assert code(post('{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":%s},"params":{}}' % M)) == -32602


def test_duplicate_keys_in_meta_last_wins() -> None:
    good, bad = '"io.modelcontextprotocol/protocolVersion":"2026-07-28"', '"io.modelcontextprotocol/protocolVersion":"1999"'
    caps = '"io.modelcontextprotocol/clientCapabilities":{}'
    template = '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{%s,%s,%s}}}'
    assert code(post(template % (bad, good, caps))) is None
    # Last is 1999: the header must say 1999 too, and then it is unsupported (-32022).
    assert code(post(template % (good, bad, caps), version=b"1999")) == -32022
    assert code(post(template % (good, bad, caps))) == -32020
    level = '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{%s,%s,"io.modelcontextprotocol/logLevel":"loud","io.modelcontextprotocol/logLevel":"info"}}}'
    assert code(post(level % (good, caps))) is None


def test_duplicate_keys_in_params_last_wins_and_headers_mirror_the_last() -> None:
    body = ('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","name":"echo",'
            '"arguments":{"a":1,"a":2},"_meta":%s}}' % M)
    event = answered(post(body, "tools/call", "echo"))["exchange"]
    assert event.name == "echo" and event.arguments == {"a": 2}
    assert code(post(body, "tools/call", "add")) == -32020  # Mcp-Name is checked against the last name
    # A raw-JSON-Schema tool: only the last value is validated.
    event = answered(post(call('{"a":"x","a":5,"b":1}', "add"), "tools/call", "add"))["exchange"]
    assert event.arguments == {"a": 5, "b": 1}


def test_duplicate_keys_in_struct_typed_arguments_every_value_is_checked_the_last_is_kept() -> None:
    # msgspec type-checks every occurrence while decoding into a Struct, then keeps the last:
    # an earlier value of the wrong type is a tool execution error even if the last is valid.
    event = answered(post(call('{"a":1,"a":2}', "typed"), "tools/call", "typed"))["exchange"]
    assert event.arguments.a == 2
    result = answered(post(call('{"a":"x","a":5}', "typed"), "tools/call", "typed"))["result"]
    assert result["isError"] is True


def test_duplicate_keys_do_not_change_the_request_state_scope() -> None:
    meta = json.dumps({**META, "io.modelcontextprotocol/clientCapabilities": {"roots": {}}})
    first = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":1},"_meta":%s}}'
    exchange = post(first % meta, "tools/call", "echo")
    assert isinstance(exchange, mcpwire.HttpExchange)
    (head, body) = exchange.input_required({"n": {"method": "roots/list", "params": {}}}, state="s")
    assert isinstance(body, mcpwire.ResponseBody)
    token = json.loads(body.data)["result"]["requestState"]
    retry = ('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"a":0,"a":1},'
             '"requestState":"%s","inputResponses":{},"_meta":%s}}' % (token, meta))
    assert answered(post(retry, "tools/call", "echo"))["exchange"].state == "s"


# --- very large numbers -----------------------------------------------------------------------------


@pytest.mark.parametrize(("request_id", "expected"), [
    ("9223372036854775807", None), ("-9223372036854775808", None), ("9223372036854775808", -32600),
    ("-9223372036854775809", -32600), ("1" + "0" * 30, -32600), ("1.0", -32600), ("1e2", -32600), ("1e400", -32600),
    ("9" * 5000, -32600),
])
def test_ids_beyond_int64_are_invalid_requests_with_id_null(request_id: str, expected: int | None) -> None:
    message = answered(post('{"jsonrpc":"2.0","id":%s,"method":"server/discover","params":{"_meta":%s}}' % (request_id, M)))
    if expected is None:
        assert message["id"] == int(request_id)
    else:
        assert message["error"]["code"] == expected and message["id"] is None


def test_large_integers_in_arguments_reach_the_handler_up_to_4300_digits() -> None:
    # msgspec decodes any integer of up to 4300 digits (Python's int-to-str limit) exactly.
    big = 10**30
    assert answered(post(call('{"x":%d}' % big), "tools/call", "echo"))["exchange"].arguments == {"x": big}
    assert answered(post(call('{"a":%d}' % big, "typed"), "tools/call", "typed"))["exchange"].arguments.a == big
    digits = int("9" * 4300)
    assert answered(post(call('{"x":%s}' % ("9" * 4300)), "tools/call", "echo"))["exchange"].arguments == {"x": digits}


@pytest.mark.parametrize("number", ["9" * 4301, "1e400", "-1e400"])
def test_numbers_python_cannot_hold_in_arguments_are_a_tool_execution_error(number: str) -> None:
    result = answered(post(call('{"x":%s}' % number), "tools/call", "echo"))["result"]
    assert result["isError"] is True and "out of range" in result["content"][0]["text"]


def test_numbers_python_cannot_hold_in_unread_members_are_ignored() -> None:
    body = '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"x":1e400,"y":%s,"_meta":%s}}' % ("9" * 5000, M)
    assert code(post(body)) is None


def test_a_progress_token_beyond_int64_is_invalid_params() -> None:
    meta = {**META, "progressToken": 2**63}
    body = '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":%s}}' % json.dumps(meta)
    assert code(post(body)) == -32602


@pytest.mark.parametrize("number", ["1e400", "9" * 5000])
def test_numbers_python_cannot_hold_in_members_the_engine_reads_are_invalid_params(number: str) -> None:
    # Was bug F1 (an escaping msgspec.ValidationError); more cases in tests/test_fuzz_findings.py.
    body = '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"x":%s}}}' % number
    message = answered(post(body))
    assert message["error"]["code"] == -32602 and message["id"] == 1


# --- deep nesting -----------------------------------------------------------------------------------


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def probe(place: str, depth: int) -> dict[str, Any]:
    if place == "top":
        body = '{"jsonrpc":"2.0","id":1,"method":"server/discover","x":%s,"params":{"_meta":%s}}' % (nested(depth), M)
        return answered(post(body))
    return answered(post(call('{"x":%s}' % nested(depth)), "tools/call", "echo"))


def accepted_depth(place: str) -> tuple[int, dict[str, Any]]:
    """The deepest array accepted at ``place`` (by bisection), and the answer one level deeper,
    both measured from the same stack depth."""
    lo, hi = 1, sys.getrecursionlimit() + 100
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if "error" not in probe(place, mid) else (lo, mid - 1)
    return lo, probe(place, lo + 1)


def _deeper(frames: int, place: str) -> int:
    return accepted_depth(place)[0] if frames == 0 else _deeper(frames - 1, place)


def test_nesting_limit_is_the_recursion_limit_less_the_callers_stack() -> None:
    # msgspec guards recursion with Python's own limit, so the deepest JSON accepted is about
    # sys.getrecursionlimit() minus how deep the host's stack already is when it calls the
    # engine: 993 levels from a shallow script, fewer under a deep framework (docs/limits.md).
    depth, past = accepted_depth("top")
    stack = len(inspect.stack())
    assert sys.getrecursionlimit() - 20 <= depth + stack <= sys.getrecursionlimit(), (depth, stack)
    assert past["error"] == {"code": -32700, "message": "Parse error: JSON nested too deeply"} and past["id"] is None
    # Every frame the caller already uses costs one level.
    assert _deeper(100, "top") == _deeper(0, "top") - 100
    arguments, past = accepted_depth("arguments")
    assert 1 <= depth - arguments <= 6  # the arguments sit 3 levels deeper, and are decoded from deeper
    # Past the arguments' own limit the envelope was still read: -32700 with the request's id.
    assert past["error"]["code"] == -32700 and past["id"] == 1


@pytest.mark.parametrize("depth", [64, 200])
def test_moderate_nesting_is_always_accepted(depth: int) -> None:
    assert code(post(call('{"x":%s}' % nested(depth)), "tools/call", "echo")) is None


def test_nesting_past_the_limit_is_a_parse_error() -> None:
    depth = sys.getrecursionlimit() + 10
    top = '{"jsonrpc":"2.0","id":1,"method":"server/discover","x":%s,"params":{"_meta":%s}}' % (nested(depth), M)
    message = answered(post(top))
    assert message["error"] == {"code": -32700, "message": "Parse error: JSON nested too deeply"} and message["id"] is None
    conn = mcpwire.StdioConnection(SERVER)
    (out,) = conn.receive_data(top.encode() + b"\n", now=NOW)
    assert invariants.line_invariants(out)[0]["error"]["code"] == -32700


# --- NaN, Infinity and other non-JSON literals ------------------------------------------------------


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "nan", "+1", "01", ".5", "0x10", "'x'", "undefined"])
@pytest.mark.parametrize("where", ["params", "arguments", "id"])
def test_non_json_literals_are_parse_errors(literal: str, where: str) -> None:
    if where == "id":
        body = '{"jsonrpc":"2.0","id":%s,"method":"server/discover","params":{"_meta":%s}}' % (literal, M)
    elif where == "params":
        body = '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"x":%s,"_meta":%s}}' % (literal, M)
    else:
        body = call('{"x":%s}' % literal)
    message = answered(post(body, "tools/call" if where == "arguments" else "server/discover", "echo"))
    assert message["error"]["code"] == -32700 and message["id"] is None


# --- lone surrogates ----------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ['"\\ud800"', '"\\udc00"', '"a\\ud800b"', '"\\ud800\\u0041"'])
@pytest.mark.parametrize("where", ["id", "method", "meta", "arguments", "unread"])
def test_lone_surrogate_escapes_are_parse_errors_wherever_they_are(text: str, where: str) -> None:
    # msgspec refuses an escaped lone surrogate even in members it skips, so no such string
    # ever reaches a handler (or a reply, which could not encode it as UTF-8).
    bodies = {
        "id": '{"jsonrpc":"2.0","id":%s,"method":"server/discover","params":{"_meta":%s}}' % (text, M),
        "method": '{"jsonrpc":"2.0","id":1,"method":%s,"params":{"_meta":%s}}' % (text, M),
        "meta": '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"x":%s}}}' % text,
        "arguments": call('{"x":%s}' % text),
        "unread": '{"jsonrpc":"2.0","id":1,"method":"server/discover","zz":%s,"params":{"_meta":%s}}' % (text, M),
    }
    message = answered(post(bodies[where], "tools/call" if where == "arguments" else "server/discover", "echo"))
    assert message["error"] == {"code": -32700, "message": "Parse error"} and message["id"] is None


def test_surrogate_pairs_and_utf8_encoded_surrogates() -> None:
    event = answered(post(call('{"x":"\\ud83d\\ude00"}'), "tools/call", "echo"))["exchange"]
    assert event.arguments == {"x": "\U0001F600"}
    raw = call('{"x":"X"}').encode().replace(b'"X"', b'"\xed\xa0\x80"')  # CESU-style bytes: not UTF-8
    assert answered(post(raw, "tools/call", "echo"))["error"]["message"] == "Parse error: invalid UTF-8"


# --- byte order mark --------------------------------------------------------------------------------

DISCOVER = '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":%s}}' % M


def test_http_skips_one_leading_bom() -> None:
    assert code(post(b"\xef\xbb\xbf" + DISCOVER.encode())) is None
    assert code(post(b"\xef\xbb\xbf\xef\xbb\xbf" + DISCOVER.encode())) == -32700
    assert code(post(b" \xef\xbb\xbf" + DISCOVER.encode())) == -32700


def test_stdio_refuses_a_bom_and_the_connection_survives() -> None:
    # Decided policy: an NDJSON line is one JSON text, and RFC 8259 lets a parser treat a BOM
    # as an error. The line is -32700 with id null; the next line is served normally.
    conn = mcpwire.StdioConnection(SERVER)
    line = DISCOVER.encode() + b"\n"
    first, second = conn.receive_data(b"\xef\xbb\xbf" + line + line, now=NOW)
    assert invariants.line_invariants(first)[0]["error"] == {"code": -32700, "message": "Parse error"}
    assert invariants.line_invariants(first)[0]["id"] is None
    assert invariants.line_invariants(second)[0]["id"] == 1
