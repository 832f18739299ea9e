"""server/discover.

Owns: $defs DiscoverResult (specification: Server > Discovery). The request's params are
RequestParams (``_base``).
"""

from __future__ import annotations

import msgspec
from msgspec import UNSET, UnsetType

from ._base import CacheScope, MetaObject, NonNegativeInt, ResultType, WireType
from ._capabilities import ServerCapabilities

__all__ = ["DiscoverResult"]


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
