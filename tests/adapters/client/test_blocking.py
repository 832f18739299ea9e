"""The blocking client (``mcpwire_adapters.client.blocking``) against mcpwire's own servers.

HTTP: ``serve_http`` on 127.0.0.1 port 0, run by a blocking portal of its own (a trio loop in
a second thread), so that the test's thread stays free of any event loop, as a script's is.
stdio: ``tests/stdio_app.py`` as a subprocess. The tests call the client from the test's own
thread, like a script, and once from inside a running asyncio loop, like a notebook. A few
run the client's own loop (``backend=``) on trio and on asyncio: the drivers are the same.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import FrameType
from typing import Any

import anyio
import pytest
from _apps import add_echo_and_progress
import trio
from anyio.from_thread import start_blocking_portal
from mcpwire_adapters import App, BlockingClient, Context, NeedInput, serve_http
from mcpwire_adapters.client.blocking import BlockingListen
from mcpwire_adapters.client.session import ServerError, TransportError

from mcpwire import Client, ListChanged, ListenAck, Progress, RemoteProtocolError, ResourceUpdated, ResultReceived
from mcpwire.types import (
    CallToolResult, ElicitRequest, ElicitResult, GetPromptResult, Implementation, InputRequest, PromptArgument,
    PromptMessage, TextContent,
)

STDIO_APP = Path(__file__).resolve().parents[2] / "stdio_app.py"
OPTIONS: dict[str, Any] = {"connect_timeout": 5.0, "read_timeout": 15.0}


def make_app() -> App:
    app = App("blocking-test", "1.0", completions=True)

    add_echo_and_progress(app)

    @app.tool(description="Ask for a name, then greet")
    async def greet(ctx: Context, arguments: dict[str, Any]) -> Any:
        answer = ctx.input_responses.get("name")
        if answer is None:
            return NeedInput(requests={"name": {"method": "elicitation/create", "params": {
                "message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}}})
        return f"Hello, {answer['content']['name']}"

    @app.tool(description="Fail with a JSON-RPC error of the tool's own")
    async def refuse(ctx: Context, arguments: dict[str, Any]) -> str:
        raise RemoteProtocolError("not today", code=-32050, data={"why": "test"})

    @app.tool(description="Wait for the given seconds")
    async def wait(ctx: Context, arguments: dict[str, Any]) -> str:
        await trio.sleep(float(arguments["seconds"]))
        return "waited"

    @app.tool(description="Announce that the tools list changed")
    async def change(ctx: Context, arguments: dict[str, Any]) -> str:
        ctx.app.notify_list_changed("tools")
        return "changed"

    met: list[str] = []
    everyone = trio.Event()

    @app.tool(description="Wait (at most 10 s) until two calls are in, then answer")
    async def meet(ctx: Context, arguments: dict[str, Any]) -> str:
        met.append(str(arguments["who"]))
        if len(met) == 2:
            everyone.set()
        with trio.fail_after(10):
            await everyone.wait()
        return "met " + " and ".join(sorted(met))

    @app.prompt("haiku", description="Ask for a haiku", arguments=[PromptArgument(name="topic", required=True)])
    async def haiku(ctx: Context, arguments: dict[str, str]) -> GetPromptResult:
        text = f"Write a haiku about {arguments['topic']}."
        return GetPromptResult(messages=[PromptMessage(role="user", content=TextContent(text=text))])

    @app.completion
    async def complete(ctx: Context) -> list[str]:
        return ["trains", "trees"]

    return app


@pytest.fixture
def url() -> Iterator[str]:
    """Our trio HTTP server on 127.0.0.1, run by a portal of its own (not the client's)."""
    with start_blocking_portal("trio") as portal:
        serving, (host, port) = portal.start_task(serve_http, make_app())
        try:
            yield f"http://{host}:{port}/mcp"
        finally:
            serving.cancel()


def text(result: ResultReceived) -> str:
    assert isinstance(result.value, CallToolResult), result
    block = result.value.content[0]
    assert isinstance(block, TextContent)
    return block.text


def ada(request: ElicitRequest) -> ElicitResult:
    return ElicitResult(action="accept", content={"name": "Ada"})


def test_http_discover_list_call(url: str, backend: str) -> None:
    with BlockingClient.http(url, backend=backend, **OPTIONS) as c:
        discovered = c.discover()
        assert isinstance(discovered, ResultReceived) and discovered.method == "server/discover"
        assert c.server_info is not None and c.server_info.name == "blocking-test"
        assert c.protocol_version == "2026-07-28" and c.server_capabilities is not None
        assert {t.name for t in c.list_tools()} == {"echo", "progress", "greet", "refuse", "wait", "change", "meet"}
        assert text(c.call_tool("echo", {"text": "hi"})) == "hi"
        assert text(c.send(c.client.call_tool("echo", {"text": "sent"}))) == "sent"
        assert c.session.connections_opened == 1  # type: ignore[attr-defined]  # one keep-alive connection


def test_stdio_discover_list_call_and_elicitation(backend: str) -> None:
    with BlockingClient.stdio([sys.executable, str(STDIO_APP)], elicitation=ada, backend=backend) as c:
        assert c.connect().method == "server/discover"
        assert {"echo", "greet", "wait"} <= {t.name for t in c.list_tools()}
        assert text(c.call_tool("echo", {"text": "over stdio"})) == "over stdio"
        assert text(c.call_tool("greet", {})) == "Hello, Ada"
        assert c.read_resource("test://note").data["contents"][0]["text"] == "a note"
    assert c.session.returncode == 0  # type: ignore[attr-defined]  # closing stopped the process


def test_prompts_and_completions(url: str) -> None:
    with BlockingClient.http(url, **OPTIONS) as c:
        assert [p.name for p in c.list_prompts()] == ["haiku"]
        prompt = c.get_prompt("haiku", {"topic": "rain"})
        assert prompt.data["messages"][0]["content"]["text"] == "Write a haiku about rain."
        offered = c.complete({"type": "ref/prompt", "name": "haiku"}, "topic", "tr")
        assert offered.data["completion"]["values"] == ["trains", "trees"]
        assert c.list_resources() == [] and c.list_resource_templates() == []


def test_initialize_era_session_verbs_over_stdio() -> None:
    client = Client(Implementation(name="t", version="1"), protocol_version="2025-11-25")
    with BlockingClient.stdio([sys.executable, str(STDIO_APP), "--versions", "2025-11-25"], client) as c:
        assert c.connect().method == "initialize" and c.protocol_version == "2025-11-25"
        assert c.server_info is not None and c.server_info.name == "stdio-test"
        c.ping()
        c.set_log_level("info")
        c.subscribe("test://note")
        c.unsubscribe("test://note")
        wanted = {"toolsListChanged": True, "resourceSubscriptions": ["test://note"]}
        with c.listen(wanted, timeout=5) as events:
            assert events.subscription_id is None  # the session's notifications, no listen request
            c.call_tool("touch", {})
            c.call_tool("change", {})
            updated, changed = next(events), next(events)
        assert isinstance(updated, ResourceUpdated) and updated.uri == "test://note"
        assert isinstance(changed, ListChanged) and changed.kind == "tools"


def test_session_elicitation_handler_answers_a_round(url: str) -> None:
    asked: list[ElicitRequest] = []

    def handler(request: ElicitRequest) -> ElicitResult:
        asked.append(request)
        return ada(request)

    client = Client(Implementation(name="t", version="1"))
    with BlockingClient.http(url, client, elicitation=handler, **OPTIONS) as c:
        assert "elicitation" in c.client.capabilities  # declared for the handler
        assert text(c.call_tool("greet", {})) == "Hello, Ada"
    assert [r.params.message for r in asked] == ["Name?"]


def test_a_call_own_async_input_handler(url: str) -> None:
    async def on_input(requests: dict[str, InputRequest]) -> dict[str, Any]:
        await anyio.sleep(0)  # runs on the client's loop: anyio (or trio) works there
        return {key: ElicitResult(action="accept", content={"name": "Grace"}) for key in requests}

    with BlockingClient.http(url, Client(Implementation(name="t", version="1"), capabilities={"elicitation": {"form": {}}}),
                             **OPTIONS) as c:
        assert text(c.call_tool("greet", {}, on_input=on_input)) == "Hello, Grace"
        with pytest.raises(ServerError) as info:
            c.call_tool("greet", {})  # no handler at all
        assert info.value.code == -32603


def test_progress_callback_runs_in_the_client_thread(url: str) -> None:
    seen: list[tuple[float, int]] = []

    def on_progress(event: Progress) -> None:
        seen.append((event.progress, threading.get_ident()))

    with BlockingClient.http(url, **OPTIONS) as c:
        assert text(c.call_tool("progress", {}, on_progress=on_progress)) == "done"
    assert [p for p, _ in seen] == [1, 2, 3]
    assert {thread for _, thread in seen} != {threading.get_ident()}  # not the caller's thread


def test_listen_delivers_a_list_change(url: str, backend: str) -> None:
    with BlockingClient.http(url, backend=backend, **OPTIONS) as c, c.listen({"toolsListChanged": True}, timeout=10) as events:
        assert isinstance(events, BlockingListen)
        assert events.acknowledged is not None and events.acknowledged.tools_list_changed is True
        assert events.subscription_id is not None
        assert isinstance(next(events), ListenAck)
        assert text(c.call_tool("change", {})) == "changed"  # requests flow while listening
        changed = next(events)
        assert isinstance(changed, ListChanged) and changed.kind == "tools"
        assert changed.subscription_id == events.subscription_id
        started = time.monotonic()
        assert events.next(timeout=0.2) is None  # nothing more: the wait ends, the stream stays open
        assert time.monotonic() - started < 5
        assert events.result is None


def test_listen_iteration_ends_after_the_timeout_over_stdio() -> None:
    with BlockingClient.stdio([sys.executable, str(STDIO_APP)]) as c:
        with c.listen({"toolsListChanged": True}, timeout=0.5) as events:
            c.call_tool("change", {})
            kinds = [type(event).__name__ for event in events]  # ends after 0.5 s of silence
        assert kinds == ["ListenAck", "ListChanged"]
        assert text(c.call_tool("echo", {"text": "after"})) == "after"  # the listen was cancelled, not the client


def test_errors_are_raised_in_the_caller_thread(url: str) -> None:
    with BlockingClient.http(url, **OPTIONS) as c:
        with pytest.raises(ServerError) as info:
            c.call_tool("refuse", {})
        assert info.value.code == -32050 and info.value.data == {"why": "test"}
        with pytest.raises(ServerError) as info:
            c.call_tool("missing", {})
        assert info.value.code == -32602
        assert text(c.call_tool("echo", {"text": "still fine"})) == "still fine"


def test_a_dead_url_is_a_transport_error() -> None:
    with socket.socket() as held:  # bound, never listening: refused, and no other process can take the port
        held.bind(("127.0.0.1", 0))
        port = held.getsockname()[1]
        with BlockingClient.http(f"http://127.0.0.1:{port}/mcp", **OPTIONS) as c, \
                pytest.raises(TransportError, match="cannot connect"):
            c.discover()


def loop_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "mcpwire-blocking-client"]


def test_a_client_that_cannot_start_raises_and_leaves_no_thread() -> None:
    with pytest.raises(OSError):
        BlockingClient.stdio(["/nonexistent/mcp-server"])
    with pytest.raises(TypeError, match="max_rounds_typo"):  # the options are the async client's
        BlockingClient.http("http://127.0.0.1:9/mcp", max_rounds_typo=3)
    assert loop_threads() == []  # the client's thread was stopped


def test_close_twice_is_harmless_and_calls_after_close_fail(url: str) -> None:
    c = BlockingClient.http(url, **OPTIONS)
    assert len(loop_threads()) == 1  # the client's event loop thread
    assert text(c.call_tool("echo", {"text": "once"})) == "once"
    c.close()
    assert c.closed and loop_threads() == []
    c.close()
    with c:
        pass  # leaving closes again: still nothing
    with pytest.raises(TransportError, match="closed"):
        c.call_tool("echo", {"text": "too late"})
    with pytest.raises(TransportError, match="closed"), c.listen({"toolsListChanged": True}):
        pass  # pragma: no cover


def test_a_client_never_closed_is_closed_at_exit_or_when_collected() -> None:
    code = (f"import gc, sys\nfrom mcpwire_adapters import BlockingClient\n"
            f"dropped = BlockingClient.stdio([sys.executable, {str(STDIO_APP)!r}])\n"
            "session = dropped.session\n"
            "del dropped\n"
            "gc.collect()\n"
            "print(session.returncode, flush=True)\n"
            f"kept = BlockingClient.stdio([sys.executable, {str(STDIO_APP)!r}])\n"
            "print(kept.discover().method, flush=True)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stdout == "0\nserver/discover\n", done.stderr


def test_calls_from_several_threads_run_concurrently(url: str) -> None:
    # Each call of `meet` waits for the other: done one after the other, the first would fail.
    with BlockingClient.http(url, **OPTIONS) as c, ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(lambda who: text(c.call_tool("meet", {"who": who})), ["a", "b"]))
    assert answers == ["met a and b", "met a and b"]


def test_used_from_inside_a_running_asyncio_loop(url: str) -> None:
    # A notebook cell: plain code in a thread whose asyncio loop is running.
    def cell() -> str:
        with BlockingClient.http(url, **OPTIONS) as c:
            return text(c.call_tool("echo", {"text": "from a notebook"}))

    async def notebook() -> str:
        asyncio.get_running_loop()
        return cell()

    assert asyncio.run(notebook()) == "from a notebook"


def test_a_callback_cannot_call_back_into_its_client(url: str) -> None:
    failures: list[BaseException] = []
    with BlockingClient.http(url, **OPTIONS) as c:
        def on_progress(event: Progress) -> None:
            try:
                c.ping()
            except RuntimeError as exc:
                failures.append(exc)

        assert text(c.call_tool("progress", {}, on_progress=on_progress)) == "done"
    assert len(failures) == 3


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs SIGALRM timers")
def test_an_interrupt_cancels_the_request(url: str) -> None:
    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        with BlockingClient.http(url, **OPTIONS) as c:
            assert text(c.call_tool("echo", {"text": "warm"})) == "warm"
            started = time.monotonic()
            signal.setitimer(signal.ITIMER_REAL, 0.3)
            with pytest.raises(KeyboardInterrupt):
                c.call_tool("wait", {"seconds": 10})
            assert time.monotonic() - started < 5
            # Cancelled the HTTP way: its connection was closed, so the next call opens another.
            assert text(c.call_tool("echo", {"text": "after"})) == "after"
            assert c.session.connections_opened == 2  # type: ignore[attr-defined]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
