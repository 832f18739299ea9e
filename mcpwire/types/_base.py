"""The base class and shared building blocks of the wire types.

Owns: :class:`WireType`, the one base every wire type derives from; the scalar aliases the
schema names ($defs RequestId, ProgressToken, Cursor, ResultType, Role, LoggingLevel,
MetaObject); $defs Icon, Implementation, Annotations and Result; and the request params that
carry nothing but ``_meta`` and a cursor ($defs RequestParams, PaginatedRequestParams).

Rules every module of ``mcpwire.types`` follows (STYLE habit 4; ``tests/wire/test_types_schema.py``
holds them against ``schema-2026-07-28.json``):

- Class names are the schema's ``$defs`` names. Python fields are snake_case and
  ``rename="camel"`` gives the wire name; a wire name that is not the camelCase of a Python
  name (``_meta``, ``$schema``, ``io.modelcontextprotocol/...``) is spelled with
  ``msgspec.field(name=...)``.
- An optional schema property defaults to ``UNSET``, so absent stays absent on encode and a
  decoded message keeps "absent" apart from "null". ``omit_defaults`` is never used.
- ``repr_omit_defaults``: a repr shows the fields that differ from their defaults, so
  ``Tool(name='add', input_schema={...})`` reads as it was built (or as it came), without a
  row of ``UNSET``. It changes only ``repr``: encoding, decoding and equality are the same.
- A required property has no default. The exceptions are discriminators: ``result_type`` and
  const ``type``/``mode`` fields default to their value, which is not ``UNSET`` and so is always
  encoded; msgspec tags (``tag_field=``) are always encoded too.
- Unknown fields are ignored on decode (msgspec's default; ``forbid_unknown_fields`` is never
  set), so a newer peer's additions do not break us.
- Every subclass repeats ``frozen=True, kw_only=True``: msgspec inherits both, but mypy's
  ``dataclass_transform`` support does not.
- ``_meta`` values stay ``dict[str, Any]`` so keys this package does not know survive a round
  trip; ``mcpwire.types._meta`` has typed views of the reserved keys.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

__all__ = [
    "Annotations",
    "CacheScope",
    "Cursor",
    "Icon",
    "Implementation",
    "InputResponses",
    "LoggingLevel",
    "MetaObject",
    "PaginatedRequestParams",
    "ProgressToken",
    "RequestId",
    "RequestParams",
    "Result",
    "ResultType",
    "Role",
    "WireType",
]


class WireType(msgspec.Struct, kw_only=True, rename="camel", frozen=True, repr_omit_defaults=True):
    """Base of every MCP wire type: frozen, keyword-only, camelCase on the wire; its repr leaves
    out the fields at their defaults (``UNSET``: absent)."""


# $defs.MetaObject: any JSON object; the key syntax (specification: Basic, the ``_meta`` key
# name format; META_KEY_PATTERN) is checked by the engine, not by decoding.
MetaObject: TypeAlias = dict[str, Any]
# $defs.RequestId / ProgressToken. The int64 range and the 256-byte string bound are mcpwire's
# bounds, applied by the envelope, not by the type.
RequestId: TypeAlias = str | int
ProgressToken: TypeAlias = str | int
Cursor: TypeAlias = str
# $defs.ResultType is a plain string: "complete" and "input_required" are the core values,
# extensions add others (specification: Basic, ResultType).
ResultType: TypeAlias = str
Role: TypeAlias = Literal["user", "assistant"]
LoggingLevel: TypeAlias = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
CacheScope: TypeAlias = Literal["private", "public"]
# $defs.InputResponses maps ids to CreateMessageResult | ListRootsResult | ElicitResult. That
# union has no discriminator on the wire, so msgspec cannot decode it; the kind of each answer
# is fixed by the input request sent under the same id (specification: Basic > Patterns > Multi
# Round-Trip Requests, InputResponses), so values decode
# as plain JSON objects and the server converts each one with ``msgspec.convert(value,
# input_response_type(request))`` (``_mrtr``). Built values may be the Structs: they encode as
# themselves.
InputResponses: TypeAlias = dict[str, Any]

# Schema bounds that decoding enforces (ttlMs minimum 0; priorities in [0, 1]).
NonNegativeInt = Annotated[int, msgspec.Meta(ge=0)]
UnitInterval = Annotated[float, msgspec.Meta(ge=0, le=1)]


class Icon(WireType, frozen=True, kw_only=True):
    """$defs.Icon: an icon a client may show for an implementation, tool, prompt or resource."""

    src: str
    mime_type: str | UnsetType = UNSET
    sizes: list[str] | UnsetType = UNSET
    theme: Literal["light", "dark"] | UnsetType = UNSET


class Implementation(WireType, frozen=True, kw_only=True):
    """$defs.Implementation: a client's or server's name and version (clientInfo, serverInfo)."""

    name: str
    version: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    website_url: str | UnsetType = UNSET


class Annotations(WireType, frozen=True, kw_only=True):
    """$defs.Annotations: hints on a content block or resource for the client."""

    audience: list[Role] | UnsetType = UNSET
    priority: UnitInterval | UnsetType = UNSET
    last_modified: str | UnsetType = UNSET


class Result(WireType, frozen=True, kw_only=True):
    """$defs.Result (also EmptyResult): a result with no payload of its own.

    ``result_type`` is always encoded; a decoded result that lacks it (an older server) reads
    as ``"complete"``, as the schema tells clients to assume.
    """

    result_type: ResultType = "complete"
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")


class RequestParams(WireType, frozen=True, kw_only=True):
    """$defs.RequestParams: params that carry only ``_meta`` (server/discover)."""

    meta: MetaObject = msgspec.field(name="_meta")


class PaginatedRequestParams(WireType, frozen=True, kw_only=True):
    """$defs.PaginatedRequestParams: params of tools/list, prompts/list, resources/list and
    resources/templates/list; ``cursor`` is the previous page's ``next_cursor``."""

    cursor: Cursor | UnsetType = UNSET
    meta: MetaObject = msgspec.field(name="_meta")


def struct_family_eq(a: msgspec.Struct, b: msgspec.Struct) -> bool:
    """Field-by-field equality across a decodable stand-in and its construction subclasses.

    Used by ResourceContents and ElicitRequestParams: a decoded value is always the stand-in,
    a built one may be a subclass, and both are the same wire value.
    """
    return msgspec.structs.asdict(a) == msgspec.structs.asdict(b)


def struct_family_hash(a: msgspec.Struct) -> int:
    """The hash matching :func:`struct_family_eq` (raises TypeError on an unhashable field)."""
    return hash(tuple(sorted(msgspec.structs.asdict(a).items())))
