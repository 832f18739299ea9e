"""The pipe between a WSGI thread and the event loop (``mcpwire_adapters.serve.wsgi.pipe``), with a
real asyncio loop in a thread of its own and this thread as the WSGI thread: what one lock
released once hands over, the bound on waiting output, and a departure told to the loop."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar

import pytest

from mcpwire import ResponseBody, ResponseHead
from mcpwire_adapters.errors import PeerGone
from mcpwire_adapters.serve.wsgi.pipe import ADMITTED, END, Pipe

T = TypeVar("T")
TIMEOUT = 10.0
HEAD = ResponseHead(status=200, headers=((b"content-type", b"text/event-stream"),))


class LoopInThread:
    """An asyncio loop run by a daemon thread, stopped at the end of the test."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def wake(self, callback: Callable[[], object]) -> None:
        self.loop.call_soon_threadsafe(callback)

    def result(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(TIMEOUT)

    def call(self, function: Callable[[], T]) -> T:
        async def run() -> T:
            return function()

        return self.result(run())

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(TIMEOUT)
        self.loop.close()


@pytest.fixture
def loop() -> Iterator[LoopInThread]:
    running = LoopInThread()
    yield running
    running.stop()


def test_what_the_loop_offers_wakes_the_waiting_thread_once(loop: LoopInThread) -> None:
    pipe = Pipe(loop.wake, 4)
    assert pipe.get(0.05) is None  # nothing yet: the wait ends by its timeout
    loop.wake(lambda: pipe.offer(ADMITTED))
    assert pipe.get(TIMEOUT) is ADMITTED
    batch: list[ResponseHead | ResponseBody] = [HEAD, ResponseBody(data=b"x", more=False)]

    def answer() -> None:
        pipe.offer(batch)
        pipe.end(True)

    loop.call(answer)
    assert pipe.get(TIMEOUT) == batch and pipe.started
    assert pipe.get(TIMEOUT) is END
    assert pipe.get(0.05) is None


def test_an_item_that_comes_as_the_wait_times_out_is_not_lost(loop: LoopInThread) -> None:
    # Offers land on either side of the WSGI thread's timeout, many times over: every one is got, in order.
    pipe = Pipe(loop.wake, 1000)
    got: list[object] = []
    for number in range(200):
        loop.loop.call_soon_threadsafe(loop.loop.call_later, 0.0005, pipe.offer, [ResponseBody(data=b"%d" % number)])
        item = pipe.get(0.0005)
        if item is not None:
            got.append(item)
    deadline = time.monotonic() + TIMEOUT
    while len(got) < 200 and time.monotonic() < deadline:
        item = pipe.get(0.05)
        if item is not None:
            got.append(item)
    assert [item[0].data for item in got] == [b"%d" % n for n in range(200)]  # type: ignore[index]


def test_a_put_beyond_capacity_waits_for_the_thread_to_take_one(loop: LoopInThread) -> None:
    pipe = Pipe(loop.wake, 1)
    first, second = [ResponseBody(data=b"1", more=True)], [ResponseBody(data=b"2", more=False)]
    loop.result(pipe.put(first, TIMEOUT))
    waiting = asyncio.run_coroutine_threadsafe(pipe.put(second, TIMEOUT), loop.loop)
    time.sleep(0.1)
    assert not waiting.done()  # no room: the put waits, and the loop runs on
    assert loop.call(lambda: "running") == "running"
    assert pipe.get(TIMEOUT) == first
    waiting.result(TIMEOUT)  # room came: the put went through
    assert pipe.get(TIMEOUT) == second


def test_a_put_that_finds_no_room_in_time_is_a_departure(loop: LoopInThread) -> None:
    pipe = Pipe(loop.wake, 1)
    loop.result(pipe.put([ResponseBody(data=b"1", more=True)], TIMEOUT))
    with pytest.raises(PeerGone, match="read nothing for 0.1 s"):
        loop.result(pipe.put([ResponseBody(data=b"2", more=True)], 0.1))


def test_a_departure_is_told_to_the_armed_callback_on_the_loop(loop: LoopInThread) -> None:
    pipe = Pipe(loop.wake, 4)
    told: list[threading.Thread] = []
    called = threading.Event()

    def gone() -> None:
        told.append(threading.current_thread())
        called.set()

    loop.call(lambda: pipe.arm(gone))
    pipe.depart()
    pipe.depart()  # idempotent
    assert called.wait(TIMEOUT) and told == [loop.thread]
    with pytest.raises(PeerGone, match="the client is gone"):
        loop.result(pipe.put([HEAD], TIMEOUT))
    # Armed after the departure: called soon all the same.
    called.clear()
    loop.call(lambda: pipe.arm(gone))
    assert called.wait(TIMEOUT) and told == [loop.thread, loop.thread]


def test_a_callback_disarmed_before_the_departure_is_never_called(loop: LoopInThread) -> None:
    pipe = Pipe(loop.wake, 4)
    called: list[str] = []
    loop.call(lambda: pipe.arm(lambda: called.append("gone")))
    loop.call(lambda: pipe.arm(None))
    pipe.depart()
    loop.call(lambda: None)  # the departure's callback ran on the loop before this
    assert called == []


def test_watch_returns_once_the_client_left(loop: LoopInThread) -> None:
    pipe = Pipe(loop.wake, 4)
    told: list[str] = []
    watching = asyncio.run_coroutine_threadsafe(pipe.watch(lambda: told.append("gone")), loop.loop)
    time.sleep(0.05)
    assert not watching.done()
    pipe.depart()
    watching.result(TIMEOUT)
    assert told == ["gone"]
