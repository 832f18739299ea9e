"""A tiny MCP app served over stdio, for tests/adapters/serve/test_stdio_server.py (run as a script).

Usage: python tests/stdio_app.py [--max-line-bytes N] [--max-in-flight N] [--max-held N] [--versions V,...]
[--backend trio|asyncio].
The app and the driver are anyio code: ``--backend`` picks the event loop (default trio).
Diagnostics go to stderr only.
"""

from __future__ import annotations

import argparse
import functools
import sys
from typing import Any

import anyio
from mcpwire.wire.versions import REVISIONS
from mcpwire_adapters import App, Context, NeedInput, serve_stdio

def build_app(name: str = "stdio-test", versions: tuple[str, ...] | None = None) -> App:
    """The app: echo, wait, busy (waits, and says how many ran at once at most), progress, slow
    (reports its cancellation), change, greet (asks the client for a name) and touch (updates a
    subscribable resource). ``versions`` limits the revisions served (``None``: all)."""
    app = App(name, "1.0", resource_subscribe=True, supported_versions=versions or REVISIONS)
    running = [0, 0]  # busy calls running now, the most ever at once

    @app.tool(description="Echo the text back")
    async def echo(ctx: Context, arguments: dict[str, Any]) -> str:
        return str(arguments.get("text", ""))


    @app.tool(description="Wait for the given seconds, then answer")
    async def wait(ctx: Context, arguments: dict[str, Any]) -> str:
        await anyio.sleep(float(arguments.get("seconds", 0)))
        return f"waited {arguments.get('seconds', 0)}"


    @app.tool(description="Wait for the given seconds; say the most calls of busy that ran at once")
    async def busy(ctx: Context, arguments: dict[str, Any]) -> str:
        running[0] += 1
        running[1] = max(running)
        try:
            await anyio.sleep(float(arguments.get("seconds", 0)))
        finally:
            running[0] -= 1
        return f"busy {arguments.get('n')}; at most {running[1]} at once"

    @app.tool(description="Report progress three times, then answer")
    async def progress(ctx: Context, arguments: dict[str, Any]) -> str:
        for step in (1, 2, 3):
            await ctx.progress(step, total=3)
        return "done"


    @app.tool(description="Sleep a long time; report cancellation on stderr")
    async def slow(ctx: Context, arguments: dict[str, Any]) -> str:
        try:
            await anyio.sleep(60)
        except anyio.get_cancelled_exc_class():
            print("slow cancelled", file=sys.stderr, flush=True)
            raise
        return "slept"


    @app.tool(description="Announce that the tools list changed")
    async def change(ctx: Context, arguments: dict[str, Any]) -> str:
        ctx.app.notify_list_changed("tools")
        return "changed"

    @app.tool(description="Ask the client for a name, then greet it")
    def greet(ctx: Context, arguments: dict[str, Any]) -> Any:
        answer = ctx.input_responses.get("name")
        if answer is None:
            schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
            request = {"method": "elicitation/create", "params": {"message": "Name?", "requestedSchema": schema}}
            return NeedInput(requests={"name": request})
        return f"Hello, {answer.get('content', {}).get('name', 'nobody')}"

    @app.resource("test://note", name="note", mime_type="text/plain")
    def note(ctx: Context) -> str:
        return "a note"

    @app.tool(description="Announce that test://note was updated")
    async def touch(ctx: Context, arguments: dict[str, Any]) -> str:
        ctx.app.notify_resource_updated("test://note")
        return "touched"

    return app


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-line-bytes", type=int, default=4 * 1024 * 1024)
    parser.add_argument("--max-in-flight", type=int, default=64)
    parser.add_argument("--max-held", type=int, default=64)
    parser.add_argument("--versions", help="comma-separated revisions to serve (default: all)")
    parser.add_argument("--backend", choices=("trio", "asyncio"), default="trio")
    options = parser.parse_args()
    app = build_app(versions=tuple(options.versions.split(",")) if options.versions else None)
    serve = functools.partial(serve_stdio, app, max_line_bytes=options.max_line_bytes, grace_period=5,
                              max_in_flight=options.max_in_flight, max_held=options.max_held)
    anyio.run(serve, backend=options.backend)


if __name__ == "__main__":
    main()
