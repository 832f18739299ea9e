"""One GET stream per initialize-era session across every process of a server, on Redis:
:class:`StreamLeases`, what :class:`~mcpwire_adapters.state.redis.sessions.RedisSessionStore`
answers ``claim_stream`` and ``release_stream`` with (2025-11-25: Streamable HTTP, Multiple
Connections: a server MUST NOT send the same message on more than one stream).

A session's open GET stream holds a lease, ``<prefix>stream:<session id>``: written with
``SET NX`` and an expiry of ``lease`` seconds (default 10), its value naming the stream (the
process and a counter). A GET for the session on any process finds it held: 409. The process
holding it renews it every ``lease / 5`` seconds (:meth:`StreamLeases.check`, one round trip
for all of the process's leases, run by the broker: ``RedisBroker(sessions=...)``) and deletes it
when the stream ends (compare-and-delete, one round trip). A process that dies keeps its leases
until they lapse: at most ``lease`` seconds after its last renewal, the session may have a GET
stream again.

What :meth:`StreamLeases.check` also finds: a session that is gone (ended by a DELETE on
another process whose notice this process missed, or expired), whose stream then ends here;
and a lease that is no longer this stream's (it lapsed, and another stream took it), whose
stream ends too. While Redis cannot be reached nothing is renewed: once ``lease - 2 * lease / 5``
seconds have passed since the last renewal, the process ends its GET streams itself, before
their leases can lapse, so that no two streams of a session are ever open at once.
"""

from __future__ import annotations

import itertools
import logging
import secrets
import threading
import time

import redis

__all__ = ["StreamLeases"]

_log = logging.getLogger("mcpwire_adapters.redis")

# KEYS: the lease. ARGV: the stream's token.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
# KEYS: (the session, its lease) for each lease held here. ARGV: the lease (ms), then each token.
# Answers per lease: 0 renewed, 1 the session is gone, 2 the lease is another stream's.
_CHECK = """
local found = {}
for i = 1, #KEYS, 2 do
  local token = ARGV[(i + 1) / 2 + 1]
  if redis.call('EXISTS', KEYS[i]) == 0 then
    found[#found + 1] = 1
  elseif redis.call('GET', KEYS[i + 1]) == token then
    redis.call('PEXPIRE', KEYS[i + 1], ARGV[1])
    found[#found + 1] = 0
  else
    found[#found + 1] = 2
  end
end
return found
"""


class StreamLeases:
    """The GET-stream leases of one process's sessions on the Redis at ``client`` under
    ``prefix`` (see the module docstring). :meth:`claim` and :meth:`release` are called from the
    event loop; :meth:`check` from a worker thread."""

    def __init__(self, client: redis.Redis, *, prefix: str, lease: float = 10.0) -> None:
        if not lease > 0:
            raise ValueError("the stream lease must be positive")
        self.redis = client
        self.prefix = prefix
        self.lease_ms = max(1, int(lease * 1000))
        self.interval = lease / 5
        """Seconds between two :meth:`check` calls (the broker's)."""
        self._release = client.register_script(_RELEASE)
        self._check = client.register_script(_CHECK)
        self._process = secrets.token_hex(8)
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()
        self._held: dict[str, str] = {}  # session id -> the token of its stream here
        self._renewed = time.monotonic()

    def key(self, session_id: str) -> str:
        return f"{self.prefix}stream:{session_id}"

    def claim(self, session_id: str) -> bool:
        """Take the session's lease for a new GET stream of this process: one round trip;
        ``False`` when another stream holds it. ``redis.RedisError`` when Redis cannot be reached."""
        token = f"{self._process}:{next(self._numbers)}"
        if not self.redis.set(self.key(session_id), token, nx=True, px=self.lease_ms):
            return False
        with self._lock:
            if not self._held:
                self._renewed = time.monotonic()  # the first lease: the clock of renewals starts now
            self._held[session_id] = token
        return True

    def release(self, session_id: str) -> None:
        """The session's GET stream here ended: its lease goes, if it still is this stream's
        (one round trip; none when :meth:`check` found it gone already). Logged, not raised,
        when Redis cannot be reached: the lease then lapses by itself."""
        with self._lock:
            token = self._held.pop(session_id, None)
        if token is None:
            return
        try:
            self._release(keys=[self.key(session_id)], args=[token])
        except redis.RedisError as exc:
            _log.warning("session store: the GET stream lease of a session lapses by itself (%s)", exc)

    def forget(self, session_id: str) -> None:
        """The session was removed here (its DELETE deleted the lease with it)."""
        with self._lock:
            self._held.pop(session_id, None)

    def check(self) -> tuple[list[str], list[str]]:
        """Renew this process's leases, all in one round trip, and say which streams must end:
        the sessions that are gone, and those whose lease is another stream's (or, Redis
        unreachable since ``lease - 2 * interval`` seconds, every one held here). Those are
        forgotten here. Never raises: a failure is logged."""
        with self._lock:
            held = list(self._held.items())
        if not held:
            return [], []
        try:
            found = self._check(keys=[k for sid, _ in held for k in (f"{self.prefix}session:{sid}", self.key(sid))],
                                args=[self.lease_ms, *(token for _, token in held)])
        except redis.RedisError as exc:
            late = time.monotonic() - self._renewed
            if late < self.lease_ms / 1000 - 2 * self.interval:
                _log.warning("session store: GET stream leases not renewed: %s", exc)
                return [], []
            _log.error("session store: GET stream leases not renewed for %.1f s, their streams end: %s", late, exc)
            found = [2] * len(held)
        else:
            self._renewed = time.monotonic()
        gone: list[str] = []
        lost: list[str] = []
        with self._lock:
            for (session_id, token), answer in zip(held, found):
                if answer and self._held.get(session_id) == token:
                    del self._held[session_id]
                    (gone if answer == 1 else lost).append(session_id)
        return gone, lost

    def __len__(self) -> int:
        return len(self._held)
