"""What an App shares with its parts (Context, Fanout, ListenForwarder, TaskRunner): :class:`Hub`.

The hub owns the App's open listen streams, each one's channel (:class:`Registered`): it
delivers the engine's outputs to them, and keeps the resumed GET streams that carry what a
detached exchange sends after ``close_sse_stream``: in this process, its output as it goes;
when the exchange runs in another process of the server, what that process recorded in the
session's event store, read each time it says the stream grew (:meth:`Hub.stream_grew`). It
also holds the parts for one another (the task runner, the fan-out) and the App itself as they
call back into it (:class:`Host`). The parts import this module and never ``app.py``, so
imports within the package run one way: ``app.py``, then the parts, then the hub.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Protocol

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcpwire import HttpExchange, InputArrived, ListenState, ListenStream, ResponseBody, Server, SessionClosed
from mcpwire.sessions import ResumedStream
from mcpwire.tasks import TaskChanged

__all__ = ["Changes", "Host", "Hub", "Registered", "TaskWork"]


class Host(Protocol):
    """The App as its parts call back into it. Its own methods, not the hub's: a driver or a test
    may wrap them on the instance (a spy on ``open_stream``, say)."""

    async def answer(self, ctx: Any) -> None: ...
    def input_arrived(self, arrived: InputArrived) -> None: ...
    def session_ended(self, closed: SessionClosed) -> None: ...
    def open_stream(self, stream: ListenStream[Any], buffer: int = ...) -> MemoryObjectReceiveStream[Any]: ...
    def close_stream(self, stream: ListenStream[Any]) -> None: ...


class TaskWork(Protocol):
    """The App's task runner (``tasks.py``) as the context and the fan-out use it."""

    def started(self, ctx: Any) -> None: ...
    def notify(self, task_id: str) -> None: ...
    def wake(self, task_id: str) -> None: ...
    def runs(self, task_id: str) -> bool: ...
    async def task_changed(self, changed: TaskChanged, *, forwarded: bool = ...) -> None: ...


class Changes(Protocol):
    """The App's fan-out (``fanout.py``) as the task runner and the hub use it."""

    def task_status(self, task_id: str) -> None: ...
    def task_changed_elsewhere(self, task_id: str) -> bool: ...
    def stream_grew(self, session_id: str, key: str) -> None: ...


class Registered:
    """An open listen stream's channel, and whether its listen result went into it."""

    __slots__ = ("channel", "ended")

    def __init__(self, channel: MemoryObjectSendStream[Any]) -> None:
        self.channel = channel
        self.ended = False


class Hub:
    """The shared state and services of one App (see the module docstring). ``tasks`` and
    ``fanout`` are set by the App once it has made them: each of them takes the hub."""

    tasks: TaskWork
    fanout: Changes

    def __init__(self, host: Host, server: Server) -> None:
        self.host = host
        self.server = server
        self.streams: dict[int, Registered] = {}
        """Each open listen stream's channel, by ``id(stream)``."""
        # The resumed GET stream of each detached exchange, by (session id, stream key).
        self._resumers: dict[tuple[str | None, str | None], ListenStream[Any]] = {}

    def open_stream(self, stream: ListenStream[Any], buffer: int) -> MemoryObjectReceiveStream[Any]:
        """Register ``stream``; what is delivered to it arrives on the returned end."""
        send, receive = anyio.create_memory_object_stream[Any](buffer)
        self.streams[id(stream)] = Registered(send)
        return receive

    def close_stream(self, stream: ListenStream[Any]) -> None:
        """Drop ``stream``: cancelled, forgotten, its channel closed without its listen result."""
        if isinstance(stream, ResumedStream):
            self._resumers.pop((stream.session.id, stream.key), None)
        stream.cancel()
        registered = self.streams.pop(id(stream), None)
        if registered is not None:
            registered.channel.close()

    def end_channel(self, stream: ListenStream[Any]) -> None:
        """``stream`` got its last output: its channel ends, as after a listen result."""
        registered = self.streams.get(id(stream))
        if registered is not None:
            registered.ended = True
            registered.channel.close()

    def close_streams(self) -> None:
        """Graceful end of every listen stream: each gets its listen result."""
        self.deliver(self.server.close_listeners(), last=True)
        for registered in self.streams.values():
            registered.channel.close()
        self.streams.clear()

    def deliver(self, deliveries: list[tuple[ListenStream[Any], Any]], *, last: bool = False) -> None:
        """Put each output in its stream's channel (``last``: it is the stream's listen result)."""
        for stream, output in deliveries:
            registered = self.streams.get(id(stream))
            if registered is None or not output:
                continue
            try:
                registered.channel.send_nowait(output)
            except (anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
                # A consumer this far behind is dropped rather than buffered without bound (or
                # it is already gone: its receiving end closed before close_stream ran). Through
                # the App, as every drop (Host).
                self.host.close_stream(stream)
            else:
                registered.ended = last

    def resuming(self, stream: ResumedStream) -> None:
        """``stream``, a GET with Last-Event-ID, takes what its detached exchange sends next."""
        self._resumers[(stream.session.id, stream.key)] = stream

    def resumed_sender(self, exchange: HttpExchange) -> Callable[[Any], Awaitable[None]]:
        """Where a detached exchange's output goes: the GET stream resuming it, once one is
        open (until then the session keeps the frames, and the GET replays them)."""
        key = (exchange.session.id if exchange.session is not None else None, exchange.stream_key)

        async def send(outputs: Any) -> None:
            stream = self._resumers.get(key)
            if stream is None:
                # No GET resumes it here (yet): one may in another process, which reads what the
                # session's event store recorded of it when told (a shared broker; else nothing).
                if key[0] is not None and key[1] is not None:
                    self.fanout.stream_grew(key[0], key[1])
                return
            last = any(isinstance(o, ResponseBody) and not o.more for o in outputs)
            self.deliver([(stream, outputs)], last=last)
            if last:
                self.end_channel(stream)

        return send

    def stream_grew(self, session_id: str, key: str) -> None:
        """Another process recorded more of request stream ``key`` of session ``session_id``:
        the GET resuming it here, if any, reads and forwards it (ended after the final response)."""
        stream = self._resumers.get((session_id, key))
        if not isinstance(stream, ResumedStream):
            return
        out = stream.follow()
        ended = stream.state is not ListenState.OPEN
        self.deliver([(stream, out)], last=ended)
        if ended:
            self.end_channel(stream)

    def close_resumers(self, session_id: str) -> None:
        """Drop every GET here resuming a request stream of session ``session_id`` (it ended)."""
        for key, stream in list(self._resumers.items()):
            if key[0] == session_id:
                self.host.close_stream(stream)
