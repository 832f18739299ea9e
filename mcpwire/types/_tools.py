"""Tools: listing and calling.

Owns: $defs Tool, ToolAnnotations, ListToolsResult, CallToolRequestParams and CallToolResult
(specification: Server > Tools).

``input_schema`` and ``output_schema`` are JSON Schema 2020-12 documents kept exactly as given
(``$schema``, ``$defs``, ``$ref``, ``x-mcp-header`` and all); this package never interprets or
dereferences them. ``output_schema`` is typed ``Any`` because a 2020-12 schema need not be an
object (``true`` is one; the schema's description of $defs.Tool ``outputSchema`` allows "any
valid JSON Schema 2020-12"), though its type there says object.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from ._base import (
    CacheScope,
    Cursor,
    Icon,
    InputResponses,
    MetaObject,
    NonNegativeInt,
    ResultType,
    WireType,
)
from ._content import ContentBlock

__all__ = [
    "CallToolRequestParams",
    "CallToolResult",
    "ListToolsResult",
    "Tool",
    "ToolAnnotations",
]


class ToolAnnotations(WireType, frozen=True, kw_only=True):
    """$defs.ToolAnnotations: untrusted hints about a tool's behaviour."""

    title: str | UnsetType = UNSET
    read_only_hint: bool | UnsetType = UNSET
    destructive_hint: bool | UnsetType = UNSET
    idempotent_hint: bool | UnsetType = UNSET
    open_world_hint: bool | UnsetType = UNSET


class Tool(WireType, frozen=True, kw_only=True):
    """$defs.Tool: one entry of tools/list.

    ``input_schema`` must be an object schema (``{"type": "object", ...}``).
    """

    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    input_schema: dict[str, Any]
    output_schema: Any | UnsetType = UNSET
    annotations: ToolAnnotations | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")


class ListToolsResult(WireType, frozen=True, kw_only=True):
    """$defs.ListToolsResult: one page of tools; ``next_cursor`` absent means the last page."""

    result_type: ResultType = "complete"
    tools: list[Tool]
    next_cursor: Cursor | UnsetType = UNSET
    ttl_ms: NonNegativeInt
    cache_scope: CacheScope
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")


class CallToolRequestParams(WireType, frozen=True, kw_only=True):
    """$defs.CallToolRequestParams: params of tools/call.

    On an MRTR retry (<https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr>)
    ``input_responses`` answers the previous round's input requests by id and ``request_state``
    echoes its state byte for byte.
    """

    name: str
    arguments: dict[str, Any] | UnsetType = UNSET
    input_responses: InputResponses | UnsetType = UNSET
    request_state: str | UnsetType = UNSET
    meta: MetaObject = msgspec.field(name="_meta")


class CallToolResult(WireType, frozen=True, kw_only=True):
    """$defs.CallToolResult: a completed tools/call.

    A tool's own failure is a result with ``is_error=True``, not a JSON-RPC error. Carries no
    ``ttl_ms``/``cache_scope``.
    """

    result_type: ResultType = "complete"
    content: list[ContentBlock]
    structured_content: Any | UnsetType = UNSET
    is_error: bool | UnsetType = UNSET
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")
