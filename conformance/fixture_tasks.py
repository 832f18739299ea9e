"""The conformance fixture's tools for the tasks extension (the runner's ``tasks-*`` scenarios).

Ordinary App tools on the public API (``task_support``, ``ctx.start_task``, ``NeedInput``): what
each does is what the runner's scenario descriptions ask of ``tools/list``.

- ``greet``: never a task; ``Hello, {name}!``.
- ``slow_compute``: a task whenever the client declared the extension (``ctx.start_task()``
  does nothing for a client that did not: the request is answered); sleeps ``seconds``, then
  answers (a ``tasks/cancel`` while it sleeps leaves the task ``cancelled``).
- ``failing_job``: task support ``required`` (-32021 without the extension); a task that ends
  with a tool execution error (``isError``, status ``completed``).
- ``protocol_error_job``: a task whose work fails (status ``failed`` with a JSON-RPC error).
- ``confirm_delete``: a task that asks one elicitation through ``tasks/get`` and finishes
  when ``tasks/update`` answers it.
- ``multi_input``: a task that asks two elicitations at once (answered one at a time).
- ``test_tool_with_task``: task support ``required``; asks the user's name with a multi
  round-trip round first (no task yet), then becomes a task whose result holds the name.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcpwire_adapters import App, Context, NeedInput

from mcpwire.types import CallToolResult, TextContent

__all__ = ["task_tools"]

_NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
_SECONDS_SCHEMA = {
    "type": "object",
    "properties": {"seconds": {"type": "number", "minimum": 0}, "label": {"type": "string"}},
}
_NO_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}}


def _text(text: str, *, is_error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=text)], is_error=is_error)


def _confirm(message: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}
    return {"method": "elicitation/create", "params": {"mode": "form", "message": message, "requestedSchema": schema}}


def _ask_name() -> dict[str, Any]:
    schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    return {"method": "elicitation/create", "params": {"mode": "form", "message": "What is your name?",
                                                       "requestedSchema": schema}}


def _content(answer: dict[str, Any] | None) -> dict[str, Any]:
    content = (answer or {}).get("content")
    return content if isinstance(content, dict) else {}


def task_tools(app: App) -> None:
    """Register the tasks scenarios' tools on ``app`` (an App made with ``tasks=...``)."""

    @app.tool("greet", description="Greets by name (never a task)", input_schema=_NAME_SCHEMA)
    async def greet(ctx: Context, arguments: Any) -> CallToolResult:
        return _text(f"Hello, {arguments['name']}!")

    @app.tool("slow_compute", description="Sleeps `seconds`, then answers; a task when the client allows",
              input_schema=_SECONDS_SCHEMA, task_support="optional")
    async def slow_compute(ctx: Context, arguments: Any) -> CallToolResult:
        seconds = float(arguments.get("seconds", 1))
        label = str(arguments.get("label", ""))
        await ctx.start_task(status_message=f"Computing {label}".strip())  # nothing without the extension
        await anyio.sleep(seconds)
        return _text(f"Computed {label} in {seconds:g} s".replace("  ", " "))

    @app.tool("failing_job", description="A task that ends with a tool execution error",
              input_schema=_NO_ARGUMENTS, task_support="required")
    async def failing_job(ctx: Context, arguments: Any) -> CallToolResult:
        await ctx.start_task()
        await anyio.sleep(0.5)
        return _text("The job failed: the input could not be processed", is_error=True)

    @app.tool("protocol_error_job", description="A task whose work fails with a JSON-RPC error",
              input_schema=_NO_ARGUMENTS, task_support="optional")
    async def protocol_error_job(ctx: Context, arguments: Any) -> CallToolResult:
        await ctx.start_task()
        await anyio.sleep(0.2)
        raise RuntimeError("the job's worker crashed")  # answered -32603 Internal error, cause kept in the log

    @app.tool("confirm_delete", description="A task that asks for a confirmation, then deletes",
              input_schema=_NO_ARGUMENTS, task_support="optional")
    async def confirm_delete(ctx: Context, arguments: Any) -> CallToolResult | NeedInput:
        await ctx.start_task()
        answer = ctx.input_responses.get("confirm")
        if answer is None:
            return NeedInput(requests={"confirm": _confirm("Delete the file?")})
        confirmed = answer.get("action") == "accept" and _content(answer).get("confirm") is True
        return _text("Deleted" if confirmed else "Not deleted")

    @app.tool("multi_input", description="A task that asks two questions at once",
              input_schema=_NO_ARGUMENTS, task_support="optional")
    async def multi_input(ctx: Context, arguments: Any) -> CallToolResult | NeedInput:
        await ctx.start_task()
        answers = ctx.input_responses
        if "first" not in answers or "second" not in answers:
            return NeedInput(requests={"first": _confirm("First question?"), "second": _confirm("Second question?")})
        return _text(f"Answers: first={answers['first'].get('action')}, second={answers['second'].get('action')}")

    @app.tool("test_tool_with_task", description="Asks the user's name (multi round-trip), then works as a task",
              input_schema=_NO_ARGUMENTS, task_support="required")
    async def tool_with_task(ctx: Context, arguments: Any) -> CallToolResult | NeedInput:
        name = _content(ctx.input_responses.get("user_name")).get("name")
        if not isinstance(name, str):
            return NeedInput(requests={"user_name": _ask_name()})  # before the task: a multi round-trip round
        await ctx.start_task()
        await anyio.sleep(0.2)
        return _text(f"Hello, {name}! (gathered before the task)")
