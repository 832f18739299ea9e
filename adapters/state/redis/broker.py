"""The notification broker on Redis pub/sub: :class:`RedisBroker` (``pip install mcpwire[redis]``).

Every process of one server publishes its notices (``broker.py``) on one channel,
``<prefix>notices``, and subscribes to it; a process skips its own notices (it delivered them
to its streams already) and delivers the others'. The prefix namespaces a server: two servers
on one Redis, each with its own prefix, never see each other's notices.

How it reaches Redis from any event loop (trio or asyncio): with redis-py's blocking client,
in threads. :meth:`RedisBroker.publish` sends one ``PUBLISH`` from the event loop's thread, a
round trip to a local Redis, bounded by ``socket_timeout``; when Redis cannot be reached the
notice is logged and lost for the other processes (this process's streams had it already).
:meth:`RedisBroker.run` holds one worker thread (``anyio.to_thread``) that waits on the
subscription and hands each notice to the event loop (``anyio.from_thread.run``), one at a
time, so a burst waits in the socket and in Redis's output buffer for this client, which Redis
bounds (``client-output-buffer-limit pubsub``: past it Redis drops the connection, and the
broker reconnects). Slow listeners are bounded as in one process: each stream's queue holds
64 outputs, and a stream that far behind is closed. When the subscription breaks (Redis
restarted, the network), the broker logs it and subscribes again every ``reconnect_delay``
seconds; what was published meanwhile is not replayed (pub/sub keeps nothing), so a listener
may miss a change made during an outage, as it would miss one while reconnecting its stream.

Anything on the channel that is not an envelope of ours (a foreign or poisoned message) is
logged (at most its first 80 bytes) and dropped.

Given the server's session store (``sessions``, as :func:`~mcpwire_adapters.serve.redis_state.use_redis`
gives it), :meth:`RedisBroker.run` also checks this process's GET streams every
``sessions.check_interval`` seconds (2 with the default 10 s lease), in a worker thread: their
leases are renewed, and a stream whose session is gone (a DELETE whose notice was missed
while the subscription was down) or whose lease was lost is ended here
(:class:`SessionClosedNotice`, :class:`StreamLostNotice`, delivered to this process only).
"""

from __future__ import annotations

import logging
import secrets
import threading
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread
import redis

from ..broker import Deliver, Notice, SessionClosedNotice, StreamLostNotice, decode_envelope, encode_envelope
from .sessions import RedisSessionStore

__all__ = ["RedisBroker"]

_log = logging.getLogger("mcpwire_adapters.broker")


class RedisBroker:
    """Notices of one server (``prefix``) on the Redis at ``client`` (a ``redis.Redis``; the
    broker opens one more connection of its pool for the subscription). See the module docstring."""

    shared = True

    def __init__(self, client: redis.Redis, *, prefix: str = "mcpwire:", reconnect_delay: float = 0.5,
                 sessions: RedisSessionStore | None = None) -> None:
        self.redis = client
        self.sessions = sessions
        """The session store whose GET streams this broker checks (see the module docstring)."""
        self.channel = f"{prefix}notices"
        self.origin = secrets.token_hex(8)
        """This process's name on the channel."""
        self.reconnect_delay = reconnect_delay
        self.dropped = 0
        """How many messages on the channel were not notices of ours (logged and dropped)."""
        self.subscribed = threading.Event()
        """Set while the subscription is up (tests wait for it)."""

    def publish(self, notice: Notice) -> None:
        """Tell the other processes; logged, never raised, when Redis cannot be reached."""
        try:
            self.redis.publish(self.channel, encode_envelope(self.origin, notice))
        except redis.RedisError as exc:
            _log.warning("could not publish %r to the other processes: %s", notice, exc)

    async def run(self, deliver: Deliver) -> None:
        """Deliver the other processes' notices, and what the check of this process's GET
        streams finds, until cancelled (see the module docstring)."""
        stop = threading.Event()
        try:
            async with anyio.create_task_group() as tasks:
                if self.sessions is not None:
                    tasks.start_soon(self._check_streams, self.sessions, deliver)
                await anyio.to_thread.run_sync(self._listen, deliver, stop, abandon_on_cancel=True)
                tasks.cancel_scope.cancel()  # the event loop is gone
        finally:
            stop.set()

    async def _check_streams(self, sessions: RedisSessionStore, deliver: Deliver) -> None:
        while True:
            await anyio.sleep(sessions.check_interval)
            gone, lost = await anyio.to_thread.run_sync(sessions.check_streams, abandon_on_cancel=True)
            for session_id in gone:
                await self._deliver(deliver, SessionClosedNotice(session_id=session_id))
            for session_id in lost:
                await self._deliver(deliver, StreamLostNotice(session_id=session_id))

    @staticmethod
    async def _deliver(deliver: Deliver, notice: Notice) -> None:
        try:
            await deliver(notice)
        except Exception:  # a bug delivering one notice must not end the checks
            _log.exception("delivering %r failed", notice)

    def _listen(self, deliver: Deliver, stop: threading.Event) -> None:
        broken = False
        while not stop.is_set():
            pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
            try:
                pubsub.subscribe(self.channel)
                self.subscribed.set()
                if broken:
                    _log.warning("subscribed again to %s", self.channel)
                    broken = False
                while not stop.is_set():
                    message = pubsub.get_message(timeout=0.5)
                    if message is not None and not self._take(message, deliver):
                        return  # the event loop is gone
            except (redis.RedisError, OSError) as exc:
                self.subscribed.clear()
                if stop.is_set():
                    return  # stopping: a broken connection now is no news
                if not broken:
                    _log.warning("lost the subscription to %s (%s); retrying every %g s",
                                 self.channel, exc, self.reconnect_delay)
                broken = True
                stop.wait(self.reconnect_delay)
            finally:
                self.subscribed.clear()
                try:
                    pubsub.close()
                except (redis.RedisError, OSError):
                    pass

    def _take(self, message: dict[str, Any], deliver: Deliver) -> bool:
        if message.get("type") != "message":
            return True
        data = message.get("data")
        envelope = decode_envelope(data)
        if envelope is None:
            self.dropped += 1
            shown = data[:80] if isinstance(data, (bytes, bytearray)) else type(data).__name__
            _log.warning("dropped a message on %s that is not a notice: %r", self.channel, shown)
            return True
        if envelope.origin == self.origin:
            return True
        try:
            anyio.from_thread.run(deliver, envelope.notice)
        except RuntimeError:  # no event loop to hand it to any more: the App stopped
            return False
        except Exception:  # a bug delivering one notice must not end the subscription
            _log.exception("delivering %r failed", envelope.notice)
        return True
