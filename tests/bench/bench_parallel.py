"""N parallel tools/call on one client: our HttpClient against the SDK's client, same server.

One server, our trio + h11 driver (``python -m tests.bench.bench_parallel serve``), in a
process of its own, with two tools: ``sleep`` waits a fixed time (50 ms by default) and
answers, ``echo`` answers at once. Each client runs in a fresh process of its own
(``python -m tests.bench.bench_parallel client ours|ours-asyncio|sdk PORT N SLEEP_MS REPEATS SECONDS``,
printing a JSON result), so neither shares a GIL or an event loop with the server or the other:

- **latency**: the wall time of one ``sleep`` call, and of N ``sleep`` calls started together
  on the one client (its task group), each the median of ``REPEATS`` tries. A client that
  really runs requests side by side takes about one sleep for N calls (ratio ~1); one that
  runs them one after another takes N sleeps (ratio ~N).
- **throughput**: N tasks call ``echo`` back to back on the one client for ``SECONDS``;
  calls per second, and the client process's CPU time per call.

Ours: ``HttpClient(url, max_connections=max(8, N))`` (a connection per request in flight, kept
alive), under trio (``ours``) and, the same class, under asyncio (``ours-asyncio``). The SDK's: ``mcp.Client(url, cache=None)`` (its streamable HTTP client
session over httpx, a task per request; response caching off, no tools/call is cacheable
anyway) under asyncio. Both first call each tool once and run one warm-up batch, so
connections are open and first-call paths done before anything is timed. Every answer is
checked (the tool's text), so no figure can time an error.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio

from .bench_e2e import ServerProcess, serve_trio

MODULE = "tests.bench.bench_parallel"
Call = Callable[[str, dict[str, Any]], Awaitable[str]]


# -- the server ---------------------------------------------------------------------------------------


def serve(sleep_ms: float) -> None:
    """Our trio server with ``sleep`` and ``echo``; prints the bound port, serves until stdin closes."""
    import trio
    from mcpwire_adapters import App, Context

    app = App("bench-parallel", "1.0", validator=None)

    @app.tool(description="Wait a fixed time, then answer", input_schema={"type": "object"})
    async def sleep(ctx: Context, arguments: dict[str, Any]) -> str:
        await trio.sleep(sleep_ms / 1000)
        return "slept"

    @app.tool(description="Echo the text back", input_schema={"type": "object"})
    async def echo(ctx: Context, arguments: dict[str, Any]) -> str:
        return str(arguments.get("text", ""))

    serve_trio(app)


# -- the clients ----------------------------------------------------------------------------------------


class _Ours:
    """Our HttpClient: ``call`` returns the first text block of the result."""

    def __init__(self, url: str, n: int) -> None:
        from mcpwire_adapters.client.http import HttpClient

        self.http = HttpClient(url, max_connections=max(8, n))

    async def __aenter__(self) -> Call:
        await self.http.__aenter__()

        async def call(name: str, arguments: dict[str, Any]) -> str:
            result = await self.http.call_tool(name, arguments)
            return str(result.data["content"][0]["text"])

        return call

    async def __aexit__(self, *exc: object) -> None:
        await self.http.__aexit__(*exc)


class _Sdk:
    """The SDK's ``mcp.Client`` over streamable HTTP."""

    def __init__(self, url: str, n: int) -> None:
        from mcp import Client

        self.client = Client(url, cache=None)

    async def __aenter__(self) -> Call:
        await self.client.__aenter__()

        async def call(name: str, arguments: dict[str, Any]) -> str:
            result = await self.client.call_tool(name, arguments)
            if result.is_error:
                raise RuntimeError(f"{name} failed: {result.content}")
            return str(result.content[0].text)  # type: ignore[union-attr]

        return call

    async def __aexit__(self, *exc: object) -> None:
        await self.client.__aexit__(None, None, None)


async def _together(call: Call, n: int, name: str, arguments: dict[str, Any], expect: str) -> int:
    """Start ``n`` calls at once; the wall time (ns) until the last answer."""
    answers: list[str] = []

    async def one() -> None:
        answers.append(await call(name, arguments))

    t0 = time.perf_counter_ns()
    async with anyio.create_task_group() as tg:
        for _ in range(n):
            tg.start_soon(one)
    elapsed = time.perf_counter_ns() - t0
    if answers != [expect] * n:
        raise RuntimeError(f"unexpected answers to {name}: {answers[:3]}")
    return elapsed


async def _throughput(call: Call, n: int, seconds: float) -> tuple[int, float, float]:
    """``n`` callers call ``echo`` back to back for ``seconds``: (calls, wall s, CPU s)."""
    done = [0]
    deadline = time.perf_counter() + seconds

    async def caller(k: int) -> None:
        text = f"hello {k}"
        while time.perf_counter() < deadline:
            if await call("echo", {"text": text}) != text:
                raise RuntimeError("echo answered something else")
            done[0] += 1

    cpu0, t0 = time.process_time(), time.perf_counter()
    async with anyio.create_task_group() as tg:
        for k in range(n):
            tg.start_soon(caller, k)
    return done[0], time.perf_counter() - t0, time.process_time() - cpu0


async def _measure(make: Callable[[], AbstractAsyncContextManager[Call]], n: int, repeats: int,
                   seconds: float) -> dict[str, Any]:
    async with make() as call:
        await call("sleep", {})  # first calls: discovery, connections, lazy paths
        await call("echo", {"text": "warm"})
        await _together(call, n, "sleep", {}, "slept")  # opens the connections N calls need
        one = [await _together(call, 1, "sleep", {}, "slept") for _ in range(repeats)]
        many = [await _together(call, n, "sleep", {}, "slept") for _ in range(repeats)]
        await _throughput(call, n, min(0.3, seconds))  # warm-up
        calls, wall, cpu = await _throughput(call, n, seconds)
    return {
        "n": n, "one_ms": statistics.median(one) / 1e6, "n_ms": statistics.median(many) / 1e6,
        "one_samples_ms": [x / 1e6 for x in one], "n_samples_ms": [x / 1e6 for x in many],
        "calls": calls, "calls_per_s": calls / wall, "client_cpu_us_per_call": cpu * 1e6 / calls if calls else None,
    }


def run_client(kind: str, port: int, n: int, repeats: int, seconds: float) -> dict[str, Any]:
    url = f"http://127.0.0.1:{port}/mcp"
    if kind in ("ours", "ours-asyncio"):
        backend = "asyncio" if kind == "ours-asyncio" else "trio"
        return anyio.run(_measure, lambda: _Ours(url, n), n, repeats, seconds, backend=backend)
    return anyio.run(_measure, lambda: _Sdk(url, n), n, repeats, seconds, backend="asyncio")


# -- the parent's side ---------------------------------------------------------------------------------


def _client_process(kind: str, port: int, n: int, sleep_ms: float, repeats: int, seconds: float) -> dict[str, Any]:
    import subprocess

    from .bench_e2e import REPO

    done = subprocess.run(
        [sys.executable, "-m", MODULE, "client", kind, str(port), str(n), str(sleep_ms), str(repeats), str(seconds)],
        cwd=REPO, capture_output=True, text=True, timeout=120 + seconds,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{kind} client failed: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def measure(kinds: list[str], *, n: int, sleep_ms: float, repeats: int, seconds: float, rounds: int,
            progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Start the server, then run each client ``rounds`` times, alternating their order.

    Per client: the per-round results, and the median of each figure over the rounds."""
    server = ServerProcess(f"--sleep-ms={sleep_ms}", module=MODULE)
    runs: dict[str, list[dict[str, Any]]] = {kind: [] for kind in kinds}
    failed: dict[str, str] = {}
    try:
        for r in range(rounds):
            for kind in kinds if r % 2 == 0 else list(reversed(kinds)):
                if kind in failed:
                    continue
                try:
                    result = _client_process(kind, server.port, n, sleep_ms, repeats, seconds)
                except Exception as exc:  # report it; the other client still runs
                    failed[kind] = f"{type(exc).__name__}: {exc}"[:500]
                    continue
                runs[kind].append(result)
                if progress is not None:
                    progress(f"parallel {kind} round {r + 1}/{rounds}: 1 call {result['one_ms']:.1f} ms, "
                             f"{n} calls {result['n_ms']:.1f} ms, {result['calls_per_s']:.0f} calls/s")
    finally:
        server.stop()
    out: dict[str, Any] = {"n": n, "sleep_ms": sleep_ms}
    for kind in kinds:
        if kind in failed:
            out[kind] = failed[kind]
            continue
        results = runs[kind]
        out[kind] = {key: statistics.median(r[key] for r in results)
                     for key in ("one_ms", "n_ms", "calls_per_s", "client_cpu_us_per_call")}
        out[kind]["rounds"] = results
    return out


def main(argv: list[str]) -> int:
    if argv[:1] == ["serve"]:
        serve(float(argv[1].removeprefix("--sleep-ms=")) if len(argv) > 1 else 50.0)
        return 0
    if argv[:1] == ["client"]:
        kind, port, n, _sleep_ms, repeats, seconds = argv[1], int(argv[2]), int(argv[3]), argv[4], int(argv[5]), float(argv[6])
        print(json.dumps(run_client(kind, port, n, repeats, seconds)))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
