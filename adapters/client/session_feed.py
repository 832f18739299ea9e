"""The notifications of an initialize-era session, fanned out to its listeners.

On an initialize-era session the server's notifications that belong to no request (list
changes, resource updates) arrive on one channel per connection: the GET stream over HTTP, the
server's stdout over stdio (specification 2025-11-25: Basic > Transports). The transport
publishes each such event into its :class:`SessionFeed`; every :class:`FeedListen` (what
``Session.listen`` returns on such a session) has a bounded queue of its own and picks what
its filter asks for. The queues are anyio memory object streams, so the feed serves the
clients on asyncio and trio alike.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcpwire import ClientEvent

from .port import ListenSession
from .subscription import SessionListen

__all__ = ["FeedListen", "SessionFeed", "receive_one"]

_log = logging.getLogger("mcpwire.client")


async def receive_one(channel: MemoryObjectReceiveStream[ClientEvent] | None) -> list[ClientEvent] | None:
    """The next event of a listener's channel, or ``None`` once it has ended (or was never opened)."""
    if channel is None:
        return None
    try:
        return [await channel.receive()]
    except (anyio.EndOfStream, anyio.ClosedResourceError):
        return None  # the channel's writer is gone (on stdio: the server closed its stdout)


class SessionFeed:
    """Fan-out of one session's unrelated notifications. A listener whose queue holds
    ``capacity`` unread events misses the next ones (counted in :attr:`dropped`, logged once
    per listener) rather than holding up the transport's reader."""

    def __init__(self, capacity: int = 1024) -> None:
        self.capacity = capacity
        self.dropped = 0
        self._listeners: dict[MemoryObjectSendStream[ClientEvent], bool] = {}  # -> warned already

    @property
    def listening(self) -> bool:
        return bool(self._listeners)

    def open(self) -> tuple[MemoryObjectSendStream[ClientEvent], MemoryObjectReceiveStream[ClientEvent]]:
        send, receive = anyio.create_memory_object_stream[ClientEvent](self.capacity)
        self._listeners[send] = False
        return send, receive

    def remove(self, send: MemoryObjectSendStream[ClientEvent]) -> None:
        if self._listeners.pop(send, None) is not None:
            send.close()

    def publish(self, event: ClientEvent) -> None:
        for send, warned in list(self._listeners.items()):
            try:
                send.send_nowait(event)
            except anyio.WouldBlock:
                self.dropped += 1
                if not warned:
                    self._listeners[send] = True
                    _log.warning("a session listener is %d events behind; dropping what it has no room for",
                                 self.capacity)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._listeners.pop(send, None)

    def close(self) -> None:
        """The session's channel is gone (the server process exited): every listener ends."""
        listeners, self._listeners = self._listeners, {}
        for send in listeners:
            send.close()


class FeedListen(SessionListen):
    """A :class:`SessionListen` reading a :class:`SessionFeed`. ``on_open`` runs when it
    starts: the transport checks it can deliver (and over HTTP opens the GET stream)."""

    def __init__(self, session: ListenSession, notifications: Mapping[str, Any], feed: SessionFeed,
                 on_open: Callable[[], Awaitable[None]]) -> None:
        super().__init__(session, notifications)
        self._feed = feed
        self._on_open = on_open
        self._send: MemoryObjectSendStream[ClientEvent] | None = None
        self._channel: MemoryObjectReceiveStream[ClientEvent] | None = None

    async def _start(self) -> None:
        await self._on_open()
        self._send, self._channel = self._feed.open()

    async def _receive(self) -> list[ClientEvent] | None:
        return await receive_one(self._channel)

    async def _stop(self) -> None:
        if self._send is not None:
            self._feed.remove(self._send)
        if self._channel is not None:
            self._channel.close()
        self._send, self._channel = None, None
