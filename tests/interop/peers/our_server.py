"""mcpwire's side of the interop tests: one App with the features every peer exercises,
served over HTTP (prints ``{"url": ...}`` on stdout, stops at the end of stdin) or stdio.

    python tests/interop/peers/our_server.py http|stdio

Tools: ``echo`` (text), ``count`` (progress 1..3), ``chatty`` (a debug and a warning log
message), ``greet`` (asks the client for a name: elicitation), ``ask_llm`` (asks the client's
model: sampling), ``touch`` (updates ``test://note``). Resource ``test://note`` (subscribable),
prompt ``greeting`` (argument ``name``, completable from ``Ada``, ``Alan``, ``Grace``).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import trio

from mcpwire.types import CompleteResult, Completion, GetPromptResult, PromptArgument, PromptMessage, TextContent
from mcpwire_adapters import App, Context, NeedInput, serve_stdio
from mcpwire_adapters.serve.trio_h11.server import serve_http

NAMES = ("Ada", "Alan", "Grace")


def build_app() -> App:
    app = App("mcpwire-interop", "1.0", resource_subscribe=True, logging=True, completions=True, input_timeout=20,
              tasks=True)

    @app.tool(description="Echo the text back", input_schema={
        "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    async def echo(ctx: Context, arguments: dict[str, Any]) -> str:
        return str(arguments["text"])

    @app.tool(description="Report progress 1, 2, 3 of 3, then answer")
    async def count(ctx: Context, arguments: dict[str, Any]) -> str:
        for step in (1, 2, 3):
            await ctx.progress(step, total=3, message=f"step {step}")
            await trio.sleep(0.02)  # work between the steps (a client that reads a burst may drop some)
        return "counted"

    @app.tool(description="Log a debug and a warning message")
    async def chatty(ctx: Context, arguments: dict[str, Any]) -> str:
        await ctx.log("debug", "quiet detail")
        await ctx.log("warning", "loud news")
        return "logged"

    @app.tool(description="Ask the client for a name, then greet it")
    def greet(ctx: Context, arguments: dict[str, Any]) -> Any:
        answer = ctx.input_responses.get("name")
        if answer is None:
            schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
            return NeedInput(requests={"name": {"method": "elicitation/create",
                                                "params": {"message": "Your name?", "requestedSchema": schema}}})
        if answer.get("action") != "accept":
            return f"no name ({answer.get('action')})"
        return f"Hello, {answer['content']['name']}!"

    @app.tool(description="Ask the client's model a question")
    def ask_llm(ctx: Context, arguments: dict[str, Any]) -> Any:
        answer = ctx.input_responses.get("llm")
        if answer is None:
            message = {"role": "user", "content": {"type": "text", "text": "Capital of France?"}}
            return NeedInput(requests={"llm": {"method": "sampling/createMessage",
                                               "params": {"messages": [message], "maxTokens": 50}}})
        return f"The model said: {answer['content']['text']}"

    # 2025-11-25 tasks: a client that asks (params.task) gets a task; others an ordinary call.
    @app.tool(description="Work a little while, as a task when asked", task_support="optional")
    async def slow_job(ctx: Context, arguments: dict[str, Any]) -> str:
        await ctx.start_task(status_message="working on it")
        await trio.sleep(0.3)
        return "slow job done"

    @app.tool(description="Ask the client to approve, then finish", task_support="optional")
    async def vetted_job(ctx: Context, arguments: dict[str, Any]) -> Any:
        await ctx.start_task()
        answer = ctx.input_responses.get("approve")
        if answer is None:
            schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
            return NeedInput(requests={"approve": {"method": "elicitation/create",
                                                   "params": {"message": "Approve the job?", "requestedSchema": schema}}})
        return f"approved by {answer['content']['name']}"

    @app.resource("test://note", name="note", mime_type="text/plain", description="A note")
    def note(ctx: Context) -> str:
        return "a note"

    @app.tool(description="Announce that test://note was updated")
    async def touch(ctx: Context, arguments: dict[str, Any]) -> str:
        ctx.app.notify_resource_updated("test://note")
        return "touched"

    @app.prompt("greeting", description="Greets someone",
                arguments=[PromptArgument(name="name", description="Who", required=True)])
    async def greeting(ctx: Context, arguments: dict[str, str]) -> GetPromptResult:
        text = f"Say hello to {arguments['name']}"
        return GetPromptResult(messages=[PromptMessage(role="user", content=TextContent(text=text))])

    @app.completion
    async def complete(ctx: Context) -> CompleteResult:
        prefix = getattr(ctx.event, "argument_value", "")
        values = [n for n in NAMES if n.startswith(prefix)]
        return CompleteResult(completion=Completion(values=values, total=len(values), has_more=False))

    return app


async def main(transport: str) -> None:
    app = build_app()
    if transport == "stdio":
        await serve_stdio(app, grace_period=2)
        return
    async with trio.open_nursery() as nursery:
        host, port = await nursery.start(serve_http, app)
        print(json.dumps({"url": f"http://{host}:{port}/mcp"}), flush=True)
        await trio.to_thread.run_sync(sys.stdin.read, abandon_on_cancel=True)
        nursery.cancel_scope.cancel()


if __name__ == "__main__":
    trio.run(main, sys.argv[1] if len(sys.argv) > 1 else "http")
