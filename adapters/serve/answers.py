"""What both HTTP drivers (trio/h11 and ASGI) do with an answer of the engine that is neither an
exchange nor a listen stream: one place for the initialize era's kinds of answer."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from mcpwire import Cancelled, InputArrived, ResponseBody, ResponseHead, SessionClosed
from mcpwire.sessions import HttpBatch
from mcpwire.tasks import TaskChanged

from ..app.app import App
from ..app.context import Send

__all__ = ["Answer", "deliver"]

Answer = Sequence[ResponseHead | ResponseBody] | InputArrived | SessionClosed | Cancelled | TaskChanged | HttpBatch
"""An answer of ``Server.receive_http`` but an exchange or a listen stream."""


async def deliver(
    app: App, reply: Answer, emit: Send, watch: Callable[[Callable[[], None]], Coroutine[Any, Any, None]],
) -> bool:
    """Send ``reply`` with ``emit``, telling ``app`` what it carries first: a session's awaited
    input (``InputArrived``), its DELETE (``SessionClosed``) or a posted cancellation
    (``Cancelled``); a task's change is told after its answer is sent (``TaskChanged``); a
    2025-03-26 batch runs on one response while ``watch`` watches the connection
    (``App.run_batch``); anything else is a complete reply. True when the client went away
    during a batch."""
    if isinstance(reply, InputArrived):
        app.input_arrived(reply)
        await emit(reply.reply)
    elif isinstance(reply, SessionClosed):
        app.session_closed(reply)
        await emit(reply.reply)
    elif isinstance(reply, Cancelled):
        app.request_cancelled(reply)
        await emit(reply.reply)
    elif isinstance(reply, TaskChanged):
        await emit(reply.reply)
        await app.task_changed(reply)
    elif isinstance(reply, HttpBatch):
        return await app.run_batch(reply, emit, watch)
    else:
        await emit(reply)
    return False
