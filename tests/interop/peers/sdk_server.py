"""The official Python SDK (``mcp`` 2.3.0) as a server for mcpwire's client: the same features as
our_server.py, on MCPServer. Streamable HTTP prints {"url": ...} and stops at the end of stdin:

    python tests/interop/peers/sdk_server.py http|stdio [plain]

MCPServer itself declares neither ``logging`` nor ``resources.subscribe``; this server adds the
initialize-era ``logging/setLevel`` and ``resources/subscribe``/``unsubscribe`` handlers on its
low-level server, as an application would (the SDK leaves level filtering to the application).
``plain`` leaves them out: the SDK's defaults.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
from typing import Annotated, Any

from pydantic import BaseModel

from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve, Sample
from mcp_types import (Completion, CreateMessageResult, EmptyResult, LoggingLevel, SamplingMessage, SetLevelRequestParams, SubscribeRequestParams,
                       TextContent, UnsubscribeRequestParams)

NAMES = ("Ada", "Alan", "Grace")
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


class Name(BaseModel):
    name: str


# Resolvers ask in the negotiated era's way: a request mid-call up to 2025-11-25, an
# InputRequiredResult (multi round-trip) from 2026-07-28, where ctx.elicit has no back-channel.
# At module level: the SDK evaluates the tools' (string) annotations in the module's namespace.
def ask_name() -> Elicit[Name]:
    return Elicit("Your name?", Name)


def ask_model() -> Sample:
    question = SamplingMessage(role="user", content=TextContent(type="text", text="Capital of France?"))
    return Sample([question], max_tokens=50)


def session_key(ctx: ServerRequestContext[Any, Any]) -> str:
    """The HTTP session's id; "" on stdio (one connection per process). The SDK builds a
    ServerSession per request, so the session object cannot key anything."""
    request: Any = ctx.request
    headers = getattr(request, "headers", None)
    return str(headers.get("mcp-session-id", "")) if headers is not None else ""


def build(plain: bool = False) -> MCPServer:
    server = MCPServer("python-sdk-interop", version="2.3.0", log_level="WARNING")
    # Per session: the level logging/setLevel asked for, the subscribed URIs.
    levels: dict[str, str] = {}
    subscribed: dict[str, set[str]] = {}

    async def log(ctx: Context, level: LoggingLevel, text: str) -> None:
        if LEVELS.index(level) >= LEVELS.index(levels.get(session_key(ctx.request_context), "debug")):
            await ctx.log(level, text)

    @server.tool(description="Echo the text back")
    async def echo(text: str) -> str:
        return text

    @server.tool(description="Report progress 1..3")
    async def count(ctx: Context) -> str:
        for step in (1, 2, 3):
            await ctx.report_progress(step, 3, f"step {step}")
        return "counted"

    @server.tool(description="Log a debug and a warning message")
    async def chatty(ctx: Context) -> str:
        await log(ctx, "debug", "quiet detail")
        await log(ctx, "warning", "loud news")
        return "logged"

    @server.tool(description="Announce that test://note was updated")
    async def touch(ctx: Context) -> str:
        if "test://note" in subscribed.get(session_key(ctx.request_context), set()):
            await ctx.session.send_resource_updated("test://note")
        await ctx.notify_resource_updated("test://note")  # subscriptions/listen streams (2026-07-28)
        return "touched"

    @server.tool(description="Ask the client for a name")
    async def greet(answer: Annotated[Name, Resolve(ask_name)]) -> str:
        return f"Hello, {answer.name}!"

    @server.tool(description="Ask the client's model")
    async def ask_llm(answer: Annotated[CreateMessageResult, Resolve(ask_model)]) -> str:
        content: Any = answer.content
        return f"The model said: {content.text}"

    @server.resource("test://note", mime_type="text/plain", description="A note")
    def note() -> str:
        return "a note"

    @server.prompt(description="Greets someone")
    def greeting(name: str) -> str:
        return f"Say hello to {name}"

    @server.completion()  # type: ignore[untyped-decorator, no-untyped-call]  # the SDK leaves it untyped
    async def complete(ref: Any, argument: Any, context: Any) -> Completion:
        return Completion(values=[n for n in NAMES if n.startswith(argument.value)])

    if plain:
        return server

    async def set_level(ctx: ServerRequestContext[Any, Any], params: SetLevelRequestParams) -> EmptyResult:
        levels[session_key(ctx)] = params.level
        return EmptyResult()

    async def subscribe(ctx: ServerRequestContext[Any, Any], params: SubscribeRequestParams) -> EmptyResult:
        subscribed.setdefault(session_key(ctx), set()).add(str(params.uri))
        return EmptyResult()

    async def unsubscribe(ctx: ServerRequestContext[Any, Any], params: UnsubscribeRequestParams) -> EmptyResult:
        subscribed.get(session_key(ctx), set()).discard(str(params.uri))
        return EmptyResult()

    low = server._lowlevel_server  # MCPServer's own completion() registers the same way
    low.add_request_handler("logging/setLevel", SetLevelRequestParams, set_level)
    low.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)
    low.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, unsubscribe)
    return server


def main(transport: str, plain: bool = False) -> None:
    server = build(plain)
    if transport == "stdio":
        server.run("stdio")
        return
    import uvicorn

    app = server.streamable_http_app()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections queue from now on, before uvicorn accepts them
    config = uvicorn.Config(app, log_level="warning")
    runner = uvicorn.Server(config)

    def stop_at_eof() -> None:
        sys.stdin.read()
        runner.should_exit = True

    threading.Thread(target=stop_at_eof, daemon=True).start()
    print(json.dumps({"url": f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"}), flush=True)
    runner.run(sockets=[sock])


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "http", plain="plain" in sys.argv[2:])
