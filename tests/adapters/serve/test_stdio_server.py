"""Integration tests of mcpwire_adapters.serve.stdio: a real subprocess driven through pipes.

The app is ``tests/stdio_app.py``, its driver on trio and, the same code, on asyncio
(``--backend``, the ``backend`` fixture). Each test writes NDJSON to the child's stdin, reads
whole lines from its stdout, closes stdin and requires exit code 0. Everything runs under
``trio.fail_after`` so nothing can hang.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import trio

from _wire_helpers import StdioChild

TIMEOUT = 15.0
APP = Path(__file__).resolve().parents[2] / "stdio_app.py"
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def call(
    name: str, request_id: int | str, arguments: dict[str, Any] | None = None, token: str | None = None
) -> dict[str, Any]:
    meta = {**META, "progressToken": token} if token is not None else META
    params = {"name": name, "arguments": arguments or {}, "_meta": meta}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


class Child(StdioChild):
    """The app in a subprocess, with a line reader on its stdout."""

    async def message(self) -> Any:
        message = await super().message()
        assert message is not None, "stdout ended early"
        return message


def with_child(*args: str) -> Callable[[Callable[[Child], Awaitable[None]]], Callable[[str], None]]:
    def decorate(test: Callable[[Child], Awaitable[None]]) -> Callable[[str], None]:
        def wrapper(backend: str) -> None:
            async def main() -> None:
                with trio.fail_after(TIMEOUT):
                    process = await trio.lowlevel.open_process(
                        [sys.executable, str(APP), *args, "--backend", backend],
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                    )
                    try:
                        await test(Child(process))
                    finally:
                        if process.returncode is None:
                            process.kill()
                            await process.wait()

            trio.run(main)

        wrapper.__name__ = wrapper.__qualname__ = test.__name__
        wrapper.__doc__ = test.__doc__
        return wrapper

    return decorate


@with_child()
async def test_two_requests_in_flight_answered_in_any_order(child: Child) -> None:
    await child.send(line(call("wait", 1, {"seconds": 0.5})) + line(call("echo", 2, {"text": "quick"})))
    first, second = await child.message(), await child.message()
    assert first["id"] == 2 and first["result"]["content"][0]["text"] == "quick"
    assert second["id"] == 1 and second["result"]["content"][0]["text"] == "waited 0.5"
    await child.close_stdin()
    assert await child.rest() == []
    assert await child.exit_code() == 0


@with_child()
async def test_cancelled_request_stops_with_no_late_response(child: Child) -> None:
    await child.send(line(call("slow", "s-1")))
    await trio.sleep(0.3)
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "s-1", "reason": "test"}}
    await child.send(line(cancel) + line(call("echo", 2, {"text": "after"})))
    answer = await child.message()
    assert answer["id"] == 2
    await child.close_stdin()
    assert await child.rest() == []  # nothing for s-1, ever
    assert await child.exit_code() == 0
    assert b"slow cancelled" in await child.stderr()


@with_child("--max-line-bytes", "512")
async def test_oversize_and_unreadable_lines_get_errors_with_null_id(child: Child) -> None:
    await child.send(b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "pad": "' + b"x" * 2000 + b'"}\n')
    oversize = await child.message()
    assert oversize["id"] is None and oversize["error"]["code"] == -32600
    await child.send(b"{this is not json\n")
    unreadable = await child.message()
    assert unreadable["id"] is None and unreadable["error"]["code"] == -32700
    await child.send(line(call("echo", 3, {"text": "still here"})))  # the framing survived
    assert (await child.message())["id"] == 3
    await child.close_stdin()
    assert await child.exit_code() == 0


@with_child()
async def test_progress_lines_precede_the_response(child: Child) -> None:
    await child.send(line(call("progress", 4, token="p-1")))
    messages = [await child.message() for _ in range(4)]
    assert [m.get("method") for m in messages] == ["notifications/progress"] * 3 + [None]
    assert [m["params"]["progress"] for m in messages[:3]] == [1, 2, 3]
    assert messages[3]["id"] == 4 and messages[3]["result"]["content"][0]["text"] == "done"
    await child.close_stdin()
    assert await child.exit_code() == 0


@with_child()
async def test_eof_in_the_middle_of_a_line_still_reads_it(child: Child) -> None:
    await child.send(line(call("echo", 5, {"text": "first"})) + line(call("wait", 6, {"seconds": 0.2}))[:-1])
    await child.close_stdin()
    messages = await child.rest()
    assert sorted(m["id"] for m in messages) == [5, 6]  # the unterminated line was processed
    assert await child.exit_code() == 0


@with_child()
async def test_listen_stream_gets_events_and_its_result_at_eof(child: Child) -> None:
    listen = {
        "jsonrpc": "2.0",
        "id": "L",
        "method": "subscriptions/listen",
        "params": {"notifications": {"toolsListChanged": True}, "_meta": META},
    }
    await child.send(line(listen))
    ack = await child.message()
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    await child.send(line(call("change", 7)))
    messages = [await child.message(), await child.message()]
    changed = next(m for m in messages if m.get("method") == "notifications/tools/list_changed")
    assert changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "L"
    assert any(m.get("id") == 7 for m in messages)
    await child.close_stdin()
    final = await child.rest()
    assert len(final) == 1 and final[0]["id"] == "L" and final[0]["result"]["resultType"] == "complete"
    assert await child.exit_code() == 0


@with_child()
async def test_a_closed_stdout_stops_the_server_at_once(child: Child) -> None:
    assert child.process.stdout is not None
    await child.process.stdout.aclose()  # nobody reads the answers any more
    await child.send(line(call("echo", 1, {"text": "lost"})) + line(call("wait", 2, {"seconds": 30})))
    with trio.fail_after(10):  # the 30 s call is not waited for, and stdin is still open
        assert await child.exit_code() == 0


@with_child()
async def test_messages_larger_than_a_pipe_buffer_pass_both_ways(child: Child) -> None:
    text = "x" * (1024 * 1024)  # 1 MiB each way: many reads, and writes that wait for the pipe to drain
    await child.send(line(call("echo", 9, {"text": text})))
    answer = await child.message()
    assert answer["id"] == 9 and answer["result"]["content"][0]["text"] == text
    await child.close_stdin()
    assert await child.exit_code() == 0


@with_child("--max-in-flight", "4")
async def test_pipelined_calls_past_max_in_flight_wait_for_room(child: Child) -> None:
    """200 calls of a slow tool written at once, 4 in flight at most: the driver holds the rest
    back (and stops reading) instead of refusing them; each gets its real answer, and no more
    than 4 ever ran at once."""
    calls = b"".join(line(call("busy", i, {"n": i, "seconds": 0.01})) for i in range(200))
    async with trio.open_nursery() as nursery:  # written while the answers are read
        nursery.start_soon(child.send, calls)
        answers = [await child.message() for _ in range(200)]
    assert sorted(a["id"] for a in answers) == list(range(200))
    peaks = set()
    for answer in answers:
        text = answer["result"]["content"][0]["text"]
        head, _, peak = text.partition("; at most ")
        assert head == f"busy {answer['id']}", answer
        peaks.add(int(peak.removesuffix(" at once")))
    assert max(peaks) == 4  # 4 at once, never more
    await child.close_stdin()
    assert await child.rest() == []
    assert await child.exit_code() == 0


ERA_INIT = {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "t", "version": "1"}}}


def era_call(name: str, request_id: int, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments or {}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


@with_child("--max-in-flight", "4", "--max-held", "1")
async def test_handlers_waiting_for_the_client_get_its_answers_while_the_driver_is_full(child: Child) -> None:
    """An initialize-era session: 4 calls of greet fill the driver, each asking the client for a
    name (elicitation/create), and a fifth call is held. The answers come after it on stdin: a
    driver that stopped reading there would never see them (a deadlock); ours reads on while
    every request in flight waits for the client."""
    await child.send(line(ERA_INIT))
    assert (await child.message())["result"]["protocolVersion"] == "2025-11-25"
    await child.send(line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    await child.send(b"".join(line(era_call("greet", i)) for i in range(4)) + line(era_call("echo", 4, {"text": "held"})))
    asked = [await child.message() for _ in range(4)]
    assert {a["method"] for a in asked} == {"elicitation/create"}
    answers = [{"jsonrpc": "2.0", "id": a["id"], "result": {"action": "accept", "content": {"name": f"Ada{a['id']}"}}}
               for a in asked]
    await child.send(b"".join(line(a) for a in answers))
    results = {m["id"]: m["result"]["content"][0]["text"] for m in [await child.message() for _ in range(5)]}
    assert results[4] == "held"
    assert sorted(results[i] for i in range(4)) == sorted(f"Hello, Ada{a['id']}" for a in asked)
    await child.close_stdin()
    assert await child.rest() == []
    assert await child.exit_code() == 0
