"""The client drivers on both event loops: one test body, run under trio and under asyncio.

The drivers (:class:`HttpClient`, :class:`StdioClient`, :func:`serve_stdio`) are written on
anyio, so a test body written on anyio runs unchanged on either loop; the ``backend`` fixture
(``tests/conftest.py``) parametrizes a test over ``trio`` and ``asyncio`` and :func:`run` runs
its body there, under a deadline.

Our HTTP server (``serve_http``) is a trio driver, so :func:`served` runs it in a thread of its
own, with its own ``trio.run``, whatever loop the test body is on: the client under test meets
the same server on both loops. The app belongs to that thread: a test that pokes it (say
``app.close_streams()``) goes through :meth:`Served.call`, which runs the function there.
"""

from __future__ import annotations

import functools
import queue
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import trio

from mcpwire_adapters.app.app import App
from mcpwire_adapters.serve.trio_h11.server import HttpServerConfig, serve_http

BACKENDS = ("trio", "asyncio")
TIMEOUT = 15.0
T = TypeVar("T")


def run(main: Callable[[], Awaitable[None]], backend: str, timeout: float = TIMEOUT) -> None:
    """Run ``main`` on ``backend`` ("trio" or "asyncio"); a TimeoutError after ``timeout`` s."""
    async def bounded() -> None:
        with anyio.fail_after(timeout):
            await main()

    anyio.run(bounded, backend=backend)


def trio_test(seconds: float) -> Callable[[Callable[[], Awaitable[None]]], Callable[[], None]]:
    """An async test body run under trio alone (the trio server's own tests): :func:`run` on
    trio, a TimeoutError after ``seconds``."""

    def decorate(test: Callable[[], Awaitable[None]]) -> Callable[[], None]:
        @functools.wraps(test)
        def wrapper() -> None:
            run(test, "trio", seconds)

        return wrapper

    return decorate


def both(test: Callable[[], Awaitable[None]]) -> Callable[[str], None]:
    """An async test body as a test over the ``backend`` fixture."""
    def wrapper(backend: str) -> None:
        run(test, backend)

    # Not functools.wraps: pytest would read the body's signature (no ``backend``) through __wrapped__.
    wrapper.__name__ = wrapper.__qualname__ = test.__name__
    wrapper.__doc__ = test.__doc__
    wrapper.__module__ = test.__module__
    return wrapper


class Served:
    """Our trio HTTP server on 127.0.0.1, in a thread of its own."""

    def __init__(self, host: str, port: int, token: trio.lowlevel.TrioToken) -> None:
        self.host, self.port = host, port
        self.url = f"http://{host}:{port}/mcp"
        self._token = token

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` run in the server's thread (the app's objects belong to its loop)."""
        return await anyio.to_thread.run_sync(
            functools.partial(trio.from_thread.run_sync, fn, *args, trio_token=self._token))


@asynccontextmanager
async def served(app: App, config: HttpServerConfig | None = None) -> AsyncIterator[Served]:
    """Serve ``app`` with ``serve_http`` on a free port until the block ends."""
    started: queue.Queue[tuple[str, int, trio.lowlevel.TrioToken, trio.CancelScope] | BaseException] = queue.Queue()

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            server = serve_http if config is None else functools.partial(serve_http, config=config)
            host, port = await nursery.start(server, app)
            started.put((host, port, trio.lowlevel.current_trio_token(), nursery.cancel_scope))

    def thread_main() -> None:
        try:
            trio.run(main)
        except BaseException as exc:  # noqa: BLE001 - reported to the test, which fails with it
            started.put(exc)

    thread = threading.Thread(target=thread_main, name="serve_http", daemon=True)
    thread.start()
    first = await anyio.to_thread.run_sync(functools.partial(started.get, timeout=TIMEOUT))
    if isinstance(first, BaseException):
        raise RuntimeError("serve_http did not start") from first
    host, port, token, scope = first
    try:
        yield Served(host, port, token)
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(functools.partial(trio.from_thread.run_sync, scope.cancel, trio_token=token))
            await anyio.to_thread.run_sync(functools.partial(thread.join, TIMEOUT))
        assert not thread.is_alive(), "serve_http did not stop"
        failed = None if started.empty() else started.get()
        if isinstance(failed, BaseException):
            raise RuntimeError("serve_http failed") from failed
