"""The tasks extension (``io.modelcontextprotocol/tasks``, ext-tasks specification), for hosts
that run tasks: the extension's identifier, a task as stored, where tasks live (the store
interface and its bounded in-memory default), the lifecycle, and the server's tasks.

A :class:`~mcpwire.Server` given ``tasks=Tasks(MemoryTaskStore(), ids)`` advertises the
extension, answers ``tasks/get`` itself, hands ``tasks/update`` and ``tasks/cancel`` that
change a task to the host as :class:`TaskChanged`, and lets a ``tools/call`` of a tool
registered with ``task_support`` become a task (``Exchange.create_task``). A durable store:
``mcpwire_adapters.state.sqlite_tasks.SqliteTaskStore``.

The same tasks serve 2025-11-25 sessions (Basic > Utilities > Tasks, experimental): the
``tasks`` capability, ``tools/call`` with ``params.task`` (``ToolCall.task_requested``),
``tasks/get``, ``tasks/result`` (:class:`TaskResultWanted` while the task runs),
``tasks/list``, ``tasks/cancel`` and ``notifications/tasks/status`` on the session's stream.
"""

from .client.events import TaskNotification
from .server.catalog import TaskSupport
from .server.events import TaskChanged, TaskResultWanted
from .server.states import TASK, TaskStatus
from .server.tasks import (
    DEFAULT_POLL_INTERVAL_MS, DEFAULT_TASK_TTL_MS, LOST_WORK, RELATED_TASK_META_KEY, MemoryTaskStore, TaskRecord, Tasks,
    TaskStore, iso_time, recover,
)
from .wire.capabilities import TASKS_EXTENSION
from .wire.tasks import TERMINAL_STATUSES, Task

__all__ = [
    "TASKS_EXTENSION", "Tasks", "TaskRecord", "TaskStore", "MemoryTaskStore", "TaskStatus", "TaskChanged",
    "TaskSupport", "TASK", "Task", "TERMINAL_STATUSES", "TaskNotification", "DEFAULT_TASK_TTL_MS",
    "DEFAULT_POLL_INTERVAL_MS", "iso_time", "recover", "LOST_WORK", "TaskResultWanted", "RELATED_TASK_META_KEY",
]
