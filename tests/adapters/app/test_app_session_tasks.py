"""2025-11-25's tasks end to end (Basic > Utilities > Tasks): an App's task tools behind our trio
HTTP server, spoken to by a plain HTTP client (the standard library's, in threads) as a
2025-11-25 client does: ``params.task`` makes a task, ``tasks/result`` waits for its outcome,
``tasks/cancel`` stops its work, and every status change reaches the session's GET stream as
``notifications/tasks/status``. Over stdio the same, on the connection's one channel."""

from __future__ import annotations

import http.client
import json
import queue
import threading
from typing import Any

import trio
import trio.testing
from test_app_tasks import make_app

from mcpwire_adapters.serve.trio_h11.server import serve_http
from mcpwire_adapters.serve.stdio import serve_stdio

RELATED = "io.modelcontextprotocol/related-task"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "c", "version": "1"}}}


class Peer:
    """A 2025-11-25 client over plain HTTP: one connection per request, as simple as it gets."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

    def post(self, message: dict[str, Any]) -> Any:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=20)
        try:
            conn.request("POST", "/mcp", json.dumps(message).encode(), self.headers)
            response = conn.getresponse()
            body = response.read()
            if "mcp-session-id" not in {k.lower() for k in self.headers} and response.getheader("Mcp-Session-Id"):
                self.headers["Mcp-Session-Id"] = str(response.getheader("Mcp-Session-Id"))
                self.headers["MCP-Protocol-Version"] = "2025-11-25"
            if not body:
                return response.status
            if response.getheader("Content-Type", "").startswith("text/event-stream"):
                frames = [json.loads(line[5:]) for line in body.decode().splitlines() if line.startswith("data:") and line[5:].strip()]
                return frames[-1]
            return json.loads(body)
        finally:
            conn.close()

    def stream_until_request(self, message: dict[str, Any]) -> Any:
        """POST ``message`` and read its SSE stream up to the first request from the server,
        then hang up (2025-11-25 Tasks: a client may leave a tasks/result stream at any time)."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=20)
        try:
            conn.request("POST", "/mcp", json.dumps(message).encode(), self.headers)
            response = conn.getresponse()
            assert response.getheader("Content-Type", "").startswith("text/event-stream")
            while True:
                line = response.fp.readline()
                assert line, "the stream ended before a request came"
                if line.startswith(b"data:") and line[5:].strip():
                    got = json.loads(line[5:])
                    if "method" in got and "id" in got:
                        return got
        finally:
            conn.close()

    def listen(self, into: queue.Queue[Any], stop: threading.Event) -> None:
        """The session's GET stream: every message it carries goes into ``into``."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        conn.request("GET", "/mcp", headers={**self.headers, "Accept": "text/event-stream"})
        response = conn.getresponse()
        assert response.status == 200
        while not stop.is_set():
            line = response.fp.readline()
            if not line:
                break
            if line.startswith(b"data:") and line[5:].strip():
                into.put(json.loads(line[5:]))
        conn.close()


def rpc(method: str, params: dict[str, Any], id: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": params}


def statuses(events: queue.Queue[Any], task_id: str, until: str) -> list[str]:
    seen: list[str] = []
    while until not in seen:
        message = events.get(timeout=20)
        if message.get("method") == "notifications/tasks/status" and message["params"]["taskId"] == task_id:
            seen.append(message["params"]["status"])
    return seen


def test_over_http_a_task_is_made_waited_for_cancelled_and_heard_on_the_get_stream() -> None:
    async def main() -> None:
        app, seen = make_app()
        async with trio.open_nursery() as nursery:
            host, port = await nursery.start(serve_http, app)
            peer = Peer(host, port)
            init = await trio.to_thread.run_sync(peer.post, INIT)
            assert init["result"]["capabilities"]["tasks"] == {"cancel": {}, "requests": {"tools": {"call": {}}}}
            await trio.to_thread.run_sync(peer.post, {"jsonrpc": "2.0", "method": "notifications/initialized"})
            events: queue.Queue[Any] = queue.Queue()
            stop = threading.Event()
            nursery.start_soon(trio.to_thread.run_sync, peer.listen, events, stop)
            await trio.sleep(0.2)  # the GET stream is open before the task starts

            created = await trio.to_thread.run_sync(peer.post, rpc("tools/call", {"name": "wait", "arguments": {}, "task": {"ttl": 60_000}}, 2))
            task = created["result"]["task"]
            assert task["status"] == "working" and task["ttl"] == 60_000
            waiting: list[Any] = []

            async def result() -> None:
                waiting.append(await trio.to_thread.run_sync(peer.post, rpc("tasks/result", {"taskId": task["taskId"]}, 3)))

            nursery.start_soon(result)
            await trio.sleep(0.3)
            assert waiting == []  # tasks/result waits while the task works
            got = await trio.to_thread.run_sync(peer.post, rpc("tasks/get", {"taskId": task["taskId"]}, 4))
            assert got["result"]["status"] == "working" and got["result"]["statusMessage"] == "waiting"
            # A second task, cancelled: its work stops, and the GET stream hears it.
            second = await trio.to_thread.run_sync(peer.post, rpc("tools/call", {"name": "wait", "arguments": {}, "task": {}}, 5))
            second_id = second["result"]["task"]["taskId"]
            await trio.sleep(0.2)
            cancelled = await trio.to_thread.run_sync(peer.post, rpc("tasks/cancel", {"taskId": second_id}, 6))
            assert cancelled["result"]["status"] == "cancelled"
            assert (await trio.to_thread.run_sync(statuses, events, second_id, "cancelled"))[-1] == "cancelled"
            with trio.fail_after(10):
                while not seen["cancelled"]:
                    await trio.sleep(0.05)
            seen["release"].set()
            with trio.fail_after(20):
                while not waiting:
                    await trio.sleep(0.05)
            answer = waiting[0]["result"]
            assert answer["content"] == [{"type": "text", "text": "released"}]
            assert answer["_meta"] == {RELATED: {"taskId": task["taskId"]}}
            assert (await trio.to_thread.run_sync(statuses, events, task["taskId"], "completed"))[-1] == "completed"

            refused = await trio.to_thread.run_sync(peer.post, rpc("tasks/cancel", {"taskId": task["taskId"]}, 7))
            assert refused["error"] == {"code": -32602, "message": "Cannot cancel task: already in terminal status 'completed'"}
            # A task that asks, with the GET stream open and no tasks/result waiting: the
            # requests (related to the task) come on the GET stream, the answers are posted back,
            # and the same handler runs again.
            third = await trio.to_thread.run_sync(peer.post, rpc("tools/call", {"name": "interview", "arguments": {}, "task": {}}, 8))
            third_id = third["result"]["task"]["taskId"]
            passed: list[Any] = []
            for round_key in ("first", "second"):
                asked = await trio.to_thread.run_sync(next_request, events, passed)
                await answer_request(peer, asked, third_id, round_key)
            final = await trio.to_thread.run_sync(peer.post, rpc("tasks/result", {"taskId": third_id}, 10))
            assert final["result"]["content"][0]["text"] == "done after 3 runs, state {'round': 2}"
            heard = [m["params"]["status"] for m in passed if m["params"]["taskId"] == third_id]
            heard += await trio.to_thread.run_sync(statuses, events, third_id, "completed")
            assert heard == ["working", "input_required", "working", "input_required", "working", "completed"]
            stop.set()
            nursery.cancel_scope.cancel()

    trio.run(main)


def session_with_task(host: str, port: int, tool: str) -> tuple[Peer, str]:
    """A new 2025-11-25 session, and the id of the task a call of ``tool`` made on it."""
    peer = Peer(host, port)
    peer.post(INIT)
    peer.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    created = peer.post(rpc("tools/call", {"name": tool, "arguments": {}, "task": {}}, 2))
    return peer, str(created["result"]["task"]["taskId"])


def next_request(events: queue.Queue[Any], passed: list[Any]) -> Any:
    """The next request on the stream; what came before it goes into ``passed``."""
    while True:
        message = events.get(timeout=20)
        if "method" in message and "id" in message:
            return message
        passed.append(message)


async def answer_request(peer: Peer, asked: dict[str, Any], task_id: str, round_key: str) -> None:
    assert asked["method"] == "elicitation/create" and asked["params"]["message"] == f"{round_key}?"
    assert asked["params"]["_meta"] == {RELATED: {"taskId": task_id}}
    answer = {"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"ok": True}}}
    assert await trio.to_thread.run_sync(peer.post, answer) == 202


def test_without_a_get_stream_a_tasks_requests_come_on_the_tasks_result_stream() -> None:
    """Tasks: Input Required Status: the client sees ``input_required`` and calls tasks/result;
    the task's requests come on that stream (the client may hang up after each)."""

    async def main() -> None:
        app, seen = make_app()
        async with trio.open_nursery() as nursery:
            host, port = await nursery.start(serve_http, app)
            peer, task_id = await trio.to_thread.run_sync(session_with_task, host, port, "interview")
            with trio.fail_after(20):
                answered: set[int] = set()
                for n, round_key in enumerate(("first", "second")):
                    while True:
                        status = await trio.to_thread.run_sync(peer.post, rpc("tasks/get", {"taskId": task_id}, 3))
                        if status["result"]["status"] != "input_required":
                            await trio.sleep(0.05)
                            continue
                        # Until the handler runs again the task still asks what was answered: a
                        # new tasks/result gets it again (the answer is then dropped).
                        asked = await trio.to_thread.run_sync(peer.stream_until_request, rpc("tasks/result", {"taskId": task_id}, 4 + n))
                        if asked["id"] not in answered:
                            break
                    answered.add(asked["id"])
                    await answer_request(peer, asked, task_id, round_key)
                final = await trio.to_thread.run_sync(peer.post, rpc("tasks/result", {"taskId": task_id}, 9))
            assert final["result"]["content"][0]["text"] == "done after 3 runs, state {'round': 2}"
            nursery.cancel_scope.cancel()

    trio.run(main)


def test_over_stdio_a_task_runs_and_its_status_comes_on_stdout() -> None:
    async def main() -> None:
        app, seen = make_app()
        stdin_send, stdin_recv = trio.testing.memory_stream_one_way_pair()
        stdout_send, stdout_recv = trio.testing.memory_stream_one_way_pair()
        buffer = b""

        async def write(message: dict[str, Any]) -> None:
            await stdin_send.send_all(json.dumps(message).encode() + b"\n")

        async def read() -> Any:
            nonlocal buffer
            while b"\n" not in buffer:
                buffer += await stdout_recv.receive_some()
            line, buffer = buffer.split(b"\n", 1)
            return json.loads(line)

        async def until(test: Any) -> Any:
            while True:
                message = await read()
                if test(message):
                    return message

        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve_stdio, app, stdin_recv, stdout_send)
            with trio.fail_after(20):
                await write(INIT)
                assert (await read())["result"]["capabilities"]["tasks"]["requests"] == {"tools": {"call": {}}}
                await write({"jsonrpc": "2.0", "method": "notifications/initialized"})
                await write(rpc("tools/call", {"name": "wait", "arguments": {}, "task": {}}, 2))
                created = await until(lambda m: m.get("id") == 2)
                task_id = created["result"]["task"]["taskId"]
                await write(rpc("tasks/result", {"taskId": task_id}, 3))
                seen["release"].set()
                heard: list[str] = []

                def answered(message: Any) -> bool:
                    if message.get("method") == "notifications/tasks/status":
                        heard.append(message["params"]["status"])
                    return bool(message.get("id") == 3)

                done = await until(answered)
                assert done["result"]["content"] == [{"type": "text", "text": "released"}]
                assert done["result"]["_meta"] == {RELATED: {"taskId": task_id}}
                while "completed" not in heard:  # the notification may follow the answer
                    status = await until(lambda m: m.get("method") == "notifications/tasks/status")
                    heard.append(status["params"]["status"])
                assert heard[0] == "working" and heard[-1] == "completed"
            await stdin_send.aclose()

    trio.run(main)


def test_a_task_that_asks_after_its_tasks_result_hung_up_is_heard_on_the_next_one() -> None:
    """A client hangs up its tasks/result before the task asks (no GET stream either): the
    requests are not lost, the next tasks/result carries them."""
    from mcpwire_adapters import App, Context, NeedInput

    app = App("late", "1", tasks=True)

    @app.tool(description="asks after a while", task_support="optional")
    async def later(ctx: Context, arguments: dict[str, Any]) -> Any:
        await ctx.start_task()
        if "ok" not in ctx.input_responses:
            await trio.sleep(0.5)
            return NeedInput(requests={"ok": {"method": "elicitation/create", "params": {
                "message": "ok?", "requestedSchema": {"type": "object", "properties": {}}}}})
        return "fine"

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            host, port = await nursery.start(serve_http, app)
            peer, task_id = await trio.to_thread.run_sync(session_with_task, host, port, "later")

            def hang_up_early() -> None:
                conn = http.client.HTTPConnection(host, port, timeout=5)
                conn.request("POST", "/mcp", json.dumps(rpc("tasks/result", {"taskId": task_id}, 3)).encode(), peer.headers)
                conn.close()

            await trio.to_thread.run_sync(hang_up_early)
            with trio.fail_after(20):
                asked = await trio.to_thread.run_sync(peer.stream_until_request, rpc("tasks/result", {"taskId": task_id}, 4))
                await answer_request(peer, asked, task_id, "ok")
                final = await trio.to_thread.run_sync(peer.post, rpc("tasks/result", {"taskId": task_id}, 5))
            assert final["result"]["content"] == [{"type": "text", "text": "fine"}]
            nursery.cancel_scope.cancel()

    trio.run(main)
