"""Content blocks and resource contents.

Owns: $defs TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource (the
ContentBlock union), ToolUseContent and ToolResultContent (the extra members of
SamplingMessageContentBlock), and TextResourceContents / BlobResourceContents with their
decodable stand-in :class:`ResourceContents` (specification: Server > Tools, Tool
Result; Server > Resources, Resource Contents).

Content blocks are msgspec tagged unions on ``"type"``: the tag is not a field, it is written on
encode and selects the class on decode. ``type(block).__struct_config__.tag`` gives it back.

Resource contents carry no tag: the schema's ``TextResourceContents | BlobResourceContents`` is
told apart only by which of ``text`` / ``blob`` is present, and msgspec cannot decode an
untagged union of Structs. So every field that holds resource contents is typed
:class:`ResourceContents`, one Struct with both ``text`` and ``blob`` optional, which requires at
least one of them. :class:`TextResourceContents` and :class:`BlobResourceContents` are its
subclasses with ``text`` (or ``blob``) required, for building values; they encode to exactly the
schema's shapes. Decoding always yields :class:`ResourceContents`, so test ``contents.text is
not UNSET`` rather than ``isinstance``; equality compares field values across the three classes.
``data`` and ``blob`` stay base64 ``str`` as on the wire.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

from ._base import Annotations, Icon, MetaObject, WireType, struct_family_eq, struct_family_hash

__all__ = [
    "AudioContent",
    "BlobResourceContents",
    "ContentBlock",
    "EmbeddedResource",
    "ImageContent",
    "ResourceContents",
    "ResourceLink",
    "SamplingMessageContentBlock",
    "TextContent",
    "TextResourceContents",
    "ToolResultContent",
    "ToolUseContent",
]


class ResourceContents(WireType, frozen=True, kw_only=True):
    """The decoded form of $defs TextResourceContents | BlobResourceContents.

    Exactly the fields of both; at least one of ``text`` and ``blob`` must be set (the schema
    requires one; decoding raises ``msgspec.ValidationError`` otherwise).
    """

    uri: str
    mime_type: str | UnsetType = UNSET
    text: str | UnsetType = UNSET
    blob: str | UnsetType = UNSET
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")

    def __post_init__(self) -> None:
        if self.text is UNSET and self.blob is UNSET:
            raise ValueError("resource contents need `text` or `blob`")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ResourceContents):
            return NotImplemented
        return struct_family_eq(self, other)

    def __ne__(self, other: object) -> bool:
        if not isinstance(other, ResourceContents):
            return NotImplemented
        return not struct_family_eq(self, other)

    def __hash__(self) -> int:
        return struct_family_hash(self)


class TextResourceContents(ResourceContents, frozen=True, kw_only=True):
    """$defs.TextResourceContents: build text contents (decodes as ResourceContents)."""

    text: str


class BlobResourceContents(ResourceContents, frozen=True, kw_only=True):
    """$defs.BlobResourceContents: build base64 binary contents (decodes as ResourceContents)."""

    blob: str


class TextContent(WireType, frozen=True, kw_only=True, tag_field="type", tag="text"):
    """$defs.TextContent: ``{"type": "text", "text": ...}``."""

    text: str
    annotations: Annotations | UnsetType = UNSET
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")


class ImageContent(WireType, frozen=True, kw_only=True, tag_field="type", tag="image"):
    """$defs.ImageContent: base64 ``data`` with its ``mime_type``."""

    data: str
    mime_type: str
    annotations: Annotations | UnsetType = UNSET
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")


class AudioContent(WireType, frozen=True, kw_only=True, tag_field="type", tag="audio"):
    """$defs.AudioContent: base64 ``data`` with its ``mime_type``."""

    data: str
    mime_type: str
    annotations: Annotations | UnsetType = UNSET
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")


class ResourceLink(WireType, frozen=True, kw_only=True, tag_field="type", tag="resource_link"):
    """$defs.ResourceLink: a reference to a resource the client may read."""

    uri: str
    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    mime_type: str | UnsetType = UNSET
    size: int | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    annotations: Annotations | UnsetType = UNSET
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")


class EmbeddedResource(WireType, frozen=True, kw_only=True, tag_field="type", tag="resource"):
    """$defs.EmbeddedResource: resource contents inlined in a message or tool result."""

    resource: ResourceContents
    annotations: Annotations | UnsetType = UNSET
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")


# $defs.ContentBlock: what tool results, prompt messages and tool-result blocks carry.
ContentBlock: TypeAlias = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource


class ToolUseContent(WireType, frozen=True, kw_only=True, tag_field="type", tag="tool_use"):
    """$defs.ToolUseContent: a model's request to call a tool, in sampling messages."""

    id: str
    name: str
    input: dict[str, Any]
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")


class ToolResultContent(WireType, frozen=True, kw_only=True, tag_field="type", tag="tool_result"):
    """$defs.ToolResultContent: the result of a tool use, in sampling messages."""

    tool_use_id: str
    content: list[ContentBlock]
    structured_content: Any | UnsetType = UNSET
    is_error: bool | UnsetType = UNSET
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")


# $defs.SamplingMessageContentBlock: what sampling messages and results carry.
SamplingMessageContentBlock: TypeAlias = TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent
