"""Initialize-era sessions through the trio/h11 driver and the App, over real sockets: the
handshake, a tool that asks for input answered through server-to-client requests, the GET
stream, a stream closed mid-call and resumed with Last-Event-ID, and DELETE."""

from __future__ import annotations

import json
from typing import Any

import trio
from _wire_helpers import http_once, sse_events as events

from mcpwire_adapters import App, Context, NeedInput
from mcpwire_adapters.serve.trio_h11.server import serve_http

VERSION = "2025-11-25"


def make_app() -> App:
    app = App("sessions", "1.0", input_timeout=5, resource_subscribe=True)

    @app.tool(description="asks the client for a name")
    def greet(ctx: Context, arguments: dict[str, Any]) -> Any:
        answer = ctx.input_responses.get("name")
        if answer is None:
            schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
            request = {"method": "elicitation/create", "params": {"message": "Name?", "requestedSchema": schema}}
            return NeedInput(requests={"name": request}, state={"round": 1})
        return f"Hello, {answer['content']['name']} (state {ctx.state['round']})"

    @app.tool(description="closes its SSE stream, then answers")
    async def reconnect(ctx: Context, arguments: dict[str, Any]) -> str:
        await ctx.close_sse_stream(retry_ms=50)
        await trio.sleep(0.2)
        return "after reconnection"

    return app


POST = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


async def open_session(address: tuple[str, int]) -> dict[str, str]:
    params = {"protocolVersion": VERSION, "capabilities": {"elicitation": {}}, "clientInfo": {"name": "t", "version": "1"}}
    status, headers, body = await http_once(address, "POST", POST, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
    assert status == 200 and json.loads(body)["result"]["protocolVersion"] == VERSION
    session = {"mcp-session-id": headers["mcp-session-id"], "mcp-protocol-version": VERSION}
    status, _, _ = await http_once(address, "POST", {**POST, **session}, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert status == 202
    return session


def test_a_tool_written_once_asks_through_server_to_client_requests() -> None:
    async def main() -> None:
        async with trio.open_nursery() as nursery:
            address = await nursery.start(serve_http, make_app())
            session = await open_session(address)
            result: dict[str, Any] = {}

            async def call() -> None:
                call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "greet", "arguments": {}}}
                result["call"] = await http_once(address, "POST", {**POST, **session}, call)

            nursery.start_soon(call)
            await trio.sleep(0.3)
            answer = {"jsonrpc": "2.0", "id": 1, "result": {"action": "accept", "content": {"name": "Ada"}}}
            status, _, _ = await http_once(address, "POST", {**POST, **session}, answer)
            assert status == 202
            with trio.fail_after(5):
                while "call" not in result:
                    await trio.sleep(0.05)
            status, headers, body = result["call"]
            messages = [json.loads(e["data"]) for e in events(body) if e.get("data")]
            assert status == 200 and headers["content-type"] == "text/event-stream"
            assert messages[0]["method"] == "elicitation/create" and messages[0]["id"] == 1
            assert messages[-1] == {"jsonrpc": "2.0", "id": 2, "result": {
                "content": [{"type": "text", "text": "Hello, Ada (state 1)"}]}}
            status, _, _ = await http_once(address, "DELETE", session)
            assert status == 200
            status, _, body = await http_once(address, "POST", {**POST, **session}, {"jsonrpc": "2.0", "id": 3, "method": "ping"})
            assert status == 404
            nursery.cancel_scope.cancel()

    trio.run(main)


def test_a_stream_closed_mid_call_is_resumed_with_last_event_id() -> None:
    async def main() -> None:
        async with trio.open_nursery() as nursery:
            address = await nursery.start(serve_http, make_app())
            session = await open_session(address)
            call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "reconnect", "arguments": {}}}
            status, headers, body = await http_once(address, "POST", {**POST, **session}, call)
            first = events(body)
            assert status == 200 and headers["content-type"] == "text/event-stream"
            assert first[0]["id"].endswith("-0") and first[0]["data"] == ""  # the priming event
            assert first[1] == {"retry": "50"}
            get = {"accept": "text/event-stream", **session, "last-event-id": first[0]["id"]}
            status, headers, body = await http_once(address, "GET", get)
            resumed = [json.loads(e["data"]) for e in events(body) if e.get("data")]
            assert status == 200 and resumed == [{"jsonrpc": "2.0", "id": 5, "result": {
                "content": [{"type": "text", "text": "after reconnection"}]}}]
            nursery.cancel_scope.cancel()

    trio.run(main)


def test_a_posted_cancellation_stops_that_request_and_it_sends_no_response() -> None:
    async def main() -> None:
        app = make_app()
        cancelled = trio.Event()
        started = trio.Event()

        @app.tool(description="waits until cancelled")
        async def forever(ctx: Context, arguments: dict[str, Any]) -> str:
            started.set()
            try:
                await trio.sleep(60)
            except trio.Cancelled:
                cancelled.set()
                raise
            return "never"

        async with trio.open_nursery() as nursery:
            address = await nursery.start(serve_http, app)
            session = await open_session(address)
            result: dict[str, Any] = {}

            async def call() -> None:
                call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "forever", "arguments": {}}}
                result["call"] = await http_once(address, "POST", {**POST, **session}, call)

            nursery.start_soon(call)
            with trio.fail_after(5):
                await started.wait()
            unknown = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}}
            status, _, body = await http_once(address, "POST", {**POST, **session}, unknown)
            assert status == 202 and body == b"" and not cancelled.is_set()
            note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7, "reason": "no"}}
            status, _, body = await http_once(address, "POST", {**POST, **session}, note)
            assert status == 202 and body == b""
            with trio.fail_after(5):
                await cancelled.wait()
                while "call" not in result:
                    await trio.sleep(0.02)
            status, _, body = result["call"]
            messages = [json.loads(e["data"]) for e in events(body) if e.get("data")]
            # No response for it: the POST ends without one (here: before its head was sent).
            assert status in (0, 200) and not any(m.get("id") == 7 for m in messages), (status, messages)
            # The session goes on: another request is answered.
            status, _, body = await http_once(address, "POST", {**POST, **session}, {"jsonrpc": "2.0", "id": 8, "method": "ping"})
            assert status == 200 and json.loads(body) == {"jsonrpc": "2.0", "id": 8, "result": {}}
            nursery.cancel_scope.cancel()

    trio.run(main)


def test_a_client_that_never_answers_gets_32603_after_the_input_timeout() -> None:
    async def main() -> None:
        app = make_app()
        app.input_timeout = 0.3
        async with trio.open_nursery() as nursery:
            address = await nursery.start(serve_http, app)
            session = await open_session(address)
            call = {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "greet", "arguments": {}}}
            with trio.fail_after(10):
                status, _, body = await http_once(address, "POST", {**POST, **session}, call)
            messages = [json.loads(e["data"]) for e in events(body) if e.get("data")]
            assert status == 200 and messages[0]["method"] == "elicitation/create"
            assert messages[-1]["id"] == 4 and messages[-1]["error"]["code"] == -32603
            # The late answer finds nothing waiting: accepted (202) and dropped.
            late = {"jsonrpc": "2.0", "id": messages[0]["id"], "result": {"action": "accept", "content": {"name": "X"}}}
            status, _, body = await http_once(address, "POST", {**POST, **session}, late)
            assert status == 202 and body == b""
            nursery.cancel_scope.cancel()

    trio.run(main)


def test_a_2025_03_26_batch_is_answered_on_one_event_stream() -> None:
    async def main() -> None:
        app = make_app()
        async with trio.open_nursery() as nursery:
            address = await nursery.start(serve_http, app)
            params = {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
            status, headers, body = await http_once(address, "POST", POST, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                                                        "params": params})
            assert status == 200 and json.loads(body)["result"]["protocolVersion"] == "2025-03-26"
            session = {"mcp-session-id": headers["mcp-session-id"], "mcp-protocol-version": "2025-03-26"}
            messages = [
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "ping"},
                {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "reconnect_free", "arguments": {}}},
                {"jsonrpc": "2.0", "id": 4, "method": "tools/list"},
            ]
            status, headers, body = await http_once(address, "POST", {**POST, **session}, messages)
            answers = {m["id"]: m for m in (json.loads(e["data"]) for e in events(body) if e.get("data"))}
            assert status == 200 and headers["content-type"] == "text/event-stream"
            assert sorted(answers) == [2, 3, 4] and answers[2]["result"] == {}
            assert answers[3]["error"]["code"] == -32602  # an unknown tool: its error is one of the answers
            assert "greet" in {t["name"] for t in answers[4]["result"]["tools"]}
            notes = [{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}]
            status, _, body = await http_once(address, "POST", {**POST, **session}, notes)
            assert status == 202 and body == b""
            nursery.cancel_scope.cancel()

    trio.run(main)
