"""An application: handler functions bound to a sans-IO :class:`mcpwire.Server`.

This is adapter code: it calls host functions, which the core never does. Every transport
driver (trio/h11 HTTP, stdio, ASGI) feeds requests to ``app.server`` and hands each resulting
exchange to :meth:`App.dispatch` with a ``send`` coroutine that writes output events. The
decorators that declare tools, resources, templates and prompts, and the tables of their
handlers, are :class:`~.registration.Registration`'s, which App inherits; this module answers.

The layer is event-loop agnostic: it uses anyio for worker threads, listen-stream queues and
cancellation, so the same App runs under the trio drivers and under any ASGI server (uvicorn,
hypercorn; asyncio or trio).

Handlers may be ``async def`` (run in the driver's task; they may ``await ctx.progress`` and
``await ctx.log``) or plain functions (run in a worker thread so they cannot stall the loop).
A tool or prompt handler is either a typed function whose parameters are its arguments
(``async def add(a: int, b: int = 2) -> int``; :mod:`.signature` reads it at registration) or
``handler(ctx, arguments)`` (:func:`.signature.is_legacy` tells them apart). A handler returns
its result (for a tool: what :mod:`.results` converts), a :class:`NeedInput` to ask the client
for input (multi round-trip requests), or raises a :class:`mcpwire.ProtocolError` to answer with
that error.

In a tool handler, :class:`ToolError` answers with a tool execution error (``isError``, its
text), and any other exception too, with the text ``Tool 'name' failed``
(``App(tool_error_details=True)``: the exception's own text), logged and reported as below.
Once a call became a task its work's exception fails the task with -32603 instead.

Middleware (:mod:`.middleware`, :meth:`App.middleware`): an ordered chain of
``async def mw(ctx, call_next)`` around each request the App answers (its handlers' and, once
wrapped, the four lists), composed at registration; without any, the path is the one above.

Any other exception (outside a tool), a -32603 ProtocolError, a
:class:`mcpwire.LocalProtocolError` (the API misused: an answer of the wrong type, say) or an
answer the engine cannot send is answered -32603 ``Internal error`` with nothing of the cause
on the wire; the exception goes to the ``mcpwire_adapters.app`` logger and to the ``on_error``
callback.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import secrets
import time
from collections.abc import AsyncIterator
from typing import Any, Callable, Collection, Coroutine, Final, TypeVar, overload

import anyio
import anyio.to_thread
from anyio.streams.memory import MemoryObjectReceiveStream
from msgspec import UNSET

import mcpwire
from mcpwire.types import CallToolResult, CompleteResult, Implementation, TextContent
from mcpwire import CompletionRequest, Exchange, ListenStream, ListRequest, PromptGet, ResourceRead, Server, ToolCall, resource_not_found
from mcpwire import InputArrived, SessionClosed
from mcpwire.sessions import HttpBatch
from mcpwire.tasks import MemoryTaskStore, TaskChanged, TaskResultWanted, Tasks, TaskStore

from .need_input import NeedInput
from .batch import run_batch
from .results import prompt_result, resource_result, tool_converter
from .signature import MimeType
from .tool_error import ToolError
from .context import Cancellable, CancelScopeLike, Context, ExchangeRun, PeerGone, Send
from .middleware import CallNext, Middleware, Middlewares
from ..state.broker import Broker
from .fanout import Fanout
from .forwarder import ListenForwarder
from .hub import Hub
from .tasks import TaskRunner
from .registration import Registration

__all__ = [
    "App", "CallNext", "Context", "ListenForwarder", "Middleware", "MimeType", "NeedInput", "PeerGone", "Send", "OnError",
    "ToolError",
]

_log = logging.getLogger("mcpwire_adapters.app")

OnError = Callable[[Exchange[Any], BaseException], None]
"""``on_error(exchange, exc)``: called with the exception behind each -32603 answer and each
failed tool (``isError``, "Tool 'name' failed")."""
M = TypeVar("M", bound=Middleware)

_INTERNAL_ERROR = mcpwire.ProtocolError("Internal error", code=mcpwire.ErrorCode.INTERNAL_ERROR)
_TASK: Final = mcpwire.ExchangeState.TASK  # a module constant: an Enum member read through its class costs a call


class _NoEvent:
    """The type no event has: a tool call goes through the middleware once any wraps tools/call."""


def _loop_hint(error: BaseException) -> str:
    """A word for the log when a handler used trio on another loop (the ASGI app under uvicorn,
    the WSGI app, serve_stdio on asyncio): trio's own error does not say what to do."""
    if not (isinstance(error, RuntimeError) and str(error) == "must be called from async context"):
        return ""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return ""  # not asyncio: trio's error stands as it is
    return (" (a trio call in a handler running on asyncio: write handlers with anyio, e.g. anyio.sleep,"
            " anyio.create_task_group, anyio.to_thread.run_sync; docs/asgi.md)")


class App(Registration):
    """Declare tools, resources, templates and prompts with decorators; serve with a driver.

    ``on_error(exchange, exc)``, if given, is called (in the event loop's thread, before the
    answer is sent; it must not block) with the exception behind every -32603 answer (a
    handler's exception, a -32603 ProtocolError, or a result the engine refused) and behind
    every failed tool call (a tool handler's exception other than :class:`ToolError`, answered
    ``isError`` with the text ``Tool 'name' failed``, or with the exception's own text when
    ``tool_error_details`` is true). Such exceptions are also logged to
    ``mcpwire_adapters.app``. Other ProtocolErrors and ToolErrors are answers, not failures,
    and are neither logged nor reported. ``broker``: the other processes (``fanout.py``).
    """

    def __init__(
        self,
        name: str,
        version: str,
        *,
        keyring: mcpwire.Keyring | None = None,
        validator: mcpwire.ValidatorFactory | None | str = "default",
        on_error: OnError | None = None,
        input_timeout: float = 300.0,
        tasks: bool | TaskStore = False,
        broker: Broker | None = None,
        tool_error_details: bool = False,
        **server_options: Any,
    ) -> None:
        if keyring is None:
            # Randomness belongs to the adapter; several processes must share an explicit keyring.
            keyring = mcpwire.Keyring.single(os.urandom(32))
        if validator == "default":
            validator = mcpwire.jsonschema_validator()
        server_options.setdefault("list_changed", True)  # the App sends them: notify_list_changed
        # Initialize-era session ids are random, drawn here (the core draws no randomness).
        server_options.setdefault("session_ids", (secrets.token_urlsafe(24) for _ in itertools.count()))
        if tasks is not False and "tasks" not in server_options:
            # Task ids are bearer handles: 128 bits and more of randomness (ext-tasks: Security).
            store = MemoryTaskStore() if tasks is True else tasks
            server_options["tasks"] = Tasks(store, (secrets.token_urlsafe(24) for _ in itertools.count()))
        # The server, and the tables registration fills (registration.py).
        super().__init__(Server(
            Implementation(name=name, version=version), keyring=keyring,
            validator=validator if not isinstance(validator, str) else None, **server_options,
        ))
        self.on_error = on_error
        self.tool_error_details = tool_error_details
        """Whether a failed tool's ``isError`` text is its exception's own text (default: the
        generic ``Tool 'name' failed``; the exception is logged and reported either way)."""
        self.input_timeout = input_timeout
        """Seconds an initialize-era request waits for the client's answers to its
        server-to-client requests before it fails with -32603."""
        self._waiters: dict[int, anyio.Event] = {}
        # The running requests of each session, by request id: DELETE cancels them all, a posted
        # notifications/cancelled one.
        self._session_work: dict[str, dict[tuple[type, Any], Cancellable]] = {}
        # What the parts (contexts, fan-out, forwarders, tasks) share: they get the hub, not the App.
        self._hub = hub = Hub(self, self.server)
        # The runner on the App too: dispatch reads it per request, in one attribute read.
        self._tasks = hub.tasks = TaskRunner(hub)
        self.fanout = hub.fanout = Fanout(hub, broker)  # changes: to this process's streams, then the broker's
        # The middleware, and the two choices it makes at registration (never per request): the
        # event type answer() runs inline (a tool call, unless a middleware wraps tools/call)
        # and the way to every other answer (the handler, or the chain of the event's method).
        self._middleware = Middlewares(self._handle, self._finish)
        self._inline_call: Any = ToolCall
        self._respond: CallNext = self._run

    # -- middleware -------------------------------------------------------------------------------
    @overload
    def middleware(self, fn: M, *, methods: Collection[str] | str | None = None) -> M: ...
    @overload
    def middleware(self, fn: None = None, *, methods: Collection[str] | str | None = None) -> Callable[[M], M]: ...

    def middleware(self, fn: M | None = None, *, methods: Collection[str] | str | None = None) -> Any:
        """Register ``async def fn(ctx, call_next)`` around every request the App answers
        (``@app.middleware``), or only around ``methods`` (``@app.middleware(methods={"tools/call"})``):
        see :meth:`add_middleware`. Returns ``fn``."""
        if fn is None:
            def register(later: M) -> M:
                self.add_middleware(later, methods=methods)
                return later

            return register
        self.add_middleware(fn, methods=methods)
        return fn

    def add_middleware(self, fn: Middleware, *, methods: Collection[str] | str | None = None) -> None:
        """Add ``async def fn(ctx, call_next) -> result`` to the chain (after those added
        before: the first added runs first) for ``methods`` (``None``: all of
        :data:`~mcpwire_adapters.app.middleware.WRAPPED_METHODS`). ``await call_next(ctx)``
        runs the rest of the chain and the handler; ``fn`` returns the result (or what a handler
        may return), raises to refuse, or answers without calling on. Wrapping a list makes the
        engine hand it to the App (``Server.hand_over_lists``); the result ``call_next`` gives
        then is the engine's page. docs/middleware.md. ``UsageError`` for a method no
        middleware can wrap, ``TypeError`` for a plain function."""
        chains = self._middleware
        chains.add(fn, methods)
        self._respond = chains.run
        self._inline_call = _NoEvent if "tools/call" in chains.chains else ToolCall
        self.server.hand_over_lists(chains.lists)

    # -- background work and tasks ----------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[App]:
        """The App's background task group, where tasks work after their request answered
        (:mod:`mcpwire_adapters.app.tasks`). Every driver enters it while it serves; leaving it
        cancels the work still running (a task then stays as it was: a durable store marks it
        failed when it opens next)."""
        async with anyio.create_task_group() as group:
            self._tasks.group = group
            group.start_soon(self.fanout.run)
            try:
                yield self
            finally:
                self._tasks.group = None
                group.cancel_scope.cancel()

    async def task_changed(self, changed: TaskChanged) -> None:
        """A driver hands in a :class:`~mcpwire.tasks.TaskChanged` after sending its reply: the
        task's handler runs again with the answers, or stops when the task was cancelled."""
        await self._tasks.task_changed(changed)

    # -- subscriptions --------------------------------------------------------------------------
    def forward_listen(self, stream: ListenStream[Any], buffer: int = 64) -> ListenForwarder:
        """Start ``stream`` (its acknowledgement is the first output) and register it, so that
        :meth:`notify_list_changed`, :meth:`notify_resource_updated` and :meth:`close_streams`
        deliver to it; :meth:`ListenForwarder.run` then writes it to the connection. Every
        driver forwards its listen streams this way. Call from the event loop's thread, before
        the first await after the engine admitted the stream, so that no event is missed."""
        return ListenForwarder(self._hub, stream, buffer)

    def open_stream(self, stream: ListenStream[Any], buffer: int = 64) -> MemoryObjectReceiveStream[Any]:
        """Register an open listen stream; output for it arrives on the returned anyio memory
        object stream, which ends (``anyio.EndOfStream``) when the app drops the stream. Call
        from the event loop's thread, before the first await after ``stream.start()``.
        (:meth:`forward_listen` does this and the forwarding; drivers use that.)"""
        return self._hub.open_stream(stream, buffer)

    def close_stream(self, stream: ListenStream[Any]) -> None:
        """Drop ``stream``: it is cancelled, and its channel ends without its listen result."""
        self._hub.close_stream(stream)

    def notify_list_changed(self, kind: str) -> None:
        """Tell open listen streams that the tools, prompts or resources list changed."""
        self.fanout.list_changed(kind)

    def notify_resource_updated(self, uri: str) -> None:
        self.fanout.resource_updated(uri)

    def close_streams(self) -> None:
        """Graceful end of every listen stream (at shutdown): each gets its listen result."""
        self._hub.close_streams()

    # -- dispatch ---------------------------------------------------------------------------------
    def dispatch(self, exchange: Exchange[Any], send: Send, scope: Cancellable | None = None) -> Coroutine[Any, Any, None]:
        """``await app.dispatch(exchange, send)``: run the handler for ``exchange.event`` and send
        its answer (a plain function returning that coroutine: no frame of its own). ``scope``:
        the cancel scope the caller awaits it in, when it has one (the HTTP drivers); an
        initialize-era session's exchange is then its session's work meanwhile (its DELETE or a
        ``notifications/cancelled`` naming it cancels ``scope``). Never raises
        for handler errors: they become error responses (a ProtocolError the handler raised keeps
        its code and message unless it is -32603; anything else, a LocalProtocolError included,
        is -32603 without detail, its cause logged and handed to ``on_error``, never sent). A call
        that may become a task (``ToolCall.task_allowed``) runs as :mod:`mcpwire_adapters.app.tasks` says."""
        if scope is not None:
            session = exchange.session
            if session is not None and session.id is not None:
                return self._dispatch_in_session(exchange, session.id, send, scope)
        event = exchange.event
        if isinstance(event, TaskResultWanted):
            return self._tasks.await_result(exchange, event, send)
        if getattr(event, "task_allowed", False):
            return self._tasks.dispatch(exchange, send)
        return self.answer(Context(self._hub, exchange, send))

    async def answer(self, ctx: Context) -> None:
        """Run the handler of ``ctx`` and send (or, for a task, record) its answer."""
        exchange = ctx.exchange
        event: Any = ctx.event  # a ToolCall when its type is _inline_call (no cast: a call per request)
        bug: BaseException | None = None
        try:
            if type(event) is self._inline_call:  # a tool call, as _run answers it, without its frame
                answer = await self._tools[event.name](ctx, event.arguments)
                if type(answer) is not CallToolResult:  # one is taken as it is (_tool_result's first rule)
                    answer = self._tool_result(event.name, answer)
            else:
                answer = await self._respond(ctx)
            while isinstance(answer, NeedInput) and exchange.session is not None:
                # Initialize era: the same NeedInput goes to the client as server-to-client
                # requests, and the handler runs again with their answers (a tool is written once).
                # A 2025-11-25 task's requests go out on a stream of its session (tasks.py).
                out = exchange.input_required(answer.requests, state=answer.state, now=_clock(exchange))
                if not exchange.awaiting_input:
                    break  # refused (a capability the client lacks): out is the error
                answer = await self._await_input(ctx, out)
            if isinstance(answer, _Failed):
                out = answer.output
            elif isinstance(answer, NeedInput):
                if exchange.session is None:
                    # A task parks on the requests until tasks/update answers them (now: when).
                    out = exchange.input_required(
                        answer.requests, state=answer.state, ttl_seconds=answer.ttl_seconds, now=_clock(exchange),
                    )
            else:
                out = exchange.complete(answer, now=_clock(exchange))
        except mcpwire.LocalProtocolError as exc:
            # The API misused (an answer of the wrong type, say): a bug in the host like any
            # other, answered -32603 whatever code it carries, and reported as itself.
            bug = exc
            out = exchange.fail(_INTERNAL_ERROR, now=_clock(exchange))
        except mcpwire.ProtocolError as exc:
            out = exchange.fail(exc, now=_clock(exchange))
        except anyio.get_cancelled_exc_class():
            exchange.cancel()
            raise
        except ToolError as exc:  # the tool's own answer: a tool execution error, not a failure
            if type(ctx.event) is ToolCall:
                out = self._tool_failed(exchange, exc, exc.message)
            else:
                out = exchange.fail(exc, now=_clock(exchange))
        except Exception as exc:  # a handler bug: isError for a tool, else -32603; the server stays up
            if type(ctx.event) is ToolCall and exchange.task_id is None:
                # Not a task: a task's work that fails fails the task (-32603, status failed).
                name = ctx.event.name
                text = (str(exc) or type(exc).__name__) if self.tool_error_details else f"Tool {name!r} failed"
                out = self._tool_failed(exchange, exc, text)
                if exchange.internal_error is None:  # else it failed -32603 after all: reported below
                    self._report(exchange, exc, name)
            else:
                out = exchange.fail(exc, now=_clock(exchange))
        cause = bug if bug is not None else exchange.internal_error
        if cause is not None:
            self._report(exchange, cause)
        if out:
            await ctx.send_outputs(out)

    def _tool_failed(self, exchange: Exchange[Any], exc: Exception, text: str) -> Any:
        """The output of a tool call answered with a tool execution error (``isError``)."""
        try:
            return exchange.complete(CallToolResult(content=[TextContent(text=text)], is_error=True), now=_clock(exchange))
        except mcpwire.ProtocolError:  # the exchange cannot complete now (it waits for input): fail it
            return exchange.fail(exc, now=_clock(exchange))

    async def _await_input(self, ctx: Context, out: Any) -> Any:
        """Send the server-to-client requests, wait for every answer (at most
        :attr:`input_timeout` seconds), and run the handler again on them. Returns the
        handler's next answer, or a :class:`_Failed` carrying the failure output."""
        exchange = ctx.exchange
        waiter = self._waiters[id(exchange)] = anyio.Event()
        try:
            if exchange.task_id is not None:
                self._tasks.asked(exchange)  # a 2025-11-25 task's requests: on a stream of its session
            else:
                await ctx.send_outputs(out)
            with anyio.move_on_after(self.input_timeout) as waited:
                await waiter.wait()
        finally:
            self._waiters.pop(id(exchange), None)
        if waited.cancelled_caught:
            return _Failed(exchange.input_timed_out(self.input_timeout, now=_clock(exchange)))
        try:
            ctx.event = exchange.resume(now=_clock(exchange))
        except mcpwire.ProtocolError as exc:
            return _Failed(exchange.fail(exc, now=_clock(exchange)))
        if exchange.task_id is not None:
            self._tasks.answered(exchange.task_id)  # working again
        return await self._respond(ctx)

    def input_arrived(self, arrived: InputArrived) -> None:
        """A driver hands in what the engine returned for a client's answer: the exchange
        waiting for it runs its handler again once every answer is in. Call from the event
        loop's thread."""
        if arrived.exchange is None and arrived.session_id is not None:
            self.fanout.answer_elsewhere(arrived.session_id, arrived.answer)  # another process asked
        elif arrived.ready:
            waiter = self._waiters.get(id(arrived.exchange))
            if waiter is not None:
                waiter.set()

    def session_closed(self, closed: SessionClosed) -> None:
        """A driver hands in an ended session (DELETE): :meth:`session_ended` here, and the
        other processes of the server are told (the broker), where it ends too. Call from the
        event loop's thread."""
        self.session_ended(closed)
        self.fanout.session_closed(closed.session_id)

    def session_ended(self, closed: SessionClosed) -> None:
        """An ended session's streams and work in this process end: its running requests are
        cancelled (their response streams end), its GET stream and the GET streams resuming
        its requests' streams are dropped."""
        for scope in self._session_work.pop(closed.session_id, {}).values():
            scope.cancel()
        if closed.stream is not None:
            self.close_stream(closed.stream)
        self._hub.close_resumers(closed.session_id)

    def request_cancelled(self, cancelled: mcpwire.Cancelled) -> None:
        """A driver hands in a ``notifications/cancelled`` posted on a session: that request's
        work is cancelled (it sends no response); an unknown or finished one is ignored."""
        if cancelled.session_id is None:
            return
        scope = self._session_work.get(cancelled.session_id, {}).get(_key(cancelled.request_id))
        if scope is not None:
            scope.cancel()

    async def run_batch(
        self,
        batch: HttpBatch,
        emit: Send,
        watch: Callable[[Callable[[], None]], Coroutine[Any, Any, None]],
    ) -> bool:
        """Answer a 2025-03-26 session's JSON-RPC batch (``HttpBatch``) on one response, as
        :func:`mcpwire_adapters.app.batch.run_batch` says. Returns True when the client went away."""
        return await run_batch(self, batch, emit, watch)

    def _report(self, exchange: Exchange[Any], error: BaseException, failed_tool: str | None = None) -> None:
        hint = _loop_hint(error)
        if failed_tool is not None:
            _log.error("tool %r failed: request %r answered isError%s", failed_tool, exchange.request_id, hint,
                       exc_info=error)
        else:
            _log.error("request %r answered -32603 Internal error%s", exchange.request_id, hint, exc_info=error)
        if self.on_error is None:
            return
        try:
            self.on_error(exchange, error)
        except Exception:  # noqa: BLE001 - the host's hook must not take the server down
            _log.exception("on_error raised while reporting request %r", exchange.request_id)

    async def run_exchange(
        self, exchange: Exchange[Any], emit: Send, watch: Callable[[Callable[[], None]], Coroutine[Any, Any, None]],
    ) -> bool:
        """Drive ``exchange`` on a connection: the handler runs while ``watch(gone)`` watches the
        connection, and a client that goes away (``watch`` calls ``gone``, or ``emit`` raises
        :class:`PeerGone`) cancels both the handler and the exchange (on HTTP a disconnect is
        the cancellation: <https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/cancellation>).
        Returns True when the client went away."""
        async with anyio.create_task_group() as tasks:

            def arm(gone: Callable[[], None] | None) -> None:
                if gone is not None:
                    tasks.start_soon(watch, gone)

            peer_gone = await self.run_exchange_armed(exchange, emit, arm)
            tasks.cancel_scope.cancel()
        return peer_gone

    async def run_exchange_armed(
        self, exchange: Exchange[Any], emit: Send, arm: Callable[[Callable[[], None] | None], None],
        scope: CancelScopeLike | None = None,
    ) -> bool:
        """:meth:`run_exchange` for a driver that already reads the connection (no watcher task
        per request): ``arm(gone)`` is called once before the handler starts, and the driver
        calls ``gone()`` (from its own reader, or at once when the client already left) when
        the client goes away; ``arm(None)`` when the exchange is over, after which ``gone``
        must no longer be called. Same contract otherwise: ``gone()`` or :class:`PeerGone`
        from ``emit`` cancels the handler and the exchange. Returns True when the client went
        away. ``scope``: the handler's cancel scope (default a new ``anyio.CancelScope``), or its
        loop's own, cheaper one (a ``trio.CancelScope``; on asyncio, one on ``Task.cancel``)."""
        scope = anyio.CancelScope() if scope is None else scope
        run = ExchangeRun(exchange, emit, scope)
        with scope:
            try:
                arm(run.gone)
                await self.dispatch(exchange, run.send, scope)
            finally:
                arm(None)
        return run.peer_gone

    async def _dispatch_in_session(self, exchange: Exchange[Any], session_id: str, answers: Send, scope: Cancellable) -> None:
        key = _key(exchange.request_id)
        self._session_work.setdefault(session_id, {})[key] = scope
        try:
            await self.dispatch(exchange, answers)
        finally:
            work = self._session_work.get(session_id, {})
            if work.get(key) is scope:
                del work[key]
                if not work:
                    del self._session_work[session_id]

    def _tool_result(self, name: str, answer: Any) -> Any:
        """A tool handler's answer as what the exchange takes (:mod:`.results`): a str (one text
        block, which the core builds), a CallToolResult or a NeedInput as it is; anything else
        through the tool's converter, chosen at registration (an instance of the tool's output
        type becomes a CallToolResult with that value as ``structuredContent`` and its JSON text
        in one text block: the specification's advice)."""
        if isinstance(answer, (str, CallToolResult, NeedInput)):
            return answer
        converter = self._results.get(name)
        if converter is None:  # the tool was removed while it ran
            converter = tool_converter(name)
        return converter(answer)

    async def _handle(self, ctx: Context) -> Any:
        """The handler, as the innermost step of a middleware chain: its answer as a result (a
        tool's str as its CallToolResult, so a middleware sees one type per method)."""
        answer = await self._run(ctx)
        if type(answer) is str and type(ctx.event) is ToolCall:
            return CallToolResult(content=[TextContent(text=answer)])
        return answer

    def _finish(self, ctx: Context, answer: Any) -> Any:
        """What a middleware chain returned, converted as a handler's answer is."""
        event = ctx.event
        if type(event) is ToolCall:
            return self._tool_result(event.name, answer)
        if type(event) is ResourceRead:
            declared = event.resource if event.resource is not None else event.template
            return resource_result(event.uri, answer, UNSET if declared is None else declared.mime_type)
        if type(event) is PromptGet:
            return prompt_result(event.name, answer, self._prompt_descriptions.get(event.name))
        return answer

    async def _run(self, ctx: Context) -> Any:
        event = ctx.event
        if isinstance(event, ToolCall):
            return self._tool_result(event.name, await self._tools[event.name](ctx, event.arguments))
        if isinstance(event, ResourceRead):
            if event.uri in self._resources:
                declared = self._resource_defs[event.uri].mime_type
                return resource_result(event.uri, await self._resources[event.uri](ctx), declared)
            if event.template is not None and event.template.uri_template in self._templates:
                handler = self._templates[event.template.uri_template]
                return resource_result(event.uri, await handler(ctx, **event.variables), event.template.mime_type)
            raise resource_not_found(event.uri)
        if isinstance(event, PromptGet):
            answer = await self._prompts[event.name](ctx, event.arguments)
            return prompt_result(event.name, answer, self._prompt_descriptions.get(event.name))
        if isinstance(event, CompletionRequest):
            if self._completion is None:
                return CompleteResult(completion=mcpwire.types.Completion(values=[]))
            answer = await self._completion(ctx)
            if isinstance(answer, list):
                return CompleteResult(completion=mcpwire.types.Completion(values=answer, total=len(answer), has_more=False))
            return answer
        if isinstance(event, ListRequest):  # handed to the App for its middleware: the engine's page
            return event.page
        raise mcpwire.LocalProtocolError(f"No handler for {type(event).__name__}")


class _Failed:
    """The output of a request that failed while it waited for the client's input."""

    __slots__ = ("output",)

    def __init__(self, output: Any) -> None:
        self.output = output


def _clock(exchange: Exchange[Any]) -> float | None:
    """The time a task's outcome is recorded at; ``None`` (no clock read) for the ordinary
    answer of a request, which needs none."""
    return time.time() if exchange.state is _TASK else None


def _key(request_id: Any) -> tuple[type, Any]:
    # 1 and "1" are different request ids.
    return (type(request_id), request_id)
