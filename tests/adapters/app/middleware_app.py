"""The App of tests/adapters/app/test_middleware_drivers.py, one middleware chain served by every
driver (run as a script, it serves itself on stdio: ``python middleware_app.py [--backend trio|asyncio]``).

Its chain, in order: ``audit`` (every wrapped method: what it saw, read back with the ``audit``
tool), ``per_user`` (tools/list and tools/call: the ``admin`` tool is alice's alone, hidden from
and refused to anyone else) and ``stamp`` (tools/call: one text block added to each result).
"""

from __future__ import annotations

import argparse
import functools
from typing import Any

import anyio
import msgspec

import mcpwire
from mcpwire.types import CallToolResult, ListToolsResult, TextContent
from mcpwire_adapters import App, Context, serve_stdio
from mcpwire_adapters.app.middleware import CallNext


def subject(ctx: Context) -> str | None:
    return None if ctx.principal is None else ctx.principal.subject


def filter_tools(app: App) -> None:
    """The per-user filtering of docs/middleware.md: admin is for alice only (tools/list and
    tools/call)."""

    def allowed(ctx: Context, name: str) -> bool:
        return name != "admin" or subject(ctx) == "alice"

    @app.middleware(methods={"tools/list", "tools/call"})
    async def per_user(ctx: Context, call_next: CallNext) -> Any:
        event = ctx.event
        if isinstance(event, mcpwire.ToolCall) and not allowed(ctx, event.name):
            raise mcpwire.ProtocolError(f"Unknown tool: {event.name}", code=mcpwire.ErrorCode.INVALID_PARAMS)
        result = await call_next(ctx)
        if isinstance(result, ListToolsResult):
            result = msgspec.structs.replace(result, tools=[t for t in result.tools if allowed(ctx, t.name)])
        return result


def build_app() -> App:
    app = App("middleware-drivers", "1.0")
    seen: list[dict[str, Any]] = []

    @app.middleware
    async def audit(ctx: Context, call_next: CallNext) -> Any:
        seen.append({"method": ctx.method, "subject": subject(ctx), "session": ctx.session_id,
                     "name": getattr(ctx.event, "name", None)})
        return await call_next(ctx)

    filter_tools(app)

    @app.middleware(methods="tools/call")
    async def stamp(ctx: Context, call_next: CallNext) -> Any:
        result = await call_next(ctx)
        assert isinstance(result, CallToolResult)
        return msgspec.structs.replace(result, content=[*result.content, TextContent(text="[stamped]")])

    @app.tool(description="Echo the text")
    async def echo(text: str = "") -> str:
        return f"echo:{text}"

    @app.tool(description="For alice")
    async def admin() -> str:
        return "admin work"

    @app.tool(description="What the audit middleware saw, as JSON")
    async def audit_log() -> list[dict[str, Any]]:
        return list(seen)

    return app


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", choices=("trio", "asyncio"), default="trio")
    options = parser.parse_args()
    anyio.run(functools.partial(serve_stdio, build_app(), grace_period=5, quiet=True), backend=options.backend)


if __name__ == "__main__":
    main()
