"""The SSE events of one initialize-era session on Redis: :class:`RedisEventStore`, the
:class:`~mcpwire.sessions.EventStore` the Redis session store gives each session
(``pip install mcpwire[redis]``), so that a GET with ``Last-Event-ID`` replays on any process.

Keys, under the session's events base ``<prefix>events:<name>:`` (every one expiring with the
session, ``ttl_ms`` after its last write): ``n`` (the streams made so far), ``streams`` (the
keys of the newest :data:`MAX_STREAMS` streams) and for each stream ``<key>`` (a list of its
newest :data:`MAX_EVENTS` frames), ``<key>:n`` (how many events it sent: the number of the
newest frame kept) and ``<key>:end`` (its final frame was sent). A request's stream's key is a
number, the session's GET stream's ``g`` and a number (``mcpwire.sessions.STANDALONE``).

Round trips. A new stream costs one (a script); a frame one (a pipeline; the process that
writes a stream is its only writer and counts its events itself); a replay one (a pipeline).
A frame that cannot be written is logged and sent anyway (it just cannot be replayed); a new
stream or a replay that fails is -32603 (the engine's request fails: Redis is unreachable).
"""

from __future__ import annotations

import logging

import redis

from mcpwire import ErrorCode, ProtocolError
from mcpwire.sessions import STANDALONE

__all__ = ["MAX_EVENTS", "MAX_STREAMS", "RedisEventStore"]

_log = logging.getLogger("mcpwire_adapters.redis")
MAX_STREAMS = 32
"""SSE streams of one session kept for resumption (the newest): as ``MemoryEventStore``."""
MAX_EVENTS = 256
"""Events of one stream kept for resumption (the newest): as ``MemoryEventStore``."""

# KEYS: n, streams. ARGV: ttl (ms), MAX_STREAMS, the key's first letters, the events base.
_NEW_STREAM = """
local key = ARGV[3] .. redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('RPUSH', KEYS[2], key)
redis.call('PEXPIRE', KEYS[2], ARGV[1])
local keep = tonumber(ARGV[2])
for _, old in ipairs(redis.call('LRANGE', KEYS[2], 0, -keep - 1)) do
  redis.call('DEL', ARGV[4] .. old, ARGV[4] .. old .. ':n', ARGV[4] .. old .. ':end')
end
redis.call('LTRIM', KEYS[2], -keep, -1)
return key
"""


def failure(what: str, exc: BaseException) -> ProtocolError:
    """-32603 for a store call that Redis did not answer (logged with the cause)."""
    _log.error("session store: %s failed: %s", what, exc)
    return ProtocolError("Internal error", code=ErrorCode.INTERNAL_ERROR)


def text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _number(text: str, digits: int) -> bool:
    """Whether ``text`` (from the client's ``Last-Event-ID``) is a number of at most ``digits``
    ASCII digits (``str.isdigit`` also takes "²", which ``int`` refuses)."""
    return text.isascii() and text.isdigit() and len(text) <= digits


class RedisEventStore:
    """The SSE events of one session in Redis (see the module docstring); made by the session store."""

    def __init__(self, client: redis.Redis, base: str, ttl_ms: int) -> None:
        self.redis = client
        self.base = base  # <prefix>events:<name>:
        self.ttl_ms = ttl_ms
        self._new_stream = client.register_script(_NEW_STREAM)
        self._counts: dict[str, int] = {}  # events sent on each stream this process writes

    def new_stream(self, *, standalone: bool = False) -> str:
        try:
            key = text(self._new_stream(keys=[self.base + "n", self.base + "streams"], args=(
                self.ttl_ms, MAX_STREAMS, STANDALONE if standalone else "", self.base)))
        except redis.RedisError as exc:
            raise failure("new stream", exc) from exc
        self._counts[key] = 0
        while len(self._counts) > MAX_STREAMS:
            del self._counts[next(iter(self._counts))]
        return key

    def next_event_id(self, key: str) -> str:
        count = self._counts.get(key)
        if count is None:  # a stream another process writes: never the engine's case
            try:
                pipe = self.redis.pipeline()
                pipe.get(self.base + key + ":n")
                pipe.llen(self.base + key)
                written, kept = pipe.execute()
                count = int(written) if written is not None else int(kept)
            except redis.RedisError as exc:
                _log.warning("session events: %s", exc)
                count = 0
        return f"{key}-{count + 1}"

    def record(self, key: str, frame: bytes, *, last: bool = False) -> None:
        count = self._counts.get(key)
        if count is not None:
            count = self._counts[key] = count + 1
        try:
            pipe = self.redis.pipeline()
            pipe.rpush(self.base + key, frame)
            pipe.pexpire(self.base + key, self.ttl_ms)
            if count is None or count > MAX_EVENTS:
                pipe.ltrim(self.base + key, -MAX_EVENTS, -1)
            if count is not None:
                pipe.set(self.base + key + ":n", count, px=self.ttl_ms)
            if last:
                pipe.set(self.base + key + ":end", b"1", px=self.ttl_ms)
            pipe.execute()
        except redis.RedisError as exc:
            _log.warning("session events: frame of stream %s not kept for resumption: %s", key, exc)

    def keys(self) -> list[str]:
        """Every key of this session's events (to delete them with the session)."""
        streams = [text(k) for k in self.redis.lrange(self.base + "streams", 0, -1)]
        return [self.base + "n", self.base + "streams", *(self.base + k + end for k in streams for end in ("", ":n", ":end"))]

    def replay(self, last_event_id: str) -> tuple[str, list[bytes], bool] | None:
        key, _, seq = last_event_id.rpartition("-")
        if not _number(key.removeprefix(STANDALONE), 18) or not _number(seq, 9):
            return None
        try:
            pipe = self.redis.pipeline()
            pipe.lpos(self.base + "streams", key)
            pipe.lrange(self.base + key, 0, -1)
            pipe.get(self.base + key + ":n")
            pipe.exists(self.base + key + ":end")
            known, frames, written, ended = pipe.execute()
        except redis.RedisError as exc:
            raise failure("replay", exc) from exc
        count = int(written) if written is not None else len(frames)
        dropped = count - len(frames)
        if known is None or not dropped <= int(seq) <= count:
            return None
        return key, [bytes(f) for f in frames[int(seq) - dropped:]], bool(ended)
