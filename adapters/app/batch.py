"""A 2025-03-26 JSON-RPC batch answered on one response: its answers and cancellations handed in,
its requests run concurrently, every message each sends framed on one event stream
(:meth:`mcpwire_adapters.app.app.App.run_batch` calls it). It needs of the App only the three
methods of :class:`BatchHost`."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, Protocol

import anyio

import mcpwire
from mcpwire import InputArrived, ResponseBody
from mcpwire.sessions import HttpBatch

from .context import Send

__all__ = ["BatchHost", "run_batch"]


class BatchHost(Protocol):
    """What a batch needs of the App."""

    def input_arrived(self, arrived: InputArrived) -> None: ...

    def request_cancelled(self, cancelled: mcpwire.Cancelled) -> None: ...

    async def run_exchange(
        self, exchange: mcpwire.Exchange[Any], emit: Send,
        watch: Callable[[Callable[[], None]], Coroutine[Any, Any, None]],
    ) -> bool: ...


async def run_batch(
    app: BatchHost,
    batch: HttpBatch,
    emit: Send,
    watch: Callable[[Callable[[], None]], Coroutine[Any, Any, None]],
) -> bool:
    """Answer a JSON-RPC batch of a 2025-03-26 session on one response (``HttpBatch``):
    its answers and cancellations are handed in, its requests run concurrently, and every
    message each sends goes on one event stream, which ends when the last is answered
    (202 when the batch holds no request). ``watch`` watches the connection once for all of
    them. Returns True when the client went away."""
    for answer in batch.answers:
        if isinstance(answer, InputArrived):
            app.input_arrived(answer)
        elif isinstance(answer, mcpwire.Cancelled):
            app.request_cancelled(answer)
    if not batch.has_requests:
        await emit(batch.no_requests)
        return False
    lock = anyio.Lock()
    peer_gone = False

    async def send(outputs: Any) -> None:
        frames = batch.frames(outputs)
        if frames:
            async with lock:
                await emit(frames)

    async def unwatched(gone: Callable[[], None]) -> None:
        await anyio.sleep_forever()

    async with anyio.create_task_group() as tasks:

        def gone() -> None:
            nonlocal peer_gone
            peer_gone = True
            for answer in batch.answers:
                if isinstance(answer, mcpwire.HttpExchange):
                    answer.cancel()
            tasks.cancel_scope.cancel()

        async def run(exchange: mcpwire.HttpExchange) -> None:
            nonlocal peer_gone
            peer_gone |= await app.run_exchange(exchange, send, unwatched)

        await emit([batch.head()])
        watcher = anyio.CancelScope()

        async def watching() -> None:
            with watcher:
                await watch(gone)

        tasks.start_soon(watching)
        async with anyio.create_task_group() as work:
            for answer in batch.answers:
                if isinstance(answer, mcpwire.HttpExchange):
                    work.start_soon(run, answer)
                elif isinstance(answer, tuple):
                    await send(answer)
        watcher.cancel()
    if not peer_gone:
        await emit([ResponseBody(data=b"", more=False)])
    return peer_gone
