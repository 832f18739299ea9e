"""The App layer's tools: the schemas it lists and how it turns a handler's answer into a result.

Requests go through the engine in memory (``app.server.receive_http``); exchanges are answered
by ``App.dispatch`` under trio, and every message read back is checked against the official
schema (tests/schema_check.py).
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import trio
from jsonschema import Draft202012Validator
from mcpwire_adapters import App, Context
from schema_check import Reply, assemble, call, exchange, request

from mcpwire import Keyring
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


def call_tool(app: App, name: str, arguments: dict[str, Any] | None = None) -> Reply:
    ex = exchange(app.server, request("tools/call", {"name": name, "arguments": arguments or {}}))
    outputs: list[Any] = []

    async def send(output: Any) -> None:
        outputs.extend(output)

    async def main() -> None:
        with trio.fail_after(5):
            await app.dispatch(ex, send)

    trio.run(main)
    return assemble(outputs, "tools/call")


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


def test_an_explicit_output_schema_is_listed_as_given() -> None:
    app = make_app()
    given = {"type": "object", "properties": {"label": {"type": "string"}}}

    @app.tool(description="Where is it?", output_type=Located, output_schema=given)
    async def locate(ctx: Context, arguments: Any) -> CallToolResult:
        raise AssertionError("not called")

    assert listed(app)["locate"]["outputSchema"] == given
