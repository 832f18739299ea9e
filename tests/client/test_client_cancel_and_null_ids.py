"""Two rules of the client engine, bytes only:

- ``initialize`` is never cancelled ("The ``initialize`` request MUST NOT be cancelled by
  clients", specification 2025-11-25: Basic > Utilities > Cancellation): ``Client.may_cancel``
  says so, ``Client.cancel`` and ``ClientStdioConnection.cancel`` raise, and the request stays
  in flight;
- a result with id null answers no request (schema: ``JSONRPCResultResponse.id`` is required),
  not even the one request of an HTTP response stream; an error with id null there is that
  request's (JSON-RPC 2.0 section 5: the id is null when it could not be read).
"""

from __future__ import annotations

import msgspec
import pytest

from mcpwire import ClientStdioConnection, ErrorResult, HttpResponseParser, LocalProtocolError, RemoteProtocolError
from mcpwire.client.events import ClientEvent

from test_client_era import initialized, make_client


def test_initialize_may_not_be_cancelled() -> None:
    client = make_client()
    handshake = client.initialize()
    assert not client.may_cancel(handshake)
    with pytest.raises(LocalProtocolError, match="initialize must not be cancelled"):
        client.cancel(handshake)
    conn = ClientStdioConnection(client)
    conn.send(handshake)
    with pytest.raises(LocalProtocolError):
        conn.cancel(handshake)
    assert conn.in_flight == 1  # still waited for


def test_any_other_request_may_be() -> None:
    client = initialized()
    call = client.call_tool("echo", {})
    assert client.may_cancel(call)
    conn = ClientStdioConnection(client)
    conn.send(call)
    line = msgspec.json.decode(conn.cancel(call))
    assert line["method"] == "notifications/cancelled" and line["params"]["requestId"] == call.id
    assert conn.in_flight == 0


def _on_call_stream(body: bytes) -> list[ClientEvent]:
    client = initialized()
    call = client.call_tool("echo", {})
    parser = HttpResponseParser(client, call, status=200, content_type=b"application/json")
    return parser.feed(body) + parser.close()


def test_a_result_with_id_null_answers_no_request() -> None:
    with pytest.raises(RemoteProtocolError, match="result with id null"):
        _on_call_stream(b'{"jsonrpc": "2.0", "id": null, "result": {"content": []}}')


def test_an_error_with_id_null_is_the_stream_s_one_request_s() -> None:
    (event,) = _on_call_stream(b'{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}')
    assert isinstance(event, ErrorResult) and event.request_id is not None and event.code == -32700
