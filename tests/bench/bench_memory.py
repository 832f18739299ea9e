"""Memory per in-flight request and per open listen stream (tracemalloc), and import cost.

Memory: N requests (or listen streams) are admitted and held open in-process; the traced
memory after minus before, divided by N, is the cost of one. Each request is built inside
the measurement from its own copy of the body bytes (a host holds those too), so the figure
covers what one in-flight request keeps alive: the parsed request, the exchange and its event.

- ``ours.engine``: ``Server.receive_http`` results held (no handler runs);
- ``ours.app``: the same through the adapters' ``App.dispatch``, N trio tasks parked inside a
  handler (what a real server holds per request, minus the socket);
- ``ours.asgi`` / ``sdk``: N concurrent calls into our AsgiApp / the SDK's ASGI app on one
  asyncio loop, each parked inside an async tool;
- ``ours.listen``: ``subscriptions/listen`` streams admitted and started.

Import: a fresh interpreter per sample times ``import X`` (wall clock, ``perf_counter_ns``, and
the process's CPU time, ``process_time_ns``, which another process's load inflates less) and
counts the modules it added to ``sys.modules``; samples alternate between the modules compared.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import subprocess
import sys
import tracemalloc
from pathlib import Path
from collections.abc import Callable
from typing import Any

from mcpwire.types import CallToolResult, TextContent, Tool
from mcpwire import HttpExchange, HttpListenStream, HttpRequest, Keyring, Server

from ._workload import INFO, NOW, SECRET, _body, _meta, headers, small_server

REPO = Path(__file__).resolve().parents[2]

PARK = _body(7, "tools/call", {"name": "park", "arguments": {}, "_meta": _meta()})
PARK_HEADERS = headers("tools/call", "park", PARK)
LISTEN = _body(8, "subscriptions/listen", {"notifications": {"toolsListChanged": True}, "_meta": _meta()})
LISTEN_HEADERS = headers("subscriptions/listen", None, LISTEN)


def _traced(build: Callable[[], Any]) -> tuple[int, Any]:
    """Bytes still allocated by ``build()`` while its result is alive."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        held = build()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return after - before, held


def _request(body: bytes, hdrs: list[tuple[bytes, bytes]]) -> HttpRequest:
    # A fresh copy of the bytes, as if read from a socket.
    copied = [(k, bytes(v)) for k, v in hdrs]
    return HttpRequest(method="POST", target="/mcp", headers=copied, body=bytes(bytearray(body)))


def engine_in_flight(n: int) -> float:
    server = small_server()
    server.add_tool(Tool(name="park", description="Waits until released", input_schema={"type": "object"}))

    def build() -> list[Any]:
        return [server.receive_http(_request(PARK, PARK_HEADERS), now=NOW) for _ in range(n)]

    size, held = _traced(build)
    assert all(isinstance(x, HttpExchange) for x in held)
    return size / n


def app_in_flight(n: int) -> float:
    import trio

    from mcpwire_adapters import App, Context

    app = App("bench", "1.0", keyring=Keyring.single(SECRET), validator=None)
    gate = trio.Event()
    parked = [0]
    all_in = trio.Event()

    @app.tool(description="Waits until released")
    async def park(ctx: Context, args: Any) -> CallToolResult:
        parked[0] += 1
        if parked[0] == n:
            all_in.set()
        await gate.wait()
        return CallToolResult(content=[TextContent(text="ok")])

    sent: list[Any] = []

    async def send(out: Any) -> None:
        sent.append(out)

    result: list[int] = []

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            gc.collect()
            tracemalloc.start()
            before = tracemalloc.get_traced_memory()[0]
            for _ in range(n):
                exchange = app.server.receive_http(_request(PARK, PARK_HEADERS), now=NOW)
                assert isinstance(exchange, HttpExchange)
                nursery.start_soon(app.dispatch, exchange, send)
            await all_in.wait()
            gc.collect()
            result.append(tracemalloc.get_traced_memory()[0] - before)
            tracemalloc.stop()
            gate.set()

    trio.run(main)
    assert len(sent) == n
    return result[0] / n


def _asgi_in_flight(app: Any, lifespan: Any, state: dict[str, Any], n: int) -> float:
    """N concurrent calls of the ``park`` tool into an ASGI app, measured while all are parked."""
    from ._asgi import AsgiDriver

    driver = AsgiDriver(app, lifespan)

    async def main() -> int:
        state["gate"], state["all_in"], state["parked"], state["n"] = asyncio.Event(), asyncio.Event(), 0, n
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        tasks = [asyncio.ensure_future(driver.call(bytes(bytearray(PARK)), list(PARK_HEADERS))) for _ in range(n)]
        await state["all_in"].wait()
        gc.collect()
        size = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        state["gate"].set()
        results = await asyncio.gather(*tasks)
        assert all(status == 200 and b'"text":"ok"' in body for status, body in results), results[:1]
        return size

    try:
        return float(driver.run(main())) / n
    finally:
        driver.close()


async def _park(state: dict[str, Any]) -> None:
    state["parked"] += 1
    if state["parked"] == state["n"]:
        state["all_in"].set()
    await state["gate"].wait()


def sdk_in_flight(n: int) -> float:
    from mcp.server import MCPServer

    from ._workload import sdk_asgi

    srv = MCPServer("bench", version="1.0", log_level="WARNING")
    state: dict[str, Any] = {}

    @srv.tool(description="Waits until released", structured_output=False)
    async def park() -> str:
        await _park(state)
        return "ok"

    return _asgi_in_flight(sdk_asgi(srv), srv.session_manager.run, state, n)


def asgi_in_flight(n: int) -> float:
    from mcpwire_adapters import App, Context, asgi_app

    app = App("bench", "1.0", keyring=Keyring.single(SECRET), validator=None)
    state: dict[str, Any] = {}

    @app.tool(description="Waits until released")
    async def park(ctx: Context, args: Any) -> CallToolResult:
        await _park(state)
        return CallToolResult(content=[TextContent(text="ok")])

    return _asgi_in_flight(asgi_app(app), None, state, n)


def listen_streams(n: int) -> float:
    server = Server(INFO, keyring=Keyring.single(SECRET), max_listen_streams=n + 10, list_changed=True)

    def build() -> list[Any]:
        out = []
        for _ in range(n):
            stream = server.receive_http(_request(LISTEN, LISTEN_HEADERS), now=NOW)
            out.append((stream, stream.start()))  # type: ignore[union-attr]
        return out

    size, held = _traced(build)
    assert all(isinstance(s, HttpListenStream) for s, _ in held) and server.open_listeners == n
    return size / n


# -- import cost ---------------------------------------------------------------------------------------

_PROBE = (
    "import sys, time\n"
    "b = set(sys.modules)\n"
    "c = time.process_time_ns()\n"
    "t = time.perf_counter_ns()\n"
    "import {module}\n"
    "t = time.perf_counter_ns() - t\n"
    "c = time.process_time_ns() - c\n"
    "print(t, c, *sorted(set(sys.modules) - b))\n"
)

# The distribution's own packages, per module imported: the rest is what it pulls in.
OWN_PACKAGES = {"mcpwire": ("mcpwire",), "mcpwire_adapters": ("mcpwire", "mcpwire_adapters"),
                "mcp.server": ("mcp", "mcp_types"), "msgspec": ("msgspec",)}


def import_cost(modules: list[str], samples: int) -> dict[str, dict[str, Any]]:
    """Median import time (ms) and modules added (in all, and outside the distribution's own
    packages), per module, a fresh interpreter per sample."""
    runs: dict[str, list[tuple[int, int, list[str]]]] = {m: [] for m in modules}
    for i in range(samples + 1):
        for module in modules if i % 2 == 0 else list(reversed(modules)):
            done = subprocess.run([sys.executable, "-c", _PROBE.format(module=module)], cwd=REPO,
                                  capture_output=True, text=True, check=True)
            ns, cpu_ns, *added = done.stdout.split()
            if i > 0:  # the first pass writes bytecode caches; not timed
                runs[module].append((int(ns), int(cpu_ns), added))
    out: dict[str, dict[str, Any]] = {}
    for m, r in runs.items():
        own = OWN_PACKAGES.get(m, (m.split(".")[0],))
        added = r[-1][2]
        foreign = [name for name in added if name.split(".")[0] not in own]
        out[m] = {"ms": statistics.median(ns for ns, _, _ in r) / 1e6,
                  "cpu_ms": statistics.median(cpu for _, cpu, _ in r) / 1e6, "modules": len(added),
                  "foreign_modules": len(foreign), "samples": len(r), "added": added}
    return out
