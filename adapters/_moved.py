"""The import paths of the flat layout (before the role packages), kept for one release.

``import mcpwire_adapters.http_server`` still works: the finder below, last on ``sys.meta_path``
and asked only for a name no file answers, imports the module at its new path, warns once with
a :class:`DeprecationWarning` that names that path, and returns the same module object (so
``mcpwire_adapters.http_server.serve_http is mcpwire_adapters.serve.trio_h11.server.serve_http``).
Type checkers do not see these names: typed code imports the new paths. The table is the list
of moves in CHANGELOG.md.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from importlib.abc import Loader

__all__ = ["MOVED", "install"]

# old module (under mcpwire_adapters) -> its module now
MOVED: dict[str, str] = {
    "context": "app.context", "fanout": "app.fanout", "forwarder": "app.forwarder", "tasks": "app.tasks",
    "http_server": "serve.trio_h11.server", "asgi": "serve.asgi.app", "stdio_server": "serve.stdio",
    "redis_serving": "serve.redis_state",
    "session": "client.session", "subscription": "client.subscription", "task_client": "client.task_follower",
    "feed": "client.session_feed", "cache": "client.cache", "http_client": "client.http",
    "stdio_client": "client.stdio", "blocking": "client.blocking",
    "oauth_jose": "oauth.jose", "oauth_server": "oauth.resource_server", "oauth_store": "oauth.store",
    "keys": "state.keys", "broker": "state.broker", "task_store": "state.sqlite_tasks",
    "redis_broker": "state.redis.broker", "redis_sessions": "state.redis.sessions", "redis_tasks": "state.redis.tasks",
    "probe": "testing.probe.runner", "probe_pytest": "testing.probe.pytest_plugin",
    "fuzz": "testing.fuzz.runner", "strategies": "testing.fuzz.strategies",
}
_PREFIX = __name__.rpartition(".")[0] + "."


class _Alias:
    # A meta path finder and its own loader (the protocols of importlib.abc, without importing
    # that module: it loads tempfile, shutil, random and more, and this runs on every import).

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(_PREFIX) or fullname[len(_PREFIX):] not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, cast("Loader", self))

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        new = _PREFIX + MOVED[spec.name[len(_PREFIX):]]
        warnings.warn(
            f"{spec.name} has moved to {new}; the old path goes in the next release",
            DeprecationWarning, stacklevel=_caller_level(),
        )
        # The module itself, under both names: its __spec__ and __name__ stay the new ones.
        return importlib.import_module(new)

    def exec_module(self, module: ModuleType) -> None:
        pass  # already executed under its new name


def _caller_level() -> int:
    """The stack level of the first frame outside the import system, so the warning points at
    the code that used the old path. ``warnings`` itself skips the frozen importlib frames when
    it counts; ``importlib.import_module`` is a frame it counts."""
    frame, level = sys._getframe(2), 2  # level 1 is create_module
    while frame.f_back is not None and (
        frame.f_code.co_filename.startswith("<frozen importlib") or frame.f_code.co_filename == importlib.__file__
    ):
        level += not frame.f_code.co_filename.startswith("<frozen")
        frame = frame.f_back
    return level


def install() -> None:
    """Put the finder last on ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, _Alias) for finder in sys.meta_path):
        sys.meta_path.append(_Alias())
