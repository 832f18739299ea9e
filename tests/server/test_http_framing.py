"""A request framed both by ``Transfer-Encoding`` and by ``Content-Length`` is refused by the
engine's admission, whatever HTTP parser the host runs (mcpwire/server/http.py ``admit_target``).

RFC 9112 section 6.3: such a message may have been framed differently by a proxy in front
(request smuggling), and a server that receives it MUST close the connection after
responding. The engine answers 400 (JSON-RPC -32600) with ``connection: close`` from
``receive_http`` and from ``check_head``, before anything else; a head whose call took the call
fast path before does not take it with a ``Transfer-Encoding``. A ``Transfer-Encoding`` alone
(a chunked body the server has already read whole) is admitted as ever.
"""

from __future__ import annotations

import json
from typing import Any, cast

import msgspec
import pytest
from test_call_fast_path import NOW, make_server, plain_request

from mcpwire import HttpExchange, HttpRequest, ResponseBody, ResponseHead

FRAMING = [(b"transfer-encoding", b"chunked")]


def refused(answer: Any) -> None:
    assert isinstance(answer, tuple) and len(answer) == 2, answer
    head, body = answer
    assert isinstance(head, ResponseHead) and isinstance(body, ResponseBody)
    assert head.status == 400 and (b"connection", b"close") in head.headers, head
    message = json.loads(body.data)
    assert message["error"]["code"] == -32600 and message["id"] is None, message
    assert "Transfer-Encoding and Content-Length" in message["error"]["message"]


def with_headers(request: HttpRequest, extra: list[tuple[bytes, bytes]], first: bool = False) -> HttpRequest:
    headers = list(request.headers)
    return msgspec.structs.replace(request, headers=tuple([*extra, *headers] if first else [*headers, *extra]))


@pytest.mark.parametrize("first", [True, False], ids=["te-first", "te-last"])
@pytest.mark.parametrize("spelling", [b"transfer-encoding", b"Transfer-Encoding"])
def test_transfer_encoding_with_content_length_is_400_and_close(first: bool, spelling: bytes) -> None:
    server = make_server(256, sessions=False)
    request = with_headers(plain_request(), [(spelling, b"chunked")], first)
    refused(server.receive_http(request, now=NOW))
    refused(server.check_head(request.method, request.target, request.headers))


def test_a_head_that_took_the_fast_path_does_not_take_it_with_transfer_encoding() -> None:
    server = make_server(256, sessions=False)
    for _ in range(2):  # learned, then taken
        assert isinstance(server.receive_http(plain_request(), now=NOW), HttpExchange)
    request = with_headers(plain_request(), FRAMING)
    refused(server.receive_http(request, now=NOW))
    refused(server.check_head(request.method, request.target, request.headers))
    assert isinstance(server.receive_http(plain_request(), now=NOW), HttpExchange)  # the fast path is still there


def test_repeated_headers_are_refused_the_same_way() -> None:
    server = make_server(256, sessions=False)
    request = with_headers(plain_request(), [*FRAMING, (b"accept", b"application/json, text/event-stream")])
    refused(server.receive_http(request, now=NOW))


def test_transfer_encoding_alone_is_admitted() -> None:
    server = make_server(256, sessions=False)
    request = plain_request()
    pairs = cast(list[tuple[bytes, bytes]], list(request.headers))
    chunked = msgspec.structs.replace(request, headers=tuple([p for p in pairs if p[0] != b"content-length"] + FRAMING))
    assert isinstance(server.receive_http(chunked, now=NOW), HttpExchange)
    assert server.check_head(chunked.method, chunked.target, chunked.headers) is None
