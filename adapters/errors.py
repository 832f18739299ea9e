"""The errors of the client drivers (:mod:`mcpwire_adapters.client.session` and the transports)."""

from __future__ import annotations

from mcpwire import ErrorResult, ResultReceived

__all__ = [
    "InvalidResult", "McpwireAdapterError", "PeerGone", "RedisUnavailable", "ServerError", "SessionExpired", "TaskCancelled",
    "TransportError", "UsageError",
]


class McpwireAdapterError(Exception):
    """The root of every error the adapters define."""


class UsageError(McpwireAdapterError, ValueError):
    """The host called the adapters wrongly (a URL that is not http(s), an option out of range, a
    key or algorithm that cannot be used). A ``ValueError`` too, as before the root existed."""


class PeerGone(McpwireAdapterError):
    """Raised by a driver's ``emit`` when the client went away (closed, reset, stopped reading)."""


class RedisUnavailable(McpwireAdapterError):
    """Redis could not be reached (or refused us) when starting."""


class ServerError(McpwireAdapterError):
    """The server answered with a JSON-RPC error (``error`` is the :class:`ErrorResult`)."""

    def __init__(self, error: ErrorResult) -> None:
        super().__init__(f"{error.code}: {error.message}")
        self.error = error
        self.code = error.code
        self.data = error.data


class TaskCancelled(McpwireAdapterError):
    """A call that became a task (tasks extension) ended ``cancelled``: ``task`` is its last
    state (a :class:`mcpwire.tasks.Task`)."""

    def __init__(self, task: object) -> None:
        super().__init__(f"task {getattr(task, 'task_id', '?')} was cancelled")
        self.task = task


class TransportError(McpwireAdapterError):
    """The connection failed, timed out, or the response broke a limit."""


class InvalidResult(McpwireAdapterError):
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
