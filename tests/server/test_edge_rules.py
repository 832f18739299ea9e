"""Edge rules of the wire reference that hold however malformed a message is, over HTTP
(``Server.receive_http``) and stdio (``StdioConnection``).

1. A notification (a string ``method`` and no ``id`` member at all) is never answered, whatever
   else is wrong with it (section 1): HTTP 202 with an empty body, no line on stdio. Only the
   transport admission steps that come before the body is read as JSON still apply (13.2
   steps 1-6): 405, 404, 403, 413, 415, 406, and 400 -32700 when the body is not readable JSON.
   ``"id": null`` is not a missing id: such a message is a request with an invalid id.
2. A posted response (no ``method`` member, a ``result`` or ``error`` member) is never answered
   either, even when malformed (sections 1 and 13.2 step 7).
3. ``_meta: null`` is not an absent ``_meta`` and ``clientCapabilities: null`` is not ``{}``
   (section 2 steps 1 and 9).
4. ``resourceSubscriptions`` of a subscriptions/listen filter are absolute URIs: they start
   with an RFC 3986 scheme and ``:`` (section 11).
"""

from __future__ import annotations

import json
from typing import cast, Any

import pytest
from schema_check import (
    BASE_HEADERS,
    NOW,
    call,
    check_error,
    error_of,
    http_request,
    lines_of,
    make_server,
    meta,
    post,
    reply_of,
    request,
)

from mcpwire import HttpListenStream, HttpPolicy, HttpRequest, StdioConnection, StdioListenStream
from mcpwire.types import Tool

SERVER = make_server(resource_subscribe=True)
SERVER.add_tool(Tool(name="echo", description="Echo", input_schema={"type": "object"}))

MSG_BAD_ID = "Invalid Request: id must be a string of at most 256 bytes or an int64 integer"
MSG_META_OBJECT = "_meta must be an object"
MSG_CAPS_TYPE = "Client capabilities must be an object"
MSG_URIS = "resourceSubscriptions must be a list of absolute URI strings"
PV = "io.modelcontextprotocol/protocolVersion"
CC = "io.modelcontextprotocol/clientCapabilities"


def raw(body: Any) -> bytes:
    return body if isinstance(body, bytes) else json.dumps(body).encode()


def assert_unanswered_http(answer: Any) -> None:
    reply = reply_of(answer)
    assert reply.status == 202 and reply.body == b"", (reply.status, reply.body)


def stdio(body: Any) -> list[Any]:
    """Every output of one line on a fresh stdio connection (bytes written, exchanges...)."""
    return StdioConnection(SERVER).receive_data(raw(body) + b"\n", now=NOW)


def stdio_error(body: Any) -> Any:
    out = stdio(body)
    assert len(out) == 1 and isinstance(out[0], bytes), out
    (message,) = lines_of(out[0])
    return message


# --- 1. notifications are never answered ---------------------------------------------------------------

NOTIFICATION = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}


def notification(**members: Any) -> dict[str, Any]:
    out = {**NOTIFICATION, **members}
    return {k: v for k, v in out.items() if v is not ...}


MALFORMED_NOTIFICATIONS: list[Any] = [
    notification(jsonrpc="1.0"),
    notification(jsonrpc=...),
    notification(jsonrpc=2.0),
    notification(jsonrpc=None),
    notification(jsonrpc=["2.0"]),
    notification(params=5),
    notification(params=None),
    notification(params=[1, 2]),
    notification(params="x"),
    notification(method="notifications/unknown"),
    notification(method=""),
    notification(method="tools/call", params={"name": "echo", "arguments": []}),
    notification(method="initialize"),
    notification(params={"requestId": 1, "_meta": None}),
    notification(params={"requestId": 1, "_meta": []}),
    notification(params={"requestId": 1, "_meta": {"bad key": 1}}),
    notification(params={"requestId": 1, "_meta": {PV: 5, CC: None, "progressToken": True}}),
    notification(params={"requestId": [1], "reason": 7}),
    notification(extra=1, result={}, error={"code": "x"}),
    {"method": "notifications/cancelled"},
    {"jsonrpc": "1.0", "method": "x", "params": 7, "result": None, "error": None},
    # Valid JSON that Python cannot hold, in members a notification does not need.
    b'{"jsonrpc":1e400,"method":"notifications/cancelled"}',
    b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1e400}}',
    b'{"jsonrpc":"2.0","method":"notifications/cancelled","x":-1e400,"params":99999999999999999999999}',
    # Duplicate members: the last one wins, as for any message (docs/limits.md).
    b'{"jsonrpc":"1.0","jsonrpc":"2.0","method":5,"method":"notifications/x"}',
]


@pytest.mark.parametrize("body", MALFORMED_NOTIFICATIONS, ids=lambda b: raw(b).decode()[:70])
def test_malformed_notification_is_202_over_http(body: Any) -> None:
    assert_unanswered_http(post(SERVER, raw(body), headers=http_request(NOTIFICATION).headers))


@pytest.mark.parametrize("body", MALFORMED_NOTIFICATIONS, ids=lambda b: raw(b).decode()[:70])
def test_malformed_notification_writes_no_line_on_stdio(body: Any) -> None:
    assert stdio(body) == []


@pytest.mark.parametrize(
    "headers",
    [
        [],  # no MCP header at all
        [(b"MCP-Protocol-Version", b"2026-07-28")],  # no Mcp-Method
        [(b"MCP-Protocol-Version", b"2026-07-28"), (b"Mcp-Method", b"tools/list")],  # Mcp-Method mismatch
        [(b"MCP-Protocol-Version", b"1999-01-01"), (b"Mcp-Method", b"notifications/cancelled")],
        [(b"MCP-Protocol-Version", b"2026-07-28"), (b"MCP-Protocol-Version", b"2026-07-28"),
         (b"Mcp-Method", b"notifications/cancelled"), (b"Mcp-Method", b"x")],  # repeated
        [(b"MCP-Protocol-Version", b"\xff"), (b"Mcp-Method", b"\x00"), (b"Mcp-Name", b"=?base64?!!?=")],
    ],
    ids=range(6),
)
def test_notification_with_missing_or_mismatched_mcp_headers_is_202(headers: list[tuple[bytes, bytes]]) -> None:
    # 13.2 steps 9-10 are request checks: a notification has no id and gets no answer.
    assert_unanswered_http(post(SERVER, NOTIFICATION, headers=BASE_HEADERS + headers))


def test_notification_whose_body_version_differs_from_its_header_is_202() -> None:
    body = notification(params={"requestId": 1, "_meta": meta(version="2025-11-25")})
    assert_unanswered_http(post(SERVER, body, headers=http_request(NOTIFICATION).headers))
    body = notification(method="tools/call", params={"name": "echo", "_meta": meta()})
    assert_unanswered_http(post(SERVER, body))  # Mcp-Name missing for a tools/call-named notification
    assert stdio(body) == []


SMALL = make_server(http=HttpPolicy(max_body_bytes=4096))


def test_notification_goes_through_transport_admission_first() -> None:
    # 13.2 steps 1-6 come before the body is known to be a notification.
    body = raw(NOTIFICATION)
    good = cast(list[tuple[bytes, bytes]], list(http_request(NOTIFICATION).headers))  # bytes pairs, as built

    def refused(request: HttpRequest, status: int) -> None:
        reply = reply_of(SMALL.receive_http(request, now=NOW))
        assert reply.status == status
        check_error(reply.message, -32600, None)

    refused(HttpRequest(method="GET", target="/mcp", headers=good, body=body), 405)
    refused(HttpRequest(method="POST", target="/other", headers=good, body=body), 404)
    refused(HttpRequest(method="POST", target="/mcp", headers=[*good, (b"Origin", b"http://evil.example")],
                        body=body), 403)
    refused(HttpRequest(method="POST", target="/mcp", headers=good, body=body + b" " * 5000), 413)
    no_type = [h for h in good if h[0].lower() != b"content-type"] + [(b"Content-Type", b"text/plain")]
    refused(HttpRequest(method="POST", target="/mcp", headers=no_type, body=body), 415)
    neither = [h for h in good if h[0].lower() != b"accept"] + [(b"Accept", b"text/html")]
    refused(HttpRequest(method="POST", target="/mcp", headers=neither, body=body), 406)


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc":"2.0","method":"notifications/cancelled"',  # truncated
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"a":NaN}}',
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"a":"\xff"}}',  # not UTF-8
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","x":"\\ud800"}',  # lone surrogate
        b'{"jsonrpc":"2.0","method":"notifications/cancelled","x":' + b"[" * 3000 + b"]" * 3000 + b"}",
    ],
    ids=["truncated", "NaN", "utf8", "surrogate", "deep"],
)
def test_a_notification_that_is_not_readable_json_is_a_parse_error(body: bytes) -> None:
    # 13.2 step 6: a body that cannot be read cannot be recognized as a notification.
    reply = reply_of(post(SERVER, body, headers=http_request(NOTIFICATION).headers))
    assert reply.status == 400
    check_error(reply.message, -32700, None)
    check_error(stdio_error(body), -32700, None)


def test_an_oversize_notification_line_is_refused_on_stdio() -> None:
    conn = StdioConnection(SERVER, max_line_bytes=64)
    (out,) = conn.receive_data(raw(notification(params={"requestId": "x" * 100})) + b"\n", now=NOW)
    check_error(lines_of(out)[0], -32600, None)


@pytest.mark.parametrize("method", ["notifications/cancelled", "server/discover", "tools/call"])
def test_id_null_is_not_a_notification_but_a_request_with_a_bad_id(method: str) -> None:
    # JSON-RPC 2.0: a notification has no id member; section 1: an id must be a bounded
    # string or int64, anything else (null included) is -32600 with id null.
    body = {"jsonrpc": "2.0", "id": None, "method": method, "params": {"requestId": 1, "_meta": meta()}}
    error_of(call(SERVER, body), -32600, None, message_text=MSG_BAD_ID)
    check_error(stdio_error(body), -32600, None, message_text=MSG_BAD_ID)


def test_a_non_string_method_without_id_is_not_a_notification() -> None:
    bodies: list[dict[str, Any]] = [{"jsonrpc": "2.0", "method": 5}, {"jsonrpc": "2.0", "method": None, "params": {}}]
    for body in bodies:
        error_of(call(SERVER, body), -32600, None)
        check_error(stdio_error(body), -32600, None)


def test_a_stdio_notification_between_requests_leaves_them_answered() -> None:
    conn = StdioConnection(SERVER)
    lines = b"".join(raw(b) + b"\n" for b in [request("server/discover", {}, id=1), notification(jsonrpc="1.0"),
                                              notification(params=5), request("server/discover", {}, id=2)])
    out = conn.receive_data(lines, now=NOW)
    assert [lines_of(o, "server/discover")[0]["id"] for o in out] == [1, 2]


# --- 2. posted responses are never answered -------------------------------------------------------------

MALFORMED_RESPONSES: list[Any] = [
    {"jsonrpc": "2.0", "result": {}},  # no id
    {"jsonrpc": "2.0", "error": {"code": 1, "message": "x"}},  # no id
    {"jsonrpc": "2.0", "id": True, "result": {}},
    {"jsonrpc": "2.0", "id": 1.5, "error": {"code": 1, "message": "x"}},
    {"jsonrpc": "2.0", "id": [1], "result": {}},
    {"jsonrpc": "2.0", "id": {"a": 1}, "result": {}},
    {"jsonrpc": "2.0", "id": 2**64, "result": {}},
    {"jsonrpc": "2.0", "id": "x" * 300, "result": {}},
    {"jsonrpc": "2.0", "id": 5, "result": {}, "error": {"code": 1, "message": "x"}},
    {"jsonrpc": "1.0", "id": 5, "result": {}},
    {"id": 5, "result": {}},
    {"jsonrpc": None, "id": None, "error": None},
    {"jsonrpc": "2.0", "id": 5, "error": {"code": "x"}},
    {"jsonrpc": "2.0", "id": 5, "error": "boom"},
    {"jsonrpc": "2.0", "id": 5, "error": {"code": 1}},
    {"jsonrpc": "2.0", "id": 5, "result": 7, "params": [], "extra": True},
    b'{"jsonrpc":"2.0","id":1e400,"result":{}}',
    b'{"jsonrpc":-1e400,"id":1,"error":{"code":1e400,"message":"x"}}',
]


@pytest.mark.parametrize("body", MALFORMED_RESPONSES, ids=lambda b: raw(b).decode()[:70])
def test_malformed_posted_response_is_202_over_http(body: Any) -> None:
    assert_unanswered_http(post(SERVER, raw(body), headers=BASE_HEADERS))


@pytest.mark.parametrize("body", MALFORMED_RESPONSES, ids=lambda b: raw(b).decode()[:70])
def test_malformed_response_line_is_dropped_on_stdio(body: Any) -> None:
    assert stdio(body) == []


def test_an_object_with_neither_method_nor_result_nor_error_is_an_invalid_request() -> None:
    # Not a response: a request without a method, answered -32600 with its id.
    error_of(call(SERVER, {"jsonrpc": "2.0", "id": 4}), -32600, 4)
    check_error(stdio_error({"jsonrpc": "2.0", "id": 4}), -32600, 4)


# --- 3. _meta null and clientCapabilities null ----------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "params"),
    [("server/discover", {}), ("tools/list", {}), ("tools/call", {"name": "echo"}),
     ("subscriptions/listen", {"notifications": {"toolsListChanged": True}})],
)
def test_meta_null_is_not_absent_meta(method: str, params: dict[str, Any]) -> None:
    body = request(method, {**params, "_meta": None}, id="n")
    error_of(call(SERVER, body), -32602, "n", message_text=MSG_META_OBJECT)
    check_error(stdio_error(body), -32602, "n", message_text=MSG_META_OBJECT)


@pytest.mark.parametrize("caps", [None, [], "x", 0, True], ids=json.dumps)
def test_client_capabilities_null_is_not_empty(caps: Any) -> None:
    body = request("server/discover", {"_meta": meta(caps=caps)}, id="c")
    error_of(call(SERVER, body), -32602, "c", message_text=MSG_CAPS_TYPE)
    check_error(stdio_error(body), -32602, "c", message_text=MSG_CAPS_TYPE)


def test_absent_meta_is_still_empty_and_empty_caps_are_still_none() -> None:
    body = request("server/discover", {}, id=1, with_meta=False)
    error_of(call(SERVER, body), -32602, 1, message_text="Missing required io.modelcontextprotocol/protocolVersion metadata")
    assert call(SERVER, request("server/discover", {"_meta": meta(caps={})})).status == 200


# --- 4. resourceSubscriptions are absolute URIs ---------------------------------------------------------


def listen_body(uris: Any) -> dict[str, Any]:
    return request("subscriptions/listen", {"notifications": {"resourceSubscriptions": uris}}, id="L")


BAD_URIS = ["/path:with-colon", "1http://x", ":x", "a b:c", "?q=a:b", "_x:y", "\u00e9:x", "http//x:y", "-x:y",
            "#frag:x", "x", "", "+a:b", ".a:b"]


@pytest.mark.parametrize("uri", BAD_URIS, ids=repr)
def test_resource_subscription_without_a_scheme_is_invalid_params(uri: str) -> None:
    body = listen_body(["test://static-text", uri])
    error_of(call(SERVER, body), -32602, "L", message_text=MSG_URIS)
    check_error(stdio_error(body), -32602, "L", message_text=MSG_URIS)


@pytest.mark.parametrize("uri", ["test://static-text", "urn:isbn:0451450523", "file:///tmp/x", "a+b-c.d:x",
                                 "HTTPS://example.com/r?id=1", "x:"], ids=repr)
def test_resource_subscription_with_a_scheme_is_accepted(uri: str) -> None:
    stream = post(SERVER, listen_body([uri]))
    assert isinstance(stream, HttpListenStream), stream
    assert stream.filter == {"resourceSubscriptions": [uri]}
    stream.cancel()
    (out,) = stdio(listen_body([uri]))
    assert isinstance(out, StdioListenStream)
    out.cancel()
