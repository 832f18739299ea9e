"""Tools, prompts and resources written as plain typed functions, and what handlers may return.

``@app.tool()`` on ``async def add(a: int, b: int = 2) -> int``: the parameters become a msgspec
Struct (the listed inputSchema, compared here to the exact JSON expected; msgspec validates every
call), a ``Context`` parameter is found by its annotation, the return annotation gives the
outputSchema, and shapes that cannot work are refused at registration. The old
``(ctx, arguments)`` form keeps working; the rule telling the two apart is
``mcpwire_adapters.app.signature.is_legacy``. Tool handlers' exceptions are tool execution
errors (``ToolError``: its text; anything else: ``Tool 'name' failed``).

Requests go through the engine in memory (``app.server.receive_http`` and ``App.dispatch``,
every message checked against the official schema), and through the trio HTTP server with the
HTTP client, and through the ASGI app. This module uses ``from __future__ import annotations``
on purpose: every annotation is a string, and types defined inside a test resolve too.
"""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any, Literal, Optional, TypedDict

import msgspec
import pytest
import trio
from mcpwire_adapters import App, AsgiApp, Context, NeedInput, ToolError
from mcpwire_adapters.app import MimeType
from mcpwire_adapters.client.http import HttpClient
from mcpwire_adapters.client.session import ServerError
from mcpwire_adapters.serve.trio_h11.server import serve_http
from schema_check import Reply, call, error_of, meta, request
from test_app_tools import dispatch

import mcpwire
from mcpwire import Client, Keyring, LocalProtocolError, ProtocolError
from mcpwire.tasks import TASKS_EXTENSION
from mcpwire.types import (
    CallToolResult,
    GetPromptResult,
    ImageContent,
    Implementation,
    PromptMessage,
    TextContent,
)

REPO = Path(__file__).resolve().parents[3]


def make_app(**options: Any) -> App:
    return App("typed-test", "1.0", keyring=Keyring.single(b"t" * 32), **options)


def listed(app: App, kind: str = "tools") -> dict[str, dict[str, Any]]:
    reply = call(app.server, request(f"{kind}/list"))
    return {item["name"]: item for item in reply.result[kind]}




def call_tool(app: App, name: str, arguments: dict[str, Any] | None = None) -> Reply:
    return dispatch(app, "tools/call", {"name": name, "arguments": arguments or {}})


def tool_result(app: App, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    result: dict[str, Any] = call_tool(app, name, arguments).result
    return result


def text_of(result: dict[str, Any]) -> str:
    [block] = result["content"]
    assert block["type"] == "text"
    return str(block["text"])


# -- the inputSchema of each parameter shape ------------------------------------------------------------
class Point(msgspec.Struct):
    x: float
    y: float


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


def test_a_typed_function_lists_its_parameters_and_its_docstring() -> None:
    app = make_app()

    @app.tool()
    async def add(a: int, b: int = 2) -> int:
        """Add two numbers.

        The second defaults to two."""
        return a + b

    assert listed(app)["add"] == {
        "name": "add",
        "description": "Add two numbers.",
        "inputSchema": {
            "title": "addArguments", "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "default": 2}},
            "required": ["a"],
        },
    }
    assert app.tools["add"].description == "Add two numbers."


def test_every_parameter_shape_becomes_its_json_schema() -> None:
    app = make_app()

    @app.tool(description="Shapes")
    def shapes(
        count: Annotated[int, msgspec.Meta(ge=0, description="How many")],
        ratio: float,
        flag: bool,
        label: str,
        tags: list[str],
        color: Color,
        mode: Literal["fast", "slow"],
        maybe: int | None,
        older: Optional[str] = None,  # noqa: UP045 - the old spelling, on purpose
        limit: Annotated[int, msgspec.Meta(le=10)] = 5,
        color_default: Color = Color.RED,
        options: dict[str, int] = {},  # noqa: B006 - an empty default is copied by msgspec
    ) -> str:
        return "ok"

    top = {
        "title": "shapesArguments", "type": "object",
        "properties": {
            "count": {"description": "How many", "type": "integer", "minimum": 0},
            "ratio": {"type": "number"},
            "flag": {"type": "boolean"},
            "label": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "color": {"$ref": "#/$defs/Color"},
            "mode": {"enum": ["fast", "slow"]},
            "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "older": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
            "limit": {"type": "integer", "maximum": 10, "default": 5},
            "color_default": {"$ref": "#/$defs/Color", "default": "red"},
            "options": {"type": "object", "additionalProperties": {"type": "integer"}, "default": {}},
        },
        "required": ["count", "ratio", "flag", "label", "tags", "color", "mode", "maybe"],
    }
    # The core's layout (Server.tool_schema): with other definitions, $defs holds the top too.
    assert listed(app)["shapes"]["inputSchema"] == {
        **top, "$defs": {"shapesArguments": top, "Color": {"title": "Color", "enum": ["blue", "red"]}},
    }


def test_a_struct_parameter_is_an_object_argument() -> None:
    app = make_app()

    @app.tool(description="Move a point")
    async def move(point: Point, dx: float = 0.0) -> Point:
        return Point(point.x + dx, point.y)

    point_schema = {
        "title": "Point", "type": "object",
        "properties": {"x": {"type": "number"}, "y": {"type": "number"}}, "required": ["x", "y"],
    }
    top = {
        "title": "moveArguments", "type": "object",
        "properties": {"point": {"$ref": "#/$defs/Point"}, "dx": {"type": "number", "default": 0.0}},
        "required": ["point"],
    }
    assert listed(app)["move"]["inputSchema"] == {**top, "$defs": {"moveArguments": top, "Point": point_schema}}
    assert listed(app)["move"]["outputSchema"] == point_schema
    result = tool_result(app, "move", {"point": {"x": 1, "y": 2}, "dx": 0.5})
    assert result["structuredContent"] == {"x": 1.5, "y": 2.0}


def test_a_function_without_parameters_takes_an_empty_object() -> None:
    app = make_app()

    @app.tool(description="Now")
    def now() -> str:
        return "noon"

    assert listed(app)["now"]["inputSchema"] == {
        "title": "nowArguments", "type": "object", "properties": {}, "required": [],
    }
    assert text_of(tool_result(app, "now")) == "noon"


def test_types_defined_in_a_function_resolve_in_string_annotations() -> None:
    app = make_app()

    class Local(msgspec.Struct):
        value: int

    @app.tool(description="Local types")
    async def local(item: Local) -> Local:
        return Local(item.value * 2)

    assert tool_result(app, "local", {"item": {"value": 21}})["structuredContent"] == {"value": 42}


# -- calls: validated by msgspec, the function called by name ---------------------------------------------
def test_calls_decode_and_validate_the_arguments() -> None:
    app = make_app()
    seen: list[Any] = []

    @app.tool(description="Typed")
    async def typed(point: Point, color: Color, count: Annotated[int, msgspec.Meta(ge=0)] = 1) -> str:
        seen.append((point, color, count))
        return "ok"

    assert text_of(tool_result(app, "typed", {"point": {"x": 1, "y": 2}, "color": "blue"})) == "ok"
    assert seen == [(Point(1.0, 2.0), Color.BLUE, 1)]
    for bad in ({"point": {"x": 1}, "color": "blue"}, {"point": {"x": 1, "y": 2}, "color": "green"},
                {"point": {"x": 1, "y": 2}, "color": "red", "count": -1}, {}):
        # The engine answers them itself: the handler never runs.
        result = call(app.server, request("tools/call", {"name": "typed", "arguments": bad})).result
        assert result["isError"] is True and text_of(result).startswith("Invalid arguments for tool typed: ")
    assert len(seen) == 1


def test_a_plain_function_runs_in_a_worker_thread() -> None:
    app = make_app()

    @app.tool(description="Concatenate")
    def concat(first: str, second: str = "!") -> str:
        return first + second

    assert text_of(tool_result(app, "concat", {"first": "hi"})) == "hi!"


@pytest.mark.parametrize("where", ["first", "middle", "last", "keyword-only"])
def test_the_context_is_asked_for_by_annotation_anywhere(where: str) -> None:
    app = make_app()
    got: list[Any] = []

    if where == "first":
        @app.tool("probe", description="Probe")
        async def first(context: Context, a: int, b: int = 0) -> str:
            got.append((context, a, b))
            return "ok"
    elif where == "middle":
        @app.tool("probe", description="Probe")
        async def middle(a: int, whatever: Context, b: int = 0) -> str:
            got.append((whatever, a, b))
            return "ok"
    elif where == "last":
        @app.tool("probe", description="Probe")
        def last(a: int, b: int = 0, *, ctx: Context) -> str:  # a plain function: in a worker thread
            got.append((ctx, a, b))
            return "ok"
    else:
        @app.tool("probe", description="Probe")
        async def keyword_only(a: int, *, b: int = 0, c: Context) -> str:
            got.append((c, a, b))
            return "ok"

    schema = listed(app)["probe"]["inputSchema"]
    assert set(schema["properties"]) == {"a", "b"} and schema["required"] == ["a"]
    assert text_of(tool_result(app, "probe", {"a": 1, "b": 2})) == "ok"
    [(ctx, a, b)] = got
    assert isinstance(ctx, Context) and isinstance(ctx.event, mcpwire.ToolCall) and ctx.event.name == "probe"
    assert (a, b) == (1, 2)


def test_a_progress_tool_reports_through_its_context_over_http() -> None:
    app = make_app()

    @app.tool()
    async def count(to: int, ctx: Context) -> str:
        """Count, reporting progress."""
        for step in range(1, to + 1):
            await ctx.progress(step, total=to)
        return f"counted to {to}"

    progress: list[Any] = []

    async def main() -> None:
        with trio.fail_after(20):
            async with trio.open_nursery() as nursery:
                host, port = await nursery.start(serve_http, app, "127.0.0.1", 0)
                async with HttpClient(f"http://{host}:{port}/mcp") as client:
                    done = await client.call_tool("count", {"to": 3}, on_progress=progress.append)
                    assert done.value.content[0].text == "counted to 3"
                    refused = await client.call_tool("count", {"to": "three"})
                    assert refused.value.is_error is True
                    tools = {tool.name: tool for tool in await client.list_tools()}
                    assert tools["count"].input_schema["properties"] == {"to": {"type": "integer"}}
                nursery.cancel_scope.cancel()

    trio.run(main)
    assert [p.progress for p in progress] == [1, 2, 3]


def test_a_typed_tool_through_the_asgi_app() -> None:
    app = make_app()

    @app.tool()
    async def add(a: int, b: int = 2) -> int:
        """Add."""
        return a + b

    @app.tool()
    async def fails() -> str:
        """Fail."""
        raise RuntimeError("the secret detail")

    client = Client(Implementation(name="typed-asgi", version="1"))

    async def post(outgoing: Any) -> dict[str, Any]:
        asgi = AsgiApp(app)
        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
            "path": "/mcp", "raw_path": b"/mcp", "root_path": "", "query_string": b"",
            "headers": list(outgoing.headers), "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000),
        }
        sent: list[dict[str, Any]] = []
        received = False

        async def receive() -> dict[str, Any]:
            nonlocal received
            if received:
                await asyncio.sleep(30)
            received = True
            return {"type": "http.request", "body": outgoing.body, "more_body": False}

        async def send(message: Any) -> None:
            sent.append(dict(message))

        await asyncio.wait_for(asgi(scope, receive, send), 10)
        body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
        message: dict[str, Any] = json.loads(body)
        return message

    async def main() -> None:
        added = await post(client.call_tool("add", {"a": 40}))
        assert added["result"]["content"] == [{"type": "text", "text": "42"}]
        failed = await post(client.call_tool("fails", {}))
        assert failed["result"]["isError"] is True
        assert failed["result"]["content"] == [{"type": "text", "text": "Tool 'fails' failed"}]
        assert "secret" not in json.dumps(failed)

    asyncio.run(main())


# -- shapes refused at registration -------------------------------------------------------------------------
class Opaque:
    """A class msgspec has no JSON Schema for."""


def _register(app: App, handler: Any, **options: Any) -> None:
    app.tool(**options)(handler)


def test_refused_shapes_name_the_parameter_and_the_fix() -> None:
    app = make_app()

    async def star_args(a: int, *rest: int) -> str:
        return ""

    async def star_kwargs(a: int, **extra: Any) -> str:
        return ""

    async def positional_only(a: int, /, b: int) -> str:
        return ""

    async def unannotated(a: int, b) -> str:  # type: ignore[no-untyped-def]  # noqa: ANN001
        return ""

    async def opaque(a: int, thing: Opaque) -> str:
        return ""

    async def optional_context(a: int, ctx: Context | None = None) -> str:
        return ""

    async def two_contexts(first: Context, second: Context) -> str:
        return ""

    async def bad_default(a: int, when: object = Opaque()) -> str:  # noqa: B008
        return ""

    async def unresolvable(a: NotDefinedAnywhere) -> str:  # type: ignore[name-defined]  # noqa: F821
        return ""

    async def opaque_return(a: int) -> Opaque:
        return Opaque()

    cases: list[tuple[Any, str]] = [
        (star_args, r"tool 'star_args': parameter \*rest: .*declare each argument as a named, annotated parameter"),
        (star_kwargs, r"tool 'star_kwargs': parameter \*\*extra: .*declare each argument as a named, annotated"),
        (positional_only, r"tool 'positional_only': parameter 'a' is positional-only: .*remove the '/'"),
        (unannotated, r"tool 'unannotated': parameter 'b' has no annotation: annotate it with its type \(b: str"),
        (opaque, r"tool 'opaque': parameter 'thing': msgspec cannot make a JSON Schema of Opaque .*msgspec Struct"),
        (optional_context, r"tool 'optional_context': parameter 'ctx': msgspec cannot make a JSON Schema"),
        (two_contexts, r"tool 'two_contexts': parameters 'first' and 'second' both ask for the Context; keep one"),
        (bad_default, r"tool 'bad_default': parameter 'when': msgspec cannot make a JSON Schema of object"),
        (unresolvable, r"tool 'unresolvable': the annotation 'NotDefinedAnywhere' of parameter 'a' cannot be "
                       r"evaluated .*import the type at module level"),
        (opaque_return, r"tool 'opaque_return': msgspec cannot make a JSON Schema of the return annotation Opaque"),
    ]
    for handler, message in cases:
        with pytest.raises(TypeError, match=message):
            _register(app, handler)
    assert dict(app.tools) == {}  # nothing half-registered


def test_a_default_that_is_not_json_is_refused() -> None:
    app = make_app()

    async def when(a: int, at: Any = Opaque()) -> str:  # noqa: B008
        return ""

    with pytest.raises(TypeError, match=r"tool 'when': parameter 'at': its default .* is not a JSON value"):
        _register(app, when)


def test_the_decorator_needs_its_parentheses() -> None:
    app = make_app()
    with pytest.raises(TypeError, match=r"write @app.tool\(\)"):
        app.tool(lambda: "x")  # type: ignore[arg-type]


# -- the (ctx, arguments) form: the rule that tells it apart -------------------------------------------------
class AddArgs(msgspec.Struct):
    a: float
    b: float


def test_the_first_form_is_kept_for_loosely_typed_ctx_and_arguments() -> None:
    app = make_app()
    seen: dict[str, Any] = {}

    @app.tool(description="Unannotated")
    async def bare(ctx, arguments):  # type: ignore[no-untyped-def]  # noqa: ANN001, ANN202
        seen["bare"] = (ctx, arguments)
        return "bare"

    @app.tool(description="A dict")
    def mapping(ctx: Context, args: dict[str, Any], _tag: str = "kept") -> str:
        seen["mapping"] = (ctx, args, _tag)
        return "mapping"

    @app.tool(description="Any")
    async def loose(ctx: Any, arguments: Any) -> str:
        seen["loose"] = (ctx, arguments)
        return "loose"

    @app.tool(description="A default")
    async def defaulted(ctx, arguments=None):  # type: ignore[no-untyped-def]  # noqa: ANN001, ANN202
        seen["defaulted"] = (ctx, arguments)
        return "defaulted"

    @app.tool(description="A Struct, decoded", arguments_type=AddArgs)
    async def add(ctx: Context, arguments: AddArgs) -> str:
        return f"{arguments.a + arguments.b:g}"

    @app.tool(description="A raw schema", input_schema={"type": "object", "properties": {"n": {"type": "integer"}}})
    async def raw(c: Context, n: int) -> str:  # named and typed, but input_schema= says (ctx, arguments)
        seen["raw"] = (c, n)
        return "raw"

    for name in ("bare", "mapping", "loose", "defaulted"):
        assert listed(app)[name]["inputSchema"] == {"type": "object"}
        assert text_of(tool_result(app, name, {"k": 1})) == name
        ctx, arguments = seen[name][:2]
        assert isinstance(ctx, Context) and arguments == {"k": 1}
    assert seen["mapping"][2] == "kept"
    assert text_of(tool_result(app, "add", {"a": 1, "b": 2})) == "3"
    assert text_of(tool_result(app, "raw", {"n": 4})) == "raw" and seen["raw"][1] == {"n": 4}


def test_a_struct_typed_second_parameter_without_arguments_type_is_an_argument() -> None:
    # Changed on purpose: before, such a handler got the raw dict whatever its annotation said.
    app = make_app()

    @app.tool(description="Add")
    async def add(ctx: Context, arguments: AddArgs) -> str:
        return f"{arguments.a + arguments.b:g}"

    schema = listed(app)["add"]["inputSchema"]
    assert schema["properties"] == {"arguments": {"$ref": "#/$defs/AddArgs"}} and schema["required"] == ["arguments"]
    assert text_of(tool_result(app, "add", {"arguments": {"a": 1, "b": 2}})) == "3"


def test_a_dict_argument_is_an_argument_when_ctx_is_not_first() -> None:
    app = make_app()

    @app.tool(description="Keys")
    async def keys(options: dict[str, int], ctx: Context) -> list[str]:
        return sorted(options)

    assert listed(app)["keys"]["inputSchema"]["properties"] == {
        "options": {"type": "object", "additionalProperties": {"type": "integer"}},
    }
    assert tool_result(app, "keys", {"options": {"b": 1, "a": 2}})["structuredContent"] == {"result": ["a", "b"]}


# -- what a tool may return -----------------------------------------------------------------------------
@dataclasses.dataclass
class Reading:
    sensor: str
    value: float


class Totals(TypedDict):
    count: int
    sum: float


def test_every_return_type() -> None:
    app = make_app()

    @app.tool(description="str")
    async def a_str() -> str:
        return "plain"

    @app.tool(description="int")
    async def an_int() -> int:
        return 42

    @app.tool(description="float")
    async def a_float() -> float:
        return 1.5

    @app.tool(description="bool")
    async def a_bool() -> bool:
        return True

    @app.tool(description="None")
    async def nothing() -> None:
        return None

    @app.tool(description="enum")
    async def an_enum() -> Color:
        return Color.BLUE

    @app.tool(description="dict")
    async def a_dict() -> dict[str, int]:
        return {"a": 1}

    @app.tool(description="list")
    async def a_list() -> list[int]:
        return [1, 2]

    @app.tool(description="Struct")
    async def a_struct() -> Point:
        return Point(1.0, 2.0)

    @app.tool(description="dataclass")
    def a_dataclass() -> Reading:
        return Reading("t1", 20.5)

    @app.tool(description="TypedDict")
    def a_typeddict() -> Totals:
        return {"count": 2, "sum": 3.0}

    @app.tool(description="optional Struct")
    def maybe_point(found: bool) -> Point | None:
        return Point(0.0, 0.0) if found else None

    @app.tool(description="unannotated")
    async def unannotated():  # type: ignore[no-untyped-def]  # noqa: ANN202
        return {"free": ["form"]}

    @app.tool(description="bytes")
    async def some_bytes() -> bytes:
        return b"\x00\x01"

    @app.tool(description="image")
    async def an_image() -> Annotated[bytes, MimeType("image/png")]:
        return b"\x89PNG"

    @app.tool(description="audio")
    async def audio() -> Annotated[bytes, MimeType("audio/wav")]:
        return b"RIFF"

    @app.tool(description="csv")
    async def csv() -> Annotated[bytes, MimeType("text/csv")]:
        return b"a,b"

    @app.tool(description="content")
    async def content() -> list[TextContent | ImageContent]:
        return [TextContent(text="see"), ImageContent(data="iVBORw==", mime_type="image/png")]

    @app.tool(description="result")
    async def a_result() -> CallToolResult:
        return CallToolResult(content=[TextContent(text="full")])

    @app.tool(description="str or input")
    async def needs(ctx: Context) -> str | NeedInput:
        return "answered"

    tools = listed(app)
    for name in ("a_str", "an_int", "a_float", "a_bool", "nothing", "an_enum", "unannotated", "some_bytes",
                 "an_image", "audio", "csv", "content", "a_result", "needs"):
        assert "outputSchema" not in tools[name], name
    assert tools["a_dict"]["outputSchema"] == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert tools["a_list"]["outputSchema"] == {
        "title": "a_listOutput", "type": "object",
        "properties": {"result": {"type": "array", "items": {"type": "integer"}}}, "required": ["result"],
    }
    assert tools["a_struct"]["outputSchema"] == app.server.tool_schema(Point)
    assert tools["a_dataclass"]["outputSchema"] == {
        "title": "Reading", "type": "object",
        "properties": {"sensor": {"type": "string"}, "value": {"type": "number"}}, "required": ["sensor", "value"],
    }
    assert tools["a_typeddict"]["outputSchema"] == {
        "title": "Totals", "type": "object",
        "properties": {"count": {"type": "integer"}, "sum": {"type": "number"}}, "required": ["count", "sum"],
    }
    optional = tools["maybe_point"]["outputSchema"]
    assert optional["title"] == "maybe_pointOutput" and optional["required"] == ["result"]
    assert optional["properties"]["result"] == {"anyOf": [{"$ref": "#/$defs/Point"}, {"type": "null"}]}

    def text(name: str) -> str:
        result = tool_result(app, name)
        assert "structuredContent" not in result and "isError" not in result, result
        return text_of(result)

    assert [text(n) for n in ("a_str", "an_int", "a_float", "a_bool", "an_enum", "a_result", "needs")] == [
        "plain", "42", "1.5", "true", "blue", "full", "answered"]
    assert tool_result(app, "nothing")["content"] == []

    def structured(name: str, arguments: dict[str, Any] | None = None) -> Any:
        result = tool_result(app, name, arguments)
        assert json.loads(text_of(result)) == (
            result["structuredContent"].get("result", result["structuredContent"])
            if set(result["structuredContent"]) == {"result"} else result["structuredContent"])
        return result["structuredContent"]

    assert structured("a_dict") == {"a": 1}
    assert structured("a_list") == {"result": [1, 2]}
    assert structured("a_struct") == {"x": 1.0, "y": 2.0}
    assert structured("a_dataclass") == {"sensor": "t1", "value": 20.5}
    assert structured("a_typeddict") == {"count": 2, "sum": 3.0}
    assert structured("maybe_point", {"found": True}) == {"result": {"x": 0.0, "y": 0.0}}
    assert structured("maybe_point", {"found": False}) == {"result": None}
    assert structured("unannotated") == {"free": ["form"]}

    assert tool_result(app, "some_bytes")["content"] == [{"type": "resource", "resource": {
        "uri": "tool://some_bytes/result", "mimeType": "application/octet-stream", "blob": "AAE="}}]
    assert tool_result(app, "an_image")["content"] == [{"type": "image", "data": "iVBORw==", "mimeType": "image/png"}]
    assert tool_result(app, "audio")["content"] == [{"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}]
    assert tool_result(app, "csv")["content"][0]["resource"]["mimeType"] == "text/csv"
    assert tool_result(app, "content")["content"] == [
        {"type": "text", "text": "see"}, {"type": "image", "data": "iVBORw==", "mimeType": "image/png"}]


def test_the_first_form_returns_the_same_way() -> None:
    app = make_app()

    @app.tool(description="Any value")
    async def values(ctx: Context, arguments: dict[str, Any]) -> Any:
        return arguments["value"]

    assert text_of(tool_result(app, "values", {"value": 7})) == "7"
    assert tool_result(app, "values", {"value": [1]})["structuredContent"] == {"result": [1]}
    assert tool_result(app, "values", {"value": {"k": "v"}})["structuredContent"] == {"k": "v"}
    assert "outputSchema" not in listed(app)["values"]


def test_a_value_against_its_return_annotation_is_checked() -> None:
    app = make_app()

    @app.tool(description="Lies")
    async def liar() -> Point:
        return {"x": "not a number"}  # type: ignore[return-value]

    @app.tool(description="Wrong Struct")
    async def other() -> Point:
        return Reading("t", 1.0)  # type: ignore[return-value]

    assert error_of(call_tool(app, "liar"), -32603, 1)["message"] == "Internal error"
    with pytest.raises(LocalProtocolError, match="'other' answered with AddArgs; expected .*return annotation Point"):
        app._tool_result("other", AddArgs(1.0, 2.0))
    assert error_of(call_tool(app, "other"), -32603, 1)["message"] == "Internal error"


def test_an_explicit_output_type_wins_over_the_annotation() -> None:
    app = make_app()

    @app.tool(description="Explicit", output_type=Point)
    async def explicit() -> Any:
        return Point(3.0, 4.0)

    @app.tool(description="Raw", output_schema={"type": "object"})
    async def raw() -> list[int]:
        return [1]

    assert listed(app)["explicit"]["outputSchema"] == app.server.tool_schema(Point)
    assert listed(app)["raw"]["outputSchema"] == {"type": "object"}
    assert tool_result(app, "raw")["structuredContent"] == {"result": [1]}


# -- errors ---------------------------------------------------------------------------------------------
SECRET = "password=hunter2"


def failing_app(errors: list[BaseException], **options: Any) -> App:
    app = make_app(on_error=lambda exchange, exc: errors.append(exc), **options)

    @app.tool(description="Refuses")
    async def refuse(reason: str) -> str:
        raise ToolError(f"cannot: {reason}")

    @app.tool(description="Breaks")
    def breaks() -> str:
        raise KeyError(SECRET)

    @app.tool(description="Breaks, first form")
    async def breaks_too(ctx: Context, arguments: dict[str, Any]) -> str:
        raise RuntimeError(SECRET)

    @app.tool(description="Rate limited")
    async def limited() -> str:
        raise ProtocolError("Rate limited", code=-32050, data={"retryAfter": 3})

    @app.tool(description="Internal")
    async def internal() -> str:
        raise ProtocolError(SECRET, code=-32603)

    @app.prompt(description="Breaks")
    def broken_prompt() -> str:
        raise ValueError(SECRET)

    @app.resource("test://broken", name="broken")
    def broken_resource() -> str:
        raise ToolError("not for resources")

    return app


def test_tool_error_is_an_is_error_result_with_its_text(caplog: pytest.LogCaptureFixture) -> None:
    errors: list[BaseException] = []
    app = failing_app(errors)
    with caplog.at_level(logging.ERROR, logger="mcpwire_adapters.app"):
        reply = call_tool(app, "refuse", {"reason": "closed"})
    assert reply.status == 200
    assert reply.result["isError"] is True and text_of(reply.result) == "cannot: closed"
    assert errors == [] and not [r for r in caplog.records if r.name == "mcpwire_adapters.app"]


@pytest.mark.parametrize("name", ["breaks", "breaks_too"])
def test_any_other_exception_is_a_generic_is_error_logged_and_reported(
    name: str, caplog: pytest.LogCaptureFixture
) -> None:
    errors: list[BaseException] = []
    with caplog.at_level(logging.ERROR, logger="mcpwire_adapters.app"):
        reply = call_tool(failing_app(errors), name)
    assert reply.status == 200 and reply.result["isError"] is True
    assert text_of(reply.result) == f"Tool {name!r} failed" and SECRET not in json.dumps(reply.message)
    [exc] = errors
    assert SECRET in str(exc)
    [record] = [r for r in caplog.records if r.name == "mcpwire_adapters.app"]
    assert record.exc_info is not None and record.exc_info[1] is exc and name in record.getMessage()


def test_tool_error_details_shows_the_exceptions_own_text() -> None:
    errors: list[BaseException] = []
    app = failing_app(errors, tool_error_details=True)
    assert text_of(tool_result(app, "breaks")) == repr(SECRET)  # str(KeyError(x)) is repr(x)
    assert text_of(tool_result(app, "breaks_too")) == SECRET
    assert text_of(tool_result(app, "refuse", {"reason": "x"})) == "cannot: x"
    assert len(errors) == 2


def test_protocol_errors_keep_their_codes() -> None:
    errors: list[BaseException] = []
    app = failing_app(errors)
    limited = call_tool(app, "limited")
    assert limited.error == {"code": -32050, "message": "Rate limited", "data": {"retryAfter": 3}}
    internal = error_of(call_tool(app, "internal"), -32603, 1)
    assert internal == {"code": -32603, "message": "Internal error"}
    unknown = call(app.server, request("tools/call", {"name": "no_such_tool", "arguments": {}}))
    assert unknown.error["code"] == -32602
    assert len(errors) == 1  # the -32603 one only


def test_exceptions_outside_tools_are_still_internal_errors() -> None:
    errors: list[BaseException] = []
    app = failing_app(errors)
    prompt = dispatch(app, "prompts/get", {"name": "broken_prompt"})
    assert error_of(prompt, -32603, 1) == {"code": -32603, "message": "Internal error"}
    resource = dispatch(app, "resources/read", {"uri": "test://broken"})
    assert error_of(resource, -32603, 1) == {"code": -32603, "message": "Internal error"}
    assert [type(e) for e in errors] == [ValueError, ToolError]


def test_tool_error_is_light_and_exported() -> None:
    import mcpwire_adapters
    import mcpwire_adapters.app
    from mcpwire_adapters.errors import McpwireAdapterError

    assert mcpwire_adapters.ToolError is mcpwire_adapters.app.ToolError is ToolError
    assert issubclass(ToolError, McpwireAdapterError) and ToolError("x").message == "x"
    code = "import sys\nfrom mcpwire_adapters import ToolError, NeedInput\nprint('anyio' in sys.modules)"
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert done.stdout.strip() == "False"


# -- prompts and resources ----------------------------------------------------------------------------
def test_prompts_from_typed_functions() -> None:
    app = make_app()

    @app.prompt()
    def review(code: Annotated[str, msgspec.Meta(description="The code")], style: str = "terse") -> str:
        """Review some code.

        Longer text."""
        return f"Review ({style}): {code}"

    @app.prompt(description="A conversation")
    async def chat(topic: str, ctx: Context) -> list[Any]:
        assert isinstance(ctx, Context)
        return [("user", f"Tell me about {topic}"), ("assistant", "Gladly."), "Go on",
                PromptMessage(role="assistant", content=TextContent(text="More."))]

    @app.prompt(description="Full result")
    def full() -> GetPromptResult:
        return GetPromptResult(messages=[PromptMessage(role="user", content=TextContent(text="as is"))])

    @app.prompt(description="First form")
    def old(ctx: Context, arguments: dict[str, str]) -> str:
        return f"old {arguments.get('x', '-')}"

    prompts = listed(app, "prompts")
    assert prompts["review"] == {
        "name": "review", "description": "Review some code.",
        "arguments": [{"name": "code", "description": "The code", "required": True},
                      {"name": "style", "required": False}],
    }
    assert prompts["chat"]["arguments"] == [{"name": "topic", "required": True}]
    assert "arguments" not in prompts["full"] and "arguments" not in prompts["old"]

    got = dispatch(app, "prompts/get", {"name": "review", "arguments": {"code": "x = 1", "extra": "ignored"}}).result
    assert got["description"] == "Review some code."
    assert got["messages"] == [{"role": "user", "content": {"type": "text", "text": "Review (terse): x = 1"}}]
    chatted = dispatch(app, "prompts/get", {"name": "chat", "arguments": {"topic": "owls"}}).result
    assert [(m["role"], m["content"]["text"]) for m in chatted["messages"]] == [
        ("user", "Tell me about owls"), ("assistant", "Gladly."), ("user", "Go on"), ("assistant", "More.")]
    assert dispatch(app, "prompts/get", {"name": "full"}).result["messages"][0]["content"]["text"] == "as is"
    assert dispatch(app, "prompts/get", {"name": "old", "arguments": {"x": "y"}}).result["messages"][0]["content"] == {
        "type": "text", "text": "old y"}
    missing = call(app.server, request("prompts/get", {"name": "review", "arguments": {}}))
    assert missing.error["code"] == -32602


def test_prompt_arguments_are_strings() -> None:
    app = make_app()

    def counted(n: int) -> str:
        return ""

    with pytest.raises(TypeError, match=r"prompt 'counted': parameter 'n' is annotated int: prompt arguments are "
                                        r"strings on the wire; annotate it n: str"):
        app.prompt()(counted)


def test_a_prompt_answer_of_the_wrong_type_is_an_internal_error() -> None:
    app = make_app()

    @app.prompt(description="Wrong")
    def wrong() -> Any:
        return [("narrator", "Once upon a time")]

    assert error_of(dispatch(app, "prompts/get", {"name": "wrong"}), -32603, 1)["message"] == "Internal error"


def test_resources_take_the_context_only_when_they_ask() -> None:
    app = make_app()

    @app.resource("test://plain")
    def plain() -> str:
        """The plain one."""
        return "plain"

    @app.resource("test://old", name="old")
    async def old(ctx):  # type: ignore[no-untyped-def]  # noqa: ANN001, ANN202
        assert isinstance(ctx, Context)
        return b"\x00"

    @app.resource_template("test://item/{id}")
    def item(id: str, ctx: Context) -> str:  # noqa: A002
        assert isinstance(ctx, Context)
        return f"item {id}"

    @app.resource_template("test://thing/{id}", name="thing")
    def thing(id: str) -> str:  # noqa: A002
        return f"thing {id}"

    resources = app.resources
    assert resources["test://plain"].name == "plain" and resources["test://plain"].description == "The plain one."
    assert app.resource_templates["test://item/{id}"].name == "item"

    def read(uri: str) -> Any:
        return dispatch(app, "resources/read", {"uri": uri}).result["contents"][0]

    assert read("test://plain")["text"] == "plain"
    assert read("test://old")["blob"] == "AA=="
    assert read("test://item/7")["text"] == "item 7"
    assert read("test://thing/8")["text"] == "thing 8"


# -- errors of tasks stay as they were --------------------------------------------------------------------
def test_a_failure_in_a_tasks_work_still_fails_the_task() -> None:
    # Once the call is a task, a bare exception fails the task (-32603, status failed: the
    # tasks extension's own failure), and a ToolError completes it with an isError result.
    app = make_app(tasks=True)

    @app.tool(description="Crashes", task_support="optional")
    async def crash(ctx: Context) -> str:
        await ctx.start_task()
        raise RuntimeError(SECRET)

    @app.tool(description="Refuses", task_support="optional")
    async def refuse(ctx: Context) -> str:
        await ctx.start_task()
        raise ToolError("refused in a task")

    # Not a task (the request does not declare the extension): an isError result as any tool.
    assert text_of(tool_result(app, "crash")) == "Tool 'crash' failed"
    tasks_client = Client(Implementation(name="typed-tasks", version="1"),
                          capabilities={"extensions": {TASKS_EXTENSION: {}}})

    async def main() -> None:
        with trio.fail_after(20):
            async with trio.open_nursery() as nursery:
                host, port = await nursery.start(serve_http, app, "127.0.0.1", 0)
                async with HttpClient(f"http://{host}:{port}/mcp", tasks_client) as client:
                    with pytest.raises(ServerError) as failed:
                        await client.call_tool("crash", {})
                    assert failed.value.code == -32603 and failed.value.error.message == "Internal error"
                    refused = await client.call_tool("refuse", {})
                    assert refused.value.is_error is True and refused.value.content[0].text == "refused in a task"
                nursery.cancel_scope.cancel()

    trio.run(main)


def test_an_unknown_error_of_the_engine_is_not_a_tool_error() -> None:
    app = make_app()

    @app.tool(description="Breaks the API")
    async def misuse() -> Any:
        raise mcpwire.LocalProtocolError(SECRET)

    assert error_of(call_tool(app, "misuse"), -32603, 1) == {"code": -32603, "message": "Internal error"}


# -- the quickstart of docs/server.md, called --------------------------------------------------------------
def _quickstart_app() -> App:
    """The first python block of docs/server.md's quickstart, run as the doc test runs it."""
    page = (REPO / "docs" / "server.md").read_text()
    section = page.split("## Quickstart", 1)[1]
    code = section.split("```python\n", 1)[1].split("\n```", 1)[0]
    namespace: dict[str, Any] = {"__name__": "docs_example"}
    exec(compile(code, "docs/server.md (quickstart)", "exec"), namespace)  # noqa: S102 - the docs' own code
    app = namespace["app"]
    assert isinstance(app, App)
    return app


def test_the_quickstart_of_the_server_page_does_what_it_says() -> None:
    app = _quickstart_app()
    assert listed(app)["add"]["inputSchema"] == {
        "title": "addArguments", "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer", "default": 2}}, "required": ["a"],
    }
    assert listed(app)["add"]["description"] == "Add two integers."
    assert text_of(tool_result(app, "add", {"a": 40})) == "42"
    assert text_of(tool_result(app, "divide", {"a": 1, "b": 4})) == "0.25"
    refused = tool_result(app, "divide", {"a": 1, "b": 0})
    assert refused["isError"] is True and text_of(refused) == "cannot divide by zero"
    reply = dispatch(app, "tools/call", {"name": "count", "arguments": {"to": 2}, "_meta": meta(token="p")})
    assert [m["params"]["progress"] for m in reply.messages[:-1]] == [1, 2]
    assert text_of(reply.result) == "counted to 2"
    read = dispatch(app, "resources/read", {"uri": "docs://readme"}).result["contents"]
    assert read == [{"uri": "docs://readme", "mimeType": "text/plain", "text": "Hello from mcpwire."}]
    prompt = dispatch(app, "prompts/get", {"name": "review", "arguments": {"code": "x = 1"}}).result
    assert prompt["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Please review this code:\n\nx = 1"}}]
