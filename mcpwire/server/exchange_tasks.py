"""The tasks extension on one exchange: a ``tools/call`` that becomes a task.

Owns (ext-tasks specification, draft: Task Creation, Input Required Status; 2025-11-25: Tasks,
Creating Tasks, Input Required Status, Result Retrieval): answering a call with a task
(``CreateTaskResult``, or 2025-11-25's ``{task}``), and from then on recording the work's
outcome in the task instead of sending it: its result or error, its questions to the client
(``input_required`` until ``tasks/update`` answers them; on a 2025-11-25 session, requests that
wait in :attr:`~ExchangeTasks.task_requests` for a stream of the session), its status message;
answering a 2025-11-25 ``tasks/result``. :class:`~mcpwire.Exchange` inherits it; the verbs that
change a task when the exchange is one (``complete``, ``fail``, ``input_required``, ``resume``,
``cancel``) are ``exchange_verbs.py``'s, the tasks themselves ``tasks.py``'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, Mapping, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from ..wire.capabilities import missing_capabilities
from ..wire.errors import LocalProtocolError, MissingCapability
from .context import ServerContext
from .events import ServerEvent, TaskResultWanted
from .mrtr import round_data
from .session import Session
from .states import EXCHANGE, ExchangeState
from .tasks import RELATED_TASK_META_KEY, TaskRecord, Tasks
from .tokens import check_now

__all__ = ["ExchangeTasks", "MAX_SESSION_TASKS"]

O = TypeVar("O")  # the TypeVar of an exchange's output (bytes or HttpOutput)

MAX_SESSION_TASKS = 10_000

# The states as module constants: an Enum member read through its class costs a lookup in Python code.
_CANCELLED, _TASK = ExchangeState.CANCELLED, ExchangeState.TASK



def plain_round(requests: Mapping[str, Any], state: Any) -> dict[str, Any]:
    """A round of input requests as plain JSON, checked: requests and state encode as JSON, and
    every request is of a kind the protocol has. LocalProtocolError otherwise."""
    try:
        plain = {k: msgspec.to_builtins(v) for k, v in requests.items()}
        msgspec.json.encode(state)
    except (TypeError, ValueError, msgspec.EncodeError) as exc:
        raise LocalProtocolError(f"Input requests or state cannot be encoded as JSON: {exc}") from exc
    round_data(plain, None)
    return plain

class ExchangeTasks(Generic[O]):
    """The tasks-extension verbs of :class:`~mcpwire.Exchange` (see the module docstring)."""

    # What this part uses of the exchange, set by Exchange.__init__.
    event: ServerEvent
    state: ExchangeState
    session: Session | None
    revision: str
    _context: ServerContext

    if TYPE_CHECKING:
        @property
        def request_id(self) -> str | int: ...
        def _empty(self) -> O: ...
        def _next(self, verb: str) -> ExchangeState | None: ...
        def _finish(self, message: bytes, status: int, nxt: ExchangeState) -> O: ...
        def _finish_result(self, result: Any, nxt: ExchangeState) -> O: ...
        def _session_round(self, requests: Mapping[str, Any], state: Any) -> tuple[dict[str, Any], dict[str, Any]]: ...
        def _send_round(self, plain: dict[str, Any], state: Any, meta: dict[str, Any]) -> dict[int, bytes]: ...
        def fail(self, error: BaseException, *, now: float | None = None) -> O: ...

    task_id: str | None = None
    """The task this call became (:meth:`create_task`), else ``None``."""

    # A 2025-11-25 task's requests to its client, until answered: the class's until it asks.
    _task_asking = False
    _task_messages: dict[int, bytes] = {}

    def create_task(
        self, *, now: float, ttl_ms: int | None | UnsetType = UNSET, poll_interval_ms: int | None | UnsetType = UNSET,
        status_message: str | None = None,
    ) -> O:
        """Answer the call with a task (tasks extension: Task Creation): the task is stored,
        ``working``, and its ``CreateTaskResult`` is the output. The work then goes on: finish
        it with :meth:`complete`, :meth:`fail` or :meth:`input_required` (each with ``now``),
        which change the task instead of sending anything, as :meth:`progress` and :meth:`log`
        send nothing any more. Only for an event with ``task_allowed``; ``ttl_ms`` and
        ``poll_interval_ms`` default to the server's (``Tasks``). On an exchange the client
        already left, no task is made and nothing is sent."""
        tasks = self._context.tasks
        event = self.event
        if tasks is None or not getattr(event, "task_allowed", False):
            raise LocalProtocolError("Only a tools/call with task_allowed may become a task")
        nxt = EXCHANGE.move(self.state, "task")
        if self.state is _CANCELLED:
            return self._empty()
        record = tasks.create(
            event.name, now, ttl_ms=ttl_ms, poll_interval_ms=poll_interval_ms,  # type: ignore[union-attr]
            status_message=status_message, owner=event.owner,  # type: ignore[union-attr]
            session=self.session.id if self.session is not None else None,
        )
        self.task_id = record.task_id
        self.event = msgspec.structs.replace(event, task_id=record.task_id)
        if self.session is not None:
            # 2025-11-25 (Tasks: Creating Tasks): CreateTaskResult is {task}; the session hears
            # the task's status changes (bounded: a session keeps at most MAX_SESSION_TASKS).
            if len(self.session.task_ids) < MAX_SESSION_TASKS:
                self.session.task_ids.add(record.task_id)
            return self._finish_result({"task": tasks.session_task(record)}, nxt)
        result = {"resultType": "task", **tasks.task_object(record), "_meta": self._context.result_meta}
        return self._finish_result(result, nxt)

    def task_result(self, record: TaskRecord) -> O:
        """Answer a 2025-11-25 ``tasks/result`` (a :class:`TaskResultWanted` event) once its task
        is finished: the call's result with the related-task ``_meta``, or its JSON-RPC error
        (Tasks: Result Retrieval)."""
        event = self.event
        if not isinstance(event, TaskResultWanted) or record.task_id != event.task_id or not record.terminal:
            raise LocalProtocolError("task_result takes the finished task a tasks/result asked for")
        nxt = self._next("finish")
        message = Tasks.session_answer(record, self.revision, self.request_id)
        return self._empty() if nxt is None else self._finish(message, 200, nxt)

    def _task(self, now: float | None) -> tuple[Tasks, str, float]:
        if now is None:
            raise LocalProtocolError("A task's outcome needs now= (seconds since the epoch)")
        check_now(now)
        tasks = self._context.tasks
        assert tasks is not None and self.task_id is not None
        return tasks, self.task_id, now

    def _task_ask(self, requests: Mapping[str, Any], state: Any, now: float | None) -> O:
        tasks, task_id, at = self._task(now)
        plain = plain_round(requests, state)
        missing = missing_capabilities(plain, self.event.meta.client_capabilities)
        if missing:
            return self.fail(MissingCapability(missing), now=now)
        tasks.ask(task_id, plain, state, at)
        return self._empty()

    def set_task_status(self, message: str | None, *, now: float) -> None:
        """A new ``statusMessage`` for this call's task, while it works."""
        tasks, task_id, at = self._task(now)
        tasks.set_status(task_id, message, at)

    def resume_task(self, task: TaskRecord) -> ServerEvent:
        """``tasks/update`` answered every input request of this call's task
        (:class:`TaskChanged` with a working ``task``): the event to run the work again on, with
        ``input_responses`` (every answer the task got so far, each checked against what its key
        asked) and the ``state`` given with the latest requests."""
        if self.state is not _TASK or task.task_id != self.task_id:
            raise LocalProtocolError("resume_task takes the task this exchange created")
        # Every answer of the task so far, as a session's rounds give them (keys are never reused).
        answers = dict(getattr(self.event, "input_responses", None) or {})
        answers.update(task.answers)
        self.event = msgspec.structs.replace(self.event, input_responses=answers, state=task.state)
        return self.event

    def _session_task_ask(self, requests: Mapping[str, Any], state: Any, now: float | None) -> O:
        """2025-11-25: a task asks its client (Tasks: Input Required Status): the task is
        ``input_required`` and the requests, each with the related-task ``_meta``, wait in
        :attr:`task_requests` for the host to send on a stream of the session (a ``tasks/result``
        waiting on the task: :meth:`relay`; or the session's GET or stdio stream). The exchange
        then waits for the answers as any session request does (:meth:`resume`)."""
        tasks, task_id, at = self._task(now)
        plain, missing = self._session_round(requests, state)
        if missing:
            return self.fail(MissingCapability(missing), now=now)
        tasks.ask(task_id, plain, state, at)
        self._task_messages = self._send_round(plain, state, {RELATED_TASK_META_KEY: {"taskId": task_id}})
        self._task_asking = True
        return self._empty()

    @property
    def task_requests(self) -> list[bytes]:
        """2025-11-25: the requests of a task's :meth:`input_required` its client has not
        answered yet, to send on a stream of the session (JSON-RPC messages, unframed; each
        once: a stream that ends unread is the host's to make up for)."""
        return list(self._task_messages.values()) if self._task_asking else []
