"""The stdio transport through ``StdioConnection`` (wire reference sections 1, 9, 14).

Bytes go in through ``receive_data`` (whole, byte by byte, in odd chunks) and
``receive_eof``; out come NDJSON bytes, exchanges and streams whose output is NDJSON too.
Every line written is checked against the schema.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from schema_check import NOW, check_error, ev, lines_of, make_server, meta, request

import mcpwire
import mcpwire.sessions
from mcpwire import Cancelled, ExchangeState, StdioConnection, StdioExchange, StdioListenStream
from mcpwire.types import Tool

OBJ = {"type": "object"}
SERVER = make_server(list_changed=True)
SERVER.add_tool(Tool(name="work", description="Work", input_schema=OBJ))


def line(obj: Any) -> bytes:
    return (obj if isinstance(obj, bytes) else json.dumps(obj).encode()) + b"\n"


def one(conn: StdioConnection, obj: Any) -> Any:
    out = conn.receive_data(line(obj), now=NOW)
    assert len(out) == 1, out
    return out[0]


def answer(conn: StdioConnection, obj: Any) -> Any:
    """The single message written for one input line."""
    out = one(conn, obj)
    assert isinstance(out, bytes), out
    (message,) = lines_of(out, obj.get("method") if isinstance(obj, dict) else None)
    return message


def tool(rid: Any, **meta_extra: Any) -> dict[str, Any]:
    return request("tools/call", {"name": "work", "_meta": meta(**meta_extra)}, id=rid)


def cancel(rid: Any, reason: Any = None) -> dict[str, Any]:
    params: dict[str, Any] = {"requestId": rid}
    if reason is not None:
        params["reason"] = reason
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}


# --- framing: chunking never changes the outputs -------------------------------------------------------

STREAM = b"".join([
    line(request("server/discover", {}, id=1)),
    b"\r\n",                                                    # blank line: skipped
    line(b"{oops"),                                             # -32700
    line({"jsonrpc": "2.0", "method": "notifications/x"}),      # never answered
    b'{"jsonrpc":"2.0","id":5,"result":{}}\r\n',                # posted response: ignored, CRLF
    line(request("tools/list", {}, id="two")),
    line(tool(3)),                                              # an exchange
    line({"jsonrpc": "2.0", "id": 4, "method": 7}),             # -32600 with id
    line(request("ping", {}, id=6)),                            # -32601
    json.dumps(request("tools/list", {}, id=7)).encode(),       # last line without newline
])


def summarize(outputs: list[Any]) -> list[Any]:
    out: list[Any] = []
    for item in outputs:
        if isinstance(item, bytes):
            out.append(lines_of(item))
        elif isinstance(item, StdioExchange):
            out.append(("exchange", item.request_id, ev(item).name))
        else:
            out.append(item)
    return out


def feed(chunks: list[bytes]) -> list[Any]:
    conn = StdioConnection(SERVER)
    outputs: list[Any] = []
    for chunk in chunks:
        outputs += conn.receive_data(chunk, now=NOW)
    return summarize(outputs + conn.receive_eof(now=NOW))


def test_byte_by_byte_equals_whole_equals_odd_chunks() -> None:
    whole = feed([STREAM])
    assert feed([STREAM[i:i + 1] for i in range(len(STREAM))]) == whole
    assert feed([STREAM[i:i + 7] for i in range(0, len(STREAM), 7)]) == whole
    ids = [m[0]["id"] if isinstance(m, list) else m[1] for m in whole]
    assert ids == [1, None, "two", 3, 4, 6, 7]
    assert whole[1][0]["error"]["code"] == -32700 and whole[4][0]["error"]["code"] == -32600
    assert whole[5][0]["error"]["code"] == -32601


WHOLE = feed([STREAM])


@settings(derandomize=True, max_examples=60, deadline=None)
@given(cuts=st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_any_chunking_gives_the_same_outputs(cuts: list[int]) -> None:
    points = [0, *sorted(cuts), len(STREAM)]
    assert feed([STREAM[a:b] for a, b in itertools.pairwise(points)]) == WHOLE


def test_each_answer_is_one_line() -> None:
    conn = StdioConnection(SERVER)
    out = one(conn, request("server/discover", {}, id=1))
    assert out.endswith(b"\n") and out.count(b"\n") == 1


# --- bad lines --------------------------------------------------------------------------------------------


def test_oversize_line_is_32600_with_null_id_and_framing_survives() -> None:
    conn = StdioConnection(SERVER, max_line_bytes=200)
    big = line(request("server/discover", {"pad": "x" * 500}, id=1))
    outputs = conn.receive_data(big + line(request("server/discover", {}, id=2)), now=NOW)
    assert len(outputs) == 2
    (error,) = lines_of(outputs[0])
    check_error(error, -32600, None)
    (ok,) = lines_of(outputs[1], "server/discover")
    assert ok["id"] == 2


def test_oversize_line_arriving_in_chunks() -> None:
    conn = StdioConnection(SERVER, max_line_bytes=300)
    outputs: list[Any] = []
    for _ in range(40):
        outputs += conn.receive_data(b"x" * 20, now=NOW)
    outputs += conn.receive_data(b"\n" + line(request("server/discover", {}, id=3)), now=NOW)
    assert len(outputs) == 2
    check_error(lines_of(outputs[0])[0], -32600, None)
    assert lines_of(outputs[1])[0]["id"] == 3


@pytest.mark.parametrize("raw", [b"{", b"not json", b"\xff", b'{"a":1}}', b"\x00"])
def test_parse_error_is_32700_with_null_id(raw: bytes) -> None:
    check_error(answer(StdioConnection(SERVER), raw), -32700, None)


@pytest.mark.parametrize(
    ("obj", "code", "rid"),
    [
        ([], -32600, None), ({"jsonrpc": "2.0", "id": True, "method": "x"}, -32600, None),
        ({"jsonrpc": "1.0", "id": 8, "method": "x"}, -32600, 8),
        ({"jsonrpc": "2.0", "id": "s", "method": "server/discover", "params": []}, -32602, "s"),
        (request("initialize", {}, id=9), -32601, 9), (request("tools/call", {"name": "nope"}, id=10), -32602, 10),
    ],
    ids=range(6),
)
def test_envelope_and_method_errors_keep_the_readable_id(obj: Any, code: int, rid: Any) -> None:
    check_error(answer(StdioConnection(SERVER), obj), code, rid)


def test_version_comes_from_meta_only() -> None:
    conn = StdioConnection(SERVER)
    message = answer(conn, request("server/discover", {"_meta": meta(version="v9")}, id=1))
    check_error(message, -32022, 1, data={"requested": "v9", "supported": ["2026-07-28"]})
    check_error(answer(conn, request("server/discover", {"_meta": {}}, id=2)), -32602, 2)


# --- never answered ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "obj",
    [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": [1]},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 404}},
        {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "work"}},
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "x"}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
    ],
    ids=range(8),
)
def test_notifications_and_responses_are_never_answered(obj: Any) -> None:
    assert StdioConnection(SERVER).receive_data(line(obj), now=NOW) == []


# --- exchanges on stdio ---------------------------------------------------------------------------------------


def test_notifications_are_lines_before_the_response() -> None:
    conn = StdioConnection(SERVER)
    ex = one(conn, tool(1, token="t", level="info"))
    assert isinstance(ex, StdioExchange) and conn.in_flight == 1
    out = ex.progress(1) + ex.log("debug", "dropped") + ex.log("info", "kept") + ex.progress(2) + ex.complete("ok")
    messages = lines_of(out, "tools/call")
    assert [m.get("method") for m in messages] == [
        "notifications/progress", "notifications/message", "notifications/progress", None]
    assert messages[-1]["id"] == 1 and conn.in_flight == 0


def test_error_answer_on_stdio() -> None:
    ex = one(StdioConnection(SERVER), tool("e"))
    check_error(lines_of(ex.fail(mcpwire.resource_not_found("x:y")))[0], -32602, "e", data={"uri": "x:y"})


# --- cancellation (9) ----------------------------------------------------------------------------------------


def test_cancellation_stops_the_request_without_a_late_response() -> None:
    conn = StdioConnection(SERVER)
    ex = one(conn, tool(7, token="t"))
    event = one(conn, cancel(7, "User cancelled"))
    assert event == Cancelled(request_id=7, reason="User cancelled")
    assert ex.state is ExchangeState.CANCELLED and conn.in_flight == 0
    assert ex.progress(1) == b"" and ex.complete("late") == b"" and ex.fail(RuntimeError()) == b""


def test_cancellation_matches_id_type() -> None:
    conn = StdioConnection(SERVER)
    ex = one(conn, tool(1))
    assert conn.receive_data(line(cancel("1")), now=NOW) == []
    assert ex.state is ExchangeState.OPEN
    assert one(conn, cancel(1)) == Cancelled(request_id=1)


@pytest.mark.parametrize("params", [{"requestId": True}, {"requestId": 1.5}, {"requestId": 1, "reason": 5},
                                    {"reason": "x"}, {"requestId": None}], ids=json.dumps)
def test_invalid_cancellations_are_ignored(params: Any) -> None:
    conn = StdioConnection(SERVER)
    ex = one(conn, tool(1))
    assert conn.receive_data(line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}),
                             now=NOW) == []
    assert ex.state is ExchangeState.OPEN and conn.in_flight == 1


def test_cancellation_that_is_not_utf8_is_a_parse_error_and_cancels_nothing() -> None:
    # Invalid UTF-8 makes the whole line unreadable JSON text: -32700 with id null (section 14);
    # nothing can be known about it, so it cancels nothing.
    conn = StdioConnection(SERVER)
    ex = one(conn, tool(1))
    raw = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"\xff"}}'
    [line] = conn.receive_data(raw + b"\n", now=NOW)
    assert isinstance(line, bytes) and b'"code":-32700' in line and b'"id":null' in line
    assert ex.state is ExchangeState.OPEN


def test_cancellation_with_unusable_params_is_ignored() -> None:
    conn = StdioConnection(SERVER)
    ex = one(conn, tool(1))
    raw = b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[1],"reason":7}}'
    assert conn.receive_data(raw + b"\n", now=NOW) == []
    assert ex.state is ExchangeState.OPEN


def test_listen_stream_occupies_its_id() -> None:
    conn = StdioConnection(SERVER)
    stream = one(conn, request("subscriptions/listen", {"notifications": {}}, id="L2"))
    check_error(answer(conn, tool("L2")), -32600, "L2")
    stream.cancel()
    assert isinstance(one(conn, tool("L2")), StdioExchange)


def test_cancelling_a_finished_request_does_nothing() -> None:
    conn = StdioConnection(SERVER)
    ex = one(conn, tool(1))
    ex.complete("done")
    assert conn.receive_data(line(cancel(1)), now=NOW) == []
    assert ex.state is ExchangeState.DONE


# --- in-flight ids and bounds -----------------------------------------------------------------------------------


def test_duplicate_in_flight_id_is_32600_with_the_id() -> None:
    conn = StdioConnection(SERVER)
    ex = one(conn, tool("dup"))
    check_error(answer(conn, tool("dup")), -32600, "dup")
    assert isinstance(one(conn, tool(2)), StdioExchange)  # other ids are fine
    ex.complete("done")
    assert isinstance(one(conn, tool("dup")), StdioExchange)  # free again once answered


def test_engine_answered_requests_do_not_occupy_their_id() -> None:
    conn = StdioConnection(SERVER)
    for _ in range(3):
        assert answer(conn, request("server/discover", {}, id=1))["id"] == 1


def test_max_in_flight() -> None:
    conn = StdioConnection(SERVER, max_in_flight=2)
    first = one(conn, tool(1))
    one(conn, tool(2))
    check_error(answer(conn, tool(3)), -32603, 3)
    assert conn.in_flight == 2
    first.cancel()
    assert isinstance(one(conn, tool(4)), StdioExchange)
    assert isinstance(answer(conn, request("server/discover", {}, id=5)), dict)  # answered at once: not bounded


# --- listen on stdio -------------------------------------------------------------------------------------------


def test_listen_stream_on_stdio() -> None:
    conn = StdioConnection(SERVER)
    stream = one(conn, request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id="L"))
    assert isinstance(stream, StdioListenStream)
    (ack,) = lines_of(stream.start())
    assert ack["params"] == {"notifications": {"toolsListChanged": True},
                             "_meta": {"io.modelcontextprotocol/subscriptionId": "L"}}
    ((target, out),) = SERVER.list_changed("tools")
    assert target is stream and lines_of(out)[0]["method"] == "notifications/tools/list_changed"
    assert one(conn, cancel("L")) == Cancelled(request_id="L")
    assert SERVER.list_changed("tools") == [] and SERVER.open_listeners == 0


# --- known engine bugs --------------------------------------------------------------------------------------------


def test_invalid_utf8_inside_params_is_answered() -> None:
    conn = StdioConnection(SERVER)
    raw = b'{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"x":"\xff"}}}'
    message = answer(conn, raw)
    assert message["error"] == {"code": -32700, "message": "Parse error: invalid UTF-8"} and message["id"] is None


def test_deeply_nested_line_is_answered() -> None:
    conn = StdioConnection(SERVER)
    raw = b'{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"x":' + b"[" * 5000 + b"]" * 5000 + b"}}"
    message = answer(conn, raw)
    assert message["error"] == {"code": -32700, "message": "Parse error: JSON nested too deeply"}
    assert message["id"] is None


# -- initialize era on stdio ------------------------------------------------------------------------

INIT: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}


def era_answer(conn: StdioConnection, obj: Any) -> Any:
    """One initialize-era line answered (checked by the initialize-era suites, not the 2026 schema)."""
    out = one(conn, obj)
    assert isinstance(out, bytes) and out.endswith(b"\n") and out.count(b"\n") == 1, out
    return json.loads(out)


def test_a_server_of_the_initialize_era_only_answers_the_probe_then_initialize() -> None:
    server = make_server(list_changed=True, supported_versions=("2025-11-25", "2025-06-18"))
    conn = StdioConnection(server)
    refused = answer(conn, request("server/discover", {"_meta": meta()}, id=0))
    assert refused["error"]["code"] == -32022
    assert refused["error"]["data"]["supported"] == ["2025-11-25", "2025-06-18"]
    opened = era_answer(conn, INIT)
    assert opened["result"]["protocolVersion"] == "2025-11-25" and conn.session is not None


def test_requests_before_initialize_on_a_server_of_the_initialize_era_only() -> None:
    server = make_server(supported_versions=("2025-11-25", "2025-03-26"))
    conn = StdioConnection(server)
    early = era_answer(conn, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert early["error"] == {"code": -32600, "message": "Server not initialized: send initialize first"}
    # ping is the one request a client may send first (Basic > Lifecycle).
    assert era_answer(conn, {"jsonrpc": "2.0", "id": 2, "method": "ping"}) == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert conn.session is None and conn.in_flight == 0
    opened = era_answer(conn, {**INIT, "id": 3})
    assert opened["result"]["protocolVersion"] == "2025-11-25" and conn.session is not None
    assert "result" in era_answer(conn, {"jsonrpc": "2.0", "id": 4, "method": "tools/list"})


def test_a_ping_before_initialize_decides_nothing_on_a_dual_server() -> None:
    conn = StdioConnection(make_server())
    assert era_answer(conn, {"jsonrpc": "2.0", "id": 1, "method": "ping"}) == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert "result" in era_answer(conn, {**INIT, "id": 2}) and conn.session is not None
    modern = StdioConnection(make_server(supported_versions=("2026-07-28",)))
    assert answer(modern, request("ping", {"_meta": meta()}, id=1))["error"]["code"] == -32601
    assert era_answer(modern, {"jsonrpc": "2.0", "id": 2, "method": "ping"})["error"]["code"] == -32601


def test_a_dual_server_decides_stateless_on_the_first_modern_request() -> None:
    conn = StdioConnection(make_server())
    assert "result" in answer(conn, request("server/discover", {"_meta": meta()}, id=0))
    assert answer(conn, INIT)["error"]["code"] == -32601 and conn.session is None


def test_initialized_opens_the_session_stream_once() -> None:
    server = make_server(list_changed=True, supported_versions=("2025-11-25",))
    conn = StdioConnection(server)
    era_answer(conn, INIT)
    stream = one(conn, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert isinstance(stream, mcpwire.sessions.StdioSessionStream) and stream.start() == b""
    assert conn.receive_data(line({"jsonrpc": "2.0", "method": "notifications/initialized"}), now=NOW) == []
    ((target, out),) = server.list_changed("tools")
    assert target is stream
    assert json.loads(out) == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    assert stream.close() == b"" and server.list_changed("tools") == []
    assert conn.session is not None and conn.session.stream is None


def test_a_2025_03_26_connection_takes_batches_and_answers_each_on_its_line() -> None:
    server = make_server(list_changed=True, supported_versions=("2025-03-26",))
    server.add_tool(Tool(name="work", description="Work", input_schema=OBJ))
    conn = StdioConnection(server)
    era_answer(conn, {**INIT, "params": {**INIT["params"], "protocolVersion": "2025-03-26"}})
    one(conn, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    messages = [{"jsonrpc": "2.0", "id": 2, "method": "ping"}, {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
                {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "work", "arguments": {}}},
                {"jsonrpc": "2.0", "id": 4, "method": "nope"}, []]
    out = conn.receive_data(line(messages), now=NOW)
    assert len(out) == 4  # ping, the call's exchange, the unknown method's error, the nested array's error
    ping, call, unknown, nested = out
    assert isinstance(ping, bytes) and json.loads(ping) == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert isinstance(call, StdioExchange) and call.request_id == 3
    assert isinstance(unknown, bytes) and json.loads(unknown)["error"]["code"] == -32601
    assert isinstance(nested, bytes) and json.loads(nested)["error"]["code"] == -32600
    (empty,) = conn.receive_data(line([]), now=NOW)
    assert isinstance(empty, bytes) and json.loads(empty)["error"] == {"code": -32600, "message": "Invalid Request: empty batch"}


def test_batches_are_refused_on_later_revisions() -> None:
    conn = StdioConnection(make_server(list_changed=True, supported_versions=("2025-11-25",)))
    era_answer(conn, INIT)
    (refused,) = conn.receive_data(line([{"jsonrpc": "2.0", "id": 2, "method": "ping"}]), now=NOW)
    assert isinstance(refused, bytes) and json.loads(refused)["error"]["code"] == -32600
