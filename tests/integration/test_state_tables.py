"""The state tables drive: every state is reachable, every move not in a table raises, and the
engines' objects change state only the way their table says (exchange, listen stream, client
request), whatever the peer sent."""

from __future__ import annotations

import json
from enum import Enum
from typing import Any

import pytest

import mcpwire
from mcpwire import ExchangeState, ListenState, LocalProtocolError, RequestState
from mcpwire.auth import FLOW
from mcpwire.client.states import REQUEST
from mcpwire.server.states import EXCHANGE, LISTEN, SENDING
from mcpwire.types import CallToolResult, Implementation, TextContent, Tool
from mcpwire.wire.statemachine import StateMachine

MACHINES: list[StateMachine[Any]] = [EXCHANGE, LISTEN, REQUEST, FLOW]


def state(obj: Any) -> Enum:
    """The object's state, read through a call so the type checker does not pin it."""
    return obj.state  # type: ignore[no-any-return]
NOW = 1_700_000_000.0


@pytest.mark.parametrize("machine", MACHINES, ids=lambda m: m.name)
def test_every_state_is_reachable_and_every_move_lands_on_a_state(machine: StateMachine[Any]) -> None:
    state_type: type[Enum] = type(machine.initial)
    states: set[Any] = set(state_type)
    reached, frontier = {machine.initial}, [machine.initial]
    while frontier:
        state = frontier.pop()
        for (src, _), dst in machine.table.items():
            assert dst in states
            if src is state and dst not in reached:
                reached.add(dst)
                frontier.append(dst)
    assert reached == states


@pytest.mark.parametrize("machine", MACHINES, ids=lambda m: m.name)
def test_a_move_not_in_the_table_raises(machine: StateMachine[Any]) -> None:
    verbs = {verb for _, verb in machine.table}
    state_type: type[Enum] = type(machine.initial)
    illegal = [(s, v) for s in state_type for v in sorted(verbs) if (s, v) not in machine.table]
    assert illegal, "every table forbids something"
    for state, verb in illegal:
        assert not machine.allows(state, verb)
        with pytest.raises(LocalProtocolError, match=f"cannot {verb} in state {state.name}"):
            machine.move(state, verb)


def test_the_sending_rows_are_the_exchange_table() -> None:
    # The exchange reads its notify and finish moves from SENDING: each must say what the table
    # says (None where the table keeps a cancelled or task exchange where it is: nothing is sent).
    silent = {ExchangeState.CANCELLED, ExchangeState.TASK}
    for verb, row in SENDING.items():
        for state in ExchangeState:
            if EXCHANGE.allows(state, verb):
                nxt = EXCHANGE.move(state, verb)
                assert row[state] is (None if nxt in silent else nxt), (state, verb)
            else:
                assert state not in row, (state, verb)


def _server() -> mcpwire.Server:
    server = mcpwire.Server(
        Implementation(name="t", version="1"), keyring=mcpwire.Keyring.single(b"k" * 32), list_changed=True
    )
    server.add_tool(Tool(name="echo", input_schema={"type": "object"}))
    return server


def _line(method: str, params: dict[str, Any], request_id: int = 1, **meta: Any) -> bytes:
    params = {**params, "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                  "io.modelcontextprotocol/clientCapabilities": {}, **meta}}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode() + b"\n"


def _exchange(**meta: Any) -> mcpwire.StdioExchange:
    (exchange,) = mcpwire.StdioConnection(_server()).receive_data(
        _line("tools/call", {"name": "echo", "arguments": {}}, **meta), now=NOW)
    assert isinstance(exchange, mcpwire.StdioExchange)
    return exchange


def test_exchange_moves_open_streaming_done() -> None:
    exchange = _exchange(progressToken="p", **{"io.modelcontextprotocol/logLevel": "debug"})
    assert state(exchange) is ExchangeState.OPEN
    assert exchange.progress(1.0)
    assert state(exchange) is ExchangeState.STREAMING
    assert exchange.log("info", "x")
    assert exchange.complete(CallToolResult(content=[TextContent(text="ok")]))
    assert state(exchange) is ExchangeState.DONE
    exchange.cancel()  # a late cancel changes nothing
    assert state(exchange) is ExchangeState.DONE


@pytest.mark.parametrize("with_token", [True, False])
def test_progress_after_the_answer_raises_whatever_the_client_sent(with_token: bool) -> None:
    exchange = _exchange(**({"progressToken": "p"} if with_token else {}))
    exchange.complete("done")
    with pytest.raises(LocalProtocolError, match="cannot notify in state DONE"):
        exchange.progress(1.0)
    with pytest.raises(LocalProtocolError, match="cannot finish in state DONE"):
        exchange.complete("again")


def test_progress_without_a_token_is_checked_then_dropped() -> None:
    exchange = _exchange()
    assert exchange.progress(1.0) == b""
    assert state(exchange) is ExchangeState.OPEN  # nothing went out: still a plain JSON answer
    with pytest.raises(LocalProtocolError, match="strictly increase"):
        exchange.progress(0.5)


def test_a_cancelled_exchange_takes_every_verb_and_sends_nothing() -> None:
    exchange = _exchange(progressToken="p")
    exchange.cancel()
    assert state(exchange) is ExchangeState.CANCELLED
    assert exchange.progress(1.0) == b""
    assert exchange.complete("x") == b""
    assert exchange.fail(ValueError("x")) == b""
    assert state(exchange) is ExchangeState.CANCELLED


def _listen(server: mcpwire.Server) -> mcpwire.StdioListenStream:
    (stream,) = mcpwire.StdioConnection(server).receive_data(
        _line("subscriptions/listen", {"notifications": {"toolsListChanged": True}}), now=NOW)
    assert isinstance(stream, mcpwire.StdioListenStream)
    return stream


def test_listen_stream_is_pending_until_acknowledged() -> None:
    server = _server()
    stream = _listen(server)
    assert state(stream) is ListenState.PENDING
    assert server.list_changed("tools") == []  # nothing before the acknowledgement
    with pytest.raises(LocalProtocolError, match="cannot event in state PENDING"):
        stream.list_changed("tools")
    ack = json.loads(stream.start())
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert state(stream) is ListenState.OPEN
    ((target, line),) = server.list_changed("tools")
    assert target is stream and json.loads(line)["method"] == "notifications/tools/list_changed"
    with pytest.raises(LocalProtocolError, match="cannot start in state OPEN"):
        stream.start()


def test_listen_stream_closes_once_and_leaves_the_registry() -> None:
    server = _server()
    stream = _listen(server)
    stream.start()
    assert server.open_listeners == 1
    ((_, last),) = server.close_listeners()
    assert json.loads(last)["result"]["resultType"] == "complete"
    assert state(stream) is ListenState.CLOSED and server.open_listeners == 0
    assert stream.close() == b"" and stream.start() == b"" and stream.list_changed("tools") == b""
    stream.cancel()
    assert state(stream) is ListenState.CLOSED


def test_shutdown_skips_a_stream_never_acknowledged() -> None:
    server = _server()
    stream = _listen(server)
    assert server.close_listeners() == []
    stream.cancel()
    assert state(stream) is ListenState.CANCELLED and server.open_listeners == 0


# -- the client request table ------------------------------------------------------------------

def _client() -> mcpwire.Client:
    return mcpwire.Client(Implementation(name="c", version="1"))


def _sse(*messages: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(m).encode() + b"\n\n" for m in messages)


def test_http_request_moves_awaiting_receiving_complete() -> None:
    client = _client()
    request = client.call_tool("echo", {}, progress_token="p")
    parser = mcpwire.HttpResponseParser(client, request, status=200, content_type="text/event-stream")
    assert state(parser) is RequestState.AWAITING
    progress = {"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": "p", "progress": 1}}
    (event,) = parser.feed(_sse(progress))
    assert isinstance(event, mcpwire.Progress) and state(parser) is RequestState.RECEIVING
    result = {"jsonrpc": "2.0", "id": request.id, "result": {"content": [{"type": "text", "text": "ok"}]}}
    (final,) = parser.feed(_sse(result))
    assert isinstance(final, mcpwire.ResultReceived) and state(parser) is RequestState.COMPLETE


def test_http_error_response_fails_the_request() -> None:
    client = _client()
    request = client.call_tool("echo", {})
    parser = mcpwire.HttpResponseParser(client, request, status=400, content_type="application/json")
    error = {"jsonrpc": "2.0", "id": request.id, "error": {"code": -32602, "message": "bad"}}
    parser.feed(json.dumps(error).encode())
    (event,) = parser.close()
    assert isinstance(event, mcpwire.ErrorResult) and state(parser) is RequestState.FAILED


def test_stdio_late_answer_to_a_cancelled_request_is_dropped() -> None:
    client = _client()
    connection = mcpwire.ClientStdioConnection(client)
    request = client.call_tool("echo", {})
    connection.send(request)
    assert connection.state_of(request) is RequestState.AWAITING
    line = connection.cancel(request, "user")
    assert json.loads(line)["method"] == "notifications/cancelled"
    assert connection.state_of(request) is RequestState.CANCELLED and connection.in_flight == 0
    late: dict[str, Any] = {"jsonrpc": "2.0", "id": request.id, "result": {"content": []}}
    assert connection.receive_data(json.dumps(late).encode() + b"\n") == []
    # An answer to an id never sent is still the peer's mistake.
    stray = {"jsonrpc": "2.0", "id": 999, "result": {"content": []}}
    (event,) = connection.receive_data(json.dumps(stray).encode() + b"\n")
    assert isinstance(event, mcpwire.ErrorResult) and event.request_id is None


def test_stdio_eof_fails_what_is_in_flight() -> None:
    client = _client()
    connection = mcpwire.ClientStdioConnection(client)
    request = client.call_tool("echo", {})
    connection.send(request)
    (event,) = connection.receive_eof()
    assert isinstance(event, mcpwire.ErrorResult) and event.code == mcpwire.ErrorCode.TRANSPORT_ERROR
    assert connection.state_of(request) is RequestState.FAILED
