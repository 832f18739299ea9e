"""``mcpwire serve --redis URL [--redis-prefix PREFIX]``: the App's notifications and tasks shared
with the server's other processes through Redis (:mod:`mcpwire_adapters.serve.redis_state`)."""

from __future__ import annotations

import argparse
import os
from contextlib import AbstractContextManager
from typing import Any

from .terminal import EXIT_UNREACHABLE, EXIT_USAGE, CliError, Terminal
from ..app.app import App

__all__ = ["use_shared_state"]


def use_shared_state(app: App, args: argparse.Namespace, term: Terminal) -> AbstractContextManager[Any] | None:
    """Set up Redis for ``app`` when ``--redis`` (or ``MCPWIRE_REDIS``) names one; returns what
    to close after serving (a context manager), or ``None`` without Redis. Redis unreachable
    is a clear error (exit 3) before anything is served."""
    url = getattr(args, "redis", None) or os.environ.get("MCPWIRE_REDIS")
    prefix = getattr(args, "redis_prefix", None) or os.environ.get("MCPWIRE_REDIS_PREFIX") or None
    if not url:
        if getattr(args, "redis_prefix", None):
            raise CliError("--redis-prefix needs --redis URL", EXIT_USAGE)
        return None
    if getattr(args, "tasks_db", None) is not None:
        raise CliError("--tasks-db and --redis: tasks are kept in Redis with --redis; choose one", EXIT_USAGE)
    try:
        from ..serve.redis_state import RedisUnavailable, use_redis
    except ImportError as exc:
        raise CliError(f"--redis needs redis-py: pip install 'mcpwire[redis]' ({exc})", EXIT_USAGE) from None
    try:
        shared = use_redis(app, url, prefix=prefix)
    except RedisUnavailable as exc:
        raise CliError(f"{exc} (is redis-server running? check --redis)", EXIT_UNREACHABLE) from None
    what = "notifications, sessions and tasks" if shared.tasks is not None else "notifications and sessions"
    term.say(f"mcpwire: sharing {what} through Redis under {shared.prefix!r}")
    return shared
