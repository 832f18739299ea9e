"""Concurrent requests on one HttpClient: each in flight on a keep-alive connection of its own,
at most ``max_connections`` at once, idle connections reused. Shown without timing: the tool
waits until every call is inside it at once, which a client that sent one request at a time
could never bring about; and once with timing, for what the docs promise (eight slow calls in
about the time of one). Each test runs on trio and on asyncio (``tests/_backends.py``)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
import trio

from mcpwire_adapters import App, Context
from mcpwire_adapters.client.http import HttpClient

from _backends import run, served

CALLS = 8


def make_app(together: int) -> tuple[App, dict[str, int]]:
    app = App("concurrency", "1.0")
    seen = {"inside": 0, "most": 0}
    everyone = trio.Event()  # the app runs on the server's trio loop, whatever loop the client is on

    @app.tool(description="returns once `together` calls are inside it at once")
    async def meet(ctx: Context, arguments: dict[str, Any]) -> str:
        seen["inside"] += 1
        seen["most"] = max(seen["most"], seen["inside"])
        if seen["inside"] >= together:
            everyone.set()
        await everyone.wait()
        seen["inside"] -= 1
        return "met"

    @app.tool(description="holds a while, counting the calls inside it")
    async def hold(ctx: Context, arguments: dict[str, Any]) -> str:
        seen["inside"] += 1
        seen["most"] = max(seen["most"], seen["inside"])
        await trio.sleep(0.05)
        seen["inside"] -= 1
        return "held"

    return app, seen


def test_eight_calls_are_in_flight_at_once_and_their_connections_are_kept(backend: str) -> None:
    async def main() -> None:
        app, seen = make_app(CALLS)
        async with served(app) as server:
            async with HttpClient(server.url) as c:
                results: list[str] = []

                async def call() -> None:
                    result = await c.call_tool("meet", {})
                    results.append(result.data["content"][0]["text"])

                with anyio.fail_after(20):  # serialised calls would wait here forever
                    async with anyio.create_task_group() as calls:
                        for _ in range(CALLS):
                            calls.start_soon(call)
                assert results == ["met"] * CALLS and seen["most"] == CALLS
                assert c.connections_opened == CALLS
                await c.call_tool("hold", {})  # an idle keep-alive connection is reused
                assert c.connections_opened == CALLS

    run(main, backend, timeout=30)


def test_eight_slow_calls_take_about_the_time_of_one(backend: str) -> None:
    """What docs/client.md promises, timed: eight calls that each hold 0.5 s, sent at once, are
    done well before the 4 s they would take one after another."""
    app = App("slow", "1.0")

    @app.tool(description="holds half a second")
    async def slow(ctx: Context, arguments: dict[str, Any]) -> str:
        await trio.sleep(0.5)  # the server's trio loop
        return "slow"

    async def main() -> None:
        async with served(app) as server, HttpClient(server.url) as c:
            await c.discover()
            started = anyio.current_time()
            async with anyio.create_task_group() as calls:
                for _ in range(CALLS):
                    calls.start_soon(c.call_tool, "slow", {})
            took = anyio.current_time() - started
            assert 0.5 <= took < 2.0, took

    run(main, backend, timeout=30)


@pytest.mark.parametrize("limit", [1, 3])
def test_max_connections_bounds_the_requests_in_flight(limit: int, backend: str) -> None:
    async def main() -> None:
        app, seen = make_app(CALLS)
        async with served(app) as server:
            async with HttpClient(server.url, max_connections=limit) as c:
                with anyio.fail_after(20):
                    async with anyio.create_task_group() as calls:
                        for _ in range(6):
                            calls.start_soon(c.call_tool, "hold", {})
                assert seen["most"] == limit and c.connections_opened == limit

    run(main, backend, timeout=30)


def test_max_connections_must_be_positive() -> None:
    with pytest.raises(ValueError):
        HttpClient("http://127.0.0.1:1/mcp", max_connections=0)
