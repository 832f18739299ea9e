"""Multi round-trip requests (MRTR): input requests, input responses, input_required.

Owns: $defs InputRequiredResult, InputRequest (ElicitRequest | CreateMessageRequest |
ListRootsRequest), InputResponse (ElicitResult | CreateMessageResult | ListRootsResult),
ListRootsResult and Root, and ListRootsRequest's inline params, named ListRootsRequestParams
(specification: Basic > Patterns > Multi Round-Trip Requests).

Input requests are bare ``{"method", "params"}`` objects (no ``jsonrpc``, no ``id``), so the
three request Structs are a msgspec tagged union on ``"method"`` and
``InputRequiredResult.input_requests`` decodes each one to its class.

Input responses carry no discriminator, so their union cannot be decoded by shape. The kind of
each answer is fixed by the request sent under the same id: ``input_responses`` on the request
params decode as plain JSON objects and :func:`input_response_type` names the class to
``msgspec.convert`` each into. The ``InputResponse`` alias is for typing built values only.
"""

from __future__ import annotations

from typing import TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

from ._base import MetaObject, ResultType, WireType
from ._elicitation import ElicitRequestParams, ElicitResult
from ._sampling import CreateMessageRequestParams, CreateMessageResult

__all__ = [
    "CreateMessageRequest",
    "ElicitRequest",
    "InputRequest",
    "InputRequiredResult",
    "InputResponse",
    "ListRootsRequest",
    "ListRootsRequestParams",
    "ListRootsResult",
    "Root",
    "input_response_type",
]


class Root(WireType, frozen=True, kw_only=True):
    """$defs.Root: a directory or file the client exposes (a ``file://`` URI)."""

    uri: str
    name: str | UnsetType = UNSET
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")


class ListRootsResult(WireType, frozen=True, kw_only=True):
    """$defs.ListRootsResult: the client's answer to a roots/list input request."""

    roots: list[Root]


class ListRootsRequestParams(WireType, frozen=True, kw_only=True):
    """ListRootsRequest.params: may carry only ``_meta``."""

    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")


class ElicitRequest(WireType, frozen=True, kw_only=True, tag_field="method", tag="elicitation/create"):
    """$defs.ElicitRequest: ask the user for input, through a form or a URL.

    Build with ``params=ElicitRequestFormParams(...)`` or ``ElicitRequestURLParams(...)``;
    decoded params are ElicitRequestParams (see ``_elicitation``).
    """

    params: ElicitRequestParams


class CreateMessageRequest(WireType, frozen=True, kw_only=True, tag_field="method", tag="sampling/createMessage"):
    """$defs.CreateMessageRequest: ask the client to sample from its model."""

    params: CreateMessageRequestParams


class ListRootsRequest(WireType, frozen=True, kw_only=True, tag_field="method", tag="roots/list"):
    """$defs.ListRootsRequest: ask for the client's roots. ``params`` may be omitted."""

    params: ListRootsRequestParams | UnsetType = UNSET


# $defs.InputRequest: decodable, tagged on "method".
InputRequest: TypeAlias = ElicitRequest | CreateMessageRequest | ListRootsRequest
# $defs.InputResponse: for typing built values; see the module docstring for decoding.
InputResponse: TypeAlias = ElicitResult | CreateMessageResult | ListRootsResult

_RESPONSE_TYPES: dict[type[WireType], type[ElicitResult | CreateMessageResult | ListRootsResult]] = {
    ElicitRequest: ElicitResult,
    CreateMessageRequest: CreateMessageResult,
    ListRootsRequest: ListRootsResult,
}


def input_response_type(
    request: InputRequest,
) -> type[ElicitResult | CreateMessageResult | ListRootsResult]:
    """The class that answers ``request``: convert the matching input response into it.

    >>> input_response_type(ListRootsRequest())
    <class 'mcpwire.types._mrtr.ListRootsResult'>
    """
    return _RESPONSE_TYPES[type(request)]


class InputRequiredResult(WireType, frozen=True, kw_only=True):
    """$defs.InputRequiredResult: "answer these, then call again" (MRTR round 1).

    Only tools/call, resources/read and prompts/get may return it. The schema says at least one
    of ``input_requests`` and ``request_state`` MUST be present; that is the engine's check, not
    the type's. The client retries with ``input_responses`` keyed by the same ids and
    ``request_state`` echoed byte for byte.
    """

    result_type: ResultType = "input_required"
    input_requests: dict[str, InputRequest] | UnsetType = UNSET
    request_state: str | UnsetType = UNSET
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")
