"""The App's middleware: an ordered chain of async callables around each request it answers.

A middleware is ``async def mw(ctx, call_next)``: ``ctx`` is the request's
:class:`~mcpwire_adapters.app.context.Context` (``ctx.method``, ``ctx.event`` with the typed
params, ``ctx.principal``, ``ctx.session_id``, ``ctx.meta``...), ``await call_next(ctx)`` runs
the rest of the chain and the handler and returns the result. It may act before and after, catch
what the handler raises, change ``ctx.event`` before passing it on, change the result, answer
without calling on, or refuse by raising (:class:`mcpwire.ProtocolError` for a JSON-RPC error,
:class:`~mcpwire_adapters.app.tool_error.ToolError` for a tool execution error on ``tools/call``).

Which requests: :data:`WRAPPED_METHODS`, the requests the App answers (``tools/call``,
``resources/read``, ``prompts/get``, ``completion/complete``) and the four lists, which the
engine hands to the App (``Server.hand_over_lists``) as soon as a middleware wraps them; each
run of a handler, so also each later round of an initialize-era request that asked its client
and each round of a task's work. What the engine answers alone (``server/discover``,
``initialize``, ``ping``, the session and task methods, every refusal of admission) passes no
middleware.

Order: the first registered runs first (outermost). The chain of each method is composed when a
middleware is registered, never per request; with none the App runs exactly as without this
module. docs/middleware.md has the whole story.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Collection
from typing import Any, Final

from ..errors import UsageError
from .context import Context

__all__ = ["CallNext", "LIST_METHODS", "Middleware", "Middlewares", "WRAPPED_METHODS"]

CallNext = Callable[[Context], Awaitable[Any]]
"""``await call_next(ctx)``: the rest of the chain, then the handler; returns the result."""

Middleware = Callable[[Context, CallNext], Awaitable[Any]]
"""``async def middleware(ctx, call_next) -> result``."""

LIST_METHODS: Final = frozenset({"tools/list", "resources/list", "resources/templates/list", "prompts/list"})
"""The lists: answered by the engine alone until a middleware wraps one."""

WRAPPED_METHODS: Final = frozenset({"tools/call", "resources/read", "prompts/get", "completion/complete"}) | LIST_METHODS
"""The methods a middleware may wrap."""


class Middlewares:
    """The registered middleware, in order, and the chain each method runs (composed here, at
    registration). ``handler`` is the innermost step: the request's handler; ``finish`` turns
    what the chain returned into what the exchange takes (the same conversion a handler's
    answer gets, so a middleware may answer as a handler would)."""

    def __init__(self, handler: CallNext, finish: Callable[[Context, Any], Any]) -> None:
        self._handler = handler
        self._finish = finish
        self._entries: list[tuple[Middleware, frozenset[str]]] = []
        self.chains: dict[str, CallNext] = {}
        """The composed chain of each wrapped method (methods no middleware wraps are absent)."""

    def add(self, middleware: Middleware, methods: Collection[str] | str | None) -> None:
        """Append ``middleware`` for ``methods`` (``None``: every one of :data:`WRAPPED_METHODS`)
        and compose the chains again. Raises :class:`UsageError` (a ``ValueError``) for a method
        no middleware can wrap, ``TypeError`` for a middleware that is not async."""
        if not (inspect.iscoroutinefunction(middleware) or inspect.iscoroutinefunction(type(middleware).__call__)):
            raise TypeError(f"a middleware is an async callable (ctx, call_next), not {middleware!r}")
        if methods is None:
            chosen = WRAPPED_METHODS
        else:
            chosen = frozenset((methods,) if isinstance(methods, str) else methods)
            unknown = sorted(chosen - WRAPPED_METHODS)
            if unknown or not chosen:
                raise UsageError(
                    f"a middleware wraps some of {', '.join(sorted(WRAPPED_METHODS))}; not {unknown or 'none'}"
                    " (the engine answers the other methods itself: docs/middleware.md)")
        self._entries.append((middleware, chosen))
        self.chains = {method: self._compose(method) for method in WRAPPED_METHODS
                       if any(method in wrapped for _, wrapped in self._entries)}

    @property
    def lists(self) -> frozenset[str]:
        """The lists some middleware wraps (the engine hands them to the App)."""
        return LIST_METHODS & self.chains.keys()

    def _compose(self, method: str) -> CallNext:
        step = self._handler
        for middleware, wrapped in reversed(self._entries):
            if method in wrapped:
                step = _link(middleware, step)
        return step

    async def run(self, ctx: Context) -> Any:
        """Run ``ctx``'s request through its method's chain (the App's way to a result once any
        middleware is registered)."""
        chain = self.chains.get(ctx.event.method)
        answer = await (self._handler if chain is None else chain)(ctx)
        return answer if chain is None else self._finish(ctx, answer)


def _link(middleware: Middleware, call_next: CallNext) -> CallNext:
    def step(ctx: Context) -> Awaitable[Any]:
        return middleware(ctx, call_next)

    return step
