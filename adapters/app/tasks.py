"""The App's tasks (tasks extension, ``io.modelcontextprotocol/tasks``): tool calls that outlive
their request.

A tool registered with ``task_support`` whose call declares the extension
(``ToolCall.task_allowed``) runs its handler in the App's background task group
(:meth:`App.running`, entered by every driver) while the request waits. The handler decides:
returning (a result, an error, a :class:`NeedInput` for a multi round-trip round) answers the
request as usual; ``await ctx.start_task()`` answers it with a ``CreateTaskResult`` at once and
the handler goes on in the background, its outcome recorded in the task (``tasks/get`` reads
it). After that, a :class:`NeedInput` parks the task in ``input_required``; when
``tasks/update`` has answered every request (a :class:`~mcpwire.tasks.TaskChanged` the
driver hands to :meth:`App.task_changed`), the handler runs again with ``ctx.input_responses``
and ``ctx.state``, as on a multi round-trip retry. ``tasks/cancel`` cancels the handler.

A client that leaves before the task exists cancels the handler with its request; once the
task exists, nothing but ``tasks/cancel`` (or the server's shutdown) stops it. Without a
background group (a driver that does not enter :meth:`App.running`, an ASGI server without
lifespan) the handler runs inside the request, which then ends only when the work does.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import anyio
import anyio.abc
from msgspec import UNSET

import mcpwire
from mcpwire import Exchange, ExchangeState
from mcpwire.tasks import TaskChanged, TaskResultWanted, TaskStatus

from .context import Context, Send
from .hub import Hub

__all__ = ["TaskRunner"]

_log = logging.getLogger("mcpwire_adapters.app")
_LOST = {"code": mcpwire.ErrorCode.INTERNAL_ERROR, "message": "Internal error"}


async def _nowhere(outputs: Any) -> None:
    """A task's later rounds answer no request: their output (always empty) goes nowhere."""


class TaskRunner:
    """The work of an App's task-capable calls and tasks (see the module docstring)."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self._answer = hub.host.answer  # bound once: each round runs it
        self.group: anyio.abc.TaskGroup | None = None
        """The App's background task group while :meth:`App.running` is entered."""
        # The exchange of each task whose work this process runs, and the cancel scope of the
        # round running now (None while the task waits for input).
        self._work: dict[str, tuple[Exchange[Any], anyio.CancelScope | None]] = {}
        # Before start_task: each running call's scope, by exchange.
        self._starting: dict[int, anyio.CancelScope] = {}
        # What the tasks/result requests waiting on a task wait for: its next change.
        self._changed: dict[str, anyio.Event] = {}
        # A 2025-11-25 task's requests to its client that no stream carried yet, by task.
        self._undelivered: dict[str, list[bytes]] = {}

    def __len__(self) -> int:
        """How many tasks this process runs or keeps waiting for input."""
        return len(self._work)

    async def dispatch(self, exchange: Exchange[Any], send: Send) -> None:
        """Answer a call that may become a task: wait until its handler answers or makes the task."""
        ctx = Context(self.hub, exchange, send)
        decided = anyio.Event()
        scope = anyio.CancelScope()
        self._starting[id(exchange)] = scope
        if self.group is None:
            await self._round(ctx, scope, decided)
            return
        self.group.start_soon(self._round, ctx, scope, decided)
        try:
            await decided.wait()
        except anyio.get_cancelled_exc_class():
            if exchange.state is not ExchangeState.TASK:
                scope.cancel()  # the client left before the task existed: the work ends with the request
            raise

    def started(self, ctx: Context) -> None:
        """``ctx.start_task`` made the task: its work now belongs to the task."""
        exchange = ctx.exchange
        assert exchange.task_id is not None
        self._work[exchange.task_id] = (exchange, self._starting.pop(id(exchange), None))
        self.notify(exchange.task_id)
        if ctx.decided is not None:
            ctx.decided.set()

    def notify(self, task_id: str) -> None:
        """Send the task's state to the streams watching it (``notifications/tasks``, and
        2025-11-25's ``notifications/tasks/status``), and wake the ``tasks/result`` waiting on it."""
        self.hub.fanout.task_status(task_id)
        self.wake(task_id)

    def wake(self, task_id: str) -> None:
        """Wake the ``tasks/result`` waiting on the task here (the task changed, here or in
        another process of the server: ``fanout.py``)."""
        changed = self._changed.pop(task_id, None)
        if changed is not None:
            changed.set()

    def asked(self, exchange: Exchange[Any]) -> None:
        """A 2025-11-25 task asked its client (``exchange.task_requests``): the requests go,
        once, on a ``tasks/result`` stream waiting on the task, else on the session's GET (or
        stdio) stream, else on the next ``tasks/result`` (Tasks: Input Required Status: the
        client calls it on seeing ``input_required``)."""
        task_id = exchange.task_id
        assert task_id is not None
        requests = exchange.task_requests
        stream = exchange.session.stream if exchange.session is not None else None
        if task_id not in self._changed and stream is not None:
            self.hub.deliver([(stream, stream.relay(requests))])
        else:
            self._undelivered[task_id] = requests
        self.notify(task_id)

    def answered(self, task_id: str) -> None:
        """Every request of the task's round is answered: it works again."""
        self._undelivered.pop(task_id, None)
        self.notify(task_id)

    async def await_result(self, exchange: Exchange[Any], event: TaskResultWanted, send: Send) -> None:
        """Answer a 2025-11-25 ``tasks/result`` once its task is finished (Tasks: Result
        Retrieval: the answer waits), carrying the task's requests to its client meanwhile.
        Woken by a change of the task in this process, and reads the store again at the task's
        poll interval for work that runs in another. A stream that ends before its answer (the
        client may hang up at any time) leaves what it carried and is still unanswered to the
        next ``tasks/result``."""
        tasks = self.hub.server.tasks
        assert tasks is not None  # the engine answers tasks/result only with tasks
        task_id = event.task_id
        relayed: list[bytes] = []
        answered = False
        try:
            while True:
                record = tasks.get(task_id, time.time())
                if record is None or record.owner != event.owner:  # expired while waiting
                    out = exchange.fail(mcpwire.RemoteProtocolError(
                        "Failed to retrieve task: Task not found", code=mcpwire.ErrorCode.INVALID_PARAMS))
                    break
                if record.terminal:
                    out = exchange.task_result(record)
                    break
                requests = self._undelivered.pop(task_id, None)
                if requests:
                    relayed += requests
                    await send(exchange.relay(requests))
                    if exchange.state is ExchangeState.DONE:
                        return  # refused (406: its client takes no event stream); the requests wait (finally)
                changed = self._changed.setdefault(task_id, anyio.Event())
                with anyio.move_on_after((record.poll_interval_ms or 1000) / 1000):
                    await changed.wait()
            if out:
                await send(out)
            answered = True
        finally:
            work = self._work.get(task_id)
            if not answered and relayed and work is not None:
                left = [m for m in relayed if m in work[0].task_requests]
                if left:
                    self._undelivered[task_id] = [*left, *self._undelivered.get(task_id, [])]

    def runs(self, task_id: str) -> bool:
        """Whether this process runs (or keeps waiting for input) the work of task ``task_id``."""
        return task_id in self._work

    async def _round(self, ctx: Context, scope: anyio.CancelScope, decided: anyio.Event | None) -> None:
        exchange = ctx.exchange
        ctx.decided = decided
        try:
            with scope:
                event = exchange.event
                if getattr(event, "task_requested", False) and exchange.task_id is None:
                    # 2025-11-25: the client asked for a task: it is created before the work runs.
                    ttl = getattr(event, "task_ttl_ms", None)
                    await ctx.start_task(ttl_ms=UNSET if ttl is None else ttl)
                try:
                    await self._answer(ctx)
                except mcpwire.ProtocolError as exc:
                    # The task store failed recording the outcome (it logged why): the task stays
                    # as stored; the server goes on.
                    _log.error("task %s: its outcome was not recorded: %s", exchange.task_id, exc)
        finally:
            self._starting.pop(id(exchange), None)
            if decided is not None:
                decided.set()
            self._settle(exchange, scope)

    def _settle(self, exchange: Exchange[Any], scope: anyio.CancelScope) -> None:
        """After a round: forget a finished task; a task waiting for input keeps its exchange."""
        task_id = exchange.task_id
        if task_id is not None:
            self.notify(task_id)
        entry = self._work.get(task_id) if task_id is not None else None
        if task_id is None or entry is None or entry[1] is not scope:
            return
        tasks = self.hub.server.tasks
        try:
            record = tasks.get(task_id, time.time()) if tasks is not None else None
        except mcpwire.ProtocolError:  # the store failed (it logged why): keep the exchange, unknowing
            self._work[task_id] = (exchange, None)
            return
        if record is None or record.terminal:
            del self._work[task_id]
            self._undelivered.pop(task_id, None)
        else:
            self._work[task_id] = (exchange, None)

    async def task_changed(self, changed: TaskChanged, *, forwarded: bool = False) -> None:
        """Resume a task whose input requests are all answered, or stop a cancelled one. A task
        whose work runs in another process of the server is handed to it through the broker
        (``forwarded``: this call is that hand-over, already notified by the process that had
        the change)."""
        task = changed.task
        entry = self._work.get(task.task_id)
        if not forwarded:
            self.notify(task.task_id)
        if entry is None and task.status in (TaskStatus.CANCELLED, TaskStatus.WORKING) and not forwarded \
                and self.hub.fanout.task_changed_elsewhere(task.task_id):
            return
        if task.status is TaskStatus.CANCELLED:
            self._undelivered.pop(task.task_id, None)
            if entry is not None:
                del self._work[task.task_id]
                if entry[1] is not None:
                    entry[1].cancel()
            return
        if task.status is not TaskStatus.WORKING:
            return
        tasks = self.hub.server.tasks
        assert tasks is not None
        if entry is None or entry[1] is not None:
            # No work of this process waits for these answers (it ran in another process, or
            # before a restart): the task cannot go on.
            tasks.fail(task.task_id, dict(_LOST), time.time(), message="The task's work is no longer running")
            self.notify(task.task_id)
            return
        exchange = entry[0]
        ctx = Context(self.hub, exchange, _nowhere)
        ctx.event = exchange.resume_task(task)
        scope = anyio.CancelScope()
        self._work[task.task_id] = (exchange, scope)
        if self.group is None:
            await self._round(ctx, scope, None)
        else:
            self.group.start_soon(self._round, ctx, scope, None)
