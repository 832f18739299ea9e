"""An App for the many-process tests (tests/integration/test_redis_cluster.py), served by
``mcpwire serve --redis URL`` three times behind a round-robin proxy: a paginated tools list
(two tools a page), a tool that asks for input (a multi round-trip round), a tool that
changes things (``list_changed`` of tools, ``resources/updated`` of a URI), and task tools:
``hold`` works until cancelled, ``confirm`` waits for one elicitation answer, ``quick``
answers at once, ``slow`` works a second; and for initialize-era sessions (with a
``progressToken``), ``detach`` (ends its SSE stream mid-call, then goes on) and ``linger``
(streams, then waits until cancelled). Each tool answers with the pid of the process that ran
it."""

from __future__ import annotations

import os
from typing import Any

import anyio
from mcpwire_adapters import App, Context, NeedInput

from _apps import CONFIRM, add_hold_and_confirm

from mcpwire.types import CallToolResult, TextContent


app = App("cluster-app", "1.0", tasks=True, page_size=2, resource_subscribe=True)


def _text(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=f"{text} (pid {os.getpid()})")])


for _n in range(5):
    @app.tool(f"filler_{_n}", description="One more tool, for pagination")
    async def filler(ctx: Context, arguments: dict[str, Any]) -> CallToolResult:
        return _text("filler")


@app.tool("echo", description="Answers its text")
async def echo(ctx: Context, arguments: dict[str, Any]) -> CallToolResult:
    return _text(str(arguments.get("text", "")))


@app.tool("ask_name", description="Asks for a name, then greets (a multi round-trip round)")
async def ask_name(ctx: Context, arguments: dict[str, Any]) -> CallToolResult | NeedInput:
    answer = ctx.input_responses.get("name")
    if answer is None:
        return NeedInput(requests={"name": CONFIRM}, state={"asked_by": os.getpid()})
    return _text(f"hello {answer.get('content', {}).get('ok')} asked by {ctx.state['asked_by']}")


@app.tool("touch", description="Changes the tools list and the resource at `uri`")
async def touch(ctx: Context, arguments: dict[str, Any]) -> CallToolResult:
    app.notify_list_changed("tools")
    app.notify_resource_updated(str(arguments.get("uri", "file:///doc")))
    return _text("touched")


@app.resource("file:///doc", name="doc")
async def doc(ctx: Context) -> str:
    return "the doc"


@app.tool("quick", description="A task that completes at once", task_support="optional")
async def quick(ctx: Context, arguments: dict[str, Any]) -> CallToolResult:
    await ctx.start_task(status_message="quick")
    return _text("quick")


add_hold_and_confirm(app, _text)


@app.tool("slow", description="A task that works `seconds` (default 1), then answers", task_support="optional")
async def slow(ctx: Context, arguments: dict[str, Any]) -> CallToolResult:
    await ctx.start_task(status_message="slow")
    await anyio.sleep(float(arguments.get("seconds", 1)))
    return _text("slow")


@app.tool("detach", description="Progress, then its SSE stream ends (resume it with Last-Event-ID); works "
                                "`seconds` (default 1), progress again, then answers")
async def detach(ctx: Context, arguments: dict[str, Any]) -> CallToolResult:
    await ctx.progress(1, total=2)
    await ctx.close_sse_stream(retry_ms=100)
    await anyio.sleep(float(arguments.get("seconds", 1)))
    await ctx.progress(2, total=2)
    return _text("detached")


@app.tool("linger", description="Progress (its answer is an event stream), then waits until cancelled")
async def linger(ctx: Context, arguments: dict[str, Any]) -> CallToolResult:
    await ctx.progress(1)
    await anyio.sleep_forever()
    raise AssertionError("unreachable")
