"""Streamable HTTP over trio and h11: the driver that owns sockets for an :class:`App`.

The engine (``app.server.receive_http``) decides every answer; this driver only moves bytes:
h11 parses requests and frames responses, trio runs one task per connection. This module
serves: :func:`serve_http` and :func:`serve_http_until` open the listeners, accept the
connections and stop them; each connection serves its requests one at a time
(``connection.Connection``: reading the head and the body within their timeouts, refusing
early, writing the engine's answers); the limits are :class:`HttpServerConfig` (``config.py``).

Beyond ``max_connections`` a new connection is accepted, its request head read (for at most a
second), answered 503 with ``connection: close``, and closed.

Every read and write deadline (header, body, idle, send) and the listen keep-alive are kept on
one timer task per server (``_expire_deadlines``), not in trio's deadline heap; they fire up
to a tenth of the shortest timeout late. Shutdown: cancelling :func:`serve_http` closes the listeners and every connection at once;
run as the program itself (``trio.run(serve_http, app, ...)``) it stops gracefully on SIGINT
(Ctrl-C) or SIGTERM, as :func:`serve_http_until` does, and returns.
:func:`serve_http_until` stops gracefully when its ``stop`` event is set: it closes the
listeners, closes idle kept-alive connections, ends every listen stream with its listen
result (``app.close_streams()``), lets in-flight requests finish for ``grace_period`` seconds
and then cancels what is left.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Awaitable
from functools import partial

import trio

from .config import HttpServerConfig
from .connection import Connection
from .listeners import reuse_port_listeners
from ...app.app import App

__all__ = ["HttpServerConfig", "serve_http", "serve_http_until"]

_DEFAULT_CONFIG = HttpServerConfig()


async def serve_http(
    app: App,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    task_status: trio.TaskStatus[tuple[str, int]] = trio.TASK_STATUS_IGNORED,
    config: HttpServerConfig = _DEFAULT_CONFIG,
    grace_period: float = 10.0,
    quiet: bool = False,
    handle_signals: bool | None = None,
) -> None:
    """Serve ``app`` on ``host:port`` until cancelled. Use with ``nursery.start``, which returns
    the bound ``(host, port)`` (``port=0`` picks a free port). Cancellation closes the listeners
    and every open connection; for a graceful stop use :func:`serve_http_until`.

    Once listening it says where on stderr, ``mcpwire: serving NAME VERSION at
    http://HOST:PORT/mcp (Ctrl-C to stop)`` (``quiet=True``: nothing). With ``handle_signals``
    it stops gracefully on SIGINT (Ctrl-C) or SIGTERM: no new connections, in-flight requests
    given ``grace_period`` seconds to finish (a second signal: at once), then it returns, so
    ``trio.run(serve_http, app, ...)`` exits 0. ``None`` (the default): only when it runs as the
    program itself, the main task of ``trio.run`` in the main thread; started in a nursery of
    your own it leaves the signals to your program (pass ``True`` to have it take them)."""
    if handle_signals is None:
        handle_signals = _is_the_program()
    if not handle_signals:
        await _HttpServer(app, config).serve(host, port, task_status=_Announcing(task_status, app, host, quiet))
        return
    say = _stderr_line if not quiet else _silent
    stop = trio.Event()
    try:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with trio.open_nursery() as nursery:

                async def run(task_status: trio.TaskStatus[tuple[str, int]] = trio.TASK_STATUS_IGNORED) -> None:
                    await serve_http_until(app, host, port, stop=stop, grace_period=grace_period, config=config,
                                           task_status=_Announcing(task_status, app, host, quiet))
                    nursery.cancel_scope.cancel()  # stopped: the signal watcher too

                task_status.started(await nursery.start(run))
                async for _ in signals:
                    if stop.is_set():
                        say("mcpwire: stopping now")
                        nursery.cancel_scope.cancel()
                        break
                    say(f"mcpwire: stopping (finishing requests for up to {grace_period:g} s; Ctrl-C again to force)")
                    stop.set()
    except BaseExceptionGroup as group:  # one error (the port is taken, say) raised as itself
        alone = _alone(group)
        if alone is None:
            raise
        raise alone from None
    if stop.is_set():
        say("mcpwire: stopped")


class _Announcing(trio.TaskStatus[tuple[str, int]]):
    """A task status that says where the server listens (stderr) as it reports it started."""

    def __init__(self, inner: trio.TaskStatus[tuple[str, int]], app: App, host: str, quiet: bool) -> None:
        self._inner, self._app, self._host, self._quiet = inner, app, host, quiet

    def started(self, value: tuple[str, int] | None = None) -> None:
        assert value is not None
        if not self._quiet:
            host = self._host or value[0]
            authority = f"[{host}]" if ":" in host else host
            info = self._app.server.info
            # The words of `mcpwire serve` (adapters/cli/serve.py).
            _stderr_line(f"mcpwire: serving {info.name} {info.version} at "
                         f"http://{authority}:{value[1]}{self._app.server.http.path} (Ctrl-C to stop)")
        self._inner.started(value)


def _alone(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
    """The one exception inside ``group`` and the groups of one it nests, if it holds just one."""
    while len(group.exceptions) == 1:
        inner = group.exceptions[0]
        if not isinstance(inner, BaseExceptionGroup):
            return inner
        group = inner
    return None


def _stderr_line(text: str) -> None:
    if sys.stderr is not None:  # none under pythonw
        print(text, file=sys.stderr, flush=True)


def _silent(text: str) -> None:
    pass


def _is_the_program() -> bool:
    """Whether the running task is ``trio.run``'s main task in the main thread: the function
    ``trio.run`` was given (rather than a task a program started in a nursery of its own)."""
    if threading.current_thread() is not threading.main_thread():
        return False
    parent = trio.lowlevel.current_task().parent_nursery
    return parent is not None and parent.parent_task is trio.lowlevel.current_root_task()


async def serve_http_until(
    app: App,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    stop: trio.Event,
    grace_period: float = 10.0,
    task_status: trio.TaskStatus[tuple[str, int]] = trio.TASK_STATUS_IGNORED,
    config: HttpServerConfig = _DEFAULT_CONFIG,
) -> None:
    """Like :func:`serve_http`, and returns after a graceful stop once ``stop`` is set: no new
    connections, idle connections closed, listen streams ended with their result, in-flight
    requests given ``grace_period`` seconds to finish, then cancelled."""
    server = _HttpServer(app, config)
    async with trio.open_nursery() as nursery:
        bound = await nursery.start(partial(server.serve, host, port))
        task_status.started(bound)
        await stop.wait()
        server.drain()
        # The nursery now waits for the connections still busy, up to the deadline.
        nursery.cancel_scope.deadline = trio.current_time() + grace_period


class _HttpServer:
    def __init__(self, app: App, config: HttpServerConfig) -> None:
        self.app = app
        self.config = config
        self.connections: set[Connection] = set()
        self.rejecting = 0
        self.draining = False
        self._accepting: trio.CancelScope | None = None
        self.nursery: trio.Nursery | None = None  # the connections' tasks and their readers

    async def serve(
        self, host: str, port: int, *, task_status: trio.TaskStatus[tuple[str, int]] = trio.TASK_STATUS_IGNORED
    ) -> None:
        if self.config.reuse_port:
            listeners = await reuse_port_listeners(host, port)
        else:
            listeners = await trio.open_tcp_listeners(port, host=host)
        sockname = listeners[0].socket.getsockname()
        # The App's background work (tasks) runs as long as the server serves.
        async with self.app.running(), trio.open_nursery() as timer:
            timer.start_soon(self._expire_deadlines)
            async with trio.open_nursery() as handlers, trio.open_nursery() as accepting:
                self._accepting = accepting.cancel_scope
                self.nursery = handlers
                await accepting.start(partial(trio.serve_listeners, self._handle, listeners, handler_nursery=handlers))
                task_status.started((sockname[0], sockname[1]))
                # Accepting stopped (drain): the handlers nursery waits for open connections.
            timer.cancel_scope.cancel()

    async def _expire_deadlines(self) -> None:
        """The one timer of every connection's read and write deadlines. A cancel scope with a
        deadline per wait would leave an entry in trio's deadline heap each time it exits
        early (as nearly every wait does), kept until trio prunes the heap: hundreds of
        entries per thousand requests. Here a deadline is a float on the connection, and this
        task looks at them every ``tick`` (a tenth of the shortest timeout, 5 ms to 1 s): a
        timeout fires up to one tick late."""
        config = self.config
        shortest = min(
            config.header_timeout, config.body_timeout, config.keepalive_idle_timeout, config.send_timeout,
            config.sse_keepalive_interval,
        )
        tick = min(1.0, max(0.005, shortest / 10))
        while True:
            await trio.sleep(tick)
            now = trio.current_time()
            for connection in self.connections:
                connection.stop_idle_reader(now - tick)  # idle a tick: one task per connection
                if connection.read_deadline <= now:
                    connection.expire()
                if connection.send_deadline <= now:
                    connection.abort_send()
                if connection.alarm_deadline <= now:
                    connection.ring()

    def drain(self) -> None:
        """Begin a graceful stop: stop accepting, close idle connections, end listen streams."""
        self.draining = True
        if self._accepting is not None:
            self._accepting.cancel()
        for connection in list(self.connections):
            connection.stop_if_idle()
        self.app.close_streams()

    def _handle(self, stream: trio.SocketStream) -> Awaitable[None]:
        # Not a coroutine of its own: the connection's task runs what this returns, one frame
        # fewer held for the connection's whole life.
        if self.draining:
            return trio.lowlevel.checkpoint()
        if len(self.connections) >= self.config.max_connections:
            return self._reject(stream)
        connection = Connection(self, stream)
        self.connections.add(connection)
        return connection.run()

    async def _reject(self, stream: trio.SocketStream) -> None:
        if self.rejecting < self.config.max_connections:
            self.rejecting += 1
            try:
                await Connection(self, stream).reject()
            finally:
                self.rejecting -= 1
