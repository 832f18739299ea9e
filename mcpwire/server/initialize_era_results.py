"""What the server sends in an initialize-era revision, shaped from what it would send in 2026-07-28.

Owns (specification 2025-11-25, 2025-06-18 and 2025-03-26: Server > Tools, Resources,
Prompts; schema $defs of each revision): the one step between the engine's results and an
initialize-era session. Results lose what only the stateless revision has (``resultType``,
``ttlMs``, ``cacheScope``, the ``io.modelcontextprotocol/serverInfo`` key of ``_meta``: the
server introduced itself in ``initialize``), then every member the session's revision does not
define; tools whose input or output schema is not an object schema are not visible there.
"""

from __future__ import annotations

from typing import Any, Callable, Final

import msgspec

from ..wire.initialize_era_shapes import MEMBERS, VARIANTS
from ..wire.meta import SERVER_INFO_META_KEY
from ..wire.methods import METHODS

__all__ = ["session_result", "shape_request", "tool_visible", "LISTED_TYPES", "listing_shapes"]

_DROP: Final = object()  # a union member the revision has no variant for: left out of its list


def _prune(value: Any, sub: Any, members: dict[str, dict[str, Any]],
           variants: dict[str, tuple[str | None, tuple[str, ...]]]) -> Any:
    """``value`` with only what the revision defines (``sub``: see mcpwire/wire/initialize_era_shapes.py)."""
    if sub is None:
        return value
    if type(sub) is str:
        if type(value) is not dict:
            return value
        return _members(value, members[sub], members, variants)
    kind, inner = sub
    if kind == "list":
        if type(value) is not list:
            return value
        out = [_prune(item, inner, members, variants) for item in value]
        return [item for item in out if item is not _DROP]
    if kind == "any":
        if type(value) is not dict:
            return value
        for name in inner:
            constant, required = variants[name]
            if (constant is None or value.get("type") == constant) and all(k in value for k in required):
                return _prune(value, name, members, variants)
        return _DROP  # e.g. a resource_link block for a 2025-03-26 client
    if kind == "map":
        if type(value) is not dict:
            return value
        shaped = {k: _prune(v, inner, members, variants) for k, v in value.items()}
        return {k: v for k, v in shaped.items() if v is not _DROP}
    assert kind == "params"
    if type(value) is not dict:
        return value
    return _members(value, dict(inner), members, variants)


def _members(value: dict[str, Any], known: dict[str, Any], members: dict[str, dict[str, Any]],
             variants: dict[str, tuple[str | None, tuple[str, ...]]]) -> Any:
    """The members of ``value`` the revision defines, each shaped; an object with a member the
    revision has no variant for (a prompt message holding a resource_link, for 2025-03-26) is
    itself left out of its list."""
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key in known:
            shaped = _prune(item, known[key], members, variants)
            if shaped is _DROP:
                return _DROP
            out[key] = shaped
    return out


def _strip(result: dict[str, Any]) -> dict[str, Any]:
    meta = result.get("_meta")
    if type(meta) is dict and SERVER_INFO_META_KEY in meta:
        meta = {k: v for k, v in meta.items() if k != SERVER_INFO_META_KEY}
        if meta:
            result["_meta"] = meta
        else:
            del result["_meta"]
    return result


def session_result(revision: str, method: str, result: Any) -> dict[str, Any]:
    """``result`` (a wire type or JSON builtins) as a session of ``revision`` receives it: the
    members of the method's result type in that revision's schema, recursively (named types
    only: JSON Schemas, ``_meta`` and ``structuredContent`` go as they are)."""
    plain = msgspec.to_builtins(result)
    if type(plain) is not dict:
        return {}
    spec = METHODS.get(method)
    members, variants = MEMBERS.get(revision), VARIANTS.get(revision)
    if spec is None or spec.result is None or members is None or variants is None:
        return _strip(dict(plain))
    pruned = _prune(plain, spec.result.__name__, members, variants)
    return _strip(pruned if type(pruned) is dict else {})


_REQUEST_TYPES: Final = {"elicitation/create": "ElicitRequest", "sampling/createMessage": "CreateMessageRequest",
                         "roots/list": "ListRootsRequest"}


def shape_request(revision: str, request: dict[str, Any]) -> Any:
    """The params of a server-to-client request (an input request as plain JSON) for
    ``revision``: only what its schema defines (2025-06-18 has no elicitation ``mode``)."""
    params = request.get("params", {})
    name = _REQUEST_TYPES.get(str(request.get("method")))
    members, variants = MEMBERS.get(revision), VARIANTS.get(revision)
    if name is None or members is None or variants is None or name not in members:
        return params
    shaped = _prune({"params": params}, name, members, variants).get("params", params)
    return params if shaped is _DROP else shaped


def tool_visible(revision: str, tool: dict[str, Any]) -> bool:
    """Whether a tool (as listed, plain JSON) may be offered in ``revision``: initialize-era
    clients take only object input and output schemas."""
    for key in ("inputSchema", "outputSchema"):
        schema = tool.get(key)
        if schema is not None and (type(schema) is not dict or schema.get("type") != "object"):
            return False
    return True


# The named type of each list's items (schema $defs), for the catalog's per-revision lists.
LISTED_TYPES: Final = {"tools/list": "Tool", "resources/list": "Resource",
                       "resources/templates/list": "ResourceTemplate", "prompts/list": "Prompt"}


def listing_shapes(method: str, revisions: tuple[str, ...]) -> dict[str, Callable[[Any], Any]]:
    """For each of ``revisions`` (initialize-era), how an item of ``method``'s list (plain
    JSON) is listed there: shaped to the revision's members, or ``None`` when hidden (a tool
    :func:`tool_visible` refuses). The catalog applies these once, at registration."""
    type_name = LISTED_TYPES[method]

    def shape(revision: str) -> Callable[[Any], Any]:
        members, variants = MEMBERS[revision], VARIANTS[revision]

        def one(item: Any) -> Any:
            if type_name == "Tool" and not tool_visible(revision, item):
                return None
            return _prune(item, type_name, members, variants)

        return one

    return {revision: shape(revision) for revision in revisions if revision in MEMBERS}
