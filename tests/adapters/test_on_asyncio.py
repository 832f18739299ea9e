"""The ASGI driver's asyncio primitives: TaskScope ends only its own cancellation."""

from __future__ import annotations

import asyncio

import pytest

from mcpwire_adapters._on_asyncio import TaskScope, bounded, on_suspension, send_all_bounded


def test_a_cancel_from_inside_ends_at_the_scope() -> None:
    async def main() -> str:
        with TaskScope() as scope:
            scope.cancel()
            await asyncio.sleep(0)  # the cancellation is delivered here
            return "not reached"
        assert scope.cancel_called
        await asyncio.sleep(0)  # nothing left pending on the task
        return "ended at the scope"

    assert asyncio.run(main()) == "ended at the scope"


def test_a_cancel_from_another_task_ends_at_the_scope() -> None:
    async def main() -> str:
        scopes: list[TaskScope] = []

        async def handler() -> str:
            with TaskScope() as scope:
                scopes.append(scope)
                await asyncio.Event().wait()
            await asyncio.sleep(0)
            return "ended at the scope"

        task = asyncio.create_task(handler())
        await asyncio.sleep(0)
        scopes[0].cancel()
        return await task

    assert asyncio.run(main()) == "ended at the scope"


def test_a_cancellation_from_outside_still_propagates() -> None:
    async def main() -> None:
        scopes: list[TaskScope] = []

        async def handler() -> None:
            with TaskScope() as scope:
                scopes.append(scope)
                await asyncio.Event().wait()

        task = asyncio.create_task(handler())
        await asyncio.sleep(0)
        task.cancel()  # the server's own cancellation, then the scope's
        scopes[0].cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())


def test_a_scope_left_uncancelled_changes_nothing() -> None:
    async def main() -> int:
        with TaskScope():
            await asyncio.sleep(0)
        task = asyncio.current_task()
        assert task is not None
        return task.cancelling()

    assert asyncio.run(main()) == 0


def test_bounded_times_out_only_a_wait() -> None:
    async def at_once() -> str:
        return "at once"

    async def main() -> None:
        assert await bounded(at_once(), 0.0) == "at once"  # never suspends: no timer, no timeout
        with pytest.raises(TimeoutError):
            await bounded(asyncio.sleep(1), 0.01)

    asyncio.run(main())


def test_on_suspension_is_told_only_of_a_wait() -> None:
    async def at_once() -> str:
        return "at once"

    async def waits() -> str:
        await asyncio.sleep(0)
        return "after a wait"

    async def main() -> list[str]:
        told: list[str] = []
        assert await on_suspension(at_once(), lambda: told.append("at once")) == "at once"
        assert await on_suspension(waits(), lambda: told.append("waits")) == "after a wait"
        return told

    assert asyncio.run(main()) == ["waits"]


def test_send_all_bounded_sends_in_order_and_times_out_only_a_wait() -> None:
    sent: list[str] = []

    async def at_once(message: str) -> None:
        sent.append(message)

    def a_future(message: str) -> asyncio.Future[None]:  # any awaitable, not only a coroutine
        sent.append(message)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    async def stalls(message: str) -> None:
        sent.append(message)
        if message == "body":
            await asyncio.sleep(1)

    async def main() -> None:
        await send_all_bounded(at_once, ["head", "body"], 0.0)
        await send_all_bounded(a_future, ["head", "body"], 1.0)
        with pytest.raises(TimeoutError):
            await send_all_bounded(stalls, ["head", "body", "never"], 0.01)

    asyncio.run(main())
    assert sent == ["head", "body", "head", "body", "head", "body"]
