"""OAuth 2.1 drivers for both roles, on the sans-IO :mod:`mcpwire.auth`: ``client`` (the client's
authorization flow), ``resource_server`` (a server's token check), ``jose`` (signing and verifying
JWTs, the ``oauth`` extra), ``store`` (token stores), ``fetch`` (the small HTTP fetches they make).

``from mcpwire_adapters.oauth import OAuth`` (loaded on first use)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .client import OAuth, RedirectHandler, follow_redirect

__all__ = ["OAuth", "RedirectHandler", "follow_redirect"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(".client", __name__), name)
