"""A small MCP app served over stdio, for tests/adapters/serve/test_resilience.py (run as a script).

Usage: python tests/resilience_stdio_app.py [--max-in-flight N] [--max-held N] [--grace-period S]

Besides the tools of ``tests/stdio_app.py`` (``build_app``) it has ``hold``, which
blocks until the process receives SIGUSR1: the test fills the in-flight bound with requests
that cannot finish until it says so, which makes the count of admitted requests exact. A
``hold`` cancelled at shutdown says ``hold cancelled`` on stderr. Diagnostics go to stderr only.
"""

from __future__ import annotations

import argparse
import signal
import sys
from typing import Any

import trio
from mcpwire_adapters import Context, serve_stdio
from stdio_app import build_app  # this script's own folder is on sys.path

app = build_app("resilience-stdio")
released = trio.Event()


@app.tool(description="Block until the process gets SIGUSR1")
async def hold(ctx: Context, arguments: dict[str, Any]) -> str:
    try:
        await released.wait()
    except trio.Cancelled:
        print("hold cancelled", file=sys.stderr, flush=True)
        raise
    return "released"


async def _release_on_signal(*, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
    with trio.open_signal_receiver(signal.SIGUSR1) as signals:
        task_status.started()  # installed before the first request is read: no signal is lost
        async for _ in signals:
            released.set()


async def _serve(max_in_flight: int, max_held: int, grace_period: float) -> None:
    async with trio.open_nursery() as nursery:
        await nursery.start(_release_on_signal)
        await serve_stdio(app, max_in_flight=max_in_flight, max_held=max_held, grace_period=grace_period)
        nursery.cancel_scope.cancel()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-in-flight", type=int, default=64)
    parser.add_argument("--max-held", type=int, default=64)
    parser.add_argument("--grace-period", type=float, default=5.0)
    options = parser.parse_args()
    trio.run(_serve, options.max_in_flight, options.max_held, options.grace_period)


if __name__ == "__main__":
    main()
