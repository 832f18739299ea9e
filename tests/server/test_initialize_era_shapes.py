"""Results shaped per initialize-era revision (mcpwire/server/initialize_era_results.py, mcpwire/wire/initialize_era_shapes.py):
what a session of 2025-11-25, 2025-06-18 or 2025-03-26 receives validates against that
revision's official schema and carries no member of a named type that the revision does not
define (icons, titles, structuredContent, resource links... where it lacks them). The shapes
table is checked to be what scripts/gen_initialize_era_shapes.py makes of the vendored schemas."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import mcpwire
import mcpwire.server.initialize_era_results
import mcpwire.sessions
from mcpwire import StdioConnection, StdioExchange
from mcpwire.types import (
    Annotations, AudioContent, BlobResourceContents, CallToolResult, CompleteResult, Completion, CreateMessageRequest,
    CreateMessageRequestParams, ElicitRequest, ElicitRequestFormParams, EmbeddedResource, GetPromptResult, Icon,
    ImageContent, Implementation, ListRootsRequest, Prompt, PromptArgument, PromptMessage, ReadResourceResult, Resource,
    ResourceLink, ResourceTemplate, SamplingMessage, TextContent, TextResourceContents, Tool, ToolAnnotations,
)
from mcpwire.wire import initialize_era_shapes

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "tests" / "data" / "schemas"
ERA = ("2025-11-25", "2025-06-18", "2025-03-26")
NOW = 1_800_000_000.0
ICONS = [Icon(src="https://example.com/i.png", mime_type="image/png")]


def load_generator() -> Any:
    spec = importlib.util.spec_from_file_location("gen_initialize_era_shapes", ROOT / "scripts" / "gen_initialize_era_shapes.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_shapes_table_is_generated_from_the_vendored_schemas() -> None:
    generator = load_generator()
    for revision in ERA:
        members, variants = generator.shapes(revision)
        assert initialize_era_shapes.MEMBERS[revision] == members, revision
        assert initialize_era_shapes.VARIANTS[revision] == variants, revision


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


# -- every message a session receives, in each revision ------------------------------------------

# Members whose value is a JSON Schema or an open map: sent as they are, whatever they hold.
OPEN_MEMBERS = frozenset({"inputSchema", "outputSchema", "requestedSchema", "_meta", "structuredContent",
                          "experimental", "metadata", "arguments", "content"})


def check_strict(defs: dict[str, Any], schema: dict[str, Any], value: Any, where: str) -> None:
    """Every object the schema describes with ``properties`` (named types and inline objects
    alike, such as a notification's params) holds only those members; open members excepted."""
    ref = schema.get("$ref")
    if ref is not None:
        schema = defs[ref.rsplit("/", 1)[-1]]
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        if isinstance(value, dict):
            fitting = [o for o in options if _fits(defs, o, value)]
            assert fitting, f"{where}: no variant takes {sorted(value)}"
            check_strict(defs, fitting[0], value, where)
        return
    for part in schema.get("allOf", ()):
        check_strict(defs, part, value, where)
    if isinstance(value, dict) and "properties" in schema:
        extra = set(value) - set(schema["properties"])
        assert not extra, f"{where}: the revision has no {sorted(extra)}"
        for key, item in value.items():
            if key not in OPEN_MEMBERS:
                check_strict(defs, schema["properties"][key], item, f"{where}.{key}")
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            check_strict(defs, schema["items"], item, f"{where}[{i}]")


def check_message(revision: str, type_name: str, message: dict[str, Any]) -> None:
    """A whole JSON-RPC message: valid as the revision's JSON-RPC envelope, and its result or
    params valid as ``type_name`` (a result type, or a request/notification type whose params
    are checked) with nothing the revision lacks."""
    defs = definitions(revision)
    key = "$defs" if revision == "2025-11-25" else "definitions"
    cls = jsonschema.Draft202012Validator if revision == "2025-11-25" else jsonschema.Draft7Validator
    cls({"$ref": f"#/{key}/JSONRPCMessage", key: defs}).validate(message)
    checked = message.get("result", message)
    if "method" in message and "jsonrpc" not in defs[type_name]["properties"]:
        checked = {k: v for k, v in message.items() if k not in ("jsonrpc", "id")}  # the envelope's, there
    cls({"$ref": f"#/{key}/{type_name}", key: defs}).validate(checked)
    check_strict(defs, {"$ref": f"#/{key}/{type_name}"}, checked, type_name)


def rich_server() -> mcpwire.Server:
    server = mcpwire.Server(
        Implementation(name="shapes", version="1", title="Shapes", icons=ICONS, website_url="https://example.com"),
        keyring=mcpwire.Keyring.single(b"s" * 32), list_changed=True, completions=True, resource_subscribe=True,
        instructions="Use the tools.", page_size=1,
    )
    for tool in make_server().tools():
        server.add_tool(tool)
    server.add_tool(Tool(name="plain", input_schema={"type": "object"}))
    server.add_tool(Tool(name="listy", input_schema={"type": "object"}, output_schema={"type": "array"}))
    server.add_resource(Resource(uri="test://r", name="r", title="R", mime_type="text/plain", icons=ICONS, size=3,
                                 annotations=Annotations(audience=["user"], priority=0.5,
                                                         last_modified="2025-01-01T00:00:00Z")))
    server.add_template(ResourceTemplate(uri_template="test://t/{id}", name="t", title="T", icons=ICONS))
    server.add_prompt(Prompt(name="p", title="P", description="A prompt", icons=ICONS,
                             arguments=[PromptArgument(name="a", title="A", required=True)]))
    return server


ANNOTATED = Annotations(audience=["assistant"], priority=1.0, last_modified="2025-01-01T00:00:00Z")
PNG = "iVBORw0KGgo="


def content_blocks() -> list[Any]:
    return [TextContent(text="hi", annotations=ANNOTATED, meta={"k": 1}),
            ImageContent(data=PNG, mime_type="image/png", annotations=ANNOTATED),
            AudioContent(data="UklGRg==", mime_type="audio/wav"),
            EmbeddedResource(resource=TextResourceContents(uri="test://r", text="x", mime_type="text/plain"),
                             annotations=ANNOTATED),
            EmbeddedResource(resource=BlobResourceContents(uri="test://b", blob="AAEC")),
            ResourceLink(uri="test://r", name="r", title="R", icons=ICONS, annotations=ANNOTATED)]


class Lines:
    """An initialize-era stdio session; every line the server writes is kept."""

    def __init__(self, revision: str) -> None:
        self.conn = StdioConnection(rich_server())
        self.ids = iter(range(1, 1000))
        self.seen: list[dict[str, Any]] = []
        caps = {"sampling": {}, "roots": {"listChanged": True}, "elicitation": {}}
        init = {"protocolVersion": revision, "capabilities": caps, "clientInfo": {"name": "c", "version": "1"}}
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
        (stream,) = self.conn.receive_data(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n', now=NOW)
        assert isinstance(stream, mcpwire.sessions.StdioSessionStream)
        self.keep(stream.start())

    def keep(self, out: Any) -> None:
        for part in out if isinstance(out, list) else [out]:
            if isinstance(part, bytes):
                self.seen.extend(json.loads(piece) for piece in part.splitlines() if piece)

    def send(self, message: dict[str, Any]) -> list[Any]:
        out = self.conn.receive_data(json.dumps(message).encode() + b"\n", now=NOW)
        self.keep(out)
        return out

    def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        (out,) = self.send({"jsonrpc": "2.0", "id": next(self.ids), "method": method, "params": params or {}})
        return out


RESULT_TYPES = {"initialize": "InitializeResult", "ping": "EmptyResult", "logging/setLevel": "EmptyResult",
                "resources/subscribe": "EmptyResult", "resources/unsubscribe": "EmptyResult",
                "tools/list": "ListToolsResult", "resources/list": "ListResourcesResult",
                "resources/templates/list": "ListResourceTemplatesResult", "prompts/list": "ListPromptsResult",
                "tools/call": "CallToolResult", "resources/read": "ReadResourceResult",
                "prompts/get": "GetPromptResult", "completion/complete": "CompleteResult"}
NOTIFICATION_TYPES = {"notifications/progress": "ProgressNotification",
                      "notifications/message": "LoggingMessageNotification",
                      "notifications/tools/list_changed": "ToolListChangedNotification",
                      "notifications/resources/list_changed": "ResourceListChangedNotification",
                      "notifications/prompts/list_changed": "PromptListChangedNotification",
                      "notifications/resources/updated": "ResourceUpdatedNotification"}
REQUEST_TYPES = {"elicitation/create": "ElicitRequest", "sampling/createMessage": "CreateMessageRequest",
                 "roots/list": "ListRootsRequest"}


@pytest.mark.parametrize("revision", ERA)
def test_every_message_a_session_receives_fits_its_revision(revision: str) -> None:
    s = Lines(revision)
    sent: dict[int, str] = {0: "initialize"}

    def ask(method: str, params: dict[str, Any] | None = None) -> Any:
        sent[len(sent)] = method
        return s.request(method, params)

    for method in ("ping", "tools/list", "resources/list", "resources/templates/list", "prompts/list"):
        ask(method)
    ask("logging/setLevel", {"level": "debug"})
    ask("resources/subscribe", {"uri": "test://r"})
    ask("resources/unsubscribe", {"uri": "test://r"})
    ask("resources/subscribe", {"uri": "test://r"})
    # Every page of a list, through the cursors: the revision's own list, one item a page.
    cursor = next(m["result"]["nextCursor"] for m in s.seen if m.get("id") == 2)
    while cursor:
        ask("tools/list", {"cursor": cursor})
        cursor = s.seen[-1]["result"].get("nextCursor")
    call = ask("tools/call", {"name": "rich", "arguments": {"x": "y"}, "_meta": {"progressToken": "p"}})
    assert isinstance(call, StdioExchange)
    s.keep(call.progress(1, total=2, message="half"))
    s.keep(call.log("info", {"step": 1}, logger="shapes"))
    asked: list[Any] = [ElicitRequest(params=ElicitRequestFormParams(message="Name?", requested_schema={
                            "type": "object", "properties": {"name": {"type": "string"}}})),
                        CreateMessageRequest(params=CreateMessageRequestParams(
                            messages=[SamplingMessage(role="user", content=TextContent(text="hi"))], max_tokens=10)),
                        ListRootsRequest()]
    if revision == "2025-03-26":
        asked = asked[1:]  # elicitation came in 2025-06-18
    s.keep(call.input_required({str(i): r for i, r in enumerate(asked)}))
    call.cancel()
    for name, params in (("tools/call", {"name": "rich", "arguments": {"x": "y"}}),
                         ("resources/read", {"uri": "test://r"}),
                         ("prompts/get", {"name": "p", "arguments": {"a": "1"}}),
                         ("completion/complete", {"ref": {"type": "ref/prompt", "name": "p"},
                                                  "argument": {"name": "a", "value": ""}})):
        exchange = ask(name, params)
        assert isinstance(exchange, StdioExchange), exchange
        result: Any = {
            "tools/call": CallToolResult(content=content_blocks(), structured_content={"n": 1}, is_error=False,
                                         meta={"k": 1}),
            "resources/read": ReadResourceResult(contents=[TextResourceContents(uri="test://r", text="x"),
                                                           BlobResourceContents(uri="test://r", blob="AAEC")]),
            "prompts/get": GetPromptResult(description="d", messages=[PromptMessage(role="user", content=c)
                                                                        for c in content_blocks()]),
            "completion/complete": CompleteResult(completion=Completion(values=["1"], total=1, has_more=False)),
        }[name]
        s.keep(exchange.complete(result))
    ask("tools/call", {"name": "listy", "arguments": {}})  # an error: hidden in every initialize-era revision
    ask("nope/nope")
    server = s.conn.server
    for kind in ("tools", "resources", "prompts"):
        s.keep([out for _, out in server.list_changed(kind)])
    s.keep([out for _, out in server.resource_updated("test://r")])
    kinds: dict[str, int] = {}
    for message in s.seen:
        if "method" in message:
            type_name = NOTIFICATION_TYPES.get(message["method"]) or REQUEST_TYPES[message["method"]]
        elif "error" in message:
            type_name = "JSONRPCError" if revision != "2025-11-25" else "JSONRPCErrorResponse"
        else:
            type_name = RESULT_TYPES[sent[message["id"]]]
        check_message(revision, type_name, message)
        kinds[type_name] = kinds.get(type_name, 0) + 1
    expected = set(RESULT_TYPES.values()) | set(NOTIFICATION_TYPES.values()) | {"CreateMessageRequest", "ListRootsRequest"}
    expected |= {"JSONRPCError" if revision != "2025-11-25" else "JSONRPCErrorResponse"}
    if revision != "2025-03-26":
        expected.add("ElicitRequest")
    assert set(kinds) == expected, set(kinds) ^ expected
    tools = [t["name"] for m in s.seen if "result" in m and sent[m["id"]] == "tools/list" for t in m["result"]["tools"]]
    assert tools == ["plain", "rich"]  # one a page, "listy" left out of the revision's list
    got = next(m["result"] for m in s.seen if "result" in m and sent[m["id"]] == "prompts/get")
    blocks = [message["content"]["type"] for message in got["messages"]]
    if revision == "2025-03-26":  # no resource_link there: its message is left out, not sent broken
        assert blocks == ["text", "image", "audio", "resource", "resource"]
        assert got["messages"][0]["content"]["annotations"] == {"audience": ["assistant"], "priority": 1.0}
    else:
        assert blocks[-1] == "resource_link" and "lastModified" in got["messages"][0]["content"]["annotations"]


def test_lists_are_shaped_once_at_registration(monkeypatch: pytest.MonkeyPatch) -> None:
    """A session's tools/list slices what registration prepared: no shaping per request."""
    sessions = {revision: Session(revision) for revision in ERA}
    before = {revision: s.request("tools/list") for revision, s in sessions.items()}

    def no_shaping(*args: Any) -> Any:
        raise AssertionError("shaped per request")

    monkeypatch.setattr(mcpwire.server.initialize_era_results, "_prune", no_shaping)
    for revision, session in sessions.items():
        for method in ("tools/list", "resources/list", "prompts/list", "resources/templates/list"):
            session.request(method)
        assert session.request("tools/list") == before[revision]
