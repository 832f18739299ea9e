"""What a handler of an :class:`~mcpwire_adapters.App` gets: its :class:`Context` (the event,
progress, log, the client's answers, the principal), and what drivers share with the App:
``Send`` (a coroutine writing output events) and :class:`PeerGone`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable, Callable

from msgspec import UNSET

import mcpwire
from mcpwire import Exchange

if TYPE_CHECKING:
    from .app import App

__all__ = ["Context", "PeerGone", "Send"]

Send = Callable[[Any], Awaitable[None]]


class PeerGone(Exception):
    """Raised by a driver's ``emit`` when the client went away (closed, reset, stopped reading)."""


class Context:
    """What a handler gets: the event, and ways to report progress and log for this request."""

    def __init__(self, app: App, exchange: Exchange[Any], send: Send) -> None:
        self.app = app
        self.exchange = exchange
        self.event = exchange.event
        self._send = send

    @property
    def meta(self) -> mcpwire.RequestMeta:
        return self.event.meta

    @property
    def principal(self) -> Any:
        """The verified OAuth access token of this request (an ``mcpwire.auth.AccessToken``),
        or None when the server runs without OAuth (``mcpwire_adapters.oauth_server``)."""
        from .oauth_server import current_principal

        return current_principal.get()

    @property
    def input_responses(self) -> dict[str, dict[str, Any]]:
        return getattr(self.event, "input_responses", None) or {}

    @property
    def state(self) -> Any:
        return getattr(self.event, "state", UNSET)

    @property
    def protocol_version(self) -> str:
        """The revision the request speaks: ``"2026-07-28"`` (stateless), or an initialize-era
        session's negotiated revision."""
        return self.exchange.revision

    async def progress(self, progress: float, *, total: float | None = None, message: str | None = None) -> None:
        out = self.exchange.progress(progress, total=total, message=message)
        if out:
            await self._send(out)

    async def log(self, level: str, data: Any, *, logger: str | None = None) -> None:
        out = self.exchange.log(level, data, logger=logger)
        if out:
            await self._send(out)

    async def close_sse_stream(self, retry_ms: int = 1000) -> None:
        """2025-11-25 sessions over HTTP (SEP-1699): end this request's SSE response now and
        tell the client to come back after ``retry_ms`` with Last-Event-ID; the handler goes on
        and what it sends next reaches the client on that resumed stream. LocalProtocolError
        on other requests (a stateless request, stdio, an older revision)."""
        exchange = self.exchange
        if not isinstance(exchange, mcpwire.HttpExchange):
            raise mcpwire.LocalProtocolError("close_sse_stream is for requests on a 2025-11-25 HTTP session")
        out = exchange.close_stream(retry_ms)
        if out:
            await self._send(out)
        self._send = self.app._resumed_sender(exchange)
