"""Cancelling a call on an initialize-era HTTP session posts ``notifications/cancelled``.

In the initialize era a disconnect is not a cancellation (2025-11-25, Basic > Transports >
Streamable HTTP: "Disconnection SHOULD NOT be interpreted as the client cancelling its
request... To cancel, the client SHOULD explicitly send an MCP CancelledNotification"), so
:class:`HttpClient` posts one on the session when the task awaiting a request is cancelled;
the App then cancels the running handler. On 2026-07-28 closing the connection is the
cancellation, and nothing is posted. Against our own server (``serve_http``, in a thread of
its own), on trio and on asyncio (``tests/_backends.py``).

Our server cancels a handler whose client went away in every era, so the era tests reach it
through :func:`sticky_proxy`, a TCP proxy that keeps the server's side of a connection open
after the client closed its side: what a reverse proxy or load balancer that does not pass a
disconnect on, or a server that does not watch its sockets, gives. There only a posted
``notifications/cancelled`` stops the tool.
"""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread
import pytest
import trio

from mcpwire import Client, OutgoingMessage
from mcpwire.types import Implementation
from mcpwire_adapters import App, Context
from mcpwire_adapters.client.http import HttpClient

from _backends import run, served

ERA = ("2025-11-25", "2025-06-18", "2025-03-26")
MODERN = "2026-07-28"


class Slow:
    """A tool that waits far longer than any test, saying when it starts and when it is cancelled.
    The app runs on the server's thread (trio), the client elsewhere: threading events."""

    def __init__(self, versions: tuple[str, ...] | None) -> None:
        self.started = threading.Event()
        self.cancelled = threading.Event()
        self.finished = threading.Event()
        options: dict[str, Any] = {} if versions is None else {"supported_versions": versions}
        self.app = App("slow", "1.0", **options)

        @self.app.tool(description="sleeps a minute unless cancelled")
        async def slow(ctx: Context, arguments: dict[str, Any]) -> str:
            self.started.set()
            try:
                await trio.sleep(60)
            except trio.Cancelled:
                self.cancelled.set()
                raise
            self.finished.set()
            return "done"

        @self.app.tool(description="answers at once")
        def quick(ctx: Context, arguments: dict[str, Any]) -> str:
            return "quick"


@asynccontextmanager
async def sticky_proxy(url: str) -> AsyncIterator[str]:
    """A TCP proxy to ``url`` on 127.0.0.1 that forwards both ways, and when the client closes
    its side leaves the server's side open (reading and dropping what comes) until the server
    closes it or the block ends. Yields the proxied URL."""
    host, rest = url.removeprefix("http://").split(":", 1)
    port, path = rest.split("/", 1)

    async def handle(client: anyio.abc.SocketStream) -> None:
        async with client, await anyio.connect_tcp(host, int(port)) as upstream:
            async def up() -> None:
                try:
                    async for data in client:
                        await upstream.send(data)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    pass
                # The client left: the server is not told (no EOF, no close).

            async def down() -> None:
                try:
                    async for data in upstream:
                        try:
                            await client.send(data)
                        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                            pass  # the client is gone: drop the rest, keep reading the server
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    pass

            async with anyio.create_task_group() as pair:
                pair.start_soon(up)
                await down()  # until the server closes its side
                pair.cancel_scope.cancel()

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, handle)
        proxy_port = listener.extra(anyio.abc.SocketAttribute.local_port)
        try:
            yield f"http://127.0.0.1:{proxy_port}/{path}"
        finally:
            tg.cancel_scope.cancel()


async def wait_for(event: threading.Event, seconds: float) -> bool:
    return await anyio.to_thread.run_sync(event.wait, seconds)


def recording(c: HttpClient) -> list[dict[str, Any]]:
    """The JSON bodies of every message the client delivers on the session (notifications, answers)."""
    sent: list[dict[str, Any]] = []
    deliver = c._deliver

    async def spy(message: OutgoingMessage) -> None:
        sent.append(json.loads(message.body))
        await deliver(message)

    c._deliver = spy  # type: ignore[method-assign]
    return sent


async def cancel_a_slow_call(c: HttpClient, slow: Slow) -> None:
    """Start ``slow`` through ``c``, wait until the server runs it, then cancel the awaiting task."""
    async with anyio.create_task_group() as tg:
        async def call() -> None:
            await c.call_tool("slow", {})
            raise AssertionError("the call returned")  # pragma: no cover

        tg.start_soon(call)
        assert await wait_for(slow.started, 5), "the tool never started"
        tg.cancel_scope.cancel()


@pytest.mark.parametrize("version", ERA)
def test_cancelling_a_call_on_a_session_cancels_the_tool(version: str, backend: str) -> None:
    async def main() -> None:
        slow = Slow(ERA)
        async with served(slow.app) as server, sticky_proxy(server.url) as url:
            client = Client(Implementation(name="t", version="1"), protocol_version=version)
            async with HttpClient(url, client) as c:
                await c.connect()
                assert c.protocol_version == version and c.client.session_id is not None
                sent = recording(c)
                await cancel_a_slow_call(c, slow)
                assert await wait_for(slow.cancelled, 2), "the server was never told: the tool still runs"
                assert not slow.finished.is_set()
                notes = [m for m in sent if m.get("method") == "notifications/cancelled"]
                assert len(notes) == 1
                params = notes[0]["params"]
                assert type(params["requestId"]) is int and params.get("reason")
                # The session goes on: the next call is answered.
                result = await c.call_tool("quick", {})
                assert result.data["content"][0]["text"] == "quick"

    run(main, backend)


def test_a_failing_cancellation_is_logged_and_bounded(caplog: pytest.LogCaptureFixture, backend: str) -> None:
    async def main() -> None:
        slow = Slow(ERA)
        async with served(slow.app) as server, sticky_proxy(server.url) as url:
            client = Client(Implementation(name="t", version="1"), protocol_version="2025-11-25")
            async with HttpClient(url, client) as c:
                await c.connect()
                tried: list[bytes] = []

                async def broken(message: OutgoingMessage) -> None:
                    tried.append(message.body)
                    await anyio.sleep(3600)  # never answers: the bound ends it

                c._deliver = broken  # type: ignore[method-assign]
                c.cancel_timeout = 0.2
                with anyio.fail_after(5):
                    await cancel_a_slow_call(c, slow)
                assert len(tried) == 1 and b"notifications/cancelled" in tried[0]
        assert any("notifications/cancelled" in r.getMessage() for r in caplog.records)

    run(main, backend)


def test_on_2026_07_28_closing_the_connection_cancels_and_nothing_is_posted(backend: str) -> None:
    async def main() -> None:
        slow = Slow(None)
        async with served(slow.app) as server, HttpClient(server.url, Client(Implementation(name="t", version="1"))) as c:
            sent = recording(c)
            await cancel_a_slow_call(c, slow)
            assert c.protocol_version == MODERN and c.client.session_id is None
            assert await wait_for(slow.cancelled, 2), "closing the connection did not cancel the tool"
            assert sent == []

    run(main, backend)
