"""Sampling: the params of a sampling/createMessage input request and its answer.

Owns: $defs CreateMessageRequestParams, CreateMessageResult, SamplingMessage,
ModelPreferences, ModelHint and ToolChoice (specification: Client > Sampling; Basic >
Patterns > Multi Round-Trip Requests).

A message's ``content`` is one SamplingMessageContentBlock or a list of them; both decode,
because the blocks are tagged on ``"type"`` and the list is the union's only array type.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from ._base import MetaObject, Role, UnitInterval, WireType
from ._content import SamplingMessageContentBlock
from ._tools import Tool

__all__ = [
    "CreateMessageRequestParams",
    "CreateMessageResult",
    "ModelHint",
    "ModelPreferences",
    "SamplingMessage",
    "ToolChoice",
]


class ModelHint(WireType, frozen=True, kw_only=True):
    """$defs.ModelHint: a model name (or substring) the server would like."""

    name: str | UnsetType = UNSET


class ModelPreferences(WireType, frozen=True, kw_only=True):
    """$defs.ModelPreferences: advisory hints and priorities in [0, 1]."""

    hints: list[ModelHint] | UnsetType = UNSET
    cost_priority: UnitInterval | UnsetType = UNSET
    speed_priority: UnitInterval | UnsetType = UNSET
    intelligence_priority: UnitInterval | UnsetType = UNSET


class ToolChoice(WireType, frozen=True, kw_only=True):
    """$defs.ToolChoice: whether the model may, must or must not use the offered tools."""

    mode: Literal["auto", "required", "none"] | UnsetType = UNSET


class SamplingMessage(WireType, frozen=True, kw_only=True):
    """$defs.SamplingMessage: one turn of the conversation to sample from."""

    role: Role
    content: SamplingMessageContentBlock | list[SamplingMessageContentBlock]
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")


class CreateMessageRequestParams(WireType, frozen=True, kw_only=True):
    """$defs.CreateMessageRequestParams: ask the client's model for a completion.

    ``tools``/``tool_choice`` need the client's ``sampling.tools`` capability and
    ``include_context`` other than ``"none"`` needs ``sampling.context`` (schema
    $defs.ClientCapabilities, ``sampling``).
    The schema gives these params no ``_meta``.
    """

    messages: list[SamplingMessage]
    max_tokens: int
    system_prompt: str | UnsetType = UNSET
    model_preferences: ModelPreferences | UnsetType = UNSET
    include_context: Literal["none", "thisServer", "allServers"] | UnsetType = UNSET
    temperature: float | UnsetType = UNSET
    stop_sequences: list[str] | UnsetType = UNSET
    metadata: dict[str, Any] | UnsetType = UNSET
    tools: list[Tool] | UnsetType = UNSET
    tool_choice: ToolChoice | UnsetType = UNSET


class CreateMessageResult(WireType, frozen=True, kw_only=True):
    """$defs.CreateMessageResult: the client's sampled message (an input response).

    ``stop_reason`` is open-ended (``"endTurn"``, ``"stopSequence"``, ``"maxTokens"``,
    ``"toolUse"`` or another string).
    """

    role: Role
    content: SamplingMessageContentBlock | list[SamplingMessageContentBlock]
    model: str
    stop_reason: str | UnsetType = UNSET
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")
