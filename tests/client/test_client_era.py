"""The client engine on initialize-era servers, through bytes only: the probe's verdict, the
handshake, session requests and headers, answers to the server's requests, the GET stream's
parser and the resumption of a response stream that ended early (specification 2025-11-25:
Basic > Lifecycle, Transports; 2026-07-28: Basic > Versioning, Backward Compatibility)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpwire import (
    ErrorResult, HttpResponseParser, ListChanged, LocalProtocolError, LogMessage, RemoteProtocolError, ResourceUpdated,
    ResultReceived, ServerRequest, SessionStreamParser,
)
import mcpwire
from mcpwire.client.engine import MODERN_ERRORS, Client
from mcpwire.client.events import OutgoingRequest
from mcpwire.sessions import Resume
from mcpwire.types import ElicitRequest, ElicitResult, Implementation, InitializeResult, ListRootsResult

CAPS: dict[str, Any] = {"elicitation": {"form": {}}, "roots": {}}
SID = "session-1"
SERVER = {"name": "old", "version": "9"}


def make_client(**kw: Any) -> Client:
    return Client(Implementation(name="cli", version="0.1"), capabilities=CAPS, **kw)


def answer(client: Client, request: OutgoingRequest, result: Any, *, sse: bool = False) -> list[Any]:
    body = json.dumps({"jsonrpc": "2.0", "id": request.id, "result": result}).encode()
    ctype = b"application/json"
    if sse:
        body, ctype = b"id: e1\ndata: " + body + b"\n\n", b"text/event-stream"
    parser = HttpResponseParser(client, request, status=200, content_type=ctype)
    return parser.feed(body) + parser.close()


def error(client: Client, request: OutgoingRequest, code: int) -> ErrorResult:
    body = json.dumps({"jsonrpc": "2.0", "id": request.id, "error": {"code": code, "message": "no"}}).encode()
    parser = HttpResponseParser(client, request, status=200, content_type=b"application/json")
    event = (parser.feed(body) + parser.close())[-1]
    assert isinstance(event, ErrorResult)
    return event


def initialized(version: str = "2025-11-25", **kw: Any) -> Client:
    client = make_client(**kw)
    request = client.initialize()
    result = {"protocolVersion": version, "capabilities": {"tools": {"listChanged": True}}, "serverInfo": SERVER}
    event = answer(client, request, result)[-1]
    assert isinstance(event, ResultReceived)
    client.accept_initialize(event, SID)
    return client


def body(message: Any) -> dict[str, Any]:
    return json.loads(message.body)  # type: ignore[no-any-return]


# -- the probe's verdict ---------------------------------------------------------------------------


def test_a_discover_result_is_modern_anything_else_is_legacy() -> None:
    client = make_client()
    probe = client.discover()
    modern = answer(client, probe, {"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {},
                                    "ttlMs": 0, "cacheScope": "private",
                                    "_meta": {"io.modelcontextprotocol/serverInfo": SERVER}})[-1]
    assert not client.probe_says_legacy(modern)
    # Some older servers answer any unknown method with {}: not a DiscoverResult.
    assert client.probe_says_legacy(answer(client, client.discover(), {})[-1])
    # A complete result to any other request is modern.
    assert not client.probe_says_legacy(answer(client, client.list_tools(), {"tools": []})[-1])
    assert client.probe_says_legacy(None)  # a 4xx without JSON-RPC, or stdio silence


@pytest.mark.parametrize("code", [-32601, -32600, -32602, -32603, -32000, -32001])
def test_errors_no_modern_server_gives_mean_legacy(code: int) -> None:
    client = make_client()
    assert client.probe_says_legacy(error(client, client.discover(), code))


@pytest.mark.parametrize("code", sorted(MODERN_ERRORS))
def test_modern_error_codes_stay_modern(code: int) -> None:
    client = make_client()
    assert not client.probe_says_legacy(error(client, client.discover(), code))


# -- the handshake ---------------------------------------------------------------------------------


def test_initialize_asks_for_the_newest_initialize_era_revision_or_the_pinned_one() -> None:
    client = make_client()
    request = client.initialize()
    sent = body(request)
    assert sent["method"] == "initialize" and sent["params"] == {
        "protocolVersion": "2025-11-25", "capabilities": CAPS, "clientInfo": {"name": "cli", "version": "0.1"}}
    headers = dict(request.headers)
    assert b"Mcp-Session-Id" not in headers and b"MCP-Protocol-Version" not in headers
    assert body(make_client(protocol_version="2025-06-18").initialize())["params"]["protocolVersion"] == "2025-06-18"
    assert body(make_client().initialize("2025-03-26"))["params"]["protocolVersion"] == "2025-03-26"
    with pytest.raises(LocalProtocolError):
        make_client(supported_versions=("2026-07-28",)).initialize()
    with pytest.raises(LocalProtocolError):
        make_client().initialize("2026-07-28")


def test_accept_initialize_keeps_the_session_and_says_initialized() -> None:
    client = make_client()
    request = client.initialize()
    event = answer(client, request, {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": SERVER,
                                     "instructions": "be kind"}, sse=True)[-1]
    assert isinstance(event, ResultReceived) and isinstance(event.value, InitializeResult)
    note = client.accept_initialize(event, SID)
    assert client.initialize_era and client.protocol_version == "2025-06-18" and client.session_id == SID
    assert client.initialized is not None and client.initialized.instructions == "be kind"
    assert body(note) == {"jsonrpc": "2.0", "method": "notifications/initialized"}
    headers = dict(note.headers)
    assert headers[b"Mcp-Session-Id"] == SID.encode() and headers[b"MCP-Protocol-Version"] == b"2025-06-18"
    assert note.line == note.body + b"\n"


def test_a_version_the_client_does_not_speak_is_refused_with_32022() -> None:
    client = make_client(supported_versions=("2026-07-28", "2025-11-25"))
    request = client.initialize()
    event = answer(client, request, {"protocolVersion": "2024-11-05", "capabilities": {}, "serverInfo": SERVER})[-1]
    with pytest.raises(RemoteProtocolError) as caught:
        client.accept_initialize(event, SID)
    assert caught.value.code == -32022 and caught.value.data == {"supported": ["2025-11-25"], "requested": "2024-11-05"}
    assert client.initialized is None and client.session_id is None
    not_init = answer(client, client.initialize(), {"protocolVersion": "2025-11-25"})[-1]  # no capabilities
    with pytest.raises(RemoteProtocolError):
        client.accept_initialize(not_init, SID)


# -- requests on the session -----------------------------------------------------------------------


def test_session_requests_carry_the_session_not_the_stateless_meta() -> None:
    client = initialized()
    request = client.call_tool("echo", {"x": 1}, progress_token="p")
    sent = body(request)
    assert sent["params"] == {"name": "echo", "arguments": {"x": 1}, "_meta": {"progressToken": "p"}}
    headers = dict(request.headers)
    assert headers[b"Mcp-Session-Id"] == SID.encode() and headers[b"MCP-Protocol-Version"] == b"2025-11-25"
    assert body(client.set_log_level("debug"))["params"] == {"level": "debug"}
    assert body(client.subscribe("file:///a"))["method"] == "resources/subscribe"
    assert body(client.unsubscribe("file:///a"))["params"] == {"uri": "file:///a"}
    with pytest.raises(LocalProtocolError):
        client.set_log_level("loud")
    with pytest.raises(LocalProtocolError):  # the session negotiated capabilities once
        client.request("tools/list", capabilities={"roots": {}})


def test_a_request_built_before_the_fallback_is_rebuilt_for_the_session() -> None:
    client = make_client()
    modern = client.call_tool("echo", {"x": 1}, log_level="info", progress_token="p")
    with pytest.raises(LocalProtocolError):
        client.as_session_request(modern)  # no session yet
    event = answer(client, client.initialize(), {"protocolVersion": "2025-11-25", "capabilities": {},
                                                 "serverInfo": SERVER})[-1]
    client.accept_initialize(event, None)  # stdio: no session id
    again = client.as_session_request(modern)
    assert again.id != modern.id and body(again)["params"] == {"name": "echo", "arguments": {"x": 1},
                                                              "_meta": {"progressToken": "p"}}
    assert b"Mcp-Session-Id" not in dict(again.headers)


def test_stream_headers_end_session_and_expiry() -> None:
    with pytest.raises(LocalProtocolError):
        make_client().stream_headers()
    client = initialized()
    headers = dict(client.stream_headers("e7"))
    assert headers == {b"Accept": b"text/event-stream", b"MCP-Protocol-Version": b"2025-11-25",
                       b"Mcp-Session-Id": SID.encode(), b"Last-Event-ID": b"e7"}
    assert b"Last-Event-ID" not in dict(client.stream_headers())
    ended = client.end_session()
    assert ended is not None and dict(ended)[b"Mcp-Session-Id"] == SID.encode()
    assert client.session_id is None and client.initialized is None and client.end_session() is None
    client = initialized()
    client.session_expired()
    assert client.session_id is None and client.initialized is None


# -- the server's requests ---------------------------------------------------------------------------


def sse(*messages: dict[str, Any], first_id: int = 1) -> bytes:
    return b"".join(b"id: e%d\ndata: %s\n\n" % (first_id + i, json.dumps(m).encode()) for i, m in enumerate(messages))


ELICIT = {"jsonrpc": "2.0", "id": 7, "method": "elicitation/create", "params": {
    "message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}}


def test_server_requests_on_a_response_stream_are_typed_and_answered() -> None:
    client = initialized()
    call = client.call_tool("greet", {})
    parser = HttpResponseParser(client, call, status=200, content_type=b"text/event-stream")
    final = {"jsonrpc": "2.0", "id": call.id, "result": {"content": [{"type": "text", "text": "hi"}]}}
    odd = {"jsonrpc": "2.0", "id": "x", "method": "sampling/createMessage", "params": {"messages": "nope"}}
    events = parser.feed(sse(ELICIT, {"jsonrpc": "2.0", "id": 8, "method": "ping"}, odd, final)) + parser.close()
    ask, ping, bad, done = events
    assert isinstance(ask, ServerRequest) and isinstance(ask.request, ElicitRequest) and ask.for_request == call.id
    assert isinstance(ping, ServerRequest) and ping.method == "ping" and ping.request is None
    assert isinstance(bad, ServerRequest) and bad.request is None and bad.request_id == "x"
    assert isinstance(done, ResultReceived) and parser.done and parser.resume is None
    reply = client.answer(ask, ElicitResult(action="accept", content={"name": "Ada"}))
    assert body(reply) == {"jsonrpc": "2.0", "id": 7, "result": {"action": "accept", "content": {"name": "Ada"}}}
    assert dict(reply.headers)[b"Mcp-Session-Id"] == SID.encode()
    assert body(client.answer(ping, {})) == {"jsonrpc": "2.0", "id": 8, "result": {}}
    refused = client.answer_error(bad, -32602, "Invalid params for sampling/createMessage")
    assert body(refused)["error"] == {"code": -32602, "message": "Invalid params for sampling/createMessage"}
    with pytest.raises(LocalProtocolError):
        client.answer(ask, ListRootsResult(roots=[]))  # not an elicitation result


def test_a_response_stream_that_ends_early_is_resumed_from_its_last_event_id() -> None:
    client = initialized()
    call = client.call_tool("slow", {})
    parser = HttpResponseParser(client, call, status=200, content_type=b"text/event-stream")
    assert parser.feed(b"id: p0\nretry: 250\ndata: \n\n") == []  # the priming event
    assert parser.close() == [] and parser.resume == Resume(last_event_id="p0", retry_ms=250)
    resumed = HttpResponseParser(client, call, status=200, content_type=b"text/event-stream", resumed=True)
    final: dict[str, Any] = {"jsonrpc": "2.0", "id": call.id, "result": {"content": []}}
    events = resumed.feed(sse(final, first_id=5)) + resumed.close()
    assert isinstance(events[-1], ResultReceived) and resumed.resume is None
    # A connection that broke mid-body after an event id resumes alike; before any id it fails.
    broken = HttpResponseParser(client, call, status=200, content_type=b"text/event-stream")
    broken.feed(b"id: p1\ndata: \n\n")
    assert broken.interrupted() == Resume(last_event_id="p1", retry_ms=None)
    fresh = HttpResponseParser(client, call, status=200, content_type=b"text/event-stream")
    assert fresh.interrupted() is None
    # A 2026-07-28 response stream is never resumed.
    modern = make_client()
    request = modern.call_tool("slow", {})
    stateless = HttpResponseParser(modern, request, status=200, content_type=b"text/event-stream")
    stateless.feed(b"id: p0\ndata: \n\n")
    assert stateless.interrupted() is None


def test_the_get_stream_yields_server_requests_and_notifications_and_drops_responses() -> None:
    client = initialized()
    with pytest.raises(RemoteProtocolError):
        SessionStreamParser(client, status=405, content_type=b"text/plain")
    with pytest.raises(RemoteProtocolError):
        SessionStreamParser(client, status=200, content_type=b"application/json")
    parser = SessionStreamParser(client, status=200, content_type=b"text/event-stream; charset=utf-8")
    notes: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"},
        {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "file:///a"}},
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}},
        {"jsonrpc": "2.0", "id": 99, "result": {}},  # a response: not allowed on this stream
        ELICIT,
    ]
    events = parser.feed(b"id: s0\ndata: \n\n" + sse(*notes)) + parser.feed(b"retry: 500\n\n") + parser.close()
    listed, updated, logged, asked = events
    assert isinstance(listed, ListChanged) and listed.kind == "tools" and listed.subscription_id is None
    assert isinstance(updated, ResourceUpdated) and updated.uri == "file:///a" and updated.subscription_id is None
    assert isinstance(logged, LogMessage)
    assert isinstance(asked, ServerRequest) and asked.for_request is None
    assert parser.dropped == 1 and parser.last_event_id == "e5" and parser.retry_ms == 500


def test_meta_of_the_host_goes_with_the_request_and_the_engine_keys_stay_the_engine_s() -> None:
    client = make_client()
    sent = body(client.call_tool("echo", {}, meta={"example.com/trace": "t1"}, progress_token="p"))
    assert sent["params"]["_meta"]["example.com/trace"] == "t1" and sent["params"]["_meta"]["progressToken"] == "p"
    for key in ("progressToken", "io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/logLevel"):
        with pytest.raises(LocalProtocolError):
            client.call_tool("echo", {}, meta={key: "x"})
    era = initialized()
    assert body(era.read_resource("file:///a", meta={"example.com/trace": "t2"}))["params"]["_meta"] == {
        "example.com/trace": "t2"}


# -- results checked -----------------------------------------------------------------------------------


def list_tools(client: Client, tools: list[dict[str, Any]]) -> None:
    event = answer(client, client.list_tools(), {"tools": tools})[-1]
    assert isinstance(event, ResultReceived)


def call(client: Client, name: str, result: dict[str, Any]) -> ResultReceived:
    event = answer(client, client.call_tool(name, {}), result)[-1]
    assert isinstance(event, ResultReceived)
    return event


def test_structured_content_is_checked_against_the_listed_output_schema() -> None:
    client = initialized(validator=mcpwire.jsonschema_validator())
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    list_tools(client, [{"name": "counted", "inputSchema": {"type": "object"}, "outputSchema": schema},
                        {"name": "free", "inputSchema": {"type": "object"}}])
    good = call(client, "counted", {"content": [], "structuredContent": {"n": 1}})
    assert good.problem is None and good.value is not None
    bad = call(client, "counted", {"content": [], "structuredContent": {"n": "one"}})
    assert bad.problem is not None and "does not match its outputSchema" in bad.problem
    missing = call(client, "counted", {"content": []})
    assert missing.problem == "tool 'counted' declares an outputSchema but its result has no structuredContent"
    assert call(client, "counted", {"content": [], "isError": True}).problem is None  # an error result: no check
    assert call(client, "free", {"content": [], "structuredContent": "anything"}).problem is None
    unchecked = initialized()  # no validator: nothing checked
    list_tools(unchecked, [{"name": "counted", "inputSchema": {"type": "object"}, "outputSchema": schema}])
    assert call(unchecked, "counted", {"content": [], "structuredContent": {"n": "one"}}).problem is None


def test_a_result_that_does_not_match_its_type_says_so() -> None:
    client = initialized()
    broken = call(client, "x", {"content": "not a list"})
    assert broken.value is None and broken.problem is not None and broken.problem.startswith(
        "the result does not match CallToolResult")


def test_headers_in_the_form_http_libraries_take() -> None:
    modern = make_client().call_tool("echo", {"x": 1})
    assert modern.header_dict == {k.decode(): v.decode() for k, v in modern.headers}
    assert modern.header_dict["MCP-Protocol-Version"] == "2026-07-28" and modern.header_dict["Mcp-Name"] == "echo"
    note = initialized().notification("notifications/roots/list_changed")
    assert note.header_dict["Mcp-Session-Id"] == SID and len(note.header_dict) == len(note.headers)
