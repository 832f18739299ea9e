"""The host's answer as the result the engine sends: checked, cache fields filled in, stamped.

Owns (specification: Server > Tools (outputSchema, structuredContent), Resources (caching),
Utilities > Completion; schema $defs Error): :func:`shape_result`, which every exchange's
``complete`` runs, and the JSON-RPC error object a failed task keeps.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET
from msgspec.structs import replace

from ..types import CallToolResult, TextContent
from ..wire.errors import ErrorCode, LocalProtocolError, ProtocolError, RemoteProtocolError
from ..wire.meta import SERVER_INFO_META_KEY
from ..wire.methods import METHODS
from .context import ServerContext
from .events import CompletionRequest, ResourceRead, ServerEvent, ToolCall

__all__ = ["error_object", "shape_result"]


def shape_result(context: ServerContext, event: ServerEvent, result: Any) -> Any:
    """The host's answer to ``event`` as the result to send: the method's result type (a str
    is one text block of a tool), output checked against the tool's outputSchema, cache fields
    filled in, ``_meta`` stamped with the server's identity."""
    if type(result) is CallToolResult and type(event) is ToolCall:
        # The common case first: a tool's own result type, only _meta to stamp unless the
        # tool declared an outputSchema (then the full path below checks it).
        entry = context.tools.get(event.name)
        if entry is None or entry.output_check is None or result.is_error is True:
            meta = result.meta
            return replace(
                result, meta=context.result_meta if meta is UNSET else {**meta, SERVER_INFO_META_KEY: context.info})
    expected: type[Any] = METHODS[event.method].result  # type: ignore[assignment]
    if isinstance(event, ToolCall) and isinstance(result, str):
        result = CallToolResult(content=[TextContent(text=result)])
    if not isinstance(result, expected):
        raise LocalProtocolError(f"{event.method} must be answered with {expected.__name__}")
    changes: dict[str, Any] = {}
    if isinstance(event, ToolCall):
        entry = context.tools.get(event.name)
        check = entry.output_check if entry is not None else None
        if check is not None and result.is_error is not True:
            if result.structured_content is UNSET:
                raise RemoteProtocolError("Tool declared an outputSchema but returned no structuredContent", code=ErrorCode.INTERNAL_ERROR)
            problem = check(result.structured_content)
            if problem is not None:
                raise RemoteProtocolError(f"Tool result does not match its outputSchema: {problem}", code=ErrorCode.INTERNAL_ERROR)
    elif isinstance(event, ResourceRead):
        policy = context.policy("resources/read")
        if result.ttl_ms is UNSET:
            changes["ttl_ms"] = policy.ttl_ms
        if result.cache_scope is UNSET:
            changes["cache_scope"] = policy.scope
    elif isinstance(event, CompletionRequest):
        values = result.completion.values
        if len(values) > 100:
            raise LocalProtocolError("A completion returns at most 100 values")
        total = result.completion.total
        if total is not UNSET and total < len(values):
            raise LocalProtocolError("Completion total must be at least the number of values")
    # Result _meta: the host's keys plus serverInfo. The common case, no host _meta, shares
    # one prebuilt mapping: the result is encoded at once and then dropped.
    meta = result.meta
    changes["meta"] = context.result_meta if meta is UNSET else {**meta, SERVER_INFO_META_KEY: context.info}
    return replace(result, **changes)


def error_object(error: ProtocolError) -> dict[str, Any]:
    """A JSON-RPC error object (schema $defs.Error) for a failed task."""
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data is not None:
        try:
            body["data"] = msgspec.to_builtins(error.data)
        except (TypeError, ValueError):
            pass  # data that does not encode is left out, as in an error response
    return body
