"""The demo: an MCP 2026-07-28 server and the mcpwire client talking over HTTP on 127.0.0.1.

    python examples/demo.py

It starts a small server (trio + h11, port chosen by the OS), then drives it with the mcpwire
client: discovery, listing, a tool call that streams progress over SSE, a tool that asks the
user a question mid-call (a multi round-trip request: the server answers ``input_required``,
the client answers and retries with the signed ``requestState``), a resource read, a prompt,
and the errors a real server gives. Everything runs in one process and stops by itself.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import trio

from mcpwire import Client
from mcpwire.types import ElicitRequest, ElicitRequestFormParams, ElicitResult, Implementation
from mcpwire.types import GetPromptResult, PromptArgument, PromptMessage, TextContent
from mcpwire_adapters import App, Context, NeedInput, serve_http
from mcpwire_adapters.client.http import HttpClient, ServerError


def build_demo_app() -> App:
    app = App("mcpwire-demo", "0.1.0", completions=True)

    class AddArgs(msgspec.Struct):
        a: float
        b: float

    @app.tool(description="Add two numbers", arguments_type=AddArgs)
    async def add(ctx: Context, args: AddArgs) -> str:
        return f"{args.a} + {args.b} = {args.a + args.b}"

    @app.tool(description="Count to n, reporting progress", input_schema={
        "type": "object", "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 10}}, "required": ["n"]})
    async def count(ctx: Context, args: dict[str, Any]) -> str:
        for i in range(1, args["n"] + 1):
            await ctx.progress(i, total=args["n"], message=f"step {i}")
            await trio.sleep(0.05)
        return f"counted to {args['n']}"

    @app.tool(description="Greet the user, asking for their name first", input_schema={"type": "object"})
    async def greet(ctx: Context, args: dict[str, Any]) -> str | NeedInput:
        answer = ctx.input_responses.get("name")
        if answer is None or answer.get("action") != "accept":
            question = ElicitRequest(params=ElicitRequestFormParams(
                message="What is your name?",
                requested_schema={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
            ))
            return NeedInput(requests={"name": question}, state={"asked": 1})
        return f"Hello, {answer['content']['name']}!"

    @app.resource("demo://readme", name="readme", mime_type="text/plain", description="What this is")
    async def readme(ctx: Context) -> str:
        return "mcpwire: a sans-IO engine for MCP 2026-07-28."

    @app.prompt("haiku", description="Ask for a haiku", arguments=[PromptArgument(name="topic", required=True)])
    async def haiku(ctx: Context, arguments: dict[str, str]) -> GetPromptResult:
        text = f"Write a haiku about {arguments['topic']}."
        return GetPromptResult(messages=[PromptMessage(role="user", content=TextContent(text=text))])

    return app


def show(label: str, value: Any) -> None:
    text = json.dumps(msgspec.to_builtins(value), ensure_ascii=False)
    print(f"  {label}: {text[:160]}{'...' if len(text) > 160 else ''}")


async def main() -> None:
    app = build_demo_app()
    async with trio.open_nursery() as nursery:
        host, port = await nursery.start(serve_http, app, "127.0.0.1", 0)
        url = f"http://{host}:{port}/mcp"
        print(f"server: mcpwire-demo listening on {url}\n")

        client = Client(Implementation(name="mcpwire-demo-client", version="0.1.0"),
                        capabilities={"elicitation": {"form": {}}})
        async with HttpClient(url, client) as c:
            print("1. server/discover")
            found = await c.discover()
            show("result", found.data)

            print("\n2. tools/list, resources/list, prompts/list")
            for tool in await c.list_tools():
                print(f"  tool {tool.name}: {tool.description}")
            for resource in await c.list_resources():
                print(f"  resource {resource.uri}")
            for prompt in await c.list_prompts():
                print(f"  prompt {prompt.name}")

            print("\n3. tools/call add (arguments decoded straight into a msgspec Struct)")
            show("result", (await c.call_tool("add", {"a": 2, "b": 40})).data)

            print("\n4. tools/call count with a progressToken: the response switches to SSE")
            result = await c.call_tool("count", {"n": 3}, on_progress=lambda p: print(
                f"  progress {p.progress}/{p.total}: {p.message}"))
            show("result", result.data)

            print("\n5. tools/call greet: the server needs input (multi round-trip request)")

            def answer(requests: dict[str, Any]) -> dict[str, Any]:
                for key, request in requests.items():
                    print(f"  server asks ({key}): {request.params.message}  -> answering 'Ada'")
                return {key: ElicitResult(action="accept", content={"name": "Ada"}) for key in requests}

            show("result", (await c.call_tool("greet", {}, on_input=answer)).data)

            print("\n6. resources/read and prompts/get")
            show("read", (await c.read_resource("demo://readme")).data)
            show("prompt", (await c.get_prompt("haiku", {"topic": "the sea"})).data)

            print("\n7. errors are answers, with the right code")
            for name, args in (("add", {"a": "two"}), ("nope", {})):
                try:
                    show(f"{name} result", (await c.call_tool(name, args)).data)
                except ServerError as exc:
                    print(f"  {name}: JSON-RPC error {exc.code} {exc.error.message}")
        print("\ndone: every step above went over HTTP on 127.0.0.1.")
        nursery.cancel_scope.cancel()


if __name__ == "__main__":
    trio.run(main)
