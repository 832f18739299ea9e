"""Resources: listing, templates and reading.

Owns: $defs Resource, ResourceTemplate, ListResourcesResult, ListResourceTemplatesResult,
ReadResourceRequestParams and ReadResourceResult (specification: Server > Resources). Resource contents
themselves live in ``_content`` with the note on how their untagged union is decoded.
"""

from __future__ import annotations

import msgspec
from msgspec import UNSET, UnsetType

from ._base import (
    Annotations,
    CacheScope,
    Cursor,
    Icon,
    InputResponses,
    MetaObject,
    NonNegativeInt,
    ResultType,
    WireType,
)
from ._content import ResourceContents

__all__ = [
    "ListResourceTemplatesResult",
    "ListResourcesResult",
    "ReadResourceRequestParams",
    "ReadResourceResult",
    "Resource",
    "ResourceTemplate",
]


class Resource(WireType, frozen=True, kw_only=True):
    """$defs.Resource: one entry of resources/list."""

    uri: str
    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    mime_type: str | UnsetType = UNSET
    size: int | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    annotations: Annotations | UnsetType = UNSET
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")


class ResourceTemplate(WireType, frozen=True, kw_only=True):
    """$defs.ResourceTemplate: one entry of resources/templates/list (an RFC 6570 template)."""

    uri_template: str
    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    mime_type: str | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    annotations: Annotations | UnsetType = UNSET
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")


class ListResourcesResult(WireType, frozen=True, kw_only=True):
    """$defs.ListResourcesResult: one page of resources."""

    result_type: ResultType = "complete"
    resources: list[Resource]
    next_cursor: Cursor | UnsetType = UNSET
    ttl_ms: NonNegativeInt
    cache_scope: CacheScope
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")


class ListResourceTemplatesResult(WireType, frozen=True, kw_only=True):
    """$defs.ListResourceTemplatesResult: one page of resource templates."""

    result_type: ResultType = "complete"
    resource_templates: list[ResourceTemplate]
    next_cursor: Cursor | UnsetType = UNSET
    ttl_ms: NonNegativeInt
    cache_scope: CacheScope
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")


class ReadResourceRequestParams(WireType, frozen=True, kw_only=True):
    """$defs.ReadResourceRequestParams: params of resources/read (MRTR-capable)."""

    uri: str
    input_responses: InputResponses | UnsetType = UNSET
    request_state: str | UnsetType = UNSET
    meta: MetaObject = msgspec.field(name="_meta")


class ReadResourceResult(WireType, frozen=True, kw_only=True):
    """$defs.ReadResourceResult: the contents of a resource.

    Build items with TextResourceContents / BlobResourceContents; decoded items are
    ResourceContents (see ``_content``). An unknown URI is a -32602 error, never an empty list.
    """

    result_type: ResultType = "complete"
    contents: list[ResourceContents]
    # Required on the wire; a server host may leave these UNSET and the engine fills them from
    # its CachePolicy for resources/read before sending (tests/wire/test_types_schema.py ENGINE_FILLED).
    ttl_ms: NonNegativeInt | UnsetType = UNSET
    cache_scope: CacheScope | UnsetType = UNSET
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")
