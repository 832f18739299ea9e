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

from msgspec import UNSET

from ..wire.envelope import Request, RequestId, encode_result
from ..wire.errors import ErrorCode, RemoteProtocolError
from ..wire.methods import SESSION_METHODS
from ..wire.meta import RequestMeta
from ..wire.params import bad_params, check_cursor
from .admission import Admitted
from .catalog import ToolEntry
from .events import TaskChanged, TaskResultWanted
from .listen import ListenStream
from .listeners import Listeners
from .mrtr import check_answers, check_input_responses
from .states import TaskStatus
from .tasks import TaskRecord, Tasks
from .tokens import check_now

__all__ = ["TasksEngine", "TASK_REVISIONS"]

TASK_REVISIONS = SESSION_METHODS["tasks/get"].revisions
"""The initialize-era revisions that have tasks (2025-11-25)."""


class TasksEngine:
    """The tasks-extension methods of :class:`~mcpwire.Server` (see the module docstring)."""

    # What this half uses of the engine, set by Server.__init__.
    tasks: Tasks | None
    page_size: int
    _listeners: Listeners
    _result_meta: dict[str, Any]

    def task_status(self, task_id: str, *, now: float) -> list[tuple[ListenStream[Any], Any]]:
        """Deliveries of ``task_id``'s current state to every stream watching it: the
        extension's ``notifications/tasks`` (the DetailedTask that ``tasks/get`` would answer)
        on listen streams, 2025-11-25's ``notifications/tasks/status`` on the GET (or stdio)
        stream of the session that made the task. None when the task is gone or the server
        serves no tasks. Call after each change of the task."""
        check_now(now)
        tasks = self.tasks
        record = tasks.get(task_id, now) if tasks is not None else None
        if record is None:
            return []
        return [(s, s.task_status(record)) for s in self._listeners if s.watches_task(record)]

    # -- 2025-11-25 (Basic > Utilities > Tasks, experimental) -----------------------------------
    def _session_task_request(self, entry: ToolEntry, task: Any, revision: str) -> int | None:
        """Whether a session's ``tools/call`` becomes a task (Tasks: Tool-Level Negotiation):
        ``None`` when not, else the ttl it asked for (0: none asked). A revision or server
        without tasks ignores ``params.task`` (Task Support and Handling); a tool without task
        support refuses it, and a tool that requires tasks refuses a call without it, with
        -32601."""
        if self.tasks is None or revision not in TASK_REVISIONS:
            return None
        if task is UNSET:
            if entry.task_support == "required":
                raise RemoteProtocolError(f"Tool {entry.tool.name} must be called as a task (params.task)",
                                          code=ErrorCode.METHOD_NOT_FOUND)
            return None
        if entry.task_support == "forbidden":
            raise RemoteProtocolError(f"Tool {entry.tool.name} does not support task augmentation",
                                      code=ErrorCode.METHOD_NOT_FOUND)
        if type(task) is not dict:
            raise bad_params("params.task must be an object")
        ttl = task.get("ttl")
        if ttl is None:
            return 0
        if type(ttl) is not int or ttl < 1:
            raise bad_params("params.task.ttl must be a positive integer of milliseconds")
        return ttl if self.tasks.ttl_ms is None else min(ttl, self.tasks.ttl_ms)

    def _session_task(self, request_id: RequestId, record: TaskRecord) -> bytes:
        return encode_result(request_id, Tasks.session_task(record))

    def _on_session_task_get(self, message: Request, params: Any, meta: RequestMeta, now: float, principal: str | None) -> Admitted:
        assert self.tasks is not None  # the method exists only with tasks
        return self._session_task(message.id, self.tasks.find(params.taskId, now, principal))

    def _on_session_task_result(self, message: Request, params: Any, meta: RequestMeta, now: float, principal: str | None) -> Admitted:
        assert self.tasks is not None
        record = self.tasks.find(params.taskId, now, principal)
        if not record.terminal:
            return TaskResultWanted(request_id=message.id, task_id=record.task_id, meta=meta, owner=principal), message.params
        return Tasks.session_answer(record, meta.protocol_version, message.id)

    def _on_session_task_list(self, message: Request, params: Any, meta: RequestMeta, now: float, principal: str | None) -> Admitted:
        assert self.tasks is not None
        if principal is None:
            # Declared only to an authenticated caller (Tasks: Security: a server that cannot
            # tell requestors apart should not list tasks).
            raise RemoteProtocolError("Method not found: tasks/list", code=ErrorCode.METHOD_NOT_FOUND)
        cursor = check_cursor(params.cursor)
        records, nxt = self.tasks.page(principal, now, cursor, self.page_size)
        result: dict[str, Any] = {"tasks": [Tasks.session_task(r) for r in records]}
        if nxt is not None:
            result["nextCursor"] = nxt
        return encode_result(message.id, result)

    def _on_session_task_cancel(self, message: Request, params: Any, meta: RequestMeta, now: float, principal: str | None) -> Admitted:
        assert self.tasks is not None
        record = self.tasks.find(params.taskId, now, principal)
        if record.terminal:
            # Tasks: Task Cancellation: a finished task refuses it.
            status = Tasks.session_status(record)
            raise bad_params(f"Cannot cancel task: already in terminal status '{status}'")
        updated = self.tasks.cancel(record, now)
        return TaskChanged(task=updated, reply=self._session_task(message.id, updated))

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
