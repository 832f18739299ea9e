"""Integration tests of mcpwire_adapters.serve.trio_h11.server: real sockets on 127.0.0.1, an h11 client.

Each test starts the server in-process with port 0 inside a trio nursery and stops it by
cancellation (or by its stop event, for the graceful-shutdown test). Every test runs under
``trio.fail_after`` so nothing can hang.
"""

from __future__ import annotations

import functools
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import h11
import trio
from mcpwire_adapters import App, Context, HttpServerConfig, serve_http, serve_http_until

from _apps import add_echo_and_progress
from _wire_helpers import H11Client

from mcpwire import HttpPolicy
from mcpwire.framing import SSEReader
from _backends import trio_test

TIMEOUT = 10.0
VERSION = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": {}}
MAX_BODY = 1024


run = trio_test(TIMEOUT)  # every test under trio, with a hard time limit


class Probe:
    """What the test app's handlers report back to the test."""

    def __init__(self) -> None:
        self.slow_started = trio.Event()
        self.slow_cancelled = trio.Event()
        self.release = trio.Event()


def make_app(probe: Probe) -> App:
    app = App("test-server", "1.0", http=HttpPolicy(max_body_bytes=MAX_BODY))

    add_echo_and_progress(app, messages=True)

    @app.tool(description="Report progress once, then wait until cancelled or released")
    async def slow(ctx: Context, arguments: dict[str, Any]) -> str:
        await ctx.progress(1, total=2)
        probe.slow_started.set()
        try:
            await probe.release.wait()
        except trio.Cancelled:
            probe.slow_cancelled.set()
            raise
        return "released"

    return app


def rpc(method: str, params: dict[str, Any] | None = None, request_id: int = 1) -> bytes:
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**(params or {}), "_meta": META}}
    return json.dumps(body).encode()


def call_tool(
    name: str, arguments: dict[str, Any] | None = None, request_id: int = 1, token: str | None = None
) -> bytes:
    meta = {**META, "progressToken": token} if token is not None else META
    body = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments or {}, "_meta": meta},
    }
    return json.dumps(body).encode()


def mcp_headers(method: str, name: str | None = None, length: int | None = None) -> list[tuple[str, str]]:
    headers = [
        ("host", "127.0.0.1"),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", VERSION),
        ("mcp-method", method),
    ]
    if name is not None:
        headers.append(("mcp-name", name))
    if length is not None:
        headers.append(("content-length", str(length)))
    return headers


class Client(H11Client):
    """A minimal HTTP/1.1 client over one connection, built on h11."""

    async def events(self) -> AsyncIterator[Any]:
        """Decoded JSON messages of an SSE response body (its head skipped if unread), as they arrive."""
        reader = SSEReader()
        while True:
            event = await self.next_event()
            if isinstance(event, h11.EndOfMessage):
                return
            if isinstance(event, h11.Response):
                assert header(event, b"content-type") == b"text/event-stream"
                continue
            assert isinstance(event, h11.Data), event
            for sse in reader.feed(event.data):
                yield json.loads(sse.data)



def header(response: h11.Response, name: bytes) -> bytes | None:
    return next((v for k, v in response.headers if k == name), None)


async def post(
    address: tuple[str, int], body: bytes, headers: list[tuple[str, str]], **kw: str
) -> tuple[h11.Response, bytes]:
    client = await Client.connect(address)
    try:
        await client.request(body, headers, **kw)
        return await client.response()
    finally:
        await client.aclose()


def assert_jsonrpc_error(response: h11.Response, body: bytes, status: int, code: int) -> dict[str, Any]:
    assert response.status_code == status
    assert header(response, b"content-type") == b"application/json"
    message = json.loads(body)
    assert message["jsonrpc"] == "2.0"
    assert message["error"]["code"] == code
    return message  # type: ignore[no-any-return]


Test = Callable[[App, Probe, tuple[str, int]], Awaitable[None]]


def with_server(config: HttpServerConfig | None = None) -> Callable[[Test], Callable[[], None]]:
    """Run the test against a fresh server on an OS-assigned port, cancelled at the end."""

    def decorate(test: Test) -> Callable[[], None]:
        async def wrapper() -> None:
            probe = Probe()
            app = make_app(probe)
            async with trio.open_nursery() as nursery:
                start = functools.partial(serve_http, app, "127.0.0.1", 0, config=config or HttpServerConfig())
                address = await nursery.start(start)
                await test(app, probe, address)
                nursery.cancel_scope.cancel()

        # Not functools.wraps: pytest would follow __wrapped__ and ask for fixtures.
        wrapper.__name__ = wrapper.__qualname__ = test.__name__
        wrapper.__doc__ = test.__doc__
        return run(wrapper)

    return decorate


# --- answers ---------------------------------------------------------------------------------
@with_server()
async def test_tools_call_json(app: App, probe: Probe, address: tuple[str, int]) -> None:
    body = call_tool("echo", {"text": "hello"})
    response, data = await post(address, body, mcp_headers("tools/call", "echo"))
    assert response.status_code == 200
    assert header(response, b"content-type") == b"application/json"
    message = json.loads(data)
    assert message["id"] == 1
    assert message["result"]["content"] == [{"type": "text", "text": "hello"}]


@with_server()
async def test_progress_streams_as_sse(app: App, probe: Probe, address: tuple[str, int]) -> None:
    client = await Client.connect(address)
    await client.request(call_tool("progress", token="tok-1", request_id=7), mcp_headers("tools/call", "progress"))
    head = await client.next_event()
    assert isinstance(head, h11.Response) and head.status_code == 200
    assert header(head, b"content-type") == b"text/event-stream"
    assert header(head, b"content-length") is None
    assert header(head, b"transfer-encoding") == b"chunked"
    messages = [m async for m in client.events()]
    assert [m.get("method") for m in messages] == ["notifications/progress"] * 3 + [None]
    assert [m["params"]["progress"] for m in messages[:3]] == [1, 2, 3]
    assert all(m["params"]["progressToken"] == "tok-1" for m in messages[:3])
    assert messages[-1]["id"] == 7 and messages[-1]["result"]["content"][0]["text"] == "done"
    await client.aclose()


@with_server()
async def test_keep_alive_two_requests_on_one_connection(app: App, probe: Probe, address: tuple[str, int]) -> None:
    client = await Client.connect(address)
    for request_id, text in ((1, "one"), (2, "two")):
        await client.request(
            call_tool("echo", {"text": text}, request_id=request_id), mcp_headers("tools/call", "echo")
        )
        response, data = await client.response()
        assert response.status_code == 200
        message = json.loads(data)
        assert message["id"] == request_id and message["result"]["content"][0]["text"] == text
        client.conn.start_next_cycle()
    # And a plain engine answer (tools/list) on the same connection.
    await client.request(rpc("tools/list", request_id=3), mcp_headers("tools/list"))
    response, data = await client.response()
    assert json.loads(data)["id"] == 3
    await client.aclose()


@with_server()
async def test_expect_100_continue_is_answered_before_the_body(app: App, probe: Probe, address: tuple[str, int]) -> None:
    body = call_tool("echo", {"text": "after 100"})
    client = await Client.connect(address)
    headers = [*mcp_headers("tools/call", "echo", length=len(body)), ("expect", "100-continue")]
    await client.send(h11.Request(method="POST", target="/mcp", headers=headers))  # the head alone
    interim = await client.next_event()  # a client that waits for it sends nothing until then
    assert isinstance(interim, h11.InformationalResponse) and interim.status_code == 100
    await client.send(h11.Data(data=body), h11.EndOfMessage())
    response, data = await client.response()
    assert response.status_code == 200 and json.loads(data)["result"]["content"][0]["text"] == "after 100"
    await client.aclose()


# --- refusals --------------------------------------------------------------------------------
@with_server()
async def test_refusals_carry_jsonrpc_bodies(app: App, probe: Probe, address: tuple[str, int]) -> None:
    body = call_tool("echo")
    good = mcp_headers("tools/call", "echo")

    response, data = await post(address, b"", [("host", "x")], method="GET")
    assert_jsonrpc_error(response, data, 405, -32600)
    assert header(response, b"allow") == b"POST"

    wrong_type = [(k, "text/plain" if k == "content-type" else v) for k, v in good]
    assert_jsonrpc_error(*await post(address, body, wrong_type), 415, -32600)

    neither = [(k, "text/html" if k == "accept" else v) for k, v in good]
    assert_jsonrpc_error(*await post(address, body, neither), 406, -32600)

    assert_jsonrpc_error(*await post(address, body, good, target="/elsewhere"), 404, -32600)

    unknown = rpc("no/such/method")
    assert_jsonrpc_error(*await post(address, unknown, mcp_headers("no/such/method")), 404, -32601)


@with_server()
async def test_413_on_content_length_without_reading_the_body(app: App, probe: Probe, address: tuple[str, int]) -> None:
    client = await Client.connect(address)
    # Only the head is sent: the server must answer before any body byte arrives.
    await client.send(
        h11.Request(method="POST", target="/mcp", headers=mcp_headers("tools/call", "echo", length=10_000_000))
    )
    response, data = await client.response()
    message = assert_jsonrpc_error(response, data, 413, -32600)
    assert message["id"] is None
    assert f"{MAX_BODY} bytes" in message["error"]["message"]
    assert header(response, b"connection") == b"close"
    assert await client.stream.receive_some(100) == b""  # and the connection is closed
    await client.aclose()


@with_server()
async def test_413_on_chunked_body_as_soon_as_the_limit_passes(
    app: App, probe: Probe, address: tuple[str, int]
) -> None:
    client = await Client.connect(address)
    headers = [*mcp_headers("tools/call", "echo"), ("transfer-encoding", "chunked")]
    await client.send(h11.Request(method="POST", target="/mcp", headers=headers))
    for _ in range(3):
        await client.send(h11.Data(data=b" " * 400))  # 1200 bytes > 1024; the body never ends
    response, data = await client.response()
    assert_jsonrpc_error(response, data, 413, -32600)
    await client.aclose()


@with_server()
async def test_malformed_http_gets_a_jsonrpc_error(app: App, probe: Probe, address: tuple[str, int]) -> None:
    stream = await trio.open_tcp_stream(*address)
    await stream.send_all(b"THIS IS NOT HTTP\r\n\r\n")
    raw = b""
    while chunk := await stream.receive_some(65536):
        raw += chunk
    await stream.aclose()
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 ")
    assert b"content-type: application/json" in head.lower()
    message = json.loads(body)
    assert message["error"]["code"] == -32600 and message["id"] is None


# --- cancellation and listen streams -------------------------------------------------------------
@with_server()
async def test_disconnect_during_sse_cancels_the_handler(app: App, probe: Probe, address: tuple[str, int]) -> None:
    client = await Client.connect(address)
    await client.request(call_tool("slow", token="t", request_id=3), mcp_headers("tools/call", "slow"))
    head = await client.next_event()
    assert isinstance(head, h11.Response) and header(head, b"content-type") == b"text/event-stream"
    first = await client.next_event()
    assert isinstance(first, h11.Data) and b"notifications/progress" in first.data
    await probe.slow_started.wait()
    await client.aclose()
    await probe.slow_cancelled.wait()  # the handler observed trio.Cancelled


@with_server(HttpServerConfig(sse_keepalive_interval=0.05))
async def test_listen_stream_ack_then_list_changed(app: App, probe: Probe, address: tuple[str, int]) -> None:
    client = await Client.connect(address)
    body = rpc("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, request_id=9)
    await client.request(body, mcp_headers("subscriptions/listen"))
    head = await client.next_event()
    assert isinstance(head, h11.Response) and head.status_code == 200
    assert header(head, b"content-type") == b"text/event-stream"
    reader = SSEReader()
    seen: list[Any] = []
    raw = b""

    async def until(count: int) -> None:
        nonlocal raw
        while len(seen) < count:
            event = await client.next_event()
            assert isinstance(event, h11.Data)
            raw += event.data
            seen.extend(json.loads(e.data) for e in reader.feed(event.data))

    await until(1)
    assert seen[0]["method"] == "notifications/subscriptions/acknowledged"
    assert seen[0]["params"]["notifications"] == {"toolsListChanged": True}
    await trio.sleep(0.15)
    app.notify_list_changed("tools")
    await until(2)
    assert seen[1]["method"] == "notifications/tools/list_changed"
    assert seen[1]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 9
    assert b": keepalive\n\n" in raw  # idle stream kept alive with SSE comments
    await client.aclose()
    with trio.fail_after(2):
        while app.server.open_listeners:  # the driver forgets the stream when the client leaves
            await trio.sleep(0.01)


@with_server()
async def test_a_dropped_listen_stream_closes_the_connection_unfinished(
    app: App, probe: Probe, address: tuple[str, int]
) -> None:
    opened: list[Any] = []
    open_stream = app.open_stream

    def recording(stream: Any, buffer: int = 64) -> Any:
        opened.append(stream)
        return open_stream(stream, buffer)

    app.open_stream = recording  # type: ignore[method-assign]
    client = await Client.connect(address)
    body = rpc("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, request_id=8)
    await client.request(body, mcp_headers("subscriptions/listen"))
    head = await client.next_event()
    assert isinstance(head, h11.Response) and header(head, b"transfer-encoding") == b"chunked"
    assert b"notifications/subscriptions/acknowledged" in (await client.next_event()).data  # type: ignore[attr-defined]
    app.close_stream(opened[0])  # dropped without its listen result
    raw = b""
    with trio.fail_after(2):
        while chunk := await client.stream.receive_some(65536):
            raw += chunk
    # The connection closes with the chunked body unterminated: no disguised clean end.
    assert not raw.endswith(b"0\r\n\r\n") and app.server.open_listeners == 0
    await client.aclose()


# --- slow clients and shutdown --------------------------------------------------------------------
@with_server(HttpServerConfig(header_timeout=1.0))
async def test_slow_headers_do_not_block_others_and_are_dropped(
    app: App, probe: Probe, address: tuple[str, int]
) -> None:
    slow = await trio.open_tcp_stream(*address)
    await slow.send_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl")
    start = trio.current_time()
    response, data = await post(address, call_tool("echo", {"text": "fast"}), mcp_headers("tools/call", "echo"))
    assert response.status_code == 200 and json.loads(data)["result"]["content"][0]["text"] == "fast"
    assert trio.current_time() - start < 0.9  # well before the slow head times out
    with trio.fail_after(3):
        assert await slow.receive_some(100) == b""  # dropped after header_timeout
    await slow.aclose()


@with_server(HttpServerConfig(header_timeout=0.3, keepalive_idle_timeout=5.0))
async def test_a_kept_alive_connection_gets_header_timeout_once_its_next_head_starts(
    app: App, probe: Probe, address: tuple[str, int]
) -> None:
    client = await Client.connect(address)
    await client.request(call_tool("echo", {"text": "first"}), mcp_headers("tools/call", "echo"))
    assert (await client.response())[0].status_code == 200
    client.conn.start_next_cycle()
    await trio.sleep(0.5)  # idle, within keepalive_idle_timeout: the connection stays
    await client.stream.send_all(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n")  # a head that stalls
    start = trio.current_time()
    with trio.fail_after(3):
        assert await client.stream.receive_some(100) == b""  # dropped at header_timeout, not idle's 5 s
    assert trio.current_time() - start > 0.2  # not at once either: the head had its header_timeout
    await client.aclose()


@run
async def test_graceful_stop_ends_listen_streams_and_finishes_requests() -> None:
    probe = Probe()
    app = make_app(probe)
    stop = trio.Event()
    async with trio.open_nursery() as nursery:
        address = await nursery.start(functools.partial(serve_http_until, app, stop=stop, grace_period=5))
        listener = await Client.connect(address)
        await listener.request(
            rpc("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, request_id=4),
            mcp_headers("subscriptions/listen"),
        )
        busy = await Client.connect(address)
        await busy.request(call_tool("slow", token="s", request_id=5), mcp_headers("tools/call", "slow"))
        await probe.slow_started.wait()
        stop.set()
        listened = [m async for m in listener.events()]
        assert listened[0]["method"] == "notifications/subscriptions/acknowledged"
        assert listened[-1]["id"] == 4 and listened[-1]["result"]["resultType"] == "complete"
        probe.release.set()  # the in-flight request finishes within the grace period
        answered = [m async for m in busy.events()]
        assert answered[-1]["id"] == 5 and answered[-1]["result"]["content"][0]["text"] == "released"
        with trio.fail_after(2):
            with_new = None
            try:
                with_new = await trio.open_tcp_stream(*address)
                assert await with_new.receive_some(10) == b""
            except OSError:
                pass  # refused: the listener is closed
            finally:
                if with_new is not None:
                    await with_new.aclose()
        await listener.aclose()
        await busy.aclose()
    assert not probe.slow_cancelled.is_set()


@with_server(HttpServerConfig(max_connections=1))
async def test_connections_over_the_limit_get_503(app: App, probe: Probe, address: tuple[str, int]) -> None:
    holder = await Client.connect(address)
    await holder.request(call_tool("echo"), mcp_headers("tools/call", "echo"))
    assert (await holder.response())[0].status_code == 200  # served, and kept alive
    response, data = await post(address, call_tool("echo"), mcp_headers("tools/call", "echo"))
    assert_jsonrpc_error(response, data, 503, -32603)
    await holder.aclose()
    with trio.fail_after(2):
        while True:  # the slot frees once the server sees the close
            response, data = await post(address, call_tool("echo"), mcp_headers("tools/call", "echo"))
            if response.status_code == 200:
                break
            await trio.sleep(0.01)


@with_server(HttpServerConfig(max_header_bytes=1024, body_timeout=0.2, keepalive_idle_timeout=0.2))
async def test_head_size_body_timeout_and_idle_timeout(app: App, probe: Probe, address: tuple[str, int]) -> None:
    big = [*mcp_headers("tools/call", "echo"), ("x-padding", "a" * 2048)]
    assert_jsonrpc_error(*await post(address, call_tool("echo"), big), 431, -32600)

    client = await Client.connect(address)
    await client.send(h11.Request(method="POST", target="/mcp", headers=mcp_headers("tools/call", "echo", length=50)))
    await client.send(h11.Data(data=b"{"))  # and nothing more
    assert_jsonrpc_error(*await client.response(), 408, -32600)
    await client.aclose()

    client = await Client.connect(address)
    await client.request(call_tool("echo"), mcp_headers("tools/call", "echo"))
    assert (await client.response())[0].status_code == 200
    with trio.fail_after(2):
        assert await client.stream.receive_some(100) == b""  # idle kept-alive connection closed
    await client.aclose()


@with_server()
async def test_unexpected_error_is_500_and_the_server_survives(
    app: App, probe: Probe, address: tuple[str, int]
) -> None:
    engine = app.server.receive_http

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("bug")

    app.server.receive_http = broken  # type: ignore[method-assign]
    message = assert_jsonrpc_error(
        *await post(address, call_tool("echo"), mcp_headers("tools/call", "echo")), 500, -32603
    )
    assert "bug" not in json.dumps(message)
    app.server.receive_http = engine  # type: ignore[method-assign]
    response, _ = await post(address, call_tool("echo"), mcp_headers("tools/call", "echo"))
    assert response.status_code == 200
