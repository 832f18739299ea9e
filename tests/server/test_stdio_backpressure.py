"""Back-pressure on the stdio connection: ``StdioConnection(max_held=...)``, ``reading``,
``release``, ``waiting`` (the module docstring of ``mcpwire/server/stdio.py`` states the rule).

Requests past ``max_in_flight`` are held, not refused, and admitted first in, first out as
requests end; past ``max_held`` the connection pauses (the rest of the data stays unread)
while a handler can still end on its own, and reads on (refusing past the bound) when every
request in flight waits for the client: the answers must get through.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from schema_check import NOW, make_server, meta, request

import mcpwire
from mcpwire import InputArrived, StdioConnection, StdioExchange, StdioListenStream
from mcpwire.types import Tool

OBJ = {"type": "object"}
SERVER = make_server(list_changed=True)
SERVER.add_tool(Tool(name="work", description="Work", input_schema=OBJ))
ERA = make_server(list_changed=True, supported_versions=("2025-11-25",))
ERA.add_tool(Tool(name="work", description="Work", input_schema=OBJ))
INIT: dict[str, Any] = {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "c", "version": "1"}}}
ASK = {"n": {"method": "elicitation/create", "params": {"message": "Name?", "requestedSchema": {
    "type": "object", "properties": {"name": {"type": "string"}}}}}}


def line(obj: Any) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def call(rid: Any) -> bytes:
    return line(request("tools/call", {"name": "work", "_meta": meta()}, id=rid))


def era_call(rid: Any) -> bytes:
    return line({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": "work", "arguments": {}}})


def cancel(rid: Any) -> bytes:
    return line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}})


def exchanges(out: list[Any]) -> list[StdioExchange]:
    assert all(isinstance(o, StdioExchange) for o in out), out
    return out


def error_code(out: Any) -> int:
    assert isinstance(out, bytes), out
    return int(json.loads(out)["error"]["code"])


def test_requests_past_the_bound_are_held_then_admitted_in_order() -> None:
    conn = StdioConnection(SERVER, max_in_flight=2, max_held=3)
    running = exchanges(conn.receive_data(b"".join(call(i) for i in range(5)), now=NOW))
    assert [e.request_id for e in running] == [0, 1]
    assert conn.in_flight == 2 and conn.waiting == 3 and not conn.reading  # paused: 0 and 1 can end alone
    assert conn.release(now=NOW) == []  # nothing ended yet
    running[1].complete("done")
    (next_one,) = exchanges(conn.release(now=NOW))
    assert next_one.request_id == 2 and conn.waiting == 2 and conn.reading
    running[0].complete("done")
    next_one.complete("done")
    assert [e.request_id for e in exchanges(conn.release(now=NOW))] == [3, 4]
    assert conn.waiting == 0 and conn.reading and conn.release(now=NOW) == []


def test_a_paused_connection_leaves_the_rest_of_the_data_unread() -> None:
    conn = StdioConnection(SERVER, max_in_flight=1, max_held=1)
    data = b"".join(call(i) for i in range(100))  # one read's worth: 100 requests
    (first,) = exchanges(conn.receive_data(data, now=NOW))
    assert not conn.reading and conn.waiting == 99  # 1 held, 98 lines not even parsed
    ids = []
    for _ in range(99):
        assert not conn.reading  # the host reads no more stdin meanwhile
        first.complete("done")
        (first,) = exchanges(conn.release(now=NOW))
        ids.append(first.request_id)
    assert ids == list(range(1, 100))  # none refused, none lost, in order
    first.complete("done")
    assert conn.release(now=NOW) == [] and conn.reading and conn.waiting == 0


def test_without_max_held_past_the_bound_is_refused_as_before() -> None:
    conn = StdioConnection(SERVER, max_in_flight=1)
    out = conn.receive_data(call(1) + call(2), now=NOW)
    assert isinstance(out[0], StdioExchange) and error_code(out[1]) == -32603
    assert conn.reading and conn.waiting == 0


def test_a_host_that_feeds_while_paused_gets_refusals_not_an_unbounded_backlog() -> None:
    conn = StdioConnection(SERVER, max_in_flight=1, max_held=1)
    conn.receive_data(call(1) + call(2) + call(3), now=NOW)
    assert not conn.reading and conn.waiting == 2
    out = conn.receive_data(call(4) + cancel(99), now=NOW)  # ignored the pause: all of it is handled now
    assert [error_code(o) for o in out] == [-32603, -32603] and conn.waiting == 1


def test_a_cancelled_held_request_is_dropped_unanswered() -> None:
    conn = StdioConnection(SERVER, max_in_flight=1, max_held=2)
    (first,) = exchanges(conn.receive_data(call(1) + call(2) + call(3), now=NOW))
    assert conn.waiting == 2 and not conn.reading
    conn.receive_data(cancel(2), now=NOW)  # fed while paused: read whole
    first.complete("done")
    assert [e.request_id for e in exchanges(conn.release(now=NOW))] == [3]


def test_cancelling_a_request_in_flight_admits_a_held_one() -> None:
    conn = StdioConnection(SERVER, max_in_flight=1, max_held=2)
    exchanges(conn.receive_data(call(1) + call(2), now=NOW))
    cancelled, admitted = conn.receive_data(cancel(1), now=NOW)
    assert cancelled == mcpwire.Cancelled(request_id=1)
    assert isinstance(admitted, StdioExchange) and admitted.request_id == 2


def test_a_held_duplicate_of_an_id_in_flight_is_refused_at_once() -> None:
    conn = StdioConnection(SERVER, max_in_flight=1, max_held=2)
    (out,) = conn.receive_data(call(1), now=NOW)
    (dup,) = conn.receive_data(call(1), now=NOW)
    assert error_code(dup) == -32600 and conn.waiting == 0


def _era_connection(max_in_flight: int, max_held: int) -> StdioConnection:
    conn = StdioConnection(ERA, max_in_flight=max_in_flight, max_held=max_held)
    (opened,) = conn.receive_data(line(INIT), now=NOW)
    assert isinstance(opened, bytes) and "result" in json.loads(opened)
    conn.receive_data(line({"jsonrpc": "2.0", "method": "notifications/initialized"}), now=NOW)
    return conn


def _ask(exchange: StdioExchange) -> Any:
    """The exchange sends its elicitation request; returns the client's answer line for it."""
    out = exchange.input_required(ASK, now=NOW)
    assert isinstance(out, bytes) and exchange.state is mcpwire.ExchangeState.AWAITING
    asked = json.loads(out)
    return line({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"name": "Ada"}}})


def test_answers_are_read_while_every_request_in_flight_waits_for_the_client() -> None:
    conn = _era_connection(max_in_flight=2, max_held=1)
    first, second = exchanges(conn.receive_data(era_call(1) + era_call(2), now=NOW))
    answer_1 = _ask(first)
    answer_2 = _ask(second)
    assert conn.in_flight == 2  # awaiting the client is still in flight
    # One more request (held) then the answers: had the connection paused, the answers would
    # stay unread behind the request while the handlers waited for them: a deadlock.
    out = conn.receive_data(era_call(3) + answer_1 + answer_2, now=NOW)
    assert [type(o) for o in out] == [InputArrived, InputArrived] and conn.waiting == 1
    assert conn.reading  # nothing in flight can end without the client yet
    for exchange in (first, second):
        exchange.resume(now=NOW)
        exchange.complete("Hello, Ada")
    (third,) = exchanges(conn.release(now=NOW))
    assert third.request_id == 3 and conn.waiting == 0


def test_requests_past_the_held_ones_are_refused_while_every_request_waits_for_the_client() -> None:
    conn = _era_connection(max_in_flight=1, max_held=1)
    (first,) = exchanges(conn.receive_data(era_call(1), now=NOW))
    _ask(first)
    out = conn.receive_data(era_call(2) + era_call(3) + era_call(4), now=NOW)
    assert [error_code(o) for o in out] == [-32603, -32603] and conn.waiting == 1  # bounded, not paused


def test_an_exchange_that_starts_waiting_for_the_client_lifts_the_pause() -> None:
    conn = _era_connection(max_in_flight=1, max_held=1)
    (first,) = exchanges(conn.receive_data(era_call(1) + era_call(2) + era_call(3), now=NOW))
    assert not conn.reading and conn.waiting == 2  # 2 held, 3 unread
    answer = _ask(first)  # the host calls release() when an exchange asks the client
    assert conn.reading
    assert [error_code(o) for o in conn.release(now=NOW)] == [-32603]  # 3: past the held one
    (arrived,) = conn.receive_data(answer, now=NOW)
    assert isinstance(arrived, InputArrived) and arrived.ready


def test_a_request_awaiting_the_client_can_be_cancelled_and_its_id_is_taken() -> None:
    conn = _era_connection(max_in_flight=4, max_held=0)
    (first,) = exchanges(conn.receive_data(era_call(1), now=NOW))
    _ask(first)
    (dup,) = conn.receive_data(era_call(1), now=NOW)
    assert error_code(dup) == -32600
    assert conn.receive_data(cancel(1), now=NOW) == [mcpwire.Cancelled(request_id=1)]
    assert first.state is mcpwire.ExchangeState.CANCELLED and conn.in_flight == 0


def test_listen_streams_cannot_end_alone_so_reading_goes_on() -> None:
    conn = StdioConnection(SERVER, max_in_flight=1, max_held=1)
    listen = line(request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id="L"))
    (stream,) = conn.receive_data(listen, now=NOW)
    assert isinstance(stream, StdioListenStream)
    stream.start()
    out = conn.receive_data(call(1) + call(2) + cancel("L"), now=NOW)
    assert error_code(out[0]) == -32603 and out[1] == mcpwire.Cancelled(request_id="L")
    assert isinstance(out[2], StdioExchange) and out[2].request_id == 1  # admitted once L ended


def test_a_batch_is_read_whole_and_may_be_held_past_max_held() -> None:
    server = make_server(supported_versions=("2025-03-26",))
    server.add_tool(Tool(name="work", description="Work", input_schema=OBJ))
    conn = StdioConnection(server, max_in_flight=1, max_held=1)
    init = {**INIT, "params": {**INIT["params"], "protocolVersion": "2025-03-26"}}
    conn.receive_data(line(init) + line({"jsonrpc": "2.0", "method": "notifications/initialized"}), now=NOW)
    batch = [json.loads(era_call(i)) for i in range(4)]
    (first,) = exchanges(conn.receive_data(line(batch), now=NOW))
    assert conn.waiting == 3 and not conn.reading
    for rid in (1, 2, 3):
        first.complete("done")
        (first,) = exchanges(conn.release(now=NOW))
        assert first.request_id == rid


@pytest.mark.parametrize("kwargs", [{"max_in_flight": 0}, {"max_held": -1}])
def test_bad_bounds_are_refused(kwargs: dict[str, int]) -> None:
    with pytest.raises(mcpwire.LocalProtocolError):
        StdioConnection(SERVER, **kwargs)


def test_eof_leaves_held_requests_to_release() -> None:
    conn = StdioConnection(SERVER, max_in_flight=1, max_held=4)
    (first,) = exchanges(conn.receive_data(call(1) + call(2)[:-1], now=NOW))
    assert exchanges(conn.receive_eof(now=NOW)) == [] and conn.waiting == 1
    first.complete("done")
    assert [e.request_id for e in exchanges(conn.release(now=NOW))] == [2]
