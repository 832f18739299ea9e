"""The request-id bounds are a parameter of the envelope decode: ``SERVER_IDS`` (the default,
our server's profile: a string of at most 256 UTF-8 bytes or an int64 integer) and
``SCHEMA_IDS`` (the schema's RequestId: any string, any integer, what the client engine takes).
Both refuse what is no id at all (a float, a boolean, null, an array); an integer is decoded
exactly and encodes back as the same digits, up to msgspec's 4300 characters."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from mcpwire import RemoteProtocolError
from mcpwire.wire.envelope import (
    MAX_ID_BYTES, SCHEMA_IDS, SERVER_IDS, Request, Response, UnansweredMessage, check_request_id, decode_message,
    encode_error_object, encode_result,
)

WITHIN = ["x" * MAX_ID_BYTES, "\u00e9" * (MAX_ID_BYTES // 2), 2**63 - 1, -(2**63), 0, ""]
BEYOND = ["x" * (MAX_ID_BYTES + 1), "\u00e9" * (MAX_ID_BYTES // 2) + "x", 2**63, -(2**63) - 1, 10**20, 10**4299]
NO_IDS: list[Any] = [1.5, 1.0, True, False, None, [1], {"a": 1}]


def ping(request_id: Any) -> bytes:
    return b'{"jsonrpc":"2.0","id":' + msgspec.json.encode(request_id) + b',"method":"ping"}'


@pytest.mark.parametrize("request_id", WITHIN + BEYOND, ids=repr)
def test_the_schema_bounds_take_any_string_and_integer_and_keep_it_exact(request_id: Any) -> None:
    message = decode_message(ping(request_id), SCHEMA_IDS)
    assert message == Request(id=request_id, method="ping")
    assert check_request_id(request_id, SCHEMA_IDS) == request_id
    token = msgspec.json.encode(request_id)
    assert encode_result(message.id, {}) == b'{"jsonrpc":"2.0","id":' + token + b',"result":{}}'
    assert encode_error_object(message.id, -32601, "no") == (
        b'{"jsonrpc":"2.0","id":' + token + b',"error":{"code":-32601,"message":"no"}}')


@pytest.mark.parametrize("request_id", WITHIN, ids=repr)
def test_the_server_bounds_take_what_is_within_them(request_id: Any) -> None:
    assert decode_message(ping(request_id)) == Request(id=request_id, method="ping")
    assert check_request_id(request_id) == check_request_id(request_id, SERVER_IDS) == request_id


@pytest.mark.parametrize("request_id", BEYOND, ids=repr)
def test_the_server_bounds_refuse_what_is_past_them_with_id_null(request_id: Any) -> None:
    for bounds in ((), (SERVER_IDS,)):  # the default, and named
        with pytest.raises(RemoteProtocolError) as caught:
            decode_message(ping(request_id), *bounds)
        assert (caught.value.code, caught.value.request_id) == (-32600, None)
        assert caught.value.message == "Invalid Request: id must be a string of at most 256 bytes or an int64 integer"
    assert check_request_id(request_id) is None


@pytest.mark.parametrize("request_id", NO_IDS, ids=repr)
@pytest.mark.parametrize("bounds", [SERVER_IDS, SCHEMA_IDS], ids=["server", "schema"])
def test_what_is_no_id_is_refused_by_both(request_id: Any, bounds: Any) -> None:
    with pytest.raises(RemoteProtocolError) as caught:
        decode_message(ping(request_id), bounds)
    assert (caught.value.code, caught.value.request_id) == (-32600, None)
    assert caught.value.message == bounds.refusal
    assert check_request_id(request_id, bounds) is None


def test_each_profile_names_its_bounds_in_its_refusal() -> None:
    assert SERVER_IDS.refusal == "Invalid Request: id must be a string of at most 256 bytes or an int64 integer"
    assert SCHEMA_IDS.refusal == "Invalid Request: id must be a string or an integer"


@pytest.mark.parametrize("bounds", [SERVER_IDS, SCHEMA_IDS], ids=["server", "schema"])
def test_an_integer_msgspec_cannot_read_is_refused_by_both(bounds: Any) -> None:
    for token in (b"9" * 4301, b"-" + b"9" * 4300):
        with pytest.raises(RemoteProtocolError) as caught:
            decode_message(b'{"jsonrpc":"2.0","id":' + token + b',"method":"ping"}', bounds)
        assert (caught.value.code, caught.value.request_id) == (-32600, None)


def test_responses_follow_the_same_bounds() -> None:
    big = b'{"jsonrpc":"2.0","id":100000000000000000000,"result":{}}'
    with pytest.raises(UnansweredMessage):
        decode_message(big)  # the server answers no response anyway
    assert decode_message(big, SCHEMA_IDS) == Response(id=10**20, result=msgspec.Raw(b"{}"))
    with pytest.raises(UnansweredMessage):
        decode_message(b'{"jsonrpc":"2.0","id":1.5,"result":{}}', SCHEMA_IDS)
