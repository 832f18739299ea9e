"""The GET stream's parser on an initialize-era session, through bytes only: a progress
notification there belongs to the request in flight whose token it names, read from the host's
own mapping as each notification arrives (specification 2025-11-25: Basic > Transports >
Streamable HTTP, Listening for Messages from the Server; Basic > Utilities > Progress)."""

from __future__ import annotations

import json
from typing import Any

from mcpwire import Client, HttpResponseParser, Progress, ResultReceived, SessionStreamParser
from mcpwire.types import Implementation


def initialized() -> Client:
    client = Client(Implementation(name="cli", version="0.1"))
    request = client.initialize()
    result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "old", "version": "9"}}
    parser = HttpResponseParser(client, request, status=200, content_type=b"application/json")
    event = (parser.feed(json.dumps({"jsonrpc": "2.0", "id": request.id, "result": result}).encode()) + parser.close())[-1]
    assert isinstance(event, ResultReceived)
    client.accept_initialize(event, "s1")
    return client


def progress(token: Any, value: float) -> bytes:
    note = {"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": token, "progress": value, "total": 2, "message": "half"}}
    return b"data: " + json.dumps(note).encode() + b"\n\n"


def test_progress_on_the_get_stream_names_the_request_in_flight_with_its_token() -> None:
    client = initialized()
    call = client.call_tool("slow", {}, progress_token="p1")
    in_flight: dict[str | int, str | int] = {}
    parser = SessionStreamParser(client, status=200, content_type=b"text/event-stream", progress_tokens=in_flight)
    assert parser.feed(progress("p1", 1)) == []  # nothing in flight names p1 yet
    in_flight["p1"] = call.id  # read as each notification arrives: the host's own mapping
    events = parser.feed(progress("p1", 1) + progress(1, 1) + progress("other", 1))
    assert events == [Progress(request_id=call.id, progress_token="p1", progress=1, total=2, message="half")]
    in_flight[1] = 7  # 1 and "1" are different tokens
    assert [e.request_id for e in parser.feed(progress("1", 2) + progress(1, 2)) if isinstance(e, Progress)] == [7]
    del in_flight["p1"]
    assert parser.feed(progress("p1", 2)) == []  # the call ended: its late progress is dropped


def test_without_a_mapping_progress_on_the_get_stream_is_dropped() -> None:
    parser = SessionStreamParser(initialized(), status=200, content_type=b"text/event-stream")
    assert parser.feed(progress("p1", 1)) + parser.close() == []
