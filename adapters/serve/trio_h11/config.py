"""The socket-level limits of the trio/h11 server: :class:`HttpServerConfig` (also importable
from :mod:`mcpwire_adapters.serve.trio_h11.server`, where :func:`serve_http` takes it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from ...oauth.resource_server import OAuthResource

__all__ = ["HttpServerConfig"]


class HttpServerConfig(msgspec.Struct, frozen=True, kw_only=True):
    """Socket-level limits of :func:`serve_http` (the engine's own limits are ``app.server.http``).

    ``header_timeout``: seconds for a whole request head to arrive. ``body_timeout``: seconds
    for the whole body. ``keepalive_idle_timeout``: how long a kept-alive connection may sit
    idle between requests. ``send_timeout``: seconds a single write may block on a client that
    does not read before the connection is dropped. ``max_header_bytes``: the largest request
    head (h11's ``max_incomplete_event_size``; 431 above it). ``sse_keepalive_interval``: seconds
    between ``: keepalive`` comments on an idle listen stream. ``max_connections``: open
    connections served at once; more are answered 503 and closed.
    """

    header_timeout: float = 10.0
    body_timeout: float = 30.0
    keepalive_idle_timeout: float = 60.0
    send_timeout: float = 30.0
    max_header_bytes: int = 64 * 1024
    sse_keepalive_interval: float = 15.0
    max_connections: int = 1024
    reuse_port: bool = False
    """Listen with ``SO_REUSEPORT``, beside other processes on the same (non-zero) port."""
    auth: OAuthResource | None = None
    """OAuth resource server guard (``mcpwire_adapters.oauth.resource_server``, docs/auth.md): runs before the engine."""
