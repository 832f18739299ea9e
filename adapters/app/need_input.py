""":class:`NeedInput`, a handler's answer asking the client for input first.

It needs only msgspec: ``from mcpwire_adapters import NeedInput`` loads neither anyio, trio nor
h11, so an adapter of your own on another event loop (``examples/asyncio_server.py``) answers
with the same type as the App layer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

__all__ = ["NeedInput"]


class NeedInput(msgspec.Struct, frozen=True, kw_only=True):
    """A handler's answer asking the client for input (``resultType: "input_required"``,
    multi round-trip requests) instead of answering now.

    ``requests`` maps ids of your choice to input requests (``ElicitRequest``,
    ``CreateMessageRequest``, ``ListRootsRequest``); ``state`` is any JSON value, handed back
    verified as ``ctx.state`` (``event.state``) on the retry; ``ttl_seconds`` bounds how long
    that state stays valid. The App passes them to ``exchange.input_required(requests,
    state=..., ttl_seconds=...)``; an adapter of your own does the same.
    """

    requests: Mapping[str, Any] | None = None
    state: Any = None
    ttl_seconds: float | None = None
