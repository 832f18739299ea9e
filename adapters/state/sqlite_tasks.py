"""A durable task store (tasks extension): :class:`SqliteTaskStore`, tasks in an SQLite file.

It implements :class:`mcpwire.tasks.TaskStore` on the standard library's ``sqlite3``: one row
per task, the :class:`~mcpwire.tasks.TaskRecord` encoded whole as msgspec JSON (its status,
owner and expiry beside it in columns for the queries). The file is in WAL mode, so readers
never wait for the writer, and every call reads or writes the file itself (no cache in the
process): several server processes may share one file, each seeing the others' tasks.

Lost work. A task's work runs in the process that created the task (its *owner*). When an
owner stops, whatever of its tasks is still ``working`` or ``input_required`` can never
finish: the store turns each into ``failed`` with -32603 through the lifecycle
(:func:`mcpwire.tasks.recover`). That happens when the owner closes its store (a clean stop),
when a store opens on the file (after a crash: every task of an owner that is gone), and when
``get`` reads a task whose owner is gone. Finished tasks keep their results. An owner is
alive while it holds an exclusive ``flock`` on its file in ``<path>-owners/``; the kernel
releases it when the process ends, however it ends, so a killed server's tasks are recovered
and a running server's are not (POSIX only: ``fcntl``).

Calls block the calling thread (the event loop, in the App) for one small transaction, or up
to ``timeout`` seconds while another process writes. Commits use ``synchronous=NORMAL``: a
task survives the crash of any process; a power loss may lose the last changes.
"""

from __future__ import annotations

import fcntl
import os
import re
import secrets
import sqlite3
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Final, Self

import msgspec

from mcpwire import LocalProtocolError
from mcpwire.tasks import TaskRecord, TaskStatus, recover

__all__ = ["SqliteTaskStore", "STOPPED"]

STOPPED: Final = "The server stopped while the task ran"
"""The ``statusMessage`` of a task still running when its store was closed."""

_ENCODE = msgspec.json.Encoder().encode
_DECODE = msgspec.json.Decoder(TaskRecord).decode
_OWNER: Final = re.compile(r"[0-9a-f]{16}")  # secrets.token_hex(8)
_RUNNING: Final = (TaskStatus.WORKING.value, TaskStatus.INPUT_REQUIRED.value)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (
    task_id TEXT PRIMARY KEY,
    owner   TEXT NOT NULL,   -- the store (one per process) that runs the task's work
    status  TEXT NOT NULL,   -- record.status, for the queries
    expires REAL,            -- created_at + ttl (seconds since the epoch); NULL: never
    record  BLOB NOT NULL    -- the TaskRecord, msgspec JSON
);
CREATE INDEX IF NOT EXISTS tasks_expires ON tasks (expires) WHERE expires IS NOT NULL;
CREATE INDEX IF NOT EXISTS tasks_running ON tasks (owner) WHERE status IN ('working', 'input_required');
-- How many rows tasks holds, kept by triggers: the bound is checked on every add, and
-- count(*) reads the whole table.
CREATE TABLE IF NOT EXISTS task_count (one INTEGER PRIMARY KEY CHECK (one = 1), n INTEGER NOT NULL);
INSERT OR IGNORE INTO task_count VALUES (1, (SELECT count(*) FROM tasks));
CREATE TRIGGER IF NOT EXISTS tasks_added AFTER INSERT ON tasks BEGIN UPDATE task_count SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS tasks_dropped AFTER DELETE ON tasks BEGIN UPDATE task_count SET n = n - 1; END;
"""
_SCHEMA_VERSION: Final = 1


def _expires(record: TaskRecord) -> float | None:
    # The same arithmetic as TaskRecord.expired, so the sweep and get agree on the boundary.
    return None if record.ttl_ms is None else record.created_at + record.ttl_ms / 1000


class SqliteTaskStore:
    """Tasks in the SQLite file at ``path`` (created if missing), at most ``max_tasks`` of them
    (default 100000: ``add`` answers ``False`` when full, after dropping the expired ones).
    ``timeout``: seconds a call waits for another process's write (the busy timeout).

    Opening recovers the tasks of owners that are gone (see the module docstring); use it as
    a context manager, or call :meth:`close`, so that this process's unfinished tasks are
    failed at once when it stops. Pass it to ``App(tasks=SqliteTaskStore(path))``, or serve
    with ``mcpwire serve --tasks-db PATH``."""

    def __init__(self, path: str | os.PathLike[str], *, max_tasks: int = 100_000, timeout: float = 5.0) -> None:
        if type(max_tasks) is not int or max_tasks < 1:
            raise LocalProtocolError("max_tasks must be at least 1")
        if str(path) in ("", ":memory:") or str(path).startswith("file:"):
            raise LocalProtocolError("SqliteTaskStore needs a file path (in memory: MemoryTaskStore)")
        self.path = Path(path)
        self.max_tasks = max_tasks
        self.owner = secrets.token_hex(8)
        self._lock = threading.Lock()  # one connection, shared by the threads of this process
        self._owners = self.path.with_name(self.path.name + "-owners")
        self._owners.mkdir(exist_ok=True)
        # Alive from here on: the lock is held before any task names this owner.
        self._owner_fd: int | None = os.open(self._owners / self.owner, os.O_CREAT | os.O_RDWR, 0o600)
        fcntl.flock(self._owner_fd, fcntl.LOCK_EX)
        try:
            self._db = sqlite3.connect(self.path, timeout=timeout, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, _SCHEMA_VERSION):
                raise LocalProtocolError(f"{path}: task store schema {version}, this mcpwire knows {_SCHEMA_VERSION}")
            self._db.executescript(f"BEGIN IMMEDIATE; {_SCHEMA} PRAGMA user_version = {_SCHEMA_VERSION}; COMMIT;")
            self.recover_lost(time.time())
            for other in os.listdir(self._owners):
                self._alive(other)  # the lock files of stores gone without closing go too
        except BaseException:
            self._release()
            raise

    # -- the TaskStore interface ------------------------------------------------------------
    def add(self, record: TaskRecord, now: float) -> bool:
        """Store a new task (owned by this store); ``False`` when the store is full."""
        row = (record.task_id, self.owner, record.status.value, _expires(record), _ENCODE(record))
        with self._transaction() as db:
            if db.execute("SELECT 1 FROM tasks WHERE task_id = ?", (record.task_id,)).fetchone():
                raise LocalProtocolError(
                    f"Task id {record.task_id!r} was issued twice: the host's ids must be unique")
            if self._count(db) >= self.max_tasks:
                db.execute("DELETE FROM tasks WHERE expires <= ?", (now,))
                if self._count(db) >= self.max_tasks:
                    return False
            db.execute("INSERT INTO tasks (task_id, owner, status, expires, record) VALUES (?, ?, ?, ?, ?)", row)
        return True

    def get(self, task_id: str, now: float) -> TaskRecord | None:
        """The task as the file holds it now; ``None`` when unknown or expired (then dropped).
        A task still running whose owner is gone comes back failed (and is stored so)."""
        with self._lock:
            self._check_open()
            row = self._db.execute("SELECT owner, record FROM tasks WHERE task_id = ?", (task_id,)).fetchone()
        if row is None:
            return None
        owner, data = row
        record = _DECODE(data)
        if record.expired(now):
            with self._transaction() as db:
                db.execute("DELETE FROM tasks WHERE task_id = ? AND expires <= ?", (task_id, now))
            return None
        if not record.terminal and not self._alive(owner):
            self.recover_lost(now, owners=(owner,))
            with self._lock:
                row = self._db.execute("SELECT record FROM tasks WHERE task_id = ?", (task_id,)).fetchone()
            return None if row is None else _DECODE(row[0])
        return record

    def put(self, record: TaskRecord) -> None:
        """Replace a stored task with its new state. A finished task is never replaced (another
        process may have finished it first: the first end stands); an unknown one is not added."""
        with self._transaction() as db:
            db.execute(
                "UPDATE tasks SET status = ?, expires = ?, record = ? WHERE task_id = ? AND status IN (?, ?)",
                (record.status.value, _expires(record), _ENCODE(record), record.task_id, *_RUNNING),
            )

    def tasks_of(self, owner: str | None, now: float, after: str | None, limit: int) -> list[TaskRecord] | None:
        """Up to ``limit`` unexpired tasks of ``owner`` (the principal, ``TaskRecord.owner``),
        oldest first, after the task ``after``; ``None`` when ``after`` is not such a task.
        Reads the rows after ``after`` in insertion order and filters by principal in this
        process: a scan, bounded by ``max_tasks``."""
        with self._lock:
            self._check_open()
            start = 0
            if after is not None:
                row = self._db.execute("SELECT rowid, record FROM tasks WHERE task_id = ?", (after,)).fetchone()
                if row is None or _DECODE(row[1]).owner != owner:
                    return None
                start = row[0]
            rows = self._db.execute(
                "SELECT record FROM tasks WHERE rowid > ? AND (expires IS NULL OR expires > ?) ORDER BY rowid",
                (start, now)).fetchall()
        found: list[TaskRecord] = []
        for (data,) in rows:
            record = _DECODE(data)
            if record.owner == owner:
                found.append(record if record.terminal else (self.get(record.task_id, now) or record))
                if len(found) >= limit:
                    break
        return found

    def __len__(self) -> int:
        """How many tasks the file holds (expired ones not yet dropped included)."""
        with self._lock:
            self._check_open()
            return self._count(self._db)

    # -- lost work --------------------------------------------------------------------------
    def recover_lost(self, now: float, *, owners: tuple[str, ...] | None = None, message: str | None = None) -> int:
        """Fail the unfinished tasks of every owner that is gone (or of ``owners``, when they
        are gone or are this store), each through :func:`mcpwire.tasks.recover`; returns how
        many. Opening, closing and ``get`` call this; a host need not."""
        with self._lock:
            self._check_open()
            found = [o for (o,) in self._db.execute(
                "SELECT DISTINCT owner FROM tasks WHERE status IN (?, ?)", _RUNNING).fetchall()]
        if owners is None:
            gone = [o for o in found if o != self.owner and not self._alive(o)]
        else:
            gone = [o for o in found if o in owners and (o == self.owner or not self._alive(o))]
        changed = 0
        for owner in gone:
            with self._transaction() as db:
                rows = db.execute(
                    "SELECT record FROM tasks WHERE owner = ? AND status IN (?, ?)", (owner, *_RUNNING)).fetchall()
                for (data,) in rows:
                    record = _DECODE(data)
                    failed = recover(record, now) if message is None else recover(record, now, message)
                    db.execute("UPDATE tasks SET status = ?, record = ? WHERE task_id = ?",
                               (failed.status.value, _ENCODE(failed), failed.task_id))
                    changed += 1
        return changed

    def _alive(self, owner: str) -> bool:
        """Whether the store named ``owner`` is open, in this process or another."""
        if owner == self.owner:
            return self._owner_fd is not None
        if not _OWNER.fullmatch(owner):
            return False  # not a name this class gives: no file of it to look at
        try:
            fd = os.open(self._owners / owner, os.O_RDWR)
        except FileNotFoundError:
            return False  # closed cleanly, or already found gone
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        else:
            (self._owners / owner).unlink(missing_ok=True)  # gone: its lock file goes too
            return False
        finally:
            os.close(fd)

    # -- life -------------------------------------------------------------------------------
    def close(self) -> None:
        """Fail this store's unfinished tasks (their work stops with this process), then close
        the file. Idempotent."""
        if self._owner_fd is None:
            return
        try:
            self.recover_lost(time.time(), owners=(self.owner,), message=STOPPED)
        finally:
            self._release()

    def _release(self) -> None:
        if getattr(self, "_db", None) is not None:
            self._db.close()
        if self._owner_fd is not None:
            (self._owners / self.owner).unlink(missing_ok=True)
            os.close(self._owner_fd)
            self._owner_fd = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    # -- helpers ----------------------------------------------------------------------------
    @staticmethod
    def _count(db: sqlite3.Connection) -> int:
        return int(db.execute("SELECT n FROM task_count").fetchone()[0])

    def _check_open(self) -> None:
        if self._owner_fd is None:
            raise LocalProtocolError("The task store is closed")

    def _transaction(self) -> _Transaction:
        self._check_open()
        return _Transaction(self._db, self._lock)


class _Transaction:
    """``BEGIN IMMEDIATE`` (the file's write lock, so a read-then-write is atomic across
    processes) under this process's lock; commit on success, roll back on an exception."""

    def __init__(self, db: sqlite3.Connection, lock: threading.Lock) -> None:
        self.db = db
        self.lock = lock

    def __enter__(self) -> sqlite3.Connection:
        self.lock.acquire()
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except BaseException:
            self.lock.release()
            raise
        return self.db

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        try:
            self.db.execute("ROLLBACK" if kind is not None else "COMMIT")
        finally:
            self.lock.release()
