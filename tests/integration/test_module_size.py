"""Modules stay small (STYLE 12: about 400 lines each, rarely past 700), and a module that was
split keeps every name it exported importable from where it was.

A module past the ceiling is split into modules named for what they own (a half of a class
inherited from a module of its own, as ``Server`` inherits ``catalog_engine.CatalogEngine``),
with the names that moved re-exported from the old module; the table below holds those
re-exports to the objects in their new homes.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

import mcpwire
import mcpwire_adapters

CEILING = 700
PACKAGES = {"mcpwire": Path(mcpwire.__file__).resolve().parent,
            "mcpwire_adapters": Path(mcpwire_adapters.__file__).resolve().parent}

# module -> {name: the module it lives in now}, for the names a split moved out of the module.
MOVED_NAMES = {
    "mcpwire.server.exchange": {
        "Exchange": "mcpwire.server.exchange_verbs", "resource_not_found": "mcpwire.server.exchange_verbs",
        "MAX_PROGRESS_UPDATES": "mcpwire.server.exchange_verbs", "MAX_PROGRESS_MESSAGE": "mcpwire.server.exchange_verbs",
        "MAX_SESSION_TASKS": "mcpwire.server.exchange_tasks",
    },
    "mcpwire_adapters.serve.trio_h11.server": {"HttpServerConfig": "mcpwire_adapters.serve.trio_h11.config"},
    "mcpwire_adapters.client.session": {
        "Page": "mcpwire_adapters.client.verbs", "EventHandler": "mcpwire_adapters.client.verbs",
    },
}
# module -> what it exported before it was split (its __all__ then), every name still there.
EXPORTED = {
    "mcpwire.server.engine": ["Server"],
    "mcpwire.server.exchange": ["Exchange", "HttpExchange", "StdioExchange", "http_exchange", "resource_not_found"],
    "mcpwire_adapters.app.app": [
        "App", "CallNext", "Context", "ListenForwarder", "Middleware", "MimeType", "NeedInput", "PeerGone", "Send",
        "OnError", "ToolError",
    ],
    "mcpwire_adapters.client.session": [
        "ElicitationHandler", "EventHandler", "InputHandler", "InvalidResult", "ListenEvent", "MaybeDelivered", "Page",
        "RootsHandler", "SamplingHandler", "ServerError", "Session", "SessionExpired", "SessionListen", "Subscription",
        "TaskCancelled", "TaskHandler", "TransportError",
    ],
    "mcpwire_adapters.serve.trio_h11.server": ["HttpServerConfig", "serve_http", "serve_http_until"],
}


def _sources() -> list[tuple[str, Path]]:
    return [(f"{name}/{path.relative_to(top).as_posix()}", path)
            for name, top in PACKAGES.items() for path in sorted(top.rglob("*.py"))]


def test_no_module_is_past_the_ceiling() -> None:
    long = {name: n for name, path in _sources() if (n := len(path.read_text(encoding="utf-8").splitlines())) > CEILING}
    assert long == {}, f"past {CEILING} lines: split each into modules named for what they own (STYLE 12)"


def test_the_walk_sees_both_packages() -> None:
    names = {name for name, _ in _sources()}
    assert "mcpwire/server/engine.py" in names and "mcpwire_adapters/app/app.py" in names


@pytest.mark.parametrize("module", sorted(EXPORTED))
def test_a_split_module_still_exports_its_names(module: str) -> None:
    loaded = importlib.import_module(module)
    missing = [name for name in EXPORTED[module] if name not in loaded.__all__ or not hasattr(loaded, name)]
    assert missing == []


@pytest.mark.parametrize("module", sorted(MOVED_NAMES))
def test_a_moved_name_is_the_object_in_its_new_home(module: str) -> None:
    loaded = importlib.import_module(module)
    for name, home in MOVED_NAMES[module].items():
        assert getattr(loaded, name) is getattr(importlib.import_module(home), name), f"{module}.{name}"
