"""Following a ``tools/call`` that became a task (tasks extension, ext-tasks specification:
Task Polling, Task Update Requests, Task Cancellation; and 2025-11-25's experimental tasks,
whose outcome and input come with ``tasks/result``): what :meth:`Session.call_tool` does
when the server answers with a task.

Typed against :class:`~mcpwire_adapters.client.port.TaskSession`, not ``Session``: the session
module imports this one."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import msgspec

from mcpwire import ErrorCode, ErrorResult, ResultReceived
from mcpwire.tasks import Task
from mcpwire.types import InputRequest

from ..callbacks import maybe_await
from ..errors import InvalidResult, ServerError, TaskCancelled, TransportError
from .port import InputHandler, TaskSession

__all__ = ["TaskFollower", "TaskHandler", "caps_option"]


def caps_option(capabilities: Mapping[str, Any] | None) -> dict[str, Any]:
    return {} if capabilities is None else {"capabilities": capabilities}


TaskHandler = Callable[[Task], "Awaitable[None] | None"]
"""``on_task(task)``: each state a followed task is seen in (a :class:`mcpwire.tasks.Task`)."""

_MIN_POLL_SECONDS = 0.05  # a server that advises less is polled at this pace
_DEFAULT_POLL_SECONDS = 1.0  # a server that advises nothing


class TaskFollower:
    """One ``tools/call`` that became a task, followed to its end (see :meth:`Session.call_tool`)."""

    def __init__(self, session: TaskSession, name: str, arguments: Mapping[str, Any] | None,
                 capabilities: Mapping[str, Any] | None, on_input: InputHandler | None,
                 on_task: TaskHandler | None) -> None:
        self.session = session
        self.name = name
        self.arguments = arguments
        self.capabilities = capabilities
        self.on_input = on_input
        self.on_task = on_task
        self.answered: set[str] = set()

    async def run(self, task: Task) -> ResultReceived:
        session = self.session
        # A 2025-11-25 task's requests may come on the GET stream or stdio, naming the task.
        session.task_inputs[task.task_id] = self.on_input
        try:
            while True:
                if self.on_task is not None:
                    await maybe_await(self.on_task(task))
                if self.session.client.initialize_era and (task.terminal or task.status == "input_required"):
                    return await self._session_outcome(task)
                if task.terminal:
                    return self._outcome(task)
                pending = {k: v for k, v in (task.input_requests or {}).items() if k not in self.answered}
                if task.status == "input_required" and pending:
                    await self._answer(task.task_id, pending)
                else:
                    interval = task.poll_interval_ms
                    seconds = _DEFAULT_POLL_SECONDS if not isinstance(interval, int) else interval / 1000
                    await anyio.sleep(max(seconds, _MIN_POLL_SECONDS))
                task = await session.get_task(task.task_id, capabilities=self.capabilities)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                with contextlib.suppress(Exception):
                    await session.cancel_task(task.task_id, capabilities=self.capabilities)
            raise
        finally:
            session.task_inputs.pop(task.task_id, None)

    async def _answer(self, task_id: str, pending: Mapping[str, Any]) -> None:
        if self.on_input is None:
            with contextlib.suppress(ServerError, TransportError):
                await self.session.cancel_task(task_id, capabilities=self.capabilities)
            raise ServerError(ErrorResult(request_id=None, code=ErrorCode.INTERNAL_ERROR,
                                          message=f"task {task_id} asks for input: no input handler"))
        try:
            requests = {k: msgspec.convert(v, InputRequest) for k, v in pending.items()}
        except msgspec.ValidationError as exc:
            raise ServerError(ErrorResult(request_id=None, code=ErrorCode.INVALID_PARAMS,
                                          message=f"task {task_id} asks for input this client cannot read: {exc}")) from None
        answers = await maybe_await(self.on_input(requests))
        self.answered |= set(pending)  # each key is answered once (ext-tasks: Task Update Requests)
        await self.session.update_task(task_id, answers, capabilities=self.capabilities)

    async def _session_outcome(self, task: Task) -> ResultReceived:
        """2025-11-25 (Tasks: Result Retrieval): ``tasks/result`` waits for the outcome, and
        carries the task's requests to this client meanwhile (answered by ``on_input``)."""
        if task.status == "cancelled":
            raise TaskCancelled(task)
        client = self.session.client
        received = await self.session.send(client.task_result(task.task_id), on_input=self.on_input)
        request = client.call_tool(self.name, self.arguments)  # what was asked; not sent again
        result = client.cached_result(request, received.raw)
        if result.problem is not None:
            raise InvalidResult(result)
        return result

    def _outcome(self, task: Task) -> ResultReceived:
        if task.status == "completed":
            request = self.session.client.call_tool(self.name, self.arguments)  # what was asked; not sent again
            result = self.session.client.cached_result(request, msgspec.json.encode(task.result or {}))
            if result.problem is not None:
                raise InvalidResult(result)
            return result
        if task.status == "failed":
            error = task.error if isinstance(task.error, dict) else {}
            code = error.get("code")
            raise ServerError(ErrorResult(
                request_id=None, code=code if type(code) is int else ErrorCode.INTERNAL_ERROR,
                message=str(error.get("message", "Internal error")), data=error.get("data", msgspec.UNSET),
            ))
        raise TaskCancelled(task)
