"""Tools the driver tests' apps share: ``echo`` (the text back), ``progress`` (three
progress notifications, then ``done``) and ``stream`` (one progress notification, then a
wait until cancelled, counted by a :class:`StreamProbe`)."""

from __future__ import annotations

from typing import Any

import trio
from mcpwire_adapters import App, Context

__all__ = ["StreamProbe", "add_echo_and_progress", "add_echo_and_stream"]


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


class StreamProbe:
    """What the ``stream`` tool counts: handlers started, and those that saw their cancellation."""

    def __init__(self) -> None:
        self.streaming = 0
        self.cancelled = 0


def add_echo_and_stream(app: App, probe: StreamProbe) -> None:
    """Register ``echo`` and ``stream`` (progress once, then wait until cancelled) on ``app``."""

    @app.tool(description="Echo the text back")
    async def echo(ctx: Context, arguments: dict[str, Any]) -> str:
        return str(arguments.get("text", ""))

    @app.tool(description="Report progress once, then wait until cancelled")
    async def stream(ctx: Context, arguments: dict[str, Any]) -> str:
        probe.streaming += 1
        await ctx.progress(1, total=2)
        try:
            await trio.sleep_forever()
        except trio.Cancelled:
            probe.cancelled += 1
            raise
        raise AssertionError("unreachable")
