"""Tools the driver tests' apps share: ``echo`` (the text back) and ``progress`` (three
progress notifications, then ``done``)."""

from __future__ import annotations

from typing import Any

from mcpwire_adapters import App, Context

__all__ = ["add_echo_and_progress"]


def add_echo_and_progress(app: App, *, messages: bool = False) -> None:
    """Register ``echo`` and ``progress`` on ``app`` (``messages``: each progress says ``step N``)."""

    @app.tool(description="Echo the text back")
    async def echo(ctx: Context, arguments: dict[str, Any]) -> str:
        return str(arguments.get("text", ""))

    @app.tool(description="Report progress three times, then answer")
    async def progress(ctx: Context, arguments: dict[str, Any]) -> str:
        for step in (1, 2, 3):
            await ctx.progress(step, total=3, message=f"step {step}" if messages else None)
        return "done"
