""":class:`ToolError`, raised in a tool handler to answer with a tool execution error.

It needs only msgspec (through :mod:`mcpwire_adapters.errors`, which needs the core): like
:class:`~mcpwire_adapters.app.need_input.NeedInput`, ``from mcpwire_adapters import ToolError``
loads neither anyio, trio nor h11.
"""

from __future__ import annotations

from ..errors import McpwireAdapterError

__all__ = ["ToolError"]


class ToolError(McpwireAdapterError):
    """Raise ``ToolError(message)`` in a tool handler: the call is answered with a result
    whose ``isError`` is true and whose one text block is ``message`` (a tool execution error,
    which the model sees and may act on), not with a JSON-RPC error. Nothing is logged: it is
    an answer, not a failure.

    Any other exception in a tool handler is answered the same way with a generic text
    (``Tool 'name' failed``), and is logged and handed to ``App(on_error=...)``; see
    :class:`~mcpwire_adapters.App`. A :class:`mcpwire.ProtocolError` is still a JSON-RPC
    error with its code."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
