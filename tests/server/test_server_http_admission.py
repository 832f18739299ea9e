"""Streamable HTTP admission through ``Server.receive_http`` (wire reference sections 12, 13).

Order (13.2, as the engine documents it): method 405 (Allow: POST), path 404, Origin 403,
Host 403, body size 413, Content-Type 415, Accept 406, parse 400 -32700, response object 202,
envelope errors 400, version header -32020/-32022, Mcp-Method/Mcp-Name/Mcp-Param -32020,
method lookup -32601/404, _meta (section 2), params. Each rule gets a concrete bad input; the
ordering tests break two rules at once and assert which one answers.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from schema_check import (
    VERSION,
    call,
    error_of,
    ev,
    exchange,
    http_request,
    make_server,
    meta,
    post,
    reply_of,
    request,
)

import mcpwire
from mcpwire.server.http import json_reply

SERVER = make_server(validator=mcpwire.UNCHECKED)  # admission tests: arguments pass unchecked
SERVER.add_tool(mcpwire.types.Tool(name="echo", description="Echo", input_schema={"type": "object"}))
SERVER.add_tool(mcpwire.types.Tool(name="my tool", description="Spaces", input_schema={"type": "object"}))
SERVER.add_tool(mcpwire.types.Tool(
    name="regional", description="Mirrors arguments into headers",
    input_schema={"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "count": {"type": "integer", "x-mcp-header": "Count"},
        "flag": {"type": "boolean", "x-mcp-header": "Flag"},
        "free": {"type": "string"},
    }},
))
SERVER.add_prompt(mcpwire.types.Prompt(name="greet", description="Greeting"))
DISCOVER = request("server/discover", {}, id=1)


def refuse(reply: Any, status: int, message: str | None = None) -> None:
    """A transport refusal: the status, -32600, id null, JSON body."""
    error_of(reply, -32600, None, status=status, message_text=message)


def answer(body: Any = DISCOVER, **kw: Any) -> Any:
    return reply_of(post(SERVER, body, **kw), body.get("method") if isinstance(body, dict) else None)


# --- step 1: POST only --------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT", "PATCH", "OPTIONS", "post"])  # HEAD: test_safe_defaults
def test_non_post_is_405_with_allow_post(method: str) -> None:
    reply = answer(method=method)
    refuse(reply, 405, "Streamable HTTP accepts POST only")
    assert reply.headers[b"allow"] == b"POST"


# --- step 2: path -------------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["/", "/mcp/", "/MCP", "/other", "/mcp/x", "mcp", "/mcpx"])
def test_wrong_path_is_404(target: str) -> None:
    refuse(answer(target=target), 404)


def test_query_string_is_ignored_for_the_path() -> None:
    assert answer(target="/mcp?session=1").status == 200


def test_configured_path() -> None:
    server = make_server(http=mcpwire.HttpPolicy(path="/api/mcp"))
    assert reply_of(post(server, DISCOVER, target="/api/mcp")).status == 200
    refuse(reply_of(post(server, DISCOVER)), 404)


# --- step 3: Origin (13.7) ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "origin",
    [b"http://evil.example.com", b"https://evil.example.com:443", b"null", b"file://", b"localhost",
     b"ftp://localhost", b"http://user@localhost", b"http://localhost/path", b"http://localhost.evil.com",
     b"http://127.0.0.2", b"\xff\xfe",
     # Refused only for their userinfo or path: the host part alone would read as loopback.
     b"http://localhost:80@evil.example.com", b"http://localhost:3000/path"],
)
def test_foreign_origin_is_403(origin: bytes) -> None:
    refuse(answer(extra=[(b"Origin", origin)]), 403, "Origin is not allowed")


@pytest.mark.parametrize(
    "origin",
    [b"http://localhost", b"http://localhost:3000", b"https://127.0.0.1:8443", b"http://[::1]:8080",
     b"HTTP://LOCALHOST", b" http://localhost "],
)
def test_loopback_origin_is_allowed(origin: bytes) -> None:
    assert answer(extra=[(b"Origin", origin)]).status == 200


def test_missing_origin_is_allowed() -> None:
    assert answer().status == 200


def test_repeated_origin_is_403_even_if_both_are_loopback() -> None:
    refuse(answer(extra=[(b"Origin", b"http://localhost"), (b"origin", b"http://localhost")]), 403)


def test_configured_origins() -> None:
    server = make_server(http=mcpwire.HttpPolicy(allowed_origins=frozenset({"https://app.example.com"})))
    assert reply_of(post(server, DISCOVER, extra=[(b"Origin", b"https://app.example.com")])).status == 200
    refuse(reply_of(post(server, DISCOVER, extra=[(b"Origin", b"http://localhost")])), 403)
    anyone = make_server(http=mcpwire.HttpPolicy(allowed_origins=frozenset({"*"})))
    assert reply_of(post(anyone, DISCOVER, extra=[(b"Origin", b"https://evil.example.com")])).status == 200


# --- step 4: Host (opt-in) ------------------------------------------------------------------------

HOSTED = make_server(http=mcpwire.HttpPolicy(allowed_hosts=frozenset({"localhost", "127.0.0.1"})))


@pytest.mark.parametrize("hosts", [[b"evil.example.com"], [], [b"localhost", b"localhost"], [b"evil:80"]])
def test_host_not_allowed_is_403(hosts: list[bytes]) -> None:
    reply = reply_of(post(HOSTED, DISCOVER, extra=[(b"Host", h) for h in hosts]))
    refuse(reply, 403, "Host is not allowed")


@pytest.mark.parametrize("host", [b"localhost", b"localhost:8080", b"127.0.0.1:1", b"LOCALHOST"])
def test_allowed_host(host: bytes) -> None:
    assert reply_of(post(HOSTED, DISCOVER, extra=[(b"Host", host)])).status == 200


def test_host_is_not_checked_by_default() -> None:
    assert answer(extra=[(b"Host", b"evil.example.com")]).status == 200


def test_dns_rebinding_probe_is_refused_and_real_host_is_served() -> None:
    # Runner dns-rebinding-protection: evil Host and Origin get a 4xx, the real ones a 2xx.
    # The runner accepts any 4xx; ours is the Origin refusal (the Host check is opt-in).
    evil = answer(extra=[(b"Host", b"evil.example.com"), (b"Origin", b"http://evil.example.com")])
    refuse(evil, 403, "Origin is not allowed")
    real = answer(extra=[(b"Host", b"127.0.0.1:3001"), (b"Origin", b"http://127.0.0.1:3001")])
    assert real.status == 200


# --- step 5: body size -----------------------------------------------------------------------------


def test_oversize_body_is_413_and_the_limit_itself_is_fine() -> None:
    body = json.dumps(DISCOVER).encode()
    exact = make_server(http=mcpwire.HttpPolicy(max_body_bytes=len(body)))
    assert reply_of(post(exact, body, headers=http_request(DISCOVER).headers)).status == 200
    small = make_server(http=mcpwire.HttpPolicy(max_body_bytes=len(body) - 1))
    refuse(reply_of(post(small, body, headers=http_request(DISCOVER).headers)), 413)


# --- step 6: Content-Type ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "values",
    [[], [b"text/plain"], [b"application/jsonx"], [b"application/json-seq"], [b"application/*"],
     [b"text/event-stream"], [b"application/json", b"application/json"], [b""]],
)
def test_content_type_not_json_is_415(values: list[bytes]) -> None:
    reply = answer(drop=[b"content-type"], extra=[(b"Content-Type", v) for v in values])
    refuse(reply, 415, "Expected application/json")


@pytest.mark.parametrize("value", [b"application/json; charset=utf-8", b"APPLICATION/JSON", b" application/json "])
def test_content_type_json_with_parameters_or_case(value: bytes) -> None:
    assert answer(drop=[b"content-type"], extra=[(b"content-type", value)]).status == 200


# --- step 7: Accept ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "values",
    [[b"text/html"], [b"application/json;q=0, text/event-stream;q=0"], [b"*/*;q=0"], [b"image/*, text/plain"]],
)
def test_accept_of_neither_type_is_406(values: list[bytes]) -> None:
    # A client that takes one of the two is served (tests/server/test_accept_media_types.py).
    reply = answer(drop=[b"accept"], extra=[(b"Accept", v) for v in values])
    refuse(reply, 406)


@pytest.mark.parametrize(
    "values",
    [[b"text/event-stream, application/json"], [b"application/json", b"text/event-stream"],
     [b"application/json;q=0.5, text/event-stream;q=0.9"], [b"*/*"], [b"application/*, text/*"]],
)
def test_accept_listing_both(values: list[bytes]) -> None:
    assert answer(drop=[b"accept"], extra=[(b"accept", v) for v in values]).status == 200


def test_stray_session_id_is_ignored() -> None:
    # 13.1: no session ids in this revision; snodo ignores a stray Mcp-Session-Id.
    assert answer(extra=[(b"Mcp-Session-Id", b"abc123")]).status == 200


def test_concurrent_tools_list_with_reversed_accept_are_all_served() -> None:
    # 13.8 server-sse-multiple-streams: three POSTs of tools/list, ids 1000-1002, all 2xx.
    for rid in (1000, 1001, 1002):
        body = request("tools/list", {}, id=rid)
        reply = answer(body, drop=[b"accept"], extra=[(b"Accept", b"text/event-stream, application/json")])
        assert reply.status == 200 and reply.message["id"] == rid


# --- step 8 onwards: JSON, response objects, envelope (see test_server_envelope) ----------------------


def test_parse_error_is_400_with_null_id() -> None:
    error_of(call(SERVER, b"{not json", headers=http_request(DISCOVER).headers), -32700, None)


# --- version header (13.4) ----------------------------------------------------------------------------


def test_missing_version_header_is_32020_with_id() -> None:
    error = error_of(answer(drop=[b"mcp-protocol-version"]), -32020, 1)
    assert error["message"].startswith("Missing required header: send MCP-Protocol-Version: 2026-07-28")


def test_repeated_version_header_is_32020() -> None:
    error_of(answer(extra=[(b"mcp-protocol-version", VERSION.encode())]), -32020, 1)


@pytest.mark.parametrize("value", [b"2026 07 28", b"", b"2026-07-28\x00", b"\xc3\xa9"])
def test_malformed_version_header_is_32020(value: bytes) -> None:
    error_of(answer(drop=[b"mcp-protocol-version"], extra=[(b"MCP-Protocol-Version", value)]), -32020, 1)


def test_version_header_is_trimmed_and_name_case_insensitive() -> None:
    reply = answer(drop=[b"mcp-protocol-version"], extra=[(b"mCp-PrOtOcOl-VeRsIoN", b"  2026-07-28\t")])
    assert reply.status == 200


def test_version_header_differs_from_body_is_32020_with_header_and_body() -> None:
    body = request("server/discover", {"_meta": meta(version="v999.0.0")}, id=2)
    reply = answer(body, drop=[b"mcp-protocol-version"], extra=[(b"MCP-Protocol-Version", VERSION.encode())])
    error_of(reply, -32020, 2, data={"header": VERSION, "body": "v999.0.0"},
             message_text="Protocol header does not match request metadata")


def test_unsupported_version_in_header_and_body_is_32022() -> None:
    # Runner server-stateless: both v999.0.0 -> -32022, data.requested, data.supported a
    # non-empty subset of discover's supportedVersions.
    body = request("server/discover", {"_meta": meta(version="v999.0.0")}, id=3)
    error = error_of(answer(body), -32022, 3)
    supported = answer().result["supportedVersions"]
    assert error["data"]["requested"] == "v999.0.0"
    assert error["data"]["supported"] and set(error["data"]["supported"]) <= set(supported)


def test_header_version_with_body_version_missing_is_32602() -> None:
    m = meta()
    del m["io.modelcontextprotocol/protocolVersion"]
    body = request("server/discover", {"_meta": m}, id=4)
    reply = answer(body, extra=[], drop=[b"mcp-protocol-version"])
    error_of(reply, -32020, 4)  # no header at all
    reply = answer(body, drop=[b"mcp-protocol-version"], extra=[(b"MCP-Protocol-Version", b"v999.0.0")])
    error_of(reply, -32602, 4)  # no body version: the comparison is skipped, _meta answers


# --- Mcp-Method (13.5) -----------------------------------------------------------------------------------


def test_missing_mcp_method_is_32020() -> None:
    error = error_of(answer(drop=[b"mcp-method"]), -32020, 1)
    assert error["message"].lower() == "missing or repeated required header: mcp-method"


@pytest.mark.parametrize("value", [b"tools/list", b"SERVER/DISCOVER", b"server/discover/", b"", b"server%2Fdiscover"])
def test_mismatched_mcp_method_is_32020(value: bytes) -> None:
    reply = answer(drop=[b"mcp-method"], extra=[(b"Mcp-Method", value)])
    error_of(reply, -32020, 1, message_text="Mcp-Method does not match the request body")


def test_repeated_mcp_method_is_32020() -> None:
    error_of(answer(extra=[(b"Mcp-Method", b"server/discover")]), -32020, 1)


def test_mcp_method_header_name_is_case_insensitive_and_value_trimmed() -> None:
    assert answer(drop=[b"mcp-method"], extra=[(b"mcp-method", b" server/discover ")]).status == 200
    assert answer(drop=[b"mcp-method"], extra=[(b"MCP-METHOD", b"server/discover")]).status == 200


def test_tools_list_uppercase_is_refused() -> None:
    # Pending runner http-header-validation: Mcp-Method: TOOLS/LIST for tools/list is -32020.
    body = request("tools/list", {}, id=5)
    error_of(answer(body, drop=[b"mcp-method"], extra=[(b"Mcp-Method", b"TOOLS/LIST")]), -32020, 5)


# --- Mcp-Name (13.5) --------------------------------------------------------------------------------------


def _named(method: str, field: str, value: str, **params: Any) -> dict[str, Any]:
    return request(method, {field: value, **params}, id=6)


NAMED = [("tools/call", "name", "echo"), ("prompts/get", "name", "greet"), ("resources/read", "uri", "test://x")]


@pytest.mark.parametrize(("method", "field", "value"), NAMED)
def test_missing_mcp_name_is_32020(method: str, field: str, value: str) -> None:
    error = error_of(answer(_named(method, field, value), drop=[b"mcp-name"]), -32020, 6)
    assert error["message"].lower() == "missing or repeated required header: mcp-name"


@pytest.mark.parametrize(("method", "field", "value"), NAMED)
def test_mismatched_mcp_name_is_32020(method: str, field: str, value: str) -> None:
    reply = answer(_named(method, field, value), drop=[b"mcp-name"], extra=[(b"Mcp-Name", b"other")])
    error_of(reply, -32020, 6, message_text="Mcp-Name does not match the request body")


def test_repeated_mcp_name_is_32020() -> None:
    error_of(answer(_named("tools/call", "name", "echo"), extra=[(b"Mcp-Name", b"echo")]), -32020, 6)


def test_mcp_name_case_sensitive() -> None:
    reply = answer(_named("tools/call", "name", "echo"), drop=[b"mcp-name"], extra=[(b"Mcp-Name", b"ECHO")])
    error_of(reply, -32020, 6)


def test_mcp_name_with_spaces_and_base64_forms() -> None:
    ex = exchange(SERVER, _named("tools/call", "name", "my tool"))  # plain, internal spaces
    ex.cancel()
    wrapped = b"=?base64?" + base64.b64encode(b"echo") + b"?="
    ex = exchange(SERVER, _named("tools/call", "name", "echo"), drop=[b"mcp-name"], extra=[(b"Mcp-Name", wrapped)])
    ex.cancel()


@pytest.mark.parametrize("value", [b"=?base64?!!!?=", b"=?base64?" + base64.b64encode(b"\xff") + b"?=",
                                   b"=?base64?ZWNobw?=", b"ech\x01o", b"\xc3\xa9"])
def test_malformed_mcp_name_is_32020(value: bytes) -> None:
    reply = answer(_named("tools/call", "name", "echo"), drop=[b"mcp-name"], extra=[(b"Mcp-Name", value)])
    error_of(reply, -32020, 6)


def test_non_ascii_name_must_arrive_base64_wrapped() -> None:
    server = make_server()
    server.add_tool(mcpwire.types.Tool(name="caf\u00e9", description="d", input_schema={"type": "object"}))
    body = _named("tools/call", "name", "caf\u00e9")
    ex = exchange(server, body)  # the helper wraps it as a correct client does
    assert ev(ex).name == "caf\u00e9"
    ex.cancel()


def test_mcp_name_not_required_when_the_body_field_is_not_a_string() -> None:
    # The params error is then reported as -32602 (section 5.2), not as a header error.
    body = request("tools/call", {"name": 5}, id=7)
    error_of(answer(body, drop=[b"mcp-name"]), -32602, 7)


# --- Mcp-Param-* (13.6) -----------------------------------------------------------------------------------


def _regional(**arguments: Any) -> dict[str, Any]:
    return request("tools/call", {"name": "regional", "arguments": arguments}, id=8)


def test_param_headers_matching_the_body_are_accepted() -> None:
    body = _regional(region="eu-west", count=42, flag=True, free="x")
    extra = [(b"Mcp-Param-Region", b"eu-west"), (b"mcp-param-count", b"42.0"), (b"MCP-PARAM-FLAG", b"true")]
    ex = exchange(SERVER, body, extra=extra)
    assert ev(ex).arguments == {"region": "eu-west", "count": 42, "flag": True, "free": "x"}
    ex.cancel()


def test_param_header_base64_value() -> None:
    body = _regional(region=" padded ")
    ex = exchange(SERVER, body, extra=[(b"Mcp-Param-Region", b"=?base64?" + base64.b64encode(b" padded ") + b"?=")])
    ex.cancel()


@pytest.mark.parametrize(
    ("arguments", "extra"),
    [
        ({"region": "eu"}, []),                                         # missing
        ({"region": "eu"}, [(b"Mcp-Param-Region", b"us")]),              # mismatch
        ({"region": "eu"}, [(b"Mcp-Param-Region", b"EU")]),              # case-sensitive value
        ({"count": 42}, [(b"Mcp-Param-Count", b"43")]),                  # numeric mismatch
        ({"count": 42}, [(b"Mcp-Param-Count", b"forty-two")]),           # not a number
        ({"flag": True}, [(b"Mcp-Param-Flag", b"True")]),                # booleans lowercase only
        ({}, [(b"Mcp-Param-Region", b"eu")]),                            # header without body value
        ({"region": "eu"}, [(b"Mcp-Param-Region", b"eu"), (b"Mcp-Param-Region", b"eu")]),  # repeated
        ({"region": "eu"}, [(b"Mcp-Param-Region", b"=?base64?***?=")]),  # malformed
    ],
    ids=["missing", "mismatch", "case", "int-mismatch", "int-text", "bool-case", "spoofed", "repeated", "bad-b64"],
)
def test_param_header_failures_are_32020(arguments: dict[str, Any], extra: list[tuple[bytes, bytes]]) -> None:
    error_of(answer(_regional(**arguments), extra=extra), -32020, 8)


@pytest.mark.parametrize(
    "prop",
    [{"type": "number", "x-mcp-header": "N"}, {"type": "string", "x-mcp-header": "Bad Name"},
     {"type": "string", "x-mcp-header": ""}, {"type": "object", "x-mcp-header": "O"}],
    ids=["number", "space", "empty", "object"],
)
def test_invalid_header_annotation_is_refused_at_registration(prop: dict[str, Any]) -> None:
    server = make_server()
    with pytest.raises(mcpwire.LocalProtocolError):
        server.add_tool(mcpwire.types.Tool(name="bad", description="d",
                                     input_schema={"type": "object", "properties": {"p": prop}}))


def test_null_argument_sends_no_header() -> None:
    ex = exchange(SERVER, _regional(region=None))
    ex.cancel()


# --- admission order: two violations at once --------------------------------------------------------------

EVIL = (b"Origin", b"http://evil.example.com")


def test_order_method_beats_path() -> None:
    refuse(answer(method="GET", target="/nope"), 405)


def test_order_path_beats_origin() -> None:
    refuse(answer(target="/nope", extra=[EVIL]), 404)


def test_order_origin_beats_host() -> None:
    reply = reply_of(post(HOSTED, DISCOVER, extra=[EVIL, (b"Host", b"evil.example.com")]))
    refuse(reply, 403, "Origin is not allowed")


def test_order_host_beats_size() -> None:
    server = make_server(http=mcpwire.HttpPolicy(allowed_hosts=frozenset({"localhost"}), max_body_bytes=10))
    refuse(reply_of(post(server, DISCOVER, extra=[(b"Host", b"evil")])), 403, "Host is not allowed")


def test_order_size_beats_content_type() -> None:
    server = make_server(http=mcpwire.HttpPolicy(max_body_bytes=10))
    refuse(reply_of(post(server, DISCOVER, drop=[b"content-type"])), 413)


def test_order_content_type_beats_accept() -> None:
    refuse(answer(drop=[b"content-type", b"accept"]), 415)


def test_order_accept_beats_parse_error() -> None:
    refuse(reply_of(post(SERVER, b"{", headers=[(b"content-type", b"application/json"), (b"accept", b"text/html")])),
           406)


def test_order_parse_error_beats_missing_mcp_headers() -> None:
    reply = reply_of(post(SERVER, b"{", headers=[(b"content-type", b"application/json"),
                                                 (b"accept", b"application/json, text/event-stream")]))
    error_of(reply, -32700, None)


def test_order_response_object_beats_missing_mcp_headers() -> None:
    reply = answer({"jsonrpc": "2.0", "id": 1, "result": {}}, drop=[b"mcp-protocol-version"])
    assert reply.status == 202


def test_order_envelope_beats_version_header() -> None:
    body = {"jsonrpc": "1.0", "id": 9, "method": "server/discover", "params": {"_meta": meta()}}
    error_of(answer(body, drop=[b"mcp-protocol-version"]), -32600, 9)


def test_order_version_header_beats_mcp_method() -> None:
    error = error_of(answer(drop=[b"mcp-protocol-version", b"mcp-method"]), -32020, 1)
    assert "mcp-protocol-version" in error["message"].lower()


def test_order_version_mismatch_beats_mcp_method_mismatch() -> None:
    body = request("server/discover", {"_meta": meta(version="v2")}, id=1)
    reply = answer(body, drop=[b"mcp-protocol-version", b"mcp-method"],
                   extra=[(b"MCP-Protocol-Version", VERSION.encode()), (b"Mcp-Method", b"x")])
    error_of(reply, -32020, 1, data={"header": VERSION, "body": "v2"})


def test_order_unsupported_version_beats_missing_mcp_method() -> None:
    body = request("server/discover", {"_meta": meta(version="v999")}, id=1)
    error_of(answer(body, drop=[b"mcp-method"]), -32022, 1)


def test_order_header_mismatch_beats_unknown_method() -> None:
    body = request("ping", {}, id=10)
    error_of(answer(body, drop=[b"mcp-method"], extra=[(b"Mcp-Method", b"pong")]), -32020, 10)
    error_of(answer(body, drop=[b"mcp-protocol-version"]), -32020, 10)


def test_order_mcp_name_beats_unknown_tool() -> None:
    body = request("tools/call", {"name": "nope"}, id=11)
    error_of(answer(body, drop=[b"mcp-name"]), -32020, 11)


def test_order_unknown_method_beats_meta_and_params() -> None:
    body = request("initialize", {"protocolVersion": 5, "_meta": {"bad key": True}}, id="init")
    error_of(answer(body), -32601, "init", message_text="Method not found: initialize")


def test_order_disabled_capability_beats_meta() -> None:
    server = make_server(prompts=False)
    body = request("prompts/list", {"_meta": {}}, id=12)
    error_of(reply_of(post(server, body)), -32601, 12)


# --- notifications over HTTP ------------------------------------------------------------------------------


def test_notification_is_202_without_content_type() -> None:
    reply = answer({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
    assert reply.status == 202 and b"content-type" not in reply.headers


def test_notification_with_missing_version_header_is_still_not_answered() -> None:
    # Section 1: a notification never gets a reply; steps 9-10 check requests only.
    body = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    assert answer(body, drop=[b"mcp-protocol-version"]).status == 202
    assert answer(body, drop=[b"mcp-method"]).status == 202


def test_notification_still_goes_through_transport_admission() -> None:
    body = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    refuse(answer(body, method="GET"), 405)
    refuse(answer(body, drop=[b"accept"], extra=[(b"accept", b"text/html")]), 406)


@pytest.mark.parametrize("length", [0, 1, 170, 4095, 4096, 70_000])
@pytest.mark.parametrize("status", [200, 400])
@pytest.mark.parametrize("extra", [(), ((b"allow", b"POST"),)])
def test_json_reply_head_is_the_same_whether_shared_or_built(
    length: int, status: int, extra: tuple[tuple[bytes, bytes], ...]
) -> None:
    # 200 heads of small bodies are built once per length and shared: each must still be
    # exactly the head of its own body, on every call.
    for body in (b"x" * length, b"y" * length):
        head, out = json_reply(status, body, extra)
        assert out.data is body and out.more is False
        assert head.status == status
        assert head.headers == ((b"content-type", b"application/json"), (b"content-length", str(length).encode()), *extra)
