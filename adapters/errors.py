"""Every error the adapters define, under one root: ``except McpwireAdapterError`` catches anything
``mcpwire_adapters`` raised of its own. The tree (docs/errors.md draws it)::

    McpwireAdapterError
    ├── UsageError (also a ValueError)   the host called the adapters wrongly: a bad URL, option or key
    ├── TransportError                   the connection failed, timed out, or a response broke a limit
    │   ├── MaybeDelivered               the request was sent, its answer was lost: it may have run
    │   └── SessionExpired               the server no longer knows the initialize-era session
    ├── ServerError                      the server answered with a JSON-RPC error
    ├── InvalidResult                    a tools/call result that is not what it should be
    ├── TaskCancelled                    a call that became a task ended cancelled
    ├── PeerGone                         a driver's emit found the client gone
    ├── RedisUnavailable                 Redis could not be reached when starting
    ├── ToolError                        (mcpwire_adapters.app) raised in a tool handler: an isError result
    ├── CliError                         (mcpwire_adapters.cli) an expected failure of the command
    ├── ProbeFailed                      (mcpwire_adapters.testing.probe.pytest_plugin) a probe check failed
    └── ProbeWarning                     (mcpwire_adapters.testing.probe.pytest_plugin) a check passed with a warning (a UserWarning too)

Errors of the core pass through as they are (the :class:`mcpwire.ProtocolError` tree, and
:class:`mcpwire.auth.AuthError`); a wrong argument type raises Python's own ``TypeError``. This
module imports only the core (and that only for type annotations, so ``import mcpwire_adapters``
stays light).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcpwire import ErrorResult, ResultReceived
    from mcpwire.types import RequestId

__all__ = [
    "InvalidResult", "MaybeDelivered", "McpwireAdapterError", "PeerGone", "RedisUnavailable", "ServerError", "SessionExpired", "TaskCancelled",
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


class MaybeDelivered(TransportError):
    """The request was written to the server, then the transport failed before its answer was
    read whole: the connection was closed or reset, the HTTP could not be read, or it stayed
    silent past ``read_timeout``. The server may have received the request and processed it (run
    the tool, say), so it was not sent again: POST is not idempotent (RFC 9110 section 9.2.2),
    and resending is the caller's decision. :attr:`method` and :attr:`request_id` name the
    request; ``__cause__`` is the failure underneath, when there was one."""

    def __init__(self, message: str, method: str, request_id: RequestId) -> None:
        super().__init__(message)
        self.method = method
        self.request_id = request_id


class SessionExpired(TransportError):
    """The server no longer knows the initialize-era session (HTTP 404 on a request carrying
    its ``Mcp-Session-Id``, :attr:`session_id`). :meth:`Session.send` starts a new session and
    resends, once."""

    def __init__(self, message: str, session_id: str | None) -> None:
        super().__init__(message)
        self.session_id = session_id
