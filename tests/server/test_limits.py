"""Every core-level bound of docs/limits.md at its boundary: at the limit passes, one past fails
with the documented error. Defaults are checked as the engine ships them (no argument given),
configurable bounds also with a small value. The adapter bounds (header block, timeouts,
listen-stream backlog) are the drivers' and are tested with them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import mcpwire
from mcpwire.client.stream import TRANSPORT_ERROR
from mcpwire.server.tokens import CursorCodec, InvalidCursor, InvalidRequestState, RequestStateCodec
from fuzz import invariants
from fuzz.host import INPUT_REQUESTS
from fuzz.targets import NOW, make_client

MiB = 1024 * 1024
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}


def server(**kw: Any) -> mcpwire.Server:
    """A plain server (no validator: fast to build), with one tool, prompt and resource."""
    s = mcpwire.Server(mcpwire.types.Implementation(name="limits", version="1"), keyring=mcpwire.Keyring.single(b"k" * 32),
                       completions=True, resource_subscribe=True, **kw)
    s.add_tool(mcpwire.types.Tool(name="echo", description="echo", input_schema={"type": "object"}))
    s.add_prompt(mcpwire.types.Prompt(name="p", description="p"))
    s.add_resource(mcpwire.types.Resource(uri="test://r", name="r"))
    return s


def body_of(method: str = "server/discover", params: dict[str, Any] | None = None, id: Any = 1,
            size: int | None = None, meta: dict[str, Any] = META) -> bytes:
    """A request; with ``size``, padded (in an unread params member) to exactly that many bytes."""
    p = {**(params or {}), "_meta": meta}
    if size is None:
        return json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": p}).encode()
    p["pad"] = ""
    base = len(json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": p}).encode())
    p["pad"] = "x" * (size - base)
    data = json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": p}).encode()
    assert len(data) == size
    return data


def http(s: mcpwire.Server, body: bytes, method: str | None = None, name: str | None = None) -> Any:
    method = method or json.loads(body)["method"]
    headers = [(b"Content-Type", b"application/json"), (b"Accept", b"application/json, text/event-stream"),
               (b"MCP-Protocol-Version", b"2026-07-28"), (b"Mcp-Method", method.encode())]
    if name is not None:
        headers.append((b"Mcp-Name", name.encode()))
    return s.receive_http(mcpwire.HttpRequest(method="POST", target="/mcp", headers=headers, body=body), now=NOW)


def message_of(answer: Any) -> dict[str, Any]:
    assert isinstance(answer, tuple), answer
    message = invariants.reply_invariants(*answer)
    assert message is not None
    return message


# --- HTTP request body --------------------------------------------------------------------------------


@pytest.mark.parametrize("limit", [None, 300])
def test_http_body_limit(limit: int | None) -> None:
    s = server() if limit is None else server(http=mcpwire.HttpPolicy(max_body_bytes=limit))
    size = 4 * MiB if limit is None else limit
    assert "result" in message_of(http(s, body_of(size=size)))
    head, body = http(s, body_of(size=size + 1))
    assert head.status == 413
    assert message_of((head, body))["error"]["code"] == -32600 and json.loads(body.data)["id"] is None


# --- stdio line --------------------------------------------------------------------------------------


@pytest.mark.parametrize("limit", [None, 300])
def test_stdio_line_limit(limit: int | None) -> None:
    s = server()
    conn = mcpwire.StdioConnection(s) if limit is None else mcpwire.StdioConnection(s, max_line_bytes=limit)
    size = 4 * MiB if limit is None else limit
    (ok,) = conn.receive_data(body_of(size=size) + b"\n", now=NOW)
    assert "result" in invariants.line_invariants(ok)[0]
    # CR counts: a line is limited before its CRLF is stripped (docs: "the rest is discarded").
    over, after = conn.receive_data(body_of(size=size) + b"\r\n" + body_of(id=2) + b"\n", now=NOW)
    (error,) = invariants.line_invariants(over)
    assert error["error"]["code"] == -32600 and error["id"] is None
    assert invariants.line_invariants(after)[0]["id"] == 2  # the framing survives


# --- requests in flight --------------------------------------------------------------------------------


@pytest.mark.parametrize("limit", [None, 3])
def test_stdio_in_flight_limit(limit: int | None) -> None:
    s = server()
    conn = mcpwire.StdioConnection(s) if limit is None else mcpwire.StdioConnection(s, max_in_flight=limit)
    count = 64 if limit is None else limit
    call = {"name": "echo", "arguments": {}}
    stream = b"".join(body_of("tools/call", call, id=i) + b"\n" for i in range(count + 1))
    out = conn.receive_data(stream, now=NOW)
    assert all(isinstance(o, mcpwire.StdioExchange) for o in out[:count]) and conn.in_flight == count
    (error,) = invariants.line_invariants(out[count])
    assert error["error"]["code"] == -32603 and error["id"] == count
    first = out[0]
    assert isinstance(first, mcpwire.StdioExchange)
    first.complete("done")  # one finishes: there is room again
    (again,) = conn.receive_data(body_of("tools/call", call, id="late") + b"\n", now=NOW)
    assert isinstance(again, mcpwire.StdioExchange)


# --- request id and progressToken ---------------------------------------------------------------------

ID_CASES = [("s" * 256, True), ("s" * 257, False), ("\U0001F600" * 64, True), ("\U0001F600" * 64 + "s", False),
            ("é" * 128, True), ("é" * 128 + "s", False), (2**63 - 1, True), (2**63, False), (-(2**63), True),
            (-(2**63) - 1, False)]


@pytest.mark.parametrize(("request_id", "ok"), ID_CASES, ids=range(len(ID_CASES)))
def test_request_id_bounds(request_id: Any, ok: bool) -> None:
    message = message_of(http(server(), body_of(id=request_id)))
    if ok:
        assert message["id"] == request_id and "result" in message
    else:
        assert message["error"]["code"] == -32600 and message["id"] is None


@pytest.mark.parametrize(("token", "ok"), ID_CASES, ids=range(len(ID_CASES)))
def test_progress_token_bounds(token: Any, ok: bool) -> None:
    message = message_of(http(server(), body_of(meta={**META, "progressToken": token})))
    if ok:
        assert "result" in message
    else:
        assert message["error"]["code"] == -32602 and message["id"] == 1


# --- SSE event (client reading) -----------------------------------------------------------------------


@pytest.mark.parametrize("limit", [None, 64])
def test_sse_event_limit(limit: int | None) -> None:
    size = 4 * MiB if limit is None else limit
    # The pending event counts its lines with their LF: "data: <x>" + LF is exactly the limit.
    line = b"data: " + b"x" * (size - 7) + b"\n"

    def reader() -> mcpwire.framing.SSEReader:
        return mcpwire.framing.SSEReader() if limit is None else mcpwire.framing.SSEReader(max_event_bytes=limit)

    (event,) = reader().feed(line + b"\n")
    assert len(event.data) == size - 7
    with pytest.raises(mcpwire.RemoteProtocolError) as caught:
        reader().feed(b"data: " + b"x" * (size - 6) + b"\n\n")
    assert caught.value.code == -32600


def test_client_sse_event_limit_default() -> None:
    client = make_client()
    request = client.discover()
    parser = mcpwire.HttpResponseParser(client, request, status=200, content_type=b"text/event-stream")
    with pytest.raises(mcpwire.RemoteProtocolError) as caught:
        parser.feed(b"data: " + b"x" * (4 * MiB - 6) + b"\n\n")
    assert caught.value.code == -32600


def test_client_json_body_limit_default() -> None:
    client = make_client()
    request = client.discover()
    ok = mcpwire.HttpResponseParser(client, request, status=200, content_type=b"application/json")
    result = json.dumps({"jsonrpc": "2.0", "id": request.id, "result": {"resultType": "complete", "pad": ""}})
    padded = result.replace('"pad": ""', '"pad": "' + "x" * (4 * MiB - len(result)) + '"').encode()
    assert len(padded) == 4 * MiB
    ok.feed(padded)
    assert isinstance(ok.close()[0], mcpwire.ResultReceived)
    over = mcpwire.HttpResponseParser(client, client.discover(), status=200, content_type=b"application/json")
    with pytest.raises(mcpwire.RemoteProtocolError) as caught:
        over.feed(padded + b" ")
    assert caught.value.code == TRANSPORT_ERROR


def test_client_stdio_line_limit_default() -> None:
    client = make_client()
    conn = mcpwire.ClientStdioConnection(client)
    request = client.discover()
    conn.send(request)
    (event,) = conn.receive_data(b" " * (4 * MiB + 1) + b"\n")
    # The line may have carried the answer: the request in flight ends (-32000, the connection's own)
    assert isinstance(event, mcpwire.ErrorResult) and event.code == -32000 and event.request_id == request.id
    assert conn.in_flight == 0 and conn.lost(request.id)
    (event,) = conn.receive_data(b" " * (4 * MiB + 1) + b"\n")  # with nothing in flight: one -32600
    assert isinstance(event, mcpwire.ErrorResult) and event.code == -32600 and event.request_id is None


# --- listen streams and resource subscriptions ---------------------------------------------------------


@pytest.mark.parametrize("limit", [None, 2])
def test_open_listen_streams_limit(limit: int | None) -> None:
    s = server() if limit is None else server(max_listen_streams=limit)
    count = 256 if limit is None else limit
    listen = {"notifications": {"toolsListChanged": True}}
    streams = [http(s, body_of("subscriptions/listen", listen, id=i), "subscriptions/listen") for i in range(count)]
    assert all(isinstance(x, mcpwire.HttpListenStream) for x in streams) and s.open_listeners == count
    head, body = http(s, body_of("subscriptions/listen", listen, id="extra"), "subscriptions/listen")
    assert head.status == 503 and message_of((head, body))["error"]["code"] == -32603
    streams[0].cancel()
    assert isinstance(http(s, body_of("subscriptions/listen", listen, id="again"), "subscriptions/listen"),
                      mcpwire.HttpListenStream)


def test_resource_subscriptions_per_listen_request() -> None:
    s = server()
    uris = [f"test://r/{i}" for i in range(1001)]
    ok = http(s, body_of("subscriptions/listen", {"notifications": {"resourceSubscriptions": uris[:1000]}}),
              "subscriptions/listen")
    assert isinstance(ok, mcpwire.HttpListenStream) and len(ok.filter["resourceSubscriptions"]) == 1000
    message = message_of(http(s, body_of("subscriptions/listen", {"notifications": {"resourceSubscriptions": uris}}),
                              "subscriptions/listen"))
    assert message["error"]["code"] == -32602


# --- progress -------------------------------------------------------------------------------------------


def exchange(s: mcpwire.Server, **meta: Any) -> mcpwire.StdioExchange:
    conn = mcpwire.StdioConnection(s)
    (ex,) = conn.receive_data(body_of("tools/call", {"name": "echo"}, meta={**META, **meta}) + b"\n", now=NOW)
    assert isinstance(ex, mcpwire.StdioExchange)
    return ex


def test_progress_updates_cap() -> None:
    ex = exchange(server(), progressToken="t")
    sent = [ex.progress(float(i)) for i in range(1, 1002)]
    assert all(sent[:1000]) and sent[1000] == b""  # the 1001st is dropped; progress is advisory
    assert json.loads(ex.complete("done"))["result"]["content"][0]["text"] == "done"


def test_progress_message_length() -> None:
    ex = exchange(server(), progressToken="t")
    assert ex.progress(1, message="m" * 4096)
    with pytest.raises(mcpwire.LocalProtocolError):
        ex.progress(2, message="m" * 4097)


# --- requestState ---------------------------------------------------------------------------------------


def issue(ex: mcpwire.Exchange[Any], state: Any, **kw: Any) -> str:
    out = ex.input_required({"n": INPUT_REQUESTS["name"]}, state=state, **kw)
    token: str = json.loads(out)["result"]["requestState"]
    return token


def retry(s: mcpwire.Server, token: str, now: float = NOW) -> Any:
    conn = mcpwire.StdioConnection(s)
    params = {"name": "echo", "requestState": token, "inputResponses": {}}
    (out,) = conn.receive_data(body_of("tools/call", params, id=2) + b"\n", now=now)
    return out


def test_request_state_size_limit() -> None:
    s = server()
    # Find the largest state whose token fits 16 KiB exactly or just under, then one more byte.
    sizes = {}
    for n in range(12_000, 12_400):
        try:
            sizes[n] = len(issue(exchange(s), "x" * n))
        except mcpwire.LocalProtocolError:
            break
    fitting = max(sizes)
    assert sizes[fitting] <= 16 * 1024 and sizes[fitting] > 16 * 1024 - 3
    with pytest.raises(mcpwire.LocalProtocolError):
        issue(exchange(s), "x" * (fitting + 1))
    token = issue(exchange(s), "x" * fitting)
    assert isinstance(retry(s, token), mcpwire.StdioExchange)
    (error,) = invariants.line_invariants(retry(s, "m" * (16 * 1024 + 1)))
    assert error["error"] == {"code": -32602, "message": "Invalid or expired request state"}
    codec = RequestStateCodec(mcpwire.Keyring.single(b"k" * 32), max_token_bytes=256)
    with pytest.raises(InvalidRequestState) as caught:
        codec.verify("x" * 257, method="m", scope=b"", now=NOW)
    assert caught.value.reason == "oversize"


def test_request_state_lifetime() -> None:
    s = server()
    token = issue(exchange(s), 1)  # default: 300 s
    assert isinstance(retry(s, token, NOW + 299.999), mcpwire.StdioExchange)
    assert invariants.line_invariants(retry(s, token, NOW + 300))[0]["error"]["code"] == -32602
    assert isinstance(retry(s, token, NOW - 60), mcpwire.StdioExchange)  # clock skew allowed: 60 s
    assert invariants.line_invariants(retry(s, token, NOW - 60.001))[0]["error"]["code"] == -32602
    long = issue(exchange(s), 1, ttl_seconds=900)  # the maximum
    assert isinstance(retry(s, long, NOW + 899.9), mcpwire.StdioExchange)
    with pytest.raises(mcpwire.LocalProtocolError):
        issue(exchange(s), 1, ttl_seconds=900.001)
    with pytest.raises(mcpwire.LocalProtocolError):
        server(request_state_ttl=901)
    short = server(request_state_ttl=10)
    token = issue(exchange(short), 1)
    assert isinstance(retry(short, token, NOW + 9.9), mcpwire.StdioExchange)
    assert invariants.line_invariants(retry(short, token, NOW + 10))[0]["error"]["code"] == -32602


# --- cursors and pages ----------------------------------------------------------------------------------


def test_cursor_size_limit() -> None:
    s = server(page_size=1)
    s.add_tool(mcpwire.types.Tool(name="zz", description="z", input_schema={"type": "object"}))
    cursor = message_of(http(s, body_of("tools/list")))["result"]["nextCursor"]
    assert "result" in message_of(http(s, body_of("tools/list", {"cursor": cursor})))
    padded = cursor + "A" * (2048 - len(cursor))  # 2048 bytes: read, and refused for its MAC
    long = cursor + "A" * (2049 - len(cursor))  # 2049: refused before any decoding
    for token in (padded, long):
        message = message_of(http(s, body_of("tools/list", {"cursor": token})))
        assert message["error"] == {"code": -32602, "message": "Invalid pagination cursor"}
    codec = CursorCodec(mcpwire.Keyring.single(b"k" * 32))
    with pytest.raises(InvalidCursor) as caught:
        codec.verify("x" * 2049, method="tools/list", catalog_version="v")
    assert caught.value.reason == "oversize"
    with pytest.raises(InvalidCursor) as caught:
        codec.verify("x" * 2048, method="tools/list", catalog_version="v")
    assert caught.value.reason == "malformed"


def test_page_size_default() -> None:
    s = server()
    for i in range(99):  # with "echo": 100 tools
        s.add_tool(mcpwire.types.Tool(name=f"t{i:03}", description="t", input_schema={"type": "object"}))
    result = message_of(http(s, body_of("tools/list")))["result"]
    assert len(result["tools"]) == 100 and "nextCursor" not in result
    s.add_tool(mcpwire.types.Tool(name="t999", description="t", input_schema={"type": "object"}))
    result = message_of(http(s, body_of("tools/list")))["result"]
    assert len(result["tools"]) == 100 and "nextCursor" in result
    second = message_of(http(s, body_of("tools/list", {"cursor": result["nextCursor"]})))["result"]
    assert len(second["tools"]) == 1 and "nextCursor" not in second


def test_completion_values_limit() -> None:
    s = server()
    params = {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": ""}}
    for count, ok in ((100, True), (101, False)):
        conn = mcpwire.StdioConnection(s)
        (ex,) = conn.receive_data(body_of("completion/complete", params) + b"\n", now=NOW)
        assert isinstance(ex, mcpwire.StdioExchange)
        result = mcpwire.types.CompleteResult(completion=mcpwire.types.Completion(values=["v"] * count))
        if ok:
            assert len(json.loads(ex.complete(result))["result"]["completion"]["values"]) == 100
        else:
            with pytest.raises(mcpwire.LocalProtocolError):
                ex.complete(result)


# --- client-side counts ----------------------------------------------------------------------------------


def test_client_remembers_256_input_required_rounds() -> None:
    client = make_client()
    events = []
    for _ in range(257):
        request = client.call_tool("echo", {})
        conn = mcpwire.ClientStdioConnection(client)
        conn.send(request)
        line = json.dumps({"jsonrpc": "2.0", "id": request.id, "result": {
            "resultType": "input_required", "requestState": "s"}}).encode() + b"\n"
        (event,) = conn.receive_data(line)
        assert isinstance(event, mcpwire.InputRequired)
        events.append(event)
    with pytest.raises(mcpwire.LocalProtocolError):
        client.retry(events[0].request, {})  # the oldest of 257 was forgotten
    assert client.retry(events[1].request, {}).params["requestState"] == "s"  # the 256 newest are kept
    assert client.retry(events[0], {}).params["requestState"] == "s"  # the event itself still works


def test_paginate_follows_at_most_max_pages() -> None:
    s = server(page_size=1)
    s.add_tool(mcpwire.types.Tool(name="zz", description="z", input_schema={"type": "object"}))
    client = make_client()
    for max_pages, truncated in ((2, False), (1, True)):
        pages = client.paginate("tools/list", max_pages=max_pages)
        while (request := pages.next_request()) is not None:
            head, body = http(s, request.body)
            parser = mcpwire.HttpResponseParser(client, request, status=head.status, content_type=b"application/json")
            (result,) = parser.feed(body.data) + parser.close()
            assert isinstance(result, mcpwire.ResultReceived)
            pages.add(result)
        assert pages.truncated is truncated and len(pages.items) == max_pages
