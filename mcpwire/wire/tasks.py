"""The tasks extension's wire type, read by clients: a task as ``tasks/get``,
``notifications/tasks`` and a ``CreateTaskResult`` carry it.

Owns (ext-tasks specification, draft: Tasks, Task Status; its schema's $defs Task,
DetailedTask, CreateTaskResult, GetTaskResult): :class:`Task`, whose members are the union of
the DetailedTask variants (``inputRequests`` when ``input_required``, ``result`` when
``completed``, ``error`` when ``failed``), and which statuses are terminal. A 2025-11-25
session's ``Task`` (the revision's experimental tasks) reads into the same type
(:meth:`Task.from_session`).
"""

from __future__ import annotations

from typing import Any, Final, Literal

import msgspec
from msgspec import UNSET, UnsetType

from ..types._base import WireType

__all__ = ["TERMINAL_STATUSES", "Task"]

TERMINAL_STATUSES: Final = frozenset({"completed", "failed", "cancelled"})
"""Statuses a task never leaves (ext-tasks: Task Status)."""


class Task(WireType, frozen=True, kw_only=True):
    """A task, as a client reads it. ``ttl_ms`` is ``None`` for unlimited;
    ``poll_interval_ms`` the interval the server advises between ``tasks/get``."""

    task_id: str
    status: Literal["working", "input_required", "completed", "failed", "cancelled"]
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    status_message: str | UnsetType = UNSET
    poll_interval_ms: int | UnsetType = UNSET
    input_requests: dict[str, dict[str, Any]] | UnsetType = UNSET
    result: dict[str, Any] | UnsetType = UNSET
    error: dict[str, Any] | UnsetType = UNSET
    result_type: str | UnsetType = UNSET

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES

    @classmethod
    def from_session(cls, data: Any) -> Task:
        """A 2025-11-25 ``Task`` (Basic > Utilities > Tasks: ``ttl`` and ``pollInterval``, no
        outcome inlined) as this type; ``msgspec.ValidationError`` when it is not one."""
        if type(data) is not dict:
            raise msgspec.ValidationError("a Task must be an object")
        renamed = {_FROM_SESSION.get(k, k): v for k, v in data.items() if k not in _NOT_SESSION}
        return msgspec.convert(renamed, cls)


_FROM_SESSION: Final = {"ttl": "ttlMs", "pollInterval": "pollIntervalMs"}
_NOT_SESSION: Final = frozenset({"ttlMs", "pollIntervalMs", "inputRequests", "result", "error", "resultType"})
