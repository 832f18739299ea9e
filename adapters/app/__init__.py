"""The application layer: an :class:`~mcpwire_adapters.app.app.App` of handler functions on a sans-IO
:class:`mcpwire.Server`, the :class:`~mcpwire_adapters.app.context.Context` a handler is given, and the
parts App drives: listen-stream fan-out, forwarding to other processes, tasks. Knows nothing of sockets:
the drivers in :mod:`mcpwire_adapters.serve` feed it. Imports ``state`` and ``oauth`` only; never ``client``.

``from mcpwire_adapters.app import App, Context`` (the names are loaded on first use, so
``NeedInput`` alone needs only msgspec)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import App, Context, ListenForwarder, NeedInput, OnError, PeerGone, Send

__all__ = ["App", "Context", "ListenForwarder", "NeedInput", "OnError", "PeerGone", "Send"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(".app", __name__), name)
