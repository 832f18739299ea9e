"""The GET stream of an initialize-era session, as :class:`HttpClient` reads it (specification
2025-11-25: Basic > Transports > Streamable HTTP, Listening for Messages from the Server;
Resumability and Redelivery; Session Management), over real sockets on 127.0.0.1.

Against our own server (``serve_http``, ``tests/_backends.py``): every session opens its stream
right after the handshake, whatever the client declares, and listening uses that one stream; a
404 on it makes the next request start a new session. Against a server scripted here on h11,
which shows each GET it gets: a stream that ends is reopened after its ``retry`` with
``Last-Event-ID``; progress and the server's requests on it reach the call in flight; a 405
stops it quietly; refusals back off within bounds and end it; closing hands on what the server
sent before it ended the session, and is bounded when the server keeps the stream open. Each
test runs on trio and on asyncio."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
import h11
import pytest
from anyio.streams.memory import MemoryObjectSendStream

from mcpwire import Client, ListChanged, Progress
from mcpwire.types import Implementation
from mcpwire_adapters import App, Context
from mcpwire_adapters.client.http import HttpClient
from mcpwire_adapters.client.session_stream import DEFAULT_RETRY_MS, MIN_BACKOFF_MS, SessionStreamReader

import _backends
from _backends import run

ERA = ("2025-11-25", "2025-06-18", "2025-03-26")
WAIT = 10.0  # seconds any one thing awaited here may take


def plain_client(**kw: Any) -> Client:
    """A client that declares no capability: nothing but the session opens its GET stream."""
    return Client(Implementation(name="t", version="1"), **kw)


async def until(done: Callable[[], bool]) -> None:
    with anyio.fail_after(WAIT):
        while not done():
            await anyio.sleep(0.01)


# -- our server ---------------------------------------------------------------------------------------


def make_app(versions: tuple[str, ...] = ERA) -> App:
    app = App("old-server", "2.0", supported_versions=versions)

    @app.tool(description="changes the tools list")
    async def change(ctx: Context, arguments: dict[str, Any]) -> str:
        ctx.app.notify_list_changed("tools")
        return "changed"

    return app


def test_a_session_reads_its_get_stream_from_the_handshake_on_and_listens_on_that_one(backend: str) -> None:
    async def main() -> None:
        app = make_app()
        async with _backends.served(app) as server:
            async with HttpClient(server.url, plain_client()) as c:
                await c.connect()
                assert c.client.initialize_era and await server.call(lambda: app.server.open_streams) == 1
                async with c.listen({"toolsListChanged": True}) as sub:
                    assert await server.call(lambda: app.server.open_streams) == 1  # the same stream, no second GET
                    await c.call_tool("change", {})
                    with anyio.fail_after(WAIT):
                        event = await sub.__anext__()
                assert isinstance(event, ListChanged) and event.kind == "tools"
            await until_async(lambda: server.call(lambda: app.server.open_streams), 0)  # DELETE ended it

    run(main, backend)


def test_a_2026_07_28_session_opens_no_get_stream(backend: str) -> None:
    async def main() -> None:
        app = make_app(("2026-07-28", *ERA))
        async with _backends.served(app) as server, HttpClient(server.url, plain_client()) as c:
            await c.connect()
            assert not c.client.initialize_era
            await c.call_tool("change", {})
            assert await server.call(lambda: app.server.open_streams) == 0

    run(main, backend)


def test_a_404_on_the_get_stream_makes_the_next_request_start_a_new_session(
        caplog: pytest.LogCaptureFixture, backend: str) -> None:
    async def main() -> None:
        app = make_app()
        async with _backends.served(app) as server, HttpClient(server.url, plain_client()) as c:
            await c.connect()
            first = c.client.session_id
            assert first is not None
            await server.call(app.server.sessions.remove, first)
            await server.call(app.close_streams)  # the stream ends; its reopening meets the 404
            await until(lambda: any("HTTP 404 on its GET stream" in r.getMessage() for r in caplog.records))
            assert c.sessions_started == 1
            assert [t.name for t in await c.list_tools()] == ["change"]
            assert c.sessions_started == 2 and c.client.session_id not in (None, first)
            await until_async(lambda: server.call(lambda: app.server.open_streams), 1)  # the new session's stream

    with caplog.at_level(logging.INFO, logger="mcpwire.client"):
        run(main, backend, timeout=30)
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("HTTP 404 on its GET stream" in m and "starting a new session" in m for m in warned), warned


async def until_async(read: Callable[[], Any], expected: Any) -> None:
    with anyio.fail_after(WAIT):
        while await read() != expected:
            await anyio.sleep(0.02)


# -- a server scripted here -----------------------------------------------------------------------------


@dataclass
class Get:
    """What the scripted server answers one GET: ``status`` (not 200: that status and no body),
    else an event stream of ``frames``, ended after them when ``end``, else held open (what
    :meth:`Scripted.push` sends goes on it) until the session ends."""

    status: int = 200
    frames: list[bytes] = field(default_factory=list)
    end: bool = False


def frame(message: dict[str, Any] | None = None, *, id: str | None = None, retry: int | None = None) -> bytes:
    out = b"" if id is None else f"id: {id}\n".encode()
    out += b"" if retry is None else f"retry: {retry}\n".encode()
    return out + b"data: " + (b"" if message is None else json.dumps(message).encode()) + b"\n\n"


def log(data: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": data}}


class Scripted:
    """A 2025-11-25 server on h11 that answers ``initialize`` (session ``s1``), a POST naming no
    session with 400, notifications and the client's answers with 202, any other request with
    ``{}`` (``tools/call``: ``on_call`` runs first), each GET with the next of ``gets`` (then
    ``then``), and DELETE with 200 after ``on_delete``; it keeps ``requests`` (time, method,
    headers, JSON body) in order."""

    def __init__(self, gets: list[Get], then: Get | None = None) -> None:
        self.gets = list(gets)
        self.then = then or Get()
        self.requests: list[tuple[float, str, dict[bytes, bytes], Any]] = []
        self.on_call: Callable[[dict[str, Any]], Any] | None = None
        self.on_delete: Callable[[], Any] | None = None
        self.answered = anyio.Event()  # the client answered one of our requests
        self._live: list[MemoryObjectSendStream[bytes]] = []
        self.url = ""

    def seen(self, method: str) -> list[tuple[float, dict[bytes, bytes]]]:
        return [(when, headers) for when, m, headers, _ in self.requests if m == method]

    async def push(self, data: bytes) -> None:
        """Send ``data`` on every open GET stream."""
        for live in self._live:
            await live.send(data)

    def end_streams(self) -> None:
        for live in self._live:
            live.close()

    async def serve(self, stream: anyio.abc.ByteStream) -> None:
        conn = h11.Connection(h11.SERVER)
        async with stream:
            while True:
                request, body = await self._request(conn, stream)
                if request is None:
                    return
                headers = {k.lower(): v for k, v in request.headers}
                message: dict[str, Any] = json.loads(body) if body else {}
                self.requests.append((anyio.current_time(), request.method.decode(), headers, message))
                if request.method == b"GET":
                    await self._get(conn, stream)
                    return
                if request.method == b"DELETE":
                    if self.on_delete is not None:
                        await self.on_delete()
                    self.end_streams()
                    await self._reply(conn, stream, 200, b"")
                elif message.get("method") != "initialize" and b"mcp-session-id" not in headers:
                    # As initialize-era servers answer what names no session (the probe included).
                    error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "No session"}}
                    await self._reply(conn, stream, 400, json.dumps(error).encode(),
                                      [(b"content-type", b"application/json")])
                else:
                    await self._post(conn, stream, message)
                if conn.our_state is h11.MUST_CLOSE:
                    return
                conn.start_next_cycle()

    async def _request(self, conn: h11.Connection, stream: anyio.abc.ByteStream) -> tuple[h11.Request | None, bytes]:
        request, body = None, b""
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                try:
                    conn.receive_data(await stream.receive(65536))
                except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    return None, b""
            elif isinstance(event, h11.Request):
                request = event
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                return request, body
            else:
                return None, b""

    async def _reply(self, conn: h11.Connection, stream: anyio.abc.ByteStream, status: int, body: bytes,
                     headers: list[tuple[bytes, bytes]] | None = None) -> None:
        head = [(b"content-length", str(len(body)).encode()), *(headers or [])]
        await stream.send(conn.send(h11.Response(status_code=status, headers=head)) + conn.send(h11.Data(data=body))
                          + conn.send(h11.EndOfMessage()))

    async def _post(self, conn: h11.Connection, stream: anyio.abc.ByteStream, message: dict[str, Any]) -> None:
        if "method" not in message:
            self.answered.set()
            await self._reply(conn, stream, 202, b"")
            return
        if "id" not in message:
            await self._reply(conn, stream, 202, b"")
            return
        result: dict[str, Any] = {}
        if message["method"] == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {"logging": {}, "tools": {}},
                      "serverInfo": {"name": "scripted", "version": "1"}}
        elif message["method"] == "tools/call":
            if self.on_call is not None:
                await self.on_call(message)
            result = {"content": [{"type": "text", "text": "done"}]}
        body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
        await self._reply(conn, stream, 200, body, [(b"content-type", b"application/json"), (b"mcp-session-id", b"s1")])

    async def _get(self, conn: h11.Connection, stream: anyio.abc.ByteStream) -> None:
        plan = self.gets.pop(0) if self.gets else self.then
        if plan.status != 200:
            await self._reply(conn, stream, plan.status, b"")
            return
        await stream.send(conn.send(h11.Response(status_code=200, headers=[(b"content-type", b"text/event-stream")])))
        for data in plan.frames:
            await stream.send(conn.send(h11.Data(data=data)))
        if not plan.end:
            send, receive = anyio.create_memory_object_stream[bytes](16)
            self._live.append(send)
            try:
                async for data in receive:
                    await stream.send(conn.send(h11.Data(data=data)))
            finally:
                self._live.remove(send)
        await stream.send(conn.send(h11.EndOfMessage()))


@asynccontextmanager
async def scripted(server: Scripted) -> AsyncIterator[Scripted]:
    """``server`` on 127.0.0.1 and a free port until the block ends."""
    async with await anyio.create_tcp_listener(local_host="127.0.0.1") as listener, anyio.create_task_group() as tasks:
        port = listener.extra(anyio.abc.SocketAttribute.local_port)
        server.url = f"http://127.0.0.1:{port}/mcp"
        tasks.start_soon(listener.serve, server.serve)
        try:
            yield server
        finally:
            server.end_streams()
            tasks.cancel_scope.cancel()


def test_a_stream_that_ends_is_reopened_after_its_retry_with_the_last_event_id(backend: str) -> None:
    async def main() -> None:
        logs: list[Any] = []
        gets = [Get(frames=[frame(log("one"), id="e1", retry=50)], end=True), Get(frames=[frame(log("two"), id="e2")])]
        async with scripted(Scripted(gets)) as server:
            async with HttpClient(server.url, plain_client(), on_log=lambda m: logs.append(m.data)) as c:
                await c.connect()
                await until(lambda: len(logs) == 2)
                assert logs == ["one", "two"]
            (first, opened), (second, resumed) = server.seen("GET")
            assert b"last-event-id" not in opened and resumed[b"last-event-id"] == b"e1"
            assert opened[b"mcp-session-id"] == resumed[b"mcp-session-id"] == b"s1"
            assert opened[b"accept"] == b"text/event-stream"
            assert 0.045 <= second - first < DEFAULT_RETRY_MS / 1000  # the stream's retry, not the default
            assert len(server.seen("DELETE")) == 1

    run(main, backend)


def test_progress_and_the_server_s_requests_on_the_get_stream_reach_the_call(backend: str) -> None:
    async def main() -> None:
        server = Scripted([Get()])

        async def on_call(message: dict[str, Any]) -> None:
            token = message["params"]["_meta"]["progressToken"]
            await server.push(frame({"jsonrpc": "2.0", "method": "notifications/progress",
                                     "params": {"progressToken": token, "progress": 1, "total": 2}}))
            # A ping after it: once answered, the client has read the progress before it.
            await server.push(frame({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"}))
            with anyio.move_on_after(WAIT):
                await server.answered.wait()

        server.on_call = on_call
        progress: list[Progress] = []
        async with scripted(server), HttpClient(server.url, plain_client()) as c:
            await c.connect()
            result = await c.call_tool("work", {}, on_progress=progress.append)
            assert result.data["content"][0]["text"] == "done"
        assert [(p.progress, p.total) for p in progress] == [(1, 2)]
        answers = [(h, m) for _, method, h, m in server.requests if method == "POST" and "method" not in m]
        assert [m for _, m in answers] == [{"jsonrpc": "2.0", "id": "srv-1", "result": {}}]
        assert answers[0][0][b"mcp-session-id"] == b"s1"

    run(main, backend)


def test_a_server_that_offers_no_get_stream_is_asked_once(caplog: pytest.LogCaptureFixture, backend: str) -> None:
    async def main() -> None:
        async with scripted(Scripted([Get(status=405)])) as server:
            async with HttpClient(server.url, plain_client()) as c:
                await c.connect()
                await until(lambda: any("HTTP 405" in r.getMessage() for r in caplog.records))
                assert (await c.call_tool("work", {})).data["content"][0]["text"] == "done"
                await anyio.sleep(1.5 * DEFAULT_RETRY_MS / 1000)  # past the wait before any reopening
            assert len(server.seen("GET")) == 1

    with caplog.at_level(logging.DEBUG, logger="mcpwire.client"):
        run(main, backend)
    said = [r for r in caplog.records if "HTTP 405" in r.getMessage()]
    assert [r.levelno for r in said] == [logging.DEBUG]  # quietly


def test_refusals_back_off_within_bounds_and_end_the_stream(caplog: pytest.LogCaptureFixture, backend: str) -> None:
    async def main() -> None:
        # A priming event names the stream's retry (20 ms), then every GET is refused.
        server = Scripted([Get(frames=[frame(id="e1", retry=20)], end=True)], then=Get(status=503))
        async with scripted(server), HttpClient(server.url, plain_client()) as c:
            await c.connect()
            await until(lambda: any("failed 5 times in a row" in r.getMessage() for r in caplog.records))
            await anyio.sleep(0.3)
            gets = server.seen("GET")
        assert len(gets) == 1 + SessionStreamReader.max_failures
        assert all(headers[b"last-event-id"] == b"e1" for _, headers in gets[1:])
        waits = [later - earlier for (earlier, _), (later, _) in zip(gets, gets[1:])]
        assert waits[0] < DEFAULT_RETRY_MS / 1000  # the retry the stream named, after a round that brought its id
        for n, wait in enumerate(waits[1:], start=1):  # then doubled from the least wait on, each refusal
            assert wait >= 0.9 * MIN_BACKOFF_MS / 1000 * 2 ** (n - 1), waits

    with caplog.at_level(logging.INFO, logger="mcpwire.client"):
        run(main, backend, timeout=30)


def test_closing_hands_on_what_the_stream_brought_before_the_session_ended(backend: str) -> None:
    async def main() -> None:
        server = Scripted([Get()])

        async def on_delete() -> None:  # said after the client began to close
            await server.push(frame(log("bye")))

        server.on_delete = on_delete
        logs: list[Any] = []
        async with scripted(server):
            async with HttpClient(server.url, plain_client(), on_log=lambda m: logs.append(m.data)) as c:
                await c.connect()
            assert logs == ["bye"]
            assert len(server.seen("GET")) == 1

    run(main, backend)


def test_closing_is_bounded_when_the_server_keeps_the_stream_open(backend: str) -> None:
    async def main() -> None:
        server = Scripted([Get()])
        server.end_streams = lambda: None  # type: ignore[method-assign]  # DELETE leaves the stream open
        async with scripted(server):
            c = HttpClient(server.url, plain_client())
            async with c:
                await c.connect()
                started = anyio.current_time()
            took = anyio.current_time() - started
            assert HttpClient.drain_timeout * 0.9 <= took < HttpClient.drain_timeout + 2
            assert len(server.seen("DELETE")) == 1

    run(main, backend)


def test_mcpwire_call_shows_a_log_line_the_get_stream_brings_after_the_answer(backend: str) -> None:
    async def main() -> None:
        server = Scripted([Get()])

        async def on_delete() -> None:  # after the call's answer: only the GET stream carries it
            await server.push(frame(log("said after the answer")))

        server.on_delete = on_delete
        async with scripted(server):
            done = await anyio.run_process([sys.executable, "-m", "mcpwire_adapters.cli", "call", server.url, "work",
                                            "--log-level", "info", "--no-input"], check=False)
        assert done.returncode == 0, done.stderr
        assert done.stdout == b"done\n"
        assert b"log [info] said after the answer\n" in done.stderr, done.stderr

    run(main, backend, timeout=30)
