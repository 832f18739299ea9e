"""In-process variants of the official ``mcp`` SDK (pinned by the ``bench`` extra).

The SDK's Streamable HTTP app (``MCPServer.streamable_http_app(stateless_http=True, ...)``) is
a Starlette ASGI app; a request whose ``MCP-Protocol-Version`` header is 2026-07-28 takes its
single-exchange path (``mcp.server._streamable_http_modern.handle_modern_request``). We call
the ASGI app directly (:class:`~tests.bench._asgi.AsgiDriver`), inside the session manager's
``run()`` (the app's lifespan), entered once. No sockets; what is left out is what uvicorn
does (HTTP parsing, building the scope).
"""

from __future__ import annotations

from time import perf_counter_ns
from collections.abc import Callable
from typing import Any

from ._asgi import AsgiDriver
from ._harness import Variant
from ._workload import (
    CALL, CALL_HEADERS, INIT, INITIALIZED, LIST_FIRST, LIST_TOOLS, SESSION_CALL, headers, sdk_asgi, sdk_list_server,
    sdk_session_asgi, sdk_small_server, session_headers,
)


def sdk_driver(server: Any, *, json_response: bool = True) -> AsgiDriver:
    return AsgiDriver(sdk_asgi(server, json_response=json_response), server.session_manager.run)


def call_variant(drivers: list[AsgiDriver]) -> Variant:
    d = sdk_driver(sdk_small_server())
    drivers.append(d)
    status, body = d.run(d.call(CALL, CALL_HEADERS))
    assert status == 200 and b'"text":"hello"' in body and b'"resultType":"complete"' in body, (status, body)
    return d.variant("sdk.call", CALL, CALL_HEADERS)


def call_sse_mode_variant(drivers: list[AsgiDriver]) -> Variant:
    d = sdk_driver(sdk_small_server(), json_response=False)
    drivers.append(d)
    status, body = d.run(d.call(CALL, CALL_HEADERS))
    assert status == 200 and b'"text":"hello"' in body, (status, body)
    return d.variant("sdk.call_sse_mode", CALL, CALL_HEADERS)


def session_call_variant(drivers: list[AsgiDriver]) -> Variant:
    """The same call on a 2025-11-25 session of the SDK's app (its default, stateful mode)."""
    srv = sdk_small_server()
    d = AsgiDriver(sdk_session_asgi(srv), srv.session_manager.run)
    drivers.append(d)
    status, body = d.run(d.call(INIT, session_headers(INIT, None)))
    session_id = d.last_headers.get(b"mcp-session-id", b"").decode()
    assert status == 200 and session_id and b'"protocolVersion":"2025-11-25"' in body, (status, body)
    status, _ = d.run(d.call(INITIALIZED, session_headers(INITIALIZED, session_id)))
    assert status == 202, status
    hdrs = session_headers(SESSION_CALL, session_id)
    status, body = d.run(d.call(SESSION_CALL, hdrs))
    assert status == 200 and b'"text":"hello"' in body and b"resultType" not in body, (status, body)
    return d.variant("sdk.session_call", SESSION_CALL, hdrs)


def list_variant(drivers: list[AsgiDriver]) -> Variant:
    d = sdk_driver(sdk_list_server())
    drivers.append(d)
    hdrs = headers("tools/list", None, LIST_FIRST)
    status, body = d.run(d.call(LIST_FIRST, hdrs))
    assert status == 200 and body.count(b'"name":"tool_') == LIST_TOOLS and b"nextCursor" not in body, status
    return d.variant("sdk.list_1000", LIST_FIRST, hdrs)


def types_variant() -> Variant:
    """The SDK's pydantic types: parse the request, serialize the same response."""
    from mcp_types import CallToolRequestParams, CallToolResult, JSONRPCRequest, JSONRPCResponse, TextContent

    meta = {"io.modelcontextprotocol/serverInfo": {"name": "bench", "version": "1.0"}}

    def once() -> bytes:
        req = JSONRPCRequest.model_validate_json(CALL)
        params = CallToolRequestParams.model_validate(req.params)
        text = (params.arguments or {})["text"]
        result = CallToolResult(content=[TextContent(type="text", text=text)], _meta=meta)
        dumped = result.model_dump(by_alias=True, exclude_none=True, mode="json")
        return JSONRPCResponse(jsonrpc="2.0", id=req.id, result=dumped).model_dump_json(
            by_alias=True, exclude_none=True).encode()

    assert b'"text":"hello"' in once()

    def batch(n: int) -> int:
        t0 = perf_counter_ns()
        for _ in range(n):
            once()
        return perf_counter_ns() - t0

    return Variant("sdk.types_call", batch)


def factories(drivers: list[AsgiDriver]) -> list[tuple[str, Callable[[], Variant]]]:
    return [
        ("sdk.call", lambda: call_variant(drivers)), ("sdk.call_sse_mode", lambda: call_sse_mode_variant(drivers)),
        ("sdk.session_call", lambda: session_call_variant(drivers)),
        ("sdk.list_1000", lambda: list_variant(drivers)), ("sdk.types_call", types_variant),
    ]
