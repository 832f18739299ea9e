"""The tasks extension at the engine (ext-tasks specification, draft; SEP-2663): negotiation,
task creation, tasks/get, tasks/update, tasks/cancel, the lifecycle table, the store's bounds and
expiry, over HTTP and stdio. Every message is validated against the vendored schemas
(tests/schema_check.py: the extension's own for what it adds)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from schema_check import NOW, Reply, assemble, call, error_of, ev, exchange, lines_of, make_server, meta, post, request

import mcpwire
from mcpwire.tasks import TASK, TASKS_EXTENSION, MemoryTaskStore, TaskChanged, Tasks, TaskStatus
from mcpwire.types import CallToolResult, ElicitRequest, ElicitRequestFormParams, TextContent, Tool

TASKS_CAPS: dict[str, Any] = {"elicitation": {}, "extensions": {TASKS_EXTENSION: {}}}
OBJECT = {"type": "object"}


def task_server(*, store: MemoryTaskStore | None = None, ttl_ms: int | None = 60_000, **kw: Any) -> mcpwire.Server:
    ids = (f"task-{n}" for n in itertools.count(1))
    server = make_server(tasks=Tasks(store if store is not None else MemoryTaskStore(), ids, ttl_ms=ttl_ms, poll_interval_ms=500), **kw)
    server.add_tool(Tool(name="job", input_schema=OBJECT), task_support="optional")
    server.add_tool(Tool(name="must", input_schema=OBJECT), task_support="required")
    server.add_tool(Tool(name="plain", input_schema=OBJECT))
    return server


def with_tasks(method: str, params: dict[str, Any] | None = None, id: Any = 1) -> dict[str, Any]:
    return request(method, {**(params or {}), "_meta": meta(caps=TASKS_CAPS)}, id)


def start(server: mcpwire.Server, tool: str = "job", now: float = NOW) -> tuple[mcpwire.HttpExchange, Reply]:
    ex = exchange(server, with_tasks("tools/call", {"name": tool, "arguments": {}}), now=now)
    assert ev(ex).task_allowed
    return ex, assemble(ex.create_task(now=now), "tools/call")


def get(server: mcpwire.Server, task_id: str, now: float = NOW) -> dict[str, Any]:
    reply = call(server, with_tasks("tasks/get", {"taskId": task_id}, 7), now=now)
    assert reply.status == 200, reply.body
    result: dict[str, Any] = reply.result
    return result


def elicit(message: str) -> ElicitRequest:
    return ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema={"type": "object", "properties": {}}))


# -- negotiation ----------------------------------------------------------------------------------
def test_the_extension_is_advertised_only_by_a_server_with_tasks() -> None:
    assert task_server().capabilities()["extensions"] == {TASKS_EXTENSION: {}}
    assert "extensions" not in make_server().capabilities()


@pytest.mark.parametrize("method", ["tasks/get", "tasks/update", "tasks/cancel", "tasks/result", "tasks/list"])
def test_a_server_without_tasks_knows_no_tasks_method(method: str) -> None:
    error_of(call(make_server(), with_tasks(method, {"taskId": "x", "inputResponses": {}})), -32601, 1)


@pytest.mark.parametrize("method", ["tasks/result", "tasks/list"])
def test_the_methods_the_extension_removed_are_unknown(method: str) -> None:
    error_of(call(task_server(), with_tasks(method, {"taskId": "x"})), -32601, 1)


@pytest.mark.parametrize("method", ["tasks/get", "tasks/update", "tasks/cancel"])
def test_tasks_methods_need_the_extension_declared_on_the_request(method: str) -> None:
    reply = call(task_server(), request(method, {"taskId": "x", "inputResponses": {}}))
    error = error_of(reply, -32021, 1)
    assert error["data"] == {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}


def test_a_required_task_tool_refuses_a_client_without_the_extension_before_the_host_runs() -> None:
    reply = call(task_server(), request("tools/call", {"name": "must", "arguments": {}}))
    assert error_of(reply, -32021, 1)["data"]["requiredCapabilities"] == {"extensions": {TASKS_EXTENSION: {}}}


def test_an_optional_task_tool_without_the_extension_is_an_ordinary_call() -> None:
    ex = exchange(task_server(), request("tools/call", {"name": "job", "arguments": {}}))
    assert not ev(ex).task_allowed
    with pytest.raises(mcpwire.LocalProtocolError, match="task_allowed"):
        ex.create_task(now=NOW)
    assert assemble(ex.complete("done"), "tools/call").result["content"][0]["text"] == "done"


def test_a_tool_without_task_support_never_allows_a_task() -> None:
    ex = exchange(task_server(), with_tasks("tools/call", {"name": "plain", "arguments": {}}))
    assert not ev(ex).task_allowed


def test_task_support_needs_a_server_with_tasks() -> None:
    with pytest.raises(mcpwire.LocalProtocolError, match="Server\\(tasks="):
        make_server().add_tool(Tool(name="job", input_schema=OBJECT), task_support="optional")
    with pytest.raises(mcpwire.LocalProtocolError, match="task_support is"):
        task_server().add_tool(Tool(name="x", input_schema=OBJECT), task_support="sometimes")  # type: ignore[arg-type]


def test_mcp_name_must_mirror_the_task_id() -> None:
    body = with_tasks("tasks/get", {"taskId": "task-1"})
    reply = call(task_server(), body, drop=[b"Mcp-Name"], extra=[(b"Mcp-Name", b"task-2")])
    error_of(reply, -32020, 1)


# -- creation and polling -------------------------------------------------------------------------
def test_create_task_answers_a_flat_create_task_result_and_the_task_is_readable_at_once() -> None:
    server = task_server()
    ex, reply = start(server)
    result = reply.result
    assert result["resultType"] == "task" and result["taskId"] == "task-1" and result["status"] == "working"
    assert result["ttlMs"] == 60_000 and result["pollIntervalMs"] == 500
    assert result["createdAt"] == result["lastUpdatedAt"] == "2027-01-15T08:00:00.000Z"
    assert ex.state is mcpwire.ExchangeState.TASK and ex.task_id == "task-1"
    polled = get(server, "task-1")
    assert polled["resultType"] == "complete" and polled["status"] == "working"
    assert "result" not in polled and "error" not in polled and "inputRequests" not in polled


def test_progress_and_log_of_a_task_send_nothing() -> None:
    server = task_server()
    ex, _ = start(server)
    assert ex.progress(1, total=2) == [] and ex.log("info", "x") == []


def test_a_completed_task_inlines_the_result_without_the_server_identity() -> None:
    server = task_server()
    ex, _ = start(server)
    assert ex.complete(CallToolResult(content=[TextContent(text="built")]), now=NOW + 2) == []
    polled = get(server, "task-1", NOW + 3)
    assert polled["status"] == "completed" and polled["lastUpdatedAt"] == "2027-01-15T08:00:02.000Z"
    assert polled["result"]["content"] == [{"type": "text", "text": "built"}]
    assert "_meta" not in polled["result"]


def test_a_tool_error_is_a_completed_task() -> None:
    server = task_server()
    ex, _ = start(server)
    ex.complete(CallToolResult(content=[TextContent(text="no")], is_error=True), now=NOW)
    polled = get(server, "task-1")
    assert polled["status"] == "completed" and polled["result"]["isError"] is True


def test_a_protocol_error_is_a_failed_task_and_an_internal_error_keeps_its_cause_off_the_wire() -> None:
    server = task_server()
    ex, _ = start(server)
    ex.fail(ValueError("secret detail"), now=NOW)
    polled = get(server, "task-1")
    assert polled["status"] == "failed" and polled["error"] == {"code": -32603, "message": "Internal error"}
    assert "secret" not in str(polled) and "result" not in polled
    assert isinstance(ex.internal_error, ValueError)
    ex2, _ = start(server)
    ex2.fail(mcpwire.RemoteProtocolError("Quota exceeded", code=-32000, data={"retry": 5}), now=NOW)
    polled = get(server, "task-2")
    assert polled["error"] == {"code": -32000, "message": "Quota exceeded", "data": {"retry": 5}}
    assert polled["statusMessage"] == "Quota exceeded"


def test_a_task_outcome_needs_now() -> None:
    ex, _ = start(task_server())
    with pytest.raises(mcpwire.LocalProtocolError, match="now="):
        ex.complete("x")


def test_a_result_that_fails_its_output_schema_fails_the_task() -> None:
    server = task_server()
    server.add_tool(Tool(name="typed", input_schema=OBJECT, output_schema={"type": "object"}), task_support="optional")
    ex = exchange(server, with_tasks("tools/call", {"name": "typed", "arguments": {}}))
    ex.create_task(now=NOW)
    ex.complete(CallToolResult(content=[]), now=NOW)  # no structuredContent
    assert get(server, "task-1")["status"] == "failed"


def test_create_task_takes_the_hosts_ttl_and_interval_and_refuses_bad_ones() -> None:
    server = task_server()
    ex = exchange(server, with_tasks("tools/call", {"name": "job", "arguments": {}}))
    with pytest.raises(mcpwire.LocalProtocolError, match="ttl_ms"):
        ex.create_task(now=NOW, ttl_ms=0)
    reply = assemble(ex.create_task(now=NOW, ttl_ms=None, poll_interval_ms=None, status_message="queued"), "tools/call")
    assert reply.result["ttlMs"] is None and "pollIntervalMs" not in reply.result
    assert reply.result["statusMessage"] == "queued"


def test_a_client_that_left_makes_no_task() -> None:
    server = task_server()
    ex = exchange(server, with_tasks("tools/call", {"name": "job", "arguments": {}}))
    ex.cancel()
    assert ex.create_task(now=NOW) == [] and ex.task_id is None
    assert len(server.tasks.store) == 0  # type: ignore[union-attr, arg-type]


@pytest.mark.parametrize("task_id", ["", 5, None, "nope"])
def test_an_unknown_or_malformed_task_id_is_invalid_params(task_id: Any) -> None:
    body = with_tasks("tasks/get", {"taskId": task_id} if task_id is not None else {})
    error_of(call(task_server(), body), -32602, 1)


def test_a_task_past_its_ttl_is_gone() -> None:
    server = task_server(ttl_ms=1000)
    start(server)
    assert get(server, "task-1", NOW + 0.999)["status"] == "working"
    error_of(call(server, with_tasks("tasks/get", {"taskId": "task-1"}), now=NOW + 1), -32602, 1)


def test_a_full_store_refuses_a_new_task_after_dropping_expired_ones() -> None:
    server = task_server(store=MemoryTaskStore(max_tasks=1), ttl_ms=1000)
    start(server)
    ex = exchange(server, with_tasks("tools/call", {"name": "job", "arguments": {}}, 2))
    with pytest.raises(mcpwire.LocalProtocolError, match="full"):
        ex.create_task(now=NOW)
    start(server, now=NOW + 5)  # the first one expired: room again


# -- input ----------------------------------------------------------------------------------------
def test_input_required_parks_the_task_and_tasks_update_resumes_it_when_every_key_is_answered() -> None:
    server = task_server()
    ex, _ = start(server)
    assert ex.input_required({"a": elicit("A?"), "b": elicit("B?")}, state={"step": 2}, now=NOW) == []
    polled = get(server, "task-1")
    assert polled["status"] == "input_required" and set(polled["inputRequests"]) == {"a", "b"}
    answer = {"action": "accept", "content": {"x": 1}}
    partial = call(server, with_tasks("tasks/update", {"taskId": "task-1", "inputResponses": {"a": answer}}))
    assert partial.result["resultType"] == "complete"
    assert set(get(server, "task-1")["inputRequests"]) == {"b"}
    changed = post(server, with_tasks("tasks/update", {"taskId": "task-1", "inputResponses": {"b": answer, "zz": {}}}))
    assert isinstance(changed, TaskChanged)
    assert assemble(changed.reply, "tasks/update").result["resultType"] == "complete"
    assert changed.task.status is TaskStatus.WORKING and changed.task.answers == {"a": answer, "b": answer}
    event: Any = ex.resume_task(changed.task)
    assert event.input_responses == {"a": answer, "b": answer} and event.state == {"step": 2}
    assert event.task_id == "task-1"
    assert get(server, "task-1")["status"] == "working"
    with pytest.raises(mcpwire.LocalProtocolError, match="reused"):
        ex.input_required({"a": elicit("again")}, now=NOW)


def test_an_answer_of_the_wrong_shape_is_invalid_params_naming_the_key() -> None:
    server = task_server()
    ex, _ = start(server)
    ex.input_required({"a": elicit("A?")}, now=NOW)
    reply = call(server, with_tasks("tasks/update", {"taskId": "task-1", "inputResponses": {"a": {"action": 5}}}))
    assert "inputResponses.a" in error_of(reply, -32602, 1)["message"]
    assert get(server, "task-1")["status"] == "input_required"


@pytest.mark.parametrize("responses", [None, [], "x", {"a": 1}])
def test_tasks_update_needs_an_object_of_objects(responses: Any) -> None:
    server = task_server()
    start(server)
    params = {"taskId": "task-1"} if responses is None else {"taskId": "task-1", "inputResponses": responses}
    error_of(call(server, with_tasks("tasks/update", params)), -32602, 1)


def test_asking_for_what_the_client_did_not_declare_fails_the_task_with_32021() -> None:
    server = task_server()
    ex = exchange(server, request("tools/call", {"name": "job", "arguments": {}, "_meta": meta(
        caps={"extensions": {TASKS_EXTENSION: {}}})}))
    ex.create_task(now=NOW)
    ex.input_required({"a": elicit("A?")}, now=NOW)
    polled = get(server, "task-1")
    assert polled["status"] == "failed" and polled["error"]["code"] == -32021


def test_updates_and_cancels_of_a_finished_task_are_acknowledged_and_change_nothing() -> None:
    server = task_server()
    ex, _ = start(server)
    ex.complete("done", now=NOW)
    updates: list[tuple[str, dict[str, Any]]] = [("tasks/update", {"inputResponses": {"a": {}}}), ("tasks/cancel", {})]
    for method, params in updates:
        reply = call(server, with_tasks(method, {"taskId": "task-1", **params}))
        assert reply.status == 200 and reply.result["resultType"] == "complete"
    assert get(server, "task-1")["status"] == "completed"


# -- cancellation ---------------------------------------------------------------------------------
def test_tasks_cancel_cancels_at_once_and_late_work_is_dropped() -> None:
    server = task_server()
    ex, _ = start(server)
    changed = post(server, with_tasks("tasks/cancel", {"taskId": "task-1"}))
    assert isinstance(changed, TaskChanged) and changed.task.status is TaskStatus.CANCELLED
    ack = assemble(changed.reply, "tasks/cancel").result
    assert set(ack) == {"resultType", "_meta"}
    ex.complete("too late", now=NOW + 1)
    polled = get(server, "task-1")
    assert polled["status"] == "cancelled" and "result" not in polled


def test_the_lifecycle_table_refuses_illegal_moves_and_keeps_terminal_states() -> None:
    with pytest.raises(mcpwire.LocalProtocolError, match="cannot resume in state WORKING"):
        TASK.move(TaskStatus.WORKING, "resume")
    with pytest.raises(mcpwire.LocalProtocolError, match="cannot complete in state INPUT_REQUIRED"):
        TASK.move(TaskStatus.INPUT_REQUIRED, "complete")
    for terminal in (TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED):
        for verb in ("status", "ask", "answer", "resume", "complete", "fail", "cancel"):
            assert TASK.move(terminal, verb) is terminal


# -- stdio ----------------------------------------------------------------------------------------
def test_over_stdio_a_task_is_created_polled_and_cancelled() -> None:
    server = task_server()
    conn = mcpwire.StdioConnection(server)

    def line(body: dict[str, Any]) -> bytes:
        import json

        return json.dumps(body).encode() + b"\n"

    [ex] = conn.receive_data(line(with_tasks("tools/call", {"name": "job", "arguments": {}})), now=NOW)
    assert isinstance(ex, mcpwire.StdioExchange)
    [created] = lines_of(ex.create_task(now=NOW), "tools/call")
    assert created["result"]["resultType"] == "task"
    [polled] = conn.receive_data(line(with_tasks("tasks/get", {"taskId": "task-1"}, 2)), now=NOW)
    assert lines_of(polled, "tasks/get")[0]["result"]["status"] == "working"
    [changed] = conn.receive_data(line(with_tasks("tasks/cancel", {"taskId": "task-1"}, 3)), now=NOW)
    assert isinstance(changed, TaskChanged) and changed.task.status is TaskStatus.CANCELLED
    assert lines_of(changed.reply, "tasks/cancel")[0]["id"] == 3


# -- status notifications -------------------------------------------------------------------------
def test_a_listen_stream_naming_task_ids_gets_each_state_of_the_tasks_it_was_agreed() -> None:
    from schema_check import check_message, listen, parse_sse

    server = task_server()
    ex, _ = start(server)
    stream = listen(server, with_tasks("subscriptions/listen", {"notifications": {"taskIds": ["task-1", "task-9"]}}))
    ack = assemble(stream.start(), "subscriptions/listen", final=False).messages[0]
    assert ack["params"]["notifications"] == {"taskIds": ["task-1"]}  # task-9 does not exist
    assert server.task_status("task-9", now=NOW) == []
    ex.complete("built", now=NOW + 1)
    [(target, output)] = server.task_status("task-1", now=NOW + 1)
    assert target is stream
    [note] = parse_sse(b"".join(piece.data for piece in output))
    check_message(note)
    assert note["method"] == "notifications/tasks"
    assert note["params"]["status"] == "completed" and note["params"]["result"]["content"][0]["text"] == "built"
    assert note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 1


def test_asking_for_task_notifications_without_the_extension_is_32021() -> None:
    body = request("subscriptions/listen", {"notifications": {"taskIds": ["task-1"]}})
    error_of(call(task_server(), body), -32021, 1)


@pytest.mark.parametrize("task_ids", ["task-1", [1], [""], ["x"] * 1001])
def test_malformed_task_ids_are_invalid_params(task_ids: Any) -> None:
    body = with_tasks("subscriptions/listen", {"notifications": {"taskIds": task_ids}})
    error_of(call(task_server(), body), -32602, 1)
