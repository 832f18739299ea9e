"""An ``initialize`` answered over HTTP with a status other than 2xx opened no session
(specification 2025-11-25: Basic > Lifecycle, Initialization; Basic > Transports > Streamable
HTTP, Session Management): the engine's :class:`HttpResponseParser` raises
:class:`RemoteProtocolError` -32000 naming the status instead of handing on the result, for a
JSON body and an event stream, fed whole and byte by byte. An error response keeps its
meaning, and other requests are unchanged. Through bytes only."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpwire import ErrorResult, HttpResponseParser, RemoteProtocolError, ResultReceived
from mcpwire.client.engine import Client
from mcpwire.types import Implementation
from mcpwire.wire.errors import ErrorCode

RESULT = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}


def era_client() -> Client:
    return Client(Implementation(name="cli", version="0.1"), protocol_version="2025-11-25")


def read(client: Client, method: str, status: int, message: dict[str, Any], *, sse: bool, chunked: bool) -> list[Any]:
    """The events of one response to a fresh ``method`` request (JSON or SSE), fed whole or byte by byte."""
    request = client.initialize() if method == "initialize" else client.request(method, {})
    data = json.dumps({"jsonrpc": "2.0", "id": request.id, **message}).encode()
    payload = b"data: " + data + b"\n\n" if sse else data
    parser = HttpResponseParser(client, request, status=status,
                                content_type="text/event-stream" if sse else "application/json")
    events: list[Any] = []
    for chunk in ([payload[i:i + 1] for i in range(len(payload))] if chunked else [payload]):
        events += parser.feed(chunk)
    return events + parser.close()


@pytest.mark.parametrize("chunked", [False, True], ids=["whole", "bytewise"])
@pytest.mark.parametrize("sse", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("status", [404, 400, 500, 301])
def test_an_initialize_result_with_an_error_status_is_refused(status: int, sse: bool, chunked: bool) -> None:
    client = era_client()
    with pytest.raises(RemoteProtocolError, match=f"HTTP {status} response to initialize") as caught:
        read(client, "initialize", status, {"result": RESULT}, sse=sse, chunked=chunked)
    assert caught.value.code == ErrorCode.TRANSPORT_ERROR and caught.value.data == {"status": status}
    assert client.session_id is None and client.initialized is None


@pytest.mark.parametrize("status", [200, 201, 202])
def test_an_initialize_result_with_a_2xx_status_is_the_result(status: int) -> None:
    client = era_client()
    event, = read(client, "initialize", status, {"result": RESULT}, sse=False, chunked=False)
    assert isinstance(event, ResultReceived)
    client.accept_initialize(event, "s1")
    assert client.session_id == "s1"


def test_an_initialize_error_with_an_error_status_is_still_the_error() -> None:
    error = {"error": {"code": -32602, "message": "Unsupported protocol version"}}
    event, = read(era_client(), "initialize", 400, error, sse=False, chunked=False)
    assert isinstance(event, ErrorResult) and event.code == -32602


def test_another_request_s_result_is_not_judged_by_this_rule() -> None:
    client = Client(Implementation(name="cli", version="0.1"))
    event, = read(client, "tools/list", 500, {"result": {"tools": []}}, sse=False, chunked=False)
    assert isinstance(event, ResultReceived)
