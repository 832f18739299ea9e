"""The tasks extension end to end: an App's task tools behind our trio HTTP server and over stdio
(the conformance fixture as a subprocess), driven by our client (``Session.call_tool`` follows a
task to its result, answers its input requests, cancels it), and status notifications on a
subscriptions/listen stream (the runner skips those: this test proves them)."""

from __future__ import annotations

import sys
from pathlib import Path
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
import trio

from mcpwire import Client
from mcpwire.tasks import TASKS_EXTENSION, Task, TaskNotification
from mcpwire.types import ElicitResult, Implementation, InputRequest
from mcpwire_adapters import App, Context, NeedInput
from mcpwire_adapters.client.http import HttpClient
from mcpwire_adapters.serve.trio_h11.server import serve_http
from mcpwire_adapters.client.session import ServerError, TaskCancelled
from mcpwire_adapters.client.stdio import StdioClient

FIXTURE = Path(__file__).resolve().parents[3] / "conformance" / "fixture.py"
TASKS: dict[str, Any] = {"elicitation": {}, "extensions": {TASKS_EXTENSION: {}}}


def client(capabilities: dict[str, Any] | None = None) -> Client:
    return Client(Implementation(name="tasks-test", version="1"), capabilities=TASKS if capabilities is None else capabilities)


def accept(requests: dict[str, InputRequest]) -> dict[str, Any]:
    return {key: ElicitResult(action="accept", content={"confirm": True, "name": "Ada"}) for key in requests}


def make_app() -> tuple[App, dict[str, Any]]:
    app = App("tasks", "1.0", tasks=True)
    seen: dict[str, Any] = {"runs": 0, "cancelled": False}
    release = trio.Event()
    seen["release"] = release

    @app.tool(description="a task that waits until released", task_support="optional")
    async def wait(ctx: Context, arguments: dict[str, Any]) -> str:
        await ctx.start_task(status_message="waiting")
        try:
            await release.wait()
        except trio.Cancelled:
            seen["cancelled"] = True
            raise
        return "released"

    @app.tool(description="asks twice, one round after another", task_support="optional")
    async def interview(ctx: Context, arguments: dict[str, Any]) -> str | NeedInput:
        seen["runs"] += 1
        await ctx.start_task()
        answers = ctx.input_responses
        if "first" not in answers:
            return NeedInput(requests={"first": _ask("first?")}, state={"round": 1})
        if "second" not in answers:
            return NeedInput(requests={"second": _ask("second?")}, state={"round": 2})
        return f"done after {seen['runs']} runs, state {ctx.state}"

    @app.tool(description="a task whose work fails with a protocol error", task_support="required")
    async def broken(ctx: Context, arguments: dict[str, Any]) -> str:
        await ctx.start_task()
        from mcpwire import RemoteProtocolError

        raise RemoteProtocolError("Quota exceeded", code=-32000)

    return app, seen


def _ask(message: str) -> dict[str, Any]:
    return {"method": "elicitation/create", "params": {"message": message,
                                                       "requestedSchema": {"type": "object", "properties": {}}}}


Body = Callable[[str, dict[str, Any], trio.Nursery], Awaitable[None]]


def served(body: Body) -> None:
    """Run ``body(url, seen, nursery)`` against make_app() behind our trio HTTP server."""

    async def main() -> None:
        app, seen = make_app()
        async with trio.open_nursery() as nursery:
            host, port = await nursery.start(serve_http, app)
            await body(f"http://{host}:{port}/mcp", seen, nursery)
            nursery.cancel_scope.cancel()

    trio.run(main)


def test_a_call_that_becomes_a_task_is_followed_to_its_result_with_every_state_seen() -> None:
    async def body(url: str, seen: dict[str, Any], nursery: trio.Nursery) -> None:
        states: list[Task] = []
        async with HttpClient(url, client()) as c:
            nursery.start_soon(_release_later, seen["release"])
            with trio.fail_after(20):
                result = await c.call_tool("wait", {}, on_task=states.append)
        assert result.value.content[0].text == "released"
        assert states[0].status == "working" and states[0].status_message == "waiting"
        assert states[-1].status == "completed"

    served(body)


async def _release_later(release: trio.Event) -> None:
    await trio.sleep(0.3)
    release.set()


def test_input_rounds_of_a_task_are_answered_by_the_sessions_handler_each_key_once() -> None:
    asked: list[str] = []

    def answer(requests: dict[str, InputRequest]) -> dict[str, Any]:
        asked.extend(requests)
        return accept(requests)

    async def body(url: str, seen: dict[str, Any], nursery: trio.Nursery) -> None:
        async with HttpClient(url, client(), on_input=answer) as c:
            with trio.fail_after(20):
                result = await c.call_tool("interview", {})
        assert result.value.content[0].text == "done after 3 runs, state {'round': 2}"
        assert asked == ["first", "second"]

    served(body)


def test_a_failed_task_raises_its_error_and_a_required_task_tool_needs_the_extension() -> None:
    async def body(url: str, seen: dict[str, Any], nursery: trio.Nursery) -> None:
        async with HttpClient(url, client()) as c:
            with pytest.raises(ServerError) as failed:
                await c.call_tool("broken", {})
            assert failed.value.code == -32000 and failed.value.error.message == "Quota exceeded"
        async with HttpClient(url, client({})) as plain:
            with pytest.raises(ServerError) as refused:
                await plain.call_tool("broken", {})
            assert refused.value.code == -32021
            assert refused.value.data == {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}

    served(body)


def test_without_the_extension_a_task_tool_answers_synchronously() -> None:
    async def body(url: str, seen: dict[str, Any], nursery: trio.Nursery) -> None:
        async with HttpClient(url, client({})) as c:
            seen["release"].set()
            result = await c.call_tool("wait", {})  # ctx.start_task() did nothing: the request answered
            assert result.result_type == "complete" and result.value.content[0].text == "released"

    served(body)


def test_cancelling_a_followed_call_cancels_the_task_and_stops_its_work() -> None:
    async def body(url: str, seen: dict[str, Any], nursery: trio.Nursery) -> None:
        states: list[Task] = []
        async with HttpClient(url, client()) as c:
            with trio.move_on_after(0.5):
                await c.call_tool("wait", {}, on_task=states.append)
            task_id = states[0].task_id
            with trio.fail_after(10):
                while not seen["cancelled"]:
                    await trio.sleep(0.02)
            assert (await c.get_task(task_id)).status == "cancelled"

    served(body)


def test_tasks_cancel_from_another_client_ends_a_followed_call_with_task_cancelled() -> None:
    async def body(url: str, seen: dict[str, Any], nursery: trio.Nursery) -> None:
        states: list[Task] = []
        async with HttpClient(url, client()) as c, HttpClient(url, client()) as other:

            async def cancel_soon() -> None:
                while not states:
                    await trio.sleep(0.02)
                await other.cancel_task(states[0].task_id)

            nursery.start_soon(cancel_soon)
            with trio.fail_after(20), pytest.raises(TaskCancelled):
                await c.call_tool("wait", {}, on_task=states.append)
        assert seen["cancelled"]

    served(body)


def test_status_notifications_reach_a_listen_stream_watching_the_task() -> None:
    async def body(url: str, seen: dict[str, Any], nursery: trio.Nursery) -> None:
        async with HttpClient(url, client()) as c:
            created: list[Task] = []

            async def call() -> None:
                await c.call_tool("wait", {}, on_task=created.append)

            nursery.start_soon(call)
            with trio.fail_after(10):
                while not created:
                    await trio.sleep(0.02)
            task_id = created[0].task_id
            seen_statuses: list[str] = []
            async with c.listen({"taskIds": [task_id, "unknown"]}) as sub:
                assert sub.task_ids == [task_id]  # only the tasks that exist are agreed to
                seen["release"].set()
                with trio.fail_after(10):
                    async for event in sub:
                        if isinstance(event, TaskNotification):
                            assert event.task.task_id == task_id
                            seen_statuses.append(event.task.status)
                            if event.task.terminal:
                                result = event.task.result
                                assert isinstance(result, dict) and result["content"][0]["text"] == "released"
                                break
            assert seen_statuses[-1] == "completed"

    served(body)


def test_over_stdio_the_fixtures_task_tools_work_end_to_end() -> None:
    async def main() -> None:
        async with StdioClient([sys.executable, str(FIXTURE), "--transport", "stdio"], client(), on_input=accept) as c:
            with trio.fail_after(30):
                done = await c.call_tool("slow_compute", {"seconds": 0.2, "label": "stdio"})
                assert done.value.content[0].text.startswith("Computed stdio")
                confirmed = await c.call_tool("confirm_delete", {})
                assert confirmed.value.content[0].text == "Deleted"
                with pytest.raises(ServerError) as failed:
                    await c.call_tool("protocol_error_job", {})
                assert failed.value.code == -32603 and failed.value.error.message == "Internal error"
                tool_error = await c.call_tool("failing_job", {})
                assert tool_error.value.is_error is True

    anyio.run(main, backend="trio")
