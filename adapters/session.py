"""What every MCP client transport shares: :class:`Session`, :class:`Subscription` and their errors.

The transport-neutral half of :class:`~mcpwire_adapters.http_client.HttpClient` and
:class:`~mcpwire_adapters.stdio_client.StdioClient`; it imports neither h11 nor trio, so a
stdio client never loads the HTTP machinery.

:class:`Session` holds the client logic: the -32022 version fallback (once per request), the
MRTR loop (``on_input`` gets the typed input requests of each round and returns the answers;
at most ``max_rounds`` rounds), pagination, and turning an :class:`ErrorResult` into
:class:`ServerError`. A transport subclasses it and implements ``_exchange`` (send one request,
return its final event) and ``_subscription``. :meth:`Session.listen` opens a
``subscriptions/listen`` stream (specification: Basic > Patterns > Subscriptions) as a
:class:`Subscription`::

    async with session.listen({"toolsListChanged": True}) as sub:
        async for event in sub:      # ListenAck, then ListChanged / ResourceUpdated
            ...

These names are also importable from :mod:`mcpwire_adapters.http_client`, as before.
"""

from __future__ import annotations

import inspect
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Self, TypeVar

from mcpwire import (
    Client, ClientEvent, ErrorCode, ErrorResult, InputRequired, ListChanged, ListenAck, LogMessage, OutgoingRequest,
    Progress, ResourceUpdated, ResultReceived,
)
from mcpwire.types import InputRequest, RequestId, SubscriptionFilter

__all__ = ["EventHandler", "InputHandler", "ListenEvent", "ServerError", "Session", "Subscription", "TransportError"]

T = TypeVar("T")
InputHandler = Callable[[dict[str, InputRequest]], "Mapping[str, Any] | Awaitable[Mapping[str, Any]]"]
EventHandler = Callable[[Any], "None | Awaitable[None]"]
ListenEvent = ListenAck | ListChanged | ResourceUpdated


class ServerError(Exception):
    """The server answered with a JSON-RPC error (``error`` is the :class:`ErrorResult`)."""

    def __init__(self, error: ErrorResult) -> None:
        super().__init__(f"{error.code}: {error.message}")
        self.error = error
        self.code = error.code
        self.data = error.data


class TransportError(Exception):
    """The connection failed, timed out, or the response broke a limit."""


async def _maybe_await(value: T | Awaitable[T]) -> T:
    if inspect.isawaitable(value):
        return await value
    return value


class Session:
    """Transport-independent client logic; subclasses implement :meth:`_exchange`."""

    def __init__(self, client: Client, *, max_rounds: int = 8, max_pages: int = 100) -> None:
        self.client = client
        self.max_rounds = max_rounds
        self.max_pages = max_pages
        self.discovered: ResultReceived | None = None
        self._tokens = 0  # progress tokens this session made up

    async def _exchange(self, request: OutgoingRequest, on_event: Callable[[ClientEvent], Awaitable[None]]) -> ClientEvent:
        """Send ``request``; pass Progress/LogMessage events to ``on_event``; return the final event."""
        raise NotImplementedError

    async def send(
        self,
        request: OutgoingRequest,
        *,
        on_input: InputHandler | None = None,
        on_progress: EventHandler | None = None,
        on_log: EventHandler | None = None,
    ) -> ResultReceived:
        """Send ``request`` and follow it to a complete result: -32022 fallback, MRTR rounds.

        Raises :class:`ServerError` for a JSON-RPC error, and for an ``input_required`` when
        there is no ``on_input`` or the rounds exceed ``max_rounds`` (code -32603).
        """

        async def on_event(event: ClientEvent) -> None:
            if isinstance(event, Progress) and on_progress is not None:
                await _maybe_await(on_progress(event))
            elif isinstance(event, LogMessage) and on_log is not None:
                await _maybe_await(on_log(event))

        rounds = 0
        version_retried = False
        while True:
            final = await self._exchange(request, on_event)
            if isinstance(final, ResultReceived):
                return final
            if isinstance(final, ErrorResult):
                if final.code == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION and not version_retried:
                    version_retried = True
                    request = self.client.version_retry(request, final)
                    continue
                raise ServerError(final)
            assert isinstance(final, InputRequired)
            rounds += 1
            if on_input is None or rounds > self.max_rounds:
                why = "no input handler" if on_input is None else f"more than {self.max_rounds} input rounds"
                raise ServerError(ErrorResult(request_id=final.request_id, code=ErrorCode.INTERNAL_ERROR,
                                              message=f"input required for {request.method}: {why}", data=final.data))
            answers = await _maybe_await(on_input(final.input_requests))
            request = self.client.retry(final, answers)

    # -- verbs ------------------------------------------------------------------------------------
    async def discover(self) -> ResultReceived:
        self.discovered = await self.send(self.client.discover())
        return self.discovered

    async def _all(self, method: str) -> list[Any]:
        pages = self.client.paginate(method, max_pages=self.max_pages)
        while (request := pages.next_request()) is not None:
            pages.add(await self.send(request))
        return pages.items

    async def list_tools(self) -> list[Any]:
        """Every tool (all pages). Tools with invalid ``x-mcp-header`` are left out."""
        return await self._all("tools/list")

    async def list_resources(self) -> list[Any]:
        return await self._all("resources/list")

    async def list_resource_templates(self) -> list[Any]:
        return await self._all("resources/templates/list")

    async def list_prompts(self) -> list[Any]:
        return await self._all("prompts/list")

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        on_input: InputHandler | None = None,
        on_progress: EventHandler | None = None,
        on_log: EventHandler | None = None,
        progress_token: str | int | None = None,
        log_level: str | None = None,
    ) -> ResultReceived:
        if on_progress is not None and progress_token is None:
            self._tokens += 1
            progress_token = f"progress-{self._tokens}"
        request = self.client.call_tool(name, arguments, progress_token=progress_token, log_level=log_level)
        return await self.send(request, on_input=on_input, on_progress=on_progress, on_log=on_log)

    async def read_resource(self, uri: str, *, on_input: InputHandler | None = None) -> ResultReceived:
        return await self.send(self.client.read_resource(uri), on_input=on_input)

    async def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None, *,
                         on_input: InputHandler | None = None) -> ResultReceived:
        return await self.send(self.client.get_prompt(name, arguments), on_input=on_input)

    def listen(self, notifications: Mapping[str, Any], **kw: Any) -> Subscription:
        """A ``subscriptions/listen`` stream for ``notifications`` (a SubscriptionFilter object,
        e.g. ``{"toolsListChanged": True}``); ``kw`` go to :meth:`Client.listen`. Nothing is
        sent until the :class:`Subscription` is entered with ``async with``."""
        return self._subscription(self.client.listen(notifications, **kw))

    def _subscription(self, request: OutgoingRequest) -> Subscription:
        raise NotImplementedError


class Subscription:
    """One ``subscriptions/listen`` stream, from :meth:`Session.listen`
    (<https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions>).

    ``async with`` sends the request and waits for the acknowledgement (falling back once on
    -32022), so the server is listening when the block runs; :attr:`acknowledged` is the
    filter it honours. Iterating yields :class:`ListenAck` first, then :class:`ListChanged`
    and :class:`ResourceUpdated` events, until the server ends the stream: :attr:`result` is
    then its listen result (``None`` when the stream ended without one). Leaving the block
    cancels the subscription: over HTTP its connection is closed, over stdio
    ``notifications/cancelled`` is written. A JSON-RPC error answering the listen request
    raises :class:`ServerError`; a broken connection :class:`TransportError`.
    """

    def __init__(self, session: Session, request: OutgoingRequest) -> None:
        self.session = session
        #: The listen request; after a -32022 fallback, the retried one.
        self.request = request
        self.acknowledged: SubscriptionFilter | None = None
        self.result: ResultReceived | None = None
        self._pending: deque[ListenEvent] = deque()
        self._ended = False

    @property
    def subscription_id(self) -> RequestId:
        """The listen request's id, which stamps every event of the stream."""
        return self.request.id

    async def __aenter__(self) -> Self:
        version_retried = False
        while True:
            self.acknowledged, self.result, self._ended = None, None, False
            self._pending.clear()
            try:
                await self._start()
                while self.acknowledged is None and not self._ended:
                    await self._pull()
            except ServerError as exc:
                await self._stop()
                if exc.code == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION and not version_retried:
                    version_retried = True
                    self.request = self.session.client.version_retry(self.request, exc.error)
                    continue
                raise
            except BaseException:
                await self._stop()
                raise
            return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stop()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> ListenEvent:
        while not self._pending:
            if self._ended:
                raise StopAsyncIteration
            await self._pull()
        return self._pending.popleft()

    async def _pull(self) -> None:
        events = await self._receive()
        if events is None:
            self._ended = True
            return
        for event in events:
            if isinstance(event, (ListenAck, ListChanged, ResourceUpdated)):
                if isinstance(event, ListenAck):
                    self.acknowledged = event.notifications
                self._pending.append(event)
            elif isinstance(event, ResultReceived):
                self.result = event
                self._ended = True
            elif isinstance(event, (ErrorResult, InputRequired)):
                self._ended = True
                if isinstance(event, InputRequired):  # pragma: no cover - the engine refuses it first
                    event = ErrorResult(request_id=event.request_id, code=ErrorCode.INTERNAL_ERROR,
                                        message="input_required answering subscriptions/listen")
                raise ServerError(event)
            # Progress and log messages are not part of a listen stream: ignored.

    # -- per transport ----------------------------------------------------------------------------
    async def _start(self) -> None:
        """Send :attr:`request`."""
        raise NotImplementedError

    async def _receive(self) -> list[ClientEvent] | None:
        """The next events of the stream (possibly none), or ``None`` once it has ended."""
        raise NotImplementedError

    async def _stop(self) -> None:
        """Close the stream; cancel the subscription unless it already ended. Idempotent."""
        raise NotImplementedError
