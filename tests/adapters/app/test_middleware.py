"""The App's middleware (``App.middleware``, ``adapters/app/middleware.py``) in process: requests go
through the engine (``app.server.receive_http``, or a stdio connection) and ``App.dispatch`` under
trio, and every reply is checked against the official schema (tests/schema_check.py).

What a middleware can do to a request: act before and after it in order, answer without the
handler, change its params, change its result, refuse it (a JSON-RPC error, or a tool execution
error), see what the handler raised; for which methods; what it sees (method, params, principal,
session); and that without middleware nothing changes (the engine still answers the lists)."""

from __future__ import annotations

import itertools
import json
from typing import Any

import msgspec
import pytest
import trio
from mcpwire_adapters import App, Context, NeedInput, ToolError
from mcpwire_adapters.app.middleware import WRAPPED_METHODS, CallNext
from mcpwire_adapters.errors import UsageError
from mcpwire_adapters.oauth.resource_server import current_principal
from middleware_app import filter_tools
from schema_check import Reply, assemble, call, exchange, http_request, request

import mcpwire
from mcpwire import HttpExchange, Keyring, StdioConnection, StdioExchange
from mcpwire.auth import AccessToken
from mcpwire.types import CallToolResult, ReadResourceResult, TextContent, TextResourceContents

NOW = 1_800_000_000.0


def make_app(**options: Any) -> App:
    app = App("mw-test", "1.0", keyring=Keyring.single(b"m" * 32), completions=True, **options)

    @app.tool(description="Echo")
    async def echo(text: str = "") -> str:
        return f"echo:{text}"

    @app.tool(description="Admins only")
    async def admin() -> str:
        return "admin"

    @app.tool(description="Fails")
    async def broken() -> str:
        raise RuntimeError("boom")

    @app.resource("test://r", description="a resource")
    async def resource() -> str:
        return "r"

    @app.prompt(description="a prompt")
    async def hello(name: str) -> str:
        return f"hello {name}"

    @app.completion
    async def complete(ctx: Context) -> list[str]:
        return ["one", "two"]

    return app


def run(app: App, method: str, params: dict[str, Any], principal: AccessToken | None = None, id: int = 1) -> Reply:
    """``method`` through the engine and ``App.dispatch`` (with ``principal`` as the driver's
    OAuth guard would have set it): the reply, assembled and checked against the schema."""
    answer = app.server.receive_http(http_request(request(method, params, id=id)), now=NOW)
    if isinstance(answer, tuple):  # answered by the engine
        return assemble(answer, method)
    assert isinstance(answer, HttpExchange)
    outputs: list[Any] = []

    async def send(output: Any) -> None:
        outputs.extend(output)

    async def main() -> None:
        token = current_principal.set(principal)
        try:
            with trio.fail_after(5):
                await app.dispatch(answer, send)
        finally:
            current_principal.reset(token)

    trio.run(main)
    return assemble(outputs, method)


def texts(reply: Reply) -> list[str]:
    return [block["text"] for block in reply.result["content"]]


def user(subject: str) -> AccessToken:
    return AccessToken(subject=subject, client_id="app", scopes=("mcp",))


# -- order, before and after ----------------------------------------------------------------------
def test_middleware_runs_in_the_order_registered_around_the_handler() -> None:
    app = make_app()
    seen: list[str] = []

    @app.middleware
    async def outer(ctx: Context, call_next: CallNext) -> Any:
        seen.append("outer before")
        result = await call_next(ctx)
        seen.append("outer after")
        return result

    async def inner(ctx: Context, call_next: CallNext) -> Any:
        seen.append(f"inner before {ctx.method}")
        result = await call_next(ctx)
        seen.append(f"inner after {type(result).__name__}")
        return result

    app.add_middleware(inner)
    assert texts(run(app, "tools/call", {"name": "echo", "arguments": {"text": "x"}})) == ["echo:x"]
    assert seen == ["outer before", "inner before tools/call", "inner after CallToolResult", "outer after"]


# -- answering, changing the request and the result --------------------------------------------
def test_a_middleware_may_answer_without_the_handler() -> None:
    app = make_app()
    called: list[str] = []

    @app.tool(description="Counts its calls")
    async def counted() -> str:
        called.append("yes")
        return "fresh"

    cache: dict[str, Any] = {}

    @app.middleware(methods={"tools/call"})
    async def cached(ctx: Context, call_next: CallNext) -> Any:
        assert isinstance(ctx.event, mcpwire.ToolCall)
        key = ctx.event.name
        if key not in cache:
            cache[key] = await call_next(ctx)
        return cache[key]

    assert texts(run(app, "tools/call", {"name": "counted"})) == ["fresh"]
    assert texts(run(app, "tools/call", {"name": "counted"}, id=2)) == ["fresh"]
    assert called == ["yes"]


def test_a_middleware_may_answer_as_a_handler_would() -> None:
    app = make_app()

    @app.middleware(methods=["tools/call", "resources/read"])
    async def plain(ctx: Context, call_next: CallNext) -> Any:
        return "short" if ctx.method == "tools/call" else b"\x00\x01"

    assert texts(run(app, "tools/call", {"name": "echo"})) == ["short"]
    assert run(app, "resources/read", {"uri": "test://r"}).result["contents"] == [{"uri": "test://r", "blob": "AAE="}]


def test_a_middleware_may_change_the_params_the_handler_gets() -> None:
    app = make_app()

    @app.middleware(methods="tools/call")
    async def shout(ctx: Context, call_next: CallNext) -> Any:
        event = ctx.event
        assert isinstance(event, mcpwire.ToolCall)
        if event.name == "echo":
            ctx.event = msgspec.structs.replace(event, arguments=msgspec.structs.replace(
                event.arguments, text=event.arguments.text.upper()))
        return await call_next(ctx)

    assert texts(run(app, "tools/call", {"name": "echo", "arguments": {"text": "quiet"}})) == ["echo:QUIET"]


def test_a_middleware_may_change_the_result() -> None:
    app = make_app()

    @app.middleware(methods={"tools/call", "resources/read"})
    async def stamp(ctx: Context, call_next: CallNext) -> Any:
        result = await call_next(ctx)
        if isinstance(result, CallToolResult):
            return msgspec.structs.replace(result, content=[*result.content, TextContent(text="[seen]")])
        assert isinstance(result, ReadResourceResult)
        return msgspec.structs.replace(result, contents=[TextResourceContents(uri="test://r", text="changed")])

    assert texts(run(app, "tools/call", {"name": "echo", "arguments": {"text": "a"}})) == ["echo:a", "[seen]"]
    assert run(app, "resources/read", {"uri": "test://r"}).result["contents"][0]["text"] == "changed"


# -- refusals and errors --------------------------------------------------------------------------
def test_a_refusal_is_the_json_rpc_error_it_raises_with_its_status() -> None:
    app = make_app()

    @app.middleware
    async def limited(ctx: Context, call_next: CallNext) -> Any:
        if ctx.method == "prompts/get":
            raise mcpwire.ProtocolError("Not for you", code=mcpwire.ErrorCode.INVALID_PARAMS)
        raise mcpwire.ProtocolError("Rate limit exceeded", code=-32029, data={"retryAfterMs": 500})

    for method, params in (("tools/call", {"name": "echo"}), ("tools/list", {})):
        reply = run(app, method, params)
        assert reply.status == 200  # an application's code: HTTP 200 (docs/errors.md)
        assert reply.message["error"] == {"code": -32029, "message": "Rate limit exceeded", "data": {"retryAfterMs": 500}}
    reply = run(app, "prompts/get", {"name": "hello", "arguments": {"name": "x"}})
    assert reply.status == 400 and reply.message["error"] == {"code": -32602, "message": "Not for you"}


def test_a_tool_error_raised_by_a_middleware_is_a_tool_execution_error() -> None:
    app = make_app()
    reported: list[BaseException] = []
    app.on_error = lambda exchange, exc: reported.append(exc)

    @app.middleware(methods={"tools/call"})
    async def quota(ctx: Context, call_next: CallNext) -> Any:
        raise ToolError("quota used up: try tomorrow")

    reply = run(app, "tools/call", {"name": "echo"})
    assert reply.status == 200 and reply.result["isError"] is True and texts(reply) == ["quota used up: try tomorrow"]
    assert reported == []  # an answer, not a failure


def test_a_middleware_sees_what_the_handler_raised_and_may_answer_instead() -> None:
    app = make_app()
    caught: list[str] = []

    @app.middleware(methods={"tools/call"})
    async def rescue(ctx: Context, call_next: CallNext) -> Any:
        try:
            return await call_next(ctx)
        except RuntimeError as exc:
            caught.append(str(exc))
            return "recovered"

    assert texts(run(app, "tools/call", {"name": "broken"})) == ["recovered"]
    assert caught == ["boom"]


def test_what_a_middleware_does_not_catch_is_answered_as_without_it() -> None:
    app = make_app()

    @app.middleware
    async def passing(ctx: Context, call_next: CallNext) -> Any:
        return await call_next(ctx)

    reply = run(app, "tools/call", {"name": "broken"})
    assert reply.result["isError"] is True and texts(reply) == ["Tool 'broken' failed"]
    assert run(app, "resources/read", {"uri": "test://nope"}).message["error"]["code"] == -32602


# -- which methods, and what a middleware sees ----------------------------------------------------
def test_each_wrapped_method_passes_its_own_chain_only() -> None:
    app = make_app()
    seen: list[tuple[str, str]] = []

    def recorder(label: str) -> Any:
        async def record(ctx: Context, call_next: CallNext) -> Any:
            seen.append((label, ctx.method))
            return await call_next(ctx)

        return record

    app.add_middleware(recorder("all"))
    app.add_middleware(recorder("calls"), methods={"tools/call"})
    requests: list[tuple[str, dict[str, Any]]] = [("tools/call", {"name": "echo"}), ("resources/read", {"uri": "test://r"}),
                ("prompts/get", {"name": "hello", "arguments": {"name": "x"}}),
                ("completion/complete", {"ref": {"type": "ref/prompt", "name": "hello"},
                                         "argument": {"name": "name", "value": "o"}}),
                ("tools/list", {}), ("resources/list", {}), ("resources/templates/list", {}), ("prompts/list", {})]
    for method, params in requests:
        assert "result" in run(app, method, params).message, method
    assert seen == [("all", "tools/call"), ("calls", "tools/call")] + [("all", m) for m, _ in requests[1:]]
    assert {m for m, _ in requests} == WRAPPED_METHODS
    assert "result" in call(app.server, request("server/discover", {})).message  # the engine's, unwrapped
    assert seen[-1] == ("all", "prompts/list")


def test_a_middleware_sees_method_params_principal_and_request() -> None:
    app = make_app()
    seen: list[Any] = []

    @app.middleware
    async def look(ctx: Context, call_next: CallNext) -> Any:
        principal = ctx.principal
        seen.append((ctx.method, ctx.request_id, ctx.session_id, principal and principal.subject,
                     ctx.meta.protocol_version, getattr(ctx.event, "name", None)))
        return await call_next(ctx)

    run(app, "tools/call", {"name": "echo"}, principal=user("alice"), id=7)
    run(app, "tools/list", {}, id=8)
    assert seen == [("tools/call", 7, None, "alice", "2026-07-28", "echo"), ("tools/list", 8, None, None, "2026-07-28", None)]


def test_tools_list_and_calls_filtered_per_user() -> None:
    app = make_app()
    filter_tools(app)
    names = [t["name"] for t in run(app, "tools/list", {}, principal=user("alice")).result["tools"]]
    assert names == ["admin", "broken", "echo"]
    names = [t["name"] for t in run(app, "tools/list", {}, principal=user("mallory")).result["tools"]]
    assert names == ["broken", "echo"]
    refused = run(app, "tools/call", {"name": "admin"}, principal=user("mallory"))
    assert refused.status == 400 and refused.message["error"]["code"] == -32602
    assert texts(run(app, "tools/call", {"name": "admin"}, principal=user("alice"))) == ["admin"]


def test_the_lists_are_handed_to_the_app_only_once_wrapped() -> None:
    app = make_app()
    as_before = app.server.receive_http(http_request(request("tools/list", {})), now=NOW)
    assert isinstance(as_before, tuple)  # the engine's own answer: no middleware, no App in the way

    @app.middleware(methods={"tools/call"})
    async def calls_only(ctx: Context, call_next: CallNext) -> Any:
        return await call_next(ctx)

    assert isinstance(app.server.receive_http(http_request(request("tools/list", {})), now=NOW), tuple)
    app.add_middleware(calls_only, methods={"prompts/list"})
    assert isinstance(exchange(app.server, request("prompts/list", {})).event, mcpwire.ListRequest)
    assert isinstance(app.server.receive_http(http_request(request("tools/list", {})), now=NOW), tuple)


def test_registration_refuses_what_cannot_work() -> None:
    app = make_app()

    async def fine(ctx: Context, call_next: CallNext) -> Any:
        return await call_next(ctx)

    def plain(ctx: Context, call_next: CallNext) -> Any:
        return None

    for methods in ({"server/discover"}, {"initialize", "tools/call"}, set()):
        with pytest.raises(UsageError, match="a middleware wraps some of"):
            app.add_middleware(fine, methods=methods)
    with pytest.raises(TypeError, match="async callable"):
        app.add_middleware(plain)

    class Callable:
        async def __call__(self, ctx: Context, call_next: CallNext) -> Any:
            return await call_next(ctx)

    app.add_middleware(Callable())
    assert texts(run(app, "tools/call", {"name": "echo"})) == ["echo:"]


# -- rounds: initialize-era sessions on stdio, and tasks ----------------------------------------------
def test_on_a_session_each_round_passes_the_chain_and_the_changed_params_hold() -> None:
    app = App("mw-era", "1.0", keyring=Keyring.single(b"m" * 32))
    seen: list[Any] = []

    @app.tool(description="asks for a name")
    async def greet(ctx: Context, greeting: str = "hi") -> Any:
        answer = ctx.input_responses.get("name")
        if answer is None:
            return NeedInput(requests={"name": {"method": "elicitation/create", "params": {
                "message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}}})
        return f"{greeting} {answer['content']['name']}"

    @app.middleware(methods={"tools/call"})
    async def polite(ctx: Context, call_next: CallNext) -> Any:
        event = ctx.event
        assert isinstance(event, mcpwire.ToolCall)
        ctx.event = msgspec.structs.replace(event, arguments=msgspec.structs.replace(event.arguments, greeting="hello"))
        result = await call_next(ctx)
        seen.append((ctx.session_id, bool(ctx.input_responses), type(result).__name__))
        return result

    connection = StdioConnection(app.server)
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "c", "version": "1"}}}
    lines = b"".join(json.dumps(m).encode() + b"\n" for m in (
        init, {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "greet", "arguments": {}}}))
    out = connection.receive_data(lines, now=NOW)
    ex = next(o for o in out if isinstance(o, StdioExchange))
    written: list[Any] = []

    async def send(output: Any) -> None:
        for line in (output if isinstance(output, list) else [output]):
            for raw in bytes(line).splitlines():
                message = json.loads(raw)
                written.append(message)
                if message.get("method") == "elicitation/create":
                    answer = {"jsonrpc": "2.0", "id": message["id"], "result": {"action": "accept", "content": {"name": "Ann"}}}
                    for arrived in connection.receive_data(json.dumps(answer).encode() + b"\n", now=NOW):
                        if isinstance(arrived, mcpwire.InputArrived):
                            app.input_arrived(arrived)

    async def main() -> None:
        with trio.fail_after(5):
            await app.dispatch(ex, send)

    trio.run(main)
    assert written[-1]["result"]["content"] == [{"type": "text", "text": "hello Ann"}]
    assert seen == [(None, False, "NeedInput"), (None, True, "CallToolResult")]


def test_a_task_capable_call_passes_the_chain() -> None:
    app = App("mw-tasks", "1.0", keyring=Keyring.single(b"m" * 32), tasks=True)
    seen: list[str] = []

    @app.tool(description="may become a task", task_support="optional")
    async def work(ctx: Context) -> str:
        return "worked"

    @app.middleware
    async def record(ctx: Context, call_next: CallNext) -> Any:
        seen.append(f"{ctx.method} {ctx.task_allowed}")
        return await call_next(ctx)

    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}
    reply = run(app, "tools/call", {"name": "work", "_meta": meta})
    assert texts(reply) == ["worked"] and seen == ["tools/call True"]


def test_sessions_ids_are_seen_over_http() -> None:
    app = App("mw-http-era", "1.0", keyring=Keyring.single(b"m" * 32),
              session_ids=(f"sid-{i}" for i in itertools.count()))
    sessions: list[str | None] = []

    @app.tool(description="Echo")
    async def echo() -> str:
        return "e"

    @app.middleware
    async def look(ctx: Context, call_next: CallNext) -> Any:
        sessions.append(ctx.session_id)
        return await call_next(ctx)

    base = [(b"content-type", b"application/json"), (b"accept", b"application/json, text/event-stream")]
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}
    post = mcpwire.HttpRequest(method="POST", target="/mcp", headers=base, body=json.dumps(init).encode())
    opened = app.server.receive_http(post, now=NOW)
    assert isinstance(opened, tuple)
    head = next(p for p in opened if isinstance(p, mcpwire.ResponseHead))
    session = [(b"mcp-session-id", dict(head.headers)[b"mcp-session-id"]), (b"mcp-protocol-version", b"2025-06-18")]
    body = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    ex = app.server.receive_http(mcpwire.HttpRequest(method="POST", target="/mcp", headers=base + session,
                                                     body=json.dumps(body).encode()), now=NOW)
    assert isinstance(ex, HttpExchange)
    outputs: list[Any] = []

    async def send(output: Any) -> None:
        outputs.extend(output)

    trio.run(app.dispatch, ex, send)
    data = b"".join(p.data for p in outputs if isinstance(p, mcpwire.ResponseBody))
    assert [tool["name"] for tool in json.loads(data)["result"]["tools"]] == ["echo"]
    assert sessions == ["sid-0"]
