"""Hold ``mcpwire.types`` against the official 2026-07-28 JSON schema so the two cannot drift.

For every Struct: its wire field set equals the properties of its schema location, its
required fields equal the schema's ``required`` (discriminators excepted: they have defaults
that are always encoded), and encoded samples validate against the schema with
``Draft202012Validator`` (the whole schema document is the registry resource, so every
``$ref`` resolves). Samples round-trip, and unknown fields are ignored on decode.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012

import mcpwire.types as t
from mcpwire.types import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    LOG_LEVEL_META_KEY,
    PROTOCOL_VERSION_META_KEY,
    SERVER_INFO_META_KEY,
    SUBSCRIPTION_ID_META_KEY,
)

# ---------------------------------------------------------------------------------------------
# The schema


# Vendored byte for byte with its provenance (tests/data/schemas/provenance.json, checked by
# tests/integration/test_vendored_schemas.py); the tests read nothing outside the repository.
_SCHEMA_PATH = Path(__file__).resolve().parents[1] / "data" / "schemas" / "schema-2026-07-28.json"
SCHEMA: dict[str, Any] = json.loads(_SCHEMA_PATH.read_text())
DEFS: dict[str, Any] = SCHEMA["$defs"]
_URI = "urn:mcpwire:schema-2026-07-28"
REGISTRY: Registry[Any] = Registry().with_resource(_URI, DRAFT202012.create_resource(SCHEMA))


def _validator(pointer: str) -> Draft202012Validator:
    return Draft202012Validator(
        {"$ref": f"{_URI}#{pointer}"}, registry=REGISTRY, format_checker=Draft202012Validator.FORMAT_CHECKER
    )


def _at(pointer: str) -> dict[str, Any]:
    node: Any = SCHEMA
    for part in pointer.strip("/").split("/"):
        node = node[part]
    assert isinstance(node, dict)
    return node


def _deref(node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    return _at(ref[1:]) if isinstance(ref, str) else node


def _shape(pointer: str) -> tuple[set[str], set[str], dict[str, Any]]:
    """(properties, required, property schemas) of a location; an ``anyOf`` of objects counts
    as the union of its members' properties and the intersection of their required sets."""
    node = _deref(_at(pointer))
    if "anyOf" in node:
        members = [_shape_of(_deref(m)) for m in node["anyOf"]]
        props = set().union(*(m[0] for m in members))
        required = set.intersection(*(m[1] for m in members))
        merged: dict[str, Any] = {}
        for m in members:
            merged.update(m[2])
        return props, required, merged
    return _shape_of(node)


def _shape_of(node: dict[str, Any]) -> tuple[set[str], set[str], dict[str, Any]]:
    props: dict[str, Any] = node.get("properties", {})
    return set(props), set(node.get("required", [])), props


# ---------------------------------------------------------------------------------------------
# Where each Struct lives in the schema. Names equal to a $def are checked to be that $def.

INLINE: dict[type[msgspec.Struct], str] = {
    t.RootsCapability: "/$defs/ClientCapabilities/properties/roots",
    t.SamplingCapability: "/$defs/ClientCapabilities/properties/sampling",
    t.ElicitationCapability: "/$defs/ClientCapabilities/properties/elicitation",
    t.ToolsCapability: "/$defs/ServerCapabilities/properties/tools",
    t.ResourcesCapability: "/$defs/ServerCapabilities/properties/resources",
    t.PromptsCapability: "/$defs/ServerCapabilities/properties/prompts",
    t.CompletionArgument: "/$defs/CompleteRequestParams/properties/argument",
    t.CompletionContext: "/$defs/CompleteRequestParams/properties/context",
    t.Completion: "/$defs/CompleteResult/properties/completion",
    t.EnumOption: "/$defs/TitledSingleSelectEnumSchema/properties/oneOf/items",
    t.UntitledEnumItems: "/$defs/UntitledMultiSelectEnumSchema/properties/items",
    t.TitledEnumItems: "/$defs/TitledMultiSelectEnumSchema/properties/items",
    t.ListRootsRequestParams: "/$defs/ListRootsRequest/properties/params",
    # Decodable stand-in for TextResourceContents | BlobResourceContents.
    t.ResourceContents: "/$defs/EmbeddedResource/properties/resource",
}
# Decodable stand-ins whose subclasses are the schema's union members.
STAND_INS: set[type[msgspec.Struct]] = {t.ResourceContents, t.ElicitRequestParams}


# Structs of an initialize-era revision only (not in the 2026-07-28 schema), with that revision.
OLDER_REVISION: dict[type[msgspec.Struct], str] = {t.InitializeResult: "2025-11-25"}


def _exported_structs() -> list[type[msgspec.Struct]]:
    return [
        obj
        for name in t.__all__
        if inspect.isclass(obj := getattr(t, name)) and issubclass(obj, t.WireType) and obj is not t.WireType
        and obj not in OLDER_REVISION
    ]


@pytest.mark.parametrize("cls", list(OLDER_REVISION), ids=[c.__name__ for c in OLDER_REVISION])
def test_older_revision_struct_matches_its_schema(cls: type[msgspec.Struct]) -> None:
    revision = OLDER_REVISION[cls]
    assert cls.__name__ not in DEFS
    older = json.loads((_SCHEMA_PATH.parent / f"schema-{revision}.json").read_text())
    node = older.get("$defs", older.get("definitions"))[cls.__name__]
    fields = _fields(cls)
    assert set(fields) == set(node["properties"])
    assert {n for n, f in fields.items() if not _has_default(f)} == set(node.get("required", []))


def location(cls: type[msgspec.Struct]) -> str:
    return INLINE.get(cls, f"/$defs/{cls.__name__}")


def _fields(cls: type[msgspec.Struct]) -> dict[str, msgspec.structs.FieldInfo]:
    return {f.encode_name: f for f in msgspec.structs.fields(cls)}


def _has_default(f: msgspec.structs.FieldInfo) -> bool:
    return f.default is not msgspec.NODEFAULT or f.default_factory is not msgspec.NODEFAULT


def _stand_in_of(cls: type[msgspec.Struct]) -> type[msgspec.Struct] | None:
    return next((b for b in cls.__mro__[1:] if b in STAND_INS), None)


# ---------------------------------------------------------------------------------------------
# Samples: one FULL instance per Struct with every field set (nested values full too); more in
# EXTRA. Minimal samples (required fields only) are derived from the full ones.

META = {"com.example/trace": "abc", "plain": [1, {"x": True}]}
IMPL_MIN = {"name": "s", "version": "1"}
RESULT_META = {SERVER_INFO_META_KEY: IMPL_MIN, "com.example/k": 1}
NOTIFICATION_META = {SUBSCRIPTION_ID_META_KEY: 9}
REQUEST_META = {
    PROTOCOL_VERSION_META_KEY: "2026-07-28",
    CLIENT_CAPABILITIES_META_KEY: {"elicitation": {}, "sampling": {}, "roots": {}},
    CLIENT_INFO_META_KEY: {"name": "c", "version": "0.1.0"},
    LOG_LEVEL_META_KEY: "info",
    "progressToken": "p-1",
}

ICON = t.Icon(src="https://example.com/icon.png", mime_type="image/png", sizes=["48x48", "any"], theme="dark")
IMPL = t.Implementation(
    name="mcpwire-test",
    version="0.1.0",
    title="Test",
    description="A test implementation",
    icons=[ICON],
    website_url="https://example.com",
)
ANN = t.Annotations(audience=["user", "assistant"], priority=0.5, last_modified="2025-01-12T15:00:58Z")
TEXT = t.TextContent(text="hello", annotations=ANN, meta=META)
IMAGE = t.ImageContent(data="iVBORw0KGgo=", mime_type="image/png", annotations=ANN, meta=META)
AUDIO = t.AudioContent(data="UklGRiQ=", mime_type="audio/wav", annotations=ANN, meta=META)
LINK = t.ResourceLink(
    uri="test://static-text",
    name="static_text",
    title="Static",
    description="A resource",
    mime_type="text/plain",
    size=42,
    icons=[ICON],
    annotations=ANN,
    meta=META,
)
TEXT_RC = t.TextResourceContents(uri="test://a", mime_type="text/plain", text="This is text.", meta=META)
BLOB_RC = t.BlobResourceContents(uri="test://b", mime_type="application/octet-stream", blob="AAECA3+A/v8=", meta=META)
ANY_RC = t.ResourceContents(uri="test://c", mime_type="text/plain", text="t", blob="AAAA", meta=META)
EMBEDDED = t.EmbeddedResource(resource=TEXT_RC, annotations=ANN, meta=META)
TOOL_USE = t.ToolUseContent(id="tu-1", name="get_weather", input={"city": "Paris"}, meta=META)
TOOL_RESULT = t.ToolResultContent(
    tool_use_id="tu-1", content=[TEXT, EMBEDDED], structured_content={"temp": 20}, is_error=False, meta=META
)

CLIENT_CAPS = t.ClientCapabilities(
    roots=t.RootsCapability(),
    sampling=t.SamplingCapability(context={}, tools={}),
    elicitation=t.ElicitationCapability(form={}, url={}),
    experimental={"com.example.feature": {"on": True}},
    extensions={"io.modelcontextprotocol/tasks": {}},
)
SERVER_CAPS = t.ServerCapabilities(
    tools=t.ToolsCapability(list_changed=True),
    resources=t.ResourcesCapability(subscribe=True, list_changed=False),
    prompts=t.PromptsCapability(list_changed=True),
    completions={},
    logging={},
    experimental={"x": {}},
    extensions={"io.modelcontextprotocol/tasks": {"k": "v"}},
)

TOOL_ANNOTATIONS = t.ToolAnnotations(
    title="Add", read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
TOOL = t.Tool(
    name="add_numbers",
    title="Add",
    description="Adds two numbers",
    input_schema={
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number", "x-mcp-header": "B"}},
        "required": ["a", "b"],
    },
    output_schema={"type": "object", "properties": {"sum": {"type": "number"}}},
    annotations=TOOL_ANNOTATIONS,
    icons=[ICON],
    meta=META,
)
RESOURCE = t.Resource(
    uri="test://static-binary",
    name="static_binary",
    title="Binary",
    description="Bytes",
    mime_type="application/octet-stream",
    size=8,
    icons=[ICON],
    annotations=ANN,
    meta=META,
)
TEMPLATE = t.ResourceTemplate(
    uri_template="test://template/{id}/data",
    name="template_data",
    title="Template",
    description="Data by id",
    mime_type="text/plain",
    icons=[ICON],
    annotations=ANN,
    meta=META,
)
PROMPT_ARGUMENT = t.PromptArgument(name="arg1", title="Arg 1", description="First", required=True)
PROMPT = t.Prompt(
    name="test_prompt_with_arguments",
    title="Args",
    description="A prompt with arguments",
    arguments=[PROMPT_ARGUMENT],
    icons=[ICON],
    meta=META,
)
ENUM_OPTIONS = [t.EnumOption(const="r", title="Red"), t.EnumOption(const="g", title="Green")]
STRING_SCHEMA = t.StringSchema(
    title="Email", description="Your email", min_length=3, max_length=64, format="email", default="a@example.com"
)
NUMBER_SCHEMA = t.NumberSchema(type="integer", title="Age", description="Years", minimum=0, maximum=150, default=30)
BOOLEAN_SCHEMA = t.BooleanSchema(title="OK", description="Confirm", default=True)
UNTITLED_SINGLE = t.UntitledSingleSelectEnumSchema(title="Pick", description="One", enum=["a", "b"], default="a")
TITLED_SINGLE = t.TitledSingleSelectEnumSchema(title="Color", description="One", one_of=ENUM_OPTIONS, default="r")
LEGACY_ENUM = t.LegacyTitledEnumSchema(
    title="Color", description="Legacy", enum=["r", "g"], enum_names=["Red", "Green"], default="g"
)
UNTITLED_MULTI = t.UntitledMultiSelectEnumSchema(
    title="Tags",
    description="Several",
    min_items=0,
    max_items=2,
    items=t.UntitledEnumItems(enum=["a", "b"]),
    default=["a"],
)
TITLED_MULTI = t.TitledMultiSelectEnumSchema(
    title="Colors",
    description="Several",
    min_items=1,
    max_items=2,
    items=t.TitledEnumItems(any_of=ENUM_OPTIONS),
    default=["r"],
)
REQUESTED_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        name: json.loads(msgspec.json.encode(value))
        for name, value in {
            "email": STRING_SCHEMA,
            "age": NUMBER_SCHEMA,
            "ok": BOOLEAN_SCHEMA,
            "pick": UNTITLED_SINGLE,
            "color": TITLED_SINGLE,
            "legacy": LEGACY_ENUM,
            "tags": UNTITLED_MULTI,
            "colors": TITLED_MULTI,
        }.items()
    },
    "required": ["email"],
}
FORM_PARAMS = t.ElicitRequestFormParams(mode="form", message="Please provide name", requested_schema=REQUESTED_SCHEMA)
URL_PARAMS = t.ElicitRequestURLParams(message="Authorize", url="https://example.com/authorize")
ANY_ELICIT_PARAMS = t.ElicitRequestParams(
    mode="url", message="Go", requested_schema=REQUESTED_SCHEMA, url="https://example.com/go"
)
ELICIT_RESULT = t.ElicitResult(
    action="accept", content={"email": "a@example.com", "age": 30, "ok": True, "tags": ["a"]}
)
SAMPLING_MESSAGE = t.SamplingMessage(role="user", content=[TEXT, IMAGE, AUDIO, TOOL_USE, TOOL_RESULT], meta=META)
MODEL_PREFERENCES = t.ModelPreferences(
    hints=[t.ModelHint(name="claude")], cost_priority=0.2, speed_priority=0.5, intelligence_priority=1
)
CREATE_MESSAGE_PARAMS = t.CreateMessageRequestParams(
    messages=[SAMPLING_MESSAGE, t.SamplingMessage(role="assistant", content=TEXT)],
    max_tokens=100,
    system_prompt="Be brief",
    model_preferences=MODEL_PREFERENCES,
    include_context="thisServer",
    temperature=0.7,
    stop_sequences=["\n\n"],
    metadata={"k": "v", "n": [1, 2]},
    tools=[TOOL],
    tool_choice=t.ToolChoice(mode="auto"),
)
CREATE_MESSAGE_RESULT = t.CreateMessageResult(
    role="assistant", content=TEXT, model="test-model", stop_reason="endTurn", meta=META
)
ROOT = t.Root(uri="file:///test/root", name="Test Root", meta=META)
INPUT_RESPONSES_JSON: dict[str, Any] = {
    "user_name": {"action": "accept", "content": {"name": "Alice"}},
    "greeting": {"role": "assistant", "content": {"type": "text", "text": "Hello"}, "model": "m"},
    "client_roots": {"roots": [{"uri": "file:///test/root"}]},
}
FILTER = t.SubscriptionFilter(
    tools_list_changed=True,
    prompts_list_changed=True,
    resources_list_changed=False,
    resource_subscriptions=["test://static-text"],
)

FULL: list[msgspec.Struct] = [
    ICON,
    IMPL,
    ANN,
    t.Result(result_type="complete", meta=RESULT_META),
    t.RequestParams(meta=REQUEST_META),
    t.PaginatedRequestParams(cursor="c-1", meta=REQUEST_META),
    ANY_RC,
    TEXT_RC,
    BLOB_RC,
    TEXT,
    IMAGE,
    AUDIO,
    LINK,
    EMBEDDED,
    TOOL_USE,
    TOOL_RESULT,
    t.RootsCapability(),
    t.SamplingCapability(context={}, tools={}),
    t.ElicitationCapability(form={}, url={}),
    CLIENT_CAPS,
    t.ToolsCapability(list_changed=True),
    t.ResourcesCapability(subscribe=True, list_changed=True),
    t.PromptsCapability(list_changed=False),
    SERVER_CAPS,
    t.RequestMetaObject(
        protocol_version="2026-07-28",
        client_capabilities=CLIENT_CAPS,
        client_info=IMPL,
        log_level="debug",
        progress_token=7,
    ),
    t.ResultMetaObject(server_info=IMPL),
    t.NotificationMetaObject(subscription_id="listen-1"),
    t.SubscriptionsListenResultMetaObject(subscription_id=9, server_info=IMPL),
    TOOL_ANNOTATIONS,
    TOOL,
    t.ListToolsResult(tools=[TOOL], next_cursor="c-2", ttl_ms=0, cache_scope="private", meta=RESULT_META),
    t.CallToolRequestParams(
        name="add_numbers",
        arguments={"a": 1, "b": 2.5},
        input_responses=INPUT_RESPONSES_JSON,
        request_state="mrtr1.abc.def",
        meta=REQUEST_META,
    ),
    t.CallToolResult(
        content=[TEXT, IMAGE, AUDIO, LINK, EMBEDDED],
        structured_content={"answer": 42},
        is_error=False,
        meta=RESULT_META,
    ),
    RESOURCE,
    TEMPLATE,
    t.ListResourcesResult(resources=[RESOURCE], next_cursor="c", ttl_ms=1000, cache_scope="public", meta=RESULT_META),
    t.ListResourceTemplatesResult(
        resource_templates=[TEMPLATE], next_cursor="c", ttl_ms=0, cache_scope="private", meta=RESULT_META
    ),
    t.ReadResourceRequestParams(
        uri="test://static-text", input_responses=INPUT_RESPONSES_JSON, request_state="s", meta=REQUEST_META
    ),
    t.ReadResourceResult(contents=[TEXT_RC, BLOB_RC], ttl_ms=0, cache_scope="private", meta=RESULT_META),
    PROMPT_ARGUMENT,
    PROMPT,
    t.PromptMessage(role="user", content=EMBEDDED),
    t.ListPromptsResult(prompts=[PROMPT], next_cursor="c", ttl_ms=5, cache_scope="public", meta=RESULT_META),
    t.GetPromptRequestParams(
        name="test_prompt_with_arguments",
        arguments={"arg1": "testValue1"},
        input_responses=INPUT_RESPONSES_JSON,
        request_state="s",
        meta=REQUEST_META,
    ),
    t.GetPromptResult(
        description="A prompt",
        messages=[t.PromptMessage(role="user", content=TEXT), t.PromptMessage(role="assistant", content=IMAGE)],
        meta=RESULT_META,
    ),
    t.PromptReference(name="test_prompt_with_arguments", title="Args"),
    t.ResourceTemplateReference(uri="test://template/{id}/data"),
    t.CompletionArgument(name="arg1", value="te"),
    t.CompletionContext(arguments={"arg2": "x"}),
    t.CompleteRequestParams(
        ref=t.PromptReference(name="p", title="P"),
        argument=t.CompletionArgument(name="arg1", value="te"),
        context=t.CompletionContext(arguments={"arg2": "x"}),
        meta=REQUEST_META,
    ),
    t.Completion(values=["test", "text"], total=2, has_more=False),
    t.CompleteResult(completion=t.Completion(values=["test"], total=1, has_more=False), meta=RESULT_META),
    STRING_SCHEMA,
    NUMBER_SCHEMA,
    BOOLEAN_SCHEMA,
    ENUM_OPTIONS[0],
    UNTITLED_SINGLE,
    TITLED_SINGLE,
    LEGACY_ENUM,
    t.UntitledEnumItems(enum=["a"]),
    t.TitledEnumItems(any_of=ENUM_OPTIONS),
    UNTITLED_MULTI,
    TITLED_MULTI,
    ANY_ELICIT_PARAMS,
    FORM_PARAMS,
    URL_PARAMS,
    ELICIT_RESULT,
    t.ModelHint(name="sonnet"),
    MODEL_PREFERENCES,
    t.ToolChoice(mode="required"),
    SAMPLING_MESSAGE,
    CREATE_MESSAGE_PARAMS,
    CREATE_MESSAGE_RESULT,
    ROOT,
    t.ListRootsResult(roots=[ROOT]),
    t.ListRootsRequestParams(meta=META),
    t.ElicitRequest(params=FORM_PARAMS),
    t.CreateMessageRequest(params=CREATE_MESSAGE_PARAMS),
    t.ListRootsRequest(params=t.ListRootsRequestParams(meta=META)),
    t.InputRequiredResult(
        result_type="input_required",
        input_requests={
            "user_name": t.ElicitRequest(params=FORM_PARAMS),
            "auth": t.ElicitRequest(params=URL_PARAMS),
            "greeting": t.CreateMessageRequest(params=CREATE_MESSAGE_PARAMS),
            "client_roots": t.ListRootsRequest(params=t.ListRootsRequestParams()),
        },
        request_state="mrtr1.payload.mac",
        meta=RESULT_META,
    ),
    t.NotificationParams(meta=NOTIFICATION_META),
    t.ProgressNotificationParams(
        progress_token="progress-test-1", progress=50, total=100, message="Half", meta=NOTIFICATION_META
    ),
    t.LoggingMessageNotificationParams(
        level="warning", logger="conformance", data={"detail": [1, "two"]}, meta=NOTIFICATION_META
    ),
    t.CancelledNotificationParams(request_id=7, reason="User cancelled", meta=NOTIFICATION_META),
    t.ResourceUpdatedNotificationParams(uri="test://static-text", meta=NOTIFICATION_META),
    FILTER,
    t.SubscriptionsAcknowledgedNotificationParams(notifications=FILTER, meta=NOTIFICATION_META),
    t.SubscriptionsListenRequestParams(notifications=FILTER, meta=REQUEST_META),
    t.SubscriptionsListenResult(meta={SUBSCRIPTION_ID_META_KEY: 9, SERVER_INFO_META_KEY: IMPL_MIN}),
    t.DiscoverResult(
        supported_versions=["2026-07-28"],
        capabilities=SERVER_CAPS,
        instructions="Use the tools.",
        ttl_ms=0,
        cache_scope="private",
        meta=RESULT_META,
    ),
]

EXTRA: list[msgspec.Struct] = [
    t.ResourceContents(uri="test://t", text=""),
    t.ResourceContents(uri="test://b", blob=""),
    t.ElicitRequestParams(message="m", requested_schema={"type": "object", "properties": {}}),
    t.ElicitRequestParams(mode="form", message="m", requested_schema={"type": "object", "properties": {}}),
    t.ElicitRequestParams(mode="url", message="m", url="https://example.com/"),
    t.ElicitRequestFormParams(message="m", requested_schema={"type": "object", "properties": {}}),
    t.EmbeddedResource(resource=BLOB_RC),
    t.ElicitResult(action="decline"),
    t.ElicitResult(action="cancel"),
    t.SamplingMessage(role="assistant", content=TOOL_USE),
    t.CreateMessageResult(role="assistant", content=[TEXT, TOOL_USE], model="m"),
    t.CompleteRequestParams(
        ref=t.ResourceTemplateReference(uri="test://template/{id}/data"),
        argument=t.CompletionArgument(name="id", value="1"),
        meta=REQUEST_META,
    ),
    t.InputRequiredResult(request_state="only-state"),
    t.CallToolResult(content=[], is_error=True),
    t.NumberSchema(type="number", minimum=0.5),
    t.ProgressNotificationParams(progress_token=3, progress=0.25),
    t.LoggingMessageNotificationParams(level="emergency", data=None),
    t.LoggingMessageNotificationParams(level="info", data="text"),
    t.CancelledNotificationParams(request_id="abc"),
]


def _minimal(x: msgspec.Struct) -> msgspec.Struct:
    # Required-only: fields without defaults, plus those the engine fills in (still required on the wire).
    cls = type(x)
    keep = {name for c, name in _ENGINE_FILLED_FIELDS if c == cls.__name__}
    return cls(
        **{f.name: getattr(x, f.name) for f in msgspec.structs.fields(cls) if not _has_default(f) or f.encode_name in keep}
    )


_ENGINE_FILLED_FIELDS = {("ReadResourceResult", "ttlMs"), ("ReadResourceResult", "cacheScope")}


SAMPLES: list[msgspec.Struct] = [
    *FULL,
    *EXTRA,
    *(_minimal(x) for x in FULL if type(x) not in STAND_INS),
]


def _ids(samples: list[msgspec.Struct]) -> Iterator[str]:
    seen: dict[str, int] = {}
    for x in samples:
        name = type(x).__name__
        seen[name] = seen.get(name, 0) + 1
        yield f"{name}-{seen[name]}"


STRUCTS = _exported_structs()
STRUCT_IDS = [c.__name__ for c in STRUCTS]


# ---------------------------------------------------------------------------------------------
# Coverage of the schema and of the public surface


def test_every_def_is_mirrored_or_listed_as_not_mirrored() -> None:
    unmirrored = t._UNMIRRORED_DEFS
    assert set(unmirrored) <= set(DEFS), set(unmirrored) - set(DEFS)
    assert not set(unmirrored) & set(t.__all__)
    missing = {name for name in DEFS if name not in t.__all__ and name not in unmirrored}
    assert not missing


def test_all_names_exist_and_every_struct_is_exported() -> None:
    assert len(t.__all__) == len(set(t.__all__))
    for name in t.__all__:
        assert hasattr(t, name), name
    defined = {
        obj
        for module in (getattr(t, m) for m in dir(t) if m.startswith("_") and inspect.ismodule(getattr(t, m)))
        for obj in vars(module).values()
        if inspect.isclass(obj) and issubclass(obj, t.WireType) and obj.__module__ == module.__name__
    }
    assert defined - {t.WireType} == set(STRUCTS) | set(OLDER_REVISION)


@pytest.mark.parametrize("cls", STRUCTS, ids=STRUCT_IDS)
def test_struct_is_named_after_its_location(cls: type[msgspec.Struct]) -> None:
    if cls is t.ResourceContents:
        # Named after the schema's common base of the two contents kinds, which it extends with
        # optional text and blob; every value of it is also a valid $defs.ResourceContents.
        base_props, base_required, _ = _shape("/$defs/ResourceContents")
        assert base_props < set(_fields(cls))
        assert base_required == {n for n, f in _fields(cls).items() if not _has_default(f)}
    elif cls in INLINE:
        assert cls.__name__ not in DEFS
        _at(INLINE[cls])
    else:
        assert cls.__name__ in DEFS


@pytest.mark.parametrize("cls", STRUCTS, ids=STRUCT_IDS)
def test_struct_config(cls: type[msgspec.Struct]) -> None:
    config = cls.__struct_config__
    assert config.frozen
    assert not config.forbid_unknown_fields
    assert not config.omit_defaults
    assert not config.array_like


@pytest.mark.parametrize("cls", STRUCTS, ids=STRUCT_IDS)
def test_every_struct_has_a_full_sample(cls: type[msgspec.Struct]) -> None:
    full = [x for x in FULL if type(x) is cls]
    assert len(full) == 1, f"add exactly one full sample of {cls.__name__} to FULL"
    (x,) = full
    stand_in = _stand_in_of(cls)
    inherited_extras = set(_fields(stand_in)) - _shape(location(cls))[0] if stand_in else set()
    unset = {f.encode_name for f in msgspec.structs.fields(cls) if getattr(x, f.name) is msgspec.UNSET}
    assert unset <= inherited_extras, f"full sample leaves {unset} unset"


# ---------------------------------------------------------------------------------------------
# Field sets and required sets


@pytest.mark.parametrize("cls", STRUCTS, ids=STRUCT_IDS)
def test_field_set_matches_schema_properties(cls: type[msgspec.Struct]) -> None:
    props, _, _ = _shape(location(cls))
    config = cls.__struct_config__
    wire = set(_fields(cls))
    if config.tag_field is not None:
        assert config.tag_field not in wire
        wire.add(config.tag_field)
    stand_in = _stand_in_of(cls)
    if stand_in is not None:
        # A construction subclass also carries its stand-in's fields for the sibling variant.
        extras = wire - props
        assert extras <= set(_fields(stand_in))
        assert all(_fields(cls)[e].default is msgspec.UNSET for e in extras)
        wire -= extras
    assert wire == props


# Required on the wire but filled in by the server engine from its CachePolicy when the host
# leaves them UNSET (mcpwire/_server.py, _shape_result).
ENGINE_FILLED = _ENGINE_FILLED_FIELDS


@pytest.mark.parametrize("cls", STRUCTS, ids=STRUCT_IDS)
def test_required_fields_match_schema(cls: type[msgspec.Struct]) -> None:
    props, required, prop_schemas = _shape(location(cls))
    config = cls.__struct_config__
    if config.tag_field is not None:
        assert config.tag_field in required
        assert prop_schemas[config.tag_field].get("const") == config.tag
    for wire_name, f in _fields(cls).items():
        if wire_name not in props:
            continue  # a stand-in subclass's sibling field, checked above
        discriminator = wire_name == "resultType" or "const" in prop_schemas[wire_name]
        if wire_name in required:
            if discriminator and _has_default(f):
                # Always encoded: the default is the value itself, never UNSET.
                assert f.default is not msgspec.UNSET
                if wire_name == "resultType":
                    assert f.default in ("complete", "input_required")
                else:
                    assert f.default == prop_schemas[wire_name]["const"]
            elif (cls.__name__, wire_name) in ENGINE_FILLED:
                assert f.default is msgspec.UNSET
            else:
                assert not _has_default(f), f"{wire_name} is required by the schema"
        elif discriminator and f.default is not msgspec.UNSET:
            # An optional const (ElicitRequestURLParams.mode is required there; Form's is not).
            pytest.fail(f"optional {wire_name} must default to UNSET")
        else:
            assert f.default is msgspec.UNSET, f"optional {wire_name} must default to UNSET"


# ---------------------------------------------------------------------------------------------
# Encoded samples validate against the schema; round trips; unknown fields


@pytest.mark.parametrize("sample", SAMPLES, ids=list(_ids(SAMPLES)))
def test_encoded_sample_validates_against_schema(sample: msgspec.Struct) -> None:
    wire = json.loads(msgspec.json.encode(sample))
    errors = sorted(_validator(location(type(sample))).iter_errors(wire), key=lambda e: e.path)
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)
    if isinstance(sample, t.ResourceContents):
        assert not list(_validator("/$defs/ResourceContents").iter_errors(wire))
    if type(sample) not in STAND_INS:
        for cls in type(sample).__mro__[1:]:
            if cls in STAND_INS:  # a construction subclass is also a valid stand-in value
                assert not list(_validator(location(cls)).iter_errors(wire))


@pytest.mark.parametrize("sample", SAMPLES, ids=list(_ids(SAMPLES)))
def test_round_trip(sample: msgspec.Struct) -> None:
    encoded = msgspec.json.encode(sample)
    decoded = msgspec.json.decode(encoded, type=type(sample))
    assert decoded == sample
    # Same JSON again (a JSON integer read into a float field re-encodes as 50.0, equal to 50).
    assert json.loads(msgspec.json.encode(decoded)) == json.loads(encoded)
    assert msgspec.convert(msgspec.to_builtins(sample), type=type(sample)) == sample


@pytest.mark.parametrize("sample", SAMPLES, ids=list(_ids(SAMPLES)))
def test_unknown_top_level_fields_are_ignored(sample: msgspec.Struct) -> None:
    wire = json.loads(msgspec.json.encode(sample))
    wire["zzUnknown"] = {"nested": [1, None, {"deep": True}]}
    wire["_metaExtra"] = 1
    assert msgspec.json.decode(json.dumps(wire).encode(), type=type(sample)) == sample


def test_unknown_nested_fields_are_ignored() -> None:
    wire = {
        "resultType": "input_required",
        "futureField": 1,
        "inputRequests": {
            "a": {
                "method": "elicitation/create",
                "id": "ignored",
                "params": {"message": "m", "requestedSchema": {"type": "object", "properties": {}}, "x": 1},
            },
            "b": {"method": "roots/list", "params": {"_meta": {"k": 1}, "other": []}},
        },
    }
    decoded = msgspec.json.decode(json.dumps(wire).encode(), type=t.InputRequiredResult)
    assert decoded == t.InputRequiredResult(
        input_requests={
            "a": t.ElicitRequest(
                params=t.ElicitRequestFormParams(message="m", requested_schema={"type": "object", "properties": {}})
            ),
            "b": t.ListRootsRequest(params=t.ListRootsRequestParams(meta={"k": 1})),
        }
    )
    result = msgspec.json.decode(
        b'{"content":[{"type":"text","text":"x","annotations":{"priority":1,"newHint":"y"},"z":0},'
        b'{"type":"resource","resource":{"uri":"u","blob":"AA==","size":2}}],"extra":true}',
        type=t.CallToolResult,
    )
    assert result == t.CallToolResult(
        content=[
            t.TextContent(text="x", annotations=t.Annotations(priority=1)),
            t.EmbeddedResource(resource=t.BlobResourceContents(uri="u", blob="AA==")),
        ]
    )
    caps = msgspec.json.decode(
        b'{"roots":{"listChanged":true},"elicitation":{"form":{},"future":{}},"newCap":{}}', type=t.ClientCapabilities
    )
    assert caps == t.ClientCapabilities(roots=t.RootsCapability(), elicitation=t.ElicitationCapability(form={}))


# ---------------------------------------------------------------------------------------------
# Behaviour the conventions promise


def test_absent_stays_absent_and_discriminators_are_always_encoded() -> None:
    assert msgspec.json.encode(t.Tool(name="n", input_schema={"type": "object"})) == (
        b'{"name":"n","inputSchema":{"type":"object"}}'
    )
    assert json.loads(msgspec.json.encode(t.CallToolResult(content=[]))) == {"resultType": "complete", "content": []}
    assert json.loads(msgspec.json.encode(t.InputRequiredResult())) == {"resultType": "input_required"}
    assert json.loads(msgspec.json.encode(t.StringSchema())) == {"type": "string"}
    assert json.loads(msgspec.json.encode(URL_PARAMS))["mode"] == "url"
    assert "mode" not in json.loads(msgspec.json.encode(t.ElicitRequestFormParams(message="m", requested_schema={})))
    assert json.loads(msgspec.json.encode(t.ListRootsRequest())) == {"method": "roots/list"}
    assert json.loads(msgspec.json.encode(t.ClientCapabilities(roots=t.RootsCapability()))) == {"roots": {}}


def test_missing_result_type_reads_as_complete() -> None:
    decoded = msgspec.json.decode(b'{"content":[]}', type=t.CallToolResult)
    assert decoded.result_type == "complete"


def test_schema_bounds_are_enforced_on_decode() -> None:
    # Each refused at the member whose bound it breaks.
    with pytest.raises(msgspec.ValidationError, match=r"at `\$\.ttlMs`"):
        msgspec.json.decode(b'{"tools":[],"ttlMs":-1,"cacheScope":"private"}', type=t.ListToolsResult)
    with pytest.raises(msgspec.ValidationError, match=r"at `\$\.cacheScope`"):
        msgspec.json.decode(b'{"tools":[],"ttlMs":0,"cacheScope":"shared"}', type=t.ListToolsResult)
    with pytest.raises(msgspec.ValidationError, match=r"at `\$\.values`"):
        msgspec.json.decode(json.dumps({"values": ["v"] * 101}).encode(), type=t.Completion)
    with pytest.raises(msgspec.ValidationError, match=r"at `\$\.priority`"):
        msgspec.json.decode(b'{"priority":1.5}', type=t.Annotations)
    with pytest.raises(msgspec.ValidationError, match=r"at `\$\.type`"):
        msgspec.json.decode(b'{"type":"video","data":""}', type=t.ContentBlock)


def test_resource_contents_decode_to_the_stand_in() -> None:
    decoded = msgspec.json.decode(b'{"type":"resource","resource":{"uri":"u","text":"t"}}', type=t.ContentBlock)
    assert isinstance(decoded, t.EmbeddedResource)
    assert type(decoded.resource) is t.ResourceContents
    assert decoded.resource == t.TextResourceContents(uri="u", text="t")
    assert decoded.resource != t.BlobResourceContents(uri="u", blob="t")
    assert hash(decoded.resource) == hash(t.TextResourceContents(uri="u", text="t"))
    assert decoded.resource.text == "t" and decoded.resource.blob is msgspec.UNSET
    with pytest.raises(msgspec.ValidationError, match="text.*blob"):
        msgspec.json.decode(b'{"uri":"u","mimeType":"text/plain"}', type=t.ResourceContents)
    with pytest.raises(ValueError, match="resource contents need `text` or `blob`"):
        t.ResourceContents(uri="u")
    assert t.TextResourceContents(uri="u", text="t").__eq__(object()) is NotImplemented


def test_elicitation_params_decode_to_the_stand_in() -> None:
    form = msgspec.json.decode(
        b'{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object"}}}',
        type=t.InputRequest,
    )
    assert isinstance(form, t.ElicitRequest)
    assert type(form.params) is t.ElicitRequestParams
    assert form.params.mode is msgspec.UNSET
    assert form.params == t.ElicitRequestFormParams(message="m", requested_schema={"type": "object"})
    url = msgspec.json.decode(
        b'{"method":"elicitation/create","params":{"mode":"url","message":"m","url":"https://x.example/"}}',
        type=t.InputRequest,
    )
    assert isinstance(url, t.ElicitRequest)
    assert url.params.mode == "url"
    assert url.params == t.ElicitRequestURLParams(message="m", url="https://x.example/")
    assert url.params != form.params
    with pytest.raises(msgspec.ValidationError, match="url"):
        msgspec.json.decode(b'{"mode":"url","message":"m"}', type=t.ElicitRequestParams)
    with pytest.raises(msgspec.ValidationError, match="requestedSchema"):
        msgspec.json.decode(b'{"mode":"form","message":"m"}', type=t.ElicitRequestParams)
    with pytest.raises(msgspec.ValidationError, match=r"at `\$\.mode`"):
        msgspec.json.decode(b'{"mode":"popup","message":"m","requestedSchema":{}}', type=t.ElicitRequestParams)


def test_sampling_content_is_one_block_or_a_list() -> None:
    one = msgspec.json.decode(b'{"role":"user","content":{"type":"text","text":"a"}}', type=t.SamplingMessage)
    many = msgspec.json.decode(
        b'{"role":"user","content":[{"type":"tool_use","id":"1","name":"f","input":{}}]}', type=t.SamplingMessage
    )
    assert one.content == t.TextContent(text="a")
    assert many.content == [t.ToolUseContent(id="1", name="f", input={})]


def test_wire_reference_round_two_request_params() -> None:
    """Wire reference 10.3: the retry's params, and converting each answer by its request."""
    params = msgspec.json.decode(
        json.dumps(
            {
                "name": "test_input_required_result_multiple_inputs",
                "arguments": {},
                "inputResponses": {
                    "user_name": {"action": "accept", "content": {"name": "Alice"}},
                    "greeting": {
                        "role": "assistant",
                        "content": {"type": "text", "text": "Hello there!"},
                        "model": "test-model",
                        "stopReason": "endTurn",
                    },
                    "client_roots": {"roots": [{"uri": "file:///test/root", "name": "Test Root"}]},
                },
                "requestState": "mrtr1.token",
                "_meta": {
                    PROTOCOL_VERSION_META_KEY: "2026-07-28",
                    CLIENT_CAPABILITIES_META_KEY: {"sampling": {}, "elicitation": {}, "roots": {"listChanged": True}},
                },
            }
        ).encode(),
        type=t.CallToolRequestParams,
    )
    assert not isinstance(params.input_responses, msgspec.UnsetType)
    asked: dict[str, t.InputRequest] = {
        "user_name": t.ElicitRequest(params=t.ElicitRequestFormParams(message="?", requested_schema={})),
        "greeting": t.CreateMessageRequest(params=t.CreateMessageRequestParams(messages=[], max_tokens=50)),
        "client_roots": t.ListRootsRequest(),
    }
    answers = {k: msgspec.convert(v, t.input_response_type(asked[k])) for k, v in params.input_responses.items()}
    assert answers == {
        "user_name": t.ElicitResult(action="accept", content={"name": "Alice"}),
        "greeting": t.CreateMessageResult(
            role="assistant", content=t.TextContent(text="Hello there!"), model="test-model", stop_reason="endTurn"
        ),
        "client_roots": t.ListRootsResult(roots=[t.Root(uri="file:///test/root", name="Test Root")]),
    }
    meta = msgspec.convert(params.meta, t.RequestMetaObject)
    assert meta.protocol_version == "2026-07-28"
    assert meta.client_capabilities.roots == t.RootsCapability()
    # Built with the Structs, the same params encode to the same JSON as the decoded dicts.
    rebuilt = msgspec.structs.replace(params, input_responses=answers)
    assert json.loads(msgspec.json.encode(rebuilt)) == json.loads(msgspec.json.encode(params))


def test_request_meta_view_builds_prefixed_keys() -> None:
    meta = t.RequestMetaObject(protocol_version="2026-07-28", client_capabilities=t.ClientCapabilities())
    assert msgspec.to_builtins(meta) == {PROTOCOL_VERSION_META_KEY: "2026-07-28", CLIENT_CAPABILITIES_META_KEY: {}}
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({CLIENT_CAPABILITIES_META_KEY: {}}, t.RequestMetaObject)
    assert not list(_validator("/$defs/RequestMetaObject").iter_errors(msgspec.to_builtins(meta)))


def test_elicit_result_accepts_fractional_numbers() -> None:
    # The schema says integer; the specification's TypeScript says number (see _elicitation).
    decoded = msgspec.json.decode(b'{"action":"accept","content":{"x":1.5}}', type=t.ElicitResult)
    assert decoded.content == {"x": 1.5}


def test_structured_content_and_output_schema_keep_any_json() -> None:
    result = msgspec.json.decode(b'{"content":[],"structuredContent":[1,"a",null]}', type=t.CallToolResult)
    assert result.structured_content == [1, "a", None]
    tool = msgspec.json.decode(b'{"name":"n","inputSchema":{"type":"object"},"outputSchema":true}', type=t.Tool)
    assert tool.output_schema is True
