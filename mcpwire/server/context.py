"""What an exchange or a listen stream may see of the engine that made it.

Owns :class:`ServerContext`, the small read-only view the :class:`~mcpwire.Server` builds once
and hands to every per-request object instead of itself: the server's identity for result
``_meta``, the requestState codec, the cache policies, the registered tools (for output
checks), the registry of open listen streams and the server's tasks. Per-request objects never reach back into
the engine, so the engine, the exchanges and the streams import one way.
"""

from __future__ import annotations

from typing import Any, Final, Literal, Mapping

import msgspec

from ..wire.meta import SERVER_INFO_META_KEY
from .catalog import Listing, ToolEntry
from .listeners import Listeners
from .tasks import Tasks
from .tokens import RequestStateCodec

__all__ = ["CachePolicy", "ServerContext", "DEFAULT_CACHE_POLICY"]


class CachePolicy(msgspec.Struct, frozen=True, kw_only=True):
    """``ttlMs`` and ``cacheScope`` for a cacheable result (specification: caching, SEP-2549)."""

    ttl_ms: int = 0
    scope: Literal["public", "private"] = "private"


DEFAULT_CACHE_POLICY: Final = CachePolicy()


class ServerContext:
    """Read-only: built by the engine once, shared by every exchange and listen stream."""

    __slots__ = ("info", "result_meta", "state_codec", "cache", "tools", "listeners", "tasks")

    def __init__(
        self,
        *,
        info: dict[str, Any],
        state_codec: RequestStateCodec,
        cache: Mapping[str, CachePolicy],
        tools: Listing[ToolEntry],
        listeners: Listeners,
        tasks: Tasks | None = None,
    ) -> None:
        self.info = info
        """The server's Implementation object, as JSON-ready builtins."""
        self.result_meta: dict[str, Any] = {SERVER_INFO_META_KEY: info}
        """The ``_meta`` every result carries when the host adds none (shared, never mutated)."""
        self.state_codec = state_codec
        self.cache = cache
        self.tools = tools
        self.listeners = listeners
        self.tasks = tasks
        """The server's tasks (tasks extension), or ``None`` when it serves none."""

    def policy(self, method: str) -> CachePolicy:
        return self.cache.get(method) or DEFAULT_CACHE_POLICY
