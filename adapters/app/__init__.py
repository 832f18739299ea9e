"""The application layer: an :class:`~mcpwire_adapters.app.app.App` of handler functions on a sans-IO
:class:`mcpwire.Server`, the :class:`~mcpwire_adapters.app.context.Context` a handler is given, and the
parts App drives: listen-stream fan-out, forwarding to other processes, tasks, middleware. Knows nothing of sockets:
the drivers in :mod:`mcpwire_adapters.serve` feed it. Imports ``state`` and ``oauth`` only; never ``client``.

``from mcpwire_adapters.app import App, Context`` (the names are loaded on first use, so
``NeedInput`` and ``ToolError`` alone need only msgspec). A tool written as a typed function:
:mod:`.signature`; what handlers may return: :mod:`.results`."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import App, CallNext, Context, ListenForwarder, Middleware, NeedInput, OnError, PeerGone, Send
    from .signature import MimeType
    from .tool_error import ToolError

__all__ = [
    "App", "CallNext", "Context", "ListenForwarder", "Middleware", "MimeType", "NeedInput", "OnError", "PeerGone", "Send",
    "ToolError",
]

# Where each name lives when it is not in .app: NeedInput and ToolError need only msgspec.
_LIGHT = {"NeedInput": ".need_input", "ToolError": ".tool_error", "MimeType": ".signature"}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_LIGHT.get(name, ".app"), __name__), name)
