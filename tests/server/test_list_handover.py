"""Lists handed to the host (``Server.hand_over_lists``): the engine answers the four lists alone
unless the host asks for them; then each comes as a ``ListRequest`` exchange carrying the page
the engine would have sent, on the stateless revision, on initialize-era sessions over HTTP and
on stdio. Completed with that page the answer is the engine's own (the same JSON); completed
with less it lists less."""

from __future__ import annotations

import itertools
import json
from typing import Any

import msgspec
import pytest
from schema_check import assemble, call, exchange, make_server, request

import mcpwire
from mcpwire import HttpRequest, Keyring, ListRequest, StdioConnection, StdioExchange
from mcpwire.types import Implementation, ListToolsResult, Prompt, Resource, Tool

NOW = 1_800_000_000.0
OBJ = {"type": "object"}
LISTS = ("tools/list", "resources/list", "resources/templates/list", "prompts/list")


def server(**kw: Any) -> mcpwire.Server:
    made = make_server(page_size=2, **kw)
    for name in ("a", "b", "c"):
        made.add_tool(Tool(name=name, input_schema=OBJ))
    made.add_resource(Resource(uri="test://r", name="r"))
    made.add_prompt(Prompt(name="p"))
    return made


def test_lists_are_the_engines_own_answers_by_default() -> None:
    reply = call(server(), request("tools/list", {}))
    assert [t["name"] for t in reply.message["result"]["tools"]] == ["a", "b"]


@pytest.mark.parametrize("method", LISTS)
def test_a_handed_over_list_completed_with_its_page_is_the_engines_answer(method: str) -> None:
    own = call(server(), request(method, {}, id=7))
    handing = server()
    handing.hand_over_lists([method])
    ex = exchange(handing, request(method, {}, id=7))
    event = ex.event
    assert isinstance(event, ListRequest) and event.method == method and event.cursor is None
    assert event.request_id == 7 and event.meta.protocol_version == "2026-07-28"
    assert assemble(ex.complete(event.page), method).message == own.message


def test_a_page_listing_less_is_sent_and_its_cursor_still_leads_on() -> None:
    handing = server()
    handing.hand_over_lists({"tools/list"})
    first = exchange(handing, request("tools/list", {}))
    assert isinstance(first.event, ListRequest)
    page = first.event.page
    assert isinstance(page, ListToolsResult) and isinstance(page.next_cursor, str)
    body = assemble(first.complete(msgspec.structs.replace(page, tools=page.tools[:1])), "tools/list").message
    assert [t["name"] for t in body["result"]["tools"]] == ["a"]
    second = exchange(handing, request("tools/list", {"cursor": body["result"]["nextCursor"]}, id=2)).event
    assert isinstance(second, ListRequest) and isinstance(second.page, ListToolsResult)
    assert second.cursor == body["result"]["nextCursor"] and [t.name for t in second.page.tools] == ["c"]


def test_handing_back_and_bad_choices() -> None:
    handing = server()
    handing.hand_over_lists(["prompts/list"])
    assert isinstance(post_answer(handing, "tools/list"), tuple)  # still the engine's
    handing.hand_over_lists([])
    assert isinstance(post_answer(handing, "prompts/list"), tuple)
    for bad in (["tools/call"], "tools/list"):
        with pytest.raises(mcpwire.LocalProtocolError):
            handing.hand_over_lists(bad)


def post_answer(made: mcpwire.Server, method: str) -> Any:
    from schema_check import http_request

    return made.receive_http(http_request(request(method, {})), now=NOW)


# -- initialize-era sessions ------------------------------------------------------------------------
BASE = [(b"content-type", b"application/json"), (b"accept", b"application/json, text/event-stream")]


def era_server() -> mcpwire.Server:
    made = mcpwire.Server(Implementation(name="s", version="1"), keyring=Keyring.single(b"k" * 32),
                          session_ids=(f"sid-{i}" for i in itertools.count()))
    made.add_tool(Tool(name="t", title="T", input_schema=OBJ))
    made.add_tool(Tool(name="u", input_schema=OBJ, output_schema={"type": "array"}))  # hidden from sessions
    return made


def era_post(made: mcpwire.Server, body: Any, headers: list[tuple[bytes, bytes]]) -> Any:
    return made.receive_http(HttpRequest(method="POST", target="/mcp", headers=BASE + headers,
                                         body=json.dumps(body).encode()), now=NOW)


def era_session(made: mcpwire.Server, version: str) -> list[tuple[bytes, bytes]]:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}
    answer = era_post(made, init, [])
    head = next(p for p in answer if isinstance(p, mcpwire.ResponseHead))
    return [(b"mcp-session-id", dict(head.headers)[b"mcp-session-id"]), (b"mcp-protocol-version", version.encode())]


def body_of(outputs: Any) -> Any:
    data = b"".join(p.data for p in outputs if isinstance(p, mcpwire.ResponseBody))
    text = data.decode()
    if text.startswith(("event:", "id:", "data:")):
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
    return json.loads(text)


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2025-03-26"])
def test_on_a_session_the_handed_page_is_the_revisions_list(version: str) -> None:
    plain = era_server()
    own = body_of(era_post(plain, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, era_session(plain, version)))
    handing = era_server()
    handing.hand_over_lists(["tools/list"])
    ex = era_post(handing, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, era_session(handing, version))
    assert isinstance(ex, mcpwire.HttpExchange) and isinstance(ex.event, ListRequest)
    assert ex.event.meta.protocol_version == version and isinstance(ex.event.page, ListToolsResult)
    assert [t.name for t in ex.event.page.tools] == ["t"]
    assert body_of(ex.complete(ex.event.page)) == own
    assert "ttlMs" not in own["result"] and "resultType" not in own["result"]


def test_on_stdio_a_handed_list_is_an_exchange() -> None:
    made = era_server()
    made.hand_over_lists(["tools/list"])
    connection = StdioConnection(made)
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}
    lines = [json.dumps(m).encode() + b"\n" for m in (
        init, {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})]
    out = connection.receive_data(b"".join(lines), now=NOW)
    ex = next(o for o in out if isinstance(o, StdioExchange))
    assert isinstance(ex.event, ListRequest)
    answer = json.loads(ex.complete(ex.event.page))
    assert answer == {"jsonrpc": "2.0", "id": 2, "result": {"tools": [{"name": "t", "title": "T", "inputSchema": OBJ}]}}
