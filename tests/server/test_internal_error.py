"""-32603 carries no cause (wire reference section 12, docs/security.md): over HTTP and stdio
the wire says exactly ``Internal error`` with no ``data``, whoever raised what; the host still
gets the exception (``Exchange.internal_error``; the App layer logs it and calls ``on_error``).
In the App layer an exception in a tool handler is a tool execution error instead (``isError``,
the text ``Tool 'name' failed``): no cause on the wire either, and logged and reported the same.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
import trio
import trio.testing
from schema_check import (
    NOW,
    assemble,
    check_error,
    error_of,
    exchange,
    http_request,
    lines_of,
    listen,
    make_server,
    meta,
    post,
    request,
)

import mcpwire
from mcpwire.types import CallToolResult, TextContent, Tool
from mcpwire import LocalProtocolError, ProtocolError, RemoteProtocolError, StdioConnection, StdioExchange
from mcpwire_adapters import App, Context, serve_stdio

SECRET = "hunter2 at /srv/db.conf line 7"
SERVER = make_server(max_listen_streams=1, validator=mcpwire.jsonschema_validator(), list_changed=True)
SERVER.add_tool(Tool(name="echo", description="Echo", input_schema={"type": "object"}))
SERVER.add_tool(Tool(name="strict", description="Strict", input_schema={"type": "object"},
                     output_schema={"type": "object", "properties": {"temp": {"type": "number"}},
                                    "required": ["temp"]}))


def tool_call(name: str = "echo", rid: Any = "c", **meta_extra: Any) -> dict[str, Any]:
    return request("tools/call", {"name": name, "arguments": {}, "_meta": meta(**meta_extra)}, id=rid)


def stdio_exchange(body: dict[str, Any], conn: StdioConnection | None = None) -> StdioExchange:
    (out,) = (conn or StdioConnection(SERVER)).receive_data(json.dumps(body).encode() + b"\n", now=NOW)
    assert isinstance(out, StdioExchange), out
    return out


def assert_no_cause(message: Any, request_id: Any) -> None:
    error = check_error(message, -32603, request_id, message_text="Internal error")
    assert "data" not in error, message
    assert SECRET not in json.dumps(message)


def assert_tool_failed(message: Any, request_id: Any, name: str) -> None:
    """A tool handler's exception: a result with ``isError`` and a generic text, no cause."""
    assert message["id"] == request_id and "error" not in message, message
    result = message["result"]
    assert result["isError"] is True and result["content"] == [{"type": "text", "text": f"Tool {name!r} failed"}]
    assert SECRET not in json.dumps(message)


class Opaque:
    """Not a result, and not JSON either."""

    def __repr__(self) -> str:
        return SECRET


# --- the core: Exchange.fail and complete ---------------------------------------------------------------

CAUSES = [
    RuntimeError(SECRET),
    ProtocolError(SECRET, code=-32603, data={"trace": SECRET}),
    ProtocolError(SECRET),  # the default code is -32603
    LocalProtocolError(SECRET, data=[SECRET]),
    RemoteProtocolError(SECRET, code=-32603, data=SECRET),
]


@pytest.mark.parametrize("cause", CAUSES, ids=lambda e: type(e).__name__ + repr(getattr(e, "data", "")))
def test_fail_sends_internal_error_without_cause_over_http(cause: BaseException) -> None:
    ex = exchange(SERVER, tool_call())
    reply = assemble(ex.fail(cause), "tools/call")
    assert reply.status == 500
    assert_no_cause(reply.message, "c")
    assert ex.internal_error is cause


@pytest.mark.parametrize("cause", CAUSES, ids=lambda e: type(e).__name__ + repr(getattr(e, "data", "")))
def test_fail_sends_internal_error_without_cause_over_stdio(cause: BaseException) -> None:
    ex = stdio_exchange(tool_call(rid=9))
    (message,) = lines_of(ex.fail(cause))
    assert_no_cause(message, 9)
    assert ex.internal_error is cause


def test_fail_after_sse_started_still_hides_the_cause() -> None:
    ex = exchange(SERVER, tool_call(token="p", level="debug"))
    out = ex.progress(1) + ex.log("info", "working") + ex.fail(ProtocolError(SECRET, data={"x": SECRET}))
    reply = assemble(out, "tools/call")
    assert reply.sse and reply.status == 200
    assert_no_cause(reply.message, "c")


@pytest.mark.parametrize(
    "error",
    [RemoteProtocolError("Not found", code=-32602, data={"uri": "x:y"}),
     ProtocolError("Rate limited", code=-32050, data={"retryAfter": 3}),
     mcpwire.resource_not_found("test://nope")],
)
def test_other_codes_keep_their_message_and_data(error: ProtocolError) -> None:
    ex = exchange(SERVER, tool_call())
    reply = assemble(ex.fail(error), "tools/call")
    assert reply.error["message"] == error.message and reply.error["data"] == error.data
    assert ex.internal_error is None


def test_output_schema_failure_hides_the_output_and_keeps_it_for_the_host() -> None:
    ex = exchange(SERVER, tool_call("strict"))
    reply = assemble(ex.complete(CallToolResult(content=[], structured_content={"temp": SECRET})), "tools/call")
    assert reply.status == 500
    assert_no_cause(reply.message, "c")
    assert isinstance(ex.internal_error, RemoteProtocolError) and "outputSchema" in ex.internal_error.message
    sx = stdio_exchange(tool_call("strict", rid=3))
    (message,) = lines_of(sx.complete(CallToolResult(content=[TextContent(text=SECRET)])))
    assert_no_cause(message, 3)
    assert sx.internal_error is not None


def test_engine_limits_answer_internal_error_without_detail() -> None:
    # The stdio in-flight bound and the listen-stream bound are -32603 too: same wire text.
    conn = StdioConnection(SERVER, max_in_flight=1)
    first = stdio_exchange(tool_call(rid=1), conn)
    (line,) = conn.receive_data(json.dumps(tool_call(rid=2)).encode() + b"\n", now=NOW)
    assert_no_cause(lines_of(line)[0], 2)
    first.cancel()
    body = request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id="L1")
    stream = listen(SERVER, body)
    reply = error_of(assemble(list(post(SERVER, {**body, "id": "L2"}))), -32603, "L2", status=503,
                     message_text="Internal error")
    assert "data" not in reply
    stream.cancel()


def test_error_reply_and_encoders_never_carry_an_internal_cause() -> None:
    head, body = mcpwire.error_reply(ProtocolError(SECRET, code=-32603, data=SECRET, http_status=503), 4)
    assert head.status == 503
    assert_no_cause(json.loads(body.data), 4)


# --- the App layer: handler exceptions, logged and handed to on_error ------------------------------------


def build_app(errors: list[tuple[Any, BaseException]], on_error_raises: bool = False) -> App:
    def on_error(exchange: mcpwire.Exchange[Any], exc: BaseException) -> None:
        errors.append((exchange.request_id, exc))
        if on_error_raises:
            raise ValueError("on_error itself failed")

    app = App("t", "1.0", on_error=on_error)

    @app.tool(description="Raises a plain exception")
    async def boom(ctx: Context, arguments: dict[str, Any]) -> str:
        raise RuntimeError(SECRET)

    @app.tool(description="Raises an internal ProtocolError with host detail")
    def internal(ctx: Context, arguments: dict[str, Any]) -> str:
        raise ProtocolError(SECRET, code=-32603, data={"sql": SECRET})

    @app.tool(description="Answers with something that is not a result")
    async def wrong(ctx: Context, arguments: dict[str, Any]) -> Any:
        return Opaque()  # (a dict is a result now: structuredContent)

    @app.tool(description="Raises an application error")
    async def limited(ctx: Context, arguments: dict[str, Any]) -> str:
        raise ProtocolError("Rate limited", code=-32050, data={"retryAfter": 3})

    return app


def app_http(app: App, name: str) -> Any:
    answer = app.server.receive_http(http_request(tool_call(name)), now=NOW)
    assert isinstance(answer, mcpwire.HttpExchange), answer
    events: list[Any] = []

    async def send(out: Any) -> None:
        events.extend(out)

    async def run() -> None:
        await app.dispatch(answer, send)

    trio.run(run)
    return assemble(events, "tools/call")


@pytest.mark.parametrize("name", ["boom", "internal", "wrong"])
def test_app_handler_failure_is_internal_error_logged_and_reported(
    name: str, caplog: pytest.LogCaptureFixture
) -> None:
    errors: list[tuple[Any, BaseException]] = []
    with caplog.at_level(logging.ERROR, logger="mcpwire_adapters.app"):
        reply = app_http(build_app(errors), name)
    if name == "boom":  # a tool handler's exception: a tool execution error, no cause
        assert reply.status == 200
        assert_tool_failed(reply.message, "c", "boom")
    else:
        assert reply.status == 500
        assert_no_cause(reply.message, "c")
    assert len(errors) == 1 and errors[0][0] == "c"
    exc = errors[0][1]
    assert (SECRET in str(exc)) if name != "wrong" else isinstance(exc, LocalProtocolError)
    records = [r for r in caplog.records if r.name == "mcpwire_adapters.app"]
    assert len(records) == 1 and records[0].exc_info is not None and records[0].exc_info[1] is exc


def test_app_application_errors_are_answers_not_failures(caplog: pytest.LogCaptureFixture) -> None:
    errors: list[tuple[Any, BaseException]] = []
    with caplog.at_level(logging.ERROR, logger="mcpwire_adapters.app"):
        reply = app_http(build_app(errors), "limited")
    assert reply.status == 200 and reply.error == {"code": -32050, "message": "Rate limited", "data": {"retryAfter": 3}}
    assert errors == [] and not [r for r in caplog.records if r.name == "mcpwire_adapters.app"]


def test_app_on_error_that_raises_does_not_stop_the_answer(caplog: pytest.LogCaptureFixture) -> None:
    errors: list[tuple[Any, BaseException]] = []
    with caplog.at_level(logging.ERROR, logger="mcpwire_adapters.app"):
        reply = app_http(build_app(errors, on_error_raises=True), "boom")
    assert_tool_failed(reply.message, "c", "boom")
    assert len(errors) == 1
    assert any("on_error" in r.getMessage() for r in caplog.records if r.name == "mcpwire_adapters.app")


def test_app_without_on_error_still_logs(caplog: pytest.LogCaptureFixture) -> None:
    app = App("t", "1.0")

    @app.tool(description="Raises")
    async def boom(ctx: Context, arguments: dict[str, Any]) -> str:
        raise KeyError(SECRET)

    with caplog.at_level(logging.ERROR, logger="mcpwire_adapters.app"):
        reply = app_http(app, "boom")
    assert_tool_failed(reply.message, "c", "boom")
    assert [r.exc_info[1] for r in caplog.records if r.name == "mcpwire_adapters.app" and r.exc_info]


def test_stdio_driver_answers_internal_error_and_reports_it() -> None:
    errors: list[tuple[Any, BaseException]] = []
    app = build_app(errors)
    lines = b"".join(json.dumps(tool_call(name, rid=name)).encode() + b"\n" for name in ("boom", "internal", "wrong", "limited"))

    async def run() -> bytes:
        stdin_send, stdin = trio.testing.memory_stream_one_way_pair()
        stdout, stdout_receive = trio.testing.memory_stream_one_way_pair()
        written = bytearray()

        async def read() -> None:
            while chunk := await stdout_receive.receive_some():
                written.extend(chunk)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(read)
            await stdin_send.send_all(lines)
            await stdin_send.aclose()
            with trio.fail_after(10):
                await serve_stdio(app, stdin, stdout, grace_period=5)
        return bytes(written)

    messages = {m["id"]: m for m in lines_of(trio.run(run))}
    assert_tool_failed(messages["boom"], "boom", "boom")
    for name in ("internal", "wrong"):
        assert_no_cause(messages[name], name)
    assert messages["limited"]["error"]["code"] == -32050
    assert sorted(rid for rid, _ in errors) == ["boom", "internal", "wrong"]
