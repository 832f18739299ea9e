"""Results shaped per initialize-era revision (mcpwire/server/era.py, mcpwire/wire/era_shapes.py):
what a session of 2025-11-25, 2025-06-18 or 2025-03-26 receives validates against that
revision's official schema and carries no member of a named type that the revision does not
define (icons, titles, structuredContent, resource links... where it lacks them). The shapes
table is checked to be what scripts/gen_era_shapes.py makes of the vendored schemas."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import mcpwire
from mcpwire import StdioConnection, StdioExchange
from mcpwire.types import (
    CallToolResult, Icon, Implementation, Prompt, Resource, ResourceLink, TextContent, Tool, ToolAnnotations,
)
from mcpwire.wire import era_shapes

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "tests" / "data" / "schemas"
ERA = ("2025-11-25", "2025-06-18", "2025-03-26")
NOW = 1_800_000_000.0
ICONS = [Icon(src="https://example.com/i.png", mime_type="image/png")]


def load_generator() -> Any:
    spec = importlib.util.spec_from_file_location("gen_era_shapes", ROOT / "scripts" / "gen_era_shapes.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_shapes_table_is_generated_from_the_vendored_schemas() -> None:
    generator = load_generator()
    for revision in ERA:
        members, variants = generator.shapes(revision)
        assert era_shapes.MEMBERS[revision] == members, revision
        assert era_shapes.VARIANTS[revision] == variants, revision


def definitions(revision: str) -> dict[str, Any]:
    schema = json.loads((SCHEMAS / f"schema-{revision}.json").read_text())
    defs: dict[str, Any] = schema.get("$defs") or schema["definitions"]
    return defs


def validate(revision: str, type_name: str, value: Any) -> None:
    """Against the revision's schema, and with no member a named type there does not define."""
    defs = definitions(revision)
    key = "$defs" if revision == "2025-11-25" else "definitions"
    cls = jsonschema.Draft202012Validator if revision == "2025-11-25" else jsonschema.Draft7Validator
    cls({"$ref": f"#/{key}/{type_name}", key: defs}).validate(value)
    check_members(defs, {"$ref": f"#/{key}/{type_name}"}, value, type_name)


def check_members(defs: dict[str, Any], schema: dict[str, Any], value: Any, where: str) -> None:
    ref = schema.get("$ref")
    if ref is not None:
        name = ref.rsplit("/", 1)[-1]
        body = defs[name]
        if "properties" in body and isinstance(value, dict):
            extra = set(value) - set(body["properties"])
            assert not extra, f"{where}: {name} has no {sorted(extra)}"
            for key, item in value.items():
                check_members(defs, body["properties"][key], item, f"{where}.{key}")
            return
        schema = body
    options = schema.get("anyOf") or schema.get("oneOf")
    if options and isinstance(value, dict):
        fitting = [o for o in options if _fits(defs, o, value)]
        assert fitting, f"{where}: no variant takes {sorted(value)}"
        check_members(defs, fitting[0], value, where)
    elif schema.get("type") == "array" and isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            check_members(defs, schema["items"], item, f"{where}[{i}]")


def _fits(defs: dict[str, Any], option: dict[str, Any], value: dict[str, Any]) -> bool:
    body = defs[option["$ref"].rsplit("/", 1)[-1]] if "$ref" in option else option
    if "anyOf" in body or "oneOf" in body:
        return any(_fits(defs, o, value) for o in body.get("anyOf") or body["oneOf"])
    kind = body.get("properties", {}).get("type", {}).get("const")
    return (kind is None or value.get("type") == kind) and all(k in value for k in body.get("required", ()))


def make_server() -> mcpwire.Server:
    info = Implementation(name="shapes", version="1", title="Shapes", icons=ICONS, website_url="https://example.com")
    server = mcpwire.Server(info, keyring=mcpwire.Keyring.single(b"s" * 32), list_changed=True)
    server.add_tool(Tool(name="rich", title="Rich", description="A tool with everything", icons=ICONS,
                         input_schema={"type": "object", "properties": {"x": {"type": "string"}},
                                       "additionalProperties": False, "$schema": "https://json-schema.org/draft/2020-12/schema"},
                         output_schema={"type": "object", "properties": {"n": {"type": "integer"}}},
                         annotations=ToolAnnotations(title="Rich", read_only_hint=True)))
    server.add_resource(Resource(uri="test://r", name="r", title="R", mime_type="text/plain", icons=ICONS, size=3))
    server.add_prompt(Prompt(name="p", title="P", description="A prompt", icons=ICONS))
    return server


class Session:
    def __init__(self, revision: str) -> None:
        self.conn = StdioConnection(make_server())
        self.ids = iter(range(1, 1000))
        init = {"protocolVersion": revision, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
        self.initialize = self.request("initialize", init)
        self.conn.receive_data(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n', now=NOW)

    def request(self, method: str, params: dict[str, Any] | None = None, answer: Any = None) -> dict[str, Any]:
        line = json.dumps({"jsonrpc": "2.0", "id": next(self.ids), "method": method, "params": params or {}})
        (out,) = self.conn.receive_data(line.encode() + b"\n", now=NOW)
        if isinstance(out, StdioExchange):
            out = out.complete(answer)
        assert isinstance(out, bytes), out
        message: dict[str, Any] = json.loads(out)
        assert "result" in message, message
        result: dict[str, Any] = message["result"]
        return result


@pytest.mark.parametrize("revision", ERA)
def test_every_result_fits_its_revision(revision: str) -> None:
    session = Session(revision)
    validate(revision, "InitializeResult", session.initialize)
    listed = session.request("tools/list")
    validate(revision, "ListToolsResult", listed)
    validate(revision, "ListResourcesResult", session.request("resources/list"))
    validate(revision, "ListPromptsResult", session.request("prompts/list"))
    answer = CallToolResult(content=[TextContent(text="hi"), ResourceLink(uri="test://r", name="r", icons=ICONS)],
                            structured_content={"n": 1})
    called = session.request("tools/call", {"name": "rich", "arguments": {"x": "y"}}, answer)
    validate(revision, "CallToolResult", called)
    assert "resultType" not in called and "ttlMs" not in listed and "cacheScope" not in listed


def test_what_each_revision_lacks_is_not_sent() -> None:
    newest, middle, oldest = (Session(r) for r in ERA)
    tool = {r: s.request("tools/list")["tools"][0] for r, s in zip(ERA, (newest, middle, oldest))}
    assert tool["2025-11-25"]["icons"] and tool["2025-11-25"]["title"] == "Rich"
    assert "icons" not in tool["2025-06-18"] and tool["2025-06-18"]["title"] == "Rich"
    assert "icons" not in tool["2025-03-26"] and "title" not in tool["2025-03-26"]
    assert "outputSchema" not in tool["2025-03-26"] and tool["2025-06-18"]["outputSchema"]["type"] == "object"
    # A JSON Schema is sent as it is, whatever members it has.
    assert tool["2025-03-26"]["inputSchema"]["additionalProperties"] is False
    assert tool["2025-03-26"]["inputSchema"]["$schema"].startswith("https://json-schema.org/")
    info = {r: s.initialize["serverInfo"] for r, s in zip(ERA, (newest, middle, oldest))}
    assert info["2025-11-25"]["websiteUrl"] == "https://example.com" and info["2025-11-25"]["icons"]
    assert info["2025-06-18"] == {"name": "shapes", "version": "1", "title": "Shapes"}
    assert info["2025-03-26"] == {"name": "shapes", "version": "1"}
    answer = CallToolResult(content=[TextContent(text="hi"), ResourceLink(uri="test://r", name="r")],
                            structured_content={"n": 1})
    old = oldest.request("tools/call", {"name": "rich", "arguments": {"x": "y"}}, answer)
    assert old == {"content": [{"type": "text", "text": "hi"}]}  # no resource_link, no structuredContent
    mid = middle.request("tools/call", {"name": "rich", "arguments": {"x": "y"}}, answer)
    assert [c["type"] for c in mid["content"]] == ["text", "resource_link"] and mid["structuredContent"] == {"n": 1}
