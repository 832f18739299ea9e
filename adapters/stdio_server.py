"""stdio over trio: the driver that feeds a :class:`mcpwire.StdioConnection` from stdin.

The stdio transport (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/stdio>):
newline-delimited JSON, one message per line, requests running concurrently, responses
written whole. stdout carries protocol messages only; this module writes nothing else there
(diagnostics go to the ``mcpwire_adapters.stdio`` logger).

- Every write goes through one lock and is one or more whole lines, so lines of concurrent
  requests never interleave inside a line.
- Each exchange runs ``app.dispatch`` in its own task under its own cancel scope, kept by
  request id; ``notifications/cancelled`` cancels that scope (the exchange itself already
  refuses late output: after a cancellation the server MUST NOT send anything more for the
  request, specification: Basic > Transports > stdio, Cancellation).
- A listen stream is started as soon as it is admitted and forwarded by
  :meth:`App.forward_listen` (as the HTTP drivers do): its acknowledgement, then whatever the
  app delivers to it; a ``notifications/cancelled`` naming it stops it the same way
  (specification: Basic > Patterns > Subscriptions, Cancellation).
- On EOF the last partial line is still read, in-flight requests get ``grace_period`` seconds
  to finish (then are cancelled), listen streams end with their listen result
  (``app.close_streams()``), and :func:`serve_stdio` returns. If stdout breaks, it returns at once.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Hashable
from typing import Any

import trio

from mcpwire import Cancelled, InputArrived, LocalProtocolError, StdioConnection, StdioExchange, StdioListenStream
from mcpwire.tasks import TaskChanged
from mcpwire.sessions import StdioSessionStream

from .app import App, ListenForwarder

__all__ = ["serve_stdio"]

_log = logging.getLogger("mcpwire_adapters.stdio")

_RECEIVE_BYTES = 64 * 1024
_STREAM_CLOSE_SECONDS = 5.0  # time to write the listen results at EOF


async def serve_stdio(
    app: App,
    stdin: trio.abc.ReceiveStream | None = None,
    stdout: trio.abc.SendStream | None = None,
    *,
    grace_period: float = 30.0,
    max_line_bytes: int = 4 * 1024 * 1024,
    max_in_flight: int = 64,
) -> None:
    """Serve ``app`` over stdin/stdout (by default duplicates of fds 0 and 1) until stdin
    ends, then return after a graceful shutdown. ``max_line_bytes`` and ``max_in_flight`` bound
    one message and the requests in flight (see :class:`mcpwire.StdioConnection`)."""
    if stdin is None:
        stdin = trio.lowlevel.FdStream(os.dup(0))
    if stdout is None:
        stdout = trio.lowlevel.FdStream(os.dup(1))
    connection = StdioConnection(app.server, max_line_bytes=max_line_bytes, max_in_flight=max_in_flight)
    driver = _StdioDriver(app, stdin, stdout, connection)
    async with stdin, stdout:
        await driver.run(grace_period)


class _StdioDriver:
    def __init__(
        self, app: App, stdin: trio.abc.ReceiveStream, stdout: trio.abc.SendStream, connection: StdioConnection
    ) -> None:
        self.app = app
        self.stdin = stdin
        self.stdout = stdout
        self.connection = connection
        self._write_lock = trio.Lock()
        self._scopes: dict[Hashable, trio.CancelScope] = {}
        self._main = trio.CancelScope()

    async def run(self, grace_period: float) -> None:
        with self._main:
            async with self.app.running(), trio.open_nursery() as streams:
                async with trio.open_nursery() as requests:
                    await self._read(requests, streams)
                    # EOF: requests in flight may finish, up to the grace period.
                    requests.cancel_scope.deadline = trio.current_time() + grace_period
                # Then every listen stream ends with its result, which its forwarder writes.
                self.app.close_streams()
                streams.cancel_scope.deadline = trio.current_time() + _STREAM_CLOSE_SECONDS

    async def _read(self, requests: trio.Nursery, streams: trio.Nursery) -> None:
        while True:
            try:
                data = await self.stdin.receive_some(_RECEIVE_BYTES)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
            now = time.time()
            if data:
                outputs = self.connection.receive_data(bytes(data), now=now)
            else:
                outputs = self.connection.receive_eof(now=now)
            for item in outputs:
                if isinstance(item, bytes):
                    await self._write(item)
                elif isinstance(item, StdioExchange):
                    requests.start_soon(self._run_exchange, item, self._scope_for(item.request_id))
                elif isinstance(item, StdioListenStream):
                    forwarder = self.app.forward_listen(item)  # registered now: no event is missed
                    # A session's stream answers no request: no client id may cancel it.
                    own = trio.CancelScope() if isinstance(item, StdioSessionStream) else self._scope_for(item.request_id)
                    streams.start_soon(self._run_listen, forwarder, own)
                elif isinstance(item, InputArrived):
                    self.app.input_arrived(item)
                elif isinstance(item, Cancelled):
                    scope = self._scopes.pop(_key(item.request_id), None)
                    if scope is not None:
                        scope.cancel()
                elif isinstance(item, TaskChanged):
                    await self._write(item.reply)
                    await self.app.task_changed(item)
            if not data:
                return

    def _scope_for(self, request_id: str | int) -> trio.CancelScope:
        # Made here, entered by the task: a cancel that arrives before the task starts still counts.
        scope = trio.CancelScope()
        self._scopes[_key(request_id)] = scope
        return scope

    def _forget(self, request_id: str | int, scope: trio.CancelScope) -> None:
        key = _key(request_id)
        if self._scopes.get(key) is scope:  # the id may already be reused by a newer request
            del self._scopes[key]

    async def _write(self, data: bytes) -> None:
        if not data:
            return
        async with self._write_lock:
            try:
                await self.stdout.send_all(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                # Nobody reads our answers any more: stop serving.
                self._main.cancel()
                await trio.lowlevel.checkpoint()

    async def _send(self, output: Any) -> None:
        await self._write(output)

    async def _run_exchange(self, exchange: StdioExchange, scope: trio.CancelScope) -> None:
        with scope:
            try:
                await self.app.dispatch(exchange, self._send)
            except Exception as exc:  # noqa: BLE001 - a bug answers -32603 and keeps the server up
                _log.exception("unexpected error while answering request %r", exchange.request_id)
                try:
                    await self._write(exchange.fail(exc))
                except LocalProtocolError:
                    pass  # the exchange had already answered
        self._forget(exchange.request_id, scope)

    async def _run_listen(self, forwarder: ListenForwarder, scope: trio.CancelScope) -> None:
        try:
            with scope:
                await forwarder.run(self._send)
        finally:
            self._forget(forwarder.stream.request_id, scope)


def _key(request_id: str | int) -> Hashable:
    # 1 and "1" are different ids; True is not an id (the engine never admits it).
    return (type(request_id), request_id)
