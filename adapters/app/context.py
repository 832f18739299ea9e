"""What a handler of an :class:`~mcpwire_adapters.App` gets: its :class:`Context` (the event,
progress, log, the client's answers, the principal), and what drivers share with the App:
``Send`` (a coroutine writing output events), :class:`PeerGone`, :class:`CancelScopeLike`,
:class:`Cancellable` and :class:`ExchangeRun`."""

from __future__ import annotations

import time
from typing import Any, Awaitable, Callable, Protocol

import anyio
import anyio.lowlevel
from msgspec import UNSET, UnsetType

import mcpwire
from mcpwire import Exchange

from ..errors import PeerGone
from .hub import Hub

__all__ = ["CancelScopeLike", "Cancellable", "Context", "ExchangeRun", "PeerGone", "Send", "principal_key"]

Send = Callable[[Any], Awaitable[None]]


def principal_key() -> str | None:
    """The current request's verified OAuth principal as the engine binds tasks to it
    (``AccessToken.principal``), or ``None`` without one. Drivers with a guard pass it as
    ``HttpRequest.principal``."""
    from ..oauth.resource_server import current_principal

    token = current_principal.get()
    return None if token is None else token.principal


class Cancellable(Protocol):
    """What an :class:`ExchangeRun` cancels when the client leaves: the cancel scope its handler
    runs in, or whatever stands for it (``cancel()`` ends the handler)."""

    def cancel(self) -> None: ...


class CancelScopeLike(Cancellable, Protocol):
    """What ``App.run_exchange_armed`` runs a handler in: ``anyio.CancelScope``,
    ``trio.CancelScope``, or any scope entered with ``with`` that ``cancel()`` ends."""

    def __enter__(self) -> Any: ...
    def __exit__(self, kind: Any, exc: Any, tb: Any) -> bool | None: ...


class ExchangeRun:
    """What a client that goes away does to an exchange a driver runs (``App.run_exchange_armed``
    makes one; the ASGI app on asyncio too). Its handler runs in ``scope`` and answers through
    :meth:`send`; ``peer_gone`` tells afterwards whether the client left. A driver whose
    ``emit`` awaits :meth:`lost` itself hands the handler ``emit`` directly (``App.dispatch``) and
    may make its run only when the client leaves or the handler first waits."""

    __slots__ = ("exchange", "emit", "scope", "peer_gone")

    def __init__(self, exchange: Exchange[Any], emit: Send, scope: Cancellable) -> None:
        self.exchange = exchange
        self.emit = emit
        self.scope = scope
        self.peer_gone = False

    def gone(self) -> None:
        """The client went away: cancel the exchange and the handler's scope (on HTTP a
        disconnect is the cancellation), unless the server ended this response itself
        (``close_sse_stream``: the work goes on)."""
        if getattr(self.exchange, "detached", False):
            return
        self.peer_gone = True
        self.exchange.cancel()
        self.scope.cancel()

    async def send(self, outputs: Any) -> None:
        """``emit(outputs)``; a :class:`PeerGone` it raises is :meth:`lost`."""
        try:
            await self.emit(outputs)
        except PeerGone:
            await self.lost()

    async def lost(self) -> None:
        """The client left while the handler's answer was being sent: :meth:`gone`, delivered to
        the handler as that cancellation here and now (never as an exception a handler could
        catch)."""
        self.gone()
        await anyio.lowlevel.checkpoint()


class Context:
    """What a handler gets: the event, and ways to report progress and log for this request."""

    def __init__(self, hub: Hub, exchange: Exchange[Any], send: Send) -> None:
        self._hub = hub
        self.exchange = exchange
        self.event = exchange.event
        """The request, its params typed (a :class:`mcpwire.ToolCall`, :class:`mcpwire.ResourceRead`,
        :class:`mcpwire.PromptGet`, :class:`mcpwire.CompletionRequest` or :class:`mcpwire.ListRequest`).
        A middleware may replace it before calling on, with a copy
        (``msgspec.structs.replace(ctx.event, arguments=...)``): the handler gets that one."""
        self.send_outputs = send
        """Writes the engine's outputs for this request to its client: on its own response, or
        after :meth:`close_sse_stream` on the GET stream resuming it."""
        self.decided: anyio.Event | None = None
        """Set when a call that may become a task has made it (the request then ends)."""

    @property
    def app(self) -> Any:
        """The :class:`~mcpwire_adapters.App` this request came to (typed ``Any``: the App's
        module imports this one, never the other way round)."""
        return self._hub.host

    @property
    def method(self) -> str:
        """The request's method (``"tools/call"``, ``"tools/list"``...)."""
        return self.event.method

    @property
    def request_id(self) -> str | int:
        """The request's JSON-RPC id."""
        return self.exchange.request_id

    @property
    def session_id(self) -> str | None:
        """The initialize-era session the request came on (its ``Mcp-Session-Id``), or ``None``:
        a stateless request, or a stdio session (which has no id)."""
        session = self.exchange.session
        return None if session is None else session.id

    @property
    def meta(self) -> mcpwire.RequestMeta:
        """The request's ``_meta``, validated (``meta.raw``: every key, those mcpwire does not
        read included, such as W3C trace context)."""
        return self.event.meta

    @property
    def principal(self) -> Any:
        """The verified OAuth access token of this request (an ``mcpwire.auth.AccessToken``),
        or None when the server runs without OAuth (``mcpwire_adapters.oauth.resource_server``)."""
        from ..oauth.resource_server import current_principal

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
            await self.send_outputs(out)

    async def log(self, level: str, data: Any, *, logger: str | None = None) -> None:
        out = self.exchange.log(level, data, logger=logger)
        if out:
            await self.send_outputs(out)

    # -- the tasks extension ----------------------------------------------------------------------
    @property
    def task_allowed(self) -> bool:
        """Whether this call may become a task (:meth:`start_task`): the tool has
        ``task_support`` and the client declared the tasks extension."""
        return bool(getattr(self.event, "task_allowed", False))

    @property
    def task_id(self) -> str | None:
        """The task this call became, or ``None``."""
        return self.exchange.task_id

    async def start_task(
        self, *, status_message: str | None = None, ttl_ms: int | None | UnsetType = UNSET,
        poll_interval_ms: int | None | UnsetType = UNSET,
    ) -> str | None:
        """Answer the call with a task now (a ``CreateTaskResult``) and go on working in the
        background: what the handler returns, raises or asks (:class:`NeedInput`) from here on
        goes to the task. Returns the task id; on a call that already is a task (a later round),
        its id, changing nothing (but on the first round of a 2025-11-25 call that asked to be a
        task, made before the handler ran, ``status_message`` is set). On a call that cannot become one (:attr:`task_allowed` is
        false: the client did not declare the tasks extension) it does nothing and returns
        ``None``: the handler goes on answering the request itself, as the specification lets a
        server do for such a client."""
        exchange = self.exchange
        if exchange.task_id is not None:
            if status_message is not None and getattr(self.event, "task_requested", False) and self.decided is not None:
                # A 2025-11-25 task is made before its first round runs: that round's message applies.
                await self.task_status(status_message)
            return exchange.task_id
        if not self.task_allowed:
            return None
        out = exchange.create_task(
            now=time.time(), ttl_ms=ttl_ms, poll_interval_ms=poll_interval_ms, status_message=status_message,
        )
        if out:
            await self.send_outputs(out)
        if exchange.task_id is not None:
            self._hub.tasks.started(self)
        return exchange.task_id

    async def task_status(self, message: str | None) -> None:
        """A new ``statusMessage`` for this call's task (LocalProtocolError before :meth:`start_task`)."""
        if self.exchange.task_id is None:
            raise mcpwire.LocalProtocolError("task_status is for a call that became a task (start_task)")
        self.exchange.set_task_status(message, now=time.time())
        self._hub.tasks.notify(self.exchange.task_id)

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
            await self.send_outputs(out)
        if exchange.detached:  # not for a client that takes only JSON: its answer comes whole, here
            self.send_outputs = self._hub.resumed_sender(exchange)
