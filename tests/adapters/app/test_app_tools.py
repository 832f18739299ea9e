"""The App layer's tools: the schemas it lists and how it turns a handler's answer into a result.

Requests go through the engine in memory (``app.server.receive_http``); exchanges are answered
by ``App.dispatch`` under trio, and every message read back is checked against the official
schema (tests/schema_check.py).
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
import trio
from jsonschema import Draft202012Validator
from mcpwire_adapters import App, Context
from schema_check import Reply, assemble, call, error_of, exchange, request

from mcpwire import Keyring, LocalProtocolError, Server
from mcpwire.types import CallToolResult, TextContent


class Point(msgspec.Struct, frozen=True):
    x: float
    y: float


class Located(msgspec.Struct, frozen=True):
    label: str
    where: Point
    tags: list[str] = []


def make_app() -> App:
    return App("tools-test", "1.0", keyring=Keyring.single(b"t" * 32))


def listed(app: App) -> dict[str, dict[str, Any]]:
    reply = call(app.server, request("tools/list"))
    return {tool["name"]: tool for tool in reply.result["tools"]}


def dispatch(app: App, method: str, params: dict[str, Any]) -> Reply:
    """``method`` with ``params`` through the engine and App.dispatch: the reply assembled."""
    ex = exchange(app.server, request(method, params))
    outputs: list[Any] = []

    async def send(output: Any) -> None:
        outputs.extend(output)

    async def main() -> None:
        with trio.fail_after(5):
            await app.dispatch(ex, send)

    trio.run(main)
    return assemble(outputs, method)


def call_tool(app: App, name: str, arguments: dict[str, Any] | None = None) -> Reply:
    return dispatch(app, "tools/call", {"name": name, "arguments": arguments or {}})


# -- outputSchema ---------------------------------------------------------------------------------
def test_struct_output_type_is_listed_as_an_object_schema() -> None:
    app = make_app()

    @app.tool(description="Where is it?", output_type=Located)
    async def locate(ctx: Context, arguments: Any) -> CallToolResult:
        raise AssertionError("not called")

    schema = listed(app)["locate"]["outputSchema"]
    assert schema["type"] == "object" and "$ref" not in schema
    assert set(schema["properties"]) == {"label", "where", "tags"} and schema["required"] == ["label", "where"]
    assert schema["properties"]["where"] == {"$ref": "#/$defs/Point"} and "Point" in schema["$defs"]
    assert schema == app.server.tool_schema(Located)  # the core's derivation, exactly


def test_the_listed_output_schema_validates_the_structured_content() -> None:
    app = make_app()
    value = Located(label="home", where=Point(x=1.5, y=-2.0), tags=["a"])

    @app.tool(description="Where is it?", output_type=Located)
    async def locate(ctx: Context, arguments: Any) -> CallToolResult:
        structured = msgspec.to_builtins(value)
        return CallToolResult(content=[TextContent(text=json.dumps(structured))], structured_content=structured)

    validator = Draft202012Validator(listed(app)["locate"]["outputSchema"])
    result = call_tool(app, "locate").result
    validator.validate(result["structuredContent"])
    assert not validator.is_valid({"label": "home"})  # and it does check


def test_an_explicit_output_schema_must_agree_with_the_output_type() -> None:
    app = make_app()
    given = Server.tool_schema(Located)

    @app.tool(description="Where is it?", output_type=Located, output_schema=given)
    async def locate(ctx: Context, arguments: Any) -> CallToolResult:
        raise AssertionError("not called")

    assert listed(app)["locate"]["outputSchema"] == given
    with pytest.raises(LocalProtocolError, match="disagrees with output_type=Located"):
        @app.tool(description="Where?", output_type=Located,
                  output_schema={"type": "object", "properties": {"label": {"type": "string"}}})
        async def elsewhere(ctx: Context, arguments: Any) -> CallToolResult:
            raise AssertionError("not called")


# -- what a tool handler may return ---------------------------------------------------------------
def test_returning_the_output_type_gives_structured_content_and_its_json_text() -> None:
    app = make_app()
    value = Located(label="home", where=Point(x=1.5, y=-2.0), tags=["a", "b"])

    @app.tool(description="Where is it?", output_type=Located)
    async def locate(ctx: Context, arguments: Any) -> Located:
        return value

    result = call_tool(app, "locate").result
    assert result["structuredContent"] == msgspec.to_builtins(value)
    [block] = result["content"]
    assert block["type"] == "text" and json.loads(block["text"]) == result["structuredContent"]
    assert result.get("isError") in (None, False)
    Draft202012Validator(listed(app)["locate"]["outputSchema"]).validate(result["structuredContent"])


def test_a_plain_function_may_return_the_output_type_too() -> None:
    app = make_app()

    @app.tool(description="Origin", output_type=Point)
    def origin(ctx: Context, arguments: Any) -> Point:
        return Point(x=0.0, y=0.0)

    assert call_tool(app, "origin").result["structuredContent"] == {"x": 0.0, "y": 0.0}


def test_a_generic_output_type_takes_its_runtime_class() -> None:
    app = make_app()

    @app.tool(description="Counts", output_type=dict[str, int])
    async def counts(ctx: Context, arguments: Any) -> dict[str, int]:
        return {"a": 1, "b": 2}

    assert listed(app)["counts"]["outputSchema"] == {"type": "object", "additionalProperties": {"type": "integer"}}
    result = call_tool(app, "counts").result
    assert result["structuredContent"] == {"a": 1, "b": 2}
    assert json.loads(result["content"][0]["text"]) == {"a": 1, "b": 2}


def test_a_struct_of_another_type_is_an_internal_error_without_detail() -> None:
    app = make_app()

    @app.tool(description="Where is it?", output_type=Located)
    async def locate(ctx: Context, arguments: Any) -> Any:
        return Point(x=1.0, y=2.0)

    reply = call_tool(app, "locate")
    error = error_of(reply, -32603, 1)
    assert error["message"] == "Internal error" and "data" not in error
    assert b"Point" not in reply.body and b"Located" not in reply.body


def test_a_struct_without_an_output_type_is_structured_content() -> None:
    # Changed on purpose (tests/adapters/app/test_app_typed_tools.py has the rest): any JSON
    # value is an answer now; a Struct is structuredContent plus its JSON text.
    app = make_app()

    @app.tool(description="Where is it?")
    async def locate(ctx: Context, arguments: Any) -> Any:
        return Point(x=1.0, y=2.0)

    result = call_tool(app, "locate").result
    assert result["structuredContent"] == {"x": 1.0, "y": 2.0}
    assert result["content"] == [{"type": "text", "text": '{"x":1.0,"y":2.0}'}]


class Opaque:
    """Neither a result nor JSON (a number is a result now: its text)."""


def test_an_answer_of_the_wrong_type_is_not_described_on_the_wire() -> None:
    app = make_app()

    @app.tool(description="Broken")
    async def broken(ctx: Context, arguments: Any) -> Any:
        return Opaque()

    reply = call_tool(app, "broken")
    assert error_of(reply, -32603, 1)["message"] == "Internal error"
    assert b"CallToolResult" not in reply.body and b"Opaque" not in reply.body


def test_the_app_names_the_wrong_answer_to_the_host() -> None:
    # What reaches the host (the exception App.dispatch catches), not the wire.
    app = make_app()

    @app.tool(description="Where is it?", output_type=Located)
    async def locate(ctx: Context, arguments: Any) -> Any:
        raise AssertionError("not called")

    with pytest.raises(LocalProtocolError, match=r"'locate' answered with Point; .* output_type Located"):
        app._tool_result("locate", Point(x=1.0, y=2.0))


def test_str_and_call_tool_result_answers_are_unchanged() -> None:
    app = make_app()

    @app.tool(description="Text")
    async def text(ctx: Context, arguments: Any) -> str:
        return "plain"

    @app.tool(description="Result")
    async def result(ctx: Context, arguments: Any) -> CallToolResult:
        return CallToolResult(content=[TextContent(text="full")])

    assert call_tool(app, "text").result["content"] == [{"type": "text", "text": "plain"}]
    assert call_tool(app, "result").result["content"] == [{"type": "text", "text": "full"}]


# -- names and what is registered -----------------------------------------------------------------
class AddArgs(msgspec.Struct, frozen=True):
    a: float
    b: float


def test_arguments_type_decodes_the_arguments_and_lists_their_schema() -> None:
    app = make_app()
    seen: list[Any] = []

    @app.tool(description="Add", arguments_type=AddArgs)
    async def add(ctx: Context, arguments: AddArgs) -> str:
        seen.append(arguments)
        return f"{arguments.a + arguments.b:g}"

    assert listed(app)["add"]["inputSchema"] == app.server.tool_schema(AddArgs)
    assert call_tool(app, "add", {"a": 1, "b": 2}).result["content"][0]["text"] == "3"
    assert seen == [AddArgs(a=1, b=2)]


def test_arguments_is_the_deprecated_name_of_arguments_type() -> None:
    app = make_app()
    with pytest.warns(DeprecationWarning, match="arguments_type"):

        @app.tool(description="Add", arguments=AddArgs)
        async def add(ctx: Context, arguments: AddArgs) -> str:
            return f"{arguments.a + arguments.b:g}"

    assert listed(app)["add"]["inputSchema"] == app.server.tool_schema(AddArgs)
    assert call_tool(app, "add", {"a": 2, "b": 2}).result["content"][0]["text"] == "4"
    with pytest.raises(TypeError, match="arguments_type"):
        app.tool(description="Both", arguments=AddArgs, arguments_type=AddArgs)


def test_what_is_registered_can_be_listed() -> None:
    app = make_app()

    @app.tool(description="Where is it?", output_type=Located)
    async def locate(ctx: Context, arguments: Any) -> Located:
        raise AssertionError("not called")

    @app.tool("add", description="Add", arguments_type=AddArgs)
    async def add(ctx: Context, arguments: AddArgs) -> str:
        raise AssertionError("not called")

    @app.resource("test://readme", name="readme", mime_type="text/plain")
    async def readme(ctx: Context) -> str:
        return "hi"

    @app.resource_template("test://item/{id}", name="item")
    async def item(ctx: Context, id: str) -> str:
        return id

    @app.prompt("greet", description="Greeting")
    async def greet(ctx: Context, arguments: dict[str, str]) -> Any:
        raise AssertionError("not called")

    assert sorted(app.tools) == ["add", "locate"]
    assert app.tools["locate"].output_schema == app.server.tool_schema(Located)
    assert app.tools["add"].input_schema == app.server.tool_schema(AddArgs)
    assert list(app.resources) == ["test://readme"] and app.resources["test://readme"].mime_type == "text/plain"
    assert list(app.resource_templates) == ["test://item/{id}"]
    assert list(app.prompts) == ["greet"] and app.prompts["greet"].description == "Greeting"
    # The views are what the server lists.
    assert {name: msgspec.to_builtins(tool) for name, tool in app.tools.items()} == listed(app)
    tools = app.tools
    with pytest.raises(TypeError):
        tools["x"] = tools["add"]  # type: ignore[index]
    app.remove_tool("add")
    assert list(tools) == ["locate"] and "add" not in listed(app)
