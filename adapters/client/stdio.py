"""An anyio MCP client over stdio: starts a server subprocess and talks NDJSON to it.

    async with StdioClient([sys.executable, "server.py"], client) as c:
        await c.discover()
        async with anyio.create_task_group() as tg:   # several requests in flight at once
            tg.start_soon(c.call_tool, "a", {})
            tg.start_soon(c.call_tool, "b", {})

The same class runs under ``trio.run`` and ``asyncio.run`` (anyio: the subprocess, its pipes,
the reader task, locks and timeouts); importing this module loads neither trio nor h11.

Requests are demultiplexed by id (:class:`mcpwire.ClientStdioConnection`);
one reader task routes each event to the task awaiting that request. Cancelling the
awaiting task writes ``notifications/cancelled`` for its request, which is how stdio
cancels a request
(<https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/cancellation#transport-specific-cancellation>).
Leaving the ``async with`` closes the server's stdin, waits ``exit_timeout`` seconds for it
to exit, then kills it. The MRTR loop, version fallback and pagination are :class:`Session`'s
(:mod:`mcpwire_adapters.client.session`): this module imports no h11.

``c.listen({...})`` opens a ``subscriptions/listen`` stream on the same pipes (its events are
routed by subscription id); leaving its ``async with`` writes ``notifications/cancelled``::

    async with c.listen({"toolsListChanged": True}) as sub:
        async for event in sub:
            ...

Initialize-era servers (specification 2026-07-28: Basic > Transports > stdio, Backward
Compatibility): the first request is preceded by the ``server/discover`` probe; an answer no
modern server gives, or none within ``probe_timeout`` seconds, means ``initialize``. The
server's requests are lines like any other: one arriving while a single request is in flight
is that request's, answered as if it came on its response stream (its ``on_input``, counted
against ``max_rounds``, its ``read_timeout`` paused meanwhile); otherwise the client's
``on_input`` answers it. ``listen`` then reads the server's notification lines.

Timeouts and limits (specification: Basic > Patterns > Cancellation, Timeouts). A request that
hears nothing of its own (no answer, progress or log line for it) for ``read_timeout`` seconds
fails with :class:`MaybeDelivered`, as over HTTP, and ``notifications/cancelled`` is written for
it. A line from the server past ``max_line_bytes`` cannot be read, and stdio cannot tell which
request it answered: every request in flight fails with :class:`TransportError` (as an HTTP
response past its limit does), each cancelled the same way; the rest of that line is skipped
unbuffered and the connection goes on. A line that is not JSON, or answers no request in flight,
is logged (``mcpwire.client``, the first 16) and skipped; the requests in flight wait on, within
``read_timeout``. On an initialize-era session a line that is neither a valid message nor a
malformed notification or response is also answered, as JSON-RPC 2.0 says and as the server
engine does: -32700 or -32600, with its id, or ``null`` when none can be read.

A server that exits (or closes its stdout) fails every request in flight, and every later one,
with :class:`TransportError`, whose message says how it ended: the exit status, or the signal
that killed it, when known; a listen stream open then raises it too. (The engine's own
``receive_eof`` gives each such request a -32000 :class:`ErrorResult`; these are not passed on
as :class:`ServerError`, which is for errors the server chose to send.)
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Self

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcpwire.sessions import InvalidMessage
from mcpwire.types import Implementation
from mcpwire import (
    Client, ClientEvent, ClientStdioConnection, ErrorResult, InputRequired, ListChanged, LogMessage,
    OutgoingMessage, OutgoingRequest, ResourceUpdated, ResultReceived, ServerRequest, jsonschema_validator,
)

from .cache import ResponseCache, stdio_where
from .session_feed import FeedListen, SessionFeed, receive_one
from .session import (
    ElicitationHandler, EventHandler, InputHandler, MaybeDelivered, RootsHandler, SamplingHandler, Session, Subscription,
    TransportError,
)

__all__ = ["DEFAULT_ENV_KEYS", "StdioClient", "default_environment"]

_log = logging.getLogger("mcpwire.client")

_SKIPPED_LOGGED = 16
"""How many skipped lines (not JSON, not a message, answering no request in flight) are logged
per connection; the rest are only counted (``StdioClient.skipped_lines``): a server cannot
flood the log."""

_EXIT_STATUS_WAIT = 1.0
"""How long, once the server's stdout has ended, the reader waits for the process's exit status
before failing the requests in flight (a server that closes stdout and lives on: without it)."""


DEFAULT_ENV_KEYS: tuple[str, ...] = (
    ("APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT", "PROCESSOR_ARCHITECTURE", "SYSTEMDRIVE",
     "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE")
    if sys.platform == "win32" else ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR")
)
"""What a server process inherits from ours by default: enough to run, nothing secret."""


def default_environment() -> dict[str, str]:
    """The variables of :data:`DEFAULT_ENV_KEYS` that are set here (values that look like shell
    functions, ``()`` first, are left out, as the official SDKs do)."""
    return {k: v for k in DEFAULT_ENV_KEYS if (v := os.environ.get(k)) is not None and not v.startswith("()")}


class StdioClient(Session):
    """MCP over a subprocess's stdin/stdout.

    The process starts in ``cwd`` (default: ours) with :func:`default_environment` plus ``env``
    (``inherit_env=True``: our whole environment plus ``env``): a server gets no secret it was
    not given. ``stderr`` is passed to the process as is (``None``: ours).
    """

    _probe_first = True

    def __init__(
        self,
        command: Sequence[str],
        client: Client | None = None,
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        inherit_env: bool = False,
        stderr: int | None = None,
        max_rounds: int = 8,
        max_line_bytes: int = 4 * 1024 * 1024,
        read_timeout: float = 60.0,
        exit_timeout: float = 5.0,
        on_input: InputHandler | None = None,
        on_log: EventHandler | None = None,
        elicitation: ElicitationHandler | None = None,
        sampling: SamplingHandler | None = None,
        roots: RootsHandler | None = None,
        probe_timeout: float = 10.0,
        cache: ResponseCache | None = None,
    ) -> None:
        super().__init__(client or Client(Implementation(name="mcpwire", version="0.1.0"), validator=jsonschema_validator()),
                         max_rounds=max_rounds,
                         on_input=on_input, on_log=on_log, elicitation=elicitation, sampling=sampling, roots=roots)
        self._setup_lock = anyio.Lock()
        self.probe_timeout = probe_timeout
        self.command = list(command)
        self._env = {**(dict(os.environ) if inherit_env else default_environment()), **(env or {})}
        self._cwd = cwd
        self._stderr = stderr
        self._conn = ClientStdioConnection(self.client, max_line_bytes=max_line_bytes)
        self._exit_timeout = exit_timeout
        self.read_timeout = read_timeout
        """Seconds a request may hear nothing of its own before it fails with MaybeDelivered."""
        self.skipped_lines = 0
        """Lines from the server skipped so far: not JSON, not a message, or answering no request in flight."""
        self._waiters: dict[tuple[type, Any], MemoryObjectSendStream[ClientEvent]] = {}
        self._requests: set[tuple[type, Any]] = set()  # the waiters of _exchange (the others: listen streams)
        self._write_lock = anyio.Lock()
        self._process: anyio.abc.Process | None = None
        self._stack = contextlib.AsyncExitStack()
        self._closed = False
        self._tasks: anyio.abc.TaskGroup | None = None
        self._feed = SessionFeed()  # initialize-era notifications, for listen()
        self.returncode: int | None = None
        self.cache = cache  # a ResponseCache (adapters/client/cache.py), or None

    async def __aenter__(self) -> Self:
        self._process = await anyio.open_process(
            self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, env=self._env,
            cwd=self._cwd
        )
        self._stack = contextlib.AsyncExitStack()
        tasks = await self._stack.enter_async_context(anyio.create_task_group())
        self._tasks = tasks
        tasks.start_soon(self._read)
        return self

    async def __aexit__(self, *exc: object) -> None:
        process = self._process
        assert process is not None and process.stdin is not None
        with anyio.CancelScope(shield=True):
            try:
                await process.stdin.aclose()
            except (anyio.BrokenResourceError, OSError):
                pass  # the server exited already
            with anyio.move_on_after(self._exit_timeout):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()
            self.returncode = process.returncode
        await self._stack.aclose()  # the reader has hit EOF by now; outside the shield

    async def _read(self) -> None:
        process = self._process
        assert process is not None and process.stdout is not None
        try:
            async for chunk in process.stdout:
                self._route(self._conn.receive_data(chunk))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass  # as EOF: the server is gone
        # What the last, unterminated line held; not the connection's own -32000 for each request
        # in flight: their waiters hear the end of the server as TransportError (channels closed below).
        self._route([event for event in self._conn.receive_eof() if not self._lost(event)])
        self._closed = True
        try:
            with anyio.move_on_after(_EXIT_STATUS_WAIT):  # for the exit status the error names
                await process.wait()
        finally:
            for channel in self._waiters.values():  # anything left: the server is gone
                channel.close()
            self._feed.close()

    def _how_it_ended(self) -> str:
        """How the server process ended, as far as is known, for the messages of TransportError:
        "exited with status 3", "was killed by signal 9", or (no exit status yet) "closed its stdout"."""
        code = self._process.returncode if self._process is not None else None
        if code is None:
            return "closed its stdout"
        if code < 0:
            return f"was killed by signal {-code}"
        return f"exited with status {code}"

    def _not_running(self) -> TransportError:
        if self._process is None:
            return TransportError("the server process is not running (use `async with StdioClient(...)`)")
        return TransportError(f"the server process is not running: it {self._how_it_ended()}")

    def _lost(self, event: ClientEvent) -> str | None:
        """Why the connection ended a request itself, when ``event`` is that request's end."""
        if isinstance(event, ErrorResult) and event.request_id is not None:
            return self._conn.lost(event.request_id)
        return None

    def _route(self, events: list[ClientEvent]) -> None:
        for event in events:
            if isinstance(event, ServerRequest):
                # The engine names the request when it is the only one in flight: that request's,
                # as on its HTTP response stream. Otherwise (or for a listen) the client answers.
                owner = event.for_request
                key = (type(owner), owner)
                if owner is None or key not in self._requests or not _give(self._waiters[key], event):
                    self._answer_later(event)
                continue
            if isinstance(event, InvalidMessage):  # initialize era: answered, as JSON-RPC says
                self._skipped(event)
                # The only request in flight answers it and counts it against its rounds (as an
                # HTTP response stream's); otherwise the client answers it.
                owner = event.for_request
                key = (type(owner), owner)
                if (owner is None or key not in self._requests or not _give(self._waiters[key], event)) \
                        and self._tasks is not None:
                    self._tasks.start_soon(self._reject_quietly, event)
                continue
            if isinstance(event, ErrorResult) and event.request_id is None:
                self._skipped(event)
                continue
            if isinstance(event, (ListChanged, ResourceUpdated)) and event.subscription_id is None:
                self._feed.publish(event)
                continue
            if isinstance(event, LogMessage) and event.request_id is None:
                if self._tasks is not None:  # several calls in flight: the client's on_log
                    self._tasks.start_soon(self._unrelated_log, event)
                continue
            request_id = getattr(event, "request_id", None)
            if request_id is None:  # listen events carry the listen request's id as subscription_id
                request_id = getattr(event, "subscription_id", None)
            channel = self._waiters.get((type(request_id), request_id)) if request_id is not None else None
            if channel is not None:
                _give(channel, event)
            # Events for no waiter (a log line on a busy connection) are dropped.

    def _answer_later(self, event: ServerRequest) -> None:
        if self._tasks is not None:
            self._tasks.start_soon(self._answer_quietly, event)

    def _skipped(self, event: ErrorResult | InvalidMessage) -> None:
        # A line the client cannot read is meant for no request of ours: skipped (an invalid
        # one of an initialize-era server answered too), and the requests in flight wait on
        # (within read_timeout).
        self.skipped_lines += 1
        if self.skipped_lines <= _SKIPPED_LOGGED:
            more = " (later ones are not logged)" if self.skipped_lines == _SKIPPED_LOGGED else ""
            # The message may be the server's own (an error with id null): quoted, control
            # characters escaped, cut short, so that a server cannot drive a terminal nor flood it.
            _log.warning("skipped a line from the server: %r (%s)%s", event.message[:200], event.code, more)

    async def _answer_quietly(self, event: ServerRequest) -> None:
        # A line names no request: the one call in flight answers (its on_input), else the client.
        try:
            await self._answer_server(event, None)
        except TransportError:
            pass  # the server is gone

    async def _reject_quietly(self, event: InvalidMessage) -> None:
        try:
            await self._deliver(self.client.reject(event))
        except TransportError:
            pass  # the server is gone

    async def _deliver(self, message: OutgoingMessage) -> None:
        await self._write(message.line)

    def _cache_where(self) -> tuple[str, str]:
        return stdio_where(self.command, self._cwd, self._env)

    async def _probe(self) -> ResultReceived | None:
        # An initialize-era server may ignore requests sent before initialize: no answer in
        # probe_timeout (or in a shorter read_timeout) means the handshake.
        with anyio.move_on_after(self.probe_timeout):
            try:
                return await super()._probe()
            except MaybeDelivered:
                return None
        return None

    async def _write(self, data: bytes) -> None:
        process = self._process
        assert process is not None and process.stdin is not None
        async with self._write_lock:
            try:
                await process.stdin.send(data)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
                ended = f" (the server process {self._how_it_ended()})" if process.returncode is not None else ""
                raise TransportError(f"server stdin closed: {exc!r}{ended}") from exc

    async def _exchange(self, request: OutgoingRequest, on_event: Callable[[ClientEvent], Awaitable[None]]) -> ClientEvent:
        if self._process is None or self._closed:
            raise self._not_running()
        key = (type(request.id), request.id)
        send, receive = anyio.create_memory_object_stream[ClientEvent](math.inf)
        self._waiters[key] = send
        self._requests.add(key)
        finished = False  # else (cancelled, timed out, lost) notifications/cancelled is written
        try:
            await self._write(self._conn.send(request))
            while True:
                try:
                    with anyio.fail_after(self.read_timeout):  # not while on_event runs: a person may be answering
                        event = await receive.receive()
                except anyio.EndOfStream:
                    finished = True  # the reader closed the channel: the server is gone
                    raise TransportError(f"the server process {self._how_it_ended()} before answering "
                                         f"{request.method} (id {request.id!r})") from None
                except TimeoutError as exc:
                    raise MaybeDelivered(f"nothing from the server for {request.method} (id {request.id!r}) in "
                                         f"{self.read_timeout} s; it may have been processed by the server, and was "
                                         "not sent again", request.method, request.id) from exc
                lost = self._lost(event)
                if lost is not None:
                    raise TransportError(f"{lost} ({request.method}, id {request.id!r}, was in flight)")
                if isinstance(event, (ResultReceived, ErrorResult, InputRequired)):
                    finished = True
                    return event
                await on_event(event)
        finally:
            del self._waiters[key]
            self._requests.discard(key)
            send.close()
            for left in _drain(receive):  # the server's requests routed here once it had ended
                if isinstance(left, ServerRequest):
                    self._answer_later(left)
            receive.close()
            if not finished and not self._closed and self.client.may_cancel(request):
                with anyio.CancelScope(shield=True):
                    try:
                        await self._write(self._conn.cancel(request, "cancelled by the client"))
                    except TransportError:
                        pass

    def _subscription(self, request: OutgoingRequest) -> Subscription:
        return _StdioSubscription(self, request)

    def _session_listen(self, notifications: Mapping[str, Any]) -> Subscription:
        return FeedListen(self, notifications, self._feed, self._check_running)

    async def _check_running(self) -> None:
        if self._process is None or self._closed:
            raise self._not_running()

    # -- listen streams on these pipes (what a Subscription of this client calls) -----------------
    async def open_listen_stream(self, request: OutgoingRequest) -> MemoryObjectReceiveStream[ClientEvent]:
        """Write the listen ``request`` and return the channel its events are routed to (the
        server stamps them with the request's id), until :meth:`close_listen_stream`. For the
        :class:`Subscription` that :meth:`listen` returns; a host has no need to call it."""
        await self._check_running()
        send, receive = anyio.create_memory_object_stream[ClientEvent](math.inf)
        self._waiters[(type(request.id), request.id)] = send
        try:
            await self._write(self._conn.send(request))
        except BaseException:
            await self.close_listen_stream(request, receive, cancel=True)
            raise
        return receive

    async def close_listen_stream(self, request: OutgoingRequest, channel: MemoryObjectReceiveStream[ClientEvent],
                                  *, cancel: bool) -> None:
        """Stop routing ``request``'s events to ``channel``; with ``cancel`` (the server has not
        ended the stream), write ``notifications/cancelled`` for it while the process runs."""
        send = self._waiters.pop((type(request.id), request.id), None)
        if send is not None:
            send.close()
        channel.close()
        if cancel and not self._closed:
            with anyio.CancelScope(shield=True):
                try:
                    await self._write(self._conn.cancel(request, "subscription closed by the client"))
                except TransportError:
                    pass


class _StdioSubscription(Subscription):
    """A listen stream sharing the process's pipes; cancelled with ``notifications/cancelled``."""

    def __init__(self, session: StdioClient, request: OutgoingRequest) -> None:
        super().__init__(session, request)
        self._stdio = session
        self._channel: MemoryObjectReceiveStream[ClientEvent] | None = None

    async def _start(self) -> None:
        assert self.request is not None
        self._channel = await self._stdio.open_listen_stream(self.request)

    async def _receive(self) -> list[ClientEvent] | None:
        events = await receive_one(self._channel)
        assert self.request is not None
        if events is None and self._channel is not None and self._stdio._closed:  # not ended by the server
            raise TransportError(f"the server process {self._stdio._how_it_ended()} while listening "
                                 f"({self.request.method}, id {self.request.id!r})")
        lost = self._stdio._lost(events[0]) if events else None
        if lost is not None:  # a line past max_line_bytes: the stream lost what it carried
            raise TransportError(f"{lost} (while listening: {self.request.method}, id {self.request.id!r})")
        return events

    async def _stop(self) -> None:
        channel, self._channel = self._channel, None
        if channel is None:
            return
        assert self.request is not None
        await self._stdio.close_listen_stream(self.request, channel, cancel=not self._ended)


def _give(channel: MemoryObjectSendStream[ClientEvent], event: ClientEvent) -> bool:
    """Hand ``event`` to a waiter's channel; ``False`` when that waiter is gone."""
    try:
        channel.send_nowait(event)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        return False
    return True


def _drain(channel: MemoryObjectReceiveStream[ClientEvent]) -> list[ClientEvent]:
    """What is left unread in a waiter's channel (its writer closed)."""
    left: list[ClientEvent] = []
    with contextlib.suppress(anyio.EndOfStream, anyio.WouldBlock, anyio.ClosedResourceError):
        while True:
            left.append(channel.receive_nowait())
    return left
