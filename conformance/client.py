#!/usr/bin/env python3
"""The client command of the official conformance runner's client leg.

See conformance/RUNNER_NOTES.md, "How the runner runs scenarios" (how the command is started)
and "Client scenarios" (what each scenario checks).

    python conformance/client.py URL

Reads MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_PROTOCOL_VERSION and MCP_CONFORMANCE_CONTEXT
(JSON; ``toolCalls`` is a list of {name, arguments}) and behaves as a plain client: connect
(``server/discover``, falling back on -32022, or to ``initialize`` when the server is of the
initialize era; a run of an initialize-era requirement set pins that version, so the client
starts with ``initialize``), list tools, call the tools the context names with exactly its
arguments, or else every listed tool with arguments sampled from its inputSchema; answer
input requests (form, URL, sampling, roots) and retry with the requestState; list and read
resources, list and get prompts when advertised. Tools whose x-mcp-header annotations are
invalid are never called (the engine leaves them out of tools/list). Exits 0; problems are
printed to stderr, since the scenario server records what is scored.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import msgspec
import trio
from client_auth import oauth_for
from mcpwire_adapters.client.http import HttpClient, ServerError, TransportError

from mcpwire.types import Implementation
from mcpwire import ProtocolError
from mcpwire.auth import AuthError
from mcpwire import PROTOCOL_VERSION, Client
from mcpwire.sessions import INITIALIZE_ERA
from mcpwire.types import (
    CreateMessageRequest,
    CreateMessageResult,
    ElicitRequest,
    ElicitResult,
    InputRequest,
    ListRootsRequest,
    ListRootsResult,
    Root,
    TextContent,
    Tool,
)

CAPABILITIES: dict[str, Any] = {"roots": {}, "sampling": {}, "elicitation": {"form": {}, "url": {}}}
# json-schema-2020-12-preservation: echo the focal tool's inputSchema through the echo tool.
ECHO_TOOL, FOCAL_TOOL = "json_schema_echo", "json_schema_2020_12_tool"


def log(*parts: Any) -> None:
    print(*parts, file=sys.stderr, flush=True)


def sample_value(schema: Any) -> Any:
    """A simple value of the schema's type (no $ref is followed)."""
    if not isinstance(schema, dict):
        return "test"
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        return schema.get("minimum", 1)
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    if kind == "object":
        return sample_arguments(schema)
    if kind == "null":
        return None
    for key in ("oneOf", "anyOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return sample_value(schema[key][0])
    return "test"


def sample_arguments(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments for a tool: the required properties only, simple values by type."""
    props = schema.get("properties")
    required = schema.get("required")
    if not isinstance(props, dict):
        props = {}
    if not isinstance(required, list):
        required = []
    return {name: sample_value(props.get(name)) for name in required if isinstance(name, str)}


def answer(request: InputRequest) -> Any:
    if isinstance(request, ElicitRequest):
        if request.params.mode == "url":
            return ElicitResult(action="accept")
        schema = request.params.requested_schema
        props = schema.get("properties", {}) if isinstance(schema, dict) else {}
        content = {name: sample_value(prop) for name, prop in props.items()}
        return ElicitResult(action="accept", content=content)
    if isinstance(request, CreateMessageRequest):
        return CreateMessageResult(role="assistant", content=TextContent(text="Paris"),
                                   model="mcpwire-conformance", stop_reason="endTurn")
    assert isinstance(request, ListRootsRequest)
    return ListRootsResult(roots=[Root(uri="file:///test/root", name="Test Root")])


def on_input(requests: dict[str, InputRequest]) -> dict[str, Any]:
    return {key: answer(request) for key, request in requests.items()}


async def attempt(label: str, coro: Any) -> Any:
    try:
        return await coro
    except (ServerError, ProtocolError, TransportError, AuthError) as exc:
        log(f"{label}: {exc!r}")
        return None


async def run(url: str, scenario: str, context: dict[str, Any]) -> None:
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "")
    client = Client(Implementation(name="mcpwire-conformance-client", version="0.1.0"), capabilities=CAPABILITIES,
                    protocol_version=version if version in INITIALIZE_ERA else PROTOCOL_VERSION)
    auth = oauth_for(context) if scenario.startswith("auth/") else None  # client_auth.py
    async with HttpClient(url, client, read_timeout=20.0, on_input=on_input, auth=auth) as session:
        discovered = await attempt("connect", session.connect())
        caps: dict[str, Any] = discovered.data.get("capabilities", {}) if discovered is not None else {}
        if not isinstance(caps, dict):
            caps = {}
        tools: list[Tool] = await attempt("tools/list", session.list_tools()) or []
        by_name = {tool.name: tool for tool in tools}
        calls = context.get("toolCalls")
        if isinstance(calls, list) and calls:
            plan = [(c.get("name"), c.get("arguments") or {}) for c in calls if isinstance(c, dict)]
        else:
            plan = []
            for tool in tools:
                arguments = sample_arguments(tool.input_schema)
                if tool.name == ECHO_TOOL and FOCAL_TOOL in by_name:
                    arguments = {"schema": by_name[FOCAL_TOOL].input_schema}  # kept exactly as received
                plan.append((tool.name, arguments))
        for name, arguments in plan:
            if not isinstance(name, str) or name in client.rejected_tools:
                continue
            await attempt(f"tools/call {name}", session.call_tool(name, arguments, on_input=on_input))
        if "resources" in caps:
            resources = await attempt("resources/list", session.list_resources()) or []
            for resource in resources:
                await attempt(f"resources/read {resource.uri}", session.read_resource(resource.uri, on_input=on_input))
        if "prompts" in caps:
            prompts = await attempt("prompts/list", session.list_prompts()) or []
            for prompt in prompts:
                args = {a.name: "test" for a in (prompt.arguments or []) if a.required is True}
                await attempt(f"prompts/get {prompt.name}", session.get_prompt(prompt.name, args, on_input=on_input))
    log(f"{scenario}: done")


def main() -> int:
    if len(sys.argv) < 2:
        log("usage: client.py URL")
        return 2
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    try:
        context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    except json.JSONDecodeError:
        context = {}
    if not isinstance(context, dict):
        context = {}
    try:
        trio.run(run, sys.argv[-1], scenario, context)
    except (ServerError, ProtocolError, TransportError, AuthError, msgspec.MsgspecError, OSError, ValueError) as exc:
        log(f"{scenario}: {exc!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
