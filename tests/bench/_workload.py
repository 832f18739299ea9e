"""The messages every benchmark sends, and the servers that answer them (ours and the SDK's).

One definition of each request, used byte for byte by the floor, our engine, our adapters, the
SDK in-process and the end-to-end load generator, so that every ratio compares the same work:

- ``CALL``: a small ``tools/call`` of ``echo`` with ``{"text": "hello"}``;
- ``LIST``: ``tools/list`` over a catalog of ``LIST_TOOLS`` (1,000) tools;
- ``READ``: ``resources/read`` of a 1 MiB text resource;
- ``PROGRESS``: the small call with a ``progressToken`` (answered with 5 progress frames + final);
- ``MRTR_1`` / round 2: a ``tools/call`` answered ``input_required`` with a ``requestState``,
  retried with ``inputResponses`` and the token.

The SDK side (``sdk_*``) is imported lazily: the rest works without the ``bench`` extra.
"""

from __future__ import annotations

import itertools

from typing import Any, Final

import msgspec

import mcpwire
from mcpwire.wire.headers import encode_param_value
from mcpwire.types import CallToolResult, Implementation, ReadResourceResult, Resource, TextContent, TextResourceContents, Tool
from mcpwire import HttpRequest, Keyring, Server

VERSION: Final = "2026-07-28"
NOW: Final = 1_800_000_000.0
SECRET: Final = b"bench-secret-key-of-32-bytes-min"
SERVER_INFO_META_KEY: Final = "io.modelcontextprotocol/serverInfo"
LIST_TOOLS: Final = 1000
BIG_URI: Final = "test://big"
PROGRESS_FRAMES: Final = 5
HOST: Final = b"127.0.0.1:8000"

_enc = msgspec.json.Encoder()


def _meta(**caps: Any) -> dict[str, Any]:
    return {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": caps}


def _body(rid: int | str, method: str, params: dict[str, Any]) -> bytes:
    return _enc.encode({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})


def _big_text() -> str:
    line = 'The quick brown fox jumps over the lazy dog; "quoted" text\tand a tab.\n'
    text = line * ((1 << 20) // len(line) + 1)
    return text[: 1 << 20]


BIG_TEXT: Final = _big_text()

CALL: Final = _body(1, "tools/call", {"name": "echo", "arguments": {"text": "hello"}, "_meta": _meta()})
PROGRESS: Final = _body(2, "tools/call", {"name": "echo", "arguments": {"text": "hello"},
                                          "_meta": {**_meta(), "progressToken": "p-1"}})
LIST_FIRST: Final = _body(3, "tools/list", {"_meta": _meta()})
READ: Final = _body(4, "resources/read", {"uri": BIG_URI, "_meta": _meta()})
MRTR_1: Final = _body(5, "tools/call", {"name": "confirm", "arguments": {"item": "x"}, "_meta": _meta(elicitation={})})
ELICIT: Final = {"method": "elicitation/create", "params": {
    "mode": "form", "message": "Proceed?",
    "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}}}


def mrtr_round_2(token: str) -> bytes:
    return _body(6, "tools/call", {
        "name": "confirm", "arguments": {"item": "x"}, "_meta": _meta(elicitation={}),
        "inputResponses": {"confirm": {"action": "accept", "content": {"ok": True}}}, "requestState": token,
    })


def list_page(cursor: str | None) -> bytes:
    params: dict[str, Any] = {"_meta": _meta()}
    if cursor is not None:
        params["cursor"] = cursor
    return _body(3, "tools/list", params)


def headers(method: str, name: str | None, body: bytes) -> list[tuple[bytes, bytes]]:
    """What a correct client sends (lowercase names, as h11 and ASGI hand them over)."""
    out = [
        (b"host", HOST), (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"), (b"mcp-protocol-version", VERSION.encode()),
        (b"mcp-method", method.encode()),
    ]
    if name is not None:
        out.append((b"mcp-name", encode_param_value(name)))
    out.append((b"content-length", str(len(body)).encode()))
    return out


CALL_HEADERS: Final = headers("tools/call", "echo", CALL)

# The tasks extension: the same call from a client that declares it, to a tool that supports tasks,
# and a poll of one task (the ids of the tasks server are "task-0", "task-1", ...).
_TASKS_CAPS: Final[dict[str, Any]] = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
TASK_CALL: Final = _body(1, "tools/call", {"name": "echo", "arguments": {"text": "hello"}, "_meta": _meta(**_TASKS_CAPS)})
TASK_CALL_HEADERS: Final = headers("tools/call", "echo", TASK_CALL)
TASK_GET: Final = _body(2, "tasks/get", {"taskId": "task-0", "_meta": _meta(**_TASKS_CAPS)})
TASK_GET_HEADERS: Final = headers("tasks/get", "task-0", TASK_GET)

# The same call on an initialize-era session (2025-11-25): opened once by INIT + INITIALIZED,
# then the call carries the session's headers and no stateless _meta.
SESSION_VERSION: Final = "2025-11-25"
INIT: Final = _body(0, "initialize", {"protocolVersion": SESSION_VERSION, "capabilities": {},
                                       "clientInfo": {"name": "bench", "version": "1.0"}})
INITIALIZED: Final = _enc.encode({"jsonrpc": "2.0", "method": "notifications/initialized"})
SESSION_CALL: Final = _body(1, "tools/call", {"name": "echo", "arguments": {"text": "hello"}})


def session_headers(body: bytes, session_id: str | None) -> list[tuple[bytes, bytes]]:
    """What an initialize-era client sends: no Mcp-Method, the session's version and id."""
    out = [(b"host", HOST), (b"content-type", b"application/json"),
           (b"accept", b"application/json, text/event-stream")]
    if session_id is not None:
        out += [(b"mcp-protocol-version", SESSION_VERSION.encode()), (b"mcp-session-id", session_id.encode())]
    return out + [(b"content-length", str(len(body)).encode())]
PROGRESS_HEADERS: Final = headers("tools/call", "echo", PROGRESS)
READ_HEADERS: Final = headers("resources/read", BIG_URI, READ)
MRTR_HEADERS: Final = headers("tools/call", "confirm", MRTR_1)


def http(body: bytes, hdrs: list[tuple[bytes, bytes]] | None = None) -> HttpRequest:
    if hdrs is None:
        hdrs = headers("tools/list", None, body)
    return HttpRequest(method="POST", target="/mcp", headers=hdrs, body=body)


# -- our engine -------------------------------------------------------------------------------------


class EchoArgs(msgspec.Struct):
    text: str


class ConfirmArgs(msgspec.Struct):
    item: str


INFO: Final = Implementation(name="bench", version="1.0")


def small_server(**options: Any) -> Server:
    """echo (Struct-typed), echo_schema (raw JSON Schema), confirm (MRTR), the 1 MiB resource."""
    server = Server(INFO, keyring=Keyring.single(SECRET), **options)
    server.add_tool(Tool(name="echo", description="Echo the text back",
                         input_schema=Server.tool_schema(EchoArgs)), arguments_type=EchoArgs)
    server.add_tool(Tool(name="confirm", description="Asks before acting",
                         input_schema=Server.tool_schema(ConfirmArgs)), arguments_type=ConfirmArgs)
    server.add_resource(Resource(uri=BIG_URI, name="big", mime_type="text/plain"))
    return server


def tasks_server() -> Server:
    """echo (Struct-typed) as a tool whose calls may become tasks; tasks live 1 ms, so a long
    benchmark keeps the bounded store from filling (expired tasks are swept when it is full)."""
    from mcpwire.tasks import MemoryTaskStore, Tasks

    ids = (f"task-{i}" for i in itertools.count())
    server = Server(INFO, keyring=Keyring.single(SECRET), tasks=Tasks(MemoryTaskStore(), ids, ttl_ms=1))
    server.add_tool(Tool(name="echo", description="Echo the text back", input_schema=Server.tool_schema(EchoArgs)),
                    arguments_type=EchoArgs, task_support="optional")
    return server


def schema_server() -> Server:
    """echo declared by a raw JSON Schema, validated by the default jsonschema validator."""
    server = Server(INFO, keyring=Keyring.single(SECRET), validator=mcpwire.jsonschema_validator())
    server.add_tool(Tool(name="echo", description="Echo the text back", input_schema={
        "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}))
    return server


def list_server() -> Server:
    server = Server(INFO, keyring=Keyring.single(SECRET))
    for i in range(LIST_TOOLS):
        server.add_tool(Tool(name=f"tool_{i:04d}", description=f"Tool number {i}: doubles x",
                             input_schema={"type": "object", "properties": {"x": {"type": "integer"}},
                                           "required": ["x"]}))
    return server


def echo_result(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=text)])


def big_result() -> ReadResourceResult:
    return ReadResourceResult(contents=[TextResourceContents(uri=BIG_URI, mime_type="text/plain", text=BIG_TEXT)])


def our_app() -> Any:
    """The same echo tool behind our adapters' App (needs the trio extra)."""
    from mcpwire_adapters import App, Context

    app = App("bench", "1.0", keyring=Keyring.single(SECRET), validator=None)

    @app.tool(description="Echo the text back", arguments_type=EchoArgs)
    async def echo(ctx: Context, args: EchoArgs) -> CallToolResult:
        return echo_result(args.text)

    return app


# -- the official SDK -------------------------------------------------------------------------------


def sdk_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("mcp") is not None


def sdk_small_server() -> Any:
    """MCPServer with the same echo tool (async, unstructured output: the same result bytes)."""
    from mcp.server import MCPServer

    srv = MCPServer("bench", version="1.0", log_level="WARNING")

    @srv.tool(description="Echo the text back", structured_output=False)
    async def echo(text: str) -> str:
        return text

    return srv


def sdk_list_server() -> Any:
    from mcp.server import MCPServer

    srv = MCPServer("bench", version="1.0", log_level="WARNING", warn_on_duplicate_tools=False)

    def make(i: int) -> Any:
        async def tool(x: int) -> int:
            return 2 * x

        return tool

    for i in range(LIST_TOOLS):
        srv.add_tool(make(i), name=f"tool_{i:04d}", description=f"Tool number {i}: doubles x", structured_output=False)
    return srv


def sdk_session_asgi(srv: Any) -> Any:
    """The SDK's Streamable HTTP ASGI app with sessions (its default), JSON responses."""
    return srv.streamable_http_app(json_response=True)


def sdk_asgi(srv: Any, *, json_response: bool = True) -> Any:
    """The SDK's Streamable HTTP ASGI app, stateless; 2026-07-28 requests take its modern path."""
    return srv.streamable_http_app(stateless_http=True, json_response=json_response)
