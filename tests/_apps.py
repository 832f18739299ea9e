"""Tools the driver tests' apps share: ``echo`` (the text back), ``progress`` (three
progress notifications, then ``done``) and ``stream`` (one progress notification, then a
wait until cancelled, counted by a :class:`StreamProbe`); and the task tools of the apps that
``mcpwire serve`` runs in the task and cluster tests: ``hold`` and ``confirm``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import trio
from mcpwire_adapters import App, Context, NeedInput

from mcpwire.types import CallToolResult

__all__ = ["CONFIRM", "StreamProbe", "add_echo_and_progress", "add_echo_and_stream", "add_hold_and_confirm", "asked_name"]

CONFIRM = {"method": "elicitation/create", "params": {"mode": "form", "message": "Go on?", "requestedSchema": {
    "type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}}}
"""The one elicitation the apps' tools ask (a yes/no ``ok``)."""


def asked_name(ctx: Context) -> str | NeedInput:
    """The name the client gave for the tool's elicitation "Name?", or the NeedInput that asks it."""
    answer = ctx.input_responses.get("name")
    if answer is None:
        schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        return NeedInput(requests={"name": {"method": "elicitation/create",
                                            "params": {"message": "Name?", "requestedSchema": schema}}})
    return str(answer["content"]["name"])


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


def add_hold_and_confirm(app: App, text: Callable[[str], CallToolResult]) -> None:
    """Register the task tools ``hold`` (works until cancelled or the server stops) and
    ``confirm`` (asks :data:`CONFIRM`, then answers ``confirmed: <ok>``), each answering through
    ``text``."""

    @app.tool("hold", description="Works until cancelled or the server stops", task_support="required")
    async def hold(ctx: Context, arguments: dict[str, Any]) -> CallToolResult:
        await ctx.start_task(status_message="holding")
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    @app.tool("confirm", description="Asks whether to go on, then answers", task_support="required")
    async def confirm(ctx: Context, arguments: dict[str, Any]) -> CallToolResult | NeedInput:
        await ctx.start_task()
        answer = ctx.input_responses.get("confirm")
        if answer is None:
            return NeedInput(requests={"confirm": CONFIRM})
        return text(f"confirmed: {answer.get('content', {}).get('ok')}")
