"""A minimal in-process ASGI caller: one app on a private asyncio loop, no sockets.

Used for the SDK's Streamable HTTP app and for our own ``mcpwire_adapters.AsgiApp``, so both
are driven the same way. ``receive`` hands over the whole body at once and then never reports
a disconnect; ``send`` collects the status and body. The loop stays open across batches (and
the app's lifespan, when one is given, stays entered), so a batch times only the calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from time import perf_counter_ns
from typing import Any

from ._harness import Variant
from ._workload import HOST

Message = dict[str, Any]


def scope_for(hdrs: list[tuple[bytes, bytes]], path: str = "/mcp") -> dict[str, Any]:
    host, port = HOST.decode().split(":")
    return {
        "type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
        "method": "POST", "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"",
        "root_path": "", "headers": hdrs, "client": ("127.0.0.1", 40000), "server": (host, int(port)), "state": {},
    }


class AsgiDriver:
    """Call ``app`` in-process; ``lifespan`` (if given) is entered once around every call."""

    def __init__(self, app: Any, lifespan: Callable[[], AbstractAsyncContextManager[Any]] | None = None) -> None:
        self.app = app
        self.lifespan = lifespan
        self.loop = asyncio.new_event_loop()
        self._stop: asyncio.Event | None = None
        self._started: asyncio.Event | None = None
        self.last_headers: dict[bytes, bytes] = {}
        self._holder = self.loop.create_task(self._hold())
        self.loop.run_until_complete(self._wait_started())

    async def _wait_started(self) -> None:
        while self._started is None:
            await asyncio.sleep(0)
        await self._started.wait()

    async def _hold(self) -> None:
        self._stop, self._started = asyncio.Event(), asyncio.Event()
        if self.lifespan is None:
            self._started.set()
            await self._stop.wait()
            return
        async with self.lifespan():
            self._started.set()
            await self._stop.wait()

    async def call(self, body: bytes, hdrs: list[tuple[bytes, bytes]]) -> tuple[int, bytes]:
        """POST ``body``; the status and body (the response headers are kept in ``last_headers``)."""
        sent = False
        status = 0
        chunks: list[bytes] = []

        async def receive() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.Event().wait()  # the client never disconnects
            raise AssertionError("unreachable")

        async def send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                self.last_headers = {k.lower(): v for k, v in message.get("headers", [])}
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(scope_for(hdrs), receive, send)
        return status, b"".join(chunks)

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def variant(self, key: str, body: bytes, hdrs: list[tuple[bytes, bytes]]) -> Variant:
        async def timed(n: int) -> int:
            call = self.call
            t0 = perf_counter_ns()
            for _ in range(n):
                await call(body, hdrs)
            return perf_counter_ns() - t0

        def batch(n: int) -> int:
            return int(self.run(timed(n)))

        return Variant(key, batch)

    def close(self) -> None:
        if self._stop is not None:
            self._stop.set()
        self.loop.run_until_complete(self._holder)
        self.loop.close()
