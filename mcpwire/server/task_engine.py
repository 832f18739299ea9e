"""The tasks-extension half of the server engine: ``tasks/get``, ``tasks/update``,
``tasks/cancel`` and the status notifications of listen streams.

Owns (ext-tasks specification, draft: Task Polling, Task Update Requests, Task Cancellation,
Task Status Notifications): answering ``tasks/get`` from the store, checking the answers of
``tasks/update`` against what each key asked, cancelling, and the ``notifications/tasks``
deliveries. :class:`~mcpwire.Server` inherits it (as it does ``era_engine.EraEngine``); the
admission before these (the extension declared, ``Mcp-Name``, the principal) is the engine's,
and the tasks themselves are ``tasks.py``'s.
"""

from __future__ import annotations

from typing import Any

from ..wire.envelope import Request, RequestId, encode_result
from ..wire.meta import RequestMeta
from ..wire.params import bad_params
from .admitted import Admitted
from .events import TaskChanged
from .listen import ListenStream
from .listeners import Listeners
from .mrtr import check_answers, check_input_responses
from .states import TaskStatus
from .tasks import Tasks
from .tokens import check_now

__all__ = ["TasksEngine"]


class TasksEngine:
    """The tasks-extension methods of :class:`~mcpwire.Server` (see the module docstring)."""

    # What this half uses of the engine, set by Server.__init__.
    tasks: Tasks | None
    _listeners: Listeners
    _result_meta: dict[str, Any]

    def task_status(self, task_id: str, *, now: float) -> list[tuple[ListenStream[Any], Any]]:
        """Deliveries of ``task_id``'s current state (``notifications/tasks``, the DetailedTask
        that ``tasks/get`` would answer) to every stream watching it; none when the task is gone
        or the server serves no tasks. Call after each change of the task."""
        check_now(now)
        tasks = self.tasks
        record = tasks.get(task_id, now) if tasks is not None else None
        if tasks is None or record is None:
            return []
        detailed = tasks.detailed(record)
        return [(s, s.task_status(task_id, detailed)) for s in self._listeners if s.watches(task_id)]

    def _task_result(self, request_id: RequestId, members: dict[str, Any]) -> bytes:
        return encode_result(request_id, {"resultType": "complete", **members, "_meta": self._result_meta})

    def _on_task_get(self, message: Request, params: Any, meta: RequestMeta, now: float, principal: str | None) -> Admitted:
        assert self.tasks is not None  # the method exists only with tasks
        record = self.tasks.find(params.taskId, now, principal)
        return self._task_result(message.id, self.tasks.detailed(record))

    def _on_task_update(self, message: Request, params: Any, meta: RequestMeta, now: float, principal: str | None) -> Admitted:
        assert self.tasks is not None
        responses = check_input_responses(params.inputResponses)
        if responses is None:
            raise bad_params("tasks/update requires inputResponses")
        record = self.tasks.find(params.taskId, now, principal)
        # Answers to what the task asks now are checked against what each key asked for;
        # answers to anything else are ignored (ext-tasks: Task Update Requests).
        check_answers(responses, {k: str(v.get("method")) for k, v in record.input_requests.items()})
        updated = self.tasks.answer(record, responses, now)
        ack = self._task_result(message.id, {})
        if updated.status is TaskStatus.WORKING and record.status is TaskStatus.INPUT_REQUIRED:
            return TaskChanged(task=updated, reply=ack)
        return ack

    def _on_task_cancel(self, message: Request, params: Any, meta: RequestMeta, now: float, principal: str | None) -> Admitted:
        assert self.tasks is not None
        record = self.tasks.find(params.taskId, now, principal)
        updated = self.tasks.cancel(record, now)
        ack = self._task_result(message.id, {})
        if updated.status is TaskStatus.CANCELLED and not record.terminal:
            return TaskChanged(task=updated, reply=ack)
        return ack
