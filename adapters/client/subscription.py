"""Listening: a ``subscriptions/listen`` stream (:class:`Subscription`) and an initialize-era
session's notifications (:class:`SessionListen`), from :meth:`Session.listen`. Each transport
subclasses them with how its bytes move.

They are typed against :class:`~mcpwire_adapters.client.port.ListenSession`, not ``Session``:
the session module imports this one."""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Mapping
from typing import Any, Self

import msgspec

from mcpwire.tasks import TaskNotification
from mcpwire import (
    ClientEvent, ErrorCode, ErrorResult, InputRequired, ListChanged, ListenAck, OutgoingRequest, ProtocolError,
    ResourceUpdated, ResultReceived,
)
from mcpwire.types import RequestId, SubscriptionFilter

from ..errors import ServerError, TransportError
from .port import ListenSession

__all__ = ["ListenEvent", "SessionListen", "Subscription"]

_log = logging.getLogger("mcpwire.client")
ListenEvent = ListenAck | ListChanged | ResourceUpdated | TaskNotification


class Subscription:
    """One ``subscriptions/listen`` stream, from :meth:`Session.listen`
    (<https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions>).

    ``async with`` sends the request and waits for the acknowledgement (falling back once on
    -32022), so the server is listening when the block runs; :attr:`acknowledged` is the
    filter it honours (:attr:`task_ids`: the tasks it agreed to report on). Iterating yields
    :class:`ListenAck` first, then :class:`ListChanged`, :class:`ResourceUpdated` and
    :class:`~mcpwire.tasks.TaskNotification` events, until the server ends the stream: :attr:`result` is
    then its listen result (``None`` when the stream ended without one). Leaving the block
    cancels the subscription: over HTTP its connection is closed, over stdio
    ``notifications/cancelled`` is written. A JSON-RPC error answering the listen request
    raises :class:`ServerError`; a broken connection :class:`TransportError`.
    """

    def __init__(self, session: ListenSession, request: OutgoingRequest | None) -> None:
        self.session = session
        #: The listen request; after a -32022 fallback, the retried one (``None``: listening to
        #: an initialize-era session, which has no listen request).
        self.request = request
        self.acknowledged: SubscriptionFilter | None = None
        self.task_ids: list[str] | None = None
        self.result: ResultReceived | None = None
        self._pending: deque[ListenEvent] = deque()
        self._ended = False

    @property
    def subscription_id(self) -> RequestId | None:
        """The listen request's id, which stamps every event of the stream (``None`` on an
        initialize-era session)."""
        return self.request.id if self.request is not None else None

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
                if exc.code == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION and not version_retried \
                        and self.request is not None:
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
        events = await self._read()
        if events is None:
            self._ended = True
            return
        for event in events:
            self._take(event)

    def _take(self, event: ClientEvent) -> None:
        """One event of the stream: queued for the iterator, or the end of the stream."""
        if isinstance(event, (ListenAck, ListChanged, ResourceUpdated, TaskNotification)):
            if isinstance(event, ListenAck):
                self.acknowledged = event.notifications
                self.task_ids = event.task_ids
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

    async def _read(self) -> list[ClientEvent] | None:
        """The next events of the stream, shown to the session before anyone else: its response
        cache drops what a list change or resource update makes stale (``Session.observe``)."""
        events = await self._receive()
        if events:
            await self.session.observe(events)
        return events

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


class SessionListen(Subscription):
    """Listening to an initialize-era session (from :meth:`Session.listen` on such a session):
    its GET stream over HTTP, the server's notification lines over stdio (specification
    2025-11-25: Basic > Transports; Server > Resources, Subscriptions).

    ``async with`` sends ``resources/subscribe`` for each URI of ``resourceSubscriptions`` and
    starts listening; :attr:`acknowledged` is the filter cut to what the server's capabilities
    offer (the server acknowledges nothing in these revisions: a list whose ``listChanged`` it
    does not declare, or resource URIs without ``resources.subscribe``, are left out, and no
    ``resources/subscribe`` is sent for them). Iterating yields the :class:`ListChanged` the filter asks for
    and :class:`ResourceUpdated` for the subscribed URIs (the transport answers the server's
    requests, listening or not). Leaving the block stops listening and unsubscribes.
    """

    def __init__(self, session: ListenSession, notifications: Mapping[str, Any]) -> None:
        super().__init__(session, None)
        self.notifications = msgspec.convert(dict(notifications), SubscriptionFilter)
        uris = self.notifications.resource_subscriptions
        self._uris = list(uris) if isinstance(uris, list) else []
        self._subscribed: list[str] = []

    async def __aenter__(self) -> Self:
        self.acknowledged, self.result, self._ended = None, None, False
        honoured = self._honoured()
        uris = honoured.resource_subscriptions
        self._uris = list(uris) if isinstance(uris, list) else []
        try:
            for uri in self._uris:
                await self.session.subscribe(uri)
                self._subscribed.append(uri)
            await self._start()
        except BaseException:
            await self.__aexit__()
            raise
        self.acknowledged = self.notifications = honoured
        return self

    def _honoured(self) -> SubscriptionFilter:
        """The filter cut to what the server's capabilities offer, as a 2026-07-28 server's
        acknowledgement is: list_changed flags for lists whose ``listChanged`` it declares,
        resource URIs only when it declares ``resources.subscribe``."""
        caps = self.session.server_capabilities
        wanted = msgspec.to_builtins(self.notifications)
        offered = msgspec.to_builtins(caps) if caps is not None else {}
        out: dict[str, Any] = {}
        for kind in ("tools", "resources", "prompts"):
            flag = f"{kind}ListChanged"
            if wanted.get(flag) is True and (offered.get(kind) or {}).get("listChanged") is True:
                out[flag] = True
        if wanted.get("resourceSubscriptions") and (offered.get("resources") or {}).get("subscribe") is True:
            out["resourceSubscriptions"] = wanted["resourceSubscriptions"]
        return msgspec.convert(out, SubscriptionFilter)

    async def __aexit__(self, *exc: object) -> None:
        await self._stop()
        subscribed, self._subscribed = self._subscribed, []
        for uri in subscribed:
            try:
                await self.session.unsubscribe(uri)
            except (ServerError, TransportError, ProtocolError) as error:
                _log.info("resources/unsubscribe %s failed: %s", uri, error)

    def _wants(self, event: ClientEvent) -> bool:
        if isinstance(event, ListChanged):
            return getattr(self.notifications, f"{event.kind}_list_changed") is True
        return isinstance(event, ResourceUpdated) and event.uri in self._uris

    def _take(self, event: ClientEvent) -> None:
        if isinstance(event, (ListChanged, ResourceUpdated)) and self._wants(event):
            self._pending.append(event)
        # Log messages and anything else on the session are not part of listening: ignored.
