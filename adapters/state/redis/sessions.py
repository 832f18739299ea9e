"""Initialize-era sessions and their SSE events on Redis: :class:`RedisSessionStore` and
:class:`~mcpwire_adapters.state.redis.events.RedisEventStore` (``pip install mcpwire[redis]``),
so that consecutive requests of one session may land on different processes, and a client may
resume a stream on any of them.

What is shared. A session's hash (``<prefix>session:<id>``) holds what ``initialize`` fixed
(revision, client capabilities and info, and ``principal``, the principal it was opened for:
absent without one, so a record written before principals were kept reads as a session bound
to its id only), what later requests changed (the log level, the resource subscriptions, the
state) and the name of its events; it expires ``idle_timeout``
seconds after the last request, on any process (each ``get`` renews it; so does the process
holding its open GET stream, or a request waiting for its client's answers, while it does). The engine writes a
change back through :meth:`RedisSessionStore.save`. The session's one GET stream is held
service-wide by a lease (``stream_lease.py``): a second GET on any process is 409. What is not
shared, because it is live in one process: the open GET stream itself and the server-to-client
requests a running exchange waits on (an answer that reaches another process is passed on by
the broker). Each process keeps its own :class:`Session` object per
session (the live parts), refreshed from Redis on every ``get``; a change made on another
process reaches this process's GET stream filter at its next request on the session.

Events (``events.py``). A session's streams, its POST streams and its GET stream, record their
SSE frames in Redis lists (the newest :data:`MAX_STREAMS` streams, the newest
:data:`MAX_EVENTS` frames of each, expiring with the session), so a GET with
``Last-Event-ID`` on any process replays what was sent.

The cost of calling Redis from the engine. The engine calls its stores synchronously (it is
sans-IO; the store is the host's), so these calls block the event loop for one or two round
trips to Redis each: about 0.1 ms on a local Redis, up to ``socket_timeout`` (2 s with
``mcpwire serve --redis``) when Redis does not answer. Run Redis near the servers. When Redis
cannot be reached, a session request fails (-32603, HTTP 500, logged): the session is not
known; recording a frame logs and goes on (the frame is sent, it just cannot be replayed).
Per request: ``get`` one round trip (a pipeline); a GET stream's opening two more (the lease,
the new stream), each of its events one, its end one (the lease goes).
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from typing import Any

import msgspec
import redis

from mcpwire import LocalProtocolError
from mcpwire.sessions import Session

from .events import MAX_EVENTS, MAX_STREAMS, RedisEventStore, failure, text
from .stream_lease import StreamLeases

__all__ = ["MAX_EVENTS", "MAX_STREAMS", "RedisEventStore", "RedisSessionStore"]

_log = logging.getLogger("mcpwire_adapters.redis")
_ENCODE = msgspec.json.Encoder().encode
_DECODE = msgspec.json.decode

# KEYS: the session, the index. ARGV: id, fields (JSON), now (ms), idle (ms), max, prefix.
_ADD = """
if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])) do
  redis.call('DEL', ARGV[6] .. 'session:' .. id)
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then return 0 end
local fields = cjson.decode(ARGV[2])
for k, v in pairs(fields) do redis.call('HSET', KEYS[1], k, v) end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('ZADD', KEYS[2], tonumber(ARGV[3]) + tonumber(ARGV[4]), ARGV[1])
return 1
"""


class RedisSessionStore:
    """A server's initialize-era sessions in the Redis at ``client`` under ``prefix``: at most
    ``max_sessions`` (default 10000), each dropped ``idle_timeout`` seconds (default 1800)
    after its last request on any process; each new session gets a :class:`RedisEventStore`.
    Pass it as ``App(..., sessions=store)``, or serve with ``mcpwire serve --redis URL``.

    ``stream_lease`` (seconds, default 10): how long the lease of a session's GET stream outlives
    the last renewal of its process (:meth:`check_streams`, every fifth of it, which the broker
    runs); a process that dies holding one keeps the session from opening another GET stream
    for that long at most.

    ``shared``: a client's answer to a request this process did not send reaches the process
    that did (the engine hands it to the App, whose broker passes it on); each process numbers
    its requests to a session from a random start, so an answer names one request only."""

    shared = True

    def __init__(self, client: redis.Redis, *, prefix: str = "mcpwire:", max_sessions: int = 10_000,
                 idle_timeout: float = 1800.0, stream_lease: float = 10.0) -> None:
        if max_sessions < 1 or not idle_timeout > 0 or not stream_lease > 0:
            raise LocalProtocolError("max_sessions must be at least 1, idle_timeout and stream_lease positive")
        self.redis = client
        self.prefix = prefix
        self.max_sessions = max_sessions
        self.idle_ms = int(idle_timeout * 1000)
        self.leases = StreamLeases(client, prefix=prefix, lease=stream_lease)
        """The GET-stream leases of this process's sessions (``stream_lease.py``): each lapses
        ``stream_lease`` seconds after its last renewal (:meth:`check_streams`)."""
        self._add = client.register_script(_ADD)
        self._local: dict[str, Session] = {}
        # A session with an open GET stream here, or a request waiting for its client's answers,
        # is not idle (as in MemorySessionStore): a thread renews its expiry.
        self._stop = threading.Event()
        self._renewer = threading.Thread(target=self._renewing, args=(min(idle_timeout / 3, 60.0),),
                                         name="mcpwire-sessions", daemon=True)
        self._renewer.start()

    def renew_busy(self) -> int:
        """Renew the expiry of this process's busy sessions (an open GET stream, a request
        waiting for input); returns how many. The store's thread calls it every third of
        ``idle_timeout`` (at most every minute)."""
        busy = [s for s in list(self._local.values()) if s.id is not None and s.open and (s.stream is not None or s.waiting)]
        if busy:
            pipe = self.redis.pipeline()
            for session in busy:
                pipe.pexpire(self._key(str(session.id)), self.idle_ms)
                pipe.zadd(self.prefix + "sessions", {str(session.id): time.time() * 1000 + self.idle_ms}, xx=True)
            pipe.execute()
        return len(busy)

    def _renewing(self, interval: float) -> None:
        while not self._stop.wait(interval):
            try:
                self.renew_busy()
            except redis.RedisError as exc:
                _log.warning("session store: busy sessions not renewed: %s", exc)

    def close(self) -> None:
        """Stop renewing busy sessions (the sessions stay in Redis until they expire). Idempotent."""
        self._stop.set()

    def event_store(self) -> RedisEventStore:
        """A new session's event store (``add`` gives each new session one)."""
        return RedisEventStore(self.redis, f"{self.prefix}events:{secrets.token_hex(12)}:", self.idle_ms)

    # -- the SessionStore interface ---------------------------------------------------------
    def get(self, session_id: str, now: float) -> Session | None:
        key = self._key(session_id)
        try:
            pipe = self.redis.pipeline()
            pipe.hgetall(key)
            pipe.pexpire(key, self.idle_ms)
            pipe.zadd(self.prefix + "sessions", {session_id: now * 1000 + self.idle_ms}, xx=True)
            fields: dict[bytes, bytes] = pipe.execute()[0]
        except redis.RedisError as exc:
            raise failure("get", exc) from exc
        if not fields:
            self._local.pop(session_id, None)
            return None
        try:
            session = self._session(session_id, fields, now)
        except (KeyError, ValueError, msgspec.DecodeError) as exc:
            _log.warning("session store: dropped session %s, not one of ours: %s", session_id, exc)
            return None
        if not session.open:
            return None
        session.last_seen = max(session.last_seen, now)
        return session

    def add(self, session: Session, now: float) -> bool:
        if session.id is None:
            raise LocalProtocolError("Only a session with an id can be stored")
        events = session.events
        if not isinstance(events, RedisEventStore):  # a new session: nothing recorded yet
            events = session.events = self.event_store()
        fields = {"revision": session.revision, "caps": _ENCODE(session.client_capabilities).decode(),
                  "info": _ENCODE(session.client_info).decode(), "events": events.base,
                  "created": repr(session.created), **self._changing(session)}
        if session.principal is not None:  # the engine serves the session to this principal only
            fields["principal"] = session.principal
        try:
            added = self._add(keys=[self._key(session.id), self.prefix + "sessions"],
                              args=(session.id, _ENCODE(fields), repr(now * 1000), self.idle_ms, self.max_sessions, self.prefix))
        except redis.RedisError as exc:
            raise failure("add", exc) from exc
        if added == -1:
            raise LocalProtocolError(f"Session id {session.id!r} was issued twice: the host's ids must be unique")
        if added:
            self._local[session.id] = session
        return bool(added)

    def remove(self, session_id: str) -> Session | None:
        key = self._key(session_id)
        try:
            fields = self.redis.hgetall(key)
            pipe = self.redis.pipeline()
            pipe.delete(key, self.leases.key(session_id))
            pipe.zrem(self.prefix + "sessions", session_id)
            pipe.execute()
            self.leases.forget(session_id)
            base = text(fields.get(b"events", b""))
            if base.startswith(self.prefix + "events:"):
                self.redis.delete(*RedisEventStore(self.redis, base, self.idle_ms).keys())
        except redis.RedisError as exc:
            raise failure("remove", exc) from exc
        return self._local.pop(session_id, None)

    def save(self, session: Session) -> None:
        if session.id is None:
            return
        try:
            changing: dict[Any, Any] = self._changing(session)
            self.redis.hset(self._key(session.id), mapping=changing)
        except redis.RedisError as exc:
            raise failure("save", exc) from exc

    def claim_stream(self, session: Session, now: float) -> bool:
        """Take the session's GET-stream lease (``stream_lease.py``): one round trip; ``False``
        when a stream of any process holds it. -32603 when Redis cannot be reached."""
        try:
            return self.leases.claim(str(session.id))
        except redis.RedisError as exc:
            raise failure("claim stream", exc) from exc

    def release_stream(self, session: Session) -> None:
        """The session's GET stream here ended: its lease goes (logged when Redis cannot be reached)."""
        self.leases.release(str(session.id))

    @property
    def check_interval(self) -> float:
        """Seconds between two calls of :meth:`check_streams`."""
        return self.leases.interval

    def check_streams(self) -> tuple[list[str], list[str]]:
        """Renew the leases of this process's GET streams (one round trip for all of them) and
        say which must end here: ``(gone, lost)``, the sessions that no longer exist and those
        whose lease is no longer this process's stream's. Never raises (logged). The broker
        (``RedisBroker(sessions=...)``) calls it every :attr:`check_interval` seconds, from a
        worker thread, and ends those streams."""
        return self.leases.check()

    def __len__(self) -> int:
        return int(self.redis.zcard(self.prefix + "sessions"))

    def refresh_listening(self) -> None:
        """Read again the subscriptions of this process's sessions that have a GET stream open
        (another process may have changed them), before a resources/updated is delivered: one
        round trip for all of them. Logged, not raised, when Redis cannot be reached."""
        listening = [s for s in self._local.values() if s.stream is not None and s.id is not None]
        if not listening:
            return
        try:
            pipe = self.redis.pipeline()
            for session in listening:
                pipe.hget(self._key(str(session.id)), "subs")
            found = pipe.execute()
        except redis.RedisError as exc:
            _log.warning("session store: subscriptions not refreshed: %s", exc)
            return
        for session, subs in zip(listening, found):
            if subs is not None:
                session.subscriptions = {s for s in _DECODE(subs) if isinstance(s, str)}

    # -- helpers ----------------------------------------------------------------------------
    def _key(self, session_id: str) -> str:
        return f"{self.prefix}session:{session_id}"

    @staticmethod
    def _changing(session: Session) -> dict[str, str]:
        return {"level": session.log_level or "", "subs": _ENCODE(sorted(session.subscriptions)).decode(),
                "state": session.state.value}

    def _session(self, session_id: str, fields: dict[bytes, bytes], now: float) -> Session:
        """This process's object for the session, made from ``fields`` or refreshed with them."""
        session = self._local.get(session_id)
        if session is None:
            events = RedisEventStore(self.redis, text(fields[b"events"]), self.idle_ms)
            caps, info = _DECODE(fields[b"caps"]), _DECODE(fields[b"info"])
            if type(caps) is not dict or not (info is None or type(info) is dict):
                raise ValueError("capabilities or client info of the wrong type")
            if not text(fields[b"events"]).startswith(self.prefix + "events:"):
                raise ValueError("events outside this server's prefix")
            principal = fields.get(b"principal")  # absent: opened without one, or written before it was kept
            session = Session(session_id, text(fields[b"revision"]), caps, info, float(fields[b"created"]), events,
                              first_request_id=1 + secrets.randbits(40) * 4096,
                              principal=None if principal is None else text(principal))
            self._local[session_id] = session
            while len(self._local) > self.max_sessions:
                del self._local[next(iter(self._local))]
        session.log_level = text(fields[b"level"]) or None
        subscriptions: Any = _DECODE(fields[b"subs"])
        session.subscriptions = {s for s in subscriptions if isinstance(s, str)}
        state = type(session.state)(text(fields[b"state"]))  # the session's state enum, by value
        if session.open:
            session.state = state
        return session
