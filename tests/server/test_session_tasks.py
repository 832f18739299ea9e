"""2025-11-25's tasks (Basic > Utilities > Tasks, experimental) on initialize-era sessions, at the
engine, over HTTP, sans-IO: the capability, tool-level negotiation, task creation from
``params.task``, ``tasks/get``, ``tasks/result`` (at once for a finished task, a
:class:`TaskResultWanted` for a running one), ``tasks/list`` (only for an authenticated caller,
only its tasks, with cursors), ``tasks/cancel``, and ``notifications/tasks/status`` on the
session's GET stream. Every message is validated against the vendored 2025-11-25 schema."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from test_initialize_era_shapes import validate
from test_session_admission import INIT, make_server, open_session, reply, send

import mcpwire
from mcpwire import HttpRequest, ResponseBody
from mcpwire.sessions import SessionStream
from mcpwire.tasks import RELATED_TASK_META_KEY, MemoryTaskStore, TaskChanged, TaskResultWanted, Tasks
from mcpwire.types import CallToolResult, TextContent, Tool

NOW = 1_800_000_000.0
OBJECT = {"type": "object"}


def task_server(**kw: Any) -> mcpwire.Server:
    tasks = Tasks(MemoryTaskStore(), (f"task-{i}" for i in itertools.count(1)), ttl_ms=60_000, poll_interval_ms=500)
    server = make_server(tasks=tasks, **kw)
    server.add_tool(Tool(name="job", input_schema=OBJECT), task_support="optional")
    server.add_tool(Tool(name="must", input_schema=OBJECT), task_support="required")
    return server


def rpc(method: str, params: dict[str, Any], id: int = 5) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params}


def result(answer: Any, type_name: str | None = None) -> Any:
    status, _, body = reply(answer)
    assert status == 200 and "result" in body, body
    if type_name is not None:
        validate("2025-11-25", type_name, body["result"])
    return body["result"]


def error(answer: Any, code: int) -> str:
    status, _, body = reply(answer)
    assert status == 200 and body["error"]["code"] == code, body
    return str(body["error"]["message"])


def sse_messages(data: bytes) -> list[Any]:
    return [json.loads(line[5:]) for line in data.decode().splitlines() if line.startswith("data:") and line[5:].strip()]


def create(server: mcpwire.Server, session: list[tuple[bytes, bytes]], task: Any = None,
           tool: str = "job") -> tuple[mcpwire.HttpExchange, dict[str, Any]]:
    params = {"name": tool, "arguments": {}, "task": {} if task is None else task}
    exchange = send(server, rpc("tools/call", params, 3), session)
    assert isinstance(exchange, mcpwire.HttpExchange)
    event = exchange.event
    assert isinstance(event, mcpwire.ToolCall) and event.task_requested and event.task_allowed
    ttl = event.task_ttl_ms
    out = exchange.create_task(now=NOW) if ttl is None else exchange.create_task(now=NOW, ttl_ms=ttl)
    body = json.loads(b"".join(p.data for p in out if isinstance(p, ResponseBody)))
    validate("2025-11-25", "CreateTaskResult", body["result"])
    return exchange, body["result"]["task"]


def test_the_capability_and_each_tools_task_support_are_told_to_2025_11_25_only() -> None:
    server = task_server()
    _, _, body = reply(send(server, INIT))
    validate("2025-11-25", "InitializeResult", body["result"])
    # No tasks.list without an authorization context (Tasks: Security Considerations).
    assert body["result"]["capabilities"]["tasks"] == {"cancel": {}, "requests": {"tools": {"call": {}}}}
    session = open_session(server)
    tools = {t["name"]: t for t in result(send(server, rpc("tools/list", {}), session), "ListToolsResult")["tools"]}
    assert tools["job"]["execution"] == {"taskSupport": "optional"}
    assert tools["must"]["execution"] == {"taskSupport": "required"} and "execution" not in tools["t"]
    older = open_session(server, "2025-06-18")
    _, _, body = reply(send(server, {**INIT, "params": {**INIT["params"], "protocolVersion": "2025-06-18"}}))
    assert "tasks" not in body["result"]["capabilities"]
    listed = result(send(server, rpc("tools/list", {}), older), None)["tools"]
    assert all("execution" not in t for t in listed)
    error(send(server, rpc("tasks/get", {"taskId": "task-1"}), older), -32601)


def test_tool_level_negotiation_refuses_with_32601() -> None:
    server = task_server()
    session = open_session(server)
    assert "must be called as a task" in error(send(server, rpc("tools/call", {"name": "must", "arguments": {}}), session), -32601)
    assert "does not support task" in error(send(server, rpc("tools/call", {"name": "t", "arguments": {}, "task": {}}), session), -32601)
    bads: list[Any] = [[], {"ttl": -1}, {"ttl": "60"}, {"ttl": 1.5}]
    for bad in bads:
        error(send(server, rpc("tools/call", {"name": "job", "arguments": {}, "task": bad}), session), -32602)
    # Without params.task an optional tool is an ordinary call.
    plain = send(server, rpc("tools/call", {"name": "job", "arguments": {}}), session)
    assert isinstance(plain, mcpwire.HttpExchange) and not plain.event.task_allowed  # type: ignore[union-attr]


def test_a_server_without_tasks_ignores_params_task() -> None:
    server = make_server()
    session = open_session(server)
    plain = send(server, rpc("tools/call", {"name": "t", "arguments": {}, "task": {"ttl": 5}}), session)
    assert isinstance(plain, mcpwire.HttpExchange) and not plain.event.task_allowed  # type: ignore[union-attr]
    for method in ("tasks/get", "tasks/result", "tasks/list", "tasks/cancel"):
        error(send(server, rpc(method, {"taskId": "x"}), session), -32601)


def test_create_get_and_result_of_a_completed_task() -> None:
    server = task_server()
    session = open_session(server)
    exchange, task = create(server, session, {"ttl": 1_000_000_000})
    assert task["taskId"] == "task-1" and task["status"] == "working"
    assert task["ttl"] == 60_000 and task["pollInterval"] == 500  # the server's maximum ttl wins
    got = result(send(server, rpc("tasks/get", {"taskId": "task-1"}), session), "GetTaskResult")
    assert got["status"] == "working" and "result" not in got
    waiting = send(server, rpc("tasks/result", {"taskId": "task-1"}, 8), session)
    assert isinstance(waiting, mcpwire.HttpExchange) and isinstance(waiting.event, TaskResultWanted)
    assert exchange.complete(CallToolResult(content=[TextContent(text="done")]), now=NOW + 1) == []
    tasks = server.tasks
    assert tasks is not None
    record = tasks.get("task-1", NOW + 1)
    assert record is not None and record.terminal
    body = json.loads(b"".join(p.data for p in waiting.task_result(record) if isinstance(p, ResponseBody)))
    validate("2025-11-25", "CallToolResult", body["result"])
    assert body["id"] == 8 and body["result"]["_meta"] == {RELATED_TASK_META_KEY: {"taskId": "task-1"}}
    now = result(send(server, rpc("tasks/result", {"taskId": "task-1"}), session), "CallToolResult")
    assert now["content"] == [{"type": "text", "text": "done"}]
    assert result(send(server, rpc("tasks/get", {"taskId": "task-1"}), session))["status"] == "completed"


def test_a_tool_error_is_a_failed_task_and_an_error_is_returned_as_it_was() -> None:
    server = task_server()
    session = open_session(server)
    first, _ = create(server, session)
    first.complete(CallToolResult(content=[TextContent(text="no")], is_error=True), now=NOW)
    assert result(send(server, rpc("tasks/get", {"taskId": "task-1"}), session))["status"] == "failed"
    assert result(send(server, rpc("tasks/result", {"taskId": "task-1"}), session))["isError"] is True
    second, _ = create(server, session)
    second.fail(mcpwire.RemoteProtocolError("bad city", code=-32602), now=NOW)
    assert error(send(server, rpc("tasks/result", {"taskId": "task-2"}), session), -32602) == "bad city"


def test_cancel_answers_the_cancelled_task_and_refuses_a_finished_one() -> None:
    server = task_server()
    session = open_session(server)
    create(server, session)
    changed = send(server, rpc("tasks/cancel", {"taskId": "task-1"}), session)
    assert isinstance(changed, TaskChanged) and changed.task.status.value == "cancelled"
    status, _, body = reply(changed.reply)
    validate("2025-11-25", "CancelTaskResult", body["result"])
    assert body["result"]["status"] == "cancelled"
    message = error(send(server, rpc("tasks/cancel", {"taskId": "task-1"}), session), -32602)
    assert message == "Cannot cancel task: already in terminal status 'cancelled'"
    for method in ("tasks/get", "tasks/result", "tasks/cancel"):
        assert error(send(server, rpc(method, {"taskId": "nope"}), session), -32602) == "Failed to retrieve task: Task not found"
        error(send(server, rpc(method, {}), session), -32602)


def principal_request(server: mcpwire.Server, body: Any, headers: list[tuple[bytes, bytes]], who: str) -> Any:
    from test_session_admission import BASE

    return server.receive_http(HttpRequest(method="POST", target="/mcp", headers=BASE + headers,
                                           body=json.dumps(body).encode(), principal=who), now=NOW)


def test_tasks_are_bound_to_the_caller_and_listed_for_it_only() -> None:
    server = task_server(page_size=2)

    def session_of(who: str) -> list[tuple[bytes, bytes]]:
        status, headers, body = reply(principal_request(server, INIT, [], who))
        assert body["result"]["capabilities"]["tasks"]["list"] == {}
        return [(b"mcp-session-id", headers[b"mcp-session-id"]), (b"mcp-protocol-version", b"2025-11-25")]

    session, bobs = session_of("alice"), session_of("bob")  # a session is its initializer's only
    for n in range(3):
        exchange = principal_request(server, rpc("tools/call", {"name": "job", "arguments": {}, "task": {}}, n), session, "alice")
        exchange.create_task(now=NOW)
    other = principal_request(server, rpc("tools/call", {"name": "job", "arguments": {}, "task": {}}), bobs, "bob")
    other.create_task(now=NOW)
    page = result(principal_request(server, rpc("tasks/list", {}), session, "alice"), "ListTasksResult")
    assert [t["taskId"] for t in page["tasks"]] == ["task-1", "task-2"]
    rest = result(principal_request(server, rpc("tasks/list", {"cursor": page["nextCursor"]}), session, "alice"))
    assert [t["taskId"] for t in rest["tasks"]] == ["task-3"] and "nextCursor" not in rest
    bob = result(principal_request(server, rpc("tasks/list", {}), bobs, "bob"))
    assert [t["taskId"] for t in bob["tasks"]] == ["task-4"]
    # Another caller's task is not found, and its id is no cursor.
    error(principal_request(server, rpc("tasks/get", {"taskId": "task-4"}), session, "alice"), -32602)
    error(principal_request(server, rpc("tasks/list", {"cursor": "task-4"}), session, "alice"), -32602)
    # Without an authorization context there is no tasks/list (it was not declared).
    error(send(server, rpc("tasks/list", {}), open_session(server)), -32601)


@pytest.mark.parametrize("end", ["complete", "cancel"])
def test_status_notifications_go_to_the_sessions_get_stream(end: str) -> None:
    server = task_server()
    session = open_session(server)
    other = open_session(server)
    streams = []
    for headers in (session, other):
        stream = send(server, None, headers + [(b"accept", b"text/event-stream")], method="GET")
        assert isinstance(stream, SessionStream)
        stream.start()
        streams.append(stream)
    exchange, _ = create(server, session)
    deliveries = server.task_status("task-1", now=NOW)
    assert [s for s, _ in deliveries] == [streams[0]]  # only the session that made the task
    if end == "complete":
        exchange.complete("ok", now=NOW + 1)
    else:
        send(server, rpc("tasks/cancel", {"taskId": "task-1"}), session)
    [(stream, out)] = server.task_status("task-1", now=NOW + 1)
    [message] = sse_messages(b"".join(p.data for p in out if isinstance(p, ResponseBody)))
    assert message["method"] == "notifications/tasks/status" and "_meta" not in message["params"]
    validate("2025-11-25", "TaskStatusNotification", message)
    assert message["params"]["status"] == ("completed" if end == "complete" else "cancelled")


def test_a_task_asks_on_a_stream_of_its_session_and_resumes_on_the_answers() -> None:
    server = task_server()
    status, headers, _ = reply(send(server, {**INIT, "params": {**INIT["params"], "capabilities": {"elicitation": {}}}}))
    session = [(b"mcp-session-id", headers[b"mcp-session-id"]), (b"mcp-protocol-version", b"2025-11-25")]
    exchange, task = create(server, session)
    ask = {"method": "elicitation/create", "params": {"message": "name?", "requestedSchema": {"type": "object", "properties": {}}}}
    assert exchange.input_required({"who": ask}, state={"step": 1}, now=NOW + 1) == []
    assert exchange.awaiting_input
    [message] = [json.loads(m) for m in exchange.task_requests]
    validate("2025-11-25", "ElicitRequest", message)
    assert message["params"]["_meta"] == {RELATED_TASK_META_KEY: {"taskId": task["taskId"]}}
    assert result(send(server, rpc("tasks/get", {"taskId": task["taskId"]}), session))["status"] == "input_required"
    # A tasks/result waiting on the task carries the requests on its SSE stream.
    waiting = send(server, rpc("tasks/result", {"taskId": task["taskId"]}, 8), session)
    assert isinstance(waiting, mcpwire.HttpExchange)
    relayed = b"".join(p.data for p in waiting.relay(exchange.task_requests) if isinstance(p, ResponseBody))
    assert sse_messages(relayed) == [message]
    answer = {"jsonrpc": "2.0", "id": message["id"], "result": {"action": "accept", "content": {"name": "Ada"}}}
    arrived = send(server, answer, session)
    assert isinstance(arrived, mcpwire.InputArrived) and arrived.ready and arrived.exchange is exchange
    assert exchange.task_requests == []  # answered: nothing left to send
    event = exchange.resume(now=NOW + 2)
    assert isinstance(event, mcpwire.ToolCall) and event.input_responses == {"who": answer["result"]} and event.state == {"step": 1}
    assert result(send(server, rpc("tasks/get", {"taskId": task["taskId"]}), session))["status"] == "working"
    # An unanswered round that times out fails the task; its late answer is dropped.
    exchange.input_required({"again": ask}, now=NOW + 3)
    [late] = [json.loads(m) for m in exchange.task_requests]
    assert exchange.input_timed_out(5, now=NOW + 9) == []
    assert result(send(server, rpc("tasks/get", {"taskId": task["taskId"]}), session))["status"] == "failed"
    assert reply(send(server, {"jsonrpc": "2.0", "id": late["id"], "result": {"action": "cancel"}}, session))[0] == 202


def test_a_task_cannot_ask_for_what_the_client_did_not_declare() -> None:
    server = task_server()
    session = open_session(server)  # no elicitation capability
    exchange, task = create(server, session)
    ask = {"method": "elicitation/create", "params": {"message": "?", "requestedSchema": {"type": "object", "properties": {}}}}
    assert exchange.input_required({"k": ask}, now=NOW) == []
    assert not exchange.awaiting_input and exchange.task_requests == []  # nothing was asked
    got = result(send(server, rpc("tasks/get", {"taskId": task["taskId"]}), session))
    assert got["status"] == "failed"
    assert error(send(server, rpc("tasks/result", {"taskId": task["taskId"]}), session), -32021)
