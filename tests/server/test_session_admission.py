"""Bad input on the initialize-era surface of the server engine, over HTTP, sans-IO: every case
gets the specified status and JSON-RPC error, and nothing leaks (the store holds only the
sessions that are open). Specification 2025-11-25: Basic > Transports > Streamable HTTP
(Session Management, Protocol Version Header), Basic > Lifecycle."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

import mcpwire
from mcpwire import HttpRequest, Keyring, ResponseBody, ResponseHead, SessionClosed
from mcpwire.sessions import HttpBatch, MemoryEventStore, MemorySessionStore, SessionStream
from mcpwire.types import ElicitRequest, ElicitRequestFormParams, Implementation, Tool

NOW = 1_800_000_000.0
BASE = [(b"content-type", b"application/json"), (b"accept", b"application/json, text/event-stream")]
INIT: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}


def make_server(**kw: Any) -> mcpwire.Server:
    server = mcpwire.Server(Implementation(name="s", version="1"), keyring=Keyring.single(b"k" * 32),
                            session_ids=(f"sid-{i}" for i in itertools.count()), list_changed=True, **kw)
    server.add_tool(Tool(name="t", title="T", input_schema={"type": "object"}))
    return server


def send(server: mcpwire.Server, body: Any, headers: list[tuple[bytes, bytes]] | None = None,
         method: str = "POST", now: float = NOW, principal: str | None = None) -> Any:
    data = json.dumps(body).encode() if body is not None else b""
    request = HttpRequest(method=method, target="/mcp", headers=BASE + (headers or []), body=data, principal=principal)
    return server.receive_http(request, now=now)


def reply(answer: Any) -> tuple[int, dict[bytes, bytes], Any]:
    assert isinstance(answer, tuple), answer
    head = next(part for part in answer if isinstance(part, ResponseHead))
    body = b"".join(part.data for part in answer if isinstance(part, ResponseBody))
    return head.status, dict(head.headers), json.loads(body) if body else None


def open_session(
    server: mcpwire.Server, version: str = "2025-11-25", principal: str | None = None, used: bool = True,
) -> list[tuple[bytes, bytes]]:
    """A session opened by initialize, and (``used``) named since by notifications/initialized."""
    init = {**INIT, "params": {**INIT["params"], "protocolVersion": version}}
    status, headers, body = reply(send(server, init, principal=principal))
    assert status == 200 and body["result"]["protocolVersion"] == version
    session = [(b"mcp-session-id", headers[b"mcp-session-id"]), (b"mcp-protocol-version", version.encode())]
    if used:
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert reply(send(server, note, session, principal=principal))[0] == 202
    return session


def error(answer: Any, status: int, code: int, message: str) -> None:
    got_status, _, body = reply(answer)
    assert (got_status, body["error"]["code"], body["error"]["message"]) == (status, code, message), body


PING: dict[str, Any] = {"jsonrpc": "2.0", "id": 9, "method": "ping"}


def test_a_session_request_without_its_session_id_is_400() -> None:
    server = make_server()
    error(send(server, PING, [(b"mcp-protocol-version", b"2025-11-25")]), 400, -32600,
          "Bad Request: Mcp-Session-Id header is required")
    assert len(server.sessions) == 0


def test_a_second_initialize_on_a_session_is_refused_and_the_session_goes_on() -> None:
    server = make_server()
    session = open_session(server)
    error(send(server, INIT, session), 200, -32600, "The session is already initialized")
    assert reply(send(server, PING, session))[2] == {"jsonrpc": "2.0", "id": 9, "result": {}}
    assert len(server.sessions) == 1


def test_unknown_deleted_and_repeated_session_ids() -> None:
    server = make_server()
    session = open_session(server)
    unknown = [(b"mcp-session-id", b"nope"), (b"mcp-protocol-version", b"2025-11-25")]
    error(send(server, PING, unknown), 404, -32600, "Session not found")
    error(send(server, None, unknown, "GET"), 404, -32600, "Session not found")
    error(send(server, None, unknown, "DELETE"), 404, -32600, "Session not found")
    error(send(server, PING, session + session[:1]), 400, -32600, "Bad Request: repeated Mcp-Session-Id header")
    closed = send(server, None, session, "DELETE")
    assert isinstance(closed, SessionClosed) and reply(closed.reply)[0] == 200
    error(send(server, PING, session), 404, -32600, "Session not found")
    error(send(server, None, session, "DELETE"), 404, -32600, "Session not found")
    assert len(server.sessions) == 0


def test_a_missing_version_header_on_a_session_is_2025_03_26() -> None:
    server = make_server()
    session = open_session(server)
    status, _, body = reply(send(server, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, session[:1]))
    assert status == 200 and body["result"]["tools"] == [{"name": "t", "inputSchema": {"type": "object"}}]  # no title
    status, _, body = reply(send(server, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, session))
    assert body["result"]["tools"][0]["title"] == "T"


@pytest.mark.parametrize("version", [b"2024-11-05", b"1999-01-01", b"nonsense"])
def test_an_unsupported_version_header_on_a_session_is_400(version: bytes) -> None:
    server = make_server()
    session = open_session(server)
    error(send(server, PING, [session[0], (b"mcp-protocol-version", version)]), 400, -32600,
          f"Bad Request: unsupported protocol version {version.decode()} in MCP-Protocol-Version; send"
          " MCP-Protocol-Version: one of 2025-11-25, 2025-06-18, 2025-03-26")


def test_a_revision_the_server_does_not_serve_is_400() -> None:
    server = make_server(supported_versions=("2026-07-28", "2025-11-25"))
    session = open_session(server)
    error(send(server, PING, [session[0], (b"mcp-protocol-version", b"2025-06-18")]), 400, -32600,
          "Bad Request: unsupported protocol version 2025-06-18 in MCP-Protocol-Version; send"
          " MCP-Protocol-Version: 2025-11-25")


def test_the_store_at_its_bound_refuses_initialize_with_503_and_frees_on_delete() -> None:
    server = make_server(sessions=MemorySessionStore(max_sessions=2, idle_timeout=60))
    first, _ = open_session(server), open_session(server)
    error(send(server, INIT), 503, -32603, "Internal error")
    assert len(server.sessions) == 2
    assert isinstance(send(server, None, first, "DELETE"), SessionClosed)
    assert len(server.sessions) == 1
    open_session(server)  # room again
    assert len(server.sessions) == 2


def test_a_flood_of_bare_initializes_locks_no_one_out_and_pushes_out_no_session_in_use() -> None:
    server = make_server(sessions=MemorySessionStore(max_sessions=4, idle_timeout=60))
    in_use = [open_session(server), open_session(server)]
    flood = [open_session(server, used=False) for _ in range(50)]  # each takes the oldest unused one's place
    assert len(server.sessions) == 4
    for session in in_use:
        assert reply(send(server, PING, session))[0] == 200
    error(send(server, PING, flood[0]), 404, -32600, "Session not found")  # pushed out by the flood
    assert reply(send(server, PING, flood[-1]))[0] == 200  # the newest bare one is still there, now in use
    newcomer = open_session(server)  # a new client still gets in
    assert reply(send(server, PING, newcomer))[0] == 200
    # Only sessions in use left (the two, the newest bare one named above, the newcomer): full.
    error(send(server, INIT), 503, -32603, "Internal error")


def test_one_principal_cannot_fill_the_store() -> None:
    server = make_server(sessions=MemorySessionStore(max_sessions=10, idle_timeout=60, max_sessions_per_principal=2))
    first = open_session(server, principal="alice")
    second = open_session(server, principal="alice", used=False)
    third = open_session(server, principal="alice")  # takes the place of alice's unused one
    error(send(server, PING, second, principal="alice"), 404, -32600, "Session not found")
    error(send(server, INIT, principal="alice"), 503, -32603, "Internal error")  # both of hers in use
    for session in (first, third):
        assert reply(send(server, PING, session, principal="alice"))[0] == 200
    open_session(server, principal="bob")  # others are not held back
    open_session(server)  # nor is anyone without a principal
    assert len(server.sessions) == 4


def test_the_store_bounds_are_checked() -> None:
    for bad in ({"max_sessions": 0}, {"idle_timeout": 0}, {"max_sessions_per_principal": 0}):
        with pytest.raises(mcpwire.LocalProtocolError):
            MemorySessionStore(**bad)
    assert MemorySessionStore(max_sessions_per_principal=None).max_sessions_per_principal is None


def test_idle_sessions_expire_and_make_room() -> None:
    server = make_server(sessions=MemorySessionStore(max_sessions=1, idle_timeout=10))
    session = open_session(server)
    error(send(server, PING, session, now=NOW + 11), 404, -32600, "Session not found")
    assert len(server.sessions) == 0
    status, _, _ = reply(send(server, INIT, now=NOW + 12))
    assert status == 200 and len(server.sessions) == 1


def test_responses_to_unknown_server_requests_are_dropped() -> None:
    server = make_server()
    session = open_session(server)
    for stray in ({"jsonrpc": "2.0", "id": 77, "result": {}},
                  {"jsonrpc": "2.0", "id": "x", "error": {"code": -32601, "message": "no"}}):
        status, _, body = reply(send(server, stray, session))
        assert status == 202 and body is None


def test_get_streams_one_per_session_and_none_without_a_session() -> None:
    server = make_server()
    session = open_session(server)
    error(send(server, None, [(b"accept", b"text/event-stream")], "GET"), 405, -32600,
          "Streamable HTTP accepts POST only")
    stream = send(server, None, session + [(b"accept", b"text/event-stream")], "GET")
    assert isinstance(stream, SessionStream)
    error(send(server, None, session, "GET"), 409, -32600, "Conflict: the session already has an open GET stream")
    stream.cancel()
    assert isinstance(send(server, None, session, "GET"), SessionStream)


def test_multi_round_trip_params_on_a_session_are_32602() -> None:
    server = make_server()
    session = open_session(server)
    call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "t", "arguments": {}, "inputResponses": {}}}
    error(send(server, call, session), 200, -32602,
          "Multi-round-trip inputs (inputResponses, requestState) are not part of protocol revision 2025-11-25")


class CountingEventStore(MemoryEventStore):
    """The default store, counting what the engine keeps in it."""

    made: list[CountingEventStore] = []

    def __init__(self) -> None:
        super().__init__()
        self.recorded = 0
        CountingEventStore.made.append(self)

    def record(self, key: str, frame: bytes, *, last: bool = False) -> None:
        self.recorded += 1
        super().record(key, frame, last=last)


def test_each_session_keeps_its_events_in_the_store_the_host_gives() -> None:
    CountingEventStore.made = []
    server = make_server(event_store=CountingEventStore)
    first, _ = open_session(server), open_session(server)
    assert len(CountingEventStore.made) == 2
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "t", "arguments": {}, "_meta": {"progressToken": "p"}}}
    exchange = send(server, call, first)
    assert isinstance(exchange, mcpwire.HttpExchange)
    streamed = exchange.progress(1, total=2) + exchange.complete(mcpwire.types.CallToolResult(content=[]))
    frames = [part.data for part in streamed if isinstance(part, ResponseBody) and part.data]
    store, other = CountingEventStore.made
    # Every message is kept; the priming event (the stream's first id, no data) is not.
    assert store.recorded == len(frames) - 1 == 2 and other.recorded == 0
    # A GET with the first event's id replays the rest, from the host's store.
    first_id = frames[0].split(b"\n")[0].removeprefix(b"id: ").decode()
    key, rest, ended = store.replay(first_id) or ("", [], False)
    assert rest == frames[1:] and ended and key == first_id.split("-")[0]
    assert store.replay("999-1") is None and store.replay("garbage") is None


def test_stateless_legacy_mode_serves_initialize_era_requests_without_sessions() -> None:
    server = mcpwire.Server(Implementation(name="s", version="1"), keyring=Keyring.single(b"k" * 32))
    server.add_tool(Tool(name="t", input_schema={"type": "object"}))
    status, headers, body = reply(send(server, INIT))
    assert status == 200 and b"mcp-session-id" not in headers and body["result"]["protocolVersion"] == "2025-11-25"
    version = [(b"mcp-protocol-version", b"2025-11-25")]
    status, _, body = reply(send(server, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, version))
    assert status == 200 and [t["name"] for t in body["result"]["tools"]] == ["t"]
    assert "resultType" not in body["result"]
    assert len(server.sessions) == 0


def test_tools_with_schemas_an_older_client_cannot_take_are_hidden_and_refused() -> None:
    server = make_server()
    server.add_tool(Tool(name="listy", input_schema={"type": "object"}, output_schema={"type": "array"}))
    session = open_session(server)
    _, _, listed = reply(send(server, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, session))
    assert [t["name"] for t in listed["result"]["tools"]] == ["t"]
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "listy", "arguments": {}}}
    status, _, body = reply(send(server, call, session))
    assert status == 200 and body["error"]["code"] == -32602


@pytest.mark.parametrize("origin", [b"https://evil.example", b"null"])
def test_origin_checks_apply_to_sessions(origin: bytes) -> None:
    server = make_server()
    session = open_session(server)
    error(send(server, INIT, [(b"origin", origin)]), 403, -32600, "Origin is not allowed")
    error(send(server, PING, session + [(b"origin", origin)]), 403, -32600, "Origin is not allowed")
    assert len(server.sessions) == 1


# -- 2025-03-26 batches ------------------------------------------------------------------------------


def batch(server: mcpwire.Server, messages: Any, session: list[tuple[bytes, bytes]]) -> Any:
    return server.receive_http(HttpRequest(method="POST", target="/mcp", headers=BASE + session,
                                           body=json.dumps(messages).encode()), now=NOW)


def test_a_2025_03_26_session_receives_batches() -> None:
    server = make_server()
    session = open_session(server, "2025-03-26")
    messages = [PING, {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
                {"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": "t", "arguments": {}}},
                {"jsonrpc": "2.0", "id": 11, "method": "nope"}, [PING]]
    answer = batch(server, messages, session)
    assert isinstance(answer, HttpBatch) and answer.has_requests and len(answer.answers) == 5
    ping, note, call, unknown, nested = answer.answers
    assert reply(ping)[2] == {"jsonrpc": "2.0", "id": 9, "result": {}} and reply(note)[0] == 202
    assert isinstance(call, mcpwire.HttpExchange) and call.request_id == 10
    assert reply(unknown)[2]["error"]["code"] == -32601 and reply(nested)[2]["error"]["code"] == -32600
    # Every answer becomes events of the one stream.
    events = [f.data for part in (ping, call.complete(mcpwire.types.CallToolResult(content=[]))) for f in HttpBatch.frames(part)]
    assert [json.loads(e.split(b"data: ", 1)[1])["id"] for e in events] == [9, 10]
    assert all(f.more for part in (ping, unknown) for f in HttpBatch.frames(part))


def test_a_batch_of_notifications_and_responses_is_202() -> None:
    server = make_server()
    session = open_session(server, "2025-03-26")
    answer = batch(server, [{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
                            {"jsonrpc": "2.0", "id": 77, "result": {}}], session)
    assert isinstance(answer, HttpBatch) and not answer.has_requests and reply(answer.no_requests)[0] == 202


def test_batches_are_refused_elsewhere() -> None:
    server = make_server()
    old, new = open_session(server, "2025-03-26"), open_session(server)
    error(batch(server, [], old), 400, -32600, "Invalid Request: empty batch")
    error(batch(server, [PING] * 65, old), 400, -32600, "Invalid Request: more than 64 messages in a batch")
    unknown = [(b"mcp-session-id", b"nope"), (b"mcp-protocol-version", b"2025-03-26")]
    error(batch(server, [PING], unknown), 404, -32600, "Session not found")
    for refused in (batch(server, [PING], new), batch(server, [PING], [])):
        status, _, body = reply(refused)
        assert status == 400 and body["error"]["code"] == -32600


# -- before initialize, cancellation, a client that never answers, leaks -----------------------------


def test_requests_before_initialize_are_400_and_open_nothing() -> None:
    server = make_server()
    era = [(b"mcp-protocol-version", b"2025-06-18")]
    listed = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    error(send(server, listed, era), 400, -32600, "Bad Request: Mcp-Session-Id header is required")
    # A GET or DELETE of an initialize-era client without a session: 400 too (Session Management).
    error(send(server, None, era + [(b"accept", b"text/event-stream")], "GET"), 400, -32600,
          "Bad Request: Mcp-Session-Id header is required")
    error(send(server, None, era, "DELETE"), 400, -32600, "Bad Request: Mcp-Session-Id header is required")
    # Without any header the request is the stateless generation's: its own admission answers.
    status, _, body = reply(send(server, listed))
    assert status == 400 and body["error"]["code"] == -32020
    # A server of the initialize era only has no stateless generation: 400 for the session id.
    only = make_server(supported_versions=("2025-11-25", "2025-06-18", "2025-03-26"))
    error(send(only, listed), 400, -32600, "Bad Request: Mcp-Session-Id header is required")
    error(send(only, None, [(b"accept", b"text/event-stream")], "GET"), 400, -32600,
          "Bad Request: Mcp-Session-Id header is required")
    assert reply(send(only, {"jsonrpc": "2.0", "method": "notifications/initialized"}))[0] == 202
    assert len(server.sessions) == len(only.sessions) == 0


def test_stateless_legacy_mode_takes_a_request_without_the_version_header_as_2025_03_26() -> None:
    server = mcpwire.Server(Implementation(name="s", version="1"), keyring=Keyring.single(b"k" * 32),
                            supported_versions=("2025-11-25", "2025-03-26"))
    server.add_tool(Tool(name="t", title="T", input_schema={"type": "object"}))
    status, _, body = reply(send(server, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
    assert status == 200 and body["result"] == {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
    newer = mcpwire.Server(Implementation(name="s", version="1"), keyring=Keyring.single(b"k" * 32),
                           supported_versions=("2025-11-25",))
    error(send(newer, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}), 400, -32600,
          "Bad Request: no MCP-Protocol-Version header, which means 2025-03-26, a revision this server does not"
          " serve; send MCP-Protocol-Version: 2025-11-25")


ASKING_INIT: dict[str, Any] = {**INIT, "params": {**INIT["params"], "capabilities": {"elicitation": {}}}}
CALL: dict[str, Any] = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "t", "arguments": {}}}
QUESTION = ElicitRequest(params=ElicitRequestFormParams(message="Name?", requested_schema={"type": "object"}))


def asking_session(server: mcpwire.Server) -> list[tuple[bytes, bytes]]:
    status, headers, _ = reply(send(server, ASKING_INIT))
    assert status == 200
    return [(b"mcp-session-id", headers[b"mcp-session-id"]), (b"mcp-protocol-version", b"2025-11-25")]


def sse_messages(output: Any) -> list[dict[str, Any]]:
    data = b"".join(part.data for part in output if isinstance(part, ResponseBody))
    return [json.loads(line[6:]) for line in data.split(b"\n") if line.startswith(b"data: ") and len(line) > 6]


def test_a_posted_cancellation_names_the_request_and_its_exchange_sends_nothing_more() -> None:
    server = make_server()
    session = asking_session(server)
    exchange = send(server, CALL, session)
    assert isinstance(exchange, mcpwire.HttpExchange)
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5, "reason": "late"}}
    cancelled = send(server, note, session)
    assert isinstance(cancelled, mcpwire.Cancelled)
    assert (cancelled.request_id, cancelled.reason, cancelled.session_id) == (5, "late", session[0][1].decode())
    assert reply(cancelled.reply)[0] == 202
    exchange.cancel()  # what the host does on Cancelled
    assert sse_messages(exchange.complete(mcpwire.types.CallToolResult(content=[]))) == []
    # Unusable cancellations are notifications like any other: 202, nothing cancelled.
    for params in ({}, {"requestId": None}, {"requestId": 5, "reason": 3}):
        assert reply(send(server, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}, session))[0] == 202


def test_a_client_that_never_answers_times_out_and_its_late_answer_is_dropped() -> None:
    server = make_server()
    session = asking_session(server)
    exchange = send(server, CALL, session)
    assert isinstance(exchange, mcpwire.HttpExchange)
    (asked,) = sse_messages(exchange.input_required({"name": QUESTION}))
    assert asked["method"] == "elicitation/create" and exchange.awaiting_input
    stored = server.sessions.get(session[0][1].decode(), NOW)
    assert stored is not None and stored.waiting == 1
    (final,) = sse_messages(exchange.input_timed_out(300))
    assert final["id"] == 5 and final["error"]["code"] == -32603 and stored.waiting == 0
    late = {"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {}}}
    assert reply(send(server, late, session))[0] == 202  # dropped: nothing waits on it


def test_nothing_leaks_when_sessions_end() -> None:
    server = make_server(sessions=MemorySessionStore(max_sessions=3, idle_timeout=60))
    opened = [asking_session(server) for _ in range(3)]
    waiting = []
    for session in opened:
        stream = send(server, None, session + [(b"accept", b"text/event-stream")], "GET")
        assert isinstance(stream, SessionStream)
        stream.start()
        exchange = send(server, CALL, session)
        assert isinstance(exchange, mcpwire.HttpExchange)
        exchange.input_required({"name": QUESTION})
        waiting.append(exchange)
    error(send(server, ASKING_INIT), 503, -32603, "Internal error")
    assert len(server.sessions) == 3 and server.open_streams == 3
    for session, exchange in zip(opened, waiting):
        closed = send(server, None, session, "DELETE")
        assert isinstance(closed, SessionClosed) and closed.waiting == [exchange] and closed.stream is not None
        closed.stream.close()
    assert len(server.sessions) == 0 and server.open_streams == 0
    assert all(exchange.state is mcpwire.ExchangeState.CANCELLED for exchange in waiting)


def test_a_session_call_becomes_a_task_by_params_task_only_never_by_the_extension() -> None:
    """The tasks extension is the stateless revision's: a session's initialize declaring it
    makes no call a task; 2025-11-25's own ``params.task`` does (test_session_tasks.py)."""
    from mcpwire.tasks import TASKS_EXTENSION, MemoryTaskStore, Tasks

    server = make_server(tasks=Tasks(MemoryTaskStore(), (f"task-{i}" for i in itertools.count())))
    server.add_tool(Tool(name="job", input_schema={"type": "object"}), task_support="optional")
    init = {**INIT, "params": {**INIT["params"], "capabilities": {"extensions": {TASKS_EXTENSION: {}}}}}
    status, headers, _ = reply(send(server, init))
    assert status == 200
    session = [(b"mcp-session-id", headers[b"mcp-session-id"]), (b"mcp-protocol-version", b"2025-11-25")]
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "job", "arguments": {}}}
    exchange = send(server, call, session)
    assert isinstance(exchange, mcpwire.HttpExchange) and exchange.event.task_allowed is False  # type: ignore[union-attr]
    update = {"jsonrpc": "2.0", "id": 4, "method": "tasks/update", "params": {"taskId": "task-0"}}
    error(send(server, update, session), 200, -32601, "Method not found: tasks/update")


def test_an_answer_no_request_here_waits_for_goes_to_the_host_only_with_a_shared_store() -> None:
    """One process: an unknown answer is dropped (202). A shared store (several processes): it
    is handed to the host, to pass to the process whose request asked."""
    class SharedStore(MemorySessionStore):
        shared = True

    answer = {"jsonrpc": "2.0", "id": 4096, "result": {"action": "cancel"}}
    alone = make_server()
    assert reply(send(alone, answer, open_session(alone)))[0] == 202
    server = make_server(sessions=SharedStore())
    session = open_session(server)
    arrived = send(server, answer, session)
    assert isinstance(arrived, mcpwire.InputArrived) and arrived.exchange is None and not arrived.ready
    assert arrived.session_id == session[0][1].decode() and arrived.answer.id == 4096
    assert reply(arrived.reply)[0] == 202
    # A string id was never one of the server's: dropped however the store is.
    assert reply(send(server, {**answer, "id": "x"}, session))[0] == 202


def test_a_sessions_request_ids_start_where_its_store_says() -> None:
    from mcpwire.sessions import Session

    session = Session("s", "2025-11-25", {}, None, NOW, first_request_id=1 + 4096 * 7)
    assert session.ask(object(), "k") == 1 + 4096 * 7
    for bad in (0, 2**53, "1"):
        with pytest.raises(mcpwire.LocalProtocolError):
            Session("s", "2025-11-25", {}, None, NOW, first_request_id=bad)  # type: ignore[arg-type]
