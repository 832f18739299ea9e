"""The client engine answers an initialize-era server's invalid messages as JSON-RPC 2.0 says
(section 5: a call gets a Response; 5.1: -32600 Invalid Request, -32700 Parse error; the id
the call carried, or null when none can be read), with the answer the server engine's envelope
gives the same bytes, read with the ids a client takes (the schema's RequestId, not the server's
bounds); malformed notifications and responses stay unanswered, and a 2026-07-28 client
answers nothing. Through bytes only: HTTP response streams, the GET stream and stdio lines."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from mcpwire import (
    ClientStdioConnection, ErrorResult, HttpResponseParser, RemoteProtocolError, ResultReceived,
    SessionStreamParser,
)
from mcpwire.client.engine import Client
from mcpwire.sessions import InvalidMessage
from mcpwire.types import Implementation
from mcpwire.wire.envelope import SCHEMA_IDS, encode_error, decode_message

from test_client_era import SID, body, initialized

# Calls that are no valid request, each with an id that can be read: (line, id, code).
WITH_ID = [
    (b'{"id": 1001, "method": "ping"}', 1001, -32600),  # no "jsonrpc"
    (b'{"jsonrpc": "1.0", "id": "srv", "method": "ping"}', "srv", -32600),
    (b'{"jsonrpc": "2.0", "id": 7, "method": 5}', 7, -32600),  # method not a string
    (b'{"jsonrpc": "2.0", "id": 8, "method": "ping", "params": [1]}', 8, -32602),  # params not an object
]
# Messages whose id cannot be read: answered with id null, as JSON-RPC shows.
WITHOUT_ID = [
    (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', -32600),
    (b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', -32600),
    (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', -32600),
    (b'{"jsonrpc": "2.0"}', -32600),
    (b"[1, 2]", -32600),
    (b"not json", -32700),
]
# Never answered: a malformed notification, a malformed response.
UNANSWERED = [
    b'{"method": "notifications/message", "params": {"level": "info", "data": "x"}}',
    b'{"jsonrpc": "2.0", "id": 1001, "result": {}, "error": {"code": 1, "message": "both"}}',
]


def server_answer(line: bytes) -> dict[str, Any]:
    """What the server engine answers ``line`` with (its stdio and HTTP error path), with the
    request ids a client takes (``SCHEMA_IDS``: an id past the server's own bounds is still one)."""
    try:
        decode_message(line, SCHEMA_IDS)
    except RemoteProtocolError as exc:
        return json.loads(encode_error(exc.request_id, exc))  # type: ignore[no-any-return]
    raise AssertionError(f"{line!r} is valid")


def sse(*messages: bytes) -> bytes:
    return b"".join(b"data: " + m + b"\n\n" for m in messages)


def call_stream(client: Client, *lines: bytes) -> list[Any]:
    """A tools/call whose SSE response carries ``lines`` before its result."""
    call = client.call_tool("echo", {"text": "hi"})
    result = json.dumps({"jsonrpc": "2.0", "id": call.id, "result": {"content": []}}).encode()
    parser = HttpResponseParser(client, call, status=200, content_type=b"text/event-stream")
    events = parser.feed(sse(*lines, result)) + parser.close()
    assert isinstance(events[-1], ResultReceived) and parser.done
    return events[:-1]


@pytest.mark.parametrize(("line", "request_id", "code"), WITH_ID)
def test_an_invalid_call_with_an_id_is_answered_with_its_id_and_the_call_goes_on(
        line: bytes, request_id: Any, code: int) -> None:
    client = initialized()
    (event,) = call_stream(client, line)
    assert isinstance(event, InvalidMessage) and event.request_id == request_id and event.code == code
    reply = client.reject(event)
    assert body(reply) == server_answer(line)
    assert body(reply)["id"] == request_id and body(reply)["error"]["code"] == code
    headers = dict(reply.headers)
    assert headers[b"Mcp-Session-Id"] == SID.encode() and headers[b"MCP-Protocol-Version"] == b"2025-11-25"
    assert reply.line == reply.body + b"\n"


@pytest.mark.parametrize(("line", "code"), WITHOUT_ID)
def test_a_message_whose_id_cannot_be_read_is_answered_with_id_null(line: bytes, code: int) -> None:
    client = initialized()
    (event,) = call_stream(client, line)
    assert isinstance(event, InvalidMessage) and event.request_id is None and event.code == code
    assert body(client.reject(event)) == server_answer(line)
    assert body(client.reject(event))["id"] is None


@pytest.mark.parametrize("line", UNANSWERED)
def test_malformed_notifications_and_responses_stay_unanswered(line: bytes) -> None:
    client = initialized()
    conn = ClientStdioConnection(client)
    (event,) = conn.receive_data(line + b"\n")
    assert type(event) is ErrorResult and event.request_id is None  # reported, as before
    with pytest.raises(RemoteProtocolError):
        call_stream(client, line)


def test_stdio_lines_and_the_get_stream_give_the_same_event() -> None:
    client = initialized()
    conn = ClientStdioConnection(client)
    call = client.call_tool("echo", {})
    conn.send(call)
    events = conn.receive_data(b'{"id": 1001, "method": "ping"}\nnot json\n')
    # Named for the one call in flight (whose rounds it counts against), as a ServerRequest is.
    assert events == [InvalidMessage(request_id=1001, code=-32600, message="Expected a JSON-RPC 2.0 request",
                                     for_request=call.id),
                      InvalidMessage(request_id=None, code=-32700, message="Parse error", for_request=call.id)]
    assert conn.in_flight == 1  # the call waits on

    stream = SessionStreamParser(client, status=200, content_type=b"text/event-stream")  # serves no request
    assert stream.feed(sse(b'{"id": 1001, "method": "ping"}')) == [msgspec.structs.replace(events[0], for_request=None)]
    assert stream.dropped == 0


def test_a_2026_07_28_client_answers_nothing() -> None:
    # The client MUST NOT write JSON-RPC responses (2026-07-28: stdio, Sending Messages); over
    # HTTP it POSTs requests and notifications only.
    client = Client(Implementation(name="cli", version="0.1"))
    conn = ClientStdioConnection(client)
    (event,) = conn.receive_data(b'{"id": 1001, "method": "ping"}\n')
    assert type(event) is ErrorResult and event.request_id is None and event.code == -32600
    with pytest.raises(RemoteProtocolError):
        call_stream(client, b'{"id": 1001, "method": "ping"}')
