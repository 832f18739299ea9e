"""The method table of MCP 2026-07-28, shared by the server and client engines.

Owns (wire reference sections 4-11 and 5.7; schema $defs ClientRequest, ServerNotification,
ClientNotification): which request methods exist, which server capability gates each one,
which results are cacheable (carry ``ttlMs``/``cacheScope``), which may answer
``input_required``, which are paginated, and which params member is mirrored into the
``Mcp-Name`` header. Removed methods (``initialize``, ``ping``, ``logging/setLevel``,
``resources/subscribe``, ``resources/unsubscribe``) are simply absent: they are unknown.
"""

from __future__ import annotations

from typing import Final

import msgspec

__all__ = ["MethodSpec", "METHODS", "NOTIFICATIONS", "MRTR_METHODS", "CACHEABLE_METHODS"]


class MethodSpec(msgspec.Struct, frozen=True, kw_only=True):
    """What the protocol says about one request method."""

    name: str
    capability: str | None = None
    """Server capability that must be advertised for the method to exist (else -32601)."""
    cacheable: bool = False
    """The result carries ttlMs and cacheScope (section 7)."""
    input_required: bool = False
    """The method may answer ``resultType: "input_required"`` (section 10)."""
    paginated: bool = False
    """The request takes a ``cursor`` and the result may carry ``nextCursor`` (section 6)."""
    name_param: str | None = None
    """The params member mirrored into the Mcp-Name header (section 13.5)."""


METHODS: Final[dict[str, MethodSpec]] = {
    spec.name: spec
    for spec in (
        MethodSpec(name="server/discover", cacheable=True),
        MethodSpec(name="tools/list", capability="tools", cacheable=True, paginated=True),
        MethodSpec(name="tools/call", capability="tools", input_required=True, name_param="name"),
        MethodSpec(name="resources/list", capability="resources", cacheable=True, paginated=True),
        MethodSpec(
            name="resources/templates/list", capability="resources", cacheable=True, paginated=True
        ),
        MethodSpec(
            name="resources/read", capability="resources", cacheable=True, input_required=True,
            name_param="uri",
        ),
        MethodSpec(name="prompts/list", capability="prompts", cacheable=True, paginated=True),
        MethodSpec(name="prompts/get", capability="prompts", input_required=True, name_param="name"),
        MethodSpec(name="completion/complete", capability="completions"),
        # Gated by listChanged / subscribe flags rather than one capability key (section 4).
        MethodSpec(name="subscriptions/listen"),
    )
}

MRTR_METHODS: Final = frozenset(name for name, spec in METHODS.items() if spec.input_required)
CACHEABLE_METHODS: Final = frozenset(name for name, spec in METHODS.items() if spec.cacheable)

# Notifications each side may send in this revision.
NOTIFICATIONS: Final = {
    "client": frozenset({"notifications/cancelled"}),
    "server": frozenset(
        {
            "notifications/progress",
            "notifications/message",
            "notifications/tools/list_changed",
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed",
            "notifications/resources/updated",
            "notifications/subscriptions/acknowledged",
        }
    ),
}
