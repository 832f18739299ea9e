"""Our client drives 2025-11-25's experimental tasks (Basic > Utilities > Tasks) on a session:
``Session.call_tool(..., task={...})`` sends ``params.task``, polls ``tasks/get`` at the
advised interval (each state to ``on_task``), answers the task's requests with the call's input
handler, and takes the outcome from ``tasks/result``; a failed call raises its error, a
cancelled task :class:`TaskCancelled`, and a call the server runs plainly is an ordinary result.
Against our App behind the HTTP server on both loops, and over stdio."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from _backends import run, served

import mcpwire
from mcpwire import Client
from mcpwire.tasks import Task
from mcpwire.types import ElicitResult, Implementation, InputRequest
from mcpwire_adapters import App, Context, NeedInput
from mcpwire_adapters.client.http import HttpClient
from mcpwire_adapters.client.session import ServerError
from mcpwire_adapters.client.stdio import StdioClient

def era_client() -> Client:
    return Client(Implementation(name="c", version="1"), capabilities={"elicitation": {}}, protocol_version="2025-11-25")


def make_app() -> App:
    app = App("jobs", "1", tasks=True, input_timeout=10)

    @app.tool(description="works a while", task_support="optional")
    async def slow(ctx: Context, arguments: dict[str, Any]) -> str:
        await ctx.start_task(status_message="busy")
        await anyio.sleep(0.2)
        return "slow done"

    @app.tool(description="asks, then answers", task_support="required")
    async def vetted(ctx: Context, arguments: dict[str, Any]) -> Any:
        answer = ctx.input_responses.get("ok")
        if answer is None:
            return NeedInput(requests={"ok": {"method": "elicitation/create", "params": {
                "message": "ok?", "requestedSchema": {"type": "object", "properties": {}}}}})
        return f"vetted: {answer['action']}"

    @app.tool(description="fails", task_support="optional")
    async def broken(ctx: Context, arguments: dict[str, Any]) -> str:
        raise mcpwire.RemoteProtocolError("no quota", code=-32000)

    @app.tool(description="never ends", task_support="optional")
    async def forever(ctx: Context, arguments: dict[str, Any]) -> str:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    return app


def accept(requests: dict[str, InputRequest]) -> dict[str, Any]:
    return {key: ElicitResult(action="accept", content={}) for key in requests}


async def drive(c: Any) -> None:
    states: list[Task] = []
    done = await c.call_tool("slow", {}, task={"ttl": 60_000}, on_task=states.append)
    assert done.value.content[0].text == "slow done"
    assert states[0].status == "working" and states[-1].status == "completed"
    assert states[0].ttl_ms == 60_000 and isinstance(states[0].poll_interval_ms, int)
    vetted = await c.call_tool("vetted", {}, task={}, on_input=accept)
    assert vetted.value.content[0].text == "vetted: accept"
    with pytest.raises(ServerError) as failed:
        await c.call_tool("broken", {}, task={})
    assert failed.value.code == -32000 and failed.value.error.message == "no quota"
    plain = await c.call_tool("slow", {})  # no task asked: an ordinary call
    assert plain.result_type == "complete" and plain.value.content[0].text == "slow done"
    with pytest.raises(ServerError) as refused:
        await c.call_tool("vetted", {})  # a required task tool called plainly: -32601
    assert refused.value.code == -32601

    # Cancelling the followed call cancels the task (tasks/cancel), which another call then sees.
    seen: list[Task] = []
    with anyio.CancelScope() as scope:
        def first_state(task: Task) -> None:
            seen.append(task)
            scope.cancel()

        await c.call_tool("forever", {}, task={}, on_task=first_state)
    assert seen and (await c.get_task(seen[0].task_id)).status == "cancelled"
    with pytest.raises(ServerError) as again:
        await c.cancel_task(seen[0].task_id)
    assert again.value.code == -32602


def test_over_http_on_both_loops(backend: str) -> None:
    async def main() -> None:
        async with served(make_app()) as server, HttpClient(server.url, era_client()) as c:
            await drive(c)
            assert c.protocol_version == "2025-11-25"

    run(main, backend, timeout=40)


def test_over_stdio(tmp_path: Any) -> None:
    here = Path(__file__).resolve().parent
    script = tmp_path / "server.py"
    script.write_text(
        f"import sys\nsys.path[:0] = [{str(here)!r}, {str(here.parents[1])!r}]\nimport anyio\n"
        "from test_client_session_tasks import make_app\nfrom mcpwire_adapters import serve_stdio\n"
        "anyio.run(serve_stdio, make_app(), backend='trio')\n")

    async def main() -> None:
        async with StdioClient([sys.executable, str(script)], era_client()) as c:
            await drive(c)

    run(main, "trio", timeout=40)


def test_a_task_is_asked_only_of_a_2025_11_25_session() -> None:
    modern = Client(Implementation(name="c", version="1"))
    with pytest.raises(mcpwire.LocalProtocolError):
        modern.call_tool("slow", {}, task={})
