"""What a client that accepts one media type gets, at the engine, over HTTP, sans-IO.

The specification asks a client to list both ``application/json`` and ``text/event-stream``
in Accept (Streamable HTTP, sending messages) and lets the server answer a request with either.
Widely used clients list one, or ``*/*``, or nothing. mcpwire reads the header once, at
admission, the way RFC 9110 section 12.5.1 reads it (``mcpwire/server/accept.py``), and frames
every answer as the client can take it: JSON only (no notification rides a stream; 406 where
the answer can only stream), an event stream only (a 200 answer as a single event), or either.
The call fast path carries the same decision as the full admission; both are held equal here.

Also: a request refused for its ``MCP-Protocol-Version`` is told which header to send, with
which version.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from typing import Any

import msgspec
import pytest
from schema_check import Reply, assemble, call, check_error, error_of, http_request, make_server, post, reply_of
from schema_check import request as rpc
from test_call_fast_path import count_admissions
from test_session_admission import ASKING_INIT, INIT, QUESTION

import mcpwire
import mcpwire.server.engine
import mcpwire.server.http
from mcpwire import HttpExchange, HttpListenStream, HttpRequest, ResponseBody, ResponseHead, Server
from mcpwire.sessions import HttpBatch, SessionStream
from mcpwire.tasks import MemoryTaskStore, Tasks
from mcpwire.types import CallToolResult, TextContent, Tool

NOW = 1_800_000_000.0
JSON = b"application/json"
SSE = b"text/event-stream"


class Args(msgspec.Struct):
    text: str = ""


def stateless_server(call_memo: int = 256) -> Server:
    server = make_server(call_memo=call_memo, list_changed=True)
    server.add_tool(Tool(name="echo", input_schema={}), arguments_type=Args)
    return server


def tool_call(token: str | None = None, rid: int = 1) -> dict[str, Any]:
    meta: dict[str, Any] = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                            "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/logLevel": "debug"}
    if token is not None:
        meta["progressToken"] = token
    return rpc("tools/call", {"name": "echo", "arguments": {"text": "hi"}, "_meta": meta}, id=rid)


def accepting(values: list[bytes] | None) -> dict[str, Any]:
    """``http_request`` keywords for a client whose Accept headers are ``values`` (None: no Accept)."""
    return {"drop": [b"accept"], "extra": [(b"Accept", v) for v in values or []]}


def kind(output: Any) -> str:
    """``json`` or ``sse``: the media type of an answer's head."""
    head = output[0]
    assert isinstance(head, ResponseHead) and head.status == 200, output
    content_type = dict(head.headers)[b"content-type"]
    return {JSON: "json", SSE: "sse"}[content_type]


def takes(server: Server, values: list[bytes] | None) -> str:
    """What the engine's framing shows a client with these Accept headers takes: ``both`` (JSON
    until a notification opens a stream), ``json`` (JSON, no notification), ``sse`` (a stream
    even for a lone answer), or ``406``."""
    first = post(server, tool_call(token="t"), **accepting(values))
    if isinstance(first, tuple):
        error_of(reply_of(first), -32600, None, status=406)
        return "406"
    assert isinstance(first, HttpExchange)
    notified = [*first.progress(1.0), *first.log("error", "x"), *first.complete(CallToolResult(content=[]))]
    answered = assemble(notified, "tools/call")
    second = post(server, tool_call(), **accepting(values))
    assert isinstance(second, HttpExchange)
    alone = second.complete(CallToolResult(content=[]))
    assemble(alone, "tools/call")
    seen = (kind(notified), kind(alone))
    if seen == ("json", "json"):
        assert [m.get("method") for m in answered.messages] == [None]  # no notification was sent
        return "json"
    assert [m.get("method") for m in answered.messages] == ["notifications/progress", "notifications/message", None]
    return {("sse", "json"): "both", ("sse", "sse"): "sse"}[seen]


CASES: list[tuple[list[bytes] | None, str]] = [
    (None, "both"),  # RFC 9110 12.5.1: no Accept, any media type
    ([b""], "both"),
    ([b"application/json, text/event-stream"], "both"),
    ([b"text/event-stream, application/json"], "both"),
    ([b"*/*"], "both"),  # Postman, curl
    ([b"application/json, text/plain, */*"], "both"),  # axios
    ([b"application/*, text/*"], "both"),
    ([JSON, SSE], "both"),  # repeated headers are one list (RFC 9110 5.3)
    ([b"application/json"], "json"),
    ([b"application/*"], "json"),
    ([b"APPLICATION/JSON; charset=UTF-8"], "json"),  # case and parameters
    ([b"*/*, text/event-stream;q=0"], "json"),  # the most specific range decides
    ([b"application/json, text/event-stream;Q=0.000"], "json"),
    ([b"text/event-stream"], "sse"),  # a hosted connector proxy
    ([b"text/*"], "sse"),
    ([b" Text/Event-Stream ;charset=utf-8"], "sse"),
    ([b"*/*, application/json;q=0"], "sse"),
    ([b"application/json;q=0, text/event-stream"], "sse"),
    ([b"application/json;q=1.5, text/event-stream"], "sse"),  # not a qvalue: that range is left out
    ([SSE, SSE], "sse"),
    ([b'text/event-stream;x="a,application/json"'], "sse"),  # a comma inside a quoted-string
    ([b"application/*;q=0, application/json"], "json"),
    ([b"text/html"], "406"),
    ([b"application/json;q=0"], "406"),
    ([b"*/*;q=0"], "406"),
    ([b"application/json;q=0, text/event-stream;q=0, */*"], "406"),
    ([b"image/png, text/plain;q=0.5"], "406"),
]


@pytest.mark.parametrize(("values", "expected"), CASES)
def test_each_accept_value_is_served_as_rfc_9110_reads_it(values: list[bytes] | None, expected: str) -> None:
    assert takes(stateless_server(call_memo=0), values) == expected


def parsed(output: Any) -> Reply:
    """An answer's head and messages, read as a client reads them (not checked against the
    2026-07-28 schema: an initialize-era answer, or a refusal that names its request)."""
    head, *pieces = list(output)
    assert isinstance(head, ResponseHead) and pieces and pieces[-1].more is False, output
    headers = dict(head.headers)
    body = b"".join(p.data for p in pieces if isinstance(p, ResponseBody))
    sse = headers[b"content-type"] == SSE
    if sse:
        assert head.status == 200 and headers[b"cache-control"] == b"no-cache"
        messages = [json.loads(line[5:]) for line in body.split(b"\n") if line.startswith(b"data:") and line[5:].strip()]
    else:
        assert headers[b"content-type"] == JSON and headers[b"content-length"] == b"%d" % len(body)
        messages = [json.loads(body)]
    return Reply(status=head.status, headers=headers, body=body, messages=messages, sse=sse)


# -- one decision: the call fast path and check_head agree with the full admission -------------------



def _framed(server: Server, values: list[bytes] | None, *, head: bool) -> Any:
    """What a call with a progress token, one without, and one whose arguments its tool refuses
    (answered by the engine, the full way even with a memo) write, as plain data (``head``: the
    driver asks check_head first, with the same headers tuple)."""
    out = []
    for token, text in (("t", "hi"), (None, "hi"), (None, 5)):
        body = tool_call(token=token)
        body["params"]["arguments"]["text"] = text
        built = http_request(body, **accepting(values))
        headers: tuple[tuple[bytes, bytes], ...] = tuple(built.headers)  # type: ignore[arg-type]
        request = HttpRequest(method="POST", target="/mcp", headers=headers, body=built.body)
        if head:
            assert server.check_head(request.method, request.target, request.headers) is None
        answer = server.receive_http(request, now=NOW)
        if text == 5:
            assert isinstance(answer, tuple) and answer[0].status == 200  # a tool execution error
            out.append(msgspec.to_builtins(answer))
            continue
        assert isinstance(answer, HttpExchange)
        out.append(msgspec.to_builtins([*answer.progress(1.0), *answer.complete(CallToolResult(content=[]))]))
    return out


@pytest.mark.parametrize("values", [values for values, expected in CASES if expected != "406"])
@pytest.mark.parametrize("head", [False, True])
def test_the_fast_path_frames_as_the_full_admission_does(
    monkeypatch: pytest.MonkeyPatch, values: list[bytes] | None, head: bool,
) -> None:
    full = _framed(stateless_server(call_memo=0), values, head=False)
    assert _framed(stateless_server(call_memo=0), values, head=True) == full  # check_head's decision is kept
    laned = stateless_server()
    _framed(laned, values, head=head)  # learns the head (a head with a repeated header is never remembered)
    calls = count_admissions(monkeypatch)
    assert _framed(laned, values, head=head) == full
    # The memo took every head but the refused arguments' (and none with a repeated header).
    assert calls[0] == (3 if values is not None and len(values) > 1 else 0 if head else 1)


# -- answers the engine gives itself, and errors -------------------------------------------------------

def test_the_engines_own_answers_follow_the_client() -> None:
    server = stateless_server()
    discover = rpc("server/discover")
    json_only = call(server, discover, **accepting([JSON]))
    assert not json_only.sse and json_only.result["supportedVersions"] == ["2026-07-28"]
    stream_only = call(server, discover, **accepting([SSE]))
    assert stream_only.sse and stream_only.result["supportedVersions"] == ["2026-07-28"]
    assert stream_only.headers[b"content-length"] == str(len(stream_only.body)).encode()  # complete, so sized
    assert [line for line in stream_only.body.split(b"\n") if line] == [b"data: " + json.dumps(
        json_only.message, separators=(",", ":")).encode()]
    listed = call(server, rpc("tools/list"), **accepting([SSE]))
    assert listed.sse and [t["name"] for t in listed.result["tools"]] == ["echo"]


def test_an_error_status_stays_json_for_a_client_that_takes_only_a_stream() -> None:
    server = stateless_server()
    # Refused at admission: 400 -32020, the status says how the request ended (MUST be 400).
    refused = call(server, tool_call(), drop=[b"accept", b"mcp-name"], extra=[(b"accept", SSE)])
    error_of(refused, -32020, 1)
    unknown = call(server, rpc("no/such"), **accepting([SSE]))
    error_of(unknown, -32601, 1)
    # Failed by the host with a 4xx code: JSON; with a code of the application (HTTP 200): a stream.
    exchange = post(server, tool_call(), **accepting([SSE]))
    assert isinstance(exchange, HttpExchange)
    error_of(assemble(exchange.fail(mcpwire.RemoteProtocolError("bad", code=-32602))), -32602, 1)
    exchange = post(server, tool_call(), **accepting([SSE]))
    assert isinstance(exchange, HttpExchange)
    failed = parsed(exchange.fail(mcpwire.ProtocolError("busy", code=-32000, http_status=200)))
    assert failed.sse and failed.message["error"]["code"] == -32000


ASK = {"method": "elicitation/create", "params": {"mode": "form", "message": "Name?",
                                                   "requestedSchema": {"type": "object", "properties": {}}}}


def test_input_required_goes_as_the_client_takes_it() -> None:
    server = stateless_server()
    body = tool_call()
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = {"elicitation": {"form": {}}}
    for values, expected in (([JSON], False), ([SSE], True)):
        exchange = post(server, body, **accepting(values))
        assert isinstance(exchange, HttpExchange)
        answered = assemble(exchange.input_required({"q": ASK}), "tools/call")
        assert answered.sse is expected and answered.result["resultType"] == "input_required"


def test_a_listen_stream_needs_a_client_that_takes_one() -> None:
    server = stateless_server()
    listen = rpc("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id="l")
    refused = parsed(post(server, listen, **accepting([JSON])))
    assert refused.status == 406 and not refused.sse  # decided once the request is read: its id is known
    check_error(refused.message, -32600, "l")
    assert "text/event-stream" in refused.message["error"]["message"]
    assert server.open_streams == 0
    for values in (None, [SSE], [b"*/*"], [b"application/json, text/*"]):
        stream = post(server, listen, **accepting(values))
        assert isinstance(stream, HttpListenStream)
        assert kind(stream.start()) == "sse"
        stream.cancel()


def test_a_client_of_neither_type_is_406_before_its_body_is_read() -> None:
    server = stateless_server()
    request = http_request(tool_call(), **accepting([b"text/html"]))
    refused = server.check_head("POST", "/mcp", request.headers)
    assert refused is not None and reply_of(refused).status == 406
    assert reply_of(refused).message["error"]["message"].startswith("Not Acceptable: answers are application/json")


# -- the initialize era ------------------------------------------------------------------------------

def session_server(**kw: Any) -> Server:
    server = make_server(session_ids=(f"sid-{i}" for i in itertools.count()), list_changed=True, **kw)
    server.add_tool(Tool(name="t", input_schema={"type": "object"}))
    return server


def send(server: Server, body: Any, values: list[bytes] | None, session: Sequence[tuple[bytes, bytes]] = (),
         method: str = "POST") -> Any:
    headers = [(b"content-type", b"application/json"), *((b"accept", v) for v in values or []), *session]
    data = json.dumps(body).encode() if body is not None else b""
    return server.receive_http(HttpRequest(method=method, target="/mcp", headers=headers, body=data), now=NOW)


def era_reply(answer: Any) -> Reply:
    assert isinstance(answer, (tuple, list)), answer
    return parsed(answer)


def open_session(server: Server, values: list[bytes] | None, init: dict[str, Any] = INIT,
                 version: bytes = b"2025-11-25") -> list[tuple[bytes, bytes]]:
    opened = era_reply(send(server, init, values))
    assert opened.status == 200 and "result" in opened.message
    return [(b"mcp-session-id", opened.headers[b"mcp-session-id"]), (b"mcp-protocol-version", version)]


@pytest.mark.parametrize(("values", "sse"), [([JSON], False), ([SSE], True), (None, False)])
def test_a_sessions_answers_follow_the_client(values: list[bytes] | None, sse: bool) -> None:
    server = session_server()
    opened = era_reply(send(server, INIT, values))
    assert opened.sse is sse and opened.headers[b"mcp-session-id"] == b"sid-0"
    session = open_session(server, values)
    listed = era_reply(send(server, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, values, session))
    assert listed.sse is sse and [t["name"] for t in listed.message["result"]["tools"]] == ["t"]
    unknown = era_reply(send(server, {"jsonrpc": "2.0", "id": 3, "method": "no/such"}, values, session))
    assert unknown.status == 200 and unknown.sse is sse and unknown.message["error"]["code"] == -32601
    exchange = send(server, {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                             "params": {"name": "t", "arguments": {}, "_meta": {"progressToken": 1}}}, values, session)
    assert isinstance(exchange, HttpExchange)
    out = [*exchange.progress(1.0), *exchange.complete(CallToolResult(content=[TextContent(text="ok")]))]
    answered = parsed(out)
    assert answered.sse is (values != [JSON])
    assert [m.get("method") for m in answered.messages] == ([None] if values == [JSON] else ["notifications/progress", None])


def test_a_session_request_that_asks_its_client_is_406_for_a_json_only_client() -> None:
    server = session_server()
    session = open_session(server, [JSON], ASKING_INIT)
    exchange = send(server, {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "t", "arguments": {}}},
                    [JSON], session)
    assert isinstance(exchange, HttpExchange)
    assert exchange.progress(1.0) == []  # no token: nothing; and nothing opened a stream either
    exchange.log("info", "dropped")
    refused = era_reply(exchange.input_required({"name": QUESTION}))
    assert refused.status == 406 and not refused.sse
    check_error(refused.message, -32600, 5)
    assert "text/event-stream" in refused.message["error"]["message"]
    assert not exchange.awaiting_input and exchange.state is mcpwire.ExchangeState.DONE
    stored = server.sessions.get("sid-0", NOW)
    assert stored is not None and stored.waiting == 0  # nothing was asked, nothing waits
    # A client that lacks the capability is told so first (an error answer needs no stream).
    plain = open_session(server, [JSON])
    exchange = send(server, {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "t", "arguments": {}}},
                    [JSON], plain)
    assert isinstance(exchange, HttpExchange)
    missing = era_reply(exchange.input_required({"name": QUESTION}))
    assert missing.status == 200 and missing.message["error"]["code"] == -32021
    # The same request from a client that takes a stream asks on it.
    streaming = open_session(server, [SSE], ASKING_INIT)
    exchange = send(server, {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "t", "arguments": {}}},
                    [SSE], streaming)
    assert isinstance(exchange, HttpExchange)
    asked = exchange.input_required({"name": QUESTION})
    assert kind(asked) == "sse" and exchange.awaiting_input


def test_close_stream_leaves_a_json_only_clients_answer_whole() -> None:
    server = session_server()
    session = open_session(server, [JSON])
    exchange = send(server, {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "t", "arguments": {}}},
                    [JSON], session)
    assert isinstance(exchange, HttpExchange)
    assert exchange.close_stream(100) == [] and not exchange.detached
    answered = era_reply(tuple(exchange.complete(CallToolResult(content=[]))))
    assert not answered.sse and answered.message["id"] == 5


def test_a_tasks_result_that_must_relay_requests_is_406_for_a_json_only_client() -> None:
    tasks = Tasks(MemoryTaskStore(), (f"task-{i}" for i in itertools.count(1)), ttl_ms=60_000)
    server = session_server(tasks=tasks)
    server.add_tool(Tool(name="job", input_schema={"type": "object"}), task_support="optional")
    session = open_session(server, [JSON], ASKING_INIT)
    created = send(server, {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                            "params": {"name": "job", "arguments": {}, "task": {}}}, [JSON], session)
    assert isinstance(created, HttpExchange)
    task_id = era_reply(tuple(created.create_task(now=NOW))).message["result"]["task"]["taskId"]
    assert created.input_required({"who": QUESTION}, now=NOW) == []
    waiting = send(server, {"jsonrpc": "2.0", "id": 8, "method": "tasks/result", "params": {"taskId": task_id}},
                   [JSON], session)
    assert isinstance(waiting, HttpExchange)
    refused = era_reply(tuple(waiting.relay(created.task_requests)))
    assert refused.status == 406
    check_error(refused.message, -32600, 8)
    assert len(created.task_requests) == 1  # still the task's, for a stream that can carry them


def test_a_get_stream_needs_a_client_that_takes_one() -> None:
    server = session_server()
    session = open_session(server, None)
    for values in ([JSON], [b"text/event-stream;q=0, */*"], [b"text/html"]):
        refused = era_reply(send(server, None, values, session, method="GET"))
        assert refused.status == 406 and refused.message["error"]["message"] == (
            "Not Acceptable: a GET stream needs Accept: text/event-stream")
    stream = send(server, None, None, session, method="GET")  # no Accept: any media type
    assert isinstance(stream, SessionStream)


def test_a_batch_with_requests_is_406_for_a_json_only_client() -> None:
    server = session_server()
    session = open_session(server, [JSON], version=b"2025-03-26",
                           init={**INIT, "params": {**INIT["params"], "protocolVersion": "2025-03-26"}})
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
    refused = era_reply(send(server, [note, ping], [JSON], session))
    assert refused.status == 406 and "batch" in refused.message["error"]["message"]
    quiet = send(server, [note, note], [JSON], session)
    assert isinstance(quiet, HttpBatch) and not quiet.has_requests
    streamed = send(server, [note, ping], [SSE], session)
    assert isinstance(streamed, HttpBatch) and streamed.has_requests
    frames = b"".join(f.data for answer in streamed.answers if isinstance(answer, tuple)
                      for f in HttpBatch.frames(answer))
    assert json.loads(frames.split(b"data: ", 1)[1]) == {"jsonrpc": "2.0", "id": 9, "result": {}}


# -- a request refused for its MCP-Protocol-Version says what to send ----------------------------------

def test_a_stateless_request_without_the_version_header_is_told_which_header_and_versions() -> None:
    both = call(make_server(), rpc("tools/list"), drop=[b"mcp-protocol-version"])
    error = error_of(both, -32020, 1)
    assert error["message"] == (
        "Missing required header: send MCP-Protocol-Version: 2026-07-28, equal to the request's _meta"
        " io.modelcontextprotocol/protocolVersion (a client of 2025-11-25, 2025-06-18 or 2025-03-26 sends"
        " initialize first, to open a session)")
    assert error["data"] == {"supported": ["2026-07-28"]}
    alone = call(make_server(supported_versions=("2026-07-28", "2026-12-31")), rpc("tools/list"),
                 drop=[b"mcp-protocol-version"])
    error = error_of(alone, -32020, 1)
    assert error["message"] == ("Missing required header: send MCP-Protocol-Version: one of 2026-07-28 or 2026-12-31,"
                                " equal to the request's _meta io.modelcontextprotocol/protocolVersion")
    assert error["data"] == {"supported": ["2026-07-28", "2026-12-31"]}


def test_an_initialize_era_server_tells_a_stateless_request_to_open_a_session() -> None:
    server = make_server(supported_versions=("2025-11-25", "2025-06-18"),
                         session_ids=(f"sid-{i}" for i in itertools.count()))
    error = error_of(call(server, rpc("tools/list"), drop=[b"mcp-protocol-version"]), -32020, 1)
    assert error["message"] == ("Missing required header: this server speaks 2025-11-25 or 2025-06-18: send initialize"
                                " to open a session, then MCP-Protocol-Version: the version it agreed")
    assert error["data"] == {"supported": ["2025-11-25", "2025-06-18"]}


def test_a_session_request_without_the_header_names_the_versions_to_send() -> None:
    server = session_server(supported_versions=("2026-07-28", "2025-11-25", "2025-06-18"))
    session = open_session(server, None)
    refused = era_reply(send(server, {"jsonrpc": "2.0", "id": 4, "method": "ping"}, None, session[:1]))
    assert refused.status == 400
    check_error(refused.message, -32600, 4)
    assert refused.message["error"]["message"] == (
        "Bad Request: no MCP-Protocol-Version header, which means 2025-03-26, a revision this server does not serve;"
        " send MCP-Protocol-Version: one of 2025-11-25, 2025-06-18")
