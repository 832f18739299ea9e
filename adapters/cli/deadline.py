"""The deadline of a whole tool call: ``mcpwire call --timeout``.

A read timeout alone never fires while the server keeps sending (progress, pings, requests of
its own) without ever answering, so ``--timeout`` also bounds the call as a whole: its input
rounds, the server's requests, a task followed to its end (specification: Basic > Patterns >
Cancellation, Timeouts). Leaving the deadline cancels the call the way its transport does
(HTTP: the connection closed, on an initialize-era session with ``notifications/cancelled``;
stdio: ``notifications/cancelled``), then :class:`TransportError` says so. The time the person
at the terminal takes to answer the server's questions is not counted: ``--timeout`` is how
long to wait for the server, not for the user.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any

import anyio

from mcpwire.types import InputRequest

from ..errors import TransportError

__all__ = ["CallDeadline"]


class CallDeadline:
    """``with CallDeadline(seconds, "tools/call 'echo'") as deadline: await session.call_tool(...,
    on_input=deadline.off_the_clock(answerer))``: past ``seconds`` the call is cancelled and
    :class:`TransportError` raised on leaving."""

    def __init__(self, seconds: float, what: str) -> None:
        self.seconds = seconds
        self.what = what
        self._scope = anyio.CancelScope()

    def __enter__(self) -> CallDeadline:
        self._scope.deadline = anyio.current_time() + self.seconds
        self._scope.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> bool:
        swallowed = bool(self._scope.__exit__(kind, exc, tb))
        if swallowed and self._scope.cancelled_caught:
            raise TransportError(f"no answer to {self.what} within {self.seconds:g} s (--timeout); "
                                 "the call was cancelled") from None
        return swallowed

    def off_the_clock(self, answer: Callable[[dict[str, InputRequest]], Mapping[str, Any]],
                      ) -> Callable[[dict[str, InputRequest]], Mapping[str, Any]]:
        """``answer`` (a plain function that asks the person at the terminal), with the time it
        takes added to the deadline."""
        def answered(requests: dict[str, InputRequest]) -> Mapping[str, Any]:
            started = anyio.current_time()
            try:
                return answer(requests)
            finally:
                self._scope.deadline += anyio.current_time() - started
        return answered
