"""The sessions answer an initialize-era server's invalid messages as JSON-RPC 2.0 says (section
5; 5.1: -32600 Invalid Request, -32700 Parse error; the id the call carried, or null when none
can be read), as our server does: :class:`StdioClient` writes the error as a line to a real
child process; :class:`HttpClient` POSTs it, for a message on a call's response stream and on
the session's GET stream, over real sockets on 127.0.0.1. The call goes on. Each test runs on
trio and on asyncio."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import h11

from mcpwire import Client
from mcpwire.types import Implementation
from mcpwire_adapters.client.http import HttpClient
from mcpwire_adapters.client.stdio import StdioClient

from _asking_stdio import asking_server
from _backends import run
from test_session_get_stream import WAIT, Get, Scripted, frame, plain_client, scripted

NO_JSONRPC = {"id": "srv-1", "method": "ping"}  # the ping a hostile server sent, "jsonrpc" deleted

def test_stdio_answers_an_invalid_request_and_a_line_that_is_not_json(backend: str, tmp_path: Path) -> None:
    log = tmp_path / "read.jsonl"

    async def main() -> None:
        client = Client(Implementation(name="t", version="1"), protocol_version="2025-11-25")
        async with StdioClient(asking_server(log, [json.dumps(NO_JSONRPC).encode(), b"not json"]), client,
                               read_timeout=WAIT) as c:
            with anyio.fail_after(WAIT):
                result = await c.call_tool("echo", {})
            assert result.data["content"][0]["text"] == "ok"
            assert c.skipped_lines == 2  # still logged as skipped lines

    run(main, backend)
    answers = [json.loads(line) for line in log.read_text().splitlines() if "method" not in json.loads(line)]
    assert sorted(answers, key=repr) == [  # each written by a task of its own: in either order
        {"jsonrpc": "2.0", "id": "srv-1", "error": {"code": -32600, "message": "Expected a JSON-RPC 2.0 request"}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
    ]


class CallStream(Scripted):
    """:class:`Scripted`, whose ``tools/call`` answers with an event stream: the invalid ping,
    then, once the client POSTed something that is not a request, the result."""

    async def _post(self, conn: h11.Connection, stream: anyio.abc.ByteStream, message: dict[str, Any]) -> None:
        if message.get("method") != "tools/call":
            await super()._post(conn, stream, message)
            return
        head = [(b"content-type", b"text/event-stream"), (b"mcp-session-id", b"s1")]
        await stream.send(conn.send(h11.Response(status_code=200, headers=head)) + conn.send(h11.Data(data=frame(NO_JSONRPC))))
        with anyio.move_on_after(WAIT):
            await self.answered.wait()
        result = {"jsonrpc": "2.0", "id": message["id"], "result": {"content": [{"type": "text", "text": "done"}]}}
        await stream.send(conn.send(h11.Data(data=frame(result))) + conn.send(h11.EndOfMessage()))


def answers(server: Scripted) -> list[tuple[dict[bytes, bytes], Any]]:
    return [(h, m) for _, method, h, m in server.requests if method == "POST" and "method" not in m]


def test_http_posts_the_answer_to_an_invalid_request_on_a_call_s_response_stream(backend: str) -> None:
    async def main() -> None:
        async with scripted(CallStream([Get(status=405)])) as server, HttpClient(server.url, plain_client()) as c:
            await c.connect()
            with anyio.fail_after(WAIT):
                result = await c.call_tool("work", {})
            assert result.data["content"][0]["text"] == "done"
        (headers, answer), = answers(server)
        assert answer == {"jsonrpc": "2.0", "id": "srv-1",
                          "error": {"code": -32600, "message": "Expected a JSON-RPC 2.0 request"}}
        assert headers[b"mcp-session-id"] == b"s1" and headers[b"mcp-protocol-version"] == b"2025-11-25"

    run(main, backend)


def test_http_posts_the_answer_to_an_invalid_request_on_the_get_stream(backend: str) -> None:
    async def main() -> None:
        server = Scripted([Get()])

        async def on_call(message: dict[str, Any]) -> None:
            await server.push(frame({"jsonrpc": "1.0", "id": 5, "method": "ping"}))
            await server.push(b"data: {\"jsonrpc\": \"2.0\", \"id\": [1], \"method\": \"ping\"}\n\n")
            with anyio.move_on_after(WAIT):
                while len(answers(server)) < 2:
                    await anyio.sleep(0.01)

        server.on_call = on_call
        async with scripted(server), HttpClient(server.url, plain_client()) as c:
            await c.connect()
            await c.call_tool("work", {})
        assert sorted((m for _, m in answers(server)), key=repr) == [
            {"jsonrpc": "2.0", "id": 5, "error": {"code": -32600, "message": "Expected a JSON-RPC 2.0 request"}},
            {"jsonrpc": "2.0", "id": None, "error": {
                "code": -32600, "message": "Invalid Request: id must be a string or an integer"}},
        ]

    run(main, backend)
