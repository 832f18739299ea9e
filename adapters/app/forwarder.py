"""Forwarding one listen stream to its connection: :class:`ListenForwarder`, which every
driver (trio/h11, ASGI, stdio) uses through :meth:`App.forward_listen`. (:class:`Registered`,
the record of an open stream's channel, lives in ``hub.py``; this module still exports it.)"""

from __future__ import annotations

import math
from typing import Any, Callable, Coroutine

import anyio

from mcpwire import HttpListenStream, ListenStream, ResponseBody
from mcpwire.framing import encode_comment
from mcpwire.sessions import ResumedStream

from .context import PeerGone, Send
from .hub import Hub, Registered

__all__ = ["Alarm", "ListenForwarder", "Registered"]

Alarm = Callable[[float, "Callable[[], None] | None"], None]
"""``alarm(seconds, callback)``: the driver calls ``callback()`` once ``seconds`` have passed,
unless ``alarm`` is called again first (``callback=None`` clears it). A driver's own timer
(the trio/h11 server's), instead of a deadline per wait in the event loop's heap."""

_KEEPALIVE = encode_comment("keepalive")


class ListenForwarder:
    """One subscriptions/listen stream forwarded to its connection, from :meth:`App.forward_listen`.

    The trio/h11, ASGI and stdio drivers all forward their listen streams with this one class:
    :meth:`run` writes the acknowledgement (:attr:`first`), then whatever the app delivers to
    the stream (list_changed, resources/updated), until the stream ends with its listen result
    (:meth:`App.close_streams`), the app drops it (a consumer too far behind, or
    :meth:`App.close_stream`), or the client goes away. The stream is closed when :meth:`run`
    returns, however it returns.
    """

    def __init__(self, hub: Hub, stream: ListenStream[Any], buffer: int = 64) -> None:
        self.hub = hub
        self.stream = stream
        #: The acknowledgement: the stream's first output.
        self.first: Any = stream.start()
        # Opened and closed through the App's own methods, which a driver or a test may wrap.
        self._channel = hub.host.open_stream(stream, buffer)  # no await since start(): nothing missed
        self._registered = hub.streams[id(stream)]
        if isinstance(stream, ResumedStream):
            if stream.finished:  # the replay holds the final response: nothing more comes
                hub.end_channel(stream)
            else:
                hub.resuming(stream)

    async def run(
        self,
        emit: Send,
        *,
        watch: Callable[[Callable[[], None]], Coroutine[Any, Any, None]] | None = None,
        keepalive_interval: float | None = None,
        alarm: Alarm | None = None,
    ) -> bool:
        """Write the stream with ``emit`` (one call per output; it raises :class:`PeerGone` when
        the client went away) until it ends. ``watch(gone)``, when given, runs alongside and
        calls ``gone()`` when the client goes away. ``keepalive_interval``: seconds of silence
        after which an SSE ``: keepalive`` comment is written (Streamable HTTP streams only;
        stdio streams have none); ``alarm`` times that silence instead of a deadline per wait
        (:data:`Alarm`). Returns True when the stream ended with its listen result,
        False when the app dropped it or the client went away: an HTTP response must then be
        left unfinished (an abrupt end is never disguised as a complete stream)."""
        ended = False
        try:
            with self._channel:
                async with anyio.create_task_group() as tasks:
                    if watch is not None:
                        tasks.start_soon(watch, tasks.cancel_scope.cancel)
                    try:
                        await emit(self.first)
                        ended = await self._pump(emit, keepalive_interval, alarm)
                    except PeerGone:
                        pass
                    tasks.cancel_scope.cancel()
        finally:
            if alarm is not None:
                alarm(math.inf, None)
            self.hub.host.close_stream(self.stream)
        return ended

    async def _pump(self, emit: Send, keepalive_interval: float | None, alarm: Alarm | None) -> bool:
        keepalive: Any = None
        if keepalive_interval is not None and isinstance(self.stream, HttpListenStream):
            keepalive = [ResponseBody(data=_KEEPALIVE, more=True)]
        interval = keepalive_interval if keepalive is not None and keepalive_interval is not None else math.inf
        while True:
            # Each wait is a cancel scope; with an alarm it has no deadline of its own.
            with (anyio.CancelScope() if alarm is not None else anyio.move_on_after(interval)) as idle:
                if alarm is not None:
                    alarm(interval, idle.cancel)
                try:
                    output = await self._channel.receive()
                except anyio.EndOfStream:
                    # The app closes the channel right after delivering the listen result.
                    return self._registered.ended
            if idle.cancelled_caught:
                await emit(keepalive)
            else:
                await emit(output)
