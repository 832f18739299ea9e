"""Request ``_meta`` through the server engine (wire reference section 2, 2.1; 13.4 for HTTP).

Each rule of section 2 gets a concrete bad input, over HTTP (headers consistent with the
body, so only ``_meta`` can fire) and, where the order differs, over stdio. All the section 2
failures share code -32602, so ordering tests tell the winner by the reference's message.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from schema_check import (
    NOW,
    VERSION,
    call,
    check_error,
    error_of,
    ev,
    exchange,
    lines_of,
    make_server,
    meta,
    request,
)

import mcpwire

SERVER = make_server()
SERVER.add_tool(mcpwire.types.Tool(name="echo", description="Echo", input_schema={"type": "object"}))

MSG_META_OBJECT = "_meta must be an object"
MSG_KEY = "_meta contains an invalid key or non-JSON value"
MSG_TOKEN = "progressToken must be a string of at most 256 bytes or an int64 integer"
MSG_LEVEL = "Invalid MCP request log level"
MSG_VERSION_MISSING = "Missing required io.modelcontextprotocol/protocolVersion metadata"
MSG_VERSION_TYPE = "io.modelcontextprotocol/protocolVersion must be a string"
MSG_INFO = "Client info must include string name and version"
MSG_CAPS_MISSING = "Missing required client capabilities metadata"
MSG_CAPS_TYPE = "Client capabilities must be an object"

PV = "io.modelcontextprotocol/protocolVersion"
CC = "io.modelcontextprotocol/clientCapabilities"
CI = "io.modelcontextprotocol/clientInfo"
LL = "io.modelcontextprotocol/logLevel"


def discover_with(m: Any, rid: Any = 1) -> dict[str, Any]:
    return request("server/discover", {"_meta": m}, id=rid)


def without(key: str, **extra: Any) -> dict[str, Any]:
    m = meta(**extra)
    del m[key]
    return m


def http_error(m: Any, message: str | None = None, code: int = -32602) -> Any:
    reply = call(SERVER, discover_with(m, rid="m1"))
    return error_of(reply, code, "m1", message_text=message)


def stdio_answer(body: dict[str, Any]) -> Any:
    conn = mcpwire.StdioConnection(SERVER)
    out = conn.receive_data(json.dumps(body).encode() + b"\n", now=NOW)
    assert len(out) == 1 and isinstance(out[0], bytes), out
    (message,) = lines_of(out[0], body.get("method"))
    return message


# --- baseline ------------------------------------------------------------------------------------


def test_minimal_meta_is_accepted_and_client_info_is_optional() -> None:
    reply = call(SERVER, discover_with(meta()))
    assert reply.status == 200 and reply.result["supportedVersions"] == [VERSION]


def test_full_meta_is_accepted_and_reaches_the_event() -> None:
    m = meta(
        caps={"roots": {"listChanged": True}, "sampling": {"context": {}, "tools": {}},
              "elicitation": {"form": {}, "url": {}}, "experimental": {"x": {}},
              "extensions": {"io.modelcontextprotocol/tasks": {}, "com.example/ext": {"a": 1}}},
        info={"name": "c", "version": "1", "title": "T", "description": "D", "websiteUrl": "https://e.x",
              "icons": [{"src": "https://e.x/i.png", "mimeType": "image/png", "sizes": ["48x48"], "theme": "dark"}]},
        level="debug", token="tok-1",
    )
    m["com.example/custom"] = {"kept": True}
    m["plain"] = 1
    ex = exchange(SERVER, request("tools/call", {"name": "echo", "_meta": m}))
    got = ev(ex).meta
    assert got.protocol_version == VERSION
    assert got.client_capabilities == m[CC]
    assert got.client_info == m[CI]
    assert got.log_level == "debug" and got.progress_token == "tok-1"
    assert got.raw["com.example/custom"] == {"kept": True} and got.raw["plain"] == 1
    ex.cancel()


def test_capabilities_are_per_request_never_inferred_from_earlier_ones() -> None:
    first = exchange(SERVER, request("tools/call", {"name": "echo", "_meta": meta(caps={"elicitation": {}})}))
    second = exchange(SERVER, request("tools/call", {"name": "echo", "_meta": meta()}, id=2))
    assert ev(first).meta.client_capabilities == {"elicitation": {}}
    assert ev(second).meta.client_capabilities == {}
    # So the second cannot ask for elicitation: -32021 (section 10.2).
    out = second.input_required({"q": {"method": "elicitation/create", "params": {
        "message": "m", "requestedSchema": {"type": "object", "properties": {}}}}})
    head, body = out
    assert isinstance(head, mcpwire.ResponseHead) and head.status == 400
    assert isinstance(body, mcpwire.ResponseBody)
    error = check_error(json.loads(body.data), -32021, 2)
    assert error["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}
    first.cancel()


# --- step 1: _meta must be an object ------------------------------------------------------------


@pytest.mark.parametrize("value", [[], "x", 5, True, [meta()]])
def test_meta_not_an_object(value: Any) -> None:
    http_error(value, MSG_META_OBJECT)


@pytest.mark.parametrize("params", [{}], ids=["absent"])  # null is not absent: tests/server/test_edge_rules.py
def test_absent_meta_is_empty_so_protocol_version_is_missing(params: dict[str, Any]) -> None:
    # Runner sep-2575-request-meta-invalid-*: params {} is -32602 with HTTP 400.
    reply = call(SERVER, request("server/discover", params, id=3, with_meta=False))
    error_of(reply, -32602, 3, message_text=MSG_VERSION_MISSING)


def test_request_without_params_is_missing_protocol_version() -> None:
    body = {"jsonrpc": "2.0", "id": 4, "method": "server/discover"}
    error_of(call(SERVER, body), -32602, 4, message_text=MSG_VERSION_MISSING)


# --- step 2: key syntax ------------------------------------------------------------------------


INVALID_KEYS = ["bad key", "-x", "x-", "_x", "x.", "x/y/z", "1abc/x", "a-/x", "a..b/x", ".a/x", "a./x",
                "a_b/x", "é", "com.example/ bad", "com.example//x", "/x"]
VALID_KEYS = ["x", "X9", "a.b-c_d", "a-b", "com.example/x", "com.example.mcp/x", "a/", "a-b.c9/x.y", "",
              "io.modelcontextprotocol/somethingNew", "dev.mcp/x"]


@pytest.mark.parametrize("key", INVALID_KEYS)
def test_invalid_meta_key(key: str) -> None:
    m = meta()
    m[key] = 1
    http_error(m, MSG_KEY)


@pytest.mark.parametrize("key", VALID_KEYS)
def test_valid_meta_keys_are_accepted(key: str) -> None:
    m = meta()
    m[key] = {"any": ["json", 1, None]}
    assert call(SERVER, discover_with(m)).status == 200


def test_the_public_key_pattern_is_the_rule_the_server_applies() -> None:
    # mcpwire.types.META_KEY_PATTERN is the one home of the syntax (code outside the core,
    # such as the fuzz strategies, generates keys from it).
    pattern = mcpwire.types.META_KEY_PATTERN
    assert [k for k in VALID_KEYS if re.fullmatch(pattern, k) is None] == []
    assert [k for k in INVALID_KEYS if re.fullmatch(pattern, k) is not None] == []


# --- step 3: progressToken -----------------------------------------------------------------------


@pytest.mark.parametrize("token", [True, 1.5, None, {}, [], "x" * 257, 2**63, -(2**63) - 1],
                         ids=lambda v: repr(v)[:12])
def test_bad_progress_token(token: Any) -> None:
    http_error(meta(token=token), MSG_TOKEN)


@pytest.mark.parametrize("token", ["p", "", 0, -5, 2**63 - 1, "x" * 256])
def test_good_progress_tokens(token: Any) -> None:
    ex = exchange(SERVER, request("tools/call", {"name": "echo", "_meta": meta(token=token)}))
    assert ev(ex).meta.progress_token == token
    ex.cancel()


# --- step 4: logLevel ----------------------------------------------------------------------------


@pytest.mark.parametrize("level", ["verbose", "INFO", "", 1, None, ["info"]])
def test_bad_log_level(level: Any) -> None:
    http_error(meta(level=level), MSG_LEVEL)


@pytest.mark.parametrize("level", list(mcpwire.LOG_LEVELS))
def test_every_log_level_is_accepted(level: str) -> None:
    assert call(SERVER, discover_with(meta(level=level))).status == 200


# --- step 5: protocolVersion ---------------------------------------------------------------------


def test_missing_protocol_version_with_the_header_present() -> None:
    # 13.4: with no version in the body the header comparison is skipped; _meta answers.
    http_error(without(PV), MSG_VERSION_MISSING)


@pytest.mark.parametrize("value", [20260728, None, ["2026-07-28"], {"v": 1}])
def test_protocol_version_not_a_string(value: Any) -> None:
    http_error(meta(version=value), MSG_VERSION_TYPE)


# --- step 7: unsupported version ----------------------------------------------------------------


def test_unsupported_version_over_http() -> None:
    reply = call(SERVER, discover_with(meta(version="v999.0.0"), rid=8))
    error = error_of(reply, -32022, 8, data={"requested": "v999.0.0", "supported": [VERSION]})
    assert error["message"] == "Unsupported protocol version"


def test_unsupported_version_over_stdio() -> None:
    message = stdio_answer(discover_with(meta(version="2025-11-25"), rid=9))
    check_error(message, -32022, 9, data={"requested": "2025-11-25", "supported": [VERSION]})


def test_supported_versions_are_configurable_and_listed() -> None:
    server = make_server(supported_versions=(VERSION, "2027-01-01"))
    reply = call(server, discover_with(meta(version="2027-01-01")))
    assert reply.result["supportedVersions"] == [VERSION, "2027-01-01"]
    error_of(call(server, discover_with(meta(version="1999"))), -32022, 1,
             data={"requested": "1999", "supported": [VERSION, "2027-01-01"]})


# --- step 8: clientInfo --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "info",
    [
        "client", [], {}, {"name": "c"}, {"version": "1"}, {"name": 1, "version": "1"}, {"name": "c", "version": 1},
        {"name": "c", "version": "1", "title": 5}, {"name": "c", "version": "1", "description": []},
        {"name": "c", "version": "1", "websiteUrl": "not a uri"}, {"name": "c", "version": "1", "websiteUrl": 5},
        {"name": "c", "version": "1", "icons": {}}, {"name": "c", "version": "1", "icons": [{}]},
        {"name": "c", "version": "1", "icons": [{"src": "no scheme"}]},
        {"name": "c", "version": "1", "icons": [{"src": "https://x/i", "sizes": "48x48"}]},
        {"name": "c", "version": "1", "icons": [{"src": "https://x/i", "sizes": [48]}]},
        {"name": "c", "version": "1", "icons": [{"src": "https://x/i", "theme": "blue"}]},
        {"name": "c", "version": "1", "icons": [{"src": "https://x/i", "mimeType": 1}]},
    ],
    ids=lambda v: json.dumps(v)[:50],
)
def test_bad_client_info(info: Any) -> None:
    http_error(meta(info=info), MSG_INFO)


# --- step 9: clientCapabilities ------------------------------------------------------------------


def test_missing_client_capabilities() -> None:
    http_error(without(CC), MSG_CAPS_MISSING)


@pytest.mark.parametrize("caps", [[], "x", None, 1, True])
def test_client_capabilities_not_an_object(caps: Any) -> None:
    http_error(meta(caps=caps), MSG_CAPS_TYPE)


@pytest.mark.parametrize(
    "caps",
    [
        {"roots": True}, {"roots": []},
        {"sampling": True}, {"sampling": {"context": True}}, {"sampling": {"tools": []}},
        {"elicitation": True}, {"elicitation": {"form": 1}}, {"elicitation": {"url": []}},
        {"elicitation": {"other": {}}},
        {"experimental": []}, {"experimental": {"x": 1}},
        {"extensions": []}, {"extensions": {"noprefix": {}}}, {"extensions": {"com.example/x": 1}},
        {"extensions": {"bad key/x": {}}},
    ],
    ids=lambda v: json.dumps(v),
)
def test_bad_client_capability_shapes(caps: Any) -> None:
    reply = call(SERVER, discover_with(meta(caps=caps), rid=5))
    error_of(reply, -32602, 5)


@pytest.mark.parametrize(
    "caps",
    [{}, {"elicitation": {}}, {"elicitation": {"form": {}}}, {"elicitation": {"url": {}, "other": {}}},
     {"sampling": {}}, {"roots": {}}, {"unknownFutureCapability": 5}],
    ids=lambda v: json.dumps(v),
)
def test_good_client_capabilities(caps: Any) -> None:
    assert call(SERVER, discover_with(meta(caps=caps))).status == 200


# --- section 2 order: two faults at once, the earlier step wins ----------------------------------


@pytest.mark.parametrize(
    ("m", "message"),
    [
        ({**meta(token=True), "bad key": 1}, MSG_KEY),                          # 2 before 3
        (meta(token=True, level="loud"), MSG_TOKEN),                            # 3 before 4
        ({**without(PV), LL: "loud"}, MSG_LEVEL),                               # 4 before 5
        ({**without(PV, info=5)}, MSG_VERSION_MISSING),                         # 5 before 8
        ({k: v for k, v in without(PV).items() if k != CC}, MSG_VERSION_MISSING),  # 5 before 9
        (meta(version=5, info=5), MSG_VERSION_TYPE),                            # 5 before 8
        ({**without(CC), CI: {"name": 1}}, MSG_INFO),                           # 8 before 9
        (meta(info=[], caps=[]), MSG_INFO),                                     # 8 before 9
    ],
    ids=["key>token", "token>level", "level>version", "version>info", "version>caps", "vtype>info",
         "info>caps-missing", "info>caps-type"],
)
def test_meta_order_over_http(m: dict[str, Any], message: str) -> None:
    http_error(m, message)


def test_unsupported_version_beats_client_info_and_capabilities_over_stdio() -> None:
    # Step 7 before steps 8 and 9.
    m = {PV: "v999", CI: 5}
    check_error(stdio_answer(discover_with(m, rid=1)), -32022, 1)


def test_invalid_key_beats_unsupported_version_over_stdio() -> None:
    # Step 2 before step 7 where no header check runs first.
    m = {**meta(version="v999"), "bad key": 1}
    check_error(stdio_answer(discover_with(m, rid=1)), -32602, 1, message_text=MSG_KEY)


def test_unsupported_version_header_check_beats_meta_shape_over_http() -> None:
    # 13.2: version header checks (step 9) run before method lookup and _meta.
    m = {**meta(version="v999", token=True), "bad key": 1}
    error_of(call(SERVER, discover_with(m, rid=1)), -32022, 1)


def test_meta_error_beats_params_error() -> None:
    # _meta (section 2) is checked before the method's params (section 5).
    body = request("tools/call", {"name": 5, "arguments": [], "_meta": without(PV)}, id=2)
    error_of(call(SERVER, body), -32602, 2, message_text=MSG_VERSION_MISSING)


def test_method_lookup_beats_meta_error() -> None:
    body = request("ping", {"_meta": {"bad key": 1}}, id=3)
    error_of(call(SERVER, body), -32601, 3)


def test_meta_is_checked_for_every_method() -> None:
    for method in ("tools/list", "resources/list", "resources/templates/list", "prompts/list"):
        error_of(call(SERVER, request(method, {"_meta": without(CC)}, id=method)), -32602, method,
                 message_text=MSG_CAPS_MISSING)


# --- notifications: _meta optional, never answered ------------------------------------------------


@pytest.mark.parametrize("m", [None, {}, {"bad key": 1}, [], {"progressToken": True}],
                         ids=lambda v: json.dumps(v))
def test_notification_meta_is_never_answered(m: Any) -> None:
    params: dict[str, Any] = {"requestId": 1}
    if m is not None:
        params["_meta"] = m
    reply = call(SERVER, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})
    assert reply.status == 202 and reply.body == b""
    conn = mcpwire.StdioConnection(SERVER)
    line = json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}).encode()
    assert conn.receive_data(line + b"\n", now=NOW) == []
