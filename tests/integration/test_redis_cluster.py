"""One service, three processes, one Redis: ``mcpwire serve tests/cluster_app.py:app --redis URL
--keys FILE`` three times behind a round-robin TCP proxy on 127.0.0.1 (tests/_cluster.py), and a
real redis-server (tests/_redis.py). Multi round-trip rounds and pagination cross processes; a
change made through one process reaches the listen and GET streams on the others; an
initialize-era session works whichever process each request lands on; a task made on one
process is read, answered and cancelled through the others; killing a process loses no task
and no session. Faults: Redis restarted mid-test, a poisoned broker message, Redis down at start.

Every wait has a deadline (a failure, never a pass); no assertion is about how long anything
took. Each server process is stopped (or killed) by the test that started it.
"""

from __future__ import annotations

import json

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from _cluster import ERA, PREFIX, REPO, TIMEOUT, Cluster, SseReader, post, session_post
from _redis import RedisServer, free_port
from mcpwire_adapters.state.keys import new_keyring, write_keyring

INTERNAL = {"code": -32603, "message": "Internal error"}
ANSWER = {"action": "accept", "content": {"ok": True}}


@pytest.fixture
def cluster(redis_server: RedisServer, tmp_path: Path) -> Iterator[Cluster]:
    keys = tmp_path / "keys.json"
    write_keyring(new_keyring(), keys)
    made = Cluster(redis_server, keys)
    try:
        yield made
    finally:
        made.close()


def result(answer: tuple[int, dict[str, Any] | None]) -> dict[str, Any]:
    status, body = answer
    assert status == 200 and body is not None and "result" in body, answer
    return dict(body["result"])


def text(answer: tuple[int, dict[str, Any] | None]) -> str:
    return str(result(answer)["content"][0]["text"])


def wait_for_status(address: tuple[str, int], task_id: str, *statuses: str) -> dict[str, Any]:
    deadline = time.monotonic() + TIMEOUT
    while (task := result(post(address, "tasks/get", {"taskId": task_id}, name=task_id)))["status"] not in statuses:
        assert time.monotonic() < deadline, f"task still {task['status']}, not {statuses}"
        time.sleep(0.05)
    return task


def call_task(address: tuple[str, int], tool: str) -> str:
    created = result(post(address, "tools/call", {"name": tool, "arguments": {}}, name=tool))
    assert created["resultType"] == "task", created
    return str(created["taskId"])


# -- stateless: rounds, pages ----------------------------------------------------------------------
def test_rounds_and_pages_cross_processes(cluster: Cluster) -> None:
    proxy = cluster.proxy.address
    names: list[str] = []
    cursor: str | None = None
    while True:
        page = result(post(proxy, "tools/list", {} if cursor is None else {"cursor": cursor}))
        names += [t["name"] for t in page["tools"]]
        cursor = page.get("nextCursor")
        if cursor is None:
            break
    assert len(names) == len(set(names)) == 14  # 7 pages of 2, each on the next process
    asked = result(post(proxy, "tools/call", {"name": "ask_name", "arguments": {}}, name="ask_name"))
    assert asked["resultType"] == "input_required", asked
    answered = text(post(proxy, "tools/call", {"name": "ask_name", "arguments": {}, "inputResponses": {
        "name": ANSWER}, "requestState": asked["requestState"]}, name="ask_name"))
    assert answered.startswith("hello True asked by")
    asker, greeter = answered.split("asked by ")[1].split(" (pid ")[0], answered.split("(pid ")[1].rstrip(")")
    assert asker != greeter  # the round crossed processes
    assert len(set(cluster.proxy.served)) == 3


# -- notifications -------------------------------------------------------------------------------
def test_a_change_through_one_process_reaches_the_listeners_of_every_process(cluster: Cluster) -> None:
    listeners = [SseReader.listen(s.address, {"toolsListChanged": True, "resourceSubscriptions": ["file:///doc"]})
                 for s in cluster.servers]
    try:
        for listener in listeners:
            listener.next("notifications/subscriptions/acknowledged")
        assert text(post(cluster.servers[0].address, "tools/call", {"name": "touch", "arguments": {}}, name="touch"))
        for listener in listeners:  # within TIMEOUT each (a bound for correctness, not speed)
            assert listener.next()["method"] == "notifications/tools/list_changed"
            updated = listener.next()
            assert updated["method"] == "notifications/resources/updated" and updated["params"]["uri"] == "file:///doc"
    finally:
        for listener in listeners:
            listener.close()


def test_task_status_reaches_a_listener_on_another_process(cluster: Cluster) -> None:
    one, two, three = (s.address for s in cluster.servers)
    task_id = call_task(one, "confirm")
    wait_for_status(two, task_id, "input_required")
    listener = SseReader.listen(three, {"taskIds": [task_id]})
    try:
        acknowledged = listener.next("notifications/subscriptions/acknowledged")
        assert acknowledged["params"]["notifications"]["taskIds"] == [task_id]
        result(post(two, "tasks/update", {"taskId": task_id, "inputResponses": {"confirm": ANSWER}}, name=task_id))
        statuses: list[str] = []
        while not statuses or statuses[-1] != "completed":
            statuses.append(listener.next("notifications/tasks")["params"]["status"])
        assert "working" in statuses
    finally:
        listener.close()


# -- initialize-era sessions ---------------------------------------------------------------------
def test_an_initialize_era_session_works_across_processes(cluster: Cluster) -> None:
    proxy = cluster.proxy.address
    status, answer, session = session_post(proxy, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": ERA, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}})
    assert status == 200 and answer is not None and session is not None, answer
    assert session_post(proxy, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)[0] == 202
    for n in range(6):  # two rounds of the three processes
        status, answer, _ = session_post(proxy, {"jsonrpc": "2.0", "id": 10 + n, "method": "tools/call", "params": {
            "name": "echo", "arguments": {"text": str(n)}}}, session)
        assert status == 200 and answer is not None and answer["result"]["content"][0]["text"].startswith(str(n))
    # A GET stream on one process hears of a subscription made on another and a change on a third.
    one, two, three = (s.address for s in cluster.servers)
    stream = SseReader.get(one, session)
    try:
        status, answer, _ = session_post(two, {"jsonrpc": "2.0", "id": 20, "method": "resources/subscribe",
                                               "params": {"uri": "file:///doc"}}, session)
        assert status == 200 and answer is not None and answer["result"] == {}, answer
        assert text(post(three, "tools/call", {"name": "touch", "arguments": {}}, name="touch"))
        assert stream.next("notifications/resources/updated")["params"]["uri"] == "file:///doc"
    finally:
        stream.close()
    status, _, _ = session_post(three, {"jsonrpc": "2.0", "id": 30, "method": "ping"}, session)
    assert status == 200


def test_a_sessions_answer_to_the_server_reaches_the_process_that_asked(cluster: Cluster) -> None:
    """The server's elicitation goes out on the call's stream from one process; the client's
    answer is posted to another: it is passed on, and the call completes on the first."""
    one, two, _ = (s.address for s in cluster.servers)
    status, answer, session = session_post(one, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": ERA, "capabilities": {"elicitation": {}}, "clientInfo": {"name": "c", "version": "1"}}})
    assert status == 200 and session is not None, answer
    assert session_post(two, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)[0] == 202
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "ask_name", "arguments": {}}}
    stream = SseReader(one, "POST", json.dumps(call).encode(), {
        "content-type": "application/json", "accept": "application/json, text/event-stream",
        "mcp-session-id": session, "mcp-protocol-version": ERA})
    try:
        asked = stream.next()
        assert asked.get("method") == "elicitation/create", asked
        reply = {"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"ok": True}}}
        assert session_post(two, reply, session)[0] == 202  # not the process that asked
        done = stream.next()
        assert done["id"] == 7 and done["result"]["content"][0]["text"].startswith("hello True"), done
    finally:
        stream.close()


# -- tasks ---------------------------------------------------------------------------------------
def test_a_2025_11_25_task_on_one_process_is_awaited_through_another(cluster: Cluster) -> None:
    one, two, three = (s.address for s in cluster.servers)
    status, answer, session = session_post(one, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": ERA, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}})
    assert status == 200 and answer is not None and session is not None
    assert answer["result"]["capabilities"]["tasks"]["requests"] == {"tools": {"call": {}}}
    session_post(two, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    status, answer, _ = session_post(one, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "slow", "arguments": {"seconds": 1}, "task": {"ttl": 60_000}}}, session)
    assert status == 200 and answer is not None, answer
    task_id = answer["result"]["task"]["taskId"]
    # tasks/result on another process waits for the work running on process one.
    status, answer, _ = session_post(two, {"jsonrpc": "2.0", "id": 3, "method": "tasks/result",
                                           "params": {"taskId": task_id}}, session)
    assert status == 200 and answer is not None and answer["result"]["content"][0]["text"].startswith("slow"), answer
    status, answer, _ = session_post(three, {"jsonrpc": "2.0", "id": 4, "method": "tasks/get",
                                             "params": {"taskId": task_id}}, session)
    assert status == 200 and answer is not None and answer["result"]["status"] == "completed", answer


def test_a_task_made_on_one_process_is_read_answered_and_cancelled_through_others(cluster: Cluster) -> None:
    one, two, three = (s.address for s in cluster.servers)
    waiting = call_task(one, "confirm")
    asked = wait_for_status(two, waiting, "input_required")
    assert asked["inputRequests"]["confirm"]["method"] == "elicitation/create"
    result(post(three, "tasks/update", {"taskId": waiting, "inputResponses": {"confirm": ANSWER}}, name=waiting))
    done = wait_for_status(two, waiting, "completed")  # the work resumed on process one
    assert done["result"]["content"][0]["text"].startswith("confirmed: True")
    held = call_task(one, "hold")
    assert wait_for_status(three, held, "working")["statusMessage"] == "holding"
    result(post(two, "tasks/cancel", {"taskId": held}, name=held))
    assert wait_for_status(three, held, "cancelled")["status"] == "cancelled"
    assert wait_for_status(one, held, "cancelled")["status"] == "cancelled"


def test_killing_a_process_loses_no_task_and_no_session(cluster: Cluster) -> None:
    one, two, three = (s.address for s in cluster.servers)
    quick = call_task(one, "quick")
    finished = wait_for_status(one, quick, "completed")
    held = call_task(one, "hold")
    status, _, session = session_post(one, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": ERA, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}})
    assert status == 200 and session is not None
    cluster.servers[0].kill()
    assert wait_for_status(two, quick, "completed") == finished | {"_meta": finished["_meta"]}
    lost = wait_for_status(three, held, "failed")  # once process one's heartbeat lapses
    assert lost["error"] == INTERNAL
    for address in (two, three, cluster.proxy.address, cluster.proxy.address):
        status, answer, _ = session_post(address, {"jsonrpc": "2.0", "id": 2, "method": "ping"}, session)
        assert status == 200 and answer is not None and answer["result"] == {}


# -- faults --------------------------------------------------------------------------------------
def test_redis_restarted_mid_test(cluster: Cluster) -> None:
    one, two, three = (s.address for s in cluster.servers)
    cluster.redis.stop()
    status, answer = post(one, "tasks/get", {"taskId": "any"}, name="any")
    assert answer is not None and answer["error"]["code"] == -32603, (status, answer)
    status, body, _ = session_post(two, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": ERA, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}})
    assert status == 500 and body is not None and body["error"]["code"] == -32603
    assert text(post(three, "tools/call", {"name": "echo", "arguments": {"text": "no redis"}}, name="echo"))
    cluster.servers[0].stderr.wait_for(r"task store: get failed")
    cluster.redis.start()
    # Back: tasks, sessions and notifications work again (the broker subscribed again).
    task_id = call_task(one, "quick")
    assert wait_for_status(two, task_id, "completed")["status"] == "completed"
    status, _, session = session_post(two, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": ERA, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}})
    assert status == 200 and session is not None
    listener = SseReader.listen(three, {"toolsListChanged": True})
    try:
        listener.next("notifications/subscriptions/acknowledged")
        deadline = time.monotonic() + TIMEOUT
        while True:  # until process one's subscription is back: a change made before it is lost
            assert text(post(one, "tools/call", {"name": "touch", "arguments": {}}, name="touch"))
            try:
                listener.messages.get(timeout=0.5)
                break
            except Exception:
                assert time.monotonic() < deadline, "notifications never crossed processes again"
    finally:
        listener.close()


def test_a_poisoned_broker_message_is_logged_and_dropped(cluster: Cluster) -> None:
    raw = redis.Redis.from_url(cluster.redis.url)
    listener = SseReader.listen(cluster.servers[1].address, {"toolsListChanged": True})
    try:
        listener.next("notifications/subscriptions/acknowledged")
        assert raw.publish(PREFIX + "notices", b'{"v":1,"origin":"x","notice":{"type":"drop tables"}}') == 3
        assert raw.publish(PREFIX + "notices", b"\x00\xff garbage") == 3
        for server in cluster.servers:
            server.stderr.wait_for(r"dropped a message on cluster-test:notices that is not a notice")
        assert text(post(cluster.servers[0].address, "tools/call", {"name": "touch", "arguments": {}}, name="touch"))
        assert listener.next()["method"] == "notifications/tools/list_changed"
    finally:
        listener.close()
    for server in cluster.servers:
        assert server.process.poll() is None


def test_redis_down_at_start_is_a_clear_error(tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    write_keyring(new_keyring(), keys)
    port = free_port()
    done = subprocess.run(
        [sys.executable, "-m", "mcpwire_adapters.cli", "serve", "tests/cluster_app.py:app", "--port", "0",
         "--redis", f"redis://127.0.0.1:{port}/0", "--keys", str(keys)],
        cwd=REPO, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 3, done.stderr
    assert f"cannot reach Redis at redis://127.0.0.1:{port}/0" in done.stderr and "serving" not in done.stderr
