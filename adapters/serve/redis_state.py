"""One App's shared state on Redis, as ``mcpwire serve --redis URL`` and the ASGI factory set it
up: :func:`use_redis` (``pip install mcpwire[redis]``).

It connects (a clear :class:`RedisUnavailable` when Redis cannot be reached at start, so the
command exits non-zero at once rather than serving without its shared state), then gives the
App a :class:`~mcpwire_adapters.state.redis.broker.RedisBroker` (changes reach the listen and GET
streams of every process, so does a session's end; it also renews the session store's GET-stream
leases), a :class:`~mcpwire_adapters.state.redis.sessions.RedisSessionStore` (initialize-era
sessions, their one GET stream and their SSE events, on any process) and, for an App with
tasks, a :class:`~mcpwire_adapters.state.redis.tasks.RedisTaskStore`. Every key and the channel start with the
server's prefix (default ``mcpwire:<server name>:``), so two servers on one Redis never see each
other's data: give each service its own prefix.

The client uses short timeouts (``timeout``, default 2 s: connecting and each reply), because
the engine calls its stores synchronously from the event loop (docs/deployment.md says what
that costs), and checks a pooled connection before use when it was idle for 30 s.
"""

from __future__ import annotations

import os
from types import TracebackType
from typing import Self
from urllib.parse import urlsplit

import redis

from ..app.app import App
from ..errors import RedisUnavailable
from ..state.redis.broker import RedisBroker
from ..state.redis.sessions import RedisSessionStore
from ..state.redis.tasks import RedisTaskStore

__all__ = [
    "ENV_PREFIX", "ENV_URL", "RedisServing", "RedisUnavailable", "connect", "default_prefix", "use_redis", "use_redis_from_env",
]

ENV_URL = "MCPWIRE_REDIS"
"""The Redis URL an ASGI app made by :func:`mcpwire_adapters.serve.asgi.app.asgi_app` uses, when set."""
ENV_PREFIX = "MCPWIRE_REDIS_PREFIX"
"""The key prefix with :data:`ENV_URL` (default :func:`default_prefix`)."""


def default_prefix(app: App) -> str:
    return f"mcpwire:{app.server.info.name}:"


def _shown(url: str) -> str:
    """``url`` without its password, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username or ''}:***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    return parts._replace(netloc=netloc).geturl()


def connect(url: str, *, timeout: float = 2.0) -> redis.Redis:
    """A client of the Redis at ``url`` (``redis://``, ``rediss://`` or ``unix://``), checked
    with a PING; :class:`RedisUnavailable` saying why when that fails."""
    try:
        client = redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout,
                                      health_check_interval=30)
        client.ping()
    except (redis.RedisError, ValueError, OSError) as exc:
        raise RedisUnavailable(f"cannot reach Redis at {_shown(url)}: {exc}") from None
    return client


class RedisServing:
    """What :func:`use_redis` set up; :meth:`close` (or leaving the ``with`` block) closes the task
    store (its running tasks fail, as at any stop) and the connections."""

    def __init__(self, client: redis.Redis, prefix: str, broker: RedisBroker, sessions: RedisSessionStore,
                 tasks: RedisTaskStore | None) -> None:
        self.client = client
        self.prefix = prefix
        self.broker = broker
        self.sessions = sessions
        self.tasks = tasks

    def close(self) -> None:
        self.sessions.close()
        try:
            if self.tasks is not None:
                self.tasks.close()
        finally:
            self.client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def use_redis(app: App, url: str, *, prefix: str | None = None, timeout: float = 2.0) -> RedisServing:
    """Share ``app``'s notifications, sessions and tasks through the Redis at ``url`` (see the module
    docstring); call before serving. Raises :class:`RedisUnavailable` when Redis is down."""
    client = connect(url, timeout=timeout)
    prefix = prefix if prefix is not None else default_prefix(app)
    broker = RedisBroker(client, prefix=prefix)
    store: RedisTaskStore | None = None
    try:
        if app.server.tasks is not None:
            store = RedisTaskStore(client, prefix=prefix)
    except Exception as exc:
        client.close()
        raise RedisUnavailable(f"cannot reach Redis at {_shown(url)}: {exc}") from None
    sessions = RedisSessionStore(client, prefix=prefix)
    broker.sessions = sessions  # renews the GET streams' leases, ends those whose session is gone
    app.server.sessions = sessions
    if app.server.tasks is not None and store is not None:
        app.server.tasks.store = store
    app.fanout.broker = broker
    return RedisServing(client, prefix, broker, sessions, store)


def use_redis_from_env(app: App) -> RedisServing | None:
    """:func:`use_redis` with :data:`ENV_URL` and :data:`ENV_PREFIX`, when :data:`ENV_URL` is set."""
    url = os.environ.get(ENV_URL)
    if not url:
        return None
    return use_redis(app, url, prefix=os.environ.get(ENV_PREFIX) or None)
