"""The ASGI driver's asyncio primitives: TaskScope and LateTimeout end only their own cancellation;
asgi_call, the ASGI entry, steps a request as run_until_wait does."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from mcpwire_adapters.serve.asgi.on_asyncio import LateTimeout, TaskScope, asgi_call, bounded, on_trio, run_until_wait


def this_task() -> asyncio.Task[object]:
    task = asyncio.current_task()
    assert task is not None
    return task


def test_on_trio_tells_trio_from_asyncio() -> None:
    import trio

    async def on_asyncio() -> bool:
        return on_trio()

    async def in_trio() -> bool:
        return on_trio()

    assert asyncio.run(on_asyncio()) is False
    assert trio.run(in_trio) is True


def test_a_cancel_from_inside_ends_at_the_scope() -> None:
    async def main() -> str:
        with TaskScope(this_task()) as scope:
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
            with TaskScope(this_task()) as scope:
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
            with TaskScope(this_task()) as scope:
                scopes.append(scope)
                await asyncio.Event().wait()

        task = asyncio.create_task(handler())
        await asyncio.sleep(0)
        task.cancel()  # the server's own cancellation, then the scope's
        scopes[0].cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())


def test_a_cancellation_swallowed_before_the_scope_is_not_the_scopes() -> None:
    # The task was cancelled once before the scope (and the handler went on), as when the ASGI
    # app makes a handler's scope late: the scope's own cancellation ends at the scope, and the
    # task still counts the earlier one.
    async def main() -> int:
        try:
            this_task().cancel()
            await asyncio.sleep(0)
        except asyncio.CancelledError:
            pass
        with TaskScope(this_task()) as scope:
            scope.cancel()
            await asyncio.sleep(0)
        return this_task().cancelling()

    assert asyncio.run(main()) == 1


def test_a_scope_left_uncancelled_changes_nothing() -> None:
    async def main() -> int:
        with TaskScope(this_task()):
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


def test_run_until_wait_is_told_only_of_a_wait() -> None:
    async def at_once() -> str:
        return "at once"

    async def waits(done: list[str]) -> None:
        done.append("before the wait")
        await asyncio.sleep(0)
        done.append("after the wait")

    async def fails() -> None:
        raise ValueError("at once")

    async def main() -> list[str]:
        told: list[str] = []
        assert run_until_wait(at_once(), lambda: told.append("at once")) is None  # finished: nothing to await
        done: list[str] = []
        rest = run_until_wait(waits(done), lambda: told.append("waits"))
        assert rest is not None and done == ["before the wait"] and told == ["waits"]  # told as the wait began
        await rest
        assert done == ["before the wait", "after the wait"]
        with pytest.raises(ValueError):
            run_until_wait(fails(), lambda: told.append("fails"))
        return told

    assert asyncio.run(main()) == ["waits"]


def test_run_until_wait_abandons_the_wait_it_is_told_to() -> None:
    """``suspended()`` returning an exception: thrown in where the coroutine waits, which ends
    that wait (nothing is left waiting on it); the coroutine goes on from where it catches it."""

    class Abandon(Exception):
        pass

    async def reads(event: asyncio.Event, then_wait: bool) -> str:
        try:
            await event.wait()
        except Abandon:
            if then_wait:
                await asyncio.sleep(0)
            return "abandoned"
        return "read"

    async def main() -> None:
        event = asyncio.Event()
        assert run_until_wait(reads(event, then_wait=False), Abandon) is None  # finished where it caught it
        rest = run_until_wait(reads(event, then_wait=True), Abandon)
        assert rest is not None  # it waits again after catching it: the rest is awaited as usual
        assert await rest == "abandoned"
        assert not event._waiters  # the abandoned waits left nothing behind
        with pytest.raises(Abandon):
            run_until_wait(asyncio.sleep(1), Abandon)  # not caught: raised here

    asyncio.run(main())


class Abandon(Exception):
    pass


class Served:
    """A request as asgi_call serves it: ``serve()`` gives ``coro``, ``suspended()`` is ``told``."""

    def __init__(self, coro: Coroutine[Any, Any, None], told: Callable[[], BaseException | None], driving: bool) -> None:
        self.driving = driving
        self._coro = coro
        self._told = told

    def serve(self) -> Coroutine[Any, Any, None]:
        return self._coro

    def suspended(self) -> BaseException | None:
        return self._told()


async def _other_scope(served: Served, scope: Any, receive: None, send: None) -> None:
    raise AssertionError("an http scope only")


def _itself(served: Served, scope: Any, receive: None, send: None) -> Served:
    return served


SERVE = asgi_call(_itself, _other_scope)


def stepping_cases() -> dict[str, Callable[[list[str]], tuple[Coroutine[Any, Any, None], Callable[[], Any]]]]:
    """Coroutines that finish, wait, fail or catch an abandoned wait, each with its ``suspended``;
    what happens is written to the list each is given."""

    async def at_once(log: list[str]) -> None:
        log.append("ran")

    async def waits(log: list[str]) -> None:
        log.append("before the wait")
        await asyncio.sleep(0)
        log.append("after the wait")

    async def fails(log: list[str]) -> None:
        log.append("ran")
        raise ValueError("at once")

    async def fails_after_a_wait(log: list[str]) -> None:
        await asyncio.sleep(0)
        raise ValueError("after a wait")

    async def reads(log: list[str], then_wait: bool) -> None:
        try:
            await asyncio.Event().wait()
        except Abandon:
            log.append("abandoned")
            if then_wait:
                await asyncio.sleep(0)
                log.append("waited again")

    def told(log: list[str], answer: BaseException | None = None) -> Callable[[], BaseException | None]:
        def suspended() -> BaseException | None:
            log.append("suspended")
            return answer

        return suspended

    return {
        "at-once": lambda log: (at_once(log), told(log)),
        "waits": lambda log: (waits(log), told(log)),
        "fails": lambda log: (fails(log), told(log)),
        "fails-after-a-wait": lambda log: (fails_after_a_wait(log), told(log)),
        "abandoned-then-done": lambda log: (reads(log, then_wait=False), told(log, Abandon())),
        "abandoned-then-waits": lambda log: (reads(log, then_wait=True), told(log, Abandon())),
        "abandoned-uncaught": lambda log: (asyncio.sleep(1), told(log, Abandon())),
    }


@pytest.mark.parametrize("case, driving", [
    *((case, True) for case in stepping_cases()),
    *((case, False) for case in stepping_cases() if not case.startswith("abandoned")),  # told of no wait: none abandoned
])
def test_asgi_call_steps_a_request_as_run_until_wait(case: str, driving: bool) -> None:
    """asgi_call's ``http`` scope, run by hand while driving, does what
    ``rest = run_until_wait(serve(), suspended)`` and ``await rest`` do; not driving, what
    ``await serve()`` does: the same steps, the same calls of ``suspended``, the same outcome."""

    async def general(log: list[str]) -> None:
        coro, suspended = stepping_cases()[case](log)
        if not driving:
            await coro
            return
        rest = run_until_wait(coro, suspended)
        if rest is not None:
            await rest

    async def fast(log: list[str]) -> None:
        await SERVE(Served(*stepping_cases()[case](log), driving=driving), {"type": "http"}, None, None)

    def outcome(way: Callable[[list[str]], Coroutine[Any, Any, None]]) -> tuple[list[str], str]:
        log: list[str] = []
        try:
            asyncio.run(asyncio.wait_for(way(log), 5))  # a wait left unabandoned ends as TimeoutError
        except Exception as exc:  # noqa: BLE001 - compared
            return log, f"{type(exc).__name__}: {exc}"
        return log, "returned"

    assert outcome(fast) == outcome(general)


def test_on_trio_is_false_on_asyncio_without_trio_imported() -> None:
    """Without trio imported the answer comes from one probe of ``sys.modules``."""
    code = (
        "import asyncio, sys\n"
        "from mcpwire_adapters.serve.asgi.on_asyncio import on_trio\n"
        "async def main():\n"
        "    return on_trio()\n"
        "print('trio' in sys.modules, asyncio.run(main()))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == ["False", "False"]


def test_a_late_timeout_that_expires_ends_its_step() -> None:
    async def main() -> int:
        timer = LateTimeout(this_task(), 0.01)
        try:
            await asyncio.sleep(1)
        except asyncio.CancelledError:
            assert timer.end(True)  # its own: the step timed out
        else:
            raise AssertionError("not cancelled")
        await asyncio.sleep(0)  # nothing left pending on the task
        return this_task().cancelling()

    assert asyncio.run(main()) == 0


def test_a_late_timeout_disarmed_in_time_changes_nothing() -> None:
    async def main() -> int:
        timer = LateTimeout(this_task(), 0.05)
        await asyncio.sleep(0)
        assert not timer.end(False)
        await asyncio.sleep(0.1)  # past the deadline: disarmed, nothing fires
        return this_task().cancelling()

    assert asyncio.run(main()) == 0


def test_a_cancellation_from_outside_during_a_late_timeout_still_propagates() -> None:
    async def main() -> None:
        ended: list[bool] = []
        task = this_task()

        async def step() -> None:
            timer = LateTimeout(task, 0.01)
            asyncio.get_running_loop().call_later(0.01, task.cancel)  # the server's own, as the timer fires
            try:
                await asyncio.sleep(1)
            except asyncio.CancelledError:
                ended.append(timer.end(True))
                raise

        with pytest.raises(asyncio.CancelledError):
            await step()
        assert ended == [False] and task.cancelling() == 1  # the timer took back its own only

    asyncio.run(main())
