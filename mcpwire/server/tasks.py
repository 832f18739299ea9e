"""The tasks extension (``io.modelcontextprotocol/tasks``), server side: tasks and their store.

Owns (ext-tasks specification, draft: Tasks; SEP-2663): the stored state of a task
(:class:`TaskRecord`), the store interface (:class:`TaskStore`) and its in-memory
implementation, every change of a task through the lifecycle table (``states.TASK``), and the
messages built from a task: the ``CreateTaskResult`` of a ``tools/call``, the ``DetailedTask``
that ``tasks/get`` and ``notifications/tasks`` carry, and the -32602 of an unknown task id.

Task ids come from the host (``Server(task_ids=...)``): they are bearer handles, so they
must be unguessable (the specification: Security Considerations); time comes in as ``now``
(seconds since the epoch: ``createdAt`` and ``lastUpdatedAt`` are wall-clock ISO 8601).
The engine admits ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` (``engine.py``); an
:class:`~mcpwire.Exchange` of a ``tools/call`` becomes a task with ``create_task`` and then
records its outcome here instead of sending it.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator, Mapping
from typing import Any, Final, Protocol

import msgspec

from ..wire.envelope import RequestId, encode_error_object, encode_result
from ..wire.errors import ErrorCode, LocalProtocolError, RemoteProtocolError
from .initialize_era_results import session_result
from .states import TASK, TaskStatus

__all__ = [
    "DEFAULT_POLL_INTERVAL_MS", "DEFAULT_TASK_TTL_MS", "LOST_WORK", "MemoryTaskStore", "RELATED_TASK_META_KEY",
    "TaskRecord", "TaskStore", "Tasks", "iso_time", "recover",
]

DEFAULT_TASK_TTL_MS: Final = 3_600_000
"""How long a task stays readable after its creation, unless the host says otherwise (1 hour)."""
DEFAULT_POLL_INTERVAL_MS: Final = 1000
"""The polling interval advised to clients, unless the host says otherwise."""
TERMINAL: Final = frozenset({TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED})
_INTERNAL: Final[dict[str, Any]] = {"code": int(ErrorCode.INTERNAL_ERROR), "message": "Internal error"}
RELATED_TASK_META_KEY: Final = "io.modelcontextprotocol/related-task"
"""2025-11-25, Tasks: Related Task Metadata: the ``_meta`` key naming the task a message is of."""


def iso_time(now: float) -> str:
    """``now`` (seconds since the epoch) as an ISO 8601 UTC timestamp with milliseconds."""
    stamp = datetime.datetime.fromtimestamp(now, datetime.UTC)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class TaskRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One task as stored. Changed only through :class:`Tasks`, each change a move of the
    lifecycle table; a store keeps and returns it whole (msgspec encodes it to JSON).

    ``input_requests`` are the requests still unanswered (surfaced as ``inputRequests``),
    ``answers`` the answers received for the current round, ``issued`` every key the task
    ever asked (a key is never reused), ``state`` what the work keeps for its next run,
    ``session`` the initialize-era session whose ``tools/call`` made it (2025-11-25: its status
    notifications go to that session's stream, whichever process holds it).
    """

    task_id: str
    status: TaskStatus
    created_at: float
    updated_at: float
    ttl_ms: int | None
    poll_interval_ms: int | None = None
    status_message: str | None = None
    tool: str = ""
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, dict[str, Any]] = {}
    answers: dict[str, dict[str, Any]] = {}
    issued: tuple[str, ...] = ()
    state: Any = None
    owner: str | None = None
    session: str | None = None

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def expired(self, now: float) -> bool:
        """Whether the task's ``ttlMs`` has passed (it may then be dropped)."""
        return self.ttl_ms is not None and now >= self.created_at + self.ttl_ms / 1000


class TaskStore(Protocol):
    """Where tasks live. :class:`MemoryTaskStore` keeps them in this process; a durable store
    (``mcpwire_adapters.state.sqlite_tasks.SqliteTaskStore``) keeps them across restarts. A store
    drops a task whose ``ttlMs`` has passed (``record.expired(now)``): ``get`` then returns
    ``None``."""

    def add(self, record: TaskRecord, now: float) -> bool:
        """Store a new task; ``False`` when the store is full (then the task is not created)."""

    def get(self, task_id: str, now: float) -> TaskRecord | None:
        """The task, or ``None`` when unknown or expired."""

    def put(self, record: TaskRecord) -> None:
        """Replace a stored task with its new state."""

    def tasks_of(self, owner: str | None, now: float, after: str | None, limit: int) -> list[TaskRecord] | None:
        """Up to ``limit`` unexpired tasks of ``owner`` (``TaskRecord.owner``), oldest first,
        from the one after the task ``after`` (``None``: from the first); ``None`` when
        ``after`` is not a task of ``owner`` (any more)."""


class MemoryTaskStore:
    """Tasks in this process's memory, bounded: at most ``max_tasks`` (default 10000); expired
    ones are dropped when read, and all of them when the store is full."""

    def __init__(self, *, max_tasks: int = 10_000) -> None:
        if max_tasks < 1:
            raise LocalProtocolError("max_tasks must be at least 1")
        self.max_tasks = max_tasks
        self._tasks: dict[str, TaskRecord] = {}

    def __len__(self) -> int:
        return len(self._tasks)

    def add(self, record: TaskRecord, now: float) -> bool:
        if record.task_id in self._tasks:
            raise LocalProtocolError(f"Task id {record.task_id!r} was issued twice: the host's ids must be unique")
        if len(self._tasks) >= self.max_tasks:
            for key in [k for k, r in self._tasks.items() if r.expired(now)]:
                del self._tasks[key]
            if len(self._tasks) >= self.max_tasks:
                return False
        self._tasks[record.task_id] = record
        return True

    def get(self, task_id: str, now: float) -> TaskRecord | None:
        record = self._tasks.get(task_id)
        if record is not None and record.expired(now):
            del self._tasks[task_id]
            return None
        return record

    def put(self, record: TaskRecord) -> None:
        if record.task_id in self._tasks:
            self._tasks[record.task_id] = record

    def tasks_of(self, owner: str | None, now: float, after: str | None, limit: int) -> list[TaskRecord] | None:
        found = [r for r in self._tasks.values() if r.owner == owner and not r.expired(now)]
        start = 0
        if after is not None:
            ids = [r.task_id for r in found]
            if after not in ids:
                return None
            start = ids.index(after) + 1
        return found[start:start + limit]


LOST_WORK: Final = "The server restarted while the task ran"
"""The ``statusMessage`` :func:`recover` gives a task whose work was lost."""


def recover(record: TaskRecord, now: float, message: str = LOST_WORK) -> TaskRecord:
    """The task as it must stand once its work is lost (the process that ran it stopped):
    ``working`` or ``input_required`` becomes ``failed`` with -32603 Internal error and
    ``message`` as its ``statusMessage`` (the lifecycle's ``fail`` move); a finished task is
    returned unchanged. Pure: the caller (a durable store when it opens) stores the result."""
    if record.terminal:
        return record
    status = TASK.move(record.status, "fail")
    return msgspec.structs.replace(
        record, status=status, updated_at=max(now, record.updated_at), status_message=message,
        error={"code": int(ErrorCode.INTERNAL_ERROR), "message": "Internal error"}, input_requests={},
    )


def _task_members(record: TaskRecord, status: str, ttl: str, poll_interval: str) -> dict[str, Any]:
    """A task's members in the specifications' order; the two dialects name the durations
    differently (``ttlMs``/``pollIntervalMs`` in the extension, ``ttl``/``pollInterval`` in
    2025-11-25)."""
    task: dict[str, Any] = {"taskId": record.task_id, "status": status}
    if record.status_message is not None:
        task["statusMessage"] = record.status_message
    task["createdAt"] = iso_time(record.created_at)
    task["lastUpdatedAt"] = iso_time(record.updated_at)
    task[ttl] = record.ttl_ms
    if record.poll_interval_ms is not None:
        task[poll_interval] = record.poll_interval_ms
    return task


def _check_durations(ttl_ms: Any, poll_interval_ms: Any) -> None:
    for name, value in (("ttl_ms", ttl_ms), ("poll_interval_ms", poll_interval_ms)):
        if value is not None and (type(value) is not int or value < 1):
            raise LocalProtocolError(f"{name} must be a positive integer of milliseconds or None")


def _not_found() -> RemoteProtocolError:
    # The wording of the specification's example (Error Handling: Task not found).
    return RemoteProtocolError("Failed to retrieve task: Task not found", code=ErrorCode.INVALID_PARAMS)


class Tasks:
    """The tasks of one server: created, changed and read here, kept in ``store``.

    ``ttl_ms`` and ``poll_interval_ms`` are the defaults each new task gets (``ttl_ms=None``:
    kept until the store drops it). Every change goes through the lifecycle table, so a
    finished task never changes again (a late answer of its work is dropped).
    """

    def __init__(
        self, store: TaskStore, ids: Iterator[str], *, ttl_ms: int | None = DEFAULT_TASK_TTL_MS,
        poll_interval_ms: int | None = DEFAULT_POLL_INTERVAL_MS,
    ) -> None:
        _check_durations(ttl_ms, poll_interval_ms)
        self.store = store
        self._ids = ids
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms

    # -- reading ------------------------------------------------------------------------------
    def find(self, task_id: Any, now: float, owner: str | None = None) -> TaskRecord:
        """The task ``task_id`` names; -32602 when it is not a known, unexpired task of
        ``owner`` (another principal's task is not found either: nothing tells it exists)."""
        if type(task_id) is not str or not task_id:
            raise RemoteProtocolError("taskId must be a non-empty string", code=ErrorCode.INVALID_PARAMS)
        record = self.store.get(task_id, now)
        if record is None or record.owner != owner:
            raise _not_found()
        return record

    def owned(self, task_id: str, now: float, owner: str | None) -> bool:
        """Whether ``task_id`` is a known, unexpired task of ``owner``."""
        record = self.store.get(task_id, now)
        return record is not None and record.owner == owner

    def get(self, task_id: str, now: float) -> TaskRecord | None:
        """The stored task, or ``None`` (unknown or expired)."""
        return self.store.get(task_id, now)

    def page(self, owner: str | None, now: float, cursor: str | None, size: int) -> tuple[list[TaskRecord], str | None]:
        """One page of ``owner``'s tasks, oldest first, and the cursor of the next (``None``:
        the last page). The cursor is the last task's id: -32602 when it is not a task of
        ``owner`` (any more), the answer to a cursor nobody issued (2025-11-25: Tasks: Protocol
        Errors)."""
        records = self.store.tasks_of(owner, now, cursor, size + 1)
        if records is None:
            raise RemoteProtocolError("Invalid cursor", code=ErrorCode.INVALID_PARAMS)
        more = len(records) > size
        records = records[:size]
        return records, (records[-1].task_id if more and records else None)

    @staticmethod
    def task_object(record: TaskRecord) -> dict[str, Any]:
        """The ``Task`` members (ext-tasks specification: Tasks), in the specification's order."""
        return _task_members(record, record.status.value, "ttlMs", "pollIntervalMs")

    @classmethod
    def detailed(cls, record: TaskRecord) -> dict[str, Any]:
        """The ``DetailedTask`` of ``tasks/get`` and ``notifications/tasks``: the task with its
        outstanding ``inputRequests``, its ``result`` or its ``error`` inlined by status."""
        task = cls.task_object(record)
        if record.status is TaskStatus.INPUT_REQUIRED:
            task["inputRequests"] = dict(record.input_requests)
        elif record.status is TaskStatus.COMPLETED:
            task["result"] = record.result or {}
        elif record.status is TaskStatus.FAILED:
            task["error"] = record.error or {"code": ErrorCode.INTERNAL_ERROR, "message": "Internal error"}
        return task

    # -- 2025-11-25 (Basic > Utilities > Tasks, experimental) ---------------------------------
    @staticmethod
    def session_status(record: TaskRecord) -> str:
        """The status a 2025-11-25 session reads: a tool call whose result has ``isError`` is
        ``failed`` there (Tasks: Task Execution Errors), ``completed`` in the extension."""
        result = record.result
        if record.status is TaskStatus.COMPLETED and result is not None and result.get("isError") is True:
            return TaskStatus.FAILED.value
        return record.status.value

    @classmethod
    def session_task(cls, record: TaskRecord) -> dict[str, Any]:
        """The 2025-11-25 ``Task`` (Data Types: Task): no outcome inlined, ``ttl`` and
        ``pollInterval`` in milliseconds, in the specification's order."""
        return _task_members(record, cls.session_status(record), "ttl", "pollInterval")

    @staticmethod
    def session_answer(record: TaskRecord, revision: str, request_id: RequestId) -> bytes:
        """The answer of ``tasks/result`` for a finished task (Result Retrieval): exactly what
        the call would have answered, its result as ``revision`` has it with the related-task
        ``_meta``, or its JSON-RPC error (a cancelled task's is -32603: nothing was answered)."""
        if record.status is TaskStatus.COMPLETED:
            result = session_result(revision, "tools/call", record.result or {})
            meta = result.get("_meta")
            result["_meta"] = {**(meta if type(meta) is dict else {}), RELATED_TASK_META_KEY: {"taskId": record.task_id}}
            return encode_result(request_id, result)
        error = record.error if record.status is TaskStatus.FAILED and record.error else _INTERNAL
        return encode_error_object(request_id, int(error["code"]), str(error.get("message", "")),
                                   error.get("data", msgspec.UNSET))

    # -- changes ------------------------------------------------------------------------------
    def create(
        self, tool: str, now: float, *, ttl_ms: int | None | msgspec.UnsetType = msgspec.UNSET,
        poll_interval_ms: int | None | msgspec.UnsetType = msgspec.UNSET, status_message: str | None = None,
        owner: str | None = None, session: str | None = None,
    ) -> TaskRecord:
        """A new ``working`` task for a call of ``tool`` (made on initialize-era session
        ``session``, if any), stored before this returns (the
        specification: a CreateTaskResult only once ``tasks/get`` would find the task).
        LocalProtocolError when the store is full or the host's id is not a non-empty str."""
        ttl = self.ttl_ms if ttl_ms is msgspec.UNSET else ttl_ms
        poll = self.poll_interval_ms if poll_interval_ms is msgspec.UNSET else poll_interval_ms
        _check_durations(ttl, poll)
        if status_message is not None and type(status_message) is not str:
            raise LocalProtocolError("status_message must be a str")
        task_id = next(self._ids, None)
        if type(task_id) is not str or not task_id:
            raise LocalProtocolError("task_ids must yield non-empty strings")
        record = TaskRecord(
            task_id=task_id, status=TASK.initial, created_at=now, updated_at=now, ttl_ms=ttl, poll_interval_ms=poll,
            status_message=status_message, tool=tool, owner=owner, session=session,
        )
        if not self.store.add(record, now):
            raise LocalProtocolError("The task store is full")
        return record

    def _move(self, record: TaskRecord, verb: str, now: float, **changes: Any) -> TaskRecord:
        status = TASK.move(record.status, verb)
        if record.terminal:
            return record  # absorbing: a finished task stays as it finished
        if status is not record.status:
            changes.setdefault("status_message", None)  # a message describes the state it was given in
        updated = msgspec.structs.replace(record, status=status, updated_at=max(now, record.updated_at), **changes)
        self.store.put(updated)
        return updated

    def set_status(self, task_id: str, message: str | None, now: float) -> TaskRecord | None:
        """A new ``statusMessage`` for a working task (``None`` when the task is gone)."""
        record = self.store.get(task_id, now)
        return None if record is None else self._move(record, "status", now, status_message=message)

    def ask(self, task_id: str, requests: Mapping[str, dict[str, Any]], state: Any, now: float) -> TaskRecord | None:
        """Park a working task on ``requests`` (plain JSON input requests, keys never used
        before by this task): ``input_required`` until every one is answered."""
        record = self.store.get(task_id, now)
        if record is None:
            return None
        reused = sorted(set(requests) & set(record.issued))
        if reused:
            raise LocalProtocolError(f"Input request keys are used once per task; reused: {', '.join(reused)}")
        if not requests:
            raise LocalProtocolError("A task asks for at least one input request")
        return self._move(
            record, "ask", now, input_requests=dict(requests), answers={}, issued=record.issued + tuple(requests),
            state=state,
        )

    def answer(self, record: TaskRecord, responses: Mapping[str, dict[str, Any]], now: float) -> TaskRecord:
        """Record the answers of ``tasks/update`` to outstanding requests (others are ignored:
        the specification); when none is left outstanding, the task is ``working`` again and
        its work runs with ``answers``."""
        if record.status is not TaskStatus.INPUT_REQUIRED:
            return record  # nothing outstanding: every key is unknown or already answered
        taken = {k: v for k, v in responses.items() if k in record.input_requests}
        if not taken:
            return record
        outstanding = {k: v for k, v in record.input_requests.items() if k not in taken}
        answers = {**record.answers, **taken}
        verb = "answer" if outstanding else "resume"
        return self._move(record, verb, now, input_requests=outstanding, answers=answers)

    def complete(self, task_id: str, result: dict[str, Any], now: float) -> TaskRecord | None:
        """The work's result (a tool error included): ``completed`` with ``result`` inlined."""
        record = self.store.get(task_id, now)
        return None if record is None else self._move(record, "complete", now, result=result, input_requests={})

    def fail(self, task_id: str, error: dict[str, Any], now: float, message: str | None = None) -> TaskRecord | None:
        """The work's JSON-RPC error: ``failed`` with ``error`` inlined."""
        record = self.store.get(task_id, now)
        if record is None:
            return None
        changes: dict[str, Any] = {"error": error, "input_requests": {}}
        if message is not None:
            changes["status_message"] = message
        return self._move(record, "fail", now, **changes)

    def cancel(self, record: TaskRecord, now: float) -> TaskRecord:
        """``tasks/cancel``: a task still running is ``cancelled`` at once (the work is told to
        stop; whatever it answers later is dropped); a finished one is left as it is."""
        return self._move(record, "cancel", now, input_requests={})
