"""The streams of one initialize-era (2025-11-25) session, each request sent to a chosen
process: three ``mcpwire serve --redis`` processes on one real redis-server (tests/_cluster.py),
and, for the same guarantees on one process and its memory stores, one ``mcpwire serve`` (every
"process" of a test is then that one):

- one GET stream per session service-wide: a second one on any process is 409, and a
  notification reaches the session on that one stream only;
- GET-stream events carry ids, and a GET with ``Last-Event-ID`` on another process replays what
  followed, then goes on live;
- DELETE on one process ends the session's GET stream, its open POST streams and a GET
  resuming one of them, on the others;
- a POST's stream resumed on another process while its work runs gets the rest, live, until
  the answer, and ends;
- a 2025-11-25 task's ``notifications/tasks/status`` reaches the session's GET stream on
  another process.

One set of processes serves every test of the module (each test opens sessions of its own).
Every wait has a deadline; no assertion is about how long anything took.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from _cluster import TIMEOUT, Cluster, Refused, Served, SseReader, open_session, session_post, session_request
from _redis import RedisServer
from mcpwire_adapters.state.keys import new_keyring, write_keyring

CONFLICT = "Conflict: the session already has an open GET stream"
Address = tuple[str, int]


@pytest.fixture(scope="module", params=["three processes on one Redis", "one process"])
def processes(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Address, ...]]:
    """Three addresses to send a session's requests to: three processes, or one process thrice."""
    folder = tmp_path_factory.mktemp("streams")
    keys = folder / "keys.json"
    write_keyring(new_keyring(), keys)
    if request.param == "one process":
        served = Served(None, keys)
        try:
            yield (served.address,) * 3
        finally:
            served.kill()
        return
    redis_server = RedisServer(folder / "redis")
    redis_server.start()
    try:
        cluster = Cluster(redis_server, keys)
        try:
            yield tuple(s.address for s in cluster.servers)
        finally:
            cluster.close()
    finally:
        redis_server.stop()


def call(request_id: int, tool: str, arguments: dict[str, Any] | None = None, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {
        "name": tool, "arguments": arguments or {}, "_meta": {"progressToken": f"p{request_id}"}, **params}}


def touch(address: Address, session: str, request_id: int) -> None:
    """``touch`` through ``address`` on ``session``: a tools list_changed for every process."""
    status, answer, _ = session_post(address, call(request_id, "touch"), session)
    assert status == 200 and answer is not None and "result" in answer, answer


def until_opened(address: Address, session: str, last_event_id: str | None = None) -> SseReader:
    """A GET stream on ``address``, once the stream that held the session's lease let it go (it
    goes when its process sees the client leave: retried until then, within the deadline)."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        try:
            return SseReader.get(address, session, last_event_id)
        except Refused as refused:
            assert refused.status == 409 and refused.body is not None, refused
            assert refused.body["error"]["message"] == CONFLICT, refused.body
            assert time.monotonic() < deadline, "the GET stream's lease was never released"
            time.sleep(0.05)


def test_one_get_stream_per_session_across_processes(processes: tuple[Address, ...]) -> None:
    one, two, three = processes
    session = open_session(one)
    stream = SseReader.get(two, session)
    try:
        for address in (three, one, two):  # another process, the one that opened it, the same one
            status, body = session_request(address, "GET", session)
            assert status == 409 and body is not None and body["error"] == {"code": -32600, "message": CONFLICT}
        touch(three, session, 2)
        assert stream.next()["method"] == "notifications/tools/list_changed"
    finally:
        stream.close()
    # Closed: the lease is free; the next GET stream, on another process, is the only one.
    other = until_opened(three, session)
    try:
        status, _ = session_request(two, "GET", session)
        assert status == 409
        touch(one, session, 3)
        assert other.next()["method"] == "notifications/tools/list_changed"
    finally:
        other.close()


def test_get_stream_events_carry_ids_and_resume_on_another_process(processes: tuple[Address, ...]) -> None:
    one, two, three = processes
    session = open_session(one)
    stream = SseReader.get(two, session)
    try:
        touch(one, session, 2)
        touch(one, session, 3)
        first, second = stream.next_event(), stream.next_event()
    finally:
        stream.close()
    assert first.message["method"] == second.message["method"] == "notifications/tools/list_changed"
    assert first.id is not None and second.id is not None and first.id != second.id
    resumed = until_opened(three, session, first.id)
    try:
        assert resumed.next_event() == second  # what followed the first, replayed
        touch(one, session, 4)
        live = resumed.next_event()
        assert live.message["method"] == "notifications/tools/list_changed"
        assert live.id not in (None, first.id, second.id)
    finally:
        resumed.close()


def test_delete_on_one_process_ends_the_sessions_streams_on_another(processes: tuple[Address, ...]) -> None:
    one, two, three = processes
    session = open_session(one)
    detached = SseReader.session_call(one, session, call(3, "detach", {"seconds": 600}))
    try:
        progress = detached.next_event()
        detached.wait_ended()  # closed mid-call; its work goes on
    finally:
        detached.close()
    assert progress.id is not None
    stream = SseReader.get(two, session)
    working = SseReader.session_call(two, session, call(2, "linger"))
    resumed = SseReader.get(three, session, progress.id)
    try:
        assert working.next()["method"] == "notifications/progress"
        status, _ = session_request(one, "DELETE", session)
        assert status == 200
        for ending in (stream, working, resumed):
            ending.wait_ended()
        assert session_request(two, "GET", session)[0] == 404
    finally:
        for reader in (stream, working, resumed):
            reader.close()


def test_a_post_stream_resumed_on_another_process_goes_on_live_until_its_answer(processes: tuple[Address, ...]) -> None:
    one, two, _ = processes
    session = open_session(one)
    posted = SseReader.session_call(one, session, call(2, "detach", {"seconds": 1}))
    try:
        progress = posted.next_event()
        assert progress.message["params"]["progress"] == 1 and progress.id is not None
        posted.wait_ended()  # closed mid-call: the work goes on on process one
    finally:
        posted.close()
    resumed = SseReader.get(two, session, progress.id)
    try:
        assert resumed.next()["params"]["progress"] == 2
        answer = resumed.next()
        assert answer["id"] == 2 and answer["result"]["content"][0]["text"].startswith("detached"), answer
        resumed.wait_ended()
    finally:
        resumed.close()


def test_task_status_reaches_the_sessions_get_stream_on_another_process(processes: tuple[Address, ...]) -> None:
    one, two, _ = processes
    session = open_session(one)
    stream = SseReader.get(two, session)
    try:
        status, answer, _ = session_post(one, call(2, "slow", {"seconds": 0.2}, task={"ttl": 60_000}), session)
        assert status == 200 and answer is not None, answer
        task_id = answer["result"]["task"]["taskId"]
        statuses: list[str] = []
        while not statuses or statuses[-1] != "completed":
            note = stream.next("notifications/tasks/status")
            assert note["params"]["taskId"] == task_id
            statuses.append(note["params"]["status"])
    finally:
        stream.close()
