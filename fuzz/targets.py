"""The engines the fuzz suites drive: a server with one of everything, a client, and a catalog.

The server declares every kind of tool the engine treats differently (a raw JSON Schema tool
checked by jsonschema, a Struct-typed tool, a tool with ``x-mcp-header`` annotations, a tool
with an outputSchema), resources, a template, prompts with required arguments, completions,
listChanged on every list and resource subscriptions, and a small page size so that
pagination happens. :data:`CATALOG` describes it so strategies can build requests that reach
past admission into the exchanges.

Time and keys are fixed: :data:`NOW` and :data:`SECRET`.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from mcpwire import Client, Keyring, Server, jsonschema_validator
from mcpwire.types import Implementation, Prompt, PromptArgument, Resource, ResourceTemplate, Tool

__all__ = [
    "NOW", "SECRET", "OTHER_SECRET", "PAGE_SIZE", "CATALOG", "TOOL_SCHEMAS", "Args",
    "make_server", "make_client", "CLIENT_CAPS",
]

NOW: Final = 1_800_000_000.0
SECRET: Final = b"fuzz-secret-fuzz-secret-fuzz-sec"  # 32 bytes
OTHER_SECRET: Final = b"another-secret-another-secret-an"
PAGE_SIZE: Final = 3
# Every capability an input request can need: an empty ``elicitation`` object means form mode
# only (specification: Basic > Patterns > Multi round-trip requests), so URL-mode elicitation needs ``url`` named explicitly.
CLIENT_CAPS: Final[dict[str, Any]] = {
    "sampling": {}, "elicitation": {"form": {}, "url": {}}, "roots": {"listChanged": True},
}


class Args(msgspec.Struct):
    """The arguments of the Struct-typed tool ``typed``."""

    a: int
    b: str = "x"


TOOL_SCHEMAS: Final[dict[str, dict[str, Any]]] = {
    "echo": {"type": "object"},
    "add": {
        "type": "object", "required": ["a", "b"],
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    },
    "region": {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "flag": {"type": "boolean", "x-mcp-header": "Flag"},
        },
    },
    "structured": {"type": "object", "properties": {"answer": {"type": "integer"}}},
}
# Filler tools so that tools/list has several pages.
for _i in range(5):
    TOOL_SCHEMAS[f"t{_i}"] = {"type": "object"}

RESOURCES: Final = ("test://static-text", "test://static-binary", "file:///tmp/a%20b.txt", "https://example.com/r?id=1")
TEMPLATE: Final = "test://template/{id}/data"
PROMPTS: Final[dict[str, tuple[str, ...]]] = {"simple": (), "greet": ("who",), "pair": ("arg1", "arg2")}


class Catalog(msgspec.Struct, frozen=True):
    """What the fuzz server offers, for strategies to aim at."""

    tools: dict[str, dict[str, Any]]
    typed_tool: str
    resources: tuple[str, ...]
    template: str
    prompts: dict[str, tuple[str, ...]]


CATALOG: Final = Catalog(
    tools=TOOL_SCHEMAS, typed_tool="typed", resources=RESOURCES, template=TEMPLATE, prompts=PROMPTS,
)


def make_server(*, keyring: Keyring | None = None, **kw: Any) -> Server:
    """A fresh fuzz server (fresh: listen streams are per server, and a test may open many).

    ``validator=UNCHECKED`` gives the same server without argument validation (tools with a
    raw JSON Schema then take any arguments)."""
    kw.setdefault("validator", jsonschema_validator())
    kw.setdefault("completions", True)
    kw.setdefault("resource_subscribe", True)
    kw.setdefault("list_changed", True)  # every listen flag reachable
    kw.setdefault("page_size", PAGE_SIZE)
    server = Server(
        Implementation(name="fuzz-server", version="1.0.0"),
        keyring=keyring or Keyring.single(SECRET),
        instructions="fuzz target",
        **kw,
    )
    for name, schema in TOOL_SCHEMAS.items():
        output = {"type": "object", "required": ["answer"], "properties": {"answer": {"type": "integer"}}}
        server.add_tool(Tool(name=name, description=f"{name} tool", input_schema=schema,
                             output_schema=output if name == "structured" else msgspec.UNSET))
    server.add_tool(Tool(name="typed", description="Struct-typed", input_schema={}), arguments_type=Args)
    for uri in RESOURCES:
        server.add_resource(Resource(uri=uri, name=uri.rsplit("/", 1)[-1] or "r", mime_type="text/plain"))
    server.add_template(ResourceTemplate(uri_template=TEMPLATE, name="template"))
    for name, required in PROMPTS.items():
        server.add_prompt(Prompt(name=name, description=f"{name} prompt",
                                 arguments=[PromptArgument(name=a, required=True) for a in required]))
    return server


def make_client(**kw: Any) -> Client:
    """A client engine declaring every capability an input request can need (so MRTR rounds are
    never -32021)."""
    kw.setdefault("capabilities", CLIENT_CAPS)
    return Client(Implementation(name="fuzz-client", version="1.0.0"), **kw)
