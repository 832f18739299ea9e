"""The JSON-RPC envelope through the HTTP server engine (wire reference sections 1, 3, 12, 13.2).

Every case posts bytes with correct transport and MCP headers, so only the envelope rule under
test can fire; replies are checked against the schema by ``schema_check``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schema_check import (
    DOCUMENTED_STATUSES,
    SERVER_INFO_META_KEY,
    VERSION,
    call,
    check_message,
    error_of,
    http_request,
    make_server,
    meta,
    post,
    reply_of,
    request,
)

import mcpwire

SERVER = make_server()
SERVER.add_tool(mcpwire.types.Tool(name="echo", description="Echo", input_schema={"type": "object"}))
DISCOVER_PARAMS = {"_meta": meta()}


def discover(**members: Any) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": DISCOVER_PARAMS}
    msg.update(members)
    return {k: v for k, v in msg.items() if v is not ...}


# --- the baseline ------------------------------------------------------------------------------


def test_valid_request_is_answered_with_result_type_and_server_info() -> None:
    reply = call(SERVER, discover())
    assert reply.status == 200
    assert reply.message["id"] == 1
    assert reply.result["resultType"] == "complete"
    assert reply.result["_meta"][SERVER_INFO_META_KEY] == {"name": "test-server", "version": "1.0.0"}


# --- jsonrpc member ----------------------------------------------------------------------------


@pytest.mark.parametrize("value", [..., "1.0", "2", 2.0, None, ["2.0"]])
def test_jsonrpc_missing_or_wrong_is_invalid_request_with_id(value: Any) -> None:
    reply = call(SERVER, discover(jsonrpc=value, id=7))
    error_of(reply, -32600, 7)


def test_jsonrpc_wrong_keeps_string_id() -> None:
    error_of(call(SERVER, discover(jsonrpc="1.0", id="abc")), -32600, "abc")


# --- method member -----------------------------------------------------------------------------


@pytest.mark.parametrize("value", [5, None, True, {"m": 1}, ["server/discover"]])
def test_method_not_a_string_is_invalid_request_with_id(value: Any) -> None:
    error_of(call(SERVER, discover(method=value, id=3)), -32600, 3)


def test_request_without_method_or_result_is_invalid_request() -> None:
    error_of(call(SERVER, {"jsonrpc": "2.0", "id": 4}), -32600, 4)


# --- params member -----------------------------------------------------------------------------


@pytest.mark.parametrize("value", [[], [1, 2], "x", 5, True, None])
def test_params_not_an_object_is_invalid_params_with_id(value: Any) -> None:
    reply = call(SERVER, discover(params=value, id="p"))
    error_of(reply, -32602, "p", message_text="Request params must be an object")


def test_params_error_wins_over_missing_mcp_headers() -> None:
    # 13.2: envelope errors (step 8) come before the version header (step 9).
    body = discover(params=[], id=2)
    reply = reply_of(post(SERVER, body, drop=[b"mcp-protocol-version", b"mcp-method"]))
    error_of(reply, -32602, 2)


# --- id member ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        True, False, 1.5, 1.0, {"a": 1}, [1], None,
        2**63, -(2**63) - 1, 10**30,
        "x" * 257, "\u00e9" * 129, "\U0001f600" * 65,
    ],
    ids=lambda v: repr(v)[:20],
)
def test_bad_id_is_invalid_request_with_null_id(value: Any) -> None:
    reply = call(SERVER, discover(id=value))
    error_of(reply, -32600, None)


@pytest.mark.parametrize(
    "value",
    [0, -1, 2**63 - 1, -(2**63), "", "x" * 256, "\u00e9" * 128, "\U0001f600" * 64, "id with spaces"],
    ids=lambda v: repr(v)[:20],
)
def test_bounded_ids_are_accepted_and_echoed_exactly(value: Any) -> None:
    reply = call(SERVER, discover(id=value))
    assert reply.status == 200
    assert reply.message["id"] == value and type(reply.message["id"]) is type(value)


def test_bad_id_wins_over_bad_jsonrpc_and_method() -> None:
    # The id is unreadable, so nothing else can be attributed: -32600 with id null.
    reply = call(SERVER, {"jsonrpc": "1.0", "id": True, "method": 5})
    error_of(reply, -32600, None)


def test_error_keeps_id_when_readable_even_with_several_faults() -> None:
    reply = call(SERVER, {"jsonrpc": "1.0", "id": 99, "method": 5, "params": []})
    error_of(reply, -32600, 99)


# --- batches and non-objects -------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [b"[]", b"[1]", json.dumps([discover()]).encode(), b"1", b'"x"', b"null", b"true", b"1.5"],
)
def test_batches_and_scalars_are_invalid_request_with_null_id(body: bytes) -> None:
    error_of(call(SERVER, body), -32600, None)


# --- parse errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [b"", b"{", b"}", b"\xff\xfe", b'{"jsonrpc":"2.0",}', b"{} x", b'{"a":NaN}', b"{'a':1}",
     b'{"jsonrpc":"2.0","id":1,"method":"x"', b'{"id":"\\ud800","jsonrpc":"2.0","method":"x"}',
     b"\xef\xbb\xbf\xef\xbb\xbf{}",
     # A value that is not an object, followed by more: not JSON, so -32700 before -32600
     # (found by mcpwire fuzz).
     b'"x" 1', b"[1] x", b"5 5", b'[{"jsonrpc":"2.0","id":1,"method":"x"}] ]'],
    ids=repr,
)
def test_unparseable_body_is_parse_error_with_null_id(body: bytes) -> None:
    error_of(call(SERVER, body), -32700, None)


def test_leading_bom_is_skipped() -> None:
    reply = call(SERVER, b"\xef\xbb\xbf" + json.dumps(discover()).encode(),
                 headers=http_request(discover()).headers)
    assert reply.status == 200 and reply.result["resultType"] == "complete"


def test_whitespace_around_the_object_is_fine() -> None:
    reply = call(SERVER, b" \r\n\t" + json.dumps(discover()).encode() + b"\n ",
                 headers=http_request(discover()).headers)
    assert reply.status == 200


def test_duplicate_keys_last_one_wins() -> None:
    # The decided policy (mcpwire.wire.envelope docstring): the last duplicate wins.
    body = b'{"jsonrpc":"2.0","id":1,"id":2,"method":"ping","method":"server/discover","params":' + \
        json.dumps(DISCOVER_PARAMS).encode() + b"}"
    reply = call(SERVER, body, headers=http_request(discover()).headers)
    assert reply.status == 200 and reply.message["id"] == 2


# --- notifications and posted responses ----------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled"},
        {"jsonrpc": "2.0", "method": "notifications/unknown", "params": {"x": 1}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": [1, 2]},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "x"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"_meta": {"bad key": 1}}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"_meta": []}},
        {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "echo"}},  # no id: a notification
    ],
    ids=lambda b: json.dumps(b)[:60],
)
def test_notifications_get_202_with_empty_body(body: dict[str, Any]) -> None:
    reply = call(SERVER, body)
    assert reply.status == 202 and reply.body == b""


@pytest.mark.parametrize(
    "body",
    [
        {"jsonrpc": "2.0", "id": 5, "result": {}},
        {"jsonrpc": "2.0", "id": "r", "result": {"resultType": "complete"}},
        {"jsonrpc": "2.0", "id": 5, "error": {"code": -1, "message": "no"}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
    ],
    ids=lambda b: json.dumps(b)[:60],
)
def test_posted_responses_get_202_and_are_not_answered(body: dict[str, Any]) -> None:
    # 13.2 step 7: a response object is accepted without MCP headers too.
    reply = reply_of(post(SERVER, body, drop=[b"mcp-protocol-version"]))
    assert reply.status == 202 and reply.body == b""


def test_response_with_both_result_and_error_is_not_answered() -> None:
    # Section 1: a posted response is never answered, even when malformed.
    body = {"jsonrpc": "2.0", "id": 5, "result": {}, "error": {"code": 1, "message": "x"}}
    assert call(SERVER, body).status == 202


def test_response_with_bad_id_is_not_answered() -> None:
    assert call(SERVER, {"jsonrpc": "2.0", "id": True, "result": {}}).status == 202


def test_response_with_malformed_error_object_is_not_answered() -> None:
    assert call(SERVER, {"jsonrpc": "2.0", "id": 5, "error": {"code": "x"}}).status == 202


def test_response_object_wins_over_missing_headers() -> None:
    reply = reply_of(post(SERVER, {"jsonrpc": "2.0", "id": 1, "result": {}},
                          drop=[b"mcp-protocol-version", b"mcp-method"]))
    assert reply.status == 202


# --- removed and unknown methods keep their id --------------------------------------------------


@pytest.mark.parametrize("method", ["initialize", "ping", "logging/setLevel", "resources/subscribe",
                                    "resources/unsubscribe", "notifications/initialized", "nope"])
@pytest.mark.parametrize("rid", [11, "s-11"])
def test_removed_and_unknown_methods_are_404_method_not_found_with_id(method: str, rid: Any) -> None:
    reply = call(SERVER, request(method, {}, id=rid))
    error_of(reply, -32601, rid)
    assert reply.error["message"] == f"Method not found: {method}"


# --- the engine never raises on any body ---------------------------------------------------------

JSON_SCALARS = st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70) | \
    st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8)
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=3) |
                           st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)
METHODS = st.sampled_from(["server/discover", "tools/list", "tools/call", "resources/read", "prompts/get",
                           "completion/complete", "subscriptions/listen", "ping", "notifications/cancelled"])
ENVELOPES = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0"]) | JSON_SCALARS,
        "id": st.integers(min_value=-(2**64), max_value=2**64) | st.text(max_size=4) | JSON_SCALARS,
        "method": METHODS | JSON_SCALARS,
        "params": st.fixed_dictionaries({}, optional={
            "_meta": st.just(meta()) | JSON_VALUES, "name": st.just("echo") | JSON_SCALARS,
            "arguments": JSON_VALUES, "cursor": JSON_SCALARS, "uri": JSON_SCALARS,
            "requestState": JSON_SCALARS, "inputResponses": JSON_VALUES, "notifications": JSON_VALUES,
        }) | JSON_VALUES,
        "result": JSON_VALUES,
        "error": JSON_VALUES,
    },
)
BODIES = st.binary(max_size=64) | ENVELOPES.map(lambda e: json.dumps(e).encode()) | \
    ENVELOPES.map(lambda e: json.dumps(e).encode()).flatmap(
        lambda b: st.integers(0, max(len(b) - 1, 0)).map(lambda i: b[:i] + b[i + 1:]))


def _assert_documented(answer: Any) -> None:
    if isinstance(answer, mcpwire.HttpExchange):
        answer.fail(RuntimeError("test"))  # an exchange is a valid answer too; close it
        return
    if isinstance(answer, mcpwire.HttpListenStream):
        answer.cancel()
        return
    reply = reply_of(answer)  # documented status, JSON body (or 202 empty), schema-valid
    assert reply.status in DOCUMENTED_STATUSES


@settings(derandomize=True, max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(body=BODIES)
def test_any_body_gets_a_documented_answer(body: bytes) -> None:
    # The headers a correct client would send for this body, so that the body is what varies.
    headers = http_request(json.loads(body) if _is_json_object(body) else {}).headers
    answer = SERVER.receive_http(mcpwire.HttpRequest(method="POST", target="/mcp", headers=headers, body=body),
                                 now=0.0)
    _assert_documented(answer)


def _is_json_object(body: bytes) -> bool:
    try:
        return isinstance(json.loads(body), dict)
    except ValueError:
        return False


# --- known engine bugs ------------------------------------------------------------------------------

PARAMS_WITH_BAD_UTF8 = [
    b'{"jsonrpc":"2.0","id":1,"method":"server/discover","x":"\xff","params":{"_meta":'
    + json.dumps(meta()).encode() + b'}}',
    b'{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"x":"\xff"}}}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\xff"}}',
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":"\xc3"},"_meta":'
    + json.dumps(meta()).encode() + b'}}',
    b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"_meta":{"x":"\xff"}}}',
]


@pytest.mark.parametrize("body", PARAMS_WITH_BAD_UTF8, ids=range(len(PARAMS_WITH_BAD_UTF8)))
def test_invalid_utf8_inside_params_is_a_parse_error(body: bytes) -> None:
    headers: Any = http_request(discover()).headers
    method = b"tools/call" if b"tools/call" in body else (b"notifications/cancelled" if b"notif" in body
                                                        else b"server/discover")
    headers = [h for h in headers if h[0].lower() != b"mcp-method"] + [(b"Mcp-Method", method), (b"Mcp-Name", b"echo")]
    reply = reply_of(SERVER.receive_http(mcpwire.HttpRequest(method="POST", target="/mcp", headers=headers,
                                                             body=body), now=0.0))
    # docs/limits.md: bytes that are not UTF-8 anywhere in the body are a parse error with id null.
    assert reply.status == 400 and reply.error == {"code": -32700, "message": "Parse error: invalid UTF-8"}
    assert reply.message["id"] is None


@pytest.mark.parametrize("where", ["top", "params", "meta"])
def test_deeply_nested_json_is_refused_not_raised(where: str) -> None:
    deep = "[" * 5000 + "]" * 5000
    if where == "top":
        text = '{"jsonrpc":"2.0","id":1,"method":"server/discover","x":' + deep + "}"
    elif where == "params":
        text = '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"x":' + deep + "}}"
    else:
        text = '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"x":' + deep + "}}}"
    reply = call(SERVER, text.encode(), headers=http_request(discover()).headers)
    # docs/limits.md: far past the decoder's depth the envelope itself cannot be read, so id null.
    error_of(reply, -32700, None, message_text="Parse error: JSON nested too deeply")


@settings(derandomize=True, max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(raw=st.binary(min_size=1, max_size=6))
def test_any_bytes_inside_a_params_string_get_a_documented_answer(raw: bytes) -> None:
    body = b'{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"x":"' + raw + b'"}}}'
    headers = http_request(discover()).headers
    _assert_documented(SERVER.receive_http(mcpwire.HttpRequest(method="POST", target="/mcp", headers=headers,
                                                               body=body), now=0.0))


def test_check_message_accepts_null_id_only_on_errors() -> None:
    # The helper's one documented deviation: id null is accepted on error responses only.
    check_message({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
    with pytest.raises(AssertionError, match=r"not a valid JSONRPCResultResponse: \['id'\]"):
        check_message({"jsonrpc": "2.0", "id": None, "result": {"resultType": "complete", "_meta": {
            SERVER_INFO_META_KEY: {"name": "n", "version": "1"}}}})


def test_protocol_version_constant() -> None:
    assert mcpwire.PROTOCOL_VERSION == VERSION
