"""An App's changes delivered to every listen stream of its server, in this process and, through
its :class:`~mcpwire_adapters.state.broker.Broker`, in the others: :class:`Fanout`.

Local first: a change reaches this process's streams at once, whatever the broker's state; the
broker then tells the other processes, each of which delivers the notice to its own streams
(:meth:`Fanout.receive`). An initialize-era session's end (DELETE) travels the same way, and so
does the growth of a detached request's stream, which a GET may resume in another process. A
notice about a task is re-read from the task store by each process (the store is shared when
the broker is), so what a listener gets is the task as stored, never a copy that travelled. A notice a process cannot act on (an unknown list kind, a task it does
not know) is logged and dropped.
"""

from __future__ import annotations

import logging
import time

import msgspec

from mcpwire import ProtocolError
from mcpwire.sessions import Response
from mcpwire.tasks import TaskChanged

from ..state.broker import (
    AnswerNotice, Broker, ListChangedNotice, LocalBroker, Notice, ResourceUpdatedNotice, SessionClosedNotice,
    StreamGrewNotice, StreamLostNotice, TaskChangedNotice, TaskStatusNotice,
)
from .hub import Hub

__all__ = ["Fanout"]

_log = logging.getLogger("mcpwire_adapters.broker")
_ENCODE = msgspec.json.Encoder().encode
_DECODE_RESPONSE = msgspec.json.Decoder(Response).decode


class Fanout:
    """The deliveries of one App (see the module docstring); ``broker`` may be replaced before
    the App starts serving (``mcpwire serve --redis`` does)."""

    def __init__(self, hub: Hub, broker: Broker | None = None) -> None:
        self.hub = hub
        self.broker: Broker = broker if broker is not None else LocalBroker()

    def list_changed(self, kind: str) -> None:
        self.hub.deliver(self.hub.server.list_changed(kind))  # type: ignore[arg-type]
        self.broker.publish(ListChangedNotice(list=kind))  # type: ignore[arg-type]

    def resource_updated(self, uri: str) -> None:
        self._refresh_sessions()
        self.hub.deliver(self.hub.server.resource_updated(uri))
        self.broker.publish(ResourceUpdatedNotice(uri=uri))

    def task_status(self, task_id: str) -> None:
        """Task ``task_id`` changed: its state to the listeners watching it, here and elsewhere."""
        self._task_status(task_id)
        self.broker.publish(TaskStatusNotice(task_id=task_id))

    def task_changed_elsewhere(self, task_id: str) -> bool:
        """Hand a task changed here, whose work this process does not run, to the process that
        runs it; ``False`` when there are no other processes (the caller then fails the task)."""
        if not self.broker.shared:
            return False
        self.broker.publish(TaskChangedNotice(task_id=task_id))
        return True

    def answer_elsewhere(self, session_id: str, response: Response) -> None:
        """A client's answer no exchange of this process waits for: to the other processes,
        one of which may (a shared session store; nothing to do in one process)."""
        if self.broker.shared:
            self.broker.publish(AnswerNotice(session_id=session_id, response=msgspec.Raw(_ENCODE(response))))

    def session_closed(self, session_id: str) -> None:
        """An initialize-era session ended here (its DELETE): the other processes end its
        streams and work (nothing to do in one process)."""
        self.broker.publish(SessionClosedNotice(session_id=session_id))

    def stream_grew(self, session_id: str, key: str) -> None:
        """A detached request of a session sent more on its stream ``key`` and no GET here
        resumes it: a GET resuming it in another process reads it from the session's events."""
        if self.broker.shared:
            self.broker.publish(StreamGrewNotice(session_id=session_id, key=key))

    async def run(self) -> None:
        """Deliver the other processes' notices (in the App's background task group)."""
        await self.broker.run(self.receive)

    async def receive(self, notice: Notice) -> None:
        """Deliver another process's notice to this process's streams (and work)."""
        server = self.hub.server
        try:
            if isinstance(notice, ListChangedNotice):
                self.hub.deliver(server.list_changed(notice.list))
            elif isinstance(notice, ResourceUpdatedNotice):
                self._refresh_sessions()
                self.hub.deliver(server.resource_updated(notice.uri))
            elif isinstance(notice, TaskStatusNotice):
                if server.open_listeners:  # else no stream here to tell: spare the store a read
                    self._task_status(notice.task_id)
                self.hub.tasks.wake(notice.task_id)
            elif isinstance(notice, SessionClosedNotice):
                self.hub.host.session_ended(server.session_ended(notice.session_id))
            elif isinstance(notice, StreamLostNotice):
                lost = server.session_ended(notice.session_id).stream
                if lost is not None:
                    self.hub.host.close_stream(lost)
            elif isinstance(notice, StreamGrewNotice):
                self.hub.stream_grew(notice.session_id, notice.key)
            elif isinstance(notice, AnswerNotice):
                session = server.sessions.get(notice.session_id, time.time())
                response = _DECODE_RESPONSE(notice.response)
                arrived = None if session is None else server.receive_answer(session, response)
                if arrived is not None:  # an exchange of this process asked: it goes on
                    self.hub.host.input_arrived(arrived)
            elif server.tasks is not None and self.hub.tasks.runs(notice.task_id):
                record = server.tasks.get(notice.task_id, time.time())
                if record is not None:
                    await self.hub.tasks.task_changed(TaskChanged(task=record), forwarded=True)
        except (ProtocolError, ValueError, msgspec.ValidationError) as exc:
            _log.warning("dropped a notice from another process (%r): %s", notice, exc)

    def _refresh_sessions(self) -> None:
        # A shared session store: the subscriptions of this process's GET streams may have been
        # changed by a request on another process (RedisSessionStore.refresh_listening).
        refresh = getattr(self.hub.server.sessions, "refresh_listening", None)
        if refresh is not None:
            refresh()

    def _task_status(self, task_id: str) -> None:
        try:
            self.hub.deliver(self.hub.server.task_status(task_id, now=time.time()))
        except ProtocolError as exc:  # the task store failed (it logged why): no notification
            _log.warning("no status notification for task %s: %s", task_id, exc)
