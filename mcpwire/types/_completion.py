"""Argument completion.

Owns: $defs CompleteRequestParams, CompleteResult, PromptReference and
ResourceTemplateReference, and the inline objects the schema nests in them, named here
CompletionArgument, CompletionContext and Completion (specification: Server > Utilities >
Completion).

The two references are a msgspec tagged union on ``"type"`` (``"ref/prompt"``,
``"ref/resource"``), so ``ref`` decodes to the right class.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import UNSET, UnsetType

from ._base import MetaObject, ResultType, WireType

__all__ = [
    "CompleteRequestParams",
    "CompleteResult",
    "Completion",
    "CompletionArgument",
    "CompletionContext",
    "PromptReference",
    "ResourceTemplateReference",
]


class PromptReference(WireType, frozen=True, kw_only=True, tag_field="type", tag="ref/prompt"):
    """$defs.PromptReference: complete an argument of the named prompt."""

    name: str
    title: str | UnsetType = UNSET


class ResourceTemplateReference(WireType, frozen=True, kw_only=True, tag_field="type", tag="ref/resource"):
    """$defs.ResourceTemplateReference: complete a variable of the URI template ``uri``."""

    uri: str


class CompletionArgument(WireType, frozen=True, kw_only=True):
    """CompleteRequestParams.argument: the argument being completed and its partial value."""

    name: str
    value: str


class CompletionContext(WireType, frozen=True, kw_only=True):
    """CompleteRequestParams.context: values of arguments already resolved."""

    arguments: dict[str, str] | UnsetType = UNSET


class CompleteRequestParams(WireType, frozen=True, kw_only=True):
    """$defs.CompleteRequestParams: params of completion/complete."""

    ref: PromptReference | ResourceTemplateReference
    argument: CompletionArgument
    context: CompletionContext | UnsetType = UNSET
    meta: MetaObject = msgspec.field(name="_meta")


class Completion(WireType, frozen=True, kw_only=True):
    """CompleteResult.completion: at most 100 ``values``; ``total`` counts all matches."""

    values: Annotated[list[str], msgspec.Meta(max_length=100)]
    total: int | UnsetType = UNSET
    has_more: bool | UnsetType = UNSET


class CompleteResult(WireType, frozen=True, kw_only=True):
    """$defs.CompleteResult: the completion values."""

    result_type: ResultType = "complete"
    completion: Completion
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")
