"""An application: handler functions bound to a sans-IO :class:`mcpwire.Server`.

This is adapter code: it calls host functions, which the core never does. Every transport
driver (trio/h11 HTTP, stdio, ASGI) feeds requests to ``app.server`` and hands each resulting
exchange to :meth:`App.dispatch` with a ``send`` coroutine that writes output events.

The layer is event-loop agnostic: it uses anyio for worker threads, listen-stream queues and
cancellation, so the same App runs under the trio drivers and under any ASGI server (uvicorn,
hypercorn; asyncio or trio).

Handlers may be ``async def`` (run in the driver's task; they may ``await ctx.progress`` and
``await ctx.log``) or plain functions (run in a worker thread so they cannot stall the loop).
A handler returns its result, a :class:`NeedInput` to ask the client for input (multi
round-trip requests), or raises a :class:`mcpwire.ProtocolError` to answer with that error. A
tool handler's result is a ``CallToolResult``, a ``str`` (one text block) or an instance of the
tool's ``output_type`` (structured output).

Any other exception, a -32603 ProtocolError, a :class:`mcpwire.LocalProtocolError` (the API
misused: an answer of the wrong type, say) or an answer the engine cannot send is answered
-32603 ``Internal error`` with nothing of the cause on the wire; the exception goes to the
``mcpwire_adapters.app`` logger and to the ``on_error`` callback.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import secrets
import time
import typing
import warnings
from types import MappingProxyType
from collections.abc import AsyncIterator
from typing import Any, Callable, Coroutine, Final, Mapping, TypeVar

import anyio
import anyio.to_thread
import msgspec
from anyio.streams.memory import MemoryObjectReceiveStream
from msgspec import UNSET

import mcpwire
from mcpwire.types import CallToolResult, CompleteResult, Implementation, Prompt, PromptArgument, ReadResourceResult, Resource, ResourceTemplate, TextContent, TextResourceContents, BlobResourceContents, Tool
from mcpwire import CompletionRequest, Exchange, ListenStream, PromptGet, ResourceRead, ResponseBody, Server, ToolCall, resource_not_found
from mcpwire import InputArrived, SessionClosed
from mcpwire.sessions import HttpBatch
from mcpwire.tasks import MemoryTaskStore, TaskChanged, TaskResultWanted, Tasks, TaskStore, TaskSupport

from ..callbacks import as_async
from .need_input import NeedInput
from .context import Cancellable, CancelScopeLike, Context, ExchangeRun, PeerGone, Send
from ..state.broker import Broker
from .fanout import Fanout
from .forwarder import ListenForwarder
from .hub import Hub
from .tasks import TaskRunner

__all__ = ["App", "Context", "ListenForwarder", "NeedInput", "PeerGone", "Send", "OnError"]

_log = logging.getLogger("mcpwire_adapters.app")

OnError = Callable[[Exchange[Any], BaseException], None]
"""``on_error(exchange, exc)``: called with the exception behind each -32603 answer."""
F = TypeVar("F", bound=Callable[..., Any])

_INTERNAL_ERROR = mcpwire.ProtocolError("Internal error", code=mcpwire.ErrorCode.INTERNAL_ERROR)
_TASK: Final = mcpwire.ExchangeState.TASK  # a module constant: an Enum member read through its class costs a call


class App:
    """Declare tools, resources, templates and prompts with decorators; serve with a driver.

    ``on_error(exchange, exc)``, if given, is called (in the event loop's thread, before the
    answer is sent; it must not block) with the exception behind every -32603 answer: a
    handler's exception, a -32603 ProtocolError, or a result the engine refused. Such
    exceptions are also logged to ``mcpwire_adapters.app``. Other ProtocolErrors are answers,
    not failures, and are neither logged nor reported. ``broker``: the other processes (``fanout.py``).
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
        self.server = Server(
            Implementation(name=name, version=version), keyring=keyring,
            validator=validator if not isinstance(validator, str) else None, **server_options,
        )
        self._tools: dict[str, Callable[..., Any]] = {}
        self._output_types: dict[str, type[Any]] = {}
        self._resources: dict[str, Callable[..., Any]] = {}
        self._templates: dict[str, Callable[..., Any]] = {}
        self._prompts: dict[str, Callable[..., Any]] = {}
        self._completion: Callable[..., Any] | None = None
        self.on_error = on_error
        self.input_timeout = input_timeout
        """Seconds an initialize-era request waits for the client's answers to its
        server-to-client requests before it fails with -32603."""
        self._waiters: dict[int, anyio.Event] = {}
        # The running requests of each session, by request id: DELETE cancels them all, a posted
        # notifications/cancelled one.
        self._session_work: dict[str, dict[tuple[type, Any], Cancellable]] = {}
        # What was declared, for the read-only views (tools, resources, ...).
        self._tool_defs: dict[str, Tool] = {}
        self._resource_defs: dict[str, Resource] = {}
        self._template_defs: dict[str, ResourceTemplate] = {}
        self._prompt_defs: dict[str, Prompt] = {}
        # What the parts (contexts, fan-out, forwarders, tasks) share: they get the hub, not the App.
        self._hub = hub = Hub(self, self.server)
        # The runner on the App too: dispatch reads it per request, in one attribute read.
        self._tasks = hub.tasks = TaskRunner(hub)
        self.fanout = hub.fanout = Fanout(hub, broker)  # changes: to this process's streams, then the broker's

    # -- what is registered -----------------------------------------------------------------------
    @property
    def tools(self) -> Mapping[str, Tool]:
        """The registered tools by name, as declared to the server (derived schemas filled in).
        A read-only view that follows later registrations and removals."""
        return MappingProxyType(self._tool_defs)

    @property
    def resources(self) -> Mapping[str, Resource]:
        """The registered resources by URI (read-only view)."""
        return MappingProxyType(self._resource_defs)

    @property
    def resource_templates(self) -> Mapping[str, ResourceTemplate]:
        """The registered resource templates by URI template (read-only view)."""
        return MappingProxyType(self._template_defs)

    @property
    def prompts(self) -> Mapping[str, Prompt]:
        """The registered prompts by name (read-only view)."""
        return MappingProxyType(self._prompt_defs)

    # -- declaration ----------------------------------------------------------------------------
    def tool(
        self,
        name: str | None = None,
        *,
        description: str,
        input_schema: dict[str, Any] | None = None,
        arguments_type: type[msgspec.Struct] | None = None,
        output_schema: dict[str, Any] | None = None,
        output_type: type[Any] | None = None,
        arguments: type[msgspec.Struct] | None = None,
        task_support: TaskSupport = "forbidden",
        **fields: Any,
    ) -> Callable[[F], F]:
        """Register ``handler(ctx, arguments)`` as a tool.

        The listed inputSchema is ``input_schema``, or derived from the ``arguments_type``
        Struct (which the arguments are then decoded into), or ``{"type": "object"}``. The
        listed outputSchema is ``output_schema``, or derived from ``output_type``; both
        derivations are the core's :meth:`mcpwire.Server.tool_schema` (the object at the top,
        ``"type": "object"``, with ``$defs`` beside it when needed). The names are those of
        :meth:`mcpwire.Server.add_tool`; ``arguments=`` is the deprecated old name of
        ``arguments_type=`` (a DeprecationWarning). ``task_support`` (``App(tasks=...)``):
        the handler may turn a call into a task with ``await ctx.start_task()``
        (:mod:`mcpwire_adapters.app.tasks`)."""
        if arguments is not None:
            if arguments_type is not None:
                raise TypeError("App.tool: pass arguments_type= only (arguments= is its deprecated old name)")
            warnings.warn(
                "App.tool(arguments=...) is deprecated; use arguments_type=..., as Server.add_tool does",
                DeprecationWarning, stacklevel=2,
            )
            arguments_type = arguments

        def register(handler: F) -> F:
            tool_name = name or handler.__name__
            schema = input_schema
            if schema is None:
                schema = Server.tool_schema(arguments_type) if arguments_type is not None else {"type": "object"}
            out_schema: Any = output_schema
            if out_schema is None and output_type is not None:
                # The core's derivation, as for the inputSchema: the object at the top
                # ("type": "object"), not msgspec's top-level "$ref".
                out_schema = Server.tool_schema(output_type)
            tool = Tool(
                name=tool_name, description=description, input_schema=schema,
                output_schema=UNSET if out_schema is None else out_schema, **fields,
            )
            self.server.add_tool(tool, arguments_type=arguments_type, output_type=output_type, task_support=task_support)
            self._tools[tool_name] = as_async(handler)
            self._tool_defs[tool_name] = tool
            if output_type is not None:
                self._output_types[tool_name] = output_type
            else:
                self._output_types.pop(tool_name, None)
            return handler

        return register

    def remove_tool(self, name: str) -> None:
        self.server.remove_tool(name)
        del self._tools[name]
        del self._tool_defs[name]
        self._output_types.pop(name, None)

    def resource(self, uri: str, *, name: str, **fields: Any) -> Callable[[F], F]:
        """Register ``handler(ctx)`` for one listed resource. It may return a ReadResourceResult,
        a str (text contents) or bytes (blob contents)."""

        def register(handler: F) -> F:
            resource = Resource(uri=uri, name=name, **fields)
            self.server.add_resource(resource)
            self._resources[uri] = as_async(handler)
            self._resource_defs[uri] = resource
            return handler

        return register

    def resource_template(self, uri_template: str, *, name: str, **fields: Any) -> Callable[[F], F]:
        """Register ``handler(ctx, **variables)`` for URIs matching an RFC 6570 template."""

        def register(handler: F) -> F:
            template = ResourceTemplate(uri_template=uri_template, name=name, **fields)
            self.server.add_template(template)
            self._templates[uri_template] = as_async(handler)
            self._template_defs[uri_template] = template
            return handler

        return register

    def prompt(
        self, name: str | None = None, *, description: str, arguments: list[PromptArgument] | None = None, **fields: Any
    ) -> Callable[[F], F]:
        """Register ``handler(ctx, arguments)`` as a prompt; it returns a GetPromptResult."""

        def register(handler: F) -> F:
            prompt_name = name or handler.__name__
            prompt = Prompt(name=prompt_name, description=description, arguments=arguments or UNSET, **fields)
            self.server.add_prompt(prompt)
            self._prompts[prompt_name] = as_async(handler)
            self._prompt_defs[prompt_name] = prompt
            return handler

        return register

    def completion(self, handler: F) -> F:
        """Register ``handler(ctx)`` answering completion/complete with a list of values or a
        CompleteResult."""
        self._completion = as_async(handler)
        return handler

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
        event = ctx.event
        bug: BaseException | None = None
        try:
            if type(event) is ToolCall:  # the common event, as _run answers it, without its frame
                answer = await self._tools[event.name](ctx, event.arguments)
                if type(answer) is not CallToolResult:  # one is taken as it is (_tool_result's first rule)
                    answer = self._tool_result(event.name, answer)
            else:
                answer = await self._run(ctx)
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
        except Exception as exc:  # a handler bug answers -32603 and keeps the server up
            out = exchange.fail(exc, now=_clock(exchange))
        cause = bug if bug is not None else exchange.internal_error
        if cause is not None:
            self._report(exchange, cause)
        if out:
            await ctx.send_outputs(out)

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
        return await self._run(ctx)

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
        """A driver hands in an ended session (DELETE): its running requests are cancelled and
        its GET stream dropped. Call from the event loop's thread."""
        for scope in self._session_work.pop(closed.session_id, {}).values():
            scope.cancel()
        if closed.stream is not None:
            self.close_stream(closed.stream)

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
        """Answer a JSON-RPC batch of a 2025-03-26 session on one response (``HttpBatch``):
        its answers and cancellations are handed in, its requests run concurrently, and every
        message each sends goes on one event stream, which ends when the last is answered
        (202 when the batch holds no request). ``watch`` watches the connection once for all of
        them. Returns True when the client went away."""
        for answer in batch.answers:
            if isinstance(answer, InputArrived):
                self.input_arrived(answer)
            elif isinstance(answer, mcpwire.Cancelled):
                self.request_cancelled(answer)
        if not batch.has_requests:
            await emit(batch.no_requests)
            return False
        lock = anyio.Lock()
        peer_gone = False

        async def send(outputs: Any) -> None:
            frames = batch.frames(outputs)
            if frames:
                async with lock:
                    await emit(frames)

        async def unwatched(gone: Callable[[], None]) -> None:
            await anyio.sleep_forever()

        async with anyio.create_task_group() as tasks:

            def gone() -> None:
                nonlocal peer_gone
                peer_gone = True
                for answer in batch.answers:
                    if isinstance(answer, mcpwire.HttpExchange):
                        answer.cancel()
                tasks.cancel_scope.cancel()

            async def run(exchange: mcpwire.HttpExchange) -> None:
                nonlocal peer_gone
                peer_gone |= await self.run_exchange(exchange, send, unwatched)

            await emit([batch.head()])
            watcher = anyio.CancelScope()

            async def watching() -> None:
                with watcher:
                    await watch(gone)

            tasks.start_soon(watching)
            async with anyio.create_task_group() as work:
                for answer in batch.answers:
                    if isinstance(answer, mcpwire.HttpExchange):
                        work.start_soon(run, answer)
                    elif isinstance(answer, tuple):
                        await send(answer)
            watcher.cancel()
        if not peer_gone:
            await emit([ResponseBody(data=b"", more=False)])
        return peer_gone

    def _report(self, exchange: Exchange[Any], error: BaseException) -> None:
        _log.error("request %r answered -32603 Internal error", exchange.request_id, exc_info=error)
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
        """A tool handler's answer as what the exchange takes: an instance of the tool's
        ``output_type`` becomes a CallToolResult with that value as ``structuredContent`` and its
        JSON text in one text block (the specification: a tool returning structured content
        SHOULD also return it serialized in a TextContent block)."""
        if isinstance(answer, (CallToolResult, NeedInput)):
            return answer
        output_type = self._output_types.get(name)
        if output_type is not None and _is_instance(answer, output_type):
            structured = msgspec.to_builtins(answer)
            text = msgspec.json.encode(structured).decode()
            return CallToolResult(content=[TextContent(text=text)], structured_content=structured)
        if isinstance(answer, str):
            return answer  # shorthand for one text block (the core builds it)
        expected = "a CallToolResult, a str, a NeedInput"
        if output_type is not None:
            expected += f" or an instance of its output_type {getattr(output_type, '__name__', output_type)!s}"
        raise mcpwire.LocalProtocolError(f"Tool {name!r} answered with {type(answer).__name__}; expected {expected}")

    async def _run(self, ctx: Context) -> Any:
        event = ctx.event
        if isinstance(event, ToolCall):
            return self._tool_result(event.name, await self._tools[event.name](ctx, event.arguments))
        if isinstance(event, ResourceRead):
            if event.uri in self._resources:
                return _contents(event.uri, await self._resources[event.uri](ctx))
            if event.template is not None and event.template.uri_template in self._templates:
                handler = self._templates[event.template.uri_template]
                return _contents(event.uri, await handler(ctx, **event.variables))
            raise resource_not_found(event.uri)
        if isinstance(event, PromptGet):
            return await self._prompts[event.name](ctx, event.arguments)
        if isinstance(event, CompletionRequest):
            if self._completion is None:
                return CompleteResult(completion=mcpwire.types.Completion(values=[]))
            answer = await self._completion(ctx)
            if isinstance(answer, list):
                return CompleteResult(completion=mcpwire.types.Completion(values=answer, total=len(answer), has_more=False))
            return answer
        raise mcpwire.LocalProtocolError(f"No handler for {type(event).__name__}")


class _Failed:
    """The output of a request that failed while it waited for the client's input."""

    __slots__ = ("output",)

    def __init__(self, output: Any) -> None:
        self.output = output


def _is_instance(value: Any, declared: type[Any]) -> bool:
    """``isinstance`` for a declared output type, generic aliases included (``dict[str, int]``
    checks ``dict``; the core's output check then checks the rest)."""
    for candidate in (declared, typing.get_origin(declared)):
        if candidate is None:
            continue
        try:
            return isinstance(value, candidate)
        except TypeError:  # not a runtime-checkable type (a TypedDict, a Literal...)
            continue
    return False


def _clock(exchange: Exchange[Any]) -> float | None:
    """The time a task's outcome is recorded at; ``None`` (no clock read) for the ordinary
    answer of a request, which needs none."""
    return time.time() if exchange.state is _TASK else None


def _contents(uri: str, answer: Any) -> Any:
    if isinstance(answer, str):
        return ReadResourceResult(contents=[TextResourceContents(uri=uri, text=answer)])
    if isinstance(answer, bytes):
        import base64

        return ReadResourceResult(contents=[BlobResourceContents(uri=uri, blob=base64.b64encode(answer).decode())])
    return answer


def _key(request_id: Any) -> tuple[type, Any]:
    # 1 and "1" are different request ids.
    return (type(request_id), request_id)
