"""stdio over anyio: the driver that feeds a :class:`mcpwire.StdioConnection` from stdin.

The same coroutine runs under ``trio.run(serve_stdio, app)`` and under
``asyncio.run(serve_stdio(app))``: tasks, cancel scopes and locks are anyio's, and stdin and
stdout are read and written through non-blocking file descriptors that the running loop watches
(``anyio.wait_readable``; not on Windows, where trio had no such stream either).

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
- Back-pressure: past ``max_in_flight`` requests in flight, up to ``max_held`` more are read and
  held, then the driver stops reading stdin (the pipe fills, the client's writes block) until a
  request ends; nothing is refused. It reads on while every request in flight waits for the
  client (an answer to a server-to-client request such as ``elicitation/create``, or the
  cancellation of a listen stream), so such an answer behind the held requests still gets
  through; only then a request past the held ones is refused with -32603 (the bounds and the
  rule: :class:`mcpwire.StdioConnection`). A cancellation sent after requests the driver has
  not read yet is read once a request ends: a handler that only ends when cancelled holds its
  slot until then.
- On EOF the last partial line is still read, held requests are still admitted as room frees,
  requests get ``grace_period`` seconds from EOF to finish (then are cancelled), listen streams
  end with their listen result (``app.close_streams()``), and :func:`serve_stdio` returns. If
  stdout breaks, it returns at once.
- Serving the process's own stdin and stdout (the default), it says so in one line on stderr
  (``quiet=True``: not) and takes SIGINT (Ctrl-C) and SIGTERM as the end of stdin: it stops
  reading, lets requests finish within ``grace_period`` and returns (a second signal: at once),
  so ``trio.run(serve_stdio, app)`` and ``asyncio.run(serve_stdio(app))`` exit 0.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Hashable, Iterable
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import anyio.abc
import anyio.lowlevel

from mcpwire import Cancelled, InputArrived, LocalProtocolError, StdioConnection, StdioExchange, StdioListenStream
from mcpwire.tasks import TaskChanged
from mcpwire.sessions import StdioSessionStream

from ..app.app import App, ListenForwarder

if TYPE_CHECKING:
    import trio

__all__ = ["serve_stdio"]

_log = logging.getLogger("mcpwire_adapters.stdio")

_RECEIVE_BYTES = 64 * 1024
_STREAM_CLOSE_SECONDS = 5.0  # time to write the listen results at EOF


async def serve_stdio(
    app: App,
    stdin: anyio.abc.ByteReceiveStream | trio.abc.ReceiveStream | None = None,
    stdout: anyio.abc.ByteSendStream | trio.abc.SendStream | None = None,
    *,
    grace_period: float = 30.0,
    max_line_bytes: int = 4 * 1024 * 1024,
    max_in_flight: int = 64,
    max_held: int = 64,
    quiet: bool = False,
    handle_signals: bool | None = None,
) -> None:
    """Serve ``app`` over stdin/stdout (by default duplicates of fds 0 and 1) until stdin
    ends, then return after a graceful shutdown. ``max_line_bytes`` bounds one message,
    ``max_in_flight`` the requests running, ``max_held`` the requests read ahead and held
    before the driver stops reading stdin (back-pressure; ``0``: none held, a request past
    ``max_in_flight`` is refused with -32603; see :class:`mcpwire.StdioConnection`).

    ``stdin`` and ``stdout`` may be anyio byte streams, or trio streams (``receive_some`` /
    ``send_all``, as this driver took before it moved to anyio) when running under trio.

    At start it says so on stderr (never stdout, which carries the protocol): ``mcpwire: serving
    NAME VERSION on stdio (NDJSON); close stdin to stop`` (``quiet=True``: nothing). With
    ``handle_signals``, SIGINT (Ctrl-C) and SIGTERM end the serving as the end of stdin does
    (requests in flight get ``grace_period`` seconds; a second signal: at once) and it returns
    normally. ``None`` (the default): when serving the process's own stdin and stdout from the
    main thread; ``False`` leaves the signals to your program."""
    if handle_signals is None:
        handle_signals = stdin is None and stdout is None and threading.current_thread() is threading.main_thread()
    reader = _FdReceiveStream(os.dup(0)) if stdin is None else _receive_stream(stdin)
    writer = _FdSendStream(os.dup(1)) if stdout is None else _send_stream(stdout)
    connection = StdioConnection(app.server, max_line_bytes=max_line_bytes, max_in_flight=max_in_flight,
                                 max_held=max_held)
    driver = _StdioDriver(app, reader, writer, connection)
    say = _silent if quiet else _stderr_line
    serving = f"mcpwire: serving {app.server.info.name} {app.server.info.version} on stdio (NDJSON); close stdin to stop"
    async with reader, writer:
        if not handle_signals:
            say(serving)
            await driver.run(grace_period)
            return
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            say(serving)  # once a signal is ours to take
            async with anyio.create_task_group() as watching:

                async def watch() -> None:
                    async for _ in signals:
                        if driver.stopping:
                            say("mcpwire: stopping now")
                            driver.stop_now()
                            return
                        say(f"mcpwire: stopping (finishing requests for up to {grace_period:g} s; "
                            "Ctrl-C again to force)")
                        driver.stop()

                watching.start_soon(watch)
                await driver.run(grace_period)
                watching.cancel_scope.cancel()


def _stderr_line(text: str) -> None:
    if sys.stderr is not None:  # none under pythonw
        print(text, file=sys.stderr, flush=True)


def _silent(text: str) -> None:
    pass


class _StdioDriver:
    def __init__(
        self, app: App, stdin: anyio.abc.ByteReceiveStream, stdout: anyio.abc.ByteSendStream, connection: StdioConnection
    ) -> None:
        self.app = app
        self.stdin = stdin
        self.stdout = stdout
        self.connection = connection
        self._write_lock = anyio.Lock()
        self._scopes: dict[Hashable, anyio.CancelScope] = {}
        self._main = anyio.CancelScope()
        self._wake = anyio.Event()
        self._reader_waiting = False
        self._eof = False
        self.stopping = False
        self._receiving: anyio.CancelScope | None = None

    def stop(self) -> None:
        """Stop reading stdin, as at its end (a signal): requests in flight get the grace period."""
        self.stopping = True
        if self._receiving is not None:
            self._receiving.cancel()
        if self._reader_waiting:
            self._wake.set()

    def stop_now(self) -> None:
        """Stop at once: every request and listen stream cancelled."""
        self.stopping = True
        self._main.cancel()

    async def run(self, grace_period: float) -> None:
        with self._main:
            async with self.app.running(), anyio.create_task_group() as streams:
                async with anyio.create_task_group() as requests:
                    await self._read(requests, streams, grace_period)
                # Then every listen stream ends with its result, which its forwarder writes.
                self.app.close_streams()
                streams.cancel_scope.deadline = anyio.current_time() + _STREAM_CLOSE_SECONDS

    async def _read(self, requests: anyio.abc.TaskGroup, streams: anyio.abc.TaskGroup, grace_period: float) -> None:
        self._requests: anyio.abc.TaskGroup = requests
        self._streams: anyio.abc.TaskGroup = streams
        connection = self.connection
        while True:
            if self.stopping and not self._eof:
                data = b""  # stopped by a signal: as if stdin ended here
            elif self._eof or not connection.reading:
                if self._eof and not connection.waiting:
                    return  # every request read is admitted: the task group waits for them
                # Paused (or after EOF, requests still held): wait until a request ends or one
                # starts waiting for the client; the task that saw it has called release().
                self._wake = anyio.Event()
                self._reader_waiting = True
                try:
                    await self._wake.wait()
                finally:
                    self._reader_waiting = False
                continue
            else:
                data = b""
                with anyio.CancelScope() as self._receiving:  # cancelled by stop()
                    try:
                        data = await self.stdin.receive(_RECEIVE_BYTES)
                    except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                        pass
                self._receiving = None
            now = time.time()
            if data:
                await self._handle(connection.receive_data(bytes(data), now=now))
            else:
                # EOF: requests may finish (held ones admitted as room frees), up to the grace period.
                self._eof = True
                requests.cancel_scope.deadline = anyio.current_time() + grace_period
                await self._handle(connection.receive_eof(now=now))

    async def _handle(self, outputs: Iterable[object]) -> None:
        for item in outputs:
            if isinstance(item, bytes):
                await self._write(item)
            elif isinstance(item, StdioExchange):
                self._requests.start_soon(self._run_exchange, item, self._scope_for(item.request_id))
            elif isinstance(item, StdioListenStream):
                forwarder = self.app.forward_listen(item)  # registered now: no event is missed
                # A session's stream answers no request: no client id may cancel it.
                own = anyio.CancelScope() if isinstance(item, StdioSessionStream) else self._scope_for(item.request_id)
                self._streams.start_soon(self._run_listen, forwarder, own)
            elif isinstance(item, InputArrived):
                self.app.input_arrived(item)
            elif isinstance(item, Cancelled):
                scope = self._scopes.pop(_key(item.request_id), None)
                if scope is not None:
                    scope.cancel()
            elif isinstance(item, TaskChanged):
                await self._write(item.reply)
                await self.app.task_changed(item)

    async def _release(self) -> None:
        """A request ended, or an exchange sent something (perhaps its requests to the client):
        admit held requests if there is room now, handle lines left unread while paused, and
        let a paused reader look again."""
        connection = self.connection
        if connection.waiting:
            await self._handle(connection.release(now=time.time()))
        if self._reader_waiting and (not connection.waiting if self._eof else connection.reading):
            self._wake.set()

    def _scope_for(self, request_id: str | int) -> anyio.CancelScope:
        # Made here, entered by the task: a cancel that arrives before the task starts still counts.
        scope = anyio.CancelScope()
        self._scopes[_key(request_id)] = scope
        return scope

    def _forget(self, request_id: str | int, scope: anyio.CancelScope) -> None:
        key = _key(request_id)
        if self._scopes.get(key) is scope:  # the id may already be reused by a newer request
            del self._scopes[key]

    async def _write(self, data: bytes) -> None:
        if not data:
            return
        async with self._write_lock:
            try:
                await self.stdout.send(data)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                # Nobody reads our answers any more: stop serving.
                self._main.cancel()
                await anyio.lowlevel.checkpoint()

    async def _send(self, output: Any) -> None:
        await self._write(output)
        if self.connection.waiting or self._reader_waiting:
            await self._release()

    async def _run_exchange(self, exchange: StdioExchange, scope: anyio.CancelScope) -> None:
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
        await self._release()

    async def _run_listen(self, forwarder: ListenForwarder, scope: anyio.CancelScope) -> None:
        try:
            with scope:
                await forwarder.run(self._send)
        finally:
            self._forget(forwarder.stream.request_id, scope)
        await self._release()


def _key(request_id: str | int) -> Hashable:
    # 1 and "1" are different ids; True is not an id (the engine never admits it).
    return (type(request_id), request_id)


class _FdReceiveStream(anyio.abc.ByteReceiveStream):
    """A file descriptor (a pipe, a tty) read without blocking the loop: set non-blocking, read
    when the loop says it is readable. As with trio's ``FdStream``, the flag is shared with every
    other descriptor of the same open file (our fd 0 included)."""

    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self._fd = fd
        self._closed = False

    async def receive(self, max_bytes: int = 65536) -> bytes:
        await anyio.lowlevel.checkpoint_if_cancelled()
        while True:
            if self._closed:
                raise anyio.ClosedResourceError
            try:
                data = os.read(self._fd, max_bytes)
            except BlockingIOError:
                await anyio.wait_readable(self._fd)
                continue
            except OSError as exc:
                raise anyio.BrokenResourceError from exc
            if not data:
                raise anyio.EndOfStream
            await anyio.lowlevel.cancel_shielded_checkpoint()
            return data

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            os.close(self._fd)  # no task waits on it: the driver closes its streams after its tasks
        await anyio.lowlevel.checkpoint()


class _FdSendStream(anyio.abc.ByteSendStream):
    """The writing side of :class:`_FdReceiveStream`; a closed reader is ``BrokenResourceError``."""

    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self._fd = fd
        self._closed = False

    async def send(self, item: bytes) -> None:
        await anyio.lowlevel.checkpoint_if_cancelled()
        view = memoryview(item)
        while view:
            if self._closed:
                raise anyio.ClosedResourceError
            try:
                view = view[os.write(self._fd, view):]
            except BlockingIOError:
                await anyio.wait_writable(self._fd)
            except OSError as exc:  # BrokenPipeError: nobody reads our stdout any more
                raise anyio.BrokenResourceError from exc
        await anyio.lowlevel.cancel_shielded_checkpoint()

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            os.close(self._fd)  # no task waits on it: the driver closes its streams after its tasks
        await anyio.lowlevel.checkpoint()


class _ReceiveSome(Protocol):
    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray: ...
    async def aclose(self) -> None: ...


class _SendAll(Protocol):
    async def send_all(self, data: bytes | bytearray | memoryview) -> None: ...
    async def aclose(self) -> None: ...


def _receive_stream(stream: anyio.abc.ByteReceiveStream | trio.abc.ReceiveStream) -> anyio.abc.ByteReceiveStream:
    return stream if isinstance(stream, anyio.abc.ByteReceiveStream) else _TrioReceive(stream)


def _send_stream(stream: anyio.abc.ByteSendStream | trio.abc.SendStream) -> anyio.abc.ByteSendStream:
    return stream if isinstance(stream, anyio.abc.ByteSendStream) else _TrioSend(stream)


class _TrioReceive(anyio.abc.ByteReceiveStream):
    """A trio ``ReceiveStream`` read as an anyio one (under trio only, where it belongs)."""

    def __init__(self, stream: _ReceiveSome) -> None:
        self._stream = stream

    async def receive(self, max_bytes: int = 65536) -> bytes:
        data = await self._stream.receive_some(max_bytes)
        if not data:
            raise anyio.EndOfStream
        return bytes(data)

    async def aclose(self) -> None:
        await self._stream.aclose()


class _TrioSend(anyio.abc.ByteSendStream):
    """A trio ``SendStream`` written as an anyio one, trio's "nobody reads" errors as anyio's."""

    def __init__(self, stream: _SendAll) -> None:
        import trio  # loaded already: the stream is trio's

        self._stream = stream
        self._broken = (trio.BrokenResourceError, trio.ClosedResourceError)

    async def send(self, item: bytes) -> None:
        try:
            await self._stream.send_all(item)
        except self._broken as exc:
            raise anyio.BrokenResourceError from exc

    async def aclose(self) -> None:
        await self._stream.aclose()
