"""What the server sends in an initialize-era revision, shaped from what it would send in 2026-07-28.

Owns (specification 2025-11-25, 2025-06-18 and 2025-03-26: Server > Tools, Resources,
Prompts; schema $defs of each revision): the one step between the engine's results and an
initialize-era session. Results lose what only the stateless revision has (``resultType``,
``ttlMs``, ``cacheScope``, the ``io.modelcontextprotocol/serverInfo`` key of ``_meta``: the
server introduced itself in ``initialize``), then every member the session's revision does not
define; tools whose input or output schema is not an object schema are not visible there.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from ..wire.meta import SERVER_INFO_META_KEY

__all__ = ["session_result", "shape_request", "tool_visible"]

_STATELESS_ONLY: Final = ("resultType", "ttlMs", "cacheScope")


def _strip(result: dict[str, Any]) -> dict[str, Any]:
    for key in _STATELESS_ONLY:
        result.pop(key, None)
    meta = result.get("_meta")
    if type(meta) is dict and SERVER_INFO_META_KEY in meta:
        meta = {k: v for k, v in meta.items() if k != SERVER_INFO_META_KEY}
        if meta:
            result["_meta"] = meta
        else:
            del result["_meta"]
    return result


def session_result(revision: str, method: str, result: Any) -> dict[str, Any]:
    """``result`` (a wire type or JSON builtins) as a session of ``revision`` receives it."""
    plain = msgspec.to_builtins(result)
    if type(plain) is not dict:
        return {}
    return _strip(dict(plain))


def shape_request(revision: str, request: dict[str, Any]) -> Any:
    """The params of a server-to-client request (an input request as plain JSON) for ``revision``."""
    return request.get("params", {})


def tool_visible(revision: str, tool: dict[str, Any]) -> bool:
    """Whether a tool (as listed, plain JSON) may be offered in ``revision``: initialize-era
    clients take only object input and output schemas."""
    for key in ("inputSchema", "outputSchema"):
        schema = tool.get(key)
        if schema is not None and (type(schema) is not dict or schema.get("type") != "object"):
            return False
    return True
