#!/usr/bin/env python3
"""The conformance fixture: an ordinary mcpwire application serving what the official runner calls.

    python conformance/fixture.py [--transport http|stdio] [--host 127.0.0.1] [--port N]
                                  [--server trio|asgi-uvicorn|asgi-hypercorn|asgi-hypercorn-trio]

Over HTTP it binds ``--host`` (127.0.0.1) on ``--port`` (0: the OS picks), prints exactly one
line ``{"conformanceReady": true, "url": "http://127.0.0.1:<port>/mcp"}`` on stdout and serves
until its stdin reaches end of file, then shuts down and exits 0 (the handshake
conformance/run.py expects). Over stdio it serves NDJSON on stdin/stdout until stdin closes.
Diagnostics go to stderr only.

``--server`` picks what serves HTTP: ``trio`` (default) the trio/h11 driver; ``asgi-uvicorn``,
``asgi-hypercorn`` (asyncio worker) and ``asgi-hypercorn-trio`` the same application through
the ASGI adapter (``mcpwire_adapters.serve.asgi.app``) under that server. Every server keeps an
idle connection for :data:`KEEPALIVE_IDLE` seconds.

What it offers is what the runner's server scenarios call, with the results they check
(conformance/RUNNER_NOTES.md, "Server scenarios"): tools, resources, a template and prompts.
It is built on the public API only (``mcpwire_adapters.App``, ``Context`` and ``NeedInput``); the
engine has no special cases for it. :func:`build_app` returns the application so tests can
drive it in-process.

Multi round-trip tools (``test_input_required_result_*``) follow one pattern, :func:`_gather`:
each round merges the answers already collected (carried in the signed requestState) with
the valid answers in ``inputResponses``, asks again for whatever is still missing, and
completes once everything is in. Answers of the wrong shape are -32602, never a result.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import anyio
import msgspec
import trio
from fixture_tasks import task_tools
from mcpwire_adapters import App, Context, HttpServerConfig, NeedInput
from msgspec import UNSET

import mcpwire
from mcpwire.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    CompleteResult,
    Completion,
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    EmbeddedResource,
    GetPromptResult,
    ImageContent,
    InputRequest,
    ListRootsRequest,
    ListRootsRequestParams,
    ListRootsResult,
    PromptArgument,
    PromptMessage,
    ReadResourceResult,
    SamplingMessage,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
    input_response_type,
)

__all__ = ["SERVERS", "SERVER_NAME", "SERVER_VERSION", "build_app", "main"]

SERVER_NAME = "mcpwire-conformance"
SERVER_VERSION = "0.1.0"
SERVERS = ("trio", "asgi-uvicorn", "asgi-hypercorn", "asgi-hypercorn-trio")
# How long every server here keeps an idle kept-alive connection: the trio driver's default, far
# above the 4 s of Node's fetch, the runner's client (uvicorn's and hypercorn's own 5 s and
# gunicorn's 2 s are not: RUNNER_NOTES.md, "Connections").
KEEPALIVE_IDLE = HttpServerConfig().keepalive_idle_timeout

# A 1x1 PNG and a header-only WAV file: tools-call-image and tools-call-audio check only that
# data and mimeType are there (audio/wav exactly; conformance/RUNNER_NOTES.md, "tools-call-*").
PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mP8/x8AAusB9Y9Z4p8AAAAASUVORK5CYII="
WAV_BASE64 = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA="
STATIC_BINARY = bytes([0x00, 0x01, 0x02, 0x03, 0x7F, 0x80, 0xFE, 0xFF])

# The inputSchema the json-schema-2020-12 scenario expects to find unchanged in tools/list.
JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}

NO_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}}
# Completion candidates per argument of test_prompt_with_arguments and the template variable.
COMPLETIONS: dict[str, tuple[str, ...]] = {
    "arg1": ("test", "testValue1", "test-alpha", "value1"),
    "arg2": ("test", "testValue2", "test-beta", "value2"),
    "id": ("123", "124", "456"),
}


# -- input requests -----------------------------------------------------------------------------
def _elicit(message: str, field: str, field_type: str = "string") -> ElicitRequest:
    schema = {"type": "object", "properties": {field: {"type": field_type}}, "required": [field]}
    return ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema=schema))


def _sample(text: str, max_tokens: int) -> CreateMessageRequest:
    message = SamplingMessage(role="user", content=TextContent(text=text))
    return CreateMessageRequest(params=CreateMessageRequestParams(messages=[message], max_tokens=max_tokens))


def _roots() -> ListRootsRequest:
    return ListRootsRequest(params=ListRootsRequestParams())


def _field(name: str, kind: type) -> Callable[[Any], Any]:
    """Value of an accepted form field of type ``kind``; None (ask again) if absent or mistyped.
    A declined or cancelled elicitation is a valid answer without a value: ``{"declined": action}``
    (JSON, so it can travel in the requestState of a later round)."""

    def extract(answer: ElicitResult) -> Any:
        if answer.action != "accept":
            return {"declined": answer.action}
        content = answer.content if answer.content is not UNSET else {}
        value = content.get(name)
        if type(value) is not kind or (kind is str and not value):
            return None
        return value

    return extract


def _sampled_text(answer: CreateMessageResult) -> str:
    blocks = answer.content if isinstance(answer.content, list) else [answer.content]
    return " ".join(b.text for b in blocks if isinstance(b, TextContent)) or f"(non-text reply from {answer.model})"


def _root_uris(answer: ListRootsResult) -> list[str]:
    return [root.uri for root in answer.roots]


class Ask(NamedTuple):
    """One input request of a multi round-trip handler and how to read its answer."""

    request: InputRequest
    extract: Callable[[Any], Any]


def _convert(key: str, request: InputRequest, raw: Any) -> Any:
    cls = input_response_type(request)
    try:
        return msgspec.convert(raw, cls)
    except msgspec.ValidationError as exc:
        raise mcpwire.RemoteProtocolError(
            f"inputResponses.{key} is not a valid {cls.__name__}: {exc}", code=mcpwire.ErrorCode.INVALID_PARAMS
        ) from None


def _gather(ctx: Context, asks: Mapping[str, Ask]) -> tuple[dict[str, Any], dict[str, InputRequest]]:
    """(values collected so far, requests still unanswered) for this round.

    Values answered in earlier rounds come back in the verified state (``collected``); ids the
    handler did not ask for are ignored (the server SHOULD ignore what it does not need:
    specification, Basic > Patterns > Multi Round-Trip Requests, Error Handling).
    """
    state = ctx.state if isinstance(ctx.state, dict) else {}
    collected: dict[str, Any] = dict(state.get("collected") or {})
    for key, ask in asks.items():
        raw = ctx.input_responses.get(key)
        if key in collected or raw is None:
            continue
        value = ask.extract(_convert(key, ask.request, raw))
        if value is not None:
            collected[key] = value
    missing = {key: ask.request for key, ask in asks.items() if key not in collected}
    return collected, missing


def _declined(value: Any) -> str | None:
    return value["declined"] if isinstance(value, dict) and "declined" in value else None


def _text(text: str, *, is_error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=text)], is_error=is_error)


# -- the application ------------------------------------------------------------------------------
def build_app(**options: Any) -> App:
    """The conformance fixture as an :class:`App` (``options`` go to the App/Server)."""
    options.setdefault("resource_subscribe", True)
    options.setdefault("tasks", True)
    app = App(SERVER_NAME, SERVER_VERSION, completions=True, logging=True, list_changed=("tools", "prompts"), **options)
    _content_tools(app)
    _behaviour_tools(app)
    _initialize_era_tools(app)
    _mrtr_tools(app)
    _header_and_schema_tools(app)
    _resources(app)
    _prompts(app)
    _completion(app)
    if app.server.tasks is not None:
        task_tools(app)
    return app


def _content_tools(app: App) -> None:
    @app.tool("test_simple_text", description="Returns one text content block", input_schema=NO_ARGUMENTS)
    async def simple_text(ctx: Context, arguments: Any) -> CallToolResult:
        return _text("This is a simple text response for testing.")

    @app.tool(
        "test_image_content", description="Returns one image content block (a 1x1 PNG)", input_schema=NO_ARGUMENTS
    )
    async def image_content(ctx: Context, arguments: Any) -> CallToolResult:
        return CallToolResult(content=[ImageContent(data=PNG_BASE64, mime_type="image/png")])

    @app.tool(
        "test_audio_content", description="Returns one audio content block (audio/wav)", input_schema=NO_ARGUMENTS
    )
    async def audio_content(ctx: Context, arguments: Any) -> CallToolResult:
        return CallToolResult(content=[AudioContent(data=WAV_BASE64, mime_type="audio/wav")])

    @app.tool("test_embedded_resource", description="Returns one embedded text resource", input_schema=NO_ARGUMENTS)
    async def embedded_resource(ctx: Context, arguments: Any) -> CallToolResult:
        resource = TextResourceContents(
            uri="test://embedded-resource", mime_type="text/plain", text="This is an embedded resource content."
        )
        return CallToolResult(content=[EmbeddedResource(resource=resource)])

    @app.tool(
        "test_multiple_content_types",
        description="Returns text, image and embedded resource blocks",
        input_schema=NO_ARGUMENTS,
    )
    async def multiple_content_types(ctx: Context, arguments: Any) -> CallToolResult:
        resource = TextResourceContents(
            uri="test://mixed-content-resource", mime_type="application/json", text='{"test":"data","value":123}'
        )
        return CallToolResult(
            content=[
                TextContent(text="Multiple content types test:"),
                ImageContent(data=PNG_BASE64, mime_type="image/png"),
                EmbeddedResource(resource=resource),
            ]
        )

    @app.tool("test_error_handling", description="Always fails with a tool execution error", input_schema=NO_ARGUMENTS)
    async def error_handling(ctx: Context, arguments: Any) -> CallToolResult:
        return _text("This tool intentionally returns an error for testing", is_error=True)


def _behaviour_tools(app: App) -> None:
    @app.tool(
        "test_tool_with_progress",
        description="Reports progress 0, 50 and 100 of 100 when given a progressToken",
        input_schema=NO_ARGUMENTS,
    )
    async def tool_with_progress(ctx: Context, arguments: Any) -> CallToolResult:
        steps = ((0, "Starting computation"), (50, "First half complete"), (100, "Computation complete"))
        for i, (progress, message) in enumerate(steps):
            if i:
                await anyio.sleep(0.05)
            await ctx.progress(progress, total=100, message=message)
        return _text(f"Progress computation completed: {sum(range(101))}")

    @app.tool(
        "test_missing_capability",
        description="Always asks the client for sampling; without the sampling capability the answer is -32021",
        input_schema=NO_ARGUMENTS,
    )
    async def missing_capability(ctx: Context, arguments: Any) -> CallToolResult | NeedInput:
        asks = {"capability_probe": Ask(_sample("Say hello", 50), _sampled_text)}
        values, missing = _gather(ctx, asks)
        if missing:
            return NeedInput(requests=missing)
        return _text(f"Sampling answered: {values['capability_probe']}")

    @app.tool(
        "test_logging_tool",
        description="Logs one message at every level with logger 'conformance'",
        input_schema=NO_ARGUMENTS,
    )
    async def logging_tool(ctx: Context, arguments: Any) -> CallToolResult:
        for level in mcpwire.LOG_LEVELS:
            await ctx.log(level, f"{level} message", logger="conformance")
        return _text("Logged at every level")

    @app.tool(
        "test_streaming_elicitation",
        description="Asks for a name through an input_required result, never a request on the stream",
        input_schema=NO_ARGUMENTS,
    )
    async def streaming_elicitation(ctx: Context, arguments: Any) -> CallToolResult | NeedInput:
        asks = {"user_name": Ask(_elicit("What is your name?", "name"), _field("name", str))}
        values, missing = _gather(ctx, asks)
        if missing:
            return NeedInput(requests=missing)
        return _greeting(values["user_name"])

    @app.tool(
        "test_trigger_tool_change",
        description="Notifies open listen streams that the tool list changed",
        input_schema=NO_ARGUMENTS,
        annotations=ToolAnnotations(read_only_hint=True),
    )
    async def trigger_tool_change(ctx: Context, arguments: Any) -> CallToolResult:
        ctx.app.notify_list_changed("tools")
        return _text("Sent notifications/tools/list_changed")

    @app.tool(
        "test_trigger_prompt_change",
        description="Notifies open listen streams that the prompt list changed",
        input_schema=NO_ARGUMENTS,
        annotations=ToolAnnotations(read_only_hint=True),
    )
    async def trigger_prompt_change(ctx: Context, arguments: Any) -> CallToolResult:
        ctx.app.notify_list_changed("prompts")
        return _text("Sent notifications/prompts/list_changed")


def _greeting(value: Any) -> CallToolResult:
    if (action := _declined(value)) is not None:
        return _text(f"No name given: the user chose {action}.")
    return _text(f"Hello, {value}!")


ELICITATION_DEFAULTS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "default": True},
    },
}
ELICITATION_ENUMS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {"type": "string", "oneOf": [
            {"const": "value1", "title": "First value"}, {"const": "value2", "title": "Second value"},
        ]},
        "legacyEnum": {"type": "string", "enum": ["opt1", "opt2"], "enumNames": ["Option one", "Option two"]},
        "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {"type": "array", "items": {"anyOf": [
            {"const": "value1", "title": "First value"}, {"const": "value2", "title": "Second value"},
        ]}},
    },
}
ELICITATION_USER: dict[str, Any] = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}


def _form(message: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"method": "elicitation/create", "params": {"message": message, "requestedSchema": schema}}


def _initialize_era_tools(app: App) -> None:
    """What the 2025-11-25 scenarios call. They ask for input with NeedInput like every other
    tool: on a session the App sends server-to-client requests, on 2026-07-28 it answers
    input_required."""

    @app.tool("test_tool_with_logging", description="Logs three info messages while it works", input_schema=NO_ARGUMENTS)
    async def tool_with_logging(ctx: Context, arguments: Any) -> CallToolResult:
        for i, message in enumerate(("Tool execution started", "Tool processing data", "Tool execution completed")):
            if i:
                await anyio.sleep(0.05)
            await ctx.log("info", message)
        return _text("Logging tool completed")

    prompt_schema = {"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]}

    @app.tool("test_sampling", description="Asks the client's LLM to answer the prompt", input_schema=prompt_schema)
    async def sampling(ctx: Context, arguments: Any) -> CallToolResult | NeedInput:
        prompt = str(arguments.get("prompt", ""))
        asks = {"sample": Ask(_sample(prompt, 100), _sampled_text)}
        values, missing = _gather(ctx, asks)
        if missing:
            return NeedInput(requests=missing)
        return _text(f"LLM response: {values['sample']}")

    message_schema = {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}

    @app.tool("test_elicitation", description="Asks the user for a username and email", input_schema=message_schema)
    async def elicitation(ctx: Context, arguments: Any) -> CallToolResult | NeedInput:
        answer = ctx.input_responses.get("user")
        if answer is None:
            return NeedInput(requests={"user": _form(str(arguments.get("message", "")), ELICITATION_USER)})
        return _text(f"User response: action={answer.get('action')}, content={json.dumps(answer.get('content', {}))}")

    @app.tool(
        "test_elicitation_sep1034_defaults", description="Elicits a form whose fields have defaults (SEP-1034)",
        input_schema=NO_ARGUMENTS,
    )
    async def elicitation_defaults(ctx: Context, arguments: Any) -> CallToolResult | NeedInput:
        answer = ctx.input_responses.get("form")
        if answer is None:
            return NeedInput(requests={"form": _form("Please review these details", ELICITATION_DEFAULTS)})
        content = json.dumps(answer.get("content", {}))
        return _text(f"Elicitation completed: action={answer.get('action')}, content={content}")

    @app.tool(
        "test_elicitation_sep1330_enums", description="Elicits a form with every enum schema shape (SEP-1330)",
        input_schema=NO_ARGUMENTS,
    )
    async def elicitation_enums(ctx: Context, arguments: Any) -> CallToolResult | NeedInput:
        answer = ctx.input_responses.get("form")
        if answer is None:
            return NeedInput(requests={"form": _form("Choose your options", ELICITATION_ENUMS)})
        content = json.dumps(answer.get("content", {}))
        return _text(f"Elicitation completed: action={answer.get('action')}, content={content}")

    @app.tool(
        "test_reconnection", description="On 2025-11-25 sessions, closes its SSE stream mid-call (SEP-1699)",
        input_schema=NO_ARGUMENTS,
    )
    async def reconnection(ctx: Context, arguments: Any) -> CallToolResult:
        if ctx.protocol_version == "2025-11-25" and isinstance(ctx.exchange, mcpwire.HttpExchange):
            await ctx.close_sse_stream(retry_ms=100)
            await anyio.sleep(0.2)
        return _text("Reconnection test completed")


def _mrtr_tools(app: App) -> None:
    @app.tool(
        "test_input_required_result_elicitation",
        description="MRTR: asks for the user's name (user_name), then greets them",
        input_schema=NO_ARGUMENTS,
    )
    async def mrtr_elicitation(ctx: Context, arguments: Any) -> CallToolResult | NeedInput:
        asks = {"user_name": Ask(_elicit("What is your name?", "name"), _field("name", str))}
        values, missing = _gather(ctx, asks)
        if missing:
            return NeedInput(requests=missing)
        return _greeting(values["user_name"])

    @app.tool(
        "test_input_required_result_sampling",
        description="MRTR: asks the client's model a question (capital_question)",
        input_schema=NO_ARGUMENTS,
    )
    async def mrtr_sampling(ctx: Context, arguments: Any) -> CallToolResult | NeedInput:
        asks = {"capital_question": Ask(_sample("What is the capital of France?", 100), _sampled_text)}
        values, missing = _gather(ctx, asks)
        if missing:
            return NeedInput(requests=missing)
        return _text(f"Sampling response: {values['capital_question']}")

    @app.tool(
        "test_input_required_result_list_roots",
        description="MRTR: asks for the client's roots (client_roots)",
        input_schema=NO_ARGUMENTS,
    )
    async def mrtr_list_roots(ctx: Context, arguments: Any) -> CallToolResult | NeedInput:
        asks = {"client_roots": Ask(_roots(), _root_uris)}
        values, missing = _gather(ctx, asks)
        if missing:
            return NeedInput(requests=missing)
        roots = values["client_roots"]
        return _text(f"Client roots ({len(roots)}): {', '.join(roots) or 'none'}")

    @app.tool(
        "test_input_required_result_request_state",
        description="MRTR: asks for confirmation with a requestState, and checks the state on the retry",
        input_schema=NO_ARGUMENTS,
    )
    async def mrtr_request_state(ctx: Context, arguments: Any) -> CallToolResult | NeedInput:
        asks = {"confirm": Ask(_elicit("Please confirm", "ok", "boolean"), _field("ok", bool))}
        if not (isinstance(ctx.state, dict) and ctx.state.get("purpose") == "confirm"):
            # Round 1, or a retry without the state this tool handed out: (re)start, state attached.
            return NeedInput(requests=_requests(asks), state={"purpose": "confirm", "collected": {}})
        values, missing = _gather(ctx, asks)
        if missing:
            return NeedInput(requests=missing, state={"purpose": "confirm", "collected": values})
        return _text(f"state-ok: requestState verified, confirmation {values['confirm']}")

    @app.tool(
        "test_input_required_result_multiple_inputs",
        description="MRTR: asks for an elicitation, a sampling and a roots/list answer at once",
        input_schema=NO_ARGUMENTS,
    )
    async def mrtr_multiple_inputs(ctx: Context, arguments: Any) -> CallToolResult | NeedInput:
        asks = {
            "user_name": Ask(_elicit("What is your name?", "name"), _field("name", str)),
            "greeting": Ask(_sample("Generate a greeting", 50), _sampled_text),
            "client_roots": Ask(_roots(), _root_uris),
        }
        values, missing = _gather(ctx, asks)
        if missing:
            return NeedInput(requests=missing, state={"collected": values})
        name = values["user_name"]
        who = name if _declined(name) is None else "anonymous"
        return _text(f"{who}: {values['greeting']} (roots: {', '.join(values['client_roots']) or 'none'})")

    @app.tool(
        "test_input_required_result_multi_round",
        description="MRTR over three rounds: name (step1), then favourite colour (step2), then the result",
        input_schema=NO_ARGUMENTS,
    )
    async def mrtr_multi_round(ctx: Context, arguments: Any) -> CallToolResult | NeedInput:
        state = ctx.state if isinstance(ctx.state, dict) else {}
        step1 = {"step1": Ask(_elicit("Step 1: What is your name?", "name"), _field("name", str))}
        step2 = {"step2": Ask(_elicit("Step 2: What is your favorite color?", "color"), _field("color", str))}
        if state.get("step") != 2:
            # Round 1, or step 1 not answered yet. The step counter makes each round's state differ.
            values, missing = _gather(ctx, step1)
            if missing:
                return NeedInput(requests=missing, state={"step": 1})
            return NeedInput(requests=_requests(step2), state={"step": 2, "name": values["step1"]})
        values, missing = _gather(ctx, step2)
        if missing:
            return NeedInput(requests=missing, state=state)
        name, color = state.get("name"), values["step2"]
        who = name if _declined(name) is None else "Someone"
        return _text(f"{who} likes {color if _declined(color) is None else 'no colour'}")

    @app.tool(
        "test_input_required_result_tampered_state",
        description="MRTR with an integrity-protected requestState; a modified state is rejected",
        input_schema=NO_ARGUMENTS,
    )
    async def mrtr_tampered_state(ctx: Context, arguments: Any) -> CallToolResult | NeedInput:
        asks = {"confirm": Ask(_elicit("Please confirm", "ok", "boolean"), _field("ok", bool))}
        if not isinstance(ctx.state, dict):
            return NeedInput(requests=_requests(asks), state={"collected": {}})
        values, missing = _gather(ctx, asks)
        if missing:
            return NeedInput(requests=missing, state={"collected": values})
        return _text(f"requestState verified; confirmation {values['confirm']}")

    @app.tool(
        "test_input_required_result_capabilities",
        description="MRTR asking only for the kinds of input the request's client capabilities allow",
        input_schema=NO_ARGUMENTS,
    )
    async def mrtr_capabilities(ctx: Context, arguments: Any) -> CallToolResult | NeedInput:
        every = {
            "user_name": Ask(_elicit("What is your name?", "name"), _field("name", str)),
            "greeting": Ask(_sample("Generate a greeting", 50), _sampled_text),
            "client_roots": Ask(_roots(), _root_uris),
        }
        asks = {k: a for k, a in every.items() if not ctx.meta.missing_capabilities({k: a.request})}
        if not asks:
            # Nothing this client can answer: asking anyway makes the engine refuse with -32021,
            # naming every capability that would do.
            return NeedInput(requests=_requests(every))
        values, missing = _gather(ctx, asks)
        if missing:
            return NeedInput(requests=missing, state={"collected": values})
        return _text("Received: " + ", ".join(sorted(values)))


def _requests(asks: Mapping[str, Ask]) -> dict[str, InputRequest]:
    return {key: ask.request for key, ask in asks.items()}


def _header_and_schema_tools(app: App) -> None:
    @app.tool(
        "a_header_probe",
        description="Alphabetically first tool; takes no arguments (the header-validation scenario calls it)",
        input_schema=NO_ARGUMENTS,
    )
    async def header_probe(ctx: Context, arguments: Any) -> CallToolResult:
        return _text("header probe ok")

    @app.tool(
        "custom_header_region",
        description="Echoes its region argument, which clients mirror into the Mcp-Param-Region header",
        input_schema={
            "type": "object",
            "properties": {
                "region": {"type": "string", "description": "A region name", "x-mcp-header": "Region"},
            },
            "required": ["region"],
        },
    )
    async def custom_header_region(ctx: Context, arguments: Any) -> CallToolResult:
        return _text(f"Region: {arguments['region']}")

    @app.tool(
        "json_schema_2020_12_tool",
        description="Tool with JSON Schema 2020-12 features",
        input_schema=JSON_SCHEMA_2020_12,
    )
    async def json_schema_tool(ctx: Context, arguments: Any) -> CallToolResult:
        return _text(f"Received: {json.dumps(arguments, sort_keys=True)}")


def _resources(app: App) -> None:
    @app.resource(
        "test://static-text", name="static_text", mime_type="text/plain", description="A static text resource"
    )
    async def static_text(ctx: Context) -> ReadResourceResult:
        return _read(
            TextResourceContents(
                uri="test://static-text", mime_type="text/plain", text="This is a static text resource for testing."
            )
        )

    @app.resource(
        "test://static-binary",
        name="static_binary",
        mime_type="application/octet-stream",
        description="A static binary resource (bytes 00 01 02 03 7F 80 FE FF)",
    )
    async def static_binary(ctx: Context) -> ReadResourceResult:
        import base64

        blob = base64.b64encode(STATIC_BINARY).decode("ascii")
        return _read(BlobResourceContents(uri="test://static-binary", mime_type="application/octet-stream", blob=blob))

    @app.resource_template(
        "test://template/{id}/data",
        name="template_data",
        mime_type="text/plain",
        description="Data for the id in the URI",
    )
    async def template_data(ctx: Context, id: str) -> ReadResourceResult:
        return _read(
            TextResourceContents(
                uri=f"test://template/{id}/data", mime_type="text/plain", text=f"Template resource data for id {id}"
            )
        )


def _read(contents: Any) -> ReadResourceResult:
    # ttlMs/cacheScope are left to the server's cache policy (the default: 0, "private").
    return ReadResourceResult(contents=[contents])


def _prompts(app: App) -> None:
    @app.prompt("test_simple_prompt", description="A prompt without arguments")
    async def simple_prompt(ctx: Context, arguments: dict[str, str]) -> GetPromptResult:
        return GetPromptResult(
            messages=[PromptMessage(role="user", content=TextContent(text="This is a simple prompt for testing."))]
        )

    @app.prompt(
        "test_prompt_with_arguments",
        description="A prompt with two required arguments (also completable)",
        arguments=[
            PromptArgument(name="arg1", description="First argument", required=True),
            PromptArgument(name="arg2", description="Second argument", required=True),
        ],
    )
    async def prompt_with_arguments(ctx: Context, arguments: dict[str, str]) -> GetPromptResult:
        text = f"Prompt with arguments: arg1='{arguments['arg1']}', arg2='{arguments['arg2']}'"
        return GetPromptResult(messages=[PromptMessage(role="user", content=TextContent(text=text))])

    @app.prompt(
        "test_prompt_with_embedded_resource",
        description="A prompt embedding the resource named by resourceUri",
        arguments=[PromptArgument(name="resourceUri", description="URI of the resource to embed", required=True)],
    )
    async def prompt_with_embedded_resource(ctx: Context, arguments: dict[str, str]) -> GetPromptResult:
        resource = TextResourceContents(
            uri=arguments["resourceUri"], mime_type="text/plain", text="Embedded resource content for testing."
        )
        return GetPromptResult(
            messages=[
                PromptMessage(role="user", content=EmbeddedResource(resource=resource)),
                PromptMessage(role="user", content=TextContent(text="Please process the embedded resource above.")),
            ]
        )

    @app.prompt("test_prompt_with_image", description="A prompt with an image")
    async def prompt_with_image(ctx: Context, arguments: dict[str, str]) -> GetPromptResult:
        return GetPromptResult(
            messages=[
                PromptMessage(role="user", content=ImageContent(data=PNG_BASE64, mime_type="image/png")),
                PromptMessage(role="user", content=TextContent(text="Please analyze the image above.")),
            ]
        )

    @app.prompt("test_input_required_result_prompt", description="MRTR prompt: asks for context (user_context) first")
    async def mrtr_prompt(ctx: Context, arguments: dict[str, str]) -> GetPromptResult | NeedInput:
        asks = {"user_context": Ask(_elicit("What context should the prompt use?", "context"), _field("context", str))}
        values, missing = _gather(ctx, asks)
        if missing:
            return NeedInput(requests=missing)
        context = values["user_context"]
        if _declined(context) is not None:
            context = "no context given"
        return GetPromptResult(
            description="A prompt built from elicited context",
            messages=[PromptMessage(role="user", content=TextContent(text=f"Answer using this context: {context}"))],
        )


def _completion(app: App) -> None:
    @app.completion
    async def complete(ctx: Context) -> CompleteResult:
        event = ctx.event
        assert isinstance(event, mcpwire.CompletionRequest)
        candidates = COMPLETIONS.get(event.argument_name, ())
        values = [c for c in candidates if c.startswith(event.argument_value)]
        if not values and event.argument_value:
            values = [event.argument_value]
        return CompleteResult(completion=Completion(values=values, total=len(values), has_more=False))


# -- running ---------------------------------------------------------------------------------------
def _log(message: str) -> None:
    print(f"fixture: {message}", file=sys.stderr, flush=True)


async def _wait_for_stdin_eof() -> None:
    stream = trio.lowlevel.FdStream(os.dup(sys.stdin.fileno()))
    async with stream:
        while await stream.receive_some(65536):
            pass


async def _serve_http(app: App, host: str, port: int) -> None:
    from mcpwire_adapters.serve.trio_h11.server import serve_http_until

    stop = trio.Event()
    async with trio.open_nursery() as nursery:
        _, bound = await nursery.start(
            lambda task_status: serve_http_until(app, host, port, stop=stop, grace_period=2.0, task_status=task_status)
        )
        authority = f"[{host}]" if ":" in host else host  # an IPv6 literal needs brackets in a URL
        url = f"http://{authority}:{bound}{app.server.http.path}"
        sys.stdout.write(json.dumps({"conformanceReady": True, "url": url}) + "\n")
        sys.stdout.flush()
        _log(f"serving {url}; close stdin to stop")
        await _wait_for_stdin_eof()
        _log("stdin closed; shutting down")
        stop.set()


def _listening_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family)


def _announce(app: App, host: str, port: int) -> None:
    authority = f"[{host}]" if ":" in host else host
    url = f"http://{authority}:{port}{app.server.http.path}"
    sys.stdout.write(json.dumps({"conformanceReady": True, "url": url}) + "\n")
    sys.stdout.flush()
    _log(f"serving {url}; close stdin to stop")


def _read_stdin_to_eof() -> None:
    while os.read(sys.stdin.fileno(), 65536):
        pass


async def _serve_asgi(app: App, sock: socket.socket, server: str) -> None:
    """Serve ``app`` through the ASGI adapter under uvicorn or hypercorn on the bound ``sock``
    until stdin ends; then end the listen streams and stop the server (2 s of grace)."""
    from mcpwire_adapters.serve.asgi.app import AsgiApp

    asgi = AsgiApp(app)
    stop = anyio.Event()
    host, port = sock.getsockname()[:2]
    async with anyio.create_task_group() as tasks:
        if server == "asgi-uvicorn":
            import uvicorn

            config = uvicorn.Config(
                asgi, lifespan="on", log_config=None, access_log=False, timeout_graceful_shutdown=2,
                timeout_keep_alive=round(KEEPALIVE_IDLE),
            )
            uv = uvicorn.Server(config)
            tasks.start_soon(lambda: uv.serve(sockets=[sock]))
            while not uv.started:
                await anyio.sleep(0.01)
        else:
            from hypercorn.config import Config as HypercornConfig

            if server == "asgi-hypercorn-trio":
                from hypercorn.trio import serve as hypercorn_serve
            else:
                from hypercorn.asyncio import serve as hypercorn_serve  # type: ignore[assignment]
            hconfig = HypercornConfig()
            hconfig.graceful_timeout = 2.0
            hconfig.keep_alive_timeout = KEEPALIVE_IDLE
            hconfig.bind = [f"fd://{sock.detach()}"]  # already listening; hypercorn now owns the fd
            tasks.start_soon(lambda: hypercorn_serve(asgi, hconfig, shutdown_trigger=stop.wait))  # type: ignore[arg-type]
        _announce(app, host, port)
        await anyio.to_thread.run_sync(_read_stdin_to_eof, abandon_on_cancel=True)
        _log("stdin closed; shutting down")
        # The servers wait for open responses before their lifespan shutdown: end the listen
        # streams first so they finish with their listen result.
        app.close_streams()
        if server == "asgi-uvicorn":
            uv.should_exit = True
        stop.set()


async def _serve_stdio(app: App) -> None:
    from mcpwire_adapters.serve.stdio import serve_stdio

    _log("serving NDJSON on stdio")
    await serve_stdio(app)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--transport", choices=("http", "stdio"), default="http")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=int(os.environ.get("MCP_PORT", "0")))
    parser.add_argument("--server", choices=SERVERS, default="trio", help="what serves HTTP")
    args = parser.parse_args(argv)
    app = build_app()
    if args.transport == "stdio":
        trio.run(_serve_stdio, app)
    elif args.server == "trio":
        trio.run(_serve_http, app, args.host, args.port)
    else:
        with _listening_socket(args.host, args.port) as sock:
            backend = "trio" if args.server.endswith("-trio") else "asyncio"
            anyio.run(_serve_asgi, app, sock, args.server, backend=backend)
    return 0


if __name__ == "__main__":
    sys.exit(main())
