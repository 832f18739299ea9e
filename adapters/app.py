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
round-trip requests), or raises a :class:`mcpwire.ProtocolError` to answer with that error.
"""

from __future__ import annotations

import inspect
import os
from typing import Any, Awaitable, Callable, Coroutine, Mapping, TypeVar

import anyio
import anyio.lowlevel
import anyio.to_thread
import msgspec
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from msgspec import UNSET

import mcpwire
from mcpwire.types import CallToolResult, CompleteResult, GetPromptResult, Implementation, Prompt, PromptArgument, ReadResourceResult, Resource, ResourceTemplate, TextContent, TextResourceContents, BlobResourceContents, Tool
from mcpwire import CompletionRequest, Exchange, ListenStream, PromptGet, ResourceRead, Server, ToolCall, resource_not_found

__all__ = ["App", "Context", "NeedInput", "PeerGone", "Send"]

Send = Callable[[Any], Awaitable[None]]
F = TypeVar("F", bound=Callable[..., Any])


class PeerGone(Exception):
    """Raised by a driver's ``emit`` when the client went away (closed, reset, stopped reading)."""


class NeedInput(msgspec.Struct, frozen=True, kw_only=True):
    """A handler's answer asking the client for input (``resultType: "input_required"``)."""

    requests: Mapping[str, Any] | None = None
    state: Any = UNSET
    ttl_seconds: float | None = None


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
    def input_responses(self) -> dict[str, dict[str, Any]]:
        return getattr(self.event, "input_responses", None) or {}

    @property
    def state(self) -> Any:
        return getattr(self.event, "state", UNSET)

    async def progress(self, progress: float, *, total: float | None = None, message: str | None = None) -> None:
        out = self.exchange.progress(progress, total=total, message=message)
        if out:
            await self._send(out)

    async def log(self, level: str, data: Any, *, logger: str | None = None) -> None:
        out = self.exchange.log(level, data, logger=logger)
        if out:
            await self._send(out)


class App:
    """Declare tools, resources, templates and prompts with decorators; serve with a driver."""

    def __init__(
        self,
        name: str,
        version: str,
        *,
        keyring: mcpwire.Keyring | None = None,
        validator: mcpwire.ValidatorFactory | None | str = "default",
        **server_options: Any,
    ) -> None:
        if keyring is None:
            # Randomness belongs to the adapter; several processes must share an explicit keyring.
            keyring = mcpwire.Keyring.single(os.urandom(32))
        if validator == "default":
            validator = mcpwire.jsonschema_validator()
        server_options.setdefault("list_changed", True)  # the App sends them: notify_list_changed
        self.server = Server(
            Implementation(name=name, version=version), keyring=keyring,
            validator=validator if not isinstance(validator, str) else None, **server_options,
        )
        self._tools: dict[str, Callable[..., Any]] = {}
        self._resources: dict[str, Callable[..., Any]] = {}
        self._templates: dict[str, Callable[..., Any]] = {}
        self._prompts: dict[str, Callable[..., Any]] = {}
        self._completion: Callable[..., Any] | None = None
        self._streams: dict[int, MemoryObjectSendStream[Any]] = {}

    # -- declaration ----------------------------------------------------------------------------
    def tool(
        self,
        name: str | None = None,
        *,
        description: str,
        input_schema: dict[str, Any] | None = None,
        arguments: type[msgspec.Struct] | None = None,
        output_schema: dict[str, Any] | None = None,
        output_type: type[Any] | None = None,
        **fields: Any,
    ) -> Callable[[F], F]:
        """Register ``handler(ctx, arguments)`` as a tool."""

        def register(handler: F) -> F:
            tool_name = name or handler.__name__
            schema = input_schema
            if schema is None:
                schema = Server.tool_schema(arguments) if arguments is not None else {"type": "object"}
            out_schema: Any = output_schema
            if out_schema is None and output_type is not None:
                out_schema = Server.tool_schema(output_type)
            tool = Tool(
                name=tool_name, description=description, input_schema=schema,
                output_schema=UNSET if out_schema is None else out_schema, **fields,
            )
            self.server.add_tool(tool, arguments_type=arguments, output_type=output_type)
            self._tools[tool_name] = handler
            return handler

        return register

    def remove_tool(self, name: str) -> None:
        self.server.remove_tool(name)
        del self._tools[name]

    def resource(self, uri: str, *, name: str, **fields: Any) -> Callable[[F], F]:
        """Register ``handler(ctx)`` for one listed resource. It may return a ReadResourceResult,
        a str (text contents) or bytes (blob contents)."""

        def register(handler: F) -> F:
            self.server.add_resource(Resource(uri=uri, name=name, **fields))
            self._resources[uri] = handler
            return handler

        return register

    def resource_template(self, uri_template: str, *, name: str, **fields: Any) -> Callable[[F], F]:
        """Register ``handler(ctx, **variables)`` for URIs matching an RFC 6570 template."""

        def register(handler: F) -> F:
            self.server.add_template(ResourceTemplate(uri_template=uri_template, name=name, **fields))
            self._templates[uri_template] = handler
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
            self._prompts[prompt_name] = handler
            return handler

        return register

    def completion(self, handler: F) -> F:
        """Register ``handler(ctx)`` answering completion/complete with a list of values or a
        CompleteResult."""
        self._completion = handler
        return handler

    # -- subscriptions --------------------------------------------------------------------------
    def open_stream(self, stream: ListenStream[Any], buffer: int = 64) -> MemoryObjectReceiveStream[Any]:
        """Register an open listen stream; output for it arrives on the returned anyio memory
        object stream, which ends (``anyio.EndOfStream``) when the app drops the stream. Call
        from the event loop's thread, before the first await after ``stream.start()``."""
        send, receive = anyio.create_memory_object_stream[Any](buffer)
        self._streams[id(stream)] = send
        return receive

    def close_stream(self, stream: ListenStream[Any]) -> None:
        stream.cancel()
        channel = self._streams.pop(id(stream), None)
        if channel is not None:
            channel.close()

    def _deliver(self, deliveries: list[tuple[ListenStream[Any], Any]]) -> None:
        for stream, output in deliveries:
            channel = self._streams.get(id(stream))
            if channel is None or not output:
                continue
            try:
                channel.send_nowait(output)
            except (anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
                # A consumer this far behind is dropped rather than buffered without bound (or
                # it is already gone: its receiving end closed before close_stream ran).
                self.close_stream(stream)

    def notify_list_changed(self, kind: str) -> None:
        """Tell open listen streams that the tools, prompts or resources list changed."""
        self._deliver(self.server.list_changed(kind))  # type: ignore[arg-type]

    def notify_resource_updated(self, uri: str) -> None:
        self._deliver(self.server.resource_updated(uri))

    def close_streams(self) -> None:
        """Graceful end of every listen stream (at shutdown)."""
        self._deliver(self.server.close_listeners())
        for channel in self._streams.values():
            channel.close()
        self._streams.clear()

    # -- dispatch ---------------------------------------------------------------------------------
    async def dispatch(self, exchange: Exchange[Any], send: Send) -> None:
        """Run the handler for ``exchange.event`` and send its answer. Never raises for handler
        errors: they become error responses (-32603 unless a ProtocolError)."""
        ctx = Context(self, exchange, send)
        try:
            answer = await self._run(ctx)
            if isinstance(answer, NeedInput):
                out = exchange.input_required(answer.requests, state=answer.state, ttl_seconds=answer.ttl_seconds)
            else:
                out = exchange.complete(answer)
        except mcpwire.ProtocolError as exc:
            out = exchange.fail(exc)
        except anyio.get_cancelled_exc_class():
            exchange.cancel()
            raise
        except Exception as exc:  # a handler bug answers -32603 and keeps the server up
            out = exchange.fail(exc)
        if out:
            await send(out)

    async def run_exchange(
        self,
        exchange: Exchange[Any],
        emit: Send,
        watch: Callable[[Callable[[], None]], Coroutine[Any, Any, None]],
    ) -> bool:
        """Drive ``exchange`` on a connection: the handler runs while ``watch(gone)`` watches the
        connection, and a client that goes away (``watch`` calls ``gone``, or ``emit`` raises
        :class:`PeerGone`) cancels both the handler and the exchange (HTTP cancellation, wire
        reference section 9). Returns True when the client went away."""
        peer_gone = False
        async with anyio.create_task_group() as tasks:

            def gone() -> None:
                nonlocal peer_gone
                peer_gone = True
                exchange.cancel()
                tasks.cancel_scope.cancel()

            async def send(outputs: Any) -> None:
                try:
                    await emit(outputs)
                except PeerGone:
                    gone()
                    await anyio.lowlevel.checkpoint()  # delivers the cancellation to the handler

            tasks.start_soon(watch, gone)
            await self.dispatch(exchange, send)
            tasks.cancel_scope.cancel()
        return peer_gone

    async def _run(self, ctx: Context) -> Any:
        event = ctx.event
        if isinstance(event, ToolCall):
            return await _call(self._tools[event.name], ctx, event.arguments)
        if isinstance(event, ResourceRead):
            if event.uri in self._resources:
                return _contents(event.uri, await _call(self._resources[event.uri], ctx))
            if event.template is not None and event.template.uri_template in self._templates:
                handler = self._templates[event.template.uri_template]
                return _contents(event.uri, await _call(handler, ctx, **event.variables))
            raise resource_not_found(event.uri)
        if isinstance(event, PromptGet):
            return await _call(self._prompts[event.name], ctx, event.arguments)
        if isinstance(event, CompletionRequest):
            if self._completion is None:
                return CompleteResult(completion=mcpwire.types.Completion(values=[]))
            answer = await _call(self._completion, ctx)
            if isinstance(answer, list):
                return CompleteResult(completion=mcpwire.types.Completion(values=answer, total=len(answer), has_more=False))
            return answer
        raise mcpwire.LocalProtocolError(f"No handler for {type(event).__name__}")


async def _call(handler: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    if inspect.iscoroutinefunction(handler):
        return await handler(*args, **kwargs)
    # A thread cannot be interrupted: on cancellation it is abandoned and its answer, which the
    # cancelled exchange would suppress anyway, is dropped.
    return await anyio.to_thread.run_sync(lambda: handler(*args, **kwargs), abandon_on_cancel=True)


def _contents(uri: str, answer: Any) -> Any:
    if isinstance(answer, str):
        return ReadResourceResult(contents=[TextResourceContents(uri=uri, text=answer)])
    if isinstance(answer, bytes):
        import base64

        return ReadResourceResult(contents=[BlobResourceContents(uri=uri, blob=base64.b64encode(answer).decode())])
    return answer


_ = (CallToolResult, GetPromptResult, TextContent)
