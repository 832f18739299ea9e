"""StdioClient against servers that never finish answering, on trio and on asyncio
(``tests/_backends.py``): every call ends, in a documented error, within its bounds.

- a line past ``max_line_bytes`` cannot be read, nor told apart from any request's answer:
  every request in flight fails with :class:`TransportError` and is cancelled
  (``notifications/cancelled``), and the connection goes on;
- a line that is not JSON is logged and skipped; the call it may have answered ends at its
  ``read_timeout`` with :class:`MaybeDelivered`, cancelled;
- ``read_timeout`` does not run while the call's handler answers the server's question;
- an initialize-era server's requests for input during one call count against ``max_rounds``.

The servers are short Python scripts that log every line they read to a file.
"""

from __future__ import annotations

import json
import logging
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpwire import Client
from mcpwire.types import SUBSCRIPTION_ID_META_KEY, CallToolResult, ElicitRequest, ElicitResult, Implementation, TextContent
from mcpwire_adapters.client.stdio import StdioClient
from mcpwire_adapters.errors import MaybeDelivered, ServerError, TransportError

from _backends import run

MODERN = ("2026-07-28",)  # no initialize-era revision: no server/discover probe before the first call
LIMIT = 1024  # the clients' max_line_bytes here

# Shared by the scripts: log every line read (argv[1]), and answer a request.
PRELUDE = textwrap.dedent("""
    import json, sys
    log = open(sys.argv[1], "a")

    def send(message):
        sys.stdout.write(json.dumps(message) + "\\n")
        sys.stdout.flush()

    def text(request_id, words):
        send({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": words}]}})

    def lines():
        for line in sys.stdin:
            log.write(line)
            log.flush()
            yield json.loads(line)
""")


def script(body: str) -> str:
    return PRELUDE + textwrap.dedent(body)


def modern_client() -> Client:
    return Client(Implementation(name="t", version="1"), supported_versions=MODERN)


def era_client() -> Client:
    return Client(Implementation(name="t", version="1"), capabilities={"elicitation": {"form": {}}},
                  protocol_version="2025-11-25")


def logged(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def cancelled(path: Path) -> list[Any]:
    return [m["params"]["requestId"] for m in logged(path) if m.get("method") == "notifications/cancelled"]


def text(result: Any) -> str:
    assert isinstance(result.value, CallToolResult)
    block = result.value.content[0]
    assert isinstance(block, TextContent)
    return block.text


# Two calls in flight, then the answer to the first as a line past LIMIT; "small" is answered.
OVERSIZE = script(f"""
    waiting = []
    for message in lines():
        if message.get("method") != "tools/call":
            continue
        if message["params"]["name"] == "small":
            text(message["id"], "ok")
            continue
        waiting.append(message["id"])
        if len(waiting) == 2:
            text(waiting[0], "x" * {4 * LIMIT})
""")


def test_a_line_past_max_line_bytes_fails_every_call_in_flight_and_the_connection_goes_on(
        backend: str, tmp_path: Path) -> None:
    log = tmp_path / "read.jsonl"

    async def main() -> None:
        errors: list[Exception] = []
        async with StdioClient([sys.executable, "-c", OVERSIZE, str(log)], modern_client(), max_line_bytes=LIMIT) as c:

            async def call(name: str) -> None:
                try:
                    await c.call_tool(name, {})
                except TransportError as exc:
                    errors.append(exc)

            with anyio.fail_after(10):  # before: the calls waited for ever
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(call, "big")
                    tasks.start_soon(call, "other")
            assert text(await c.call_tool("small", {})) == "ok"  # the reader skipped the long line: it goes on
        assert len(errors) == 2
        for error in errors:
            assert type(error) is TransportError, repr(error)  # the error an HTTP answer past its limit gives
            assert f"server sent a line of more than {LIMIT} bytes (max_line_bytes)" in str(error)
        calls = [m["id"] for m in logged(log) if m.get("method") == "tools/call"]
        assert sorted(cancelled(log), key=str) == sorted(calls[:2], key=str)  # each lost call was cancelled

    run(main, backend)


# The answer to "garbled" is a line that is not JSON, and never comes; "small" is answered.
NOT_JSON = script("""
    for message in lines():
        if message.get("method") == "tools/call":
            if message["params"]["name"] == "garbled":
                print("Server ready. (not JSON)", flush=True)
            else:
                text(message["id"], "ok")
""")


def test_a_line_that_is_not_json_is_skipped_and_the_call_ends_at_its_read_timeout(
        backend: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    log = tmp_path / "read.jsonl"

    async def main() -> None:
        command = [sys.executable, "-c", NOT_JSON, str(log)]
        async with StdioClient(command, modern_client(), read_timeout=0.5) as c:
            started = anyio.current_time()
            with pytest.raises(MaybeDelivered) as caught:
                await c.call_tool("garbled", {})
            assert 0.4 < anyio.current_time() - started < 5
            assert caught.value.method == "tools/call"
            assert "nothing from the server for tools/call" in str(caught.value) and "0.5 s" in str(caught.value)
            assert text(await c.call_tool("small", {})) == "ok"
            assert c.skipped_lines == 1
        assert cancelled(log) == [caught.value.request_id]

    with caplog.at_level(logging.WARNING, logger="mcpwire.client"):
        run(main, backend)
    assert any("skipped a line from the server: 'Parse error' (-32700)" in r.getMessage() for r in caplog.records)


# Acknowledges a listen request, then sends a line past LIMIT.
LISTEN_OVERSIZE = script(f"""
    for message in lines():
        if message.get("method") == "subscriptions/listen":
            send({{"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                   "params": {{"notifications": {{"toolsListChanged": True}},
                              "_meta": {{"{SUBSCRIPTION_ID_META_KEY}": message["id"]}}}}}})
            send({{"jsonrpc": "2.0", "method": "notifications/message",
                   "params": {{"level": "info", "data": "y" * {4 * LIMIT}}}}})
""")


def test_a_line_past_max_line_bytes_ends_a_listen_stream_in_a_transport_error(backend: str, tmp_path: Path) -> None:
    log = tmp_path / "read.jsonl"

    async def main() -> None:
        command = [sys.executable, "-c", LISTEN_OVERSIZE, str(log)]
        async with StdioClient(command, modern_client(), max_line_bytes=LIMIT) as c:
            with anyio.fail_after(10), pytest.raises(TransportError, match="more than 1024 bytes"):
                async with c.listen({"toolsListChanged": True}) as sub:
                    async for _ in sub:
                        pass
            listen_id = sub.subscription_id
        assert cancelled(log) == [listen_id]

    run(main, backend)


# An initialize-era server whose call asks the client a question, and answers once answered.
ASKS_ONCE = script("""
    call = None
    for message in lines():
        method = message.get("method")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": message["id"], "result": {
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}})
        elif method == "tools/call":
            call = message["id"]
            send({"jsonrpc": "2.0", "id": "ask-1", "method": "elicitation/create", "params": {
                "message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}})
        elif message.get("id") == "ask-1" and call is not None:
            text(call, "Hello, " + message["result"]["content"]["name"])
""")


def test_the_read_timeout_waits_while_the_call_answers_the_server(backend: str, tmp_path: Path) -> None:
    async def slowly(request: ElicitRequest) -> ElicitResult:
        await anyio.sleep(1.0)  # a person taking their time: longer than read_timeout
        return ElicitResult(action="accept", content={"name": "Ada"})

    async def main() -> None:
        command = [sys.executable, "-c", ASKS_ONCE, str(tmp_path / "read.jsonl")]
        async with StdioClient(command, era_client(), read_timeout=0.3, elicitation=slowly) as c:
            assert text(await c.call_tool("greet", {})) == "Hello, Ada"

    run(main, backend)


# An initialize-era server whose call pings and asks, each once the last was answered, and never answers.
ASKS_FOR_EVER = script("""
    asked = 0
    for message in lines():
        method = message.get("method")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": message["id"], "result": {
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}})
        elif method == "tools/call" or (method is None and "id" in message and asked < 200):
            asked += 1
            if asked % 2:
                send({"jsonrpc": "2.0", "id": asked, "method": "ping"})
            else:
                send({"jsonrpc": "2.0", "id": asked, "method": "elicitation/create", "params": {
                    "message": "Again?", "requestedSchema": {"type": "object", "properties": {}}}})
""")


def test_an_initialize_era_call_answers_at_most_max_rounds_questions(backend: str, tmp_path: Path) -> None:
    log = tmp_path / "read.jsonl"

    def accept(request: ElicitRequest) -> ElicitResult:
        return ElicitResult(action="accept", content={})

    async def main() -> None:
        command = [sys.executable, "-c", ASKS_FOR_EVER, str(log)]
        async with StdioClient(command, era_client(), max_rounds=3, elicitation=accept) as c:
            with anyio.fail_after(10), pytest.raises(ServerError) as caught:  # before: for ever
                await c.call_tool("echo", {})
        assert caught.value.code == -32603
        assert caught.value.error.message == "input required for tools/call: more than 3 input rounds"
        answers = {m["id"]: m for m in logged(log) if "method" not in m}
        assert [answers[n].get("result") for n in (1, 2, 3, 4, 5, 6)] == [{}, {"action": "accept", "content": {}}] * 3
        assert answers[7]["result"] == {} and answers[8]["error"]["code"] == -32603  # the 4th question: refused
        call = next(m["id"] for m in logged(log) if m.get("method") == "tools/call")
        assert cancelled(log) == [call]

    run(main, backend)


# Two calls in flight, then an error with id null (it answers neither), then both answers.
NULL_ID_ERROR = script("""
    waiting = []
    for message in lines():
        if message.get("method") == "tools/call":
            waiting.append(message["id"])
            if len(waiting) == 2:
                send({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "\\u001b[2Jcleared " + "z" * 5000}})
                for request_id in waiting:
                    text(request_id, "ok")
""")


def test_a_line_for_no_request_is_logged_escaped_and_short_and_the_calls_go_on(
        backend: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    answers: list[str] = []

    async def main() -> None:
        command = [sys.executable, "-c", NULL_ID_ERROR, str(tmp_path / "read.jsonl")]
        async with StdioClient(command, modern_client()) as c:

            async def call() -> None:
                answers.append(text(await c.call_tool("echo", {})))

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(call)
                tasks.start_soon(call)
            assert c.skipped_lines == 1

    with caplog.at_level(logging.WARNING, logger="mcpwire.client"):
        run(main, backend)
    assert answers == ["ok", "ok"]
    (logged_line,) = [r.getMessage() for r in caplog.records if "skipped a line" in r.getMessage()]
    assert "'\\x1b[2Jcleared zzz" in logged_line and "\x1b" not in logged_line and len(logged_line) < 300
