"""Elicitation: the params of an elicitation/create input request and its answer.

Owns: $defs ElicitRequestFormParams, ElicitRequestURLParams, their decodable stand-in
:class:`ElicitRequestParams` (the schema's union of the two), ElicitResult, and the primitive
schemas a form may ask for (StringSchema, NumberSchema, BooleanSchema and the five enum
schemas) with the inline objects they nest (EnumOption, UntitledEnumItems, TitledEnumItems).
Specification: Client > Elicitation; Basic > Patterns > Multi Round-Trip Requests.

Form or URL: the schema's two variants differ by ``mode``, which is required (``"url"``) on one
and optional (default ``"form"``) on the other. msgspec's tagged unions need the tag present,
so a form request without ``mode`` could not be decoded that way. Instead ``ElicitRequest.params``
is typed :class:`ElicitRequestParams`, one Struct with the fields of both variants that checks
the fields its mode needs: ``url`` when ``mode == "url"``, ``requested_schema`` otherwise.
:class:`ElicitRequestFormParams` and :class:`ElicitRequestURLParams` are its subclasses with
those fields required, for building requests; they encode to exactly the schema's shapes
(``mode`` is written only when set, and always for URL mode). Decoding always yields
ElicitRequestParams, so test ``params.mode == "url"`` rather than ``isinstance``; equality
compares field values across the three classes.

``requested_schema`` is kept as a JSON object exactly as given, like a tool's input schema. Its
``properties`` values may be built from the primitive schema Structs here (they encode as
themselves inside the dict); decoded ones are plain dicts, since those schemas share ``type``
values and so cannot be told apart by msgspec.
"""

from __future__ import annotations

from typing import Any, Literal

from msgspec import UNSET, UnsetType

from ._base import WireType, struct_family_eq, struct_family_hash

__all__ = [
    "BooleanSchema",
    "ElicitRequestFormParams",
    "ElicitRequestParams",
    "ElicitRequestURLParams",
    "ElicitResult",
    "EnumOption",
    "LegacyTitledEnumSchema",
    "NumberSchema",
    "StringSchema",
    "TitledEnumItems",
    "TitledMultiSelectEnumSchema",
    "TitledSingleSelectEnumSchema",
    "UntitledEnumItems",
    "UntitledMultiSelectEnumSchema",
    "UntitledSingleSelectEnumSchema",
]


class StringSchema(WireType, frozen=True, kw_only=True):
    """$defs.StringSchema: a free-text form field."""

    type: Literal["string"] = "string"
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    min_length: int | UnsetType = UNSET
    max_length: int | UnsetType = UNSET
    format: Literal["email", "uri", "date", "date-time"] | UnsetType = UNSET
    default: str | UnsetType = UNSET


class NumberSchema(WireType, frozen=True, kw_only=True):
    """$defs.NumberSchema: a numeric form field (``type`` is ``"number"`` or ``"integer"``)."""

    type: Literal["number", "integer"]
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    minimum: float | UnsetType = UNSET
    maximum: float | UnsetType = UNSET
    default: float | UnsetType = UNSET


class BooleanSchema(WireType, frozen=True, kw_only=True):
    """$defs.BooleanSchema: a yes/no form field."""

    type: Literal["boolean"] = "boolean"
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    default: bool | UnsetType = UNSET


class EnumOption(WireType, frozen=True, kw_only=True):
    """One ``{"const", "title"}`` choice of a titled enum schema."""

    const: str
    title: str


class UntitledSingleSelectEnumSchema(WireType, frozen=True, kw_only=True):
    """$defs.UntitledSingleSelectEnumSchema: pick one of ``enum``."""

    type: Literal["string"] = "string"
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    enum: list[str]
    default: str | UnsetType = UNSET


class TitledSingleSelectEnumSchema(WireType, frozen=True, kw_only=True):
    """$defs.TitledSingleSelectEnumSchema: pick one of ``one_of``, each with a display title."""

    type: Literal["string"] = "string"
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    one_of: list[EnumOption]
    default: str | UnsetType = UNSET


class LegacyTitledEnumSchema(WireType, frozen=True, kw_only=True):
    """$defs.LegacyTitledEnumSchema: ``enum`` with parallel display names (deprecated form)."""

    type: Literal["string"] = "string"
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    enum: list[str]
    enum_names: list[str] | UnsetType = UNSET
    default: str | UnsetType = UNSET


class UntitledEnumItems(WireType, frozen=True, kw_only=True):
    """UntitledMultiSelectEnumSchema.items: the choices, as a string enum."""

    type: Literal["string"] = "string"
    enum: list[str]


class TitledEnumItems(WireType, frozen=True, kw_only=True):
    """TitledMultiSelectEnumSchema.items: the choices, each with a display title."""

    any_of: list[EnumOption]


class UntitledMultiSelectEnumSchema(WireType, frozen=True, kw_only=True):
    """$defs.UntitledMultiSelectEnumSchema: pick several of ``items.enum``."""

    type: Literal["array"] = "array"
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    min_items: int | UnsetType = UNSET
    max_items: int | UnsetType = UNSET
    items: UntitledEnumItems
    default: list[str] | UnsetType = UNSET


class TitledMultiSelectEnumSchema(WireType, frozen=True, kw_only=True):
    """$defs.TitledMultiSelectEnumSchema: pick several of ``items.any_of``."""

    type: Literal["array"] = "array"
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    min_items: int | UnsetType = UNSET
    max_items: int | UnsetType = UNSET
    items: TitledEnumItems
    default: list[str] | UnsetType = UNSET


class ElicitRequestParams(WireType, frozen=True, kw_only=True):
    """The decoded form of $defs.ElicitRequestParams (form | URL); see the module docstring.

    ``mode`` absent means form. Form needs ``requested_schema``, URL mode needs ``url``;
    decoding raises ``msgspec.ValidationError`` when the needed field is missing.
    """

    mode: Literal["form", "url"] | UnsetType = UNSET
    message: str
    requested_schema: dict[str, Any] | UnsetType = UNSET
    url: str | UnsetType = UNSET

    def __post_init__(self) -> None:
        if self.mode == "url":
            if self.url is UNSET:
                raise ValueError("URL-mode elicitation needs `url`")
        elif self.requested_schema is UNSET:
            raise ValueError("form-mode elicitation needs `requestedSchema`")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ElicitRequestParams):
            return NotImplemented
        return struct_family_eq(self, other)

    def __ne__(self, other: object) -> bool:
        if not isinstance(other, ElicitRequestParams):
            return NotImplemented
        return not struct_family_eq(self, other)

    def __hash__(self) -> int:
        return struct_family_hash(self)


class ElicitRequestFormParams(ElicitRequestParams, frozen=True, kw_only=True):
    """$defs.ElicitRequestFormParams: ask for values matching a flat object schema.

    ``requested_schema`` is ``{"type": "object", "properties": {...}, "required"?: [...]}``
    with primitive-schema properties only.
    """

    mode: Literal["form"] | UnsetType = UNSET
    requested_schema: dict[str, Any]


class ElicitRequestURLParams(ElicitRequestParams, frozen=True, kw_only=True):
    """$defs.ElicitRequestURLParams: ask the user to visit ``url`` (out-of-band interaction)."""

    mode: Literal["url"] = "url"
    url: str


class ElicitResult(WireType, frozen=True, kw_only=True):
    """$defs.ElicitResult: the user's answer to an elicitation.

    ``content`` only for ``"accept"`` in form mode. The schema types its values as string,
    integer, boolean or string list; ``float`` is accepted as well because the specification's
    TypeScript source says ``number`` and a number field's answer may be fractional.
    """

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, str | int | float | bool | list[str]] | UnsetType = UNSET
