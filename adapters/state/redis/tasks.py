"""A task store on Redis (tasks extension): :class:`RedisTaskStore` (``pip install mcpwire[redis]``).

It implements :class:`mcpwire.tasks.TaskStore` for several processes on several hosts: one
Redis hash per task (``<prefix>task:<id>``: the :class:`~mcpwire.tasks.TaskRecord` as msgspec
JSON, its status, and the process that runs its work), a sorted set of every task by expiry
(``<prefix>tasks``: the bound and the sweep), the tasks each process is running
(``<prefix>running:<owner>``; ``<prefix>owners``: the processes that have some) and each
principal's tasks in the order they were made (``<prefix>of:<principal>``, for ``tasks/list``).
Adding and replacing are Lua scripts, so a read-then-write is atomic across processes: an id
is never stored twice, the bound holds, and a finished task is never replaced (another process
may have finished it first: the first end stands). The keys are built inside the scripts, so
this wants one Redis (or a primary with replicas), not a Redis Cluster.

Expiry. ``get`` drops a task whose ``ttlMs`` has passed by the caller's clock
(``record.expired(now)``); Redis drops the hash by itself at ``createdAt + ttlMs`` (wall
clock), so nothing outlives its TTL even if no one reads it. When the store is full, ``add``
sweeps the expired tasks from the index first (the bound: ``max_tasks``, default 100000).

Lost work and liveness across hosts. A task's work runs in the process that created it (its
*owner*). Each store is an owner with a random name, and says it is alive with a heartbeat key
(``<prefix>alive:<owner>``) that it sets every ``heartbeat / 3`` seconds, from a thread, with
an expiry of ``heartbeat`` seconds (default 10). A process that dies, however it dies, stops
renewing it, and ``heartbeat`` seconds later its unfinished tasks are failed with -32603
through the lifecycle (:func:`mcpwire.tasks.recover`) by whichever store looks first: ``get``
of such a task, or any store opening (it checks every owner with running tasks). A clean
:meth:`RedisTaskStore.close` fails its own unfinished tasks at once. The cost: if this
process cannot reach Redis for longer than ``heartbeat``, the others take its work for lost
and fail its running tasks (what the work answers later is dropped, as for a cancelled task).

Calls are synchronous (the engine calls its store synchronously): one or two round trips to
Redis, each bounded by the client's ``socket_timeout``. When Redis cannot be reached, the call
logs the error and raises ``ProtocolError`` -32603 Internal error: the request that needed it
is answered so, and the store works again once Redis is back (redis-py reconnects).
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from types import TracebackType
from typing import Any, Final, Self

import msgspec
import redis

from mcpwire import ErrorCode, LocalProtocolError, ProtocolError
from mcpwire.tasks import TaskRecord, TaskStatus, recover

__all__ = ["RedisTaskStore", "STOPPED"]

STOPPED: Final = "The server stopped while the task ran"
"""The ``statusMessage`` of a task still running when its store was closed."""

_log = logging.getLogger("mcpwire_adapters.redis")
_ENCODE = msgspec.json.Encoder().encode
_DECODE = msgspec.json.Decoder(TaskRecord).decode
_RUNNING: Final = (TaskStatus.WORKING.value, TaskStatus.INPUT_REQUIRED.value)

# KEYS: the task, the index, the owner's running set. ARGV: id, owner, status, record, score
# (expiry in ms, or +inf), max_tasks, now (ms), prefix, expire-at (ms, or ""), expire-in (ms, or ""),
# heartbeat (ms), the principal (JSON). The owner's heartbeat is set with its task: a Redis restarted empty has no
# heartbeat of ours until the next beat, and a task made meanwhile must not look orphaned.
_ADD = """
if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[6]) then
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[7])) do
    redis.call('DEL', ARGV[8] .. 'task:' .. id)
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[7])
  if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[6]) then return 0 end
end
redis.call('HSET', KEYS[1], 'owner', ARGV[2], 'status', ARGV[3], 'record', ARGV[4])
if ARGV[9] ~= '' then redis.call('PEXPIREAT', KEYS[1], ARGV[9]) end
if ARGV[10] ~= '' then redis.call('PEXPIRE', KEYS[1], ARGV[10]) end
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[1])
if ARGV[3] == 'working' or ARGV[3] == 'input_required' then
  redis.call('SADD', KEYS[3], ARGV[1])
  redis.call('SADD', ARGV[8] .. 'owners', ARGV[2])
end
redis.call('SET', ARGV[8] .. 'alive:' .. ARGV[2], '1', 'PX', ARGV[11])
redis.call('ZADD', ARGV[8] .. 'of:' .. ARGV[12], redis.call('INCR', ARGV[8] .. 'seq'), ARGV[1])
return 1
"""
# KEYS: the task. ARGV: status, record, prefix, id. Replaces a running task only.
_PUT = """
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= 'working' and status ~= 'input_required' then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'record', ARGV[2])
if ARGV[1] ~= 'working' and ARGV[1] ~= 'input_required' then
  redis.call('SREM', ARGV[3] .. 'running:' .. redis.call('HGET', KEYS[1], 'owner'), ARGV[4])
end
return 1
"""


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _record(task_id: str, data: bytes | str) -> TaskRecord | None:
    """The stored record, or ``None`` (logged) for a value that is not one of ours or names
    another task: a foreign or stale key under the prefix is an unknown task, never a crash."""
    try:
        record = _DECODE(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        _log.warning("task store: ignored task %s, not a task record: %s", task_id, exc)
        return None
    if record.task_id != task_id:
        _log.warning("task store: ignored task %s, its record names %s", task_id, record.task_id)
        return None
    return record


def _failure(what: str, exc: BaseException) -> ProtocolError:
    _log.error("task store: %s failed: %s", what, exc)
    return ProtocolError("Internal error", code=ErrorCode.INTERNAL_ERROR)


class RedisTaskStore:
    """Tasks of one server (``prefix``) in the Redis at ``client`` (a ``redis.Redis``), at most
    ``max_tasks``; ``heartbeat``: seconds without a sign of life after which a process's running
    tasks are failed (see the module docstring). Use it as a context manager, or call
    :meth:`close`. Pass it to ``App(tasks=RedisTaskStore(client))``, or serve with
    ``mcpwire serve --redis URL``."""

    def __init__(self, client: redis.Redis, *, prefix: str = "mcpwire:", max_tasks: int = 100_000,
                 heartbeat: float = 10.0) -> None:
        if type(max_tasks) is not int or max_tasks < 1:
            raise LocalProtocolError("max_tasks must be at least 1")
        if not heartbeat > 0:
            raise LocalProtocolError("heartbeat must be positive")
        self.redis = client
        self.prefix = prefix
        self.max_tasks = max_tasks
        self.heartbeat = heartbeat
        self.owner = secrets.token_hex(8)
        self._open = True
        self._add = client.register_script(_ADD)
        self._put = client.register_script(_PUT)
        self._stop = threading.Event()
        try:
            self._beat()  # alive before any task names this owner
            self.recover_lost(time.time())
        except redis.RedisError as exc:
            raise _failure("opening", exc) from exc
        self._thread = threading.Thread(target=self._beating, name=f"mcpwire-heartbeat-{self.owner}", daemon=True)
        self._thread.start()

    # -- the TaskStore interface ------------------------------------------------------------
    def add(self, record: TaskRecord, now: float) -> bool:
        """Store a new task (owned by this store); ``False`` when the store is full."""
        self._check_open()
        expires = None if record.ttl_ms is None else record.created_at * 1000 + record.ttl_ms
        expire_at = expire_in = ""
        if expires is not None:
            # At createdAt + ttl by the wall clock; a host whose clock is not the wall's (a
            # test's) still gets its ttl, from now.
            if expires > time.time() * 1000:
                expire_at = str(int(expires) + 1)
            else:
                expire_in = str(record.ttl_ms)
        args = (record.task_id, self.owner, record.status.value, _ENCODE(record),
                "+inf" if expires is None else repr(expires), self.max_tasks, repr(now * 1000), self.prefix,
                expire_at, expire_in, int(self.heartbeat * 1000), _ENCODE(record.owner))
        try:
            added = self._add(keys=[self._key(record.task_id), self.prefix + "tasks", self._running(self.owner)],
                              args=args)
        except redis.RedisError as exc:
            raise _failure("add", exc) from exc
        if added == -1:
            raise LocalProtocolError(f"Task id {record.task_id!r} was issued twice: the host's ids must be unique")
        return bool(added)

    def get(self, task_id: str, now: float) -> TaskRecord | None:
        """The task as Redis holds it now; ``None`` when unknown or expired (then dropped). A
        task still running whose owner is gone comes back failed (and is stored so)."""
        self._check_open()
        key = self._key(task_id)
        try:
            owner, data = self.redis.hmget(key, ["owner", "record"])
            if data is None or owner is None:
                return None
            record = _record(task_id, data)
            if record is None:
                return None
            if record.expired(now):
                pipe = self.redis.pipeline()
                pipe.delete(key)
                pipe.zrem(self.prefix + "tasks", task_id)
                pipe.srem(self._running(_text(owner)), task_id)
                pipe.zrem(self._principal(record.owner), task_id)
                pipe.execute()
                return None
            if record.terminal or self._alive(_text(owner)):
                return record
            self._fail(record, recover(record, now))
            data = self.redis.hget(key, "record")
        except redis.RedisError as exc:
            raise _failure("get", exc) from exc
        return None if data is None else _record(task_id, data)

    def put(self, record: TaskRecord) -> None:
        """Replace a stored task with its new state. A finished task is never replaced; an
        unknown one is not added."""
        self._check_open()
        try:
            self._fail(record, record)
        except redis.RedisError as exc:
            raise _failure("put", exc) from exc

    def tasks_of(self, owner: str | None, now: float, after: str | None, limit: int) -> list[TaskRecord] | None:
        """Up to ``limit`` unexpired tasks of ``owner`` (the principal, ``TaskRecord.owner``), oldest
        first, after the task ``after``; ``None`` when ``after`` is not such a task. Each
        principal's tasks are a sorted set in the order they were added
        (``<prefix>of:<principal as JSON>``); an entry whose task is gone is dropped on the way."""
        self._check_open()
        index = self._principal(owner)
        found: list[TaskRecord] = []
        try:
            start = "-inf"
            if after is not None:
                score = self.redis.zscore(index, after)
                if score is None or not self.redis.exists(self._key(after)):
                    return None
                start = f"({score!r}"
            while len(found) < limit:
                batch: list[Any] = self.redis.zrangebyscore(index, start, "+inf", start=0, num=max(limit, 16),
                                                            withscores=True)
                if not batch:
                    break
                for raw_id, seq in batch:
                    start = f"({seq!r}"
                    record = self.get(_text(raw_id), now)
                    if record is None or record.owner != owner:
                        self.redis.zrem(index, raw_id)
                        continue
                    found.append(record)
                    if len(found) >= limit:
                        break
        except redis.RedisError as exc:
            raise _failure("tasks_of", exc) from exc
        return found

    def __len__(self) -> int:
        """How many tasks the index holds (expired ones not yet swept included)."""
        return int(self.redis.zcard(self.prefix + "tasks"))

    # -- lost work --------------------------------------------------------------------------
    def recover_lost(self, now: float, *, owners: tuple[str, ...] | None = None, message: str | None = None) -> int:
        """Fail the unfinished tasks of every owner that is gone (or of ``owners``, when they are
        gone or are this store), each through :func:`mcpwire.tasks.recover`; returns how many.
        Opening, closing and ``get`` call this; a host need not."""
        if owners is None:
            found = [_text(o) for o in self.redis.smembers(self.prefix + "owners")]
            gone = [o for o in found if o != self.owner and not self._alive(o)]
        else:
            gone = [o for o in owners if o == self.owner or not self._alive(o)]
        changed = 0
        for owner in gone:
            for raw_id in self.redis.smembers(self._running(owner)):
                data = self.redis.hget(self._key(_text(raw_id)), "record")
                record = None if data is None else _record(_text(raw_id), data)
                if record is not None:
                    failed = recover(record, now) if message is None else recover(record, now, message)
                    changed += self._fail(record, failed)
            self.redis.delete(self._running(owner))
            self.redis.srem(self.prefix + "owners", owner)
        return changed

    def _fail(self, record: TaskRecord, updated: TaskRecord) -> int:
        return int(self._put(keys=[self._key(record.task_id)],
                             args=(updated.status.value, _ENCODE(updated), self.prefix, record.task_id)))

    def _alive(self, owner: str) -> bool:
        if owner == self.owner:
            return self._open
        return bool(self.redis.exists(self.prefix + "alive:" + owner))

    # -- life -------------------------------------------------------------------------------
    def _beat(self) -> None:
        self.redis.set(self.prefix + "alive:" + self.owner, b"1", px=int(self.heartbeat * 1000))

    def _beating(self) -> None:
        failing = False
        while not self._stop.wait(self.heartbeat / 3):
            try:
                self._beat()
            except redis.RedisError as exc:
                if not failing:
                    _log.warning("task store heartbeat failed (%s): after %g s without one, other processes "
                                 "fail this process's running tasks", exc, self.heartbeat)
                failing = True
            else:
                if failing:
                    _log.warning("task store heartbeat restored")
                failing = False

    def close(self) -> None:
        """Fail this store's unfinished tasks (their work stops with this process), stop the
        heartbeat and remove it. Idempotent; the Redis client stays open (it is the caller's)."""
        if not self._open:
            return
        self._stop.set()
        self._thread.join()
        try:
            self.recover_lost(time.time(), owners=(self.owner,), message=STOPPED)
            self.redis.delete(self.prefix + "alive:" + self.owner)
        except redis.RedisError as exc:
            _log.error("task store: closing failed (%s): the others fail this process's tasks in %g s",
                       exc, self.heartbeat)
        finally:
            self._open = False

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    # -- helpers ----------------------------------------------------------------------------
    def _key(self, task_id: str) -> str:
        return f"{self.prefix}task:{task_id}"

    def _principal(self, owner: str | None) -> str:
        return f"{self.prefix}of:{_ENCODE(owner).decode()}"

    def _running(self, owner: str) -> str:
        return f"{self.prefix}running:{owner}"

    def _check_open(self) -> None:
        if not self._open:
            raise LocalProtocolError("The task store is closed")


