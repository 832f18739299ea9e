"""The client engine takes any id the schema's RequestId allows (a string or an integer,
unbounded) from an initialize-era server's requests, and echoes it in its answer as the same
JSON token: a 300-byte string, 2**63, -2**63-1, 10**20 (``100000000000000000000``, never
``1e20``). The bounds our server sets on ids (256 bytes, int64) are the server's alone. A float,
a boolean or null is still no id (-32600 with id null). Through bytes only: a call's response
stream, the session's GET stream and stdio lines."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from mcpwire import ClientStdioConnection, HttpResponseParser, ResultReceived, ServerRequest, SessionStreamParser
from mcpwire.client.engine import Client
from mcpwire.sessions import InvalidMessage

from test_client_era import initialized

# Each id as the server writes it: the JSON token the answer must carry, byte for byte.
TOKENS = [
    b'"' + b"x" * 300 + b'"',  # past our server's 256 bytes
    b'"' + "\u00e9\u4e2d\U0001f600".encode() * 40 + b'"',  # 360 bytes of UTF-8
    b"9223372036854775808",  # 2**63, past int64
    b"-9223372036854775809",  # -2**63-1
    b"18446744073709551616",  # 2**64, past uint64
    b"100000000000000000000",  # 10**20: a double would print it 1e20
    b"9" * 4300,  # the most digits msgspec decodes (4299 after a minus sign)
    b"-" + b"9" * 4299,
]
NO_IDS = [b"1.5", b"1.0", b"1e20", b"true", b"null"]  # a float, a boolean, null: -32600, id null


class _Id(msgspec.Struct):
    id: msgspec.Raw


def id_token(body: bytes) -> bytes:
    """The ``id`` member of a message as written."""
    return bytes(msgspec.json.decode(body, type=_Id).id)


def request(token: bytes, method: str = "ping") -> bytes:
    return b'{"jsonrpc":"2.0","id":' + token + b',"method":"' + method.encode() + b'"}'


def on_call_stream(client: Client, *lines: bytes) -> list[Any]:
    """The events of ``lines`` on a tools/call's SSE response stream (then its result)."""
    call = client.call_tool("echo", {})
    parser = HttpResponseParser(client, call, status=200, content_type=b"text/event-stream")
    final = b'{"jsonrpc":"2.0","id":' + msgspec.json.encode(call.id) + b',"result":{"content":[]}}'
    events = parser.feed(b"".join(b"data: " + line + b"\n\n" for line in (*lines, final))) + parser.close()
    assert isinstance(events[-1], ResultReceived)
    return events[:-1]


def on_get_stream(client: Client, *lines: bytes) -> list[Any]:
    parser = SessionStreamParser(client, status=200, content_type=b"text/event-stream")
    return parser.feed(b"".join(b"data: " + line + b"\n\n" for line in lines)) + parser.close()


def on_stdio(client: Client, *lines: bytes) -> list[Any]:
    return ClientStdioConnection(client).receive_data(b"".join(line + b"\n" for line in lines))


READERS: list[Callable[..., list[Any]]] = [on_call_stream, on_get_stream, on_stdio]


@pytest.mark.parametrize("read", READERS)
@pytest.mark.parametrize("token", TOKENS, ids=lambda t: t[:12].decode() + f"..{len(t)}")
def test_a_server_request_with_any_schema_valid_id_is_answered_with_that_id_token(
        read: Callable[..., list[Any]], token: bytes) -> None:
    client = initialized()
    ping, unknown = read(client, request(token), request(token, "example/unknown"))
    assert isinstance(ping, ServerRequest) and ping.method == "ping"
    assert msgspec.json.encode(ping.request_id) == token
    answer = client.answer(ping, {}).body
    assert answer == b'{"jsonrpc":"2.0","id":' + token + b',"result":{}}'
    assert isinstance(unknown, ServerRequest) and unknown.request is None
    refused = client.answer_error(unknown, -32601, "Method not found: example/unknown").body
    assert id_token(refused) == token and msgspec.json.decode(refused)["error"]["code"] == -32601


@pytest.mark.parametrize("token", TOKENS[:6], ids=lambda t: t[:12].decode())
def test_an_invalid_request_with_such_an_id_is_answered_with_that_id(token: bytes) -> None:
    client = initialized()
    line = b'{"jsonrpc":"1.0","id":' + token + b',"method":"ping"}'
    (event,) = on_call_stream(client, line)
    assert isinstance(event, InvalidMessage) and event.code == -32600
    assert id_token(client.reject(event).body) == token


@pytest.mark.parametrize("token", NO_IDS)
def test_a_float_a_boolean_or_null_is_still_no_id(token: bytes) -> None:
    client = initialized()
    (event,) = on_call_stream(client, request(token))
    assert isinstance(event, InvalidMessage) and (event.request_id, event.code, event.message) == (
        None, -32600, "Invalid Request: id must be a string or an integer")
    assert id_token(client.reject(event).body) == b"null"


def test_an_integer_past_what_msgspec_decodes_is_answered_with_id_null() -> None:
    client = initialized()
    for token in (b"9" * 4301, b"-" + b"9" * 4300):
        (event,) = on_call_stream(client, request(token))
        assert isinstance(event, InvalidMessage) and (event.request_id, event.code, event.message) == (
            None, -32600, "Invalid Request: a number is out of range")
