"""The client drivers on initialize-era servers, over real sockets and pipes: the probe and
its fallback to ``initialize``, a pinned version, server requests answered through the same
``on_input`` as input rounds (on a call's response stream and on the GET stream), listening to
a session, SSE resumption, a forgotten session replaced, DELETE on close, and stdio with a
server that ignores requests before ``initialize``. Each test runs on trio and on asyncio
(``tests/_backends.py``); the HTTP server is ``serve_http`` in a thread of its own."""

from __future__ import annotations

import logging
import sys
import textwrap
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
import trio

from mcpwire import Client, CompletionRequest, ListChanged, ResourceUpdated
from mcpwire.sessions import MemorySessionStore
import mcpwire
from mcpwire.types import (
    CallToolResult, ElicitRequest, ElicitResult, Implementation, InputRequest, PromptArgument, TextContent,
)
from mcpwire_adapters import App, Context, NeedInput
from mcpwire_adapters.client.http import HttpClient, ServerError, SessionExpired
from mcpwire_adapters.client.session import MAX_NEW_SESSIONS, InvalidResult
from mcpwire_adapters.client.stdio import StdioClient

import _backends
from _apps import asked_name
from _backends import run

ERA = ("2025-11-25", "2025-06-18", "2025-03-26")
STDIO_APP = str(Path(__file__).parent.parent.parent / "stdio_app.py")
CAPS: dict[str, Any] = {"elicitation": {"form": {}}}


def make_app(versions: tuple[str, ...] = ERA, **options: Any) -> App:
    app = App("old-server", "2.0", input_timeout=5, resource_subscribe=True, supported_versions=versions, **options)

    @app.tool(description="asks the client for a name")
    def greet(ctx: Context, arguments: dict[str, Any]) -> Any:
        name = asked_name(ctx)
        return name if isinstance(name, NeedInput) else f"Hello, {name} ({ctx.protocol_version})"

    @app.tool(description="closes its SSE stream, then answers")
    async def reconnect(ctx: Context, arguments: dict[str, Any]) -> str:
        await ctx.close_sse_stream(retry_ms=50)
        await trio.sleep(0.2)  # the app runs on the server's trio loop, whatever loop the client is on
        return "after reconnection"

    @app.tool(description="logs twice")
    async def chatty(ctx: Context, arguments: dict[str, Any]) -> str:
        await ctx.log("debug", "quiet")
        await ctx.log("warning", "loud")
        return "logged"

    @app.tool(description="changes the tools list and updates test://note")
    async def change(ctx: Context, arguments: dict[str, Any]) -> str:
        ctx.app.notify_list_changed("tools")
        ctx.app.notify_resource_updated("test://note")
        return "changed"

    @app.resource("test://note", name="note", mime_type="text/plain")
    def note(ctx: Context) -> str:
        return "a note"

    return app


def answer_names(name: str, seen: list[str]) -> Callable[[dict[str, InputRequest]], dict[str, Any]]:
    def on_input(requests: dict[str, InputRequest]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, request in requests.items():
            assert isinstance(request, ElicitRequest)
            seen.append(name)
            out[key] = ElicitResult(action="accept", content={"name": name})
        return out
    return on_input


def make_client(**kw: Any) -> Client:
    return Client(Implementation(name="t", version="1"), capabilities=CAPS, **kw)


@asynccontextmanager
async def served(app: App) -> AsyncIterator[str]:
    async with _backends.served(app) as server:
        yield server.url


def text(result: Any) -> str:
    return str(result.data["content"][0]["text"])


def test_connect_stays_modern_on_a_server_of_both_generations(backend: str) -> None:
    async def main() -> None:
        app = make_app(("2026-07-28", *ERA))
        async with served(app) as url, HttpClient(url, make_client()) as c:
            await c.connect()
            assert not c.client.initialize_era and c.initialized is None and c.sessions_started == 0
            assert c.protocol_version == "2026-07-28" and c.server_info is not None
            assert c.server_info.name == "old-server"
            assert len(app.server.sessions) == 0
    run(main, backend, timeout=30)


def test_connect_falls_back_to_initialize_and_a_call_asks_through_the_session(backend: str) -> None:
    async def main() -> None:
        app = make_app()
        async with served(app) as url:
            async with HttpClient(url, make_client()) as c:
                found = await c.connect()
                assert found.method == "initialize" and c.client.initialize_era
                assert c.protocol_version == "2025-11-25" and c.client.session_id is not None
                assert c.server_info is not None and c.server_info.name == "old-server"
                assert c.server_capabilities is not None and c.server_capabilities.tools is not None
                assert len(app.server.sessions) == 1
                assert {t.name for t in await c.list_tools()} == {"greet", "reconnect", "chatty", "change"}
                seen: list[str] = []
                result = await c.call_tool("greet", {}, on_input=answer_names("Ada", seen))
                assert text(result) == "Hello, Ada (2025-11-25)" and seen == ["Ada"]
                await c.ping()
            assert len(app.server.sessions) == 0  # closing the client sent DELETE
    run(main, backend, timeout=30)


def test_without_connect_the_first_request_probes_and_is_resent_on_the_session(backend: str) -> None:
    async def main() -> None:
        async with served(make_app()) as url, HttpClient(url, make_client()) as c:
            tools = await c.list_tools()
            assert len(tools) == 4 and c.client.initialize_era and c.sessions_started == 1
    run(main, backend, timeout=30)


@pytest.mark.parametrize("pinned", [False, True])
def test_concurrent_first_requests_open_one_session(pinned: bool, backend: str) -> None:
    async def main() -> None:
        app = make_app()
        client = make_client(protocol_version="2025-11-25") if pinned else make_client()
        async with served(app) as url, HttpClient(url, client) as c:
            async with anyio.create_task_group() as calls:
                for _ in range(5):
                    calls.start_soon(c.list_tools)
            assert c.sessions_started == 1 and len(app.server.sessions) == 1
    run(main, backend, timeout=30)


def test_a_pinned_version_starts_with_initialize(backend: str) -> None:
    async def main() -> None:
        app = make_app()
        async with served(app) as url, HttpClient(url, make_client(protocol_version="2025-06-18")) as c:
            seen: list[str] = []
            result = await c.call_tool("greet", {}, on_input=answer_names("Bo", seen))
            assert text(result) == "Hello, Bo (2025-06-18)" and c.discovered is None
    run(main, backend, timeout=30)


def test_the_session_handler_answers_a_call_without_its_own(backend: str) -> None:
    async def main() -> None:
        seen: list[str] = []
        async with served(make_app()) as url, HttpClient(url, make_client(), on_input=answer_names("Cy", seen)) as c:
            await c.connect()
            assert text(await c.call_tool("greet", {})) == "Hello, Cy (2025-11-25)" and seen == ["Cy"]
    run(main, backend, timeout=30)


def test_no_handler_means_method_not_found_for_the_server(backend: str) -> None:
    async def main() -> None:
        async with served(make_app()) as url, HttpClient(url, make_client()) as c:
            await c.connect()
            with pytest.raises(ServerError):
                await c.call_tool("greet", {})
    run(main, backend, timeout=30)


def test_log_level_is_set_on_the_session_and_logs_reach_the_call(backend: str) -> None:
    async def main() -> None:
        async with served(make_app()) as url, HttpClient(url, make_client()) as c:
            await c.connect()
            logs: list[Any] = []
            await c.call_tool("chatty", {}, on_log=logs.append, log_level="warning")
            assert [m.data for m in logs] == ["loud"]
            logs.clear()
            await c.call_tool("chatty", {}, on_log=logs.append, log_level="debug")
            assert [m.data for m in logs] == ["quiet", "loud"]
    run(main, backend, timeout=30)


def test_listening_on_a_session_reads_the_get_stream(backend: str) -> None:
    async def main() -> None:
        app = make_app()
        async with served(app) as url, HttpClient(url, make_client()) as c:
            await c.connect()
            wanted = {"toolsListChanged": True, "resourceSubscriptions": ["test://note"]}
            async with c.listen(wanted) as sub:
                assert sub.subscription_id is None and sub.acknowledged is not None
                await c.call_tool("change", {})
                events = [await sub.__anext__(), await sub.__anext__()]
            assert any(isinstance(e, ListChanged) and e.kind == "tools" for e in events)
            assert any(isinstance(e, ResourceUpdated) and e.uri == "test://note" for e in events)
    run(main, backend, timeout=30)


def test_a_response_stream_closed_mid_call_is_resumed(backend: str) -> None:
    async def main() -> None:
        async with served(make_app()) as url, HttpClient(url, make_client()) as c:
            await c.connect()
            assert text(await c.call_tool("reconnect", {})) == "after reconnection"
    run(main, backend, timeout=30)


def test_a_forgotten_session_is_replaced_once_and_said(caplog: pytest.LogCaptureFixture, backend: str) -> None:
    async def main() -> None:
        app = make_app()
        async with _backends.served(app) as server, HttpClient(server.url, make_client()) as c:
            await c.connect()
            first = c.client.session_id
            assert first is not None
            await server.call(app.server.sessions.remove, first)
            assert len(await c.list_tools()) == 4
            assert c.sessions_started == 2 and c.client.session_id not in (None, first)
    with caplog.at_level(logging.WARNING, logger="mcpwire.client"):
        run(main, backend, timeout=30)
    assert any("starting a new session" in r.getMessage() for r in caplog.records)


def test_a_server_that_forgets_every_session_at_once_is_an_error_not_a_loop(backend: str) -> None:
    async def main() -> None:
        app = make_app()
        app.server.sessions = MemorySessionStore(idle_timeout=1e-6)
        async with served(app) as url, HttpClient(url, make_client()) as c:
            with pytest.raises(SessionExpired, match="forgot each of"):
                await c.connect()
            assert c.sessions_started == MAX_NEW_SESSIONS  # a new session after each 404, within the bound
    run(main, backend, timeout=30)


# -- stdio ------------------------------------------------------------------------------------------


def test_stdio_falls_back_on_an_initialize_era_server(backend: str) -> None:
    async def main() -> None:
        seen: list[str] = []
        command = [sys.executable, STDIO_APP, "--versions", ",".join(ERA)]
        async with StdioClient(command, make_client(), on_input=answer_names("Di", seen)) as c:
            found = await c.connect()
            assert found.method == "initialize" and c.client.initialize_era and c.client.session_id is None
            assert text(await c.call_tool("greet", {})) == "Hello, Di" and seen == ["Di"]
            async with c.listen({"toolsListChanged": True, "resourceSubscriptions": ["test://note"]}) as sub:
                await c.call_tool("change", {})
                await c.call_tool("touch", {})
                first, second = await sub.__anext__(), await sub.__anext__()
            assert isinstance(first, ListChanged) and first.kind == "tools"
            assert isinstance(second, ResourceUpdated) and second.uri == "test://note"
    run(main, backend, timeout=30)


SILENT_UNTIL_INITIALIZE = textwrap.dedent("""
    import json, sys
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("method") == "initialize":
            result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "silent", "version": "0"}}
        elif message.get("method") == "tools/list":
            result = {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
        else:
            continue  # requests before initialize, and notifications: no answer
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
""")


def test_stdio_probe_that_gets_no_answer_falls_back_after_the_timeout(backend: str) -> None:
    async def main() -> None:
        command = [sys.executable, "-c", SILENT_UNTIL_INITIALIZE]
        async with StdioClient(command, make_client(), probe_timeout=0.5) as c:
            tools = await c.list_tools()
            assert [t.name for t in tools] == ["t"] and c.protocol_version == "2025-06-18"
            assert c.server_info is not None and c.server_info.name == "silent"
    run(main, backend, timeout=30)


# -- session-level handlers and complete() --------------------------------------------------------------


@pytest.mark.parametrize("versions", [ERA, ("2026-07-28",)], ids=["initialize era", "2026-07-28"])
def test_session_level_handlers_answer_both_dialects_and_declare_their_capabilities(versions: tuple[str, ...], backend: str) -> None:
    async def main() -> None:
        asked: list[str] = []

        def elicit(request: ElicitRequest) -> ElicitResult:
            asked.append(request.params.message)
            return ElicitResult(action="accept", content={"name": "Eve"})

        client = Client(Implementation(name="t", version="1"))  # declares nothing itself
        async with served(make_app(versions)) as url, HttpClient(url, client, elicitation=elicit) as c:
            assert client.capabilities == {"elicitation": {"form": {}}}
            result = await c.call_tool("greet", {})
            assert text(result).startswith("Hello, Eve (") and asked == ["Name?"]
    run(main, backend, timeout=30)


def test_a_kind_without_a_handler_is_an_error_not_a_guess(backend: str) -> None:
    async def main() -> None:
        def roots(request: Any) -> Any:
            raise AssertionError("not asked")

        async with served(make_app(("2026-07-28",))) as url, HttpClient(url, make_client(), roots=roots) as c:
            with pytest.raises(ServerError) as caught:
                await c.call_tool("greet", {})  # asks for elicitation: no handler for it
            assert caught.value.code == -32603 and "ElicitRequest" in str(caught.value)
    run(main, backend, timeout=30)


def test_complete_passes_the_arguments_already_chosen(backend: str) -> None:
    async def main() -> None:
        app = make_app(("2026-07-28", *ERA), completions=True)
        seen: list[Any] = []

        @app.prompt("p", description="a prompt", arguments=[PromptArgument(name="lang"), PromptArgument(name="name")])
        async def prompt(ctx: Context, arguments: dict[str, str]) -> Any:
            raise AssertionError("not asked")

        @app.completion
        async def complete(ctx: Context) -> Any:
            event = ctx.event
            assert isinstance(event, CompletionRequest)
            seen.append((event.argument_name, event.argument_value, event.context_arguments))
            return ["Ada", "Alan"]

        async with served(app) as url, HttpClient(url, make_client(protocol_version="2025-11-25")) as c:
            result = await c.complete({"type": "ref/prompt", "name": "p"}, "name", "A", context={"lang": "en"})
            assert result.data["completion"]["values"] == ["Ada", "Alan"]
        assert seen == [("name", "A", {"lang": "en"})]
    run(main, backend, timeout=30)


def test_every_verb_takes_the_same_options(backend: str) -> None:
    async def main() -> None:
        app = make_app(("2026-07-28", *ERA), completions=True)

        @app.resource("test://traced", name="traced")
        async def traced(ctx: Context) -> str:
            await ctx.log("debug", "detail")
            await ctx.log("warning", "reading")
            return "traced"

        for pinned in ("2026-07-28", "2025-11-25"):
            logs: list[Any] = []
            async with served(app) as url, HttpClient(url, make_client(protocol_version=pinned)) as c:
                read = await c.read_resource("test://traced", on_log=logs.append, log_level="warning",
                                             meta={"example.com/trace": pinned})
                assert read.data["contents"][0]["text"] == "traced"
                assert [m.data for m in logs] == ["reading"], pinned
    run(main, backend, timeout=30)


def test_a_result_that_breaks_its_output_schema_raises_with_the_result(backend: str) -> None:
    async def main() -> None:
        app = make_app(("2026-07-28", *ERA), validator=mcpwire.UNCHECKED)  # a server that sends what it is given

        @app.tool(description="claims a count, returns a word",
                  output_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
        async def liar(ctx: Context, arguments: dict[str, Any]) -> Any:
            return CallToolResult(content=[TextContent(text="one")], structured_content={"n": "one"})

        for version in ("2026-07-28", "2025-11-25"):
            client = make_client(protocol_version=version, validator=mcpwire.jsonschema_validator())
            async with served(app) as url, HttpClient(url, client) as c:
                await c.list_tools()
                with pytest.raises(InvalidResult) as caught:
                    await c.call_tool("liar", {})
                assert "does not match its outputSchema" in str(caught.value), version
                assert caught.value.result.data["structuredContent"] == {"n": "one"}
    run(main, backend, timeout=30)
