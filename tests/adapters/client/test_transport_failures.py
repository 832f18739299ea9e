"""What the clients raise when the transport fails under a request, on trio and on asyncio
(``tests/_backends.py``): one error, :class:`TransportError`, for one event, whatever the
transport; and a request that may have reached the server is never sent again on its own.

HTTP: ``serve_http`` on 127.0.0.1 port 0 (its own thread), with a small TCP relay of the test's
own loop in front of it (:class:`Relay`) that cuts a connection at an exact moment, or a raw TCP
server that answers with exactly the bytes a test gives. stdio: short Python scripts that die
in the middle of a call.
"""

from __future__ import annotations

import json
import re
import socket
import struct
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.abc
import h11
import pytest
import trio
from mcpwire_adapters import App, Context
from mcpwire_adapters.client.http import HttpClient
from mcpwire_adapters.client.stdio import StdioClient
from mcpwire_adapters.errors import MaybeDelivered, ServerError, TransportError

from mcpwire import Client, Keyring, ListenAck
from mcpwire.types import SUBSCRIPTION_ID_META_KEY, CallToolResult, Implementation, TextContent

from _backends import both, served


def client() -> Client:
    return Client(Implementation(name="t", version="1"))


def text(result: Any) -> str:
    assert isinstance(result.value, CallToolResult)
    block = result.value.content[0]
    assert isinstance(block, TextContent)
    return block.text


class Runs:
    """What the app's tools record, from the server's thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.names: list[str] = []

    def add(self, name: str) -> None:
        with self._lock:
            self.names.append(name)

    def count(self, name: str) -> int:
        with self._lock:
            return self.names.count(name)


def make_app(runs: Runs) -> App:
    app = App("transport-failures", "1.0", keyring=Keyring.single(b"t" * 32))

    @app.tool(description="Record that it ran, then answer")
    async def work(ctx: Context, arguments: dict[str, Any]) -> str:
        runs.add("work")
        return "worked"

    @app.tool(description="Record that it ran, report progress, wait a little, then answer")
    async def stream(ctx: Context, arguments: dict[str, Any]) -> str:
        runs.add("stream")
        await ctx.progress(1, total=2)
        await trio.sleep(1.0)
        return "streamed"

    return app


# -- a TCP relay that cuts connections at an exact moment -----------------------------------------
class _Requests:
    """The JSON-RPC bodies of the requests a client writes on one connection (h11, server side)."""

    def __init__(self) -> None:
        self._conn = h11.Connection(h11.SERVER)
        self._body = b""

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        self._conn.receive_data(data)
        out: list[dict[str, Any]] = []
        while True:
            event = self._conn.next_event()
            if event is h11.NEED_DATA:
                return out
            if isinstance(event, h11.Data):
                self._body += bytes(event.data)
            elif isinstance(event, h11.EndOfMessage):
                if self._body:
                    out.append(json.loads(self._body))
                self._body = b""
                rest, _ = self._conn.trailing_data
                self._conn = h11.Connection(h11.SERVER)  # the next request on the kept-alive connection
                if rest:
                    self._conn.receive_data(bytes(rest))  # (b"" would be the end of the connection)


class Relay:
    """A TCP relay on 127.0.0.1 to ``upstream`` (a port of 127.0.0.1). Every request a client
    posts through it is recorded in :attr:`posted`. ``drop_answer_to``: the first request of that
    method is passed on, and its connection is closed as soon as the server starts answering it,
    the answer dropped (the server ran the request; the client hears nothing). ``cut_after``:
    the first answer whose bytes hold it is passed on up to that read, then the connection is
    closed (the server died while streaming). Other connections and requests pass untouched."""

    def __init__(self, upstream: int, *, drop_answer_to: str | None = None, cut_after: bytes | None = None) -> None:
        self.upstream = upstream
        self.drop_answer_to = drop_answer_to
        self.cut_after = cut_after
        self.posted: list[dict[str, Any]] = []
        self.cuts = 0
        self.connections = 0

    async def start(self, tasks: anyio.abc.TaskGroup) -> int:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1")

        async def serve() -> None:
            async with listener:
                await listener.serve(self._relay)

        tasks.start_soon(serve)
        return int(listener.extra(anyio.abc.SocketAttribute.local_port))

    async def _relay(self, near: anyio.abc.SocketStream) -> None:
        self.connections += 1
        doomed = anyio.Event()  # set when the answer now on its way is to be dropped
        async with near, await anyio.connect_tcp("127.0.0.1", self.upstream) as far, anyio.create_task_group() as tasks:

            async def up() -> None:
                requests = _Requests()
                while True:
                    try:
                        data = await near.receive()
                    except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                        break
                    for message in requests.feed(data):
                        self.posted.append(message)
                        if message.get("method") == self.drop_answer_to and self.cuts == 0:
                            self.cuts += 1
                            doomed.set()
                    await far.send(data)
                tasks.cancel_scope.cancel()

            async def down() -> None:
                while True:
                    try:
                        data = await far.receive()
                    except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                        break
                    if doomed.is_set():
                        break  # the server answered: drop it, and close
                    await near.send(data)
                    if self.cut_after is not None and self.cut_after in data and self.cuts == 0:
                        self.cuts += 1
                        break
                tasks.cancel_scope.cancel()

            tasks.start_soon(up)
            tasks.start_soon(down)
        # Leaving closes both sides: the client sees the end of its connection.

    def calls(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.posted if m.get("method") == method]


async def relayed(upstream: int, test: Callable[[Relay, str], Awaitable[None]], **options: Any) -> Relay:
    relay = Relay(upstream, **options)
    async with anyio.create_task_group() as tasks:
        port = await relay.start(tasks)
        await test(relay, f"http://127.0.0.1:{port}/mcp")
        tasks.cancel_scope.cancel()
    return relay


# -- a raw TCP server -------------------------------------------------------------------------------
async def raw_server(tasks: anyio.abc.TaskGroup, answer: bytes, *, reset: bool = False) -> tuple[int, list[dict[str, Any]]]:
    """A TCP server on 127.0.0.1 that reads one request per connection, records its JSON body,
    writes ``answer`` (maybe nothing) and closes the connection (``reset``: with a TCP reset).
    Returns its port and the recorded bodies."""
    received: list[dict[str, Any]] = []
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")

    async def handle(stream: anyio.abc.SocketStream) -> None:
        requests = _Requests()
        async with stream:
            got: list[dict[str, Any]] = []
            while not got:
                try:
                    got = requests.feed(await stream.receive())
                except anyio.EndOfStream:
                    return
            received.extend(got)
            if answer:
                await stream.send(answer)
            if reset:
                await anyio.sleep(0.05)  # the client reads what was sent first
                raw = stream.extra(anyio.abc.SocketAttribute.raw_socket)
                raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    async def serve() -> None:
        async with listener:
            await listener.serve(handle)

    tasks.start_soon(serve)
    return int(listener.extra(anyio.abc.SocketAttribute.local_port)), received


# -- 1. a request that may have reached the server is not sent again ---------------------------------
@both
async def test_a_call_whose_kept_alive_connection_breaks_before_the_answer_is_not_sent_again() -> None:
    runs = Runs()
    async with served(make_app(runs)) as server:

        async def test(relay: Relay, url: str) -> None:
            async with HttpClient(url, client()) as c:
                await c.discover()  # the connection is kept alive: the call reuses it
                with pytest.raises(MaybeDelivered) as caught:
                    await c.call_tool("work", {})
                assert c.connections_opened == 1
            calls = relay.calls("tools/call")
            assert len(calls) == 1, calls  # one request id posted once, never twice
            error = caught.value
            assert isinstance(error, TransportError)
            assert error.method == "tools/call" and error.request_id == calls[0]["id"]
            assert "may have been processed" in str(error) and "not sent again" in str(error)

        await relayed(server.port, test, drop_answer_to="tools/call")
        assert runs.count("work") == 1  # the tool ran once


@both
async def test_a_call_on_a_new_connection_closed_without_an_answer_raises_maybe_delivered() -> None:
    async with anyio.create_task_group() as tasks:
        port, received = await raw_server(tasks, b"")
        async with HttpClient(f"http://127.0.0.1:{port}/mcp", client()) as c:
            with pytest.raises(MaybeDelivered, match="closed the connection without a response") as caught:
                await c.call_tool("work", {"n": 1})
            assert c.connections_opened == 1
        tasks.cancel_scope.cancel()
    assert [m["method"] for m in received] == ["tools/call"]
    assert caught.value.method == "tools/call" and caught.value.request_id == received[0]["id"]


def _result(request: dict[str, Any]) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": request["id"],
                       "result": {"content": [{"type": "text", "text": "worked"}]}}).encode()
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)


@both
async def test_a_kept_alive_connection_the_server_closed_while_idle_is_not_written_to() -> None:
    """The server ends an idle kept-alive connection (its idle timeout) before the next request:
    the client sees that before writing and sends the request on a new connection, once. The
    server here only half-closes, and goes on reading: a request written to the dead connection
    would be recorded (before the fix it was, and then sent again on a new connection)."""
    per_connection: list[list[dict[str, Any]]] = []

    async def handle(stream: anyio.abc.SocketStream) -> None:
        seen: list[dict[str, Any]] = []
        per_connection.append(seen)
        requests = _Requests()
        async with stream:
            while True:
                try:
                    got = requests.feed(await stream.receive())
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    return
                seen.extend(got)
                for request in got:
                    if len(seen) == 1:
                        await stream.send(_result(request))  # kept alive (HTTP/1.1, no Connection: close)
                        await anyio.sleep(0.1)
                        await stream.send_eof()  # idle: the server's side ends; it still reads

    async with anyio.create_task_group() as tasks:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
        tasks.start_soon(listener.serve, handle)
        port = listener.extra(anyio.abc.SocketAttribute.local_port)
        async with HttpClient(f"http://127.0.0.1:{port}/mcp", client()) as c:
            assert text(await c.call_tool("work", {})) == "worked"
            await anyio.sleep(0.5)  # the first connection is ended meanwhile
            assert text(await c.call_tool("work", {})) == "worked"
            assert c.connections_opened == 2
        tasks.cancel_scope.cancel()
    assert [[m["method"] for m in seen] for seen in per_connection] == [["tools/call"], ["tools/call"]]


class _WriteFails(anyio.abc.ByteStream):
    """A kept-alive connection whose write fails (the server reset it before we wrote)."""

    def __init__(self) -> None:
        self.writes = 0

    async def send(self, item: bytes) -> None:
        self.writes += 1
        raise anyio.BrokenResourceError

    async def receive(self, max_bytes: int = 65536) -> bytes:
        raise anyio.EndOfStream

    async def send_eof(self) -> None:
        pass

    async def aclose(self) -> None:
        pass


@both
async def test_a_request_whose_write_failed_on_a_kept_alive_connection_is_sent_on_a_new_one() -> None:
    runs = Runs()
    async with served(make_app(runs)) as server:
        async with HttpClient(server.url, client()) as c:
            dead = _WriteFails()
            c._idle.append((dead, h11.Connection(h11.CLIENT)))  # a stream that says nothing of its socket
            assert text(await c.call_tool("work", {})) == "worked"
            assert dead.writes == 1 and c.connections_opened == 1
    assert runs.count("work") == 1


# -- 2. every failure of the transport is a TransportError -------------------------------------------
JSON_CUT = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n"
            b'{"jsonrpc":"2.0","id":1,"result":{"content":[')
_EVENT = b'data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}\n\n'
SSE_CUT = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
           + b"%x\r\n%s\r\n" % (len(_EVENT), _EVENT)   # one whole event (a log message), then a cut-off chunk
           + b'40\r\ndata: {"jsonrpc"')


@pytest.mark.parametrize("answer", [JSON_CUT, SSE_CUT], ids=["json", "sse"])
@pytest.mark.parametrize("reset", [False, True], ids=["closed", "reset"])
def test_a_server_that_dies_mid_answer_gives_a_transport_error(backend: str, answer: bytes, reset: bool) -> None:
    from _backends import run

    async def main() -> None:
        logged: list[Any] = []
        async with anyio.create_task_group() as tasks:
            port, received = await raw_server(tasks, answer, reset=reset)
            async with HttpClient(f"http://127.0.0.1:{port}/mcp", client()) as c:
                with pytest.raises(TransportError) as caught:
                    await c.call_tool("work", {}, on_log=logged.append)
            tasks.cancel_scope.cancel()
        error = caught.value
        assert isinstance(error, MaybeDelivered) and error.method == "tools/call" and error.request_id == received[0]["id"]
        assert isinstance(error.__cause__, (h11.RemoteProtocolError, anyio.BrokenResourceError, OSError)), error.__cause__
        if answer is SSE_CUT and not reset:
            assert [event.data for event in logged] == ["working"]  # what came before the cut was delivered

    run(main, backend)


@both
async def test_a_server_that_dies_while_streaming_a_call_gives_a_transport_error() -> None:
    runs = Runs()
    async with served(make_app(runs)) as server:

        async def test(relay: Relay, url: str) -> None:
            progress: list[Any] = []
            async with HttpClient(url, client()) as c:
                with pytest.raises(TransportError) as caught:
                    await c.call_tool("stream", {}, on_progress=progress.append)
            assert [p.progress for p in progress] == [1]
            assert isinstance(caught.value, MaybeDelivered) and caught.value.method == "tools/call"
            assert isinstance(caught.value.__cause__, h11.RemoteProtocolError), repr(caught.value.__cause__)
            assert relay.cuts == 1 and len(relay.calls("tools/call")) == 1

        await relayed(server.port, test, cut_after=b"notifications/progress")
    assert runs.count("stream") == 1


# -- 3. a stdio server that dies mid-call --------------------------------------------------------------
MODERN = ("2026-07-28",)  # no initialize-era revision: no server/discover probe before the first call


def modern_client() -> Client:
    return Client(Implementation(name="t", version="1"), supported_versions=MODERN)


@both
async def test_a_stdio_server_that_dies_mid_call_gives_a_transport_error_with_its_exit_status() -> None:
    dies = "import sys; sys.stdin.readline(); sys.stdin.readline(); sys.exit(3)"  # two calls in, then exit 3
    errors: list[BaseException] = []
    async with StdioClient([sys.executable, "-c", dies], modern_client()) as c:

        async def call(n: int) -> None:
            try:
                await c.call_tool("work", {"n": n})
            except (TransportError, ServerError) as exc:
                errors.append(exc)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(call, 1)
            tasks.start_soon(call, 2)
        with pytest.raises(TransportError, match="exited with status 3") as after:
            await c.call_tool("work", {"n": 3})
    assert len(errors) == 2
    for error in errors:
        assert type(error) is TransportError, repr(error)  # not ServerError(-32000): the same error as the next call's
        assert re.fullmatch(r"the server process exited with status 3 before answering tools/call \(id \d+\)", str(error))
    assert str(after.value) == "the server process is not running: it exited with status 3"
    assert c.returncode == 3


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@both
async def test_a_stdio_server_killed_mid_call_names_the_signal() -> None:
    killed = "import os, signal, sys; sys.stdin.readline(); os.kill(os.getpid(), signal.SIGKILL)"
    async with StdioClient([sys.executable, "-c", killed], modern_client()) as c:
        with pytest.raises(TransportError, match="killed by signal 9"):
            await c.call_tool("work", {})


@both
async def test_a_stdio_server_that_dies_while_listening_gives_a_transport_error() -> None:
    acks = ("import json, sys; line = json.loads(sys.stdin.readline()); "
            "print(json.dumps({'jsonrpc': '2.0', 'method': 'notifications/subscriptions/acknowledged', "
            f"'params': {{'notifications': {{'toolsListChanged': True}}, '_meta': {{'{SUBSCRIPTION_ID_META_KEY}': line['id']}}}}}}), "
            "flush=True); sys.exit(4)")
    seen: list[Any] = []
    async with StdioClient([sys.executable, "-c", acks], modern_client()) as c:
        with pytest.raises(TransportError, match="exited with status 4") as caught:
            async with c.listen({"toolsListChanged": True}) as sub:
                async for event in sub:
                    seen.append(event)
    assert type(caught.value) is TransportError
    assert [type(event) for event in seen] == [ListenAck]
