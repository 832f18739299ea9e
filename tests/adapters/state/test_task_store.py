"""The task store contract, held by every store (``MemoryTaskStore``, ``SqliteTaskStore`` on a
real file in tmp_path, ``RedisTaskStore`` on a real redis-server: tests/adapters/state/test_redis_tasks.py
holds what only it promises), and what only the SQLite store promises: several stores on one file,
lost work failed through the lifecycle (a store in a real child process that ends without
closing), WAL mode, closing."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import redis
from mcpwire_adapters.state.redis.tasks import RedisTaskStore
from mcpwire_adapters.state.sqlite_tasks import STOPPED, SqliteTaskStore

from mcpwire import LocalProtocolError
from mcpwire.tasks import LOST_WORK, MemoryTaskStore, TaskRecord, Tasks, TaskStatus, TaskStore, recover

NOW = 1_800_000_000.0
INTERNAL = {"code": -32603, "message": "Internal error"}
ASK = {"method": "elicitation/create", "params": {"mode": "form", "message": "Sure?", "requestedSchema": {
    "type": "object", "properties": {"ok": {"type": "boolean"}}}}}

MakeStore = Callable[..., TaskStore]


@pytest.fixture(params=["memory", "sqlite", "redis"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MakeStore]:
    opened: list[SqliteTaskStore | RedisTaskStore] = []

    def make(**options: Any) -> TaskStore:
        store: SqliteTaskStore | RedisTaskStore
        if request.param == "memory":
            return MemoryTaskStore(**options)
        if request.param == "redis":  # a real redis-server (tests/_redis.py), a prefix per store
            server = request.getfixturevalue("redis_server")
            store = RedisTaskStore(redis.Redis.from_url(server.url), prefix=f"t{len(opened)}:", **options)
        else:
            store = SqliteTaskStore(tmp_path / f"tasks-{len(opened)}.db", **options)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


def record(task_id: str, *, created: float = NOW, ttl_ms: int | None = 60_000, **changes: Any) -> TaskRecord:
    return TaskRecord(task_id=task_id, status=TaskStatus.WORKING, created_at=created, updated_at=created,
                      ttl_ms=ttl_ms, tool="t", **changes)


# -- the contract, both stores -----------------------------------------------------------------
def test_add_get_put_round_trip_the_whole_record(make_store: MakeStore) -> None:
    store = make_store()
    full = record("a", poll_interval_ms=500, status_message="hi", state={"n": [1, 2]}, issued=("k1",),
                  input_requests={"k2": ASK}, answers={"k1": {"action": "accept"}})
    assert store.add(full, NOW) is True
    assert store.get("a", NOW) == full
    done = msgspec.structs.replace(full, status=TaskStatus.COMPLETED, updated_at=NOW + 1,
                                   result={"content": [{"type": "text", "text": "ok"}]}, input_requests={})
    store.put(done)
    assert store.get("a", NOW + 2) == done


def test_unknown_ids_are_none_and_put_does_not_add(make_store: MakeStore) -> None:
    store = make_store()
    assert store.get("nope", NOW) is None
    store.put(record("ghost"))
    assert store.get("ghost", NOW) is None
    assert store.add(record("a"), NOW)
    assert store.get("A", NOW) is None and store.get("", NOW) is None


def test_expiry_at_exactly_ttl(make_store: MakeStore) -> None:
    store = make_store()
    assert store.add(record("a", ttl_ms=1500), NOW)
    assert store.add(record("forever", ttl_ms=None), NOW)
    assert store.get("a", NOW + 1.499) is not None
    assert store.get("a", NOW + 1.5) is None  # createdAt + ttlMs: gone
    assert store.get("a", NOW) is None  # dropped, not only hidden
    assert store.get("forever", NOW + 10**9) is not None


def test_bounded_add_is_false_when_full_and_sweeps_expired_first(make_store: MakeStore) -> None:
    store = make_store(max_tasks=2)
    assert store.add(record("short", ttl_ms=1000), NOW)
    assert store.add(record("long", ttl_ms=60_000), NOW)
    assert store.add(record("c"), NOW + 0.5) is False  # full, nothing expired yet
    assert store.get("c", NOW + 0.5) is None
    assert store.add(record("c", created=NOW + 1), NOW + 1) is True  # "short" expired: swept
    assert store.get("short", NOW + 0.9) is None
    assert store.get("long", NOW + 1) is not None and store.get("c", NOW + 1) is not None
    assert store.add(record("d", created=NOW + 1), NOW + 1) is False


def test_ids_issued_twice_are_refused(make_store: MakeStore) -> None:
    store = make_store()
    assert store.add(record("a"), NOW)
    with pytest.raises(LocalProtocolError, match="issued twice"):
        store.add(record("a", created=NOW + 1), NOW + 1)
    assert store.get("a", NOW + 1) == record("a")


def test_max_tasks_must_be_positive(make_store: MakeStore) -> None:
    with pytest.raises(LocalProtocolError, match="max_tasks"):
        make_store(max_tasks=0)


def test_the_lifecycle_through_tasks_on_either_store(make_store: MakeStore) -> None:
    tasks = Tasks(make_store(), iter(["t1", "t2"]))
    created = tasks.create("tool", NOW)
    tasks.ask("t1", {"k": ASK}, {"step": 1}, NOW + 1)
    waiting = tasks.find("t1", NOW + 1)
    assert waiting.status is TaskStatus.INPUT_REQUIRED and waiting.state == {"step": 1}
    resumed = tasks.answer(waiting, {"k": {"action": "accept", "content": {"ok": True}}}, NOW + 2)
    assert resumed.status is TaskStatus.WORKING and tasks.find("t1", NOW + 2) == resumed
    tasks.complete("t1", {"content": []}, NOW + 3)
    assert tasks.detailed(tasks.find("t1", NOW + 4))["result"] == {"content": []}
    tasks.fail("t1", INTERNAL, NOW + 5)  # absorbing: stays completed
    assert tasks.find("t1", NOW + 5).status is TaskStatus.COMPLETED
    assert created.created_at == tasks.find("t1", NOW + 5).created_at


# -- recover (the core's lifecycle hook) ----------------------------------------------------------
def test_recover_fails_running_and_waiting_tasks_and_keeps_finished_ones() -> None:
    waiting = record("w", status_message="asking", input_requests={"k": ASK})
    waiting = msgspec.structs.replace(waiting, status=TaskStatus.INPUT_REQUIRED)
    for before in (record("r"), waiting):
        after = recover(before, NOW + 5)
        assert after.status is TaskStatus.FAILED and after.error == INTERNAL
        assert after.status_message == LOST_WORK and after.input_requests == {} and after.updated_at == NOW + 5
        assert Tasks.detailed(after)["error"] == INTERNAL
    for status in (TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED):
        finished = msgspec.structs.replace(record("f"), status=status, result={"content": []})
        assert recover(finished, NOW + 5) is finished


# -- SQLite only ---------------------------------------------------------------------------------
def test_a_bad_path_and_a_closed_store_are_refused(tmp_path: Path) -> None:
    for path in (":memory:", ""):
        with pytest.raises(LocalProtocolError, match="needs a file path"):
            SqliteTaskStore(path)
    with SqliteTaskStore(tmp_path / "t.db") as store:
        assert store.add(record("a"), NOW)
    store.close()  # idempotent
    with pytest.raises(LocalProtocolError, match="closed"):
        store.get("a", NOW)
    with pytest.raises(LocalProtocolError, match="closed"):
        store.add(record("b"), NOW)


def test_the_file_is_in_wal_mode_and_holds_msgspec_json(tmp_path: Path) -> None:
    with SqliteTaskStore(tmp_path / "t.db") as store:
        store.add(record("a", state={"x": 1}), NOW)
        db = sqlite3.connect(tmp_path / "t.db")
        try:
            assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            (data,) = db.execute("SELECT record FROM tasks WHERE task_id = 'a'").fetchone()
        finally:
            db.close()
        assert msgspec.json.decode(data)["status"] == "working"  # the Enum by its value
        assert msgspec.json.decode(data, type=TaskRecord) == store.get("a", NOW)


def test_two_stores_on_one_file_see_each_others_changes(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    with SqliteTaskStore(path) as first, SqliteTaskStore(path, max_tasks=2) as second:
        assert first.add(record("a"), NOW)
        assert second.get("a", NOW) == record("a")  # the second opened while "a" ran: not failed
        with pytest.raises(LocalProtocolError, match="issued twice"):
            second.add(record("a"), NOW)
        first.put(msgspec.structs.replace(record("a"), status_message="half way"))
        assert second.get("a", NOW) is not None and second.get("a", NOW).status_message == "half way"  # type: ignore[union-attr]
        done = msgspec.structs.replace(record("a"), status=TaskStatus.COMPLETED, result={"content": []})
        second.put(done)
        # A finished task is never replaced: the first end stands, whichever process writes later.
        first.put(msgspec.structs.replace(record("a"), status=TaskStatus.CANCELLED))
        assert first.get("a", NOW) == done
        assert second.add(record("b"), NOW) and second.add(record("c"), NOW) is False  # one bound, one file
        assert len(first) == 2


def test_closing_fails_the_stores_unfinished_tasks_only(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    with SqliteTaskStore(path) as reader:
        with SqliteTaskStore(path) as owner:
            tasks = Tasks(owner, iter(["run", "wait", "done"]))
            for _ in range(3):
                tasks.create("tool", NOW)
            tasks.ask("wait", {"k": ASK}, None, NOW)
            tasks.complete("done", {"content": [{"type": "text", "text": "kept"}]}, NOW)
        for task_id in ("run", "wait"):
            failed = reader.get(task_id, NOW)
            assert failed is not None and failed.status is TaskStatus.FAILED
            assert failed.error == INTERNAL and failed.status_message == STOPPED
        kept = reader.get("done", NOW)
        assert kept is not None and kept.result == {"content": [{"type": "text", "text": "kept"}]}


def crashing_owner(imports: str, store: str) -> str:
    """A script that makes a working, a waiting and a finished task in ``store`` (an expression
    reading ``sys.argv[1]``), says ready, and dies without closing it, as a crash does."""
    return _CRASHING_OWNER.replace("IMPORTS", imports).replace("STORE", store)


_CRASHING_OWNER = """
import os, sys
IMPORTS
from mcpwire.tasks import Tasks
store = STORE
tasks = Tasks(store, iter(["run", "wait", "done"]))
for _ in range(3):
    tasks.create("tool", float(sys.argv[2]))
tasks.ask("wait", {"k": {"method": "elicitation/create", "params": {}}}, None, float(sys.argv[2]))
tasks.complete("done", {"content": []}, float(sys.argv[2]))
print("ready", flush=True)
sys.stdin.read()  # until the parent says so
os._exit(0)  # no close(): as a crash leaves it
"""
CRASHING_OWNER = crashing_owner("from mcpwire_adapters.state.sqlite_tasks import SqliteTaskStore", "SqliteTaskStore(sys.argv[1])")


def test_a_crashed_owners_tasks_fail_on_open_and_on_get(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(CRASHING_OWNER), str(path), str(NOW)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdin is not None
    try:
        assert child.stdout.readline() == "ready\n"
        with SqliteTaskStore(path) as watcher:  # opened while the owner lives: nothing recovered
            running = watcher.get("run", NOW)
            assert running is not None and running.status is TaskStatus.WORKING
            child.stdin.close()
            assert child.wait(timeout=20) == 0
            # The owner is gone: reading its task fails it (and its other unfinished one).
            failed = watcher.get("run", NOW + 1)
            assert failed is not None and failed.status is TaskStatus.FAILED and failed.status_message == LOST_WORK
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    with SqliteTaskStore(path) as later:
        waiting = later.get("wait", NOW + 2)
        assert waiting is not None and waiting.status is TaskStatus.FAILED and waiting.error == INTERNAL
        done = later.get("done", NOW + 2)
        assert done is not None and done.status is TaskStatus.COMPLETED and done.result == {"content": []}


def test_opening_recovers_a_crashed_owner_without_any_get(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    code = CRASHING_OWNER.replace("sys.stdin.read()", "pass")
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code), str(path), str(NOW)], capture_output=True,
                          text=True, timeout=20)
    assert done.returncode == 0, done.stderr
    with SqliteTaskStore(path) as store:
        assert store.recover_lost(NOW) == 0  # already done when it opened
        # The crashed store's lock file went too; only the open store's is left.
        assert [p.name for p in (tmp_path / "t.db-owners").iterdir()] == [store.owner]
        db = sqlite3.connect(path)
        try:
            statuses = dict(db.execute("SELECT task_id, status FROM tasks").fetchall())
        finally:
            db.close()
    assert statuses == {"run": "failed", "wait": "failed", "done": "completed"}
    assert list((tmp_path / "t.db-owners").iterdir()) == []


def test_a_file_of_another_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    SqliteTaskStore(path).close()
    db = sqlite3.connect(path)
    try:
        db.execute("PRAGMA user_version = 2")
    finally:
        db.close()
    with pytest.raises(LocalProtocolError, match="task store schema 2"):
        SqliteTaskStore(path)
    assert list((tmp_path / "t.db-owners").iterdir()) == []  # the refused store left no owner behind


def test_the_bound_counts_what_every_store_on_the_file_added_and_dropped(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    with SqliteTaskStore(path, max_tasks=3) as first, SqliteTaskStore(path, max_tasks=3) as second:
        assert first.add(record("a", ttl_ms=1000), NOW) and second.add(record("b"), NOW)
        assert first.add(record("c"), NOW) and second.add(record("d"), NOW) is False
        assert second.get("a", NOW + 1) is None  # expired and dropped by the second
        assert len(first) == 2 and first.add(record("d", created=NOW + 1), NOW + 1)
        assert second.add(record("e", created=NOW + 1), NOW + 1) is False
    with SqliteTaskStore(path, max_tasks=3) as reopened:
        assert len(reopened) == 3


def test_tasks_of_lists_one_owners_unexpired_tasks_oldest_first_from_a_cursor(make_store: MakeStore) -> None:
    store = make_store()
    for n in range(5):
        owner = "bob" if n == 2 else "alice"
        assert store.add(record(f"t{n}", created=NOW + n, ttl_ms=None if n != 3 else 1000, owner=owner), NOW + n)
    later = NOW + 60  # t3 has expired by then
    assert [r.task_id for r in store.tasks_of("alice", later, None, 10) or []] == ["t0", "t1", "t4"]
    assert [r.task_id for r in store.tasks_of("alice", later, None, 2) or []] == ["t0", "t1"]
    assert [r.task_id for r in store.tasks_of("alice", later, "t1", 2) or []] == ["t4"]
    assert [r.task_id for r in store.tasks_of("bob", later, None, 10) or []] == ["t2"]
    assert store.tasks_of(None, later, None, 10) == []
    # A cursor that is not a task of that owner (another's, or unknown) is refused: None.
    assert store.tasks_of("alice", later, "t2", 10) is None
    assert store.tasks_of("alice", later, "nope", 10) is None
