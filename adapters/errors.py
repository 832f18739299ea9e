"""The errors of the client drivers (:mod:`mcpwire_adapters.session` and the transports)."""

from __future__ import annotations

from mcpwire import ErrorResult, ResultReceived

__all__ = ["InvalidResult", "ServerError", "SessionExpired", "TaskCancelled", "TransportError"]


class ServerError(Exception):
    """The server answered with a JSON-RPC error (``error`` is the :class:`ErrorResult`)."""

    def __init__(self, error: ErrorResult) -> None:
        super().__init__(f"{error.code}: {error.message}")
        self.error = error
        self.code = error.code
        self.data = error.data


class TaskCancelled(Exception):
    """A call that became a task (tasks extension) ended ``cancelled``: ``task`` is its last
    state (a :class:`mcpwire.tasks.Task`)."""

    def __init__(self, task: object) -> None:
        super().__init__(f"task {getattr(task, 'task_id', '?')} was cancelled")
        self.task = task


class TransportError(Exception):
    """The connection failed, timed out, or the response broke a limit."""


class InvalidResult(Exception):
    """A ``tools/call`` result that is not what it should be (``result.problem`` says why):
    it does not match CallToolResult, or its ``structuredContent`` breaks the tool's
    ``outputSchema`` (checked when the client has a validator; specification: Server > Tools,
    Output Schema). ``result`` is the result as received."""

    def __init__(self, result: ResultReceived) -> None:
        super().__init__(result.problem or "invalid result")
        self.result = result


class SessionExpired(TransportError):
    """The server no longer knows the initialize-era session (HTTP 404 on a request carrying
    its ``Mcp-Session-Id``, :attr:`session_id`). :meth:`Session.send` starts a new session and
    resends, once."""

    def __init__(self, message: str, session_id: str | None) -> None:
        super().__init__(message)
        self.session_id = session_id
