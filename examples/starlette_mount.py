"""An mcpwire App mounted inside a Starlette application (FastAPI: the same with ``app.mount``).

    python examples/starlette_mount.py     # http://127.0.0.1:8000/ ; MCP endpoint http://127.0.0.1:8000/mcp/

How the path works when mounted: ``Mount("/mcp", app=...)`` passes the mounted app
``root_path="/mcp"``, and the ASGI adapter hands the engine the path *relative to the mount
point* ("/" for a request to /mcp/). The engine's ``HttpPolicy(path=...)`` is compared with
that relative path, so the App is built with ``HttpPolicy(path="/")`` and clients use the URL
``http://host/mcp/``. (Starlette answers a POST to ``/mcp`` without the slash with a 307
redirect to ``/mcp/``; to serve exactly ``/mcp``, use ``Route("/mcp", endpoint=AsgiApp(mcp))``
with the default policy path instead, see docs/asgi.md.)

Starlette does not pass lifespan events to mounted apps, so its own lifespan runs the App's
background group (``mcp.running()``: tasks) and ends the MCP listen streams at shutdown
(``mcp.close_streams()``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcpwire_adapters import App, AsgiApp, Context
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route

from mcpwire import HttpPolicy

TEXT_SCHEMA: dict[str, Any] = {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}}
COUNT_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}


def build_mcp() -> App:
    """The MCP application: its endpoint is "/" relative to where it is mounted."""
    mcp = App("starlette-example", "1.0", http=HttpPolicy(path="/"))

    @mcp.tool(description="Echo the text back", input_schema=TEXT_SCHEMA)
    async def echo(ctx: Context, arguments: dict[str, Any]) -> str:
        return str(arguments["text"])

    @mcp.tool(description="Count to n, reporting progress at each step", input_schema=COUNT_SCHEMA)
    async def count(ctx: Context, arguments: dict[str, Any]) -> str:
        n = int(arguments.get("n", 3))
        for i in range(1, n + 1):
            await ctx.progress(i, total=n, message=f"{i} of {n}")
        return f"counted to {n}"

    return mcp


def build(mcp: App | None = None) -> Starlette:
    """A Starlette site with a home page at / and the MCP endpoint at /mcp/."""
    mcp = mcp or build_mcp()

    @asynccontextmanager
    async def lifespan(site: Starlette) -> AsyncIterator[None]:
        async with mcp.running():  # the App's background work (tasks) while the site serves
            yield
            mcp.close_streams()  # end open listen streams with their result

    async def home(request: Request) -> PlainTextResponse:
        return PlainTextResponse("An MCP server lives at /mcp/\n")

    return Starlette(routes=[Route("/", home), Mount("/mcp", app=AsgiApp(mcp))], lifespan=lifespan)


app = build()

if __name__ == "__main__":
    import uvicorn

    # timeout_graceful_shutdown: uvicorn waits for open responses (listen streams) before the
    # lifespan shutdown; without a bound, Ctrl-C would wait for every client to leave.
    uvicorn.run(app, host="127.0.0.1", port=8000, timeout_graceful_shutdown=5)
