"""Prompts: listing and getting.

Owns: $defs Prompt, PromptArgument, PromptMessage, ListPromptsResult, GetPromptRequestParams
and GetPromptResult (specification: Server > Prompts).
"""

from __future__ import annotations

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
    Role,
    WireType,
)
from ._content import ContentBlock

__all__ = [
    "GetPromptRequestParams",
    "GetPromptResult",
    "ListPromptsResult",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
]


class PromptArgument(WireType, frozen=True, kw_only=True):
    """$defs.PromptArgument: an argument a prompt accepts."""

    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    required: bool | UnsetType = UNSET


class Prompt(WireType, frozen=True, kw_only=True):
    """$defs.Prompt: one entry of prompts/list."""

    name: str
    title: str | UnsetType = UNSET
    description: str | UnsetType = UNSET
    arguments: list[PromptArgument] | UnsetType = UNSET
    icons: list[Icon] | UnsetType = UNSET
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")


class PromptMessage(WireType, frozen=True, kw_only=True):
    """$defs.PromptMessage: one message of a prompt; ``content`` is one block, not a list."""

    role: Role
    content: ContentBlock


class ListPromptsResult(WireType, frozen=True, kw_only=True):
    """$defs.ListPromptsResult: one page of prompts."""

    result_type: ResultType = "complete"
    prompts: list[Prompt]
    next_cursor: Cursor | UnsetType = UNSET
    ttl_ms: NonNegativeInt
    cache_scope: CacheScope
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")


class GetPromptRequestParams(WireType, frozen=True, kw_only=True):
    """$defs.GetPromptRequestParams: params of prompts/get (MRTR-capable)."""

    name: str
    arguments: dict[str, str] | UnsetType = UNSET
    input_responses: InputResponses | UnsetType = UNSET
    request_state: str | UnsetType = UNSET
    meta: MetaObject = msgspec.field(name="_meta")


class GetPromptResult(WireType, frozen=True, kw_only=True):
    """$defs.GetPromptResult: a prompt's messages. Carries no ``ttl_ms``/``cache_scope``."""

    result_type: ResultType = "complete"
    description: str | UnsetType = UNSET
    messages: list[PromptMessage]
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")
