"""A tiny MCP app served over stdio, for tests/adapters/test_stdio_server.py (run as a script).

Usage: python tests/stdio_app.py [--max-line-bytes N]. Diagnostics go to stderr only.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import trio
from mcpwire_adapters import App, Context, serve_stdio

def build_app(name: str = "stdio-test") -> App:
    """The app: echo, wait, progress, slow (reports its cancellation) and change."""
    app = App(name, "1.0")

    @app.tool(description="Echo the text back")
    async def echo(ctx: Context, arguments: dict[str, Any]) -> str:
        return str(arguments.get("text", ""))


    @app.tool(description="Wait for the given seconds, then answer")
    async def wait(ctx: Context, arguments: dict[str, Any]) -> str:
        await trio.sleep(float(arguments.get("seconds", 0)))
        return f"waited {arguments.get('seconds', 0)}"


    @app.tool(description="Report progress three times, then answer")
    async def progress(ctx: Context, arguments: dict[str, Any]) -> str:
        for step in (1, 2, 3):
            await ctx.progress(step, total=3)
        return "done"


    @app.tool(description="Sleep a long time; report cancellation on stderr")
    async def slow(ctx: Context, arguments: dict[str, Any]) -> str:
        try:
            await trio.sleep(60)
        except trio.Cancelled:
            print("slow cancelled", file=sys.stderr, flush=True)
            raise
        return "slept"


    @app.tool(description="Announce that the tools list changed")
    async def change(ctx: Context, arguments: dict[str, Any]) -> str:
        ctx.app.notify_list_changed("tools")
        return "changed"

    return app


app = build_app()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-line-bytes", type=int, default=4 * 1024 * 1024)
    options = parser.parse_args()
    trio.run(lambda: serve_stdio(app, max_line_bytes=options.max_line_bytes, grace_period=5))


if __name__ == "__main__":
    main()
