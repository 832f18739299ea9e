"""What an idle connection of the trio/h11 server holds: one task (its own), no reader.

The connection's task reads its socket while it waits for a request; a reader task runs only
while responses are produced (so that a client leaving mid-handler is noticed) and ends once
the connection has sat idle for a tick of the server's timer. Tasks are counted through trio's
task tree from the server's nursery, so the count is exact; waits for the timer use
``settle`` (a condition, with a generous bound only against a hang), never a timed assertion.
"""

from __future__ import annotations

import functools
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import h11
import trio
import trio.testing
from mcpwire_adapters import App, HttpServerConfig, serve_http

from _apps import StreamProbe, add_echo_and_stream
from _wire_helpers import H11Client
from _backends import trio_test

VERSION = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": {}}
IDLE = 40  # connections held idle at once
# A tenth of the shortest timeout is the server timer's tick: 0.1 s, so that a reader of an idle
# connection ends within a fraction of a second here (1 s with the defaults).
CONFIG = HttpServerConfig(header_timeout=1.0, max_connections=IDLE + 10)


run = trio_test(20)


def make_app(probe: StreamProbe) -> App:
    app = App("idle", "1.0")
    add_echo_and_stream(app, probe)
    return app


class Serving:
    def __init__(self, nursery: trio.Nursery, address: tuple[str, int]) -> None:
        self.nursery = nursery
        self.address = address

    def tasks(self) -> int:
        """Tasks alive under serve_http: its own, the timer, the accept loop, one per
        connection, and whatever a connection runs (handlers, a reader)."""
        return sum(_subtree(task) for task in self.nursery.child_tasks)


def _subtree(task: trio.lowlevel.Task) -> int:
    return 1 + sum(_subtree(child) for nursery in task.child_nurseries for child in nursery.child_tasks)


@asynccontextmanager
async def serving(app: App, config: HttpServerConfig = CONFIG) -> AsyncIterator[Serving]:
    async with trio.open_nursery() as nursery:
        address = await nursery.start(functools.partial(serve_http, app, "127.0.0.1", 0, config=config))
        yield Serving(nursery, address)
        nursery.cancel_scope.cancel()


async def settle(condition: Callable[[], bool], what: str, seconds: float = 10.0) -> None:
    deadline = trio.current_time() + seconds
    while not condition():
        assert trio.current_time() < deadline, f"not within {seconds} s: {what}"
        await trio.sleep(0.01)


def call_body(name: str, request_id: int, token: str | None = None) -> bytes:
    meta = {**META, "progressToken": token} if token is not None else META
    params = {"name": name, "arguments": {"text": f"call {request_id}"}, "_meta": meta}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}).encode()


def headers(name: str) -> list[tuple[str, str]]:
    return [
        ("host", "127.0.0.1"), ("content-type", "application/json"), ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", VERSION), ("mcp-method", "tools/call"), ("mcp-name", name),
    ]


class Client(H11Client):
    async def echo(self, request_id: int) -> None:
        await self.request(call_body("echo", request_id), headers("echo"))
        head, body = await self.response()
        assert head.status_code == 200, (head, body)
        assert json.loads(body)["result"]["content"][0]["text"] == f"call {request_id}"
        self.conn.start_next_cycle()


async def connect_all(address: tuple[str, int]) -> list[Client]:
    clients: list[Client] = []
    for _ in range(IDLE):
        clients.append(await Client.connect(address))
    return clients


@run
async def test_an_idle_connection_is_one_task() -> None:
    """IDLE connections opened and left silent add exactly IDLE tasks: no reader per connection."""
    async with serving(make_app(StreamProbe())) as server:
        baseline = server.tasks()
        clients = await connect_all(server.address)
        await settle(lambda: server.tasks() >= baseline + IDLE, "every connection accepted")
        await trio.testing.wait_all_tasks_blocked()
        assert server.tasks() == baseline + IDLE
        for client in clients:
            await client.aclose()
        await settle(lambda: server.tasks() == baseline, "every connection closed")


@run
async def test_a_kept_alive_connection_idles_back_to_one_task_and_still_notices_a_departure() -> None:
    """After a tools/call each (its answer armed a reader) the IDLE kept-alive connections are
    back to one task each once idle; each still answers, and a client that then leaves in the
    middle of a streaming call still gets its handler cancelled and its connection closed."""
    probe = StreamProbe()
    async with serving(make_app(probe)) as server:
        baseline = server.tasks()
        clients = await connect_all(server.address)
        for i, client in enumerate(clients):
            await client.echo(i)
        await settle(lambda: server.tasks() == baseline + IDLE, "one task per idle kept-alive connection")

        for i, client in enumerate(clients):
            await client.echo(IDLE + i)  # a reader again, if one was needed
        await settle(lambda: server.tasks() == baseline + IDLE, "one task per idle connection again")

        leaving = clients.pop()
        await leaving.request(call_body("stream", 1, token="t"), headers("stream"))
        await streaming_started(leaving)
        await leaving.aclose()
        await settle(lambda: probe.cancelled == 1, "the handler cancelled when its client left")
        await settle(lambda: server.tasks() == baseline + IDLE - 1, "the departed connection's tasks ended")

        for client in clients:
            await client.aclose()
        await settle(lambda: server.tasks() == baseline, "every connection closed")


async def streaming_started(client: Client) -> None:
    """Read the ``stream`` tool's 200 head and its progress notification (the handler now waits)."""
    head = await client.next_event()
    assert isinstance(head, h11.Response) and head.status_code == 200, head
    data = await client.next_event()
    assert isinstance(data, h11.Data) and b"notifications/progress" in data.data, data


@run
async def test_a_reader_holding_off_reads_again_once_a_response_is_armed() -> None:
    """A reader that stopped reading because the client pipelined more than
    ``max_header_bytes`` behind a request while nothing watched must read again when that
    request's handler starts: a client that then leaves still cancels the handler."""
    probe = StreamProbe()
    async with serving(make_app(probe), HttpServerConfig(max_header_bytes=4096)) as server:  # a tick of 1 s
        baseline = server.tasks()
        client = await Client.connect(server.address)
        await client.echo(1)
        assert server.tasks() == baseline + 2  # the connection and the reader its answer started
        stream = h11.Connection(h11.CLIENT)  # frames the request; the client's own h11 reads the answer
        body = call_body("stream", 2, token="t")
        head = h11.Request(method="POST", target="/mcp", headers=[*headers("stream"), ("content-length", str(len(body)))])
        request = b"".join(stream.send(event) or b"" for event in (head, h11.Data(data=body), h11.EndOfMessage()))
        pipelined = b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nx-pad: " + b"a" * 8192
        await client.stream.send_all(request + pipelined)
        client.conn.send(head)
        client.conn.send(h11.Data(data=body))
        client.conn.send(h11.EndOfMessage())
        await streaming_started(client)
        await client.aclose()
        await settle(lambda: probe.cancelled == 1, "the handler cancelled when its client left")
        await settle(lambda: server.tasks() == baseline, "the connection's tasks ended")
