"""The client engine against the server engine, through bytes only (STYLE habit 14).

Each test builds requests with :class:`mcpwire.client.engine.Client`, hands the exact bytes and
headers to :class:`mcpwire.Server`, and feeds the server's output back to the client's
response parser: whole, byte by byte, and in odd chunks where it matters.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import msgspec
import pytest
from msgspec import UNSET

import mcpwire

from mcpwire.types import CallToolResult, DiscoverResult, Implementation, Tool
from mcpwire import HttpExchange, HttpListenStream, HttpRequest, Keyring, LocalProtocolError, RemoteProtocolError, ResponseBody, ResponseHead, Server, StdioConnection, StdioExchange, ToolCall
from mcpwire.client.engine import Client, Paginator
from mcpwire.client.events import (
    ClientEvent,
    ErrorResult,
    InputRequired,
    ListChanged,
    ListenAck,
    LogMessage,
    OutgoingRequest,
    Progress,
    ResultReceived,
)
from mcpwire.client.stdio import ClientStdioConnection
from mcpwire.client.stream import HttpResponseParser
from mcpwire.types import ElicitRequest, ElicitResult, ListRootsResult, Root

NOW = 1_800_000_000.0
CAPS: dict[str, Any] = {"roots": {}, "sampling": {}, "elicitation": {"form": {}, "url": {}}}
OBJ: dict[str, Any] = {"type": "object"}
ELICIT: dict[str, Any] = {"method": "elicitation/create", "params": {
    "mode": "form", "message": "Name?",
    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}}
ROOTS: dict[str, Any] = {"method": "roots/list", "params": {}}


def make_server(**kw: Any) -> Server:
    server = Server(Implementation(name="srv", version="1"), keyring=Keyring.single(b"k" * 32), **kw)
    server.add_tool(Tool(name="echo", description="Echo", input_schema=OBJ))
    server.add_tool(Tool(name="other", description="Other", input_schema=OBJ))
    return server


def make_client(**kw: Any) -> Client:
    return Client(Implementation(name="cli", version="0.1"), capabilities=CAPS, **kw)


def post(server: Server, req: OutgoingRequest) -> Any:
    return server.receive_http(HttpRequest(method="POST", target="/mcp", headers=list(req.headers), body=req.body), now=NOW)


def flatten(outputs: Iterable[Any]) -> tuple[int, bytes, bytes]:
    status, ctype, body = 0, b"", b""
    for item in outputs:
        if isinstance(item, ResponseHead):
            status = item.status
            ctype = {k.lower(): v for k, v in item.headers}.get(b"content-type", b"")
        else:
            assert isinstance(item, ResponseBody)
            body += item.data
    return status, ctype, body


def parse(client: Client, req: OutgoingRequest, status: int, ctype: bytes, body: bytes, chunk: int = 0) -> list[ClientEvent]:
    parser = HttpResponseParser(client, req, status=status, content_type=ctype)
    events: list[ClientEvent] = []
    step = chunk or max(len(body), 1)
    for i in range(0, len(body), step):
        events += parser.feed(body[i : i + step])
    events += parser.close()
    assert parser.done or req.method == "subscriptions/listen"
    return events


def roundtrip(client: Client, server: Server, req: OutgoingRequest, chunk: int = 0) -> list[ClientEvent]:
    reply = post(server, req)
    assert isinstance(reply, tuple), reply
    return parse(client, req, *flatten(reply), chunk=chunk)


def final(events: list[ClientEvent]) -> ClientEvent:
    assert events
    return events[-1]


def sent(req: OutgoingRequest) -> dict[str, Any]:
    return json.loads(req.body)  # type: ignore[no-any-return]


# -- building requests -------------------------------------------------------------------------------


def test_request_meta_headers_and_unique_ids() -> None:
    client = make_client()
    a = client.call_tool("echo", {"x": 1}, log_level="info", progress_token="p")
    b = client.discover(capabilities={})
    assert a.id != b.id
    assert make_client().discover().id == 1  # the counter is per engine, not global
    body = sent(a)
    assert body["method"] == "tools/call" and body["params"]["name"] == "echo"
    meta = body["params"]["_meta"]
    assert meta == {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": CAPS,
        "io.modelcontextprotocol/clientInfo": {"name": "cli", "version": "0.1"},
        "io.modelcontextprotocol/logLevel": "info",
        "progressToken": "p",
    }
    assert sent(b)["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] == {}
    headers = dict(a.headers)
    assert headers[b"MCP-Protocol-Version"] == b"2026-07-28"
    assert headers[b"Mcp-Method"] == b"tools/call" and headers[b"Mcp-Name"] == b"echo"
    assert headers[b"Content-Type"] == b"application/json"
    assert headers[b"Accept"] == b"application/json, text/event-stream"
    assert dict(client.read_resource("test://x").headers)[b"Mcp-Name"] == b"test://x"
    assert b"Mcp-Name" not in dict(b.headers)
    with pytest.raises(LocalProtocolError):
        client.request("tools/list", log_level="loud")
    with pytest.raises(LocalProtocolError):
        client.request("tools/list", capabilities={"roots": True})


def test_discover_and_error_result() -> None:
    client, server = make_client(), make_server()
    event = final(roundtrip(client, server, client.discover()))
    assert isinstance(event, ResultReceived) and isinstance(event.value, DiscoverResult)
    assert event.value.supported_versions == ["2026-07-28"]
    err = final(roundtrip(client, server, client.call_tool("nope", {})))
    assert isinstance(err, ErrorResult) and err.code == -32602


def test_unsupported_version_fallback() -> None:
    client, server = make_client(protocol_version="2099-01-01", supported_versions=("2099-01-01", "2026-07-28")), make_server()
    first = client.discover()
    err = final(roundtrip(client, server, first))
    assert isinstance(err, ErrorResult) and err.code == -32022
    # Only -32022 is a version refusal, even when another error carries the same data.
    not_a_version_error = ErrorResult(request_id=first.id, code=-32602, message="Invalid params", data=err.data)
    with pytest.raises(LocalProtocolError, match="version_retry needs a -32022 error"):
        client.version_retry(first, not_a_version_error)
    assert client.protocol_version == "2099-01-01"
    second = client.version_retry(first, err)
    assert second.id != first.id and dict(second.headers)[b"MCP-Protocol-Version"] == b"2026-07-28"
    assert sent(second)["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert isinstance(final(roundtrip(client, server, second)), ResultReceived)
    assert client.protocol_version == "2026-07-28"
    lone = make_client(protocol_version="2099-01-01", supported_versions=("2099-01-01",))
    req = lone.discover()
    err = final(roundtrip(lone, server, req))
    assert isinstance(err, ErrorResult)
    with pytest.raises(LocalProtocolError, match="no common protocol version"):
        lone.version_retry(req, err)


def test_tools_list_pagination() -> None:
    client, server = make_client(), make_server(page_size=2)
    for i in range(3):
        server.add_tool(Tool(name=f"t{i}", description="d", input_schema=OBJ))
    pages = client.paginate("tools/list")
    while (req := pages.next_request()) is not None:
        event = final(roundtrip(client, server, req))
        assert isinstance(event, ResultReceived)
        pages.add(event)
    assert [t.name for t in pages.items] == ["echo", "other", "t0", "t1", "t2"]
    assert pages.pages == 3 and not pages.truncated
    capped = Paginator(client, "tools/list", max_pages=1)
    req2 = capped.next_request()
    assert req2 is not None
    capped.add(final(roundtrip(client, server, req2)))  # type: ignore[arg-type]
    assert capped.next_request() is None and capped.truncated
    # Misuse is the host's error: a method without pages, and a page of another list.
    with pytest.raises(LocalProtocolError, match="tools/call is not paginated"):
        client.paginate("tools/call")
    prompts = final(roundtrip(client, server, client.request("prompts/list")))
    assert isinstance(prompts, ResultReceived)
    walk = client.paginate("tools/list")
    with pytest.raises(LocalProtocolError, match="result of another method"):
        walk.add(prompts)
    assert walk.pages == 0 and walk.items == []


def test_a_repeated_cursor_ends_the_walk_as_truncated() -> None:
    # A server that hands out the same nextCursor again would loop to max_pages: the walk stops
    # at the repeat (docs/client.md: truncated "when max_pages or a repeated cursor stopped it").
    client = make_client()
    pages = client.paginate("tools/list")
    sent_cursors = []
    for name, cursor in (("a", "c1"), ("b", "c2"), ("c", "c1")):
        req = pages.next_request()
        assert req is not None
        sent_cursors.append(sent(req)["params"].get("cursor"))
        body = json.dumps({"jsonrpc": "2.0", "id": req.id, "result": {
            "resultType": "complete", "tools": [{"name": name, "inputSchema": OBJ}], "nextCursor": cursor,
            "ttlMs": 0, "cacheScope": "private"}}).encode()
        event = final(parse(client, req, 200, b"application/json", body))
        assert isinstance(event, ResultReceived)
        pages.add(event)
    assert sent_cursors == [None, "c1", "c2"]
    assert pages.next_request() is None and pages.truncated and pages.pages == 3
    assert [t.name for t in pages.items] == ["a", "b", "c"]


def drive(server: Server, req: OutgoingRequest) -> HttpExchange:
    exchange = post(server, req)
    assert isinstance(exchange, HttpExchange), exchange
    return exchange


@pytest.mark.parametrize("chunk", [0, 1, 7])
def test_tool_call_sse_progress_then_result(chunk: int) -> None:
    client, server = make_client(), make_server()
    req = client.call_tool("echo", {}, progress_token="tok", log_level="debug")
    ex = drive(server, req)
    out = ex.progress(1, total=2) + ex.log("info", "hello") + ex.progress(2, total=2, message="done") + ex.complete("ok")
    events = parse(client, req, *flatten(out), chunk=chunk)
    assert [type(e) for e in events] == [Progress, LogMessage, Progress, ResultReceived]
    assert events[0] == Progress(request_id=req.id, progress_token="tok", progress=1, total=2)
    assert events[1] == LogMessage(request_id=req.id, level="info", data="hello")
    result = events[-1]
    assert isinstance(result, ResultReceived) and isinstance(result.value, CallToolResult)
    assert result.value.content[0].text == "ok"  # type: ignore[union-attr]


def test_tool_call_json() -> None:
    client, server = make_client(), make_server()
    req = client.call_tool("echo", {"a": 1})
    ex = drive(server, req)
    assert isinstance(ex.event, ToolCall) and ex.event.arguments == {"a": 1}
    status, ctype, body = flatten(ex.complete("plain"))
    assert ctype == b"application/json"
    for chunk in (0, 1):
        result = final(parse(client, req, status, ctype, body, chunk=chunk))
        assert isinstance(result, ResultReceived) and result.value.content[0].text == "plain"


def test_mrtr_round_trip_new_id_echoed_state_and_isolation() -> None:
    client, server = make_client(), make_server()
    req = client.call_tool("echo", {"k": "v"})
    ex = drive(server, req)
    out = ex.input_required({"user_name": ELICIT, "roots": ROOTS}, state={"step": 1})
    event = final(parse(client, req, *flatten(out)))
    assert isinstance(event, InputRequired) and event.request is req
    assert isinstance(event.input_requests["user_name"], ElicitRequest)
    assert isinstance(event.request_state, str)
    answers = {
        "user_name": ElicitResult(action="accept", content={"name": "Alice"}),
        "roots": ListRootsResult(roots=[Root(uri="file:///r", name="R")]),
    }
    retry = client.retry(req, answers)  # by request: the engine kept the round
    body = sent(retry)["params"]
    assert retry.id != req.id and retry.method == "tools/call"
    assert body["requestState"] == event.request_state
    assert body["name"] == "echo" and body["arguments"] == {"k": "v"}
    assert body["inputResponses"]["user_name"] == {"action": "accept", "content": {"name": "Alice"}}
    ex2 = drive(server, retry)
    assert isinstance(ex2.event, ToolCall) and ex2.event.state == {"step": 1}
    assert ex2.event.input_responses is not None and set(ex2.event.input_responses) == {"user_name", "roots"}
    assert isinstance(final(parse(client, retry, *flatten(ex2.complete("done")))), ResultReceived)
    with pytest.raises(LocalProtocolError):
        client.retry(req, answers)  # the round was used
    with pytest.raises(LocalProtocolError, match="not asked"):
        client.retry(event, {"bogus": {}})
    other = sent(client.call_tool("other", {}))["params"]
    assert "requestState" not in other and "inputResponses" not in other


def test_mrtr_without_state_omits_it() -> None:
    # mcpwire's server always sends a requestState; another server may send none.
    client = make_client()
    req = client.call_tool("echo", {})
    result = {"resultType": "input_required", "inputRequests": {"r": ROOTS}}
    event = final(parse(client, req, 200, b"application/json", raw_response(req, result)))
    assert isinstance(event, InputRequired) and event.request_state is UNSET
    retry = client.retry(event, {"r": {"roots": []}})
    assert "requestState" not in sent(retry)["params"]


def raw_response(req: OutgoingRequest, result: Any) -> bytes:
    return msgspec.json.encode({"jsonrpc": "2.0", "id": req.id, "result": result})


def test_result_without_result_type_is_complete() -> None:
    client = make_client()
    req = client.call_tool("echo", {})
    event = final(parse(client, req, 200, b"application/json", raw_response(req, {"content": [{"type": "text", "text": "x"}]})))
    assert isinstance(event, ResultReceived) and event.result_type == "complete"
    assert isinstance(event.value, CallToolResult)


def test_input_required_only_for_mrtr_methods_and_not_empty() -> None:
    client = make_client()
    req = client.list_tools()
    with pytest.raises(RemoteProtocolError):
        parse(client, req, 200, b"application/json", raw_response(req, {"resultType": "input_required", "requestState": "s"}))
    req = client.call_tool("echo", {})
    with pytest.raises(RemoteProtocolError):
        parse(client, req, 200, b"application/json", raw_response(req, {"resultType": "input_required"}))


def test_server_request_on_response_stream_is_rejected() -> None:
    client = make_client()
    req = client.call_tool("echo", {})
    frame = b'data: {"jsonrpc":"2.0","id":9,"method":"elicitation/create","params":{}}\n\n'
    parser = HttpResponseParser(client, req, status=200, content_type=b"text/event-stream")
    with pytest.raises(RemoteProtocolError, match="Server sent request 'elicitation/create'") as info:
        parser.feed(frame)
    assert info.value.code == -32600


def test_http_errors_without_json_body() -> None:
    client = make_client()
    req = client.discover()
    with pytest.raises(RemoteProtocolError, match="HTTP 405"):
        parse(client, req, 405, b"text/plain", b"Method Not Allowed")
    parser = HttpResponseParser(client, req, status=200, content_type=b"text/event-stream")
    with pytest.raises(RemoteProtocolError, match="ended without a response"):
        parser.close()
    parser = HttpResponseParser(client, req, status=200, content_type=b"application/json", max_body_bytes=4)
    with pytest.raises(RemoteProtocolError, match="exceeds"):
        parser.feed(b"{" * 5)


def test_listen_stream_events() -> None:
    client, server = make_client(), make_server(list_changed=True)
    req = client.listen({"toolsListChanged": True})
    stream = post(server, req)
    assert isinstance(stream, HttpListenStream)
    parser = HttpResponseParser(client, req, status=200, content_type=b"text/event-stream")
    events = parser.feed(flatten(stream.start())[2])
    assert events == [ListenAck(subscription_id=req.id, notifications=events[0].notifications)]  # type: ignore[union-attr]
    server.add_tool(Tool(name="new", description="n", input_schema=OBJ))
    deliveries = server.list_changed("tools")
    body = b"".join(flatten(out)[2] for s, out in deliveries if s is stream)
    assert parser.feed(body) == [ListChanged(subscription_id=req.id, kind="tools")]
    end = parser.feed(flatten(stream.close())[2])
    assert isinstance(end[0], ResultReceived) and end[0].method == "subscriptions/listen" and parser.done
    bad = HttpResponseParser(client, req, status=200, content_type=b"text/event-stream")
    note = b'data: {"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":999}}}\n\n'
    with pytest.raises(RemoteProtocolError, match="unknown subscription"):
        bad.feed(note)


def test_x_mcp_header_annotations_learned_at_tools_list() -> None:
    client, server = make_client(), make_server()
    server.add_tool(Tool(name="regional", description="r", input_schema={
        "type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}, "n": {"type": "number"}}}))
    raw = json.dumps({"jsonrpc": "2.0", "id": 2, "result": {"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "tools": [
        {"name": "bad", "inputSchema": {"type": "object", "properties": {"v": {"type": "number", "x-mcp-header": "V"}}}},
        {"name": "regional", "inputSchema": {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}},
    ]}}).encode()
    req = client.list_tools()
    assert req.id == 1
    client.new_id()
    req2 = client.list_tools(request_id=2)
    event = final(parse(client, req2, 200, b"application/json", raw))
    assert isinstance(event, ResultReceived) and [t.name for t in event.value.tools] == ["regional"]
    assert "bad" in client.rejected_tools
    with pytest.raises(LocalProtocolError, match="invalid x-mcp-header"):
        client.call_tool("bad", {"v": 1})
    call = client.call_tool("regional", {"region": "eu west", "n": 1.5})
    assert dict(call.headers)[b"Mcp-Param-Region"] == b"eu west"
    assert isinstance(post(server, call), HttpExchange)  # the server accepts the mirrored header
    nulls = client.call_tool("regional", {"region": None})
    assert b"Mcp-Param-Region" not in dict(nulls.headers)
    # The schema is kept exactly as received: no $ref is resolved.
    ref_schema = {"type": "object", "properties": {"p": {"$ref": "http://example.invalid/s.json"}}}
    raw2 = raw_response(client.list_tools(request_id=50), {"ttlMs": 0, "cacheScope": "private", "tools": [{"name": "r", "inputSchema": ref_schema}]})
    ev = final(parse(client, client.list_tools(request_id=50), 200, b"application/json", raw2))
    assert isinstance(ev, ResultReceived) and ev.value.tools[0].input_schema == ref_schema


def test_stdio_demultiplexes_requests_in_flight() -> None:
    client, server = make_client(), make_server()
    conn = ClientStdioConnection(client)
    server_conn = StdioConnection(server)
    a = client.call_tool("echo", {}, progress_token=7)
    b = client.call_tool("other", {})
    outs = server_conn.receive_data(conn.send(a) + conn.send(b), now=NOW)
    ex_a, ex_b = outs
    assert isinstance(ex_a, StdioExchange) and isinstance(ex_b, StdioExchange)
    stdout = ex_b.complete("B") + ex_a.progress(1) + ex_a.complete("A")
    events: list[ClientEvent] = []
    for i in range(len(stdout)):
        events += conn.receive_data(stdout[i : i + 1])
    assert [(type(e).__name__, e.request_id) for e in events] == [  # type: ignore[union-attr]
        ("ResultReceived", b.id), ("Progress", a.id), ("ResultReceived", a.id)]
    assert conn.in_flight == 0
    c = client.call_tool("echo", {})
    line = conn.send(c)
    cancel = conn.cancel(c, "bored")
    assert json.loads(cancel) == {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": c.id, "reason": "bored"}}
    server_conn.receive_data(line + cancel, now=NOW)
    # A server request on stdout is reported, and the connection keeps working.
    bad = conn.receive_data(b'{"jsonrpc":"2.0","id":1,"method":"roots/list"}\n')
    assert isinstance(bad[0], ErrorResult) and bad[0].code == -32600 and bad[0].request_id is None
    # With two requests in flight a result with id null answers neither: reported, both kept.
    e, f = client.call_tool("echo", {}), client.call_tool("other", {})
    conn.send(e)
    conn.send(f)
    unattributed = conn.receive_data(b'{"jsonrpc":"2.0","id":null,"result":{"resultType":"complete"}}\n')
    assert unattributed == [ErrorResult(request_id=None, code=-32600, message="result with id null")]
    assert conn.in_flight == 2
    conn.cancel(e)
    conn.cancel(f)
    assert conn.in_flight == 0
    d = client.call_tool("echo", {})
    conn.send(d)
    assert [e.request_id for e in conn.receive_eof()] == [d.id]  # type: ignore[union-attr]


def test_result_keeps_the_exact_bytes_received() -> None:
    # Tool schemas are kept byte for byte as received (issue: never normalise, never dereference).
    client = mcpwire.Client(mcpwire.types.Implementation(name="c", version="1"))
    request = client.list_tools()
    schema = b'{"type" : "object","$ref":"http://example.invalid/s.json#/a","x":1.50}'
    result = b'{"resultType":"complete","tools":[{"name":"t","description":"d","inputSchema":' + schema + b'}],"ttlMs":0,"cacheScope":"private"}'
    body = b'{"jsonrpc":"2.0","id":%d,"result":' % int(request.id) + result + b"}"
    parser = mcpwire.HttpResponseParser(client, request, status=200, content_type="application/json")
    events = parser.feed(body) + parser.close()
    [event] = [e for e in events if isinstance(e, mcpwire.ResultReceived)]
    assert event.raw == result
    assert schema in event.raw
