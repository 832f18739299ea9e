"""An App with tasks for tests/integration/test_tasks_durable.py, served by ``mcpwire serve``
(so the tasks live in the ``--tasks-db`` file): ``slow_compute`` works ``seconds`` then
answers, ``hold`` works until the server stops, ``confirm`` waits for one elicitation answer.
HTTP bodies are limited to 64 KiB, so a test can pass that limit cheaply."""

from __future__ import annotations

from typing import Any

import anyio
from mcpwire_adapters import App, Context

from _apps import add_hold_and_confirm

from mcpwire import HttpPolicy
from mcpwire.types import CallToolResult, TextContent

MAX_BODY = 64 * 1024

app = App("tasks-app", "1.0", tasks=True, http=HttpPolicy(max_body_bytes=MAX_BODY))


def _text(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=text)])


@app.tool("slow_compute", description="Works `seconds`, then answers `label`", task_support="optional")
async def slow_compute(ctx: Context, arguments: dict[str, Any]) -> CallToolResult:
    await ctx.start_task(status_message="computing")
    await anyio.sleep(float(arguments.get("seconds", 0)))
    return _text(f"computed {arguments.get('label', '')}")


add_hold_and_confirm(app, _text)
