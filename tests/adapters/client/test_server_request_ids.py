"""The sessions answer an initialize-era server's requests whatever id the schema's RequestId
allows (a string or an integer, unbounded), echoing it as the same JSON token: a 300-byte
string, 2**63, -2**63-1, 10**20 (``100000000000000000000``, not ``1e20``). Our server's own
bounds on ids (256 bytes, int64) are not the client's. :class:`HttpClient` POSTs its answers to
a server scripted on h11 over a real socket on 127.0.0.1; :class:`StdioClient` writes them to a
real child process. Each test runs on trio and on asyncio."""

from __future__ import annotations

from pathlib import Path

import anyio
import anyio.abc
import h11
import msgspec

from mcpwire import Client
from mcpwire.types import Implementation
from mcpwire_adapters.client.http import HttpClient
from mcpwire_adapters.client.stdio import StdioClient

from _asking_stdio import asking_server
from _backends import run
from test_session_get_stream import WAIT, Get, Scripted, plain_client, scripted

TOKENS = [b'"' + b"x" * 300 + b'"', b"9223372036854775808", b"-9223372036854775809", b"100000000000000000000"]
# Each id as a ping, and 10**20 as a method the client does not know (answered -32601).
REQUESTS = [b'{"jsonrpc":"2.0","id":' + t + b',"method":"ping"}' for t in TOKENS] + [
    b'{"jsonrpc":"2.0","id":100000000000000000000,"method":"example/unknown"}']


class _Answer(msgspec.Struct):
    id: msgspec.Raw
    result: msgspec.Raw = msgspec.Raw(b"")
    error: msgspec.Raw = msgspec.Raw(b"")


def answered(bodies: list[bytes]) -> list[tuple[bytes, bytes]]:
    """Each answer's id token as written, and its result or error."""
    out = []
    for data in bodies:
        answer = msgspec.json.decode(data, type=_Answer)
        out.append((bytes(answer.id), bytes(answer.result) or bytes(answer.error)))
    return sorted(out)


EXPECTED = sorted([(t, b"{}") for t in TOKENS] + [
    (b"100000000000000000000", b'{"code":-32601,"message":"Method not found: example/unknown"}')])


class AsksOnTheCallStream(Scripted):
    """:class:`Scripted`, whose ``tools/call`` answers with an event stream carrying
    :data:`REQUESTS`, then, once the client has POSTed an answer to each, the result; it keeps
    the raw body of every POST that is no request (``answers``)."""

    def __init__(self) -> None:
        super().__init__([Get(status=405)])
        self.answers: list[bytes] = []

    async def _request(self, conn: h11.Connection, stream: anyio.abc.ByteStream) -> tuple[h11.Request | None, bytes]:
        request, body = await super()._request(conn, stream)
        if request is not None and request.method == b"POST" and b'"method"' not in body:
            self.answers.append(body)
        return request, body

    async def _post(self, conn: h11.Connection, stream: anyio.abc.ByteStream, message: dict[str, object]) -> None:
        if message.get("method") != "tools/call":
            await super()._post(conn, stream, message)
            return
        head = [(b"content-type", b"text/event-stream"), (b"mcp-session-id", b"s1")]
        frames = b"".join(b"data: " + r + b"\n\n" for r in REQUESTS)
        await stream.send(conn.send(h11.Response(status_code=200, headers=head)) + conn.send(h11.Data(data=frames)))
        with anyio.move_on_after(WAIT):
            while len(self.answers) < len(REQUESTS):
                await anyio.sleep(0.01)
        result = b'{"jsonrpc":"2.0","id":' + msgspec.json.encode(message["id"]) + (
            b',"result":{"content":[{"type":"text","text":"done"}]}}')
        await stream.send(conn.send(h11.Data(data=b"data: " + result + b"\n\n")) + conn.send(h11.EndOfMessage()))


def test_http_echoes_every_schema_valid_id_of_a_server_request(backend: str) -> None:
    async def main() -> None:
        server = AsksOnTheCallStream()
        async with scripted(server), HttpClient(server.url, plain_client()) as c:
            await c.connect()
            with anyio.fail_after(WAIT):
                result = await c.call_tool("work", {})
            assert result.data["content"][0]["text"] == "done"
            assert answered(server.answers) == EXPECTED

    run(main, backend)


def test_stdio_echoes_every_schema_valid_id_of_a_server_request(backend: str, tmp_path: Path) -> None:
    log = tmp_path / "read.jsonl"

    async def main() -> None:
        client = Client(Implementation(name="t", version="1"), protocol_version="2025-11-25")
        async with StdioClient(asking_server(log, REQUESTS), client, read_timeout=WAIT) as c:
            with anyio.fail_after(WAIT):
                result = await c.call_tool("echo", {})
            assert result.data["content"][0]["text"] == "ok"
            assert c.skipped_lines == 0

    run(main, backend)
    lines = log.read_bytes().splitlines()
    assert answered([line for line in lines if b'"method"' not in line]) == EXPECTED
