"""How a client learns the server: server/discover, and initialize in the older revisions.

Owns: $defs DiscoverResult (specification: Server > Discovery; the request's params are
RequestParams, ``_base``) and the initialize-era InitializeResult (specification 2025-11-25:
Basic > Lifecycle, schema $defs.InitializeResult), which a client reads when it falls back to
the handshake.
"""

from __future__ import annotations

import msgspec
from msgspec import UNSET, UnsetType

from ._base import CacheScope, Implementation, MetaObject, NonNegativeInt, ResultType, WireType
from ._capabilities import ServerCapabilities

__all__ = ["DiscoverResult", "InitializeResult"]


class DiscoverResult(WireType, frozen=True, kw_only=True):
    """$defs.DiscoverResult: the versions and capabilities a server supports.

    ``_meta["io.modelcontextprotocol/serverInfo"]`` SHOULD identify the server (the per-response
    protocol fields of ``_meta``: <https://modelcontextprotocol.io/specification/2026-07-28/basic>;
    schema $defs.ResultMetaObject).
    """

    result_type: ResultType = "complete"
    supported_versions: list[str]
    capabilities: ServerCapabilities
    instructions: str | UnsetType = UNSET
    ttl_ms: NonNegativeInt
    cache_scope: CacheScope
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")


class InitializeResult(WireType, frozen=True, kw_only=True):
    """$defs.InitializeResult of 2025-11-25, 2025-06-18 and 2025-03-26: the revision the server
    chose, its capabilities and identity, fixed for the session. Read by a client that fell back
    to the ``initialize`` handshake; it has no ``resultType``, ``ttlMs`` or ``cacheScope``."""

    protocol_version: str
    capabilities: ServerCapabilities
    server_info: Implementation
    instructions: str | UnsetType = UNSET
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")
