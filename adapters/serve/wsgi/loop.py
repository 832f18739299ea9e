"""The event loop a :class:`~mcpwire_adapters.serve.wsgi.app.WsgiApp` runs its App on:
:class:`LoopThread`, one asyncio loop (the App's anyio code on top) in a daemon thread of its
own, per process. The one module of the WSGI driver that makes threads or touches asyncio.

WSGI servers call the application from threads of their own (one per request: gunicorn's
sync and gthread workers, waitress, uWSGI), with no event loop. The App's handlers, its
listen streams, its task group (``App.running``) and the engine itself live on this one loop,
so the engine is only ever called from one thread: a WSGI thread asks it through
:meth:`LoopThread.submit` (a callback run on the loop, which answers through the request's
own :class:`~mcpwire_adapters.serve.wsgi.pipe.Pipe`), and such a callback starts a request's
coroutine there as a task of its own with :meth:`LoopThread.spawn`, whose handler gets
:func:`handler_scope`, a cancel scope on that task (``Task.cancel``, made for nothing else).

Lifetime: the loop starts on first use (:meth:`LoopThread.running`), in the process that uses
it: a server that imports the application and then forks its workers (gunicorn ``--preload``)
starts one loop in each worker, never one that a fork would leave without its thread. With
``MCPWIRE_REDIS`` set, the App's shared state is put on that Redis first
(:func:`~mcpwire_adapters.serve.redis_state.use_redis_from_env`; Redis down makes the start,
and so the request, fail). :meth:`LoopThread.close` ends every listen stream with its listen
result, gives the requests in flight ``grace`` seconds, cancels the rest, leaves
``App.running`` and joins the thread; it also runs at interpreter exit.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import threading
import time
import weakref
from collections.abc import Callable, Coroutine
from typing import Any

import anyio

from ...app.app import App
from ...errors import McpwireAdapterError
from ..asgi.on_asyncio import TaskScope

__all__ = ["LoopClosed", "LoopThread", "handler_scope"]

_log = logging.getLogger("mcpwire_adapters.wsgi")

START_TIMEOUT = 30.0
"""Seconds the first request waits for the loop (and the App's shared state) to start."""


class LoopClosed(McpwireAdapterError):
    """The WSGI app was closed (:meth:`LoopThread.close`), or its loop could not start."""


class LoopThread:
    """One event loop thread serving ``app`` (module docstring); thread-safe."""

    def __init__(self, app: App, *, name: str = "mcpwire-wsgi-loop") -> None:
        self.app = app
        self.name = name
        self._lock = threading.Lock()
        self._pid = -1
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._grace = 0.0
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False

    # -- starting -------------------------------------------------------------------------------
    def running(self) -> asyncio.AbstractEventLoop:
        """The running loop of this process, started now if needed (:class:`LoopClosed` after
        :meth:`close`, or when it could not start)."""
        loop = self._loop
        if loop is not None and self._pid == os.getpid():
            return loop
        with self._lock:
            if self._closed:
                raise LoopClosed("the MCP endpoint is shutting down")
            if self._loop is None or self._pid != os.getpid():  # first use, or a forked child
                self._start()
            assert self._loop is not None
            return self._loop

    def _start(self) -> None:
        started = threading.Event()
        failed: list[BaseException] = []
        self._loop = None
        self._tasks = set()
        thread = threading.Thread(target=self._run, args=(started, failed), name=self.name, daemon=True)
        thread.start()
        if not started.wait(START_TIMEOUT):
            raise LoopClosed(f"the event loop did not start within {START_TIMEOUT} s")
        if failed:
            raise LoopClosed(f"the event loop could not start: {failed[0]}") from failed[0]
        self._thread, self._pid = thread, os.getpid()
        atexit.register(_close_at_exit, weakref.ref(self))

    def _run(self, started: threading.Event, failed: list[BaseException]) -> None:
        try:
            anyio.run(self._main, started, failed, backend="asyncio")
        except BaseException as exc:  # noqa: BLE001 - told to the starting thread, or logged
            if not started.is_set():
                failed.append(exc)
                started.set()
            else:
                _log.exception("the WSGI event loop failed")

    async def _main(self, started: threading.Event, failed: list[BaseException]) -> None:
        shared: Any = None
        if os.environ.get("MCPWIRE_REDIS"):
            from ..redis_state import use_redis_from_env  # redis-py loads only when asked for

            shared = use_redis_from_env(self.app)
        try:
            async with self.app.running():  # the App's background work (tasks) for the loop's lifetime
                self._stop = asyncio.Event()
                self._loop = asyncio.get_running_loop()
                started.set()
                await self._stop.wait()
                await self._shut_down()
        finally:
            if shared is not None:
                shared.close()

    async def _shut_down(self) -> None:
        # Listen streams end with their listen result (their WSGI threads write it), then the
        # requests in flight get the grace period, then whatever is left is cancelled.
        self.app.close_streams()
        deadline = time.monotonic() + self._grace
        while self._tasks and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=1.0)

    # -- asking the loop ------------------------------------------------------------------------
    def wake(self, callback: Callable[[], object]) -> None:
        """Run ``callback()`` soon on the loop thread (from any thread)."""
        loop = self._loop
        if loop is not None:
            try:
                loop.call_soon_threadsafe(callback)
            except RuntimeError:  # the loop has stopped: nobody waits for the callback any more
                pass

    def submit(self, callback: Callable[..., object], *args: Any) -> None:
        """Run ``callback(*args)`` soon on the loop thread (from any thread), the loop started
        first if needed; :class:`LoopClosed` when it has stopped. The callback reports through
        its own means (a :class:`~mcpwire_adapters.serve.wsgi.pipe.Pipe`)."""
        loop = self.running()
        try:
            loop.call_soon_threadsafe(callback, *args)
        except RuntimeError:
            raise LoopClosed("the MCP endpoint is shutting down") from None

    def spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        """On the loop thread: run ``coro`` as a task of its own, cancelled at :meth:`close` if it
        is still running after the grace period."""
        assert self._loop is not None
        task = self._loop.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @property
    def alive(self) -> bool:
        """Whether the loop thread of this process runs (a WSGI thread waiting for it checks,
        so that a loop that died cannot leave it waiting for ever)."""
        thread = self._thread
        return thread is not None and self._pid == os.getpid() and thread.is_alive()

    # -- stopping -------------------------------------------------------------------------------
    def close(self, grace: float = 5.0) -> None:
        """End the listen streams (each with its listen result), wait up to ``grace`` seconds for
        the requests in flight, cancel the rest, stop the loop and join its thread. Idempotent;
        later requests are answered 503."""
        with self._lock:
            self._closed = True
            thread, loop, stop = self._thread, self._loop, self._stop
            self._grace = grace
            if thread is None or self._pid != os.getpid() or loop is None or stop is None:
                return
        try:
            loop.call_soon_threadsafe(stop.set)
        except RuntimeError:  # already stopped
            return
        thread.join(grace + 5.0)
        if thread.is_alive():
            _log.warning("the WSGI event loop did not stop within %.1f s", grace + 5.0)


def _close_at_exit(ref: weakref.ref[LoopThread]) -> None:
    loop = ref()
    if loop is not None:
        loop.close(grace=1.0)


def handler_scope() -> TaskScope:
    """On the loop, in a request's task: a cancel scope for its handler that is the task's own
    ``Task.cancel`` (``App.run_exchange_armed``'s cheaper scope on asyncio)."""
    task = asyncio.current_task()
    assert task is not None
    return TaskScope(task)
