"""Streaming output of the HTTP server engine: progress and log notifications, the JSON to
SSE switch, errors after SSE started, cancellation (wire reference sections 8, 9, 13.3), and
subscriptions/listen streams (section 11).

Output events of one exchange are collected in order and joined by ``schema_check.assemble``,
which checks the event sequence (one head first, nothing after the end) and every message.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from schema_check import (
    SUBSCRIPTION_ID_META_KEY,
    assemble,
    check_message,
    error_of,
    exchange,
    listen,
    make_server,
    meta,
    parse_sse,
    post,
    reply_of,
    request,
)

import mcpwire
from mcpwire.types import CallToolResult, Resource, TextContent, Tool
from mcpwire import ExchangeState, ListenState

OBJ = {"type": "object"}


def stream_server(**kw: Any) -> mcpwire.Server:
    kw.setdefault("list_changed", True)
    server = make_server(**kw)
    server.add_tool(Tool(name="work", description="Reports progress", input_schema=OBJ))
    server.add_tool(Tool(name="typed", description="Has outputSchema", input_schema=OBJ,
                         output_schema={"type": "object", "required": ["n"]}))
    server.add_resource(Resource(uri="test://r", name="r"))
    return server


SERVER = stream_server()


def work(rid: Any = 1, **meta_extra: Any) -> mcpwire.HttpExchange:
    return exchange(SERVER, request("tools/call", {"name": "work", "_meta": meta(**meta_extra)}, id=rid))


def notifications(events: list[Any]) -> list[Any]:
    return [m for m in parse_sse(b"".join(e.data for e in events if isinstance(e, mcpwire.ResponseBody)))]


# --- progress (8.2) ------------------------------------------------------------------------------------


def test_no_progress_token_means_no_progress_and_plain_json() -> None:
    ex = work()
    assert ex.progress(1) == [] and ex.progress(2, total=3, message="m") == []
    reply = assemble(ex.complete("done"), "tools/call")
    assert not reply.sse and reply.headers[b"content-type"] == b"application/json"


@pytest.mark.parametrize("token", ["progress-test-1", 0, -7])
def test_progress_switches_the_response_to_sse(token: Any) -> None:
    ex = work(token=token)
    out = ex.progress(0, total=100, message="Starting computation")
    assert isinstance(out[0], mcpwire.ResponseHead) and len(out) == 2
    assert isinstance(out[1], mcpwire.ResponseBody) and out[1].more is True
    assert dict(out[0].headers)[b"x-accel-buffering"] == b"no"
    out += ex.progress(50, total=100, message="First half complete")
    out += ex.progress(100.0)
    assert ex.state.name == "STREAMING"
    out += ex.complete("Progress computation completed: 5050")
    reply = assemble(out, "tools/call")
    assert reply.sse and reply.status == 200
    progress = reply.messages[:-1]
    assert [m["params"] for m in progress] == [
        {"progressToken": token, "progress": 0, "total": 100, "message": "Starting computation"},
        {"progressToken": token, "progress": 50, "total": 100, "message": "First half complete"},
        {"progressToken": token, "progress": 100.0},
    ]
    assert all("id" not in m for m in progress)
    assert reply.message["id"] == 1 and ex.state.name == "DONE"


@pytest.mark.parametrize("values", [(1, 1), (5, 2), (0.5, 0.25)])
def test_progress_must_strictly_increase(values: tuple[float, float]) -> None:
    ex = work(token="t")
    ex.progress(values[0])
    with pytest.raises(mcpwire.LocalProtocolError):
        ex.progress(values[1])
    ex.cancel()


def test_progress_message_bound() -> None:
    ex = work(token="t")
    ex.progress(1, message="x" * 4096)
    with pytest.raises(mcpwire.LocalProtocolError):
        ex.progress(2, message="x" * 4097)
    ex.cancel()


def test_progress_updates_past_1000_are_dropped() -> None:
    ex = work(token="t")
    out = []
    for i in range(1001):
        out += ex.progress(i)
    assert ex.progress(5000) == []
    out += ex.complete("ok")
    reply = assemble(out, "tools/call")
    assert len(reply.messages) == 1001


@pytest.mark.parametrize("kwargs", [{"progress": math.nan}, {"progress": 1, "total": math.inf},
                                    {"progress": -math.inf}], ids=["nan", "total-inf", "-inf"])
def test_non_finite_progress_is_a_host_error(kwargs: dict[str, Any]) -> None:
    ex = work(token="t")
    with pytest.raises(mcpwire.LocalProtocolError):
        ex.progress(**kwargs)
    ex.cancel()


# --- logging (8.1) -------------------------------------------------------------------------------------


def test_no_log_level_means_no_log_messages() -> None:
    # Runner sep-2575-server-no-log-without-loglevel.
    ex = work()
    for level in mcpwire.LOG_LEVELS:
        assert ex.log(level, f"{level} message", logger="conformance") == []
    assert not assemble(ex.complete("Logged at every level"), "tools/call").sse


def test_log_level_gates_by_severity() -> None:
    ex = work(level="warning")
    out: list[Any] = []
    for level in mcpwire.LOG_LEVELS:
        out += ex.log(level, {"msg": level}, logger="conformance")
    out += ex.complete("ok")
    reply = assemble(out, "tools/call")
    logs = reply.messages[:-1]
    assert [m["params"]["level"] for m in logs] == ["warning", "error", "critical", "alert", "emergency"]
    assert logs[0]["params"] == {"level": "warning", "data": {"msg": "warning"}, "logger": "conformance"}


def test_log_without_logger_and_unknown_level() -> None:
    ex = work(level="debug")
    out = ex.log("debug", "d")
    assert notifications(out)[0]["params"] == {"level": "debug", "data": "d"}
    with pytest.raises(mcpwire.LocalProtocolError):
        ex.log("verbose", "x")
    ex.cancel()


def test_progress_and_log_interleave_in_order_before_the_result() -> None:
    ex = work(token="t", level="info")
    out = ex.log("info", "a") + ex.progress(1) + ex.log("error", "b") + ex.progress(2) + ex.complete("done")
    reply = assemble(out, "tools/call")
    assert [m.get("method") for m in reply.messages] == [
        "notifications/message", "notifications/progress", "notifications/message", "notifications/progress", None]
    assert sum(isinstance(e, mcpwire.ResponseHead) for e in out) == 1


def test_nothing_after_the_final_response() -> None:
    ex = work(token="t", level="debug")
    ex.progress(1)
    ex.complete("done")
    with pytest.raises(mcpwire.LocalProtocolError):
        ex.progress(2)
    with pytest.raises(mcpwire.LocalProtocolError):
        ex.log("error", "late")
    with pytest.raises(mcpwire.LocalProtocolError):
        ex.fail(RuntimeError())


# --- errors after SSE started (8.3) ---------------------------------------------------------------------


def test_error_after_sse_start_is_an_event_not_a_status() -> None:
    ex = exchange(SERVER, request("resources/read", {"uri": "test://gone", "_meta": meta(token=1)}, id="rd"))
    out = ex.progress(1)
    out += ex.fail(mcpwire.resource_not_found("test://gone"))
    assert len(out) == 3 and isinstance(out[-1], mcpwire.ResponseBody) and out[-1].more is False
    reply = assemble(out, "resources/read")
    assert reply.status == 200 and reply.sse
    error_of(reply, -32602, "rd", status=200, data={"uri": "test://gone"})


def test_error_before_any_notification_keeps_its_status() -> None:
    ex = exchange(SERVER, request("resources/read", {"uri": "test://gone", "_meta": meta(token=1)}, id="rd"))
    reply = assemble(ex.fail(mcpwire.resource_not_found("test://gone")), "resources/read")
    assert not reply.sse
    error_of(reply, -32602, "rd")


def test_missing_capability_after_sse_start_is_an_event() -> None:
    ex = work(rid="mc", token="t")
    out = ex.progress(1) + ex.input_required({"s": {"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "x"}}], "maxTokens": 5}}})
    reply = assemble(out, "tools/call")
    error_of(reply, -32021, "mc", status=200, data={"requiredCapabilities": {"sampling": {}}})


def test_output_schema_failure_after_sse_start_is_an_event() -> None:
    ex = exchange(SERVER, request("tools/call", {"name": "typed", "_meta": meta(level="info")}, id="os"))
    out = ex.log("info", "x") + ex.complete(CallToolResult(content=[TextContent(text="x")]))
    error_of(assemble(out, "tools/call"), -32603, "os", status=200)


def test_input_required_after_progress_is_the_last_event() -> None:
    ex = work(rid="ir", token="t")
    out = ex.progress(1) + ex.input_required(state={"s": 1})
    reply = assemble(out, "tools/call")
    assert reply.result["resultType"] == "input_required"


def test_internal_error_status_without_streaming() -> None:
    reply = assemble(work(rid=5).fail(KeyError("boom")), "tools/call")
    assert reply.status == 500
    error_of(reply, -32603, 5, message_text="Internal error")


def test_unencodable_result_leaves_the_exchange_answerable() -> None:
    ex = work(rid="u")
    with pytest.raises(mcpwire.LocalProtocolError, match="The answer cannot be encoded as JSON"):
        ex.complete(CallToolResult(content=[], structured_content=object()))
    assert ex.state is ExchangeState.OPEN
    error_of(assemble(ex.fail(RuntimeError("encode failed")), "tools/call"), -32603, "u")


# --- cancellation (9) -------------------------------------------------------------------------------------


def test_cancelled_exchange_produces_nothing() -> None:
    ex = work(token="t", level="debug")
    first = ex.progress(1)
    assert first
    ex.cancel()
    assert ex.state is ExchangeState.CANCELLED
    assert ex.progress(2) == [] and ex.log("error", "x") == []
    assert ex.complete("late") == [] and ex.fail(RuntimeError()) == []
    assert ex.input_required(state=1) == []
    ex.cancel()
    assert ex.state is ExchangeState.CANCELLED


def test_cancel_after_done_keeps_done() -> None:
    ex = work()
    ex.complete("ok")
    ex.cancel()
    assert ex.state is ExchangeState.DONE


# --- subscriptions/listen (11) -----------------------------------------------------------------------------


def listen_body(notifications: Any, rid: Any = 9) -> dict[str, Any]:
    return request("subscriptions/listen", {"notifications": notifications}, id=rid)


ALL_FLAGS = {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True,
             "resourceSubscriptions": ["test://r"]}


def started(server: mcpwire.Server, notifications: Any, rid: Any = 9) -> tuple[mcpwire.HttpListenStream, Any]:
    stream = listen(server, listen_body(notifications, rid))
    out = stream.start()
    assert isinstance(out[0], mcpwire.ResponseHead) and out[0].status == 200
    assert dict(out[0].headers)[b"content-type"] == b"text/event-stream"
    assert len(out) == 2 and isinstance(out[1], mcpwire.ResponseBody) and out[1].more is True
    (ack,) = notifications_of(out)
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["_meta"] == {SUBSCRIPTION_ID_META_KEY: rid}
    return stream, ack["params"]["notifications"]


def notifications_of(out: list[Any]) -> list[Any]:
    messages = notifications(out)
    for m in messages:
        check_message(m, "subscriptions/listen")
    return messages


@pytest.mark.parametrize("rid", [9, "listen-1"])
def test_ack_honours_requested_and_advertised_types(rid: Any) -> None:
    server = stream_server(resource_subscribe=True)
    stream, honoured = started(server, ALL_FLAGS, rid)
    assert honoured == ALL_FLAGS
    assert stream.state is ListenState.OPEN and stream.request_id == rid
    stream.cancel()


def test_ack_omits_false_and_unrequested_types() -> None:
    stream, honoured = started(SERVER, {"toolsListChanged": True, "promptsListChanged": False})
    assert honoured == {"toolsListChanged": True}
    stream.cancel()


def test_ack_omits_unadvertised_types() -> None:
    server = stream_server(prompts=False)  # resources.subscribe not advertised either
    stream, honoured = started(server, ALL_FLAGS)
    assert honoured == {"toolsListChanged": True, "resourcesListChanged": True}
    stream.cancel()
    only_subscribe = stream_server(list_changed=False, resource_subscribe=True)
    stream, honoured = started(only_subscribe, ALL_FLAGS)
    assert honoured == {"resourceSubscriptions": ["test://r"]}
    stream.cancel()


def test_list_changed_per_list() -> None:
    server = stream_server(list_changed={"tools"})
    stream, honoured = started(server, ALL_FLAGS)
    assert honoured == {"toolsListChanged": True}
    assert server.list_changed("prompts") == [] and len(server.list_changed("tools")) == 1
    stream.cancel()
    resources_only = stream_server(list_changed=["resources"])
    stream, honoured = started(resources_only, ALL_FLAGS, rid="r")
    assert honoured == {"resourcesListChanged": True}
    ((_, out),) = resources_only.list_changed("resources")
    (event,) = notifications_of(out)
    assert event == {"jsonrpc": "2.0", "method": "notifications/resources/list_changed",
                     "params": {"_meta": {SUBSCRIPTION_ID_META_KEY: "r"}}}
    stream.cancel()


@pytest.mark.parametrize("kinds", [{"tool"}, "tools"], ids=["typo", "bare-str"])
def test_unknown_list_changed_kind_is_refused_at_construction(kinds: Any) -> None:
    with pytest.raises(mcpwire.LocalProtocolError, match='list_changed is a bool or a collection of "tools"'):
        stream_server(list_changed=kinds)


def test_empty_filter_is_acknowledged_as_empty() -> None:
    stream, honoured = started(SERVER, {})
    assert honoured == {}
    assert SERVER.list_changed("tools") == []
    stream.cancel()


@pytest.mark.parametrize(
    ("notifications", "message"),
    [
        (None, "subscriptions/listen requires a notifications object"),
        ([], "subscriptions/listen requires a notifications object"),
        ("all", "subscriptions/listen requires a notifications object"),
        ({"toolsListChanged": "yes"}, "toolsListChanged must be a boolean"),
        ({"promptsListChanged": 1}, "promptsListChanged must be a boolean"),
        ({"resourcesListChanged": None}, "resourcesListChanged must be a boolean"),
        ({"resourceSubscriptions": "test://r"}, "resourceSubscriptions must be a list of absolute URI strings"),
        ({"resourceSubscriptions": ["relative/path"]}, "resourceSubscriptions must be a list of absolute URI strings"),
        ({"resourceSubscriptions": [5]}, "resourceSubscriptions must be a list of absolute URI strings"),
        ({"resourceSubscriptions": [f"test://{i}" for i in range(1001)]}, "resourceSubscriptions exceeds 1000 URIs"),
    ],
    ids=range(10),
)
def test_bad_filters_are_32602(notifications: Any, message: str) -> None:
    body = listen_body(notifications, rid="bad")
    if notifications is None:
        del body["params"]["notifications"]
    error_of(reply_of(post(SERVER, body)), -32602, "bad", message_text=message)


def test_listen_without_any_source_is_method_not_found() -> None:
    server = stream_server(list_changed=False, resource_subscribe=False)
    error_of(reply_of(post(server, listen_body({"toolsListChanged": True}))), -32601, 9)


def test_list_changed_goes_only_to_streams_that_asked() -> None:
    server = stream_server()
    tools_stream, _ = started(server, {"toolsListChanged": True}, rid="t")
    prompts_stream, _ = started(server, {"promptsListChanged": True}, rid="p")
    deliveries = server.list_changed("tools")
    assert [s for s, _ in deliveries] == [tools_stream]
    (event,) = notifications_of(deliveries[0][1])
    assert event == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                     "params": {"_meta": {SUBSCRIPTION_ID_META_KEY: "t"}}}
    assert prompts_stream.list_changed("tools") == []  # never an unrequested type
    (event,) = notifications_of(server.list_changed("prompts")[0][1])
    assert event["method"] == "notifications/prompts/list_changed"
    assert event["params"]["_meta"][SUBSCRIPTION_ID_META_KEY] == "p"
    assert server.list_changed("resources") == []
    tools_stream.cancel()
    prompts_stream.cancel()


def test_resource_updated_for_subscribed_uris_and_sub_resources() -> None:
    server = stream_server(resource_subscribe=True)
    stream, _ = started(server, {"resourceSubscriptions": ["test://dir", "test://r"]}, rid=3)
    for uri in ("test://r", "test://dir/file.txt", "test://dir/a/b"):
        ((target, out),) = server.resource_updated(uri)
        assert target is stream
        (event,) = notifications_of(out)
        assert event["params"] == {"uri": uri, "_meta": {SUBSCRIPTION_ID_META_KEY: 3}}
    for uri in ("test://dirx", "test://other", "test://r2"):
        assert server.resource_updated(uri) == []
    assert stream.resource_updated("test://other") == []
    stream.cancel()


def test_close_ends_the_stream_with_the_listen_result() -> None:
    server = stream_server()
    stream, _ = started(server, {"toolsListChanged": True}, rid=12)
    assert server.open_listeners == 1
    out = stream.close()
    assert len(out) == 1 and isinstance(out[0], mcpwire.ResponseBody) and out[0].more is False
    (result,) = parse_sse(out[0].data)
    check_message(result, "subscriptions/listen")
    assert result["id"] == 12 and result["result"]["resultType"] == "complete"
    assert result["result"]["_meta"][SUBSCRIPTION_ID_META_KEY] == 12
    assert stream.state is ListenState.CLOSED and server.open_listeners == 0
    assert stream.close() == [] and stream.list_changed("tools") == [] and server.list_changed("tools") == []


def test_close_listeners_at_shutdown() -> None:
    server = stream_server()
    streams = [started(server, {"toolsListChanged": True}, rid=i)[0] for i in range(3)]
    closed = server.close_listeners()
    assert [s for s, _ in closed] == streams
    assert [parse_sse(out[0].data)[0]["id"] for _, out in closed] == [0, 1, 2]
    assert server.open_listeners == 0 and server.close_listeners() == []


def test_cancelled_stream_gets_nothing_more() -> None:
    server = stream_server()
    stream, _ = started(server, {"toolsListChanged": True})
    stream.cancel()
    assert stream.state is ListenState.CANCELLED and server.open_listeners == 0
    assert server.list_changed("tools") == [] and stream.list_changed("tools") == [] and stream.close() == []


def test_open_streams_are_bounded_with_503() -> None:
    server = stream_server(max_listen_streams=2)
    first = listen(server, listen_body({"toolsListChanged": True}, 1))
    listen(server, listen_body({"toolsListChanged": True}, 2))
    reply = reply_of(post(server, listen_body({"toolsListChanged": True}, 3)))
    assert reply.status == 503
    assert reply.error["code"] == -32603 and reply.message["id"] == 3
    first.cancel()
    assert isinstance(post(server, listen_body({"toolsListChanged": True}, 4)), mcpwire.HttpListenStream)


def test_bad_filter_beats_the_stream_bound() -> None:
    server = stream_server(max_listen_streams=0)
    error_of(reply_of(post(server, listen_body([], "b"))), -32602, "b")


def test_ack_is_sent_once_and_never_after_the_end() -> None:
    stream, _ = started(SERVER, {"toolsListChanged": True})
    with pytest.raises(mcpwire.LocalProtocolError):
        stream.start()
    stream.close()
    assert stream.start() == []


def test_no_event_before_the_ack() -> None:
    server = stream_server()
    stream = listen(server, listen_body({"toolsListChanged": True}))
    assert server.list_changed("tools") == []
    stream.cancel()
