"""Caching hints on results (``ResultReceived.ttl_ms`` / ``cache_scope``) and results read back
from a response cache (``Client.cached_result``), through the server engine's own bytes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec
import pytest

from mcpwire import (
    CachePolicy, HttpExchange, HttpRequest, Keyring, LocalProtocolError, RemoteProtocolError, ResponseBody, ResponseHead, Server,
)
from mcpwire.client.engine import Client
from mcpwire.client.events import OutgoingRequest, ResultReceived
from mcpwire.client.stream import HttpResponseParser
from mcpwire.types import Implementation, ReadResourceResult, Resource, TextResourceContents, Tool

NOW = 1_800_000_000.0


def make_client(**kw: Any) -> Client:
    return Client(Implementation(name="cli", version="0.1"), capabilities={}, **kw)


def parsed(client: Client, request: OutgoingRequest, outputs: Iterable[Any]) -> ResultReceived:
    status, ctype, body = 0, b"", b""
    for item in outputs:
        if isinstance(item, ResponseHead):
            status, ctype = item.status, {k.lower(): v for k, v in item.headers}.get(b"content-type", b"")
        else:
            assert isinstance(item, ResponseBody)
            body += item.data
    parser = HttpResponseParser(client, request, status=status, content_type=ctype)
    event = (parser.feed(body) + parser.close())[-1]
    assert isinstance(event, ResultReceived)
    return event


def post(server: Server, request: OutgoingRequest) -> Any:
    return server.receive_http(HttpRequest(method="POST", target="/mcp", headers=list(request.headers), body=request.body),
                               now=NOW)


def served(client: Client, request: OutgoingRequest, server: Server) -> ResultReceived:
    return parsed(client, request, post(server, request))


def make_server(**kw: Any) -> Server:
    server = Server(Implementation(name="srv", version="1"), keyring=Keyring.single(b"k" * 32), **kw)
    server.add_tool(Tool(name="echo", description="Echo", input_schema={"type": "object"}))
    server.add_resource(Resource(uri="test://a", name="a"))
    return server


def received(data: dict[str, Any], method: str = "tools/list") -> ResultReceived:
    return ResultReceived(request_id=1, method=method, value=None, data=data)


def test_the_hints_are_what_the_server_sent() -> None:
    client = make_client()
    server = make_server(cache={"tools/list": CachePolicy(ttl_ms=1500, scope="public")})
    listed = served(client, client.list_tools(), server)
    assert (listed.ttl_ms, listed.cache_scope) == (1500, "public")
    assert (served(client, client.discover(), server).ttl_ms, served(client, client.discover(), server).cache_scope) \
        == (0, "private")  # the engine's default policy


@pytest.mark.parametrize(("data", "ttl", "scope"), [
    ({}, None, None),
    ({"ttlMs": 0, "cacheScope": "private"}, 0, "private"),
    ({"ttlMs": -1, "cacheScope": "shared"}, None, None),
    ({"ttlMs": True, "cacheScope": 1}, None, None),
    ({"ttlMs": 1.5, "cacheScope": None}, None, None),
    ({"ttlMs": "10", "cacheScope": "PUBLIC"}, None, None),
])
def test_absent_or_malformed_hints_read_as_none(data: dict[str, Any], ttl: int | None, scope: str | None) -> None:
    result = received(data)
    assert (result.ttl_ms, result.cache_scope) == (ttl, scope)


def test_a_cached_result_is_read_as_if_just_received() -> None:
    first, server = make_client(), make_server(cache={"resources/read": CachePolicy(ttl_ms=60_000, scope="private")})
    request = first.read_resource("test://a")
    exchange = post(server, request)
    assert isinstance(exchange, HttpExchange)  # a read is the host's to answer
    live = parsed(first, request, exchange.complete(ReadResourceResult(contents=[TextResourceContents(uri="test://a", text="hello")])))
    other = make_client()
    again = other.read_resource("test://a")
    kept = other.cached_result(again, live.raw)
    assert kept.request_id == again.id and kept.method == "resources/read" and kept.raw == live.raw
    assert kept.value == live.value and isinstance(kept.value, ReadResourceResult)
    assert (kept.ttl_ms, kept.cache_scope) == (60_000, "private")


def test_a_cached_tools_list_teaches_a_new_engine_its_header_annotations() -> None:
    tools = {"ttlMs": 1000, "cacheScope": "public", "tools": [
        {"name": "bad", "inputSchema": {"type": "object", "properties": {"v": {"type": "number", "x-mcp-header": "V"}}}},
        {"name": "regional", "inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"}}}},
    ]}
    client = make_client()
    kept = client.cached_result(client.list_tools(), msgspec.json.encode(tools))
    assert [t.name for t in kept.value.tools] == ["regional"] and "bad" in client.rejected_tools
    assert dict(client.call_tool("regional", {"region": "eu"}).headers)[b"Mcp-Param-Region"] == b"eu"
    with pytest.raises(LocalProtocolError):
        client.call_tool("bad", {"v": 1})


def test_only_a_complete_result_can_come_from_a_cache() -> None:
    client = make_client()
    with pytest.raises(RemoteProtocolError):
        client.cached_result(client.list_tools(), b"[1]")
    with pytest.raises(RemoteProtocolError):
        client.cached_result(client.list_tools(), b'{"resultType": "task", "ttlMs": 1, "cacheScope": "public"}')
    ask = {"resultType": "input_required", "inputRequests": {"x": {"method": "roots/list", "params": {}}}}
    read = client.read_resource("test://a")
    with pytest.raises(RemoteProtocolError):
        client.cached_result(read, msgspec.json.encode(ask))
    with pytest.raises(LocalProtocolError):  # no input round is left pending for it
        client.retry(read, {})
