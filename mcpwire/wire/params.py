"""Stage two of decoding: each method's params, and their checks.

Owns (specification: Server > Tools, Resources, Prompts, Utilities > Completion and
Pagination; Basic > Patterns > Multi Round-Trip Requests and Subscriptions; schema $defs
PaginatedRequestParams, CallToolRequestParams, ReadResourceRequestParams,
GetPromptRequestParams, CompleteRequestParams, SubscriptionsListenRequestParams): one loosely
typed Struct per method, decoded by a decoder built once and looked up by method name, so a
request is parsed once (``arguments`` stays ``Raw`` until the tool's own decoder or validator
reads it); then checks in code, in mcpwire's order, each failure -32602 with mcpwire's
message. The ``_meta`` member is decoded here and validated by ``_meta``.
"""

from __future__ import annotations

import re
from typing import Any, Final

import msgspec
from msgspec import UNSET, Raw, UnsetType

from .errors import ErrorCode, RemoteProtocolError

__all__ = [
    "GenericParams", "PaginatedParams", "CallToolParams", "ReadResourceParams", "GetPromptParams", "CompleteParams",
    "ListenParams", "InitializeParams", "SetLevelParams", "SubscribeParams", "TaskParams", "UpdateTaskParams", "bad_params", "decode_params", "is_absolute_uri", "check_cursor", "check_string_map", "is_object",
]


def bad_params(message: str, data: Any = UNSET) -> RemoteProtocolError:
    return RemoteProtocolError(message, code=ErrorCode.INVALID_PARAMS, data=data)


class GenericParams(msgspec.Struct):
    """Any method's params, for the members every request shares."""

    meta: Any = msgspec.field(default=UNSET, name="_meta")


class PaginatedParams(GenericParams):
    cursor: Any = UNSET


class CallToolParams(GenericParams, rename="camel"):
    """``task``: 2025-11-25's task augmentation (Tasks: Creating Tasks), ``{"ttl": ms}``."""

    name: Any = UNSET
    arguments: Raw | UnsetType = UNSET
    input_responses: Any = UNSET
    request_state: Any = UNSET
    task: Any = UNSET


class ReadResourceParams(GenericParams, rename="camel"):
    uri: Any = UNSET
    input_responses: Any = UNSET
    request_state: Any = UNSET


class GetPromptParams(GenericParams, rename="camel"):
    name: Any = UNSET
    arguments: Any = UNSET
    input_responses: Any = UNSET
    request_state: Any = UNSET


class CompleteParams(GenericParams):
    ref: Any = UNSET
    argument: Any = UNSET
    context: Any = UNSET


class ListenParams(GenericParams):
    notifications: Any = UNSET


class InitializeParams(GenericParams, rename="camel"):
    protocol_version: Any = UNSET
    capabilities: Any = UNSET
    client_info: Any = UNSET


class SetLevelParams(GenericParams):
    level: Any = UNSET


class SubscribeParams(GenericParams):
    uri: Any = UNSET


class TaskParams(GenericParams):
    """tasks/get and tasks/cancel (tasks extension: Task Polling, Task Cancellation). The
    member keeps its wire name: the method table's ``name_param`` reads it by that name."""

    taskId: Any = UNSET  # noqa: N815


class UpdateTaskParams(TaskParams):
    """tasks/update (tasks extension: Task Update Requests)."""

    inputResponses: Any = UNSET  # noqa: N815


_EMPTY: Final = b"{}"


def decode_params(
    decoder: msgspec.json.Decoder[Any], raw: Raw | UnsetType, request_id: Any = None, *, typed: bool = False
) -> Any:
    """Stage two for one message: its params (``{}`` when absent) through ``decoder``.

    Stage one already proved the text is JSON (and UTF-8). What is left: a number Python
    cannot hold (``1e400``) read into a loosely typed member, -32602; nesting deeper than the
    decoder can follow, -32700; both with the request id. With ``typed`` (a tool's own
    arguments Struct) a ValidationError is the decoder's verdict on the values and is raised
    for the caller to answer.
    """
    try:
        return decoder.decode(_EMPTY if raw is UNSET else raw)
    except msgspec.ValidationError:
        if typed:
            raise
        raise RemoteProtocolError(
            "Invalid params: a number is out of range", code=ErrorCode.INVALID_PARAMS, request_id=request_id
        ) from None
    except (msgspec.DecodeError, RecursionError):
        raise RemoteProtocolError(
            "Parse error: JSON nested too deeply", code=ErrorCode.PARSE_ERROR, request_id=request_id
        ) from None


# An absolute URI starts with its scheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"
# (RFC 3986 section 3.1): resources/read URIs and listen resourceSubscriptions alike.
_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


def is_absolute_uri(value: str) -> bool:
    return _SCHEME.match(value) is not None


def is_object(raw: Raw | UnsetType) -> bool:
    return raw is not UNSET and memoryview(raw)[0] == 0x7B  # "{"


def check_cursor(value: Any) -> str | None:
    if value is UNSET:
        return None
    if type(value) is not str:
        raise bad_params("Cursor must be a string")
    return value


def check_string_map(value: Any, message: str) -> dict[str, str]:
    if value is UNSET:
        return {}
    if type(value) is not dict or any(type(v) is not str for v in value.values()):
        raise bad_params(message)
    return value
