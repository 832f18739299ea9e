"""Clients that accept one media type, through the drivers and the App: over real sockets on
127.0.0.1 with the trio/h11 server, and through the ASGI app in-process (asyncio and trio).

What widely used clients send: ``Accept: application/json`` alone, ``Accept:
text/event-stream`` alone (a hosted connector proxy), ``*/*`` (Postman, curl), or nothing.
Each gets what it can take (docs/dialects.md, "What a client that accepts one media type
gets"): JSON without notifications, an event stream for every 200 answer, or either; 406 only
where the answer can only stream. Every test runs under a deadline, and every server it starts
is stopped by cancellation.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import h11
import pytest
import trio
from _apps import add_echo_and_progress, asked_name
from _backends import trio_test
from _wire_helpers import H11Client, http_once, sse_events
from mcpwire_adapters import App, AsgiApp, Context, NeedInput, serve_http

TIMEOUT = 10.0
VERSION = "2026-07-28"
ERA = "2025-11-25"
META = {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": {}}
JSON = "application/json"
SSE = "text/event-stream"

run = trio_test(TIMEOUT)


def make_app() -> App:
    app = App("accept", "1.0", input_timeout=5)
    add_echo_and_progress(app)

    @app.tool(description="asks the client for a name (an initialize-era session asks on the request's stream)")
    def greet(ctx: Context, arguments: dict[str, Any]) -> Any:
        name = asked_name(ctx)
        return name if isinstance(name, NeedInput) else f"Hello, {name}"

    @app.tool(description="closes its SSE stream (2025-11-25), then answers")
    async def reconnect(ctx: Context, arguments: dict[str, Any]) -> str:
        await ctx.close_sse_stream(retry_ms=50)
        return "after the close"

    return app


def rpc(method: str, params: dict[str, Any] | None = None, request_id: int | str = 1,
        token: str | None = None) -> dict[str, Any]:
    meta = {**META, "progressToken": token} if token is not None else META
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**(params or {}), "_meta": meta}}


def call_tool(name: str, arguments: dict[str, Any] | None = None, request_id: int = 1,
              token: str | None = None) -> dict[str, Any]:
    return rpc("tools/call", {"name": name, "arguments": arguments or {}}, request_id, token)


def headers_for(body: dict[str, Any], accept: str | None) -> dict[str, str]:
    """The headers a 2026-07-28 client sends for ``body``, with ``accept`` (None: no Accept)."""
    out = {"content-type": JSON, "mcp-protocol-version": VERSION, "mcp-method": body["method"]}
    name = body["params"].get("name")
    if name is not None:
        out["mcp-name"] = name
    if accept is not None:
        out["accept"] = accept
    return out


def messages(content_type: str, body: bytes) -> list[Any]:
    if content_type == SSE:
        return [json.loads(e["data"]) for e in sse_events(body) if e.get("data")]
    assert content_type == JSON
    return [json.loads(body)]


Test = Callable[[tuple[str, int]], Awaitable[None]]


def with_server(test: Test) -> Callable[[], None]:
    """Run ``test`` against a fresh trio/h11 server on an OS-assigned port, cancelled at the end."""

    async def wrapper() -> None:
        async with trio.open_nursery() as nursery:
            address = await nursery.start(serve_http, make_app(), "127.0.0.1", 0)
            await test(address)
            nursery.cancel_scope.cancel()

    wrapper.__name__ = wrapper.__qualname__ = test.__name__
    return run(wrapper)


async def post(address: tuple[str, int], body: dict[str, Any], accept: str | None,
               extra: dict[str, str] | None = None) -> tuple[int, dict[str, str], list[Any]]:
    status, headers, raw = await http_once(address, "POST", {**headers_for(body, accept), **(extra or {})}, body)
    return status, headers, messages(headers["content-type"], raw)


# -- trio/h11, real sockets ---------------------------------------------------------------------------
@with_server
async def test_a_json_only_client_gets_json_and_no_progress(address: tuple[str, int]) -> None:
    status, headers, answer = await post(address, call_tool("progress", token="p"), JSON)
    assert status == 200 and headers["content-type"] == JSON
    assert answer == [{"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "done"}],
                                                             "resultType": "complete", "_meta": answer[0]["result"]["_meta"]}}]
    for accept in ("application/*", "APPLICATION/JSON; charset=utf-8", "*/*, text/event-stream;q=0"):
        status, headers, answer = await post(address, call_tool("progress", token="p"), accept)
        assert (status, headers["content-type"], len(answer)) == (200, JSON, 1), accept


@with_server
async def test_a_stream_only_client_gets_every_200_answer_as_an_event_stream(address: tuple[str, int]) -> None:
    client = H11Client(await trio.open_tcp_stream(*address))
    try:
        for body in (call_tool("echo", {"text": "hi"}), rpc("tools/list", request_id=2), rpc("server/discover", request_id=3)):
            data = json.dumps(body).encode()
            headers = [*headers_for(body, SSE).items(), ("host", "127.0.0.1")]
            await client.request(data, headers)
            head, raw = await client.response()
            own = dict(head.headers)
            assert head.status_code == 200 and own[b"content-type"] == SSE.encode()
            assert own[b"content-length"] == str(len(raw)).encode()  # a complete answer: sized, kept alive
            [answer] = messages(SSE, raw)
            assert answer["id"] == body["id"] and "result" in answer
            client.conn.start_next_cycle()  # the connection stays open for the next request
        # Progress streams as before, on the same connection.
        body = call_tool("progress", request_id=4, token="p")
        await client.request(json.dumps(body).encode(), [*headers_for(body, SSE).items(), ("host", "127.0.0.1")])
        head, raw = await client.response()
        assert dict(head.headers)[b"transfer-encoding"] == b"chunked"
        streamed = messages(SSE, raw)
        assert [m.get("method") for m in streamed] == ["notifications/progress"] * 3 + [None]
        client.conn.start_next_cycle()
        # An error status stays JSON: the status says how the request ended.
        body = call_tool("echo", request_id=5)
        await client.request(json.dumps(body).encode(),
                             [(k, v) for k, v in headers_for(body, SSE).items() if k != "mcp-name"] + [("host", "127.0.0.1")])
        head, raw = await client.response()
        assert head.status_code == 400 and dict(head.headers)[b"content-type"] == JSON.encode()
        assert json.loads(raw)["error"]["code"] == -32020
    finally:
        await client.aclose()


@with_server
async def test_wildcards_and_a_missing_accept_are_served(address: tuple[str, int]) -> None:
    for accept in ("*/*", None, "application/json, text/plain, */*", "text/event-stream, application/json"):
        status, headers, answer = await post(address, call_tool("echo", {"text": "x"}), accept)
        assert (status, headers["content-type"]) == (200, JSON), accept
        assert answer[0]["result"]["content"] == [{"type": "text", "text": "x"}]


@with_server
async def test_a_client_of_neither_type_is_406(address: tuple[str, int]) -> None:
    for accept in ("text/html", "application/json;q=0, text/event-stream;q=0"):
        status, headers, answer = await post(address, call_tool("echo"), accept)
        assert status == 406 and headers["content-type"] == JSON, accept
        assert answer[0]["error"]["code"] == -32600 and answer[0]["id"] is None


@with_server
async def test_a_listen_stream_needs_a_client_that_takes_one(address: tuple[str, int]) -> None:
    listen = rpc("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, request_id="l")
    status, _, answer = await post(address, listen, JSON)
    assert status == 406 and answer[0]["id"] == "l" and "text/event-stream" in answer[0]["error"]["message"]
    client = H11Client(await trio.open_tcp_stream(*address))
    try:
        await client.request(json.dumps(listen).encode(), [*headers_for(listen, SSE).items(), ("host", "127.0.0.1")])
        head = await client.next_event()
        assert isinstance(head, h11.Response) and head.status_code == 200
        data = await client.next_event()
        assert isinstance(data, h11.Data)
        [ack] = messages(SSE, data.data)
        assert ack["method"] == "notifications/subscriptions/acknowledged"
    finally:
        await client.aclose(reset=True)


async def open_session(address: tuple[str, int], accept: str) -> dict[str, str]:
    params = {"protocolVersion": ERA, "capabilities": {"elicitation": {}}, "clientInfo": {"name": "t", "version": "1"}}
    status, headers, raw = await http_once(address, "POST", {"content-type": JSON, "accept": accept},
                                           {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
    [answer] = messages(headers["content-type"], raw)
    assert status == 200 and answer["result"]["protocolVersion"] == ERA
    assert headers["content-type"] == (SSE if accept == SSE else JSON)
    return {"mcp-session-id": headers["mcp-session-id"], "mcp-protocol-version": ERA}


@with_server
async def test_a_json_only_session_client_is_refused_only_what_must_stream(address: tuple[str, int]) -> None:
    session = await open_session(address, JSON)
    post_headers = {"content-type": JSON, "accept": JSON, **session}
    ask = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "greet", "arguments": {}}}
    status, headers, raw = await http_once(address, "POST", post_headers, ask)
    [refused] = messages(headers["content-type"], raw)
    assert status == 406 and refused["id"] == 2 and refused["error"]["code"] == -32600
    close = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "reconnect", "arguments": {}}}
    status, headers, raw = await http_once(address, "POST", post_headers, close)
    assert (status, headers["content-type"]) == (200, JSON)  # no stream to close: the answer comes whole
    assert messages(JSON, raw) == [{"jsonrpc": "2.0", "id": 3, "result": {
        "content": [{"type": "text", "text": "after the close"}]}}]
    status, headers, raw = await http_once(address, "GET", {"accept": JSON, **session})
    assert status == 406


@with_server
async def test_a_stream_only_session_client_gets_streams(address: tuple[str, int]) -> None:
    session = await open_session(address, SSE)
    listed = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    status, headers, raw = await http_once(address, "POST", {"content-type": JSON, "accept": SSE, **session}, listed)
    assert (status, headers["content-type"]) == (200, SSE)
    assert {t["name"] for t in messages(SSE, raw)[0]["result"]["tools"]} == {"echo", "progress", "greet", "reconnect"}


def make_task_app() -> App:
    app = App("accept-tasks", "1.0", tasks=True, input_timeout=5)

    @app.tool(description="a task that asks its client once", task_support="optional")
    async def interview(ctx: Context, arguments: dict[str, Any]) -> str | NeedInput:
        await ctx.start_task()
        if "name" not in ctx.input_responses:
            return NeedInput(requests={"name": {"method": "elicitation/create", "params": {
                "message": "Name?", "requestedSchema": {"type": "object", "properties": {}}}}})
        return "thanks"

    return app


async def until_request(address: tuple[str, int], headers: dict[str, str], body: dict[str, Any]) -> Any:
    """POST ``body`` and read its event stream up to the first request from the server; then hang up."""
    stream = await trio.open_tcp_stream(*address)
    data = json.dumps(body).encode()
    head = f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: {len(data)}\r\n"
    await stream.send_all((head + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n").encode() + data)
    raw = b""
    try:
        while True:
            chunk = await stream.receive_some(65536)
            assert chunk, "the stream ended before a request came"
            raw += chunk
            for line in raw.split(b"\n"):
                if line.startswith(b"data:") and line[5:].strip():
                    message = json.loads(line[5:])
                    if "method" in message and "id" in message:
                        return message
    finally:
        await stream.aclose()


def test_a_tasks_requests_wait_for_a_tasks_result_that_can_carry_them() -> None:
    """2025-11-25 Tasks, Input Required Status: a task's requests ride a tasks/result stream. A
    tasks/result from a client that takes only JSON is 406, and the requests stay the task's:
    the next tasks/result that takes a stream carries them."""

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            address = await nursery.start(serve_http, make_task_app(), "127.0.0.1", 0)
            session = await open_session(address, JSON)
            post_headers = {"content-type": JSON, "accept": JSON, **session}
            status, _, _ = await http_once(address, "POST", post_headers,
                                           {"jsonrpc": "2.0", "method": "notifications/initialized"})
            assert status == 202
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                    "params": {"name": "interview", "arguments": {}, "task": {}}}
            status, headers, raw = await http_once(address, "POST", post_headers, call)
            task_id = messages(headers["content-type"], raw)[0]["result"]["task"]["taskId"]
            get = {"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"taskId": task_id}}
            while messages(JSON, (await http_once(address, "POST", post_headers, get))[2])[0]["result"]["status"] \
                    != "input_required":
                await trio.sleep(0.02)
            result = {"jsonrpc": "2.0", "id": 4, "method": "tasks/result", "params": {"taskId": task_id}}
            status, headers, raw = await http_once(address, "POST", post_headers, result)
            [refused] = messages(headers["content-type"], raw)
            assert status == 406 and refused["id"] == 4 and refused["error"]["code"] == -32600
            asked = await until_request(address, {**post_headers, "accept": SSE}, {**result, "id": 5})
            assert asked["method"] == "elicitation/create"
            answer = {"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {}}}
            assert (await http_once(address, "POST", post_headers, answer))[0] == 202
            status, headers, raw = await http_once(address, "POST", post_headers, {**result, "id": 6})
            assert status == 200 and messages(headers["content-type"], raw)[0]["result"]["content"] == [
                {"type": "text", "text": "thanks"}]
            nursery.cancel_scope.cancel()

    trio.run(_bounded(main))


def _bounded(main: Callable[[], Awaitable[None]]) -> Callable[[], Awaitable[None]]:
    async def bounded() -> None:
        with trio.fail_after(TIMEOUT):
            await main()
    return bounded


# -- the ASGI app, in-process ---------------------------------------------------------------------------
@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def asgi_post(asgi: AsgiApp, body: dict[str, Any], accept: str | None) -> tuple[int, dict[bytes, bytes], list[Any]]:
    """One whole request through ``asgi``: its status, headers and messages."""
    scope = {
        "type": "http", "asgi": {"version": "3.0", "spec_version": "2.4"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": "/mcp", "raw_path": b"/mcp", "root_path": "", "query_string": b"",
        "headers": [(k.encode(), v.encode()) for k, v in [*headers_for(body, accept).items(), ("host", "127.0.0.1")]],
        "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000),
    }
    inbox = [{"type": "http.request", "body": json.dumps(body).encode(), "more_body": False}]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if inbox:
            return inbox.pop()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def send(message: Any) -> None:
        sent.append(dict(message))

    with anyio.fail_after(TIMEOUT):
        await asgi(scope, receive, send)
    start = sent[0]
    assert start["type"] == "http.response.start"
    headers = dict(start["headers"])
    raw = b"".join(m["body"] for m in sent if m["type"] == "http.response.body")
    assert not sent[-1].get("more_body", False)
    return start["status"], headers, messages(headers[b"content-type"].decode(), raw)


@pytest.mark.anyio
async def test_asgi_serves_what_each_client_takes() -> None:
    asgi = AsgiApp(make_app())
    status, headers, answer = await asgi_post(asgi, call_tool("progress", token="p"), JSON)
    assert (status, headers[b"content-type"], len(answer)) == (200, JSON.encode(), 1)
    status, headers, answer = await asgi_post(asgi, call_tool("echo", {"text": "hi"}), SSE)
    assert (status, headers[b"content-type"]) == (200, SSE.encode()) and b"content-length" in headers
    assert answer[0]["result"]["content"] == [{"type": "text", "text": "hi"}]
    status, headers, answer = await asgi_post(asgi, call_tool("progress", token="p"), SSE)
    assert [m.get("method") for m in answer] == ["notifications/progress"] * 3 + [None]
    status, headers, answer = await asgi_post(asgi, call_tool("echo"), None)
    assert (status, headers[b"content-type"]) == (200, JSON.encode())
    status, _, answer = await asgi_post(asgi, call_tool("echo"), "text/html")
    assert status == 406 and answer[0]["id"] is None
    listen = rpc("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, request_id="l")
    status, _, answer = await asgi_post(asgi, listen, JSON)
    assert status == 406 and answer[0]["id"] == "l"
