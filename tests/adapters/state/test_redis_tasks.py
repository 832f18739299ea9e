"""What only the Redis task store promises (the contract it shares with the others is in
test_task_store.py), against a real redis-server: a process's running tasks are failed once
its heartbeat lapses (a real child process that ends without closing), closing fails this
store's own, Redis drops a task at its TTL by itself, two prefixes never see each other's
tasks, and Redis lost while serving is -32603 and a log, then works again.

Every wait has a deadline (a failure, never a pass); no assertion is about how long anything took.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
import time

import msgspec
import pytest
import redis
from _redis import RedisServer
from test_task_store import crashing_owner
from mcpwire_adapters.state.redis.tasks import STOPPED, RedisTaskStore

from mcpwire import ErrorCode, ProtocolError
from mcpwire.tasks import LOST_WORK, TaskRecord, Tasks, TaskStatus

NOW = 1_800_000_000.0
DEADLINE = 20.0
INTERNAL = {"code": -32603, "message": "Internal error"}

CRASHING_OWNER = crashing_owner(
    "import redis\nfrom mcpwire_adapters.state.redis.tasks import RedisTaskStore",
    'RedisTaskStore(redis.Redis.from_url(sys.argv[1]), prefix="p:", heartbeat=0.5)')


def client(server: RedisServer) -> redis.Redis:
    return redis.Redis.from_url(server.url, socket_timeout=2.0, socket_connect_timeout=2.0)


def record(task_id: str, *, created: float = NOW, ttl_ms: int | None = 60_000) -> TaskRecord:
    return TaskRecord(task_id=task_id, status=TaskStatus.WORKING, created_at=created, updated_at=created,
                      ttl_ms=ttl_ms, tool="t")


def test_a_dead_processs_tasks_fail_once_its_heartbeat_lapses(redis_server: RedisServer) -> None:
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(CRASHING_OWNER), redis_server.url, str(NOW)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdin is not None
    try:
        assert child.stdout.readline() == "ready\n"
        with RedisTaskStore(client(redis_server), prefix="p:") as watcher:  # the owner lives: nothing recovered
            time.sleep(1.0)  # two heartbeat periods: still alive, it renews
            running = watcher.get("run", NOW)
            assert running is not None and running.status is TaskStatus.WORKING
            child.stdin.close()
            assert child.wait(timeout=DEADLINE) == 0
            deadline = time.monotonic() + DEADLINE
            while (found := watcher.get("run", NOW + 1)) is not None and found.status is TaskStatus.WORKING:
                assert time.monotonic() < deadline, "the dead owner's task never failed"
                time.sleep(0.1)
            assert found is not None and found.status is TaskStatus.FAILED and found.status_message == LOST_WORK
            assert found.error == INTERNAL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    raw = client(redis_server)
    # Opening a store recovered the other one too (no get needed); finished tasks keep their results.
    with RedisTaskStore(raw, prefix="p:") as later:
        statuses = {t: raw.hget(f"p:task:{t}", "status") for t in ("run", "wait", "done")}
        assert statuses == {"run": b"failed", "wait": b"failed", "done": b"completed"}
        done = later.get("done", NOW + 2)
        assert done is not None and done.result == {"content": []}


def test_closing_fails_the_stores_own_unfinished_tasks_only(redis_server: RedisServer) -> None:
    with RedisTaskStore(client(redis_server)) as reader:
        with RedisTaskStore(client(redis_server)) as owner:
            tasks = Tasks(owner, iter(["run", "wait", "done"]))
            for _ in range(3):
                tasks.create("tool", NOW)
            tasks.ask("wait", {"k": {"method": "elicitation/create", "params": {}}}, None, NOW)
            tasks.complete("done", {"content": [{"type": "text", "text": "kept"}]}, NOW)
            assert reader.get("run", NOW) is not None and reader.get("run", NOW).status is TaskStatus.WORKING  # type: ignore[union-attr]
        for task_id in ("run", "wait"):
            failed = reader.get(task_id, NOW)
            assert failed is not None and failed.status is TaskStatus.FAILED and failed.status_message == STOPPED
        kept = reader.get("done", NOW)
        assert kept is not None and kept.status is TaskStatus.COMPLETED


def test_redis_drops_a_task_at_its_ttl(redis_server: RedisServer) -> None:
    raw = client(redis_server)
    with RedisTaskStore(raw, prefix="x:") as store:
        assert store.add(record("brief", created=time.time(), ttl_ms=200), time.time())
        assert store.add(record("forever", ttl_ms=None), NOW)
        deadline = time.monotonic() + DEADLINE
        while raw.exists("x:task:brief"):
            assert time.monotonic() < deadline, "Redis kept a task past its TTL"
            time.sleep(0.05)
        assert raw.pttl("x:task:forever") == -1


def test_two_prefixes_never_see_each_others_tasks(redis_server: RedisServer) -> None:
    with RedisTaskStore(client(redis_server), prefix="one:") as one, \
            RedisTaskStore(client(redis_server), prefix="two:") as two:
        assert one.add(record("same"), NOW) and two.get("same", NOW) is None
        assert two.add(record("same"), NOW)  # not "issued twice": another server's id space
        one.put(TaskRecord(task_id="same", status=TaskStatus.COMPLETED, created_at=NOW, updated_at=NOW + 1,
                           ttl_ms=60_000, result={"content": []}))
        assert two.get("same", NOW + 1) == record("same")


def test_redis_lost_is_internal_error_and_a_log_then_it_works_again(
        redis_server: RedisServer, caplog: pytest.LogCaptureFixture) -> None:
    with RedisTaskStore(client(redis_server), heartbeat=1.0) as store:
        assert store.add(record("a"), NOW)
        redis_server.stop()
        with caplog.at_level(logging.ERROR, logger="mcpwire_adapters.redis"):
            for call in (lambda: store.get("a", NOW), lambda: store.add(record("b"), NOW), lambda: store.put(record("a"))):
                with pytest.raises(ProtocolError) as raised:
                    call()
                assert raised.value.code == ErrorCode.INTERNAL_ERROR and raised.value.message == "Internal error"
        assert "task store: get failed" in caplog.text
        redis_server.start()  # an empty Redis (no persistence): the store works again
        assert store.get("a", NOW) is None
        assert store.add(record("a"), NOW) and store.get("a", NOW) == record("a")


def test_foreign_and_stale_keys_are_unknown_tasks_not_crashes(
        redis_server: RedisServer, caplog: pytest.LogCaptureFixture) -> None:
    raw = client(redis_server)
    with RedisTaskStore(raw, prefix="f:") as store:
        raw.hset("f:task:junk", mapping={"owner": "someone", "status": "working", "record": b"\xff not json"})
        raw.hset("f:task:other", mapping={"owner": "someone", "status": "working",
                                          "record": msgspec.json.encode(record("not-other"))})
        raw.hset("f:task:half", mapping={"record": msgspec.json.encode(record("half"))})
        raw.set("f:task:string", b"a plain string")
        raw.sadd("f:running:someone", "junk", "other", "missing")
        with caplog.at_level(logging.WARNING, logger="mcpwire_adapters.redis"):
            for task_id in ("junk", "other", "half"):
                assert store.get(task_id, NOW) is None
            assert store.recover_lost(NOW) == 0  # someone is not alive: its junk is skipped, not fatal
        assert "not a task record" in caplog.text and "its record names not-other" in caplog.text
        with pytest.raises(ProtocolError) as raised:  # a key of another type: Redis refuses, -32603
            store.get("string", NOW)
        assert raised.value.code == ErrorCode.INTERNAL_ERROR


def test_a_task_made_just_after_redis_restarted_empty_is_not_taken_for_lost(redis_server: RedisServer) -> None:
    with RedisTaskStore(client(redis_server), heartbeat=60.0) as owner, \
            RedisTaskStore(client(redis_server), heartbeat=60.0) as other:
        redis_server.stop()
        redis_server.start()  # empty: no heartbeat of either until their next beat, 20 s away
        assert owner.add(record("fresh"), NOW)
        found = other.get("fresh", NOW)
        assert found is not None and found.status is TaskStatus.WORKING
