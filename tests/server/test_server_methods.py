"""The methods of MCP 2026-07-28 through the HTTP server engine (wire reference sections 4-7).

server/discover and the four lists are answered by the engine itself; tools/call,
resources/read, prompts/get and completion/complete become exchanges whose answers the tests
complete or fail. Every reply is checked against the schema's result definition for its
method (``schema_check``), so resultType, serverInfo and the cache fields are checked on each.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import msgspec
import pytest
from msgspec import UNSET
from schema_check import (
    SERVER_INFO_META_KEY,
    assemble,
    call,
    error_of,
    ev,
    exchange,
    make_server,
    request,
)

import mcpwire
from mcpwire import CachePolicy
from mcpwire.types import CallToolResult, CompleteResult, Completion, GetPromptResult, Prompt, PromptArgument, PromptMessage, ReadResourceResult, Resource, ResourceTemplate, TextContent, TextResourceContents, Tool

INFO = {"name": "test-server", "version": "1.0.0"}
OBJ = {"type": "object"}


class AddArgs(msgspec.Struct, forbid_unknown_fields=True):
    a: int
    b: int = 0


class Sum(msgspec.Struct):
    total: int


def full_server(**kw: Any) -> mcpwire.Server:
    server = make_server(completions=True, validator=mcpwire.jsonschema_validator(), **kw)
    server.add_tool(Tool(name="echo", description="Echo", input_schema=OBJ))
    server.add_tool(Tool(name="add", description="Adds", input_schema=mcpwire.Server.tool_schema(AddArgs)),
                    arguments_type=AddArgs, output_type=Sum)
    server.add_tool(Tool(
        name="strict", description="JSON Schema validated",
        input_schema={"type": "object", "properties": {"city": {"type": "string", "minLength": 2}},
                      "required": ["city"], "additionalProperties": False},
        output_schema={"type": "object", "properties": {"temp": {"type": "number"}}, "required": ["temp"]},
    ))
    server.add_resource(Resource(uri="test://static-text", name="static_text", mime_type="text/plain"))
    server.add_resource(Resource(uri="test://a-first", name="first"))
    server.add_template(ResourceTemplate(uri_template="test://template/{id}/data", name="template_data"))
    server.add_template(ResourceTemplate(uri_template="test://files/{+path}", name="files"))
    server.add_prompt(Prompt(name="simple", description="Simple"))
    server.add_prompt(Prompt(name="with_args", description="Args", arguments=[
        PromptArgument(name="arg1", required=True), PromptArgument(name="arg2", required=True),
        PromptArgument(name="opt")]))
    return server


SERVER = full_server()


def finish(ex: mcpwire.HttpExchange, result: Any, method: str) -> Any:
    return assemble(ex.complete(result), method)


# --- server/discover (section 4) ---------------------------------------------------------------------


def test_discover_result() -> None:
    server = full_server(instructions="Use the tools wisely")
    reply = call(server, request("server/discover", {}, id="d"))
    result = reply.result
    assert result["supportedVersions"] == ["2026-07-28"]
    assert result["capabilities"] == {  # listChanged only when asked for (list_changed=)
        "tools": {}, "resources": {}, "prompts": {}, "completions": {}, "logging": {},
    }
    assert result["ttlMs"] == 0 and result["cacheScope"] == "private"
    assert result["instructions"] == "Use the tools wisely"
    assert result["_meta"][SERVER_INFO_META_KEY] == INFO
    assert "serverInfo" not in result


def test_list_changed_advertised_per_list() -> None:
    server = make_server(list_changed={"prompts"}, resource_subscribe=True)
    caps = call(server, request("server/discover")).result["capabilities"]
    assert caps["tools"] == {} and caps["prompts"] == {"listChanged": True}
    assert caps["resources"] == {"subscribe": True}


def test_discover_accepts_extra_params() -> None:
    assert call(SERVER, request("server/discover", {"extra": [1, 2]})).status == 200


def test_discover_capabilities_follow_the_flags() -> None:
    server = make_server(tools=False, prompts=False, logging=False, list_changed=False, resource_subscribe=True)
    caps = call(server, request("server/discover")).result["capabilities"]
    assert caps == {"resources": {"subscribe": True}}
    assert "instructions" not in call(server, request("server/discover")).result


@pytest.mark.parametrize(
    ("flags", "methods"),
    [
        ({"tools": False}, ["tools/list", "tools/call"]),
        ({"resources": False}, ["resources/list", "resources/templates/list", "resources/read"]),
        ({"prompts": False}, ["prompts/list", "prompts/get"]),
        ({"completions": False}, ["completion/complete"]),
        ({"list_changed": False}, ["subscriptions/listen"]),
    ],
)
def test_methods_of_unadvertised_capabilities_are_404(flags: dict[str, bool], methods: list[str]) -> None:
    server = make_server(**flags)
    caps = call(server, request("server/discover")).result["capabilities"]
    for method in methods:
        params = {"name": "x", "uri": "test://x", "ref": {"type": "ref/prompt", "name": "x"},
                  "argument": {"name": "a", "value": "b"}, "notifications": {}}
        error_of(call(server, request(method, params, id=method)), -32601, method)
    for key in ("tools", "resources", "prompts", "completions"):
        assert (key in caps) == flags.get(key, key != "completions")


def test_cache_policy_overrides() -> None:
    policies = {m: CachePolicy(ttl_ms=60_000, scope="public") for m in (
        "server/discover", "tools/list", "resources/list", "resources/templates/list", "prompts/list")}
    server = full_server(cache=policies)
    for method in policies:
        result = call(server, request(method)).result
        assert (result["ttlMs"], result["cacheScope"]) == (60_000, "public"), method
    # Methods without a policy keep the default.
    plain = call(full_server(cache={"tools/list": CachePolicy(ttl_ms=5)}), request("prompts/list")).result
    assert (plain["ttlMs"], plain["cacheScope"]) == (0, "private")


@pytest.mark.parametrize("policy", [CachePolicy(ttl_ms=-1), CachePolicy(scope="shared")],  # type: ignore[arg-type]
                         ids=["negative-ttl", "bad-scope"])
def test_invalid_cache_policy_is_refused(policy: CachePolicy) -> None:
    with pytest.raises(mcpwire.LocalProtocolError):
        make_server(cache={"tools/list": policy})


@pytest.mark.parametrize("method", ["tools/call", "prompts/get", "completion/complete", "subscriptions/listen", "nope"])
def test_cache_policy_for_a_method_without_cache_fields_is_refused(method: str) -> None:
    with pytest.raises(mcpwire.LocalProtocolError, match=f"{method} results are not cacheable"):
        make_server(cache={method: CachePolicy(ttl_ms=5)})


# --- lists (sections 5.1, 5.3, 5.5) --------------------------------------------------------------------


def test_lists_are_sorted_and_complete() -> None:
    tools = call(SERVER, request("tools/list")).result["tools"]
    assert [t["name"] for t in tools] == ["add", "echo", "strict"]
    assert tools[0]["inputSchema"] == mcpwire.Server.tool_schema(AddArgs)
    assert tools[0]["inputSchema"]["type"] == "object"
    resources = call(SERVER, request("resources/list")).result["resources"]
    assert [r["uri"] for r in resources] == ["test://a-first", "test://static-text"]
    assert resources[1] == {"uri": "test://static-text", "name": "static_text", "mimeType": "text/plain"}
    templates = call(SERVER, request("resources/templates/list")).result["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == ["test://files/{+path}", "test://template/{id}/data"]
    prompts = call(SERVER, request("prompts/list")).result["prompts"]
    assert [p["name"] for p in prompts] == ["simple", "with_args"]
    assert prompts[1]["arguments"][0] == {"name": "arg1", "required": True}


def test_list_order_is_deterministic_and_insertion_independent() -> None:
    a, b = make_server(), make_server()
    names = ["m", "a", "z", "b"]
    for n in names:
        a.add_tool(Tool(name=n, description=n, input_schema=OBJ))
    for n in reversed(names):
        b.add_tool(Tool(name=n, description=n, input_schema=OBJ))
    first = [call(a, request("tools/list")).result["tools"] for _ in range(3)]
    assert first[0] == first[1] == first[2] == call(b, request("tools/list")).result["tools"]


def test_empty_lists() -> None:
    server = make_server()
    for method, key in (("tools/list", "tools"), ("resources/list", "resources"),
                        ("resources/templates/list", "resourceTemplates"), ("prompts/list", "prompts")):
        result = call(server, request(method)).result
        assert result[key] == [] and "nextCursor" not in result


def test_remove_every_kind() -> None:
    server = full_server()
    server.remove_resource("test://a-first")
    server.remove_template("test://files/{+path}")
    server.remove_prompt("simple")
    assert [r["uri"] for r in call(server, request("resources/list")).result["resources"]] == ["test://static-text"]
    assert len(call(server, request("resources/templates/list")).result["resourceTemplates"]) == 1
    assert [p["name"] for p in call(server, request("prompts/list")).result["prompts"]] == ["with_args"]
    for remove, key in ((server.remove_resource, "test://nope"), (server.remove_template, "x"),
                        (server.remove_prompt, "nope")):
        with pytest.raises(mcpwire.LocalProtocolError):
            remove(key)


class Point(msgspec.Struct):
    x: int
    y: int


class Shape(msgspec.Struct):
    name: str
    points: list[Point]


def test_nested_struct_tool_schema_keeps_its_defs() -> None:
    schema = mcpwire.Server.tool_schema(Shape)
    assert schema["type"] == "object" and "$ref" not in schema and "Point" in schema["$defs"]
    server = make_server()
    server.add_tool(Tool(name="shape", description="d", input_schema=schema), arguments_type=Shape)
    assert call(server, request("tools/list")).result["tools"][0]["inputSchema"] == schema
    ex = exchange(server, request("tools/call", {"name": "shape", "arguments": {"name": "t", "points": [
        {"x": 1, "y": 2}]}}))
    assert ev(ex).arguments == Shape(name="t", points=[Point(x=1, y=2)])
    ex.cancel()
    bad = call(server, request("tools/call", {"name": "shape", "arguments": {"name": "t", "points": [{"x": 1}]}}))
    assert bad.result["isError"] is True


def test_template_with_several_variables() -> None:
    server = make_server()
    server.add_template(ResourceTemplate(uri_template="test://m/{a,b}/x", name="pair"))
    ex = exchange(server, request("resources/read", {"uri": "test://m/1,2/x"}))
    assert ev(ex).variables == {"a": "1", "b": "2"}
    ex.cancel()


def test_remove_and_replace() -> None:
    server = make_server()
    server.add_tool(Tool(name="t", description="one", input_schema=OBJ))
    server.add_tool(Tool(name="t", description="two", input_schema=OBJ))
    assert [t["description"] for t in call(server, request("tools/list")).result["tools"]] == ["two"]
    server.remove_tool("t")
    assert call(server, request("tools/list")).result["tools"] == []
    with pytest.raises(mcpwire.LocalProtocolError):
        server.remove_tool("t")


# --- pagination (section 6) ----------------------------------------------------------------------------


def paged(n: int = 5, size: int = 2) -> mcpwire.Server:
    server = make_server(page_size=size)
    for i in range(n):
        server.add_tool(Tool(name=f"t{i}", description="d", input_schema=OBJ))
        server.add_prompt(Prompt(name=f"p{i}"))
    return server


def page(server: mcpwire.Server, cursor: Any = UNSET, method: str = "tools/list") -> Any:
    params = {} if cursor is UNSET else {"cursor": cursor}
    return call(server, request(method, params, id="pg"))


def test_pages_walk_the_whole_list() -> None:
    server = paged()
    seen, cursor, pages = [], UNSET, 0
    while True:
        result = page(server, cursor).result
        seen += [t["name"] for t in result["tools"]]
        pages += 1
        if "nextCursor" not in result:
            break
        cursor = result["nextCursor"]
        assert isinstance(cursor, str)
    assert seen == ["t0", "t1", "t2", "t3", "t4"] and pages == 3


def test_exact_multiple_of_page_size_has_no_trailing_cursor() -> None:
    server = paged(4, 2)
    second = page(server, page(server).result["nextCursor"]).result
    assert [t["name"] for t in second["tools"]] == ["t2", "t3"] and "nextCursor" not in second


def test_page_size_must_be_positive() -> None:
    with pytest.raises(mcpwire.LocalProtocolError):
        make_server(page_size=0)


@pytest.mark.parametrize("cursor", [5, 1.5, True, {}, ["c"]])
def test_non_string_cursor(cursor: Any) -> None:
    error_of(page(paged(), cursor), -32602, "pg", message_text="Cursor must be a string")


def test_null_cursor_is_not_a_string() -> None:
    error_of(page(paged(), None), -32602, "pg", message_text="Cursor must be a string")


def _tamper(cursor: str) -> list[str]:
    prefix, kid, payload, mac = cursor.split(".")
    data = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    data[1] = 0  # rewind the offset without re-signing
    forged = base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode()).rstrip(b"=").decode()
    flipped = mac[:-1] + ("A" if mac[-1] != "A" else "B")
    return [
        f"{prefix}.{kid}.{forged}.{mac}", f"{prefix}.{kid}.{payload}.{flipped}", cursor + "-TAMPERED",
        cursor[:-1], f"{prefix}.k9.{payload}.{mac}", f"mcpwire1.{kid}.{payload}.{mac}", "", "abc", "a.b.c.d",
        cursor + "." + mac, "x" * 3000, cursor.replace(".", "\u00e9", 1),
    ]


def test_tampered_cursors_are_invalid() -> None:
    server = paged()
    cursor = page(server).result["nextCursor"]
    for bad in _tamper(cursor):
        error_of(page(server, bad), -32602, "pg", message_text="Invalid pagination cursor")
    assert page(server, cursor).status == 200  # the genuine one still works


def test_cursor_of_another_method_is_invalid() -> None:
    server = paged()
    cursor = page(server).result["nextCursor"]
    error_of(page(server, cursor, "prompts/list"), -32602, "pg", message_text="Invalid pagination cursor")


def test_cursor_from_another_keyring_is_invalid_and_a_shared_keyring_accepts_it() -> None:
    server = paged()
    cursor = page(server).result["nextCursor"]
    other = paged()
    other_key = make_server(page_size=2, keyring=mcpwire.Keyring.single(b"o" * 32))
    for i in range(5):
        other_key.add_tool(Tool(name=f"t{i}", description="d", input_schema=OBJ))
    assert [t["name"] for t in page(other, cursor).result["tools"]] == ["t2", "t3"]
    error_of(page(other_key, cursor), -32602, "pg", message_text="Invalid pagination cursor")


@pytest.mark.parametrize("change", ["add", "remove", "replace"])
def test_cursor_expires_when_its_list_changes(change: str) -> None:
    server = paged()
    cursor = page(server).result["nextCursor"]
    if change == "add":
        server.add_tool(Tool(name="t9", description="d", input_schema=OBJ))
    elif change == "remove":
        server.remove_tool("t4")
    else:
        server.add_tool(Tool(name="t0", description="changed", input_schema=OBJ))
    error_of(page(server, cursor), -32602, "pg", message_text="Pagination cursor has expired")


def test_cursor_survives_changes_to_other_lists() -> None:
    server = paged()
    cursor = page(server).result["nextCursor"]
    server.add_prompt(Prompt(name="new"))
    server.add_resource(Resource(uri="test://new", name="new"))
    assert page(server, cursor).status == 200


def test_every_list_paginates() -> None:
    server = make_server(page_size=1)
    server.add_resource(Resource(uri="test://1", name="1"))
    server.add_resource(Resource(uri="test://2", name="2"))
    server.add_template(ResourceTemplate(uri_template="test://{a}", name="a"))
    server.add_template(ResourceTemplate(uri_template="test://{b}/x", name="b"))
    server.add_prompt(Prompt(name="p1"))
    server.add_prompt(Prompt(name="p2"))
    for method in ("resources/list", "resources/templates/list", "prompts/list"):
        first = page(server, UNSET, method).result
        second = page(server, first["nextCursor"], method).result
        assert "nextCursor" not in second, method


# --- tools/call (section 5.2) --------------------------------------------------------------------------


def tool_call(name: Any, arguments: Any = UNSET, rid: Any = "c", **params: Any) -> dict[str, Any]:
    p: dict[str, Any] = {"name": name, **params}
    if arguments is not UNSET:
        p["arguments"] = arguments
    return request("tools/call", p, id=rid)


@pytest.mark.parametrize("name", [UNSET, "", 5, None, ["echo"]], ids=repr)
def test_tool_name_missing_or_not_a_non_empty_string(name: Any) -> None:
    body = tool_call(name)
    if name is UNSET:
        del body["params"]["name"]
    error_of(call(SERVER, body), -32602, "c", message_text="tools/call requires a non-empty string name")


@pytest.mark.parametrize("arguments", [[], "x", 5, None, [{"a": 1}]], ids=repr)
def test_tool_arguments_not_an_object(arguments: Any) -> None:
    error_of(call(SERVER, tool_call("echo", arguments)), -32602, "c")


def test_unknown_tool() -> None:
    error_of(call(SERVER, tool_call("nope", {})), -32602, "c", message_text="Unknown tool: nope")


def test_arguments_shape_is_checked_before_the_tool_lookup() -> None:
    # Argument shape (-32602) is checked before the tool lookup in the reference's order too.
    error = error_of(call(SERVER, tool_call("nope", [])), -32602, "c")
    assert error["message"] == "tools/call arguments must be an object"


def test_tool_call_without_arguments_gets_an_empty_dict() -> None:
    ex = exchange(SERVER, tool_call("echo"))
    assert isinstance(ev(ex), mcpwire.ToolCall)
    assert ev(ex).arguments == {} and ev(ex).name == "echo" and ev(ex).tool.name == "echo"
    assert ev(ex).request_id == "c" and ex.request_id == "c"
    reply = finish(ex, "hello", "tools/call")
    assert reply.status == 200
    assert reply.result == {"resultType": "complete", "content": [{"type": "text", "text": "hello"}],
                            "_meta": {SERVER_INFO_META_KEY: INFO}}


def test_tool_result_meta_is_merged_with_server_info() -> None:
    ex = exchange(SERVER, tool_call("echo", {}))
    result = CallToolResult(content=[TextContent(text="x")], structured_content=[1, 2], is_error=False,
                            meta={"com.example/trace": "t1"})
    reply = finish(ex, result, "tools/call")
    assert reply.result["_meta"] == {"com.example/trace": "t1", SERVER_INFO_META_KEY: INFO}
    assert reply.result["structuredContent"] == [1, 2] and reply.result["isError"] is False


def test_wrong_result_type_is_a_host_error() -> None:
    ex = exchange(SERVER, tool_call("echo", {}))
    with pytest.raises(mcpwire.LocalProtocolError):
        ex.complete(GetPromptResult(messages=[]))
    ex.cancel()


def test_answering_twice_is_a_host_error() -> None:
    ex = exchange(SERVER, tool_call("echo", {}))
    ex.complete("one")
    with pytest.raises(mcpwire.LocalProtocolError):
        ex.complete("two")
    with pytest.raises(mcpwire.LocalProtocolError):
        ex.fail(mcpwire.resource_not_found("x:y"))


def test_struct_typed_tool_gets_a_struct() -> None:
    ex = exchange(SERVER, tool_call("add", {"a": 2, "b": 3}))
    assert ev(ex).arguments == AddArgs(a=2, b=3)
    reply = finish(ex, CallToolResult(content=[TextContent(text="5")], structured_content={"total": 5}), "tools/call")
    assert reply.result["structuredContent"] == {"total": 5}


@pytest.mark.parametrize("arguments", [{"a": "two"}, {}, {"b": 1}, {"a": 1, "c": 2}, {"a": 1.5}],
                         ids=json.dumps)
def test_struct_typed_tool_bad_arguments_are_a_tool_error_not_a_protocol_error(arguments: Any) -> None:
    reply = call(SERVER, tool_call("add", arguments))
    assert reply.status == 200
    result = reply.result
    assert result["resultType"] == "complete" and result["isError"] is True
    assert result["content"][0]["type"] == "text" and "add" in result["content"][0]["text"]
    assert result["_meta"][SERVER_INFO_META_KEY] == INFO


def test_json_schema_tool_valid_arguments() -> None:
    ex = exchange(SERVER, tool_call("strict", {"city": "Paris"}))
    assert ev(ex).arguments == {"city": "Paris"}
    ex.cancel()


@pytest.mark.parametrize("arguments", [{}, {"city": 5}, {"city": "P"}, {"city": "Paris", "extra": 1}],
                         ids=json.dumps)
def test_json_schema_tool_bad_arguments_are_a_tool_error(arguments: Any) -> None:
    reply = call(SERVER, tool_call("strict", arguments))
    assert reply.status == 200 and reply.result["isError"] is True
    assert reply.result["content"][0]["text"].startswith("Invalid arguments for tool strict")


def test_with_validator_unchecked_json_schema_tools_are_not_checked() -> None:
    server = make_server(validator=mcpwire.UNCHECKED)
    server.add_tool(Tool(name="strict", input_schema={"type": "object", "required": ["city"]}))
    ex = exchange(server, tool_call("strict", {}))
    assert ev(ex).arguments == {}
    ex.cancel()


def test_output_type_checks_structured_content() -> None:
    ok = finish(exchange(SERVER, tool_call("add", {"a": 1})),
                CallToolResult(content=[], structured_content={"total": 1}), "tools/call")
    assert ok.status == 200
    bad = finish(exchange(SERVER, tool_call("add", {"a": 1}, rid=2)),
                 CallToolResult(content=[], structured_content={"total": "one"}), "tools/call")
    error_of(bad, -32603, 2)
    answering = exchange(SERVER, tool_call("add", {"a": 1}, rid=3))
    missing = finish(answering, CallToolResult(content=[]), "tools/call")
    error = error_of(missing, -32603, 3)
    assert error["message"] == "Internal error" and "data" not in error  # the cause stays with the host
    assert isinstance(answering.internal_error, mcpwire.RemoteProtocolError)
    assert answering.internal_error.message == "Tool declared an outputSchema but returned no structuredContent"


def test_output_schema_checks_structured_content() -> None:
    ok = finish(exchange(SERVER, tool_call("strict", {"city": "Oslo"})),
                CallToolResult(content=[], structured_content={"temp": -3.5}), "tools/call")
    assert ok.result["structuredContent"] == {"temp": -3.5}
    bad = finish(exchange(SERVER, tool_call("strict", {"city": "Oslo"}, rid=4)),
                 CallToolResult(content=[], structured_content={"temp": "cold"}), "tools/call")
    error = error_of(bad, -32603, 4)
    assert error["message"] == "Internal error" and "data" not in error  # the cause stays with the host


def test_error_results_skip_the_output_check() -> None:
    reply = finish(exchange(SERVER, tool_call("strict", {"city": "Oslo"})),
                   CallToolResult(content=[TextContent(text="upstream down")], is_error=True), "tools/call")
    assert reply.status == 200 and reply.result["isError"] is True


def test_fail_with_a_plain_exception_hides_the_cause() -> None:
    reply = assemble(exchange(SERVER, tool_call("echo", {})).fail(ValueError("secret detail")))
    error = error_of(reply, -32603, "c", message_text="Internal error")
    assert "data" not in error and b"secret" not in reply.body


def test_application_error_codes_travel_with_200() -> None:
    err = mcpwire.ProtocolError("Rate limited", code=-32050, data={"retryAfter": 3})
    reply = assemble(exchange(SERVER, tool_call("echo", {})).fail(err))
    assert reply.status == 200 and reply.error == {"code": -32050, "message": "Rate limited",
                                                   "data": {"retryAfter": 3}}


class Opt(msgspec.Struct):
    q: str


def test_struct_tool_without_input_schema_lists_the_struct_schema() -> None:
    server = make_server()
    server.add_tool(Tool(name="q", description="d", input_schema=UNSET), arguments_type=Opt)  # type: ignore[arg-type]
    tools = call(server, request("tools/list")).result["tools"]
    assert tools[0]["inputSchema"] == mcpwire.Server.tool_schema(Opt)


def test_struct_output_type_is_listed_as_output_schema() -> None:
    server = make_server()
    server.add_tool(Tool(name="q", description="d", input_schema=OBJ), output_type=Sum)
    tool = call(server, request("tools/list")).result["tools"][0]
    assert tool.get("outputSchema", {}).get("properties") == {"total": {"type": "integer"}}


def test_non_object_input_schema_is_refused_at_registration() -> None:
    server = make_server()
    with pytest.raises(mcpwire.LocalProtocolError):
        server.add_tool(Tool(name="bad", description="d", input_schema={"type": "string"}))


# --- resources/read (section 5.4) ----------------------------------------------------------------------


def read(uri: Any, rid: Any = "r") -> dict[str, Any]:
    return request("resources/read", {"uri": uri}, id=rid)


@pytest.mark.parametrize("uri", [UNSET, "", 5, None], ids=repr)
def test_read_uri_missing_or_empty(uri: Any) -> None:
    body = read(uri)
    if uri is UNSET:
        del body["params"]["uri"]
    error_of(call(SERVER, body), -32602, "r", message_text="resources/read requires a non-empty string uri")


@pytest.mark.parametrize("uri", ["static-text", "/etc/passwd", "://x", "1abc:x", " test://x"])
def test_read_uri_not_absolute(uri: str) -> None:
    error_of(call(SERVER, read(uri)), -32602, "r", message_text="resources/read uri must be an absolute URI")


def test_read_listed_resource() -> None:
    ex = exchange(SERVER, read("test://static-text"))
    event = ev(ex)
    assert isinstance(event, mcpwire.ResourceRead)
    assert event.resource is not None and event.resource.name == "static_text" and event.template is None
    result = ReadResourceResult(contents=[TextResourceContents(uri="test://static-text", mime_type="text/plain",
                                                               text="hi")], ttl_ms=UNSET, cache_scope=UNSET)
    reply = finish(ex, result, "resources/read")
    assert reply.result["contents"][0]["text"] == "hi"
    assert (reply.result["ttlMs"], reply.result["cacheScope"]) == (0, "private")


def test_read_through_templates() -> None:
    ex = exchange(SERVER, read("test://template/123/data"))
    assert ev(ex).resource is None
    assert ev(ex).template is not None and ev(ex).template.name == "template_data"
    assert ev(ex).variables == {"id": "123"}
    ex.cancel()
    ex = exchange(SERVER, read("test://files/a/b/c.txt"))
    assert ev(ex).template.name == "files" and ev(ex).variables == {"path": "a/b/c.txt"}
    ex.cancel()
    ex = exchange(SERVER, read("test://template/1/2/data"))  # simple expansion stops at "/"
    assert ev(ex).template is None
    ex.cancel()


def test_read_not_found_is_32602_with_data_uri() -> None:
    uri = "test://nonexistent-resource-for-conformance-testing"
    ex = exchange(SERVER, read(uri, rid=2))
    assert ev(ex).resource is None and ev(ex).template is None
    reply = assemble(ex.fail(mcpwire.resource_not_found(uri)))
    error_of(reply, -32602, 2, data={"uri": uri}, message_text="Resource not found")


def test_read_cache_policy_and_host_values() -> None:
    server = full_server(cache={"resources/read": CachePolicy(ttl_ms=1000, scope="public")})
    result = finish(exchange(server, read("test://static-text")),
                    ReadResourceResult(contents=[], ttl_ms=UNSET, cache_scope=UNSET), "resources/read").result
    assert (result["ttlMs"], result["cacheScope"]) == (1000, "public")
    result = finish(exchange(server, read("test://static-text")),
                    ReadResourceResult(contents=[], ttl_ms=5, cache_scope="private"), "resources/read").result
    assert (result["ttlMs"], result["cacheScope"]) == (5, "private")


def test_read_result_built_without_cache_fields_gets_the_policy() -> None:
    server = full_server(cache={"resources/read": CachePolicy(ttl_ms=1000, scope="public")})
    result = ReadResourceResult(contents=[TextResourceContents(uri="test://static-text", text="x")])
    reply = finish(exchange(server, read("test://static-text")), result, "resources/read")
    assert (reply.result["ttlMs"], reply.result["cacheScope"]) == (1000, "public")
    only_ttl = ReadResourceResult(contents=[], ttl_ms=7)
    reply = finish(exchange(server, read("test://static-text")), only_ttl, "resources/read")
    assert (reply.result["ttlMs"], reply.result["cacheScope"]) == (7, "public")


# --- prompts/get (section 5.5) ----------------------------------------------------------------------------


def get(name: Any, arguments: Any = UNSET, rid: Any = "g") -> dict[str, Any]:
    p: dict[str, Any] = {"name": name}
    if arguments is not UNSET:
        p["arguments"] = arguments
    return request("prompts/get", p, id=rid)


@pytest.mark.parametrize("name", [UNSET, "", 3, None], ids=repr)
def test_prompt_name_missing_or_empty(name: Any) -> None:
    body = get(name)
    if name is UNSET:
        del body["params"]["name"]
    error_of(call(SERVER, body), -32602, "g", message_text="prompts/get requires a non-empty string name")


@pytest.mark.parametrize("arguments", [[], "x", {"arg1": 1}, {"arg1": None}, {"arg1": ["a"]}], ids=json.dumps)
def test_prompt_arguments_must_map_strings_to_strings(arguments: Any) -> None:
    error_of(call(SERVER, get("with_args", arguments)), -32602, "g",
             message_text="prompts/get arguments must map strings to strings")


def test_prompt_arguments_null_is_refused_like_tool_arguments_null() -> None:
    error_of(call(SERVER, get("simple", None)), -32602, "g",
             message_text="prompts/get arguments must map strings to strings")


def test_unknown_prompt() -> None:
    error_of(call(SERVER, get("nope", {})), -32602, "g", message_text="Unknown prompt: nope")


@pytest.mark.parametrize(
    ("arguments", "missing"),
    [(UNSET, ["arg1", "arg2"]), ({}, ["arg1", "arg2"]), ({"arg2": "b"}, ["arg1"]), ({"opt": "o"}, ["arg1", "arg2"])],
)
def test_missing_required_prompt_arguments_lists_them_in_data(arguments: Any, missing: list[str]) -> None:
    error_of(call(SERVER, get("with_args", arguments)), -32602, "g", data={"missing": missing},
             message_text="Missing required prompt arguments")


def test_prompt_get_event_and_result() -> None:
    ex = exchange(SERVER, get("with_args", {"arg1": "testValue1", "arg2": "testValue2"}))
    event = ev(ex)
    assert isinstance(event, mcpwire.PromptGet)
    assert event.arguments == {"arg1": "testValue1", "arg2": "testValue2"} and event.prompt.name == "with_args"
    result = GetPromptResult(description="d", messages=[
        PromptMessage(role="user", content=TextContent(text="testValue1 testValue2"))])
    reply = finish(ex, result, "prompts/get")
    assert reply.result["messages"][0]["content"]["text"] == "testValue1 testValue2"
    assert "ttlMs" not in reply.result


def test_prompt_without_arguments() -> None:
    ex = exchange(SERVER, get("simple"))
    assert ev(ex).arguments == {}
    ex.cancel()


# --- completion/complete (section 5.6) ------------------------------------------------------------------


def complete(ref: Any = UNSET, argument: Any = UNSET, context: Any = UNSET, rid: Any = "x") -> dict[str, Any]:
    p: dict[str, Any] = {}
    for key, value in (("ref", ref), ("argument", argument), ("context", context)):
        if value is not UNSET:
            p[key] = value
    return request("completion/complete", p, id=rid)


PROMPT_REF = {"type": "ref/prompt", "name": "with_args"}
ARG = {"name": "arg1", "value": "te"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"argument": ARG}, "Completion requires a prompt or resource-template reference"),
        ({"ref": "with_args", "argument": ARG}, "Completion requires a prompt or resource-template reference"),
        ({"ref": {"type": "ref/tool", "name": "x"}, "argument": ARG}, "Completion reference type is not supported"),
        ({"ref": {"name": "x"}, "argument": ARG}, "Completion reference type is not supported"),
        ({"ref": {"type": "ref/prompt"}, "argument": ARG}, "Completion requires a prompt or resource-template reference"),
        ({"ref": {"type": "ref/resource", "uri": 5}, "argument": ARG},
         "Completion requires a prompt or resource-template reference"),
        ({"ref": PROMPT_REF}, "Completion argument requires string name and value"),
        ({"ref": PROMPT_REF, "argument": {"name": "arg1"}}, "Completion argument requires string name and value"),
        ({"ref": PROMPT_REF, "argument": {"name": 1, "value": "x"}}, "Completion argument requires string name and value"),
        ({"ref": PROMPT_REF, "argument": ARG, "context": []}, "Completion context must be an object"),
        ({"ref": PROMPT_REF, "argument": ARG, "context": None}, "Completion context must be an object"),
        ({"ref": PROMPT_REF, "argument": ARG, "context": {"arguments": {"arg2": 2}}},
         "Completion context arguments must map strings to strings"),
        ({"ref": PROMPT_REF, "argument": ARG, "context": {"arguments": []}},
         "Completion context arguments must map strings to strings"),
        ({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": ARG}, "Unknown completion prompt: nope"),
    ],
    ids=range(14),
)
def test_completion_errors(kwargs: dict[str, Any], message: str) -> None:
    error_of(call(SERVER, complete(**kwargs)), -32602, "x", message_text=message)


def test_completion_unknown_resource_template_has_data_uri() -> None:
    ref = {"type": "ref/resource", "uri": "test://nope/{x}"}
    error_of(call(SERVER, complete(ref, ARG)), -32602, "x", data={"uri": "test://nope/{x}"},
             message_text="Unknown completion resource template")


def test_completion_event_and_result() -> None:
    ex = exchange(SERVER, complete(PROMPT_REF, ARG, {"arguments": {"arg2": "b"}}))
    event = ev(ex)
    assert isinstance(event, mcpwire.CompletionRequest)
    assert (event.ref_type, event.ref_name, event.argument_name, event.argument_value) == \
        ("ref/prompt", "with_args", "arg1", "te")
    assert event.context_arguments == {"arg2": "b"}
    reply = finish(ex, CompleteResult(completion=Completion(values=["test"], total=1, has_more=False)),
                   "completion/complete")
    assert reply.result["completion"] == {"values": ["test"], "total": 1, "hasMore": False}


def test_completion_for_a_template() -> None:
    ex = exchange(SERVER, complete({"type": "ref/resource", "uri": "test://template/{id}/data"},
                                   {"name": "id", "value": "1"}))
    assert ev(ex).ref_type == "ref/resource" and ev(ex).ref_name == "test://template/{id}/data"
    ex.cancel()


@pytest.mark.parametrize("completion", [Completion(values=["v"] * 101), Completion(values=["a", "b"], total=1)],
                         ids=["over-100", "total-too-small"])
def test_bad_completion_results_are_host_errors(completion: Completion) -> None:
    ex = exchange(SERVER, complete(PROMPT_REF, ARG))
    with pytest.raises(mcpwire.LocalProtocolError):
        ex.complete(CompleteResult(completion=completion))
    ex.cancel()


def test_completion_cannot_need_input() -> None:
    ex = exchange(SERVER, complete(PROMPT_REF, ARG))
    with pytest.raises(mcpwire.LocalProtocolError):
        ex.input_required(state={"x": 1})
    ex.cancel()

