"""Tests of mcpwire_adapters.serve.asgi.app: the ASGI 3 adapter.

Two halves:

- in-process: the ASGI callable driven directly with a fake ``receive``/``send``, under asyncio
  and under trio (anyio's pytest plugin runs each test on both backends), every test under
  ``anyio.fail_after``;
- real servers on 127.0.0.1 (a port the OS picks): uvicorn, hypercorn with its asyncio worker
  and with its trio worker, each in a thread, talked to with ``http.client`` (socket timeouts),
  and the Starlette example (``examples/starlette_mount.py``) under uvicorn. Servers are
  stopped by the fixtures and their threads joined with a deadline.
"""

from __future__ import annotations

import asyncio
import http.client
import importlib
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, MutableMapping
from pathlib import Path
from typing import Any

import anyio
import pytest
from _asgi_servers import serve_hypercorn, serve_uvicorn
from mcpwire_adapters import App, AsgiApp, AsgiConfig, Context, asgi_app
import mcpwire_adapters.serve.asgi.app as asgi_module
from mcpwire_adapters.serve.asgi.app import request_target
from mcpwire_adapters.serve.asgi.on_asyncio import on_trio

from mcpwire import HttpPolicy, HttpRequest, ListenStream, RemoteProtocolError, error_reply
from mcpwire.framing import SSEReader

REPO = Path(__file__).resolve().parents[3]
TIMEOUT = 10.0
VERSION = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": {}}
MAX_BODY = 1024
INVALID_REQUEST = -32600
Message = dict[str, Any]


# -- the application under test ------------------------------------------------------------------
class Probe:
    """What the handlers report, keyed per test: thread-safe events (servers run in threads)."""

    def __init__(self) -> None:
        self._events: dict[str, threading.Event] = {}
        self._lock = threading.Lock()

    def event(self, key: str) -> threading.Event:
        with self._lock:
            return self._events.setdefault(key, threading.Event())


def make_app(probe: Probe, **options: Any) -> App:
    app = App("asgi-test", "1.0", http=HttpPolicy(max_body_bytes=MAX_BODY), **options)

    @app.tool(description="Echo the text back")
    async def echo(ctx: Context, arguments: dict[str, Any]) -> str:
        return str(arguments.get("text", ""))

    @app.tool(description="Echo the text back from a worker thread")
    def echo_sync(ctx: Context, arguments: dict[str, Any]) -> str:
        return f"thread:{arguments.get('text', '')}"

    @app.tool(description="Report progress three times, then answer")
    async def progress(ctx: Context, arguments: dict[str, Any]) -> str:
        for step in (1, 2, 3):
            await ctx.progress(step, total=3, message=f"step {step}")
        return "done"

    async def until_cancelled(key: str) -> str:
        # Wait until cancelled (``key:cancelled`` set, the cancellation raised on).
        try:
            await anyio.sleep(TIMEOUT * 3)
        except anyio.get_cancelled_exc_class():
            probe.event(key + ":cancelled").set()
            raise
        return "finished"

    @app.tool(description="Optionally report progress, then wait until cancelled")
    async def slow(ctx: Context, arguments: dict[str, Any]) -> str:
        key = str(arguments["key"])
        if arguments.get("report"):
            try:
                await ctx.progress(1, total=2)
            except Exception:  # a careless handler: a client that left must reach it as a cancellation
                probe.event(key + ":send-failed").set()
        probe.event(key + ":started").set()
        return await until_cancelled(key)

    @app.tool(description="Wait; swallow a first cancellation (a stubborn handler), then wait until cancelled")
    async def stubborn(ctx: Context, arguments: dict[str, Any]) -> str:
        key = str(arguments["key"])
        probe.event(key + ":started").set()
        try:
            await anyio.sleep(TIMEOUT * 3)
        except anyio.get_cancelled_exc_class():
            probe.event(key + ":swallowed").set()
        return await until_cancelled(key)

    @app.tool(description="Tell listen streams the tool list changed")
    async def touch(ctx: Context, arguments: dict[str, Any]) -> str:
        ctx.app.notify_list_changed("tools")
        return "touched"

    return app


def rpc(method: str, params: dict[str, Any] | None = None, request_id: int | str = 1, token: str | None = None) -> bytes:
    meta = {**META, "progressToken": token} if token is not None else META
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**(params or {}), "_meta": meta}}
    return json.dumps(body).encode()


def call_tool(name: str, arguments: dict[str, Any] | None = None, token: str | None = None) -> bytes:
    return rpc("tools/call", {"name": name, "arguments": arguments or {}}, token=token)


LISTEN = rpc("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, request_id="listen")


def mcp_headers(method: str, name: str | None = None) -> list[tuple[str, str]]:
    headers = [
        ("host", "127.0.0.1"),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", VERSION),
        ("mcp-method", method),
    ]
    if name is not None:
        headers.append(("mcp-name", name))
    return headers


def tool_headers(name: str) -> list[tuple[str, str]]:
    return mcp_headers("tools/call", name)


def sse_messages(body: bytes) -> list[Message]:
    reader = SSEReader()
    events = reader.feed(body)
    return [json.loads(event.data) for event in events if event.data]


# -- in-process harness -----------------------------------------------------------------------------
@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def http_scope(
    headers: list[tuple[str, str]], *, method: str = "POST", path: str = "/mcp", root_path: str = "",
    query: bytes = b"",
) -> Message:
    return {
        "type": "http", "asgi": {"version": "3.0", "spec_version": "2.4"}, "http_version": "1.1",
        "method": method, "scheme": "http", "path": path, "raw_path": path.encode(), "root_path": root_path,
        "query_string": query, "headers": [(k.encode(), v.encode()) for k, v in headers],
        "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000),
    }


class Call:
    """One in-process ASGI call: messages pushed to its ``receive``, messages its app sent."""

    def __init__(self, scope: Message) -> None:
        self.scope = scope
        self._inbox_in, self._inbox = anyio.create_memory_object_stream[Message](float("inf"))
        self.sent: list[Message] = []
        self.receives = 0  # calls of receive()
        self.taken = 0  # messages they returned (a receive() abandoned while it waits takes none)
        self.done = False
        self.send_error: BaseException | None = None  # raised by send() from the next call on

    def push(self, message: Message) -> None:
        self._inbox_in.send_nowait(message)

    def push_body(self, body: bytes, more: bool = False) -> None:
        self.push({"type": "http.request", "body": body, "more_body": more})

    async def receive(self) -> Message:
        self.receives += 1
        message = await self._inbox.receive()
        self.taken += 1
        return message

    async def send(self, message: MutableMapping[str, Any]) -> None:
        if self.send_error is not None:
            raise self.send_error
        self.sent.append(dict(message))

    async def run(self, asgi: Any) -> None:
        await asgi(self.scope, self.receive, self.send)
        self.done = True

    # -- what was sent
    @property
    def status(self) -> int:
        assert self.sent and self.sent[0]["type"] == "http.response.start", self.sent
        return int(self.sent[0]["status"])

    def header(self, name: bytes) -> bytes | None:
        return next((v for k, v in self.sent[0]["headers"] if k == name), None)

    @property
    def body(self) -> bytes:
        return b"".join(m["body"] for m in self.sent if m["type"] == "http.response.body")

    @property
    def complete(self) -> bool:
        return any(m["type"] == "http.response.body" and not m.get("more_body", False) for m in self.sent)

    def json(self) -> Message:
        assert self.header(b"content-type") == b"application/json"
        message: Message = json.loads(self.body)
        return message


class AtOnce(Call):
    """A server that already holds what the client sent (as uvicorn holds a body it has read):
    ``receive()`` answers a queued message without waiting, and waits only when none is queued.
    The request's first wait then comes wherever the test puts it."""

    async def receive(self) -> Message:
        self.receives += 1
        try:
            message = self._inbox.receive_nowait()
        except anyio.WouldBlock:
            message = await self._inbox.receive()
        self.taken += 1
        return message


def handed_to_engine(app: App) -> list[tuple[str, HttpRequest]]:
    """What ``app``'s engine is handed from now on, in order: ``("check_head", head)`` (an
    ``HttpRequest`` of the head's method and target) and ``("receive_http", request)``."""
    handed: list[tuple[str, HttpRequest]] = []
    receive_http, check_head = app.server.receive_http, app.server.check_head

    def spy(request: HttpRequest, **kwargs: Any) -> Any:
        handed.append(("receive_http", request))
        return receive_http(request, **kwargs)

    def spy_head(method: str, target: str, headers: Any) -> Any:
        handed.append(("check_head", HttpRequest(method=method, target=target, headers=())))
        return check_head(method, target, headers)

    app.server.receive_http = spy  # type: ignore[method-assign]
    app.server.check_head = spy_head  # type: ignore[method-assign, assignment]
    return handed


async def until(predicate: Callable[[], bool]) -> None:
    while not predicate():
        await anyio.sleep(0.005)


async def request(asgi: Any, body: bytes, headers: list[tuple[str, str]], **scope: Any) -> Call:
    """A whole request through ``asgi`` (body in one message) and its finished response."""
    call = Call(http_scope(headers, **scope))
    call.push_body(body)
    with anyio.fail_after(TIMEOUT):
        await call.run(asgi)
    return call


@pytest.fixture
def probe() -> Probe:
    return Probe()


@pytest.fixture
def app(probe: Probe) -> App:
    return make_app(probe)


# -- in-process: answers ----------------------------------------------------------------------------
@pytest.mark.anyio
async def test_json_answer(app: App) -> None:
    call = await request(AsgiApp(app), call_tool("echo", {"text": "hi"}), tool_headers("echo"))
    assert call.status == 200 and call.complete
    assert call.header(b"content-length") == str(len(call.body)).encode()
    assert call.json()["result"]["content"] == [{"type": "text", "text": "hi"}]


@pytest.mark.anyio
async def test_sync_handler_runs_in_a_worker_thread(app: App) -> None:
    ran_on: list[int] = []

    @app.tool(description="Report the thread it runs on")
    def where(ctx: Context, arguments: dict[str, Any]) -> str:
        ran_on.append(threading.get_ident())
        return "here"

    call = await request(asgi_app(app), call_tool("echo_sync", {"text": "x"}), tool_headers("echo_sync"))
    assert call.json()["result"]["content"][0]["text"] == "thread:x"
    call = await request(asgi_app(app), call_tool("where"), tool_headers("where"))
    assert call.json()["result"]["content"][0]["text"] == "here"
    assert len(ran_on) == 1 and ran_on[0] != threading.get_ident()  # not the event loop's thread


@pytest.mark.anyio
async def test_engine_replies_pass_through(app: App) -> None:
    asgi = AsgiApp(app)
    listed = await request(asgi, rpc("tools/list"), mcp_headers("tools/list"))
    assert listed.status == 200 and {t["name"] for t in listed.json()["result"]["tools"]} >= {"echo", "slow"}
    wrong_method = await request(asgi, b"", [], method="GET")
    assert wrong_method.status == 405 and wrong_method.header(b"allow") == b"POST"
    assert wrong_method.json()["error"]["code"] == INVALID_REQUEST
    wrong_path = await request(asgi, rpc("tools/list"), mcp_headers("tools/list"), path="/other")
    assert wrong_path.status == 404
    notification = json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}})
    accepted = await request(asgi, notification.encode(), mcp_headers("notifications/cancelled"))
    assert accepted.status == 202 and accepted.body == b"" and accepted.complete


@pytest.mark.anyio
async def test_sse_progress(app: App) -> None:
    call = await request(AsgiApp(app), call_tool("progress", token="tok"), tool_headers("progress"))
    assert call.status == 200 and call.header(b"content-type") == b"text/event-stream"
    assert call.header(b"content-length") is None
    bodies = [m for m in call.sent if m["type"] == "http.response.body"]
    assert all(m["more_body"] for m in bodies[:-1]) and not bodies[-1]["more_body"]
    messages = sse_messages(call.body)
    assert [m["params"]["progress"] for m in messages[:-1]] == [1, 2, 3]
    assert all(m["method"] == "notifications/progress" for m in messages[:-1])
    assert messages[-1]["result"]["content"][0]["text"] == "done"


@pytest.mark.anyio
async def test_body_may_arrive_in_pieces(app: App) -> None:
    body = call_tool("echo", {"text": "pieces"})
    call = Call(http_scope(tool_headers("echo")))
    for i in range(len(body)):
        call.push_body(body[i:i + 1], more=True)
    call.push_body(b"")
    with anyio.fail_after(TIMEOUT):
        await call.run(AsgiApp(app))
    assert call.json()["result"]["content"][0]["text"] == "pieces"


# -- in-process: limits -------------------------------------------------------------------------------
@pytest.mark.anyio
async def test_413_from_content_length_reads_nothing(app: App) -> None:
    """The head is refused without waiting for the body (on asyncio as soon as that wait begins:
    the wait is abandoned, nothing is taken)."""
    call = Call(http_scope([*tool_headers("echo"), ("content-length", str(MAX_BODY + 1))]))
    with anyio.fail_after(TIMEOUT):
        await call.run(AsgiApp(app))
    assert call.taken == 0
    assert call.status == 413 and call.json()["error"]["code"] == INVALID_REQUEST


@pytest.mark.anyio
@pytest.mark.parametrize("status, name, value", [
    (413, "content-length", str(MAX_BODY + 1)), (415, "content-type", "text/plain"), (406, "accept", "text/html"),
])
async def test_a_head_refused_with_its_body_held_gets_the_same_answer(
    app: App, status: int, name: str, value: str, anyio_backend: str
) -> None:
    """With the body already held (no wait), on asyncio the head is checked with it (receive_http,
    in the same order; the body's size by the read): the answer is the one given without the
    body. On trio the head is checked first either way."""
    headers = [*((k, v) for k, v in tool_headers("echo") if k != name), (name, value)]
    body = call_tool("echo", {"text": "x"})
    if name == "content-length":  # as servers frame it: the body is as long as the header says
        body = body[:-1] + b" " * (MAX_BODY + 1 - len(body)) + b"}"
    waiting, held = Call(http_scope(headers)), AtOnce(http_scope(headers))
    held.push_body(body)
    with anyio.fail_after(TIMEOUT):
        await waiting.run(AsgiApp(app))
        await held.run(AsgiApp(app))
    assert waiting.taken == 0 and held.taken == (1 if anyio_backend == "asyncio" else 0)
    assert waiting.status == held.status == status and waiting.sent == held.sent


@pytest.mark.anyio
@pytest.mark.parametrize("kind", [Call, AtOnce], ids=["body-waits", "body-at-once"])
async def test_with_a_guard_the_head_is_refused_before_the_token_is_looked_at(app: App, kind: type[Call]) -> None:
    """An OAuth guard keeps the admission order: the head's refusal (here 415) first, then the
    token (docs/auth.md), whether or not the body is already held."""

    class Guard:  # an OAuthResource that refuses every token
        checked = 0

        def metadata_for(self, method: str, target: str) -> None:
            return None

        async def check_http(self, method: str, target: str, headers: Any, body: bytes) -> Any:
            Guard.checked += 1
            return error_reply(RemoteProtocolError("Unauthorized", code=INVALID_REQUEST, http_status=401))

    headers = [*((k, v) for k, v in tool_headers("echo") if k != "content-type"), ("content-type", "text/plain")]
    call = kind(http_scope(headers))
    call.push_body(call_tool("echo", {"text": "x"}))
    with anyio.fail_after(TIMEOUT):
        await call.run(AsgiApp(app, config=AsgiConfig(auth=Guard())))  # type: ignore[arg-type]
    assert call.status == 415 and Guard.checked == 0 and call.taken == 0


@pytest.mark.anyio
async def test_413_as_soon_as_the_body_passes_the_limit(app: App) -> None:
    call = Call(http_scope(tool_headers("echo")))  # chunked: no Content-Length
    for _ in range(5):
        call.push_body(b"x" * 600, more=True)
    with anyio.fail_after(TIMEOUT):
        await call.run(AsgiApp(app))
    assert call.receives == 2  # 1200 bytes > 1024: nothing further is read
    assert call.status == 413 and "1024" in call.json()["error"]["message"]


@pytest.mark.anyio
@pytest.mark.parametrize("kind", [Call, AtOnce], ids=["body-waits", "body-at-once"])
async def test_413_for_a_body_over_the_limit_in_one_message(app: App, kind: type[Call]) -> None:
    call = kind(http_scope(tool_headers("echo")))  # no Content-Length
    call.push_body(b"x" * (MAX_BODY + 1))
    with anyio.fail_after(TIMEOUT):
        await call.run(AsgiApp(app))
    assert call.status == 413 and str(MAX_BODY) in call.json()["error"]["message"]


@pytest.mark.anyio
@pytest.mark.parametrize("kind", [Call, AtOnce], ids=["body-waits", "body-at-once"])
async def test_a_disconnect_before_any_body_answers_nothing(app: App, kind: type[Call]) -> None:
    call = kind(http_scope(tool_headers("echo")))
    call.push({"type": "http.disconnect"})
    with anyio.fail_after(TIMEOUT):
        await call.run(AsgiApp(app))
    assert call.sent == [] and call.taken == 1


@pytest.mark.anyio
@pytest.mark.parametrize("kind", [Call, AtOnce], ids=["body-waits", "body-at-once"])
@pytest.mark.parametrize("split", [False, True], ids=["one-message", "two-messages"])
@pytest.mark.parametrize("wrap", [bytearray, memoryview])
async def test_a_body_given_as_other_bytes_is_taken_the_same(
    app: App, kind: type[Call], split: bool, wrap: Callable[[bytes], Any]
) -> None:
    body = call_tool("echo", {"text": "hi"})
    handed = handed_to_engine(app)
    call = kind(http_scope(tool_headers("echo")))
    if split:
        call.push({"type": "http.request", "body": body[:5], "more_body": True})
        call.push({"type": "http.request", "body": wrap(body[5:])})
    else:
        call.push({"type": "http.request", "body": wrap(body)})
    with anyio.fail_after(TIMEOUT):
        await call.run(AsgiApp(app))
    assert call.status == 200 and call.json()["result"]["content"][0]["text"] == "hi"
    taken = [request.body for step, request in handed if step == "receive_http"]
    assert taken == [body] and type(taken[0]) is bytes  # the engine takes bytes


@pytest.mark.anyio
@pytest.mark.parametrize("kind", [Call, AtOnce], ids=["body-waits", "body-at-once"])
@pytest.mark.parametrize("size", [10, MAX_BODY], ids=["within-the-limit", "over-the-limit"])
async def test_the_usual_body_is_taken_as_a_body_in_pieces(kind: type[Call], size: int) -> None:
    """A body in one ``http.request`` message of bytes (taken in ``serve`` itself), and the same
    body in two messages or as a bytearray (taken by ``_receive_body``): the engine is handed
    the same, the client gets the same answer."""
    body = call_tool("echo", {"text": "x" * size})
    seen = []
    for messages in ([body], [body[:7], body[7:]], [bytearray(body)]):
        app = make_app(Probe())
        handed = handed_to_engine(app)
        call = kind(http_scope(tool_headers("echo")))
        for i, piece in enumerate(messages):
            call.push({"type": "http.request", "body": piece, "more_body": i < len(messages) - 1})
        with anyio.fail_after(TIMEOUT):
            await call.run(AsgiApp(app))
        seen.append(([(step, r.method, r.target, bytes(r.body)) for step, r in handed], call.sent))
    assert seen[0][1][0]["status"] == (200 if size < MAX_BODY else 413)
    assert seen[1] == seen[0] and seen[2] == seen[0]


@pytest.mark.anyio
async def test_a_body_exactly_at_the_limit_is_read(app: App) -> None:
    body = call_tool("echo", {"text": ""})
    body = body[:-1] + b" " * (MAX_BODY - len(body)) + b"}"
    call = await request(AsgiApp(app), body, tool_headers("echo"))
    assert call.status == 200


@pytest.mark.anyio
async def test_408_when_the_body_is_too_slow(app: App) -> None:
    call = Call(http_scope(tool_headers("echo")))
    call.push_body(b"{", more=True)
    with anyio.fail_after(TIMEOUT):
        await call.run(AsgiApp(app, config=AsgiConfig(body_timeout=0.1)))
    assert call.status == 408 and call.json()["error"]["code"] == INVALID_REQUEST


@pytest.mark.anyio
async def test_disconnect_while_reading_the_body_answers_nothing(app: App) -> None:
    call = Call(http_scope(tool_headers("echo")))
    call.push_body(b"{", more=True)
    call.push({"type": "http.disconnect"})
    with anyio.fail_after(TIMEOUT):
        await call.run(AsgiApp(app))
    assert call.sent == []


# -- in-process: cancellation ------------------------------------------------------------------------
@pytest.mark.anyio
@pytest.mark.parametrize("report", [False, True], ids=["before-head", "after-sse-head"])
@pytest.mark.parametrize("kind", [Call, AtOnce], ids=["body-waits", "body-at-once"])
async def test_disconnect_cancels_the_handler(app: App, probe: Probe, report: bool, kind: type[Call]) -> None:
    # body-at-once: on asyncio the handler's wait is the request's first (the watcher starts there)
    call = kind(http_scope(tool_headers("slow")))
    call.push_body(call_tool("slow", {"key": "k", "report": report}, token="tok"))
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(call.run, AsgiApp(app))
            await until(probe.event("k:started").is_set)
            call.push({"type": "http.disconnect"})
            await until(lambda: call.done)
    assert probe.event("k:cancelled").is_set()
    assert not call.complete  # the cancelled exchange sends nothing more
    if report:
        assert call.status == 200 and len(sse_messages(call.body)) == 1


@pytest.mark.anyio
@pytest.mark.parametrize("kind", [Call, AtOnce], ids=["body-waits", "body-at-once"])
async def test_a_refused_send_cancels_the_handler(app: App, probe: Probe, kind: type[Call]) -> None:
    # body-at-once: on asyncio nothing has waited yet, so the handler's scope finds its task as it cancels
    call = kind(http_scope(tool_headers("slow")))
    call.send_error = OSError("client went away")  # as servers raise after a disconnect
    call.push_body(call_tool("slow", {"key": "s", "report": True}, token="tok"))
    with anyio.fail_after(TIMEOUT):
        await call.run(AsgiApp(app))
    assert call.sent == [] and not probe.event("s:started").is_set()
    assert not probe.event("s:send-failed").is_set()  # cancelled at the send, not told by an exception


@pytest.mark.anyio
async def test_a_stalled_send_is_abandoned(app: App) -> None:
    class Stalled(Call):
        async def send(self, message: MutableMapping[str, Any]) -> None:
            await anyio.sleep_forever()

    call = Stalled(http_scope(tool_headers("echo")))
    call.push_body(call_tool("echo", {"text": "x"}))
    with anyio.fail_after(TIMEOUT):
        await call.run(AsgiApp(app, config=AsgiConfig(send_timeout=0.1)))


@pytest.mark.anyio
async def test_an_adapter_bug_answers_500_jsonrpc(app: App, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("bug")

    monkeypatch.setattr(app.server, "receive_http", broken)
    call = await request(AsgiApp(app), rpc("tools/list"), mcp_headers("tools/list"))
    assert call.status == 500 and call.json()["error"]["code"] == -32603


@pytest.mark.anyio
async def test_a_bug_in_the_head_check_answers_500_jsonrpc(app: App, monkeypatch: pytest.MonkeyPatch) -> None:
    """On asyncio the head is checked where the body read waits: a bug there is answered like any
    other (-32603), not left to the server's plain-text 500."""
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("bug")

    monkeypatch.setattr(app.server, "check_head", broken)
    call = Call(http_scope(tool_headers("echo")))  # the body never comes: the body read waits
    with anyio.fail_after(TIMEOUT):
        await call.run(AsgiApp(app))
    assert call.status == 500 and call.json()["error"]["code"] == -32603 and call.taken == 0


# -- in-process: listen streams ----------------------------------------------------------------------
def capture_streams(app: App) -> list[ListenStream[Any]]:
    opened: list[ListenStream[Any]] = []
    original = app.open_stream

    def open_stream(stream: ListenStream[Any], buffer: int = 64) -> Any:
        opened.append(stream)
        return original(stream, buffer)

    app.open_stream = open_stream  # type: ignore[method-assign]
    return opened


@pytest.mark.anyio
async def test_listen_stream_forwards_events_keepalives_and_the_final_result(app: App) -> None:
    call = Call(http_scope(mcp_headers("subscriptions/listen")))
    call.push_body(LISTEN)
    asgi = AsgiApp(app, config=AsgiConfig(sse_keepalive_interval=0.05))
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(call.run, asgi)
            await until(lambda: len(sse_messages(call.body)) == 1)
            assert call.status == 200 and call.header(b"content-type") == b"text/event-stream"
            assert sse_messages(call.body)[0]["method"] == "notifications/subscriptions/acknowledged"
            app.notify_list_changed("tools")
            await until(lambda: len(sse_messages(call.body)) == 2)
            assert sse_messages(call.body)[1]["method"] == "notifications/tools/list_changed"
            await until(lambda: b": keepalive\n\n" in call.body)
            app.close_streams()  # what lifespan shutdown does
            await until(lambda: call.done)
    assert call.complete
    final = sse_messages(call.body)[-1]
    assert final["id"] == "listen" and "result" in final


@pytest.mark.anyio
async def test_listen_stream_ends_on_disconnect(app: App) -> None:
    opened = capture_streams(app)
    call = Call(http_scope(mcp_headers("subscriptions/listen")))
    call.push_body(LISTEN)
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(call.run, AsgiApp(app))
            await until(lambda: len(sse_messages(call.body)) == 1)
            call.push({"type": "http.disconnect"})
            await until(lambda: call.done)
    assert not call.complete and opened
    app.notify_list_changed("tools")  # the stream is gone: nothing is delivered, nothing fails
    assert len(sse_messages(call.body)) == 1


@pytest.mark.anyio
async def test_a_dropped_listen_stream_is_left_unfinished(app: App) -> None:
    opened = capture_streams(app)
    call = Call(http_scope(mcp_headers("subscriptions/listen")))
    call.push_body(LISTEN)
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(call.run, AsgiApp(app))
            await until(lambda: len(sse_messages(call.body)) == 1)
            app.close_stream(opened[0])
            await until(lambda: call.done)
    assert not call.complete  # the server closes the connection: no disguised clean end


# -- in-process: other scopes, targets ----------------------------------------------------------------
@pytest.mark.anyio
async def test_lifespan_startup_and_shutdown_end_listen_streams(app: App) -> None:
    asgi = AsgiApp(app)
    listen = Call(http_scope(mcp_headers("subscriptions/listen")))
    listen.push_body(LISTEN)
    lifespan = Call({"type": "lifespan", "asgi": {"version": "3.0"}})
    lifespan.push({"type": "lifespan.startup"})
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(lifespan.run, asgi)
            await until(lambda: len(lifespan.sent) == 1)
            assert lifespan.sent == [{"type": "lifespan.startup.complete"}]
            tasks.start_soon(listen.run, asgi)
            await until(lambda: len(sse_messages(listen.body)) == 1)
            lifespan.push({"type": "lifespan.shutdown"})
            await until(lambda: lifespan.done and listen.done)
    assert lifespan.sent[-1] == {"type": "lifespan.shutdown.complete"}
    assert listen.complete and "result" in sse_messages(listen.body)[-1]


@pytest.mark.anyio
async def test_websocket_is_refused(app: App) -> None:
    asgi = AsgiApp(app)
    scope = {**http_scope(mcp_headers("tools/list"), method="GET"), "type": "websocket"}
    plain = Call(scope)
    plain.push({"type": "websocket.connect"})
    with anyio.fail_after(TIMEOUT):
        await plain.run(asgi)
    assert plain.sent == [{"type": "websocket.close", "code": 1008}]
    denial = Call({**scope, "extensions": {"websocket.http.response": {}}})
    denial.push({"type": "websocket.connect"})
    with anyio.fail_after(TIMEOUT):
        await denial.run(asgi)
    start, body = denial.sent
    assert start["type"] == "websocket.http.response.start" and start["status"] == 405
    assert (b"allow", b"POST") in start["headers"]
    assert json.loads(body["body"])["error"]["code"] == INVALID_REQUEST


@pytest.mark.anyio
async def test_unknown_scope_types_raise(app: App) -> None:
    with pytest.raises(RuntimeError, match="does not serve"):
        await AsgiApp(app)({"type": "telepathy"}, Call({}).receive, Call({}).send)


def test_request_target_is_relative_to_the_mount_point() -> None:
    assert request_target({"path": "/mcp", "query_string": b""}) == "/mcp"
    assert request_target({"path": "/mcp", "root_path": "", "query_string": b"a=1"}) == "/mcp?a=1"
    assert request_target({"path": "/api/mcp", "root_path": "/api"}) == "/mcp"
    assert request_target({"path": "/api/", "root_path": "/api"}) == "/"
    assert request_target({"path": "/api", "root_path": "/api"}) == "/"
    assert request_target({"path": "/apix/mcp", "root_path": "/api"}) == "/apix/mcp"  # not under the root
    assert request_target({"path": "/mcp?x"}) == "/mcp%3Fx"  # a decoded "?" cannot end the path


@pytest.mark.anyio
async def test_the_engine_gets_request_target_for_every_scope(app: App) -> None:
    # The driver computes the common target itself (no mount point, no query, a path seen
    # before); every scope, the minimal one without the optional keys included, gets the same
    # (seen by the head check, or by receive_http when the head check is left to it).
    handed = handed_to_engine(app)
    targets: list[str] = []
    full = http_scope(tool_headers("echo"))
    minimal = {key: full[key] for key in ("type", "method", "path", "headers")}
    scopes = [
        full, minimal, http_scope(tool_headers("echo"), path="/a b"), http_scope(tool_headers("echo"), query=b"x=1"),
        http_scope(tool_headers("echo"), path="/api/mcp", root_path="/api"), {**minimal, "path": "/m?cp"},
    ]
    for scope in scopes * 2:  # the second time from what the first one kept
        call = Call(scope)
        call.push_body(call_tool("echo"))
        with anyio.fail_after(TIMEOUT):
            await call.run(AsgiApp(app))
        seen = {request.target for _, request in handed}
        assert call.status in (200, 404) and len(seen) == 1
        targets.append(seen.pop())
        handed.clear()
    assert targets == [request_target(scope) for scope in scopes * 2]
    assert targets[:6] == ["/mcp", "/mcp", "/a%20b", "/mcp?x=1", "/mcp", "/m%3Fcp"]


@pytest.mark.anyio
async def test_mounted_app_compares_the_policy_path_with_the_relative_path(probe: Probe) -> None:
    mounted = make_app(probe)
    mounted.server.http = HttpPolicy(path="/", max_body_bytes=MAX_BODY)  # as built by build(http=...)
    at_root = await request(
        AsgiApp(mounted), call_tool("echo", {"text": "m"}), tool_headers("echo"), path="/mcp/", root_path="/mcp"
    )
    assert at_root.status == 200
    default = await request(
        AsgiApp(make_app(probe)), call_tool("echo"), tool_headers("echo"), path="/mcp/", root_path="/mcp"
    )
    assert default.status == 404


@pytest.mark.anyio
async def test_starlette_route_serves_exactly_the_policy_path(app: App) -> None:
    from starlette.applications import Starlette
    from starlette.routing import Route

    site = Starlette(routes=[Route("/mcp", endpoint=AsgiApp(app))])
    answer = await request(site, call_tool("echo", {"text": "routed"}), tool_headers("echo"))
    assert answer.json()["result"]["content"][0]["text"] == "routed"
    refused = await request(site, b"", [], method="GET")  # every method reaches the engine
    assert refused.status == 405 and refused.json()["error"]["code"] == INVALID_REQUEST


def test_the_asgi_adapter_does_not_need_trio() -> None:
    code = "import sys, mcpwire_adapters.serve.asgi.app, mcpwire_adapters; print(sorted({'trio', 'h11'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]"


def test_a_request_tells_asyncio_from_trio_as_on_trio_does(app: App) -> None:
    """A request is run by hand (``driving``) exactly where ``on_trio()`` says asyncio: on asyncio
    with trio imported, on trio, and (in a process of its own) on asyncio without trio."""
    import trio

    async def told() -> tuple[bool, bool]:
        async def receive() -> Message:
            raise AssertionError("not served")

        async def send(message: MutableMapping[str, Any]) -> None:
            raise AssertionError("not served")

        request = asgi_module._Request(AsgiApp(app), http_scope([]), receive, send)
        return request.driving, not on_trio()

    assert asyncio.run(told()) == (True, True)
    assert trio.run(told) == (False, False)
    code = (
        "import asyncio, sys\n"
        "from mcpwire_adapters import App, AsgiApp\n"
        "from mcpwire_adapters.serve.asgi.app import _Request\n"
        "from mcpwire_adapters.serve.asgi.on_asyncio import on_trio\n"
        "async def told():\n"
        "    return _Request(AsgiApp(App('t', '1')), {'type': 'http'}, None, None).driving, not on_trio()\n"
        "print('trio' in sys.modules, *asyncio.run(told()))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == ["False", "True", "True"]


# -- real servers --------------------------------------------------------------------------------------
SERVERS: dict[str, Callable[[Any], Any]] = {
    "uvicorn": serve_uvicorn,
    "hypercorn-asyncio": lambda asgi: serve_hypercorn(asgi, "asyncio"),
    "hypercorn-trio": lambda asgi: serve_hypercorn(asgi, "trio"),
}


class Served:
    def __init__(self, app: App, probe: Probe, port: int) -> None:
        self.app = app
        self.probe = probe
        self.port = port

    def connect(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=TIMEOUT)

    def post(self, body: bytes, headers: list[tuple[str, str]], path: str = "/mcp") -> http.client.HTTPResponse:
        conn = self.connect()
        conn.request("POST", path, body=body, headers=dict(headers))
        return conn.getresponse()


@pytest.fixture(scope="module", params=list(SERVERS))
def served(request: pytest.FixtureRequest) -> Iterator[Served]:
    probe = Probe()
    app = make_app(probe)
    with SERVERS[request.param](AsgiApp(app, config=AsgiConfig(sse_keepalive_interval=0.1))) as port:
        yield Served(app, probe, port)


def read_events(response: http.client.HTTPResponse, count: int) -> tuple[list[Message], bytes]:
    """Read SSE messages from a streaming response until ``count`` have arrived."""
    reader, messages, raw = SSEReader(), list[Message](), b""
    while len(messages) < count:
        chunk = response.read1(65536)
        assert chunk, f"stream ended after {messages}"
        raw += chunk
        messages += [json.loads(e.data) for e in reader.feed(chunk) if e.data]
    return messages, raw


def test_server_json_answer(served: Served) -> None:
    response = served.post(call_tool("echo", {"text": "real"}), tool_headers("echo"))
    assert response.status == 200 and response.getheader("content-type") == "application/json"
    assert json.loads(response.read())["result"]["content"][0]["text"] == "real"


def test_server_sse_progress(served: Served) -> None:
    response = served.post(call_tool("progress", token="t"), tool_headers("progress"))
    assert response.status == 200 and response.getheader("content-type") == "text/event-stream"
    messages = sse_messages(response.read())
    assert [m.get("method") for m in messages] == ["notifications/progress"] * 3 + [None]
    assert messages[-1]["result"]["content"][0]["text"] == "done"


def test_server_413_without_reading_the_body(served: Served) -> None:
    conn = served.connect()
    conn.putrequest("POST", "/mcp", skip_host=True, skip_accept_encoding=True)
    for name, value in [*tool_headers("echo"), ("content-length", str(10 * MAX_BODY))]:
        conn.putheader(name, value)
    conn.endheaders()  # no body is ever sent: the answer must not wait for it
    response = conn.getresponse()
    assert response.status == 413
    assert json.loads(response.read())["error"]["code"] == INVALID_REQUEST


def test_server_disconnect_cancels_the_handler(served: Served) -> None:
    key = f"real-{time.monotonic_ns()}"
    conn = served.connect()
    conn.request("POST", "/mcp", body=call_tool("slow", {"key": key}), headers=dict(tool_headers("slow")))
    assert served.probe.event(key + ":started").wait(TIMEOUT)
    conn.close()
    assert served.probe.event(key + ":cancelled").wait(TIMEOUT)


def test_server_listen_stream(served: Served) -> None:
    response = served.post(LISTEN, mcp_headers("subscriptions/listen"))
    assert response.status == 200 and response.getheader("content-type") == "text/event-stream"
    (ack,), _ = read_events(response, 1)
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    touched = served.post(call_tool("touch"), tool_headers("touch"))
    assert touched.status == 200 and touched.read()
    (changed,), raw = read_events(response, 1)
    assert changed["method"] == "notifications/tools/list_changed"
    while b": keepalive" not in raw:
        chunk = response.read1(65536)
        assert chunk
        raw += chunk
    response.close()


# -- the Starlette example ---------------------------------------------------------------------------
def test_starlette_example_mounted_at_mcp() -> None:
    sys.path.insert(0, str(REPO / "examples"))
    try:
        starlette_mount = importlib.import_module("starlette_mount")
    finally:
        sys.path.remove(str(REPO / "examples"))
    mcp = starlette_mount.build_mcp()
    with serve_uvicorn(starlette_mount.build(mcp)) as port:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
        conn.request("GET", "/")
        home = conn.getresponse()
        assert home.status == 200 and b"/mcp/" in home.read()
        conn.request("POST", "/mcp/", body=call_tool("echo", {"text": "mounted"}), headers=dict(tool_headers("echo")))
        answer = conn.getresponse()
        assert answer.status == 200 and json.loads(answer.read())["result"]["content"][0]["text"] == "mounted"
        conn.request("POST", "/mcp/", body=call_tool("count", {"n": 2}, token="c"), headers=dict(tool_headers("count")))
        counted = conn.getresponse()
        messages = sse_messages(counted.read())
        assert [m.get("method") for m in messages] == ["notifications/progress"] * 2 + [None]
        conn.request("POST", "/mcp", body=call_tool("echo"), headers=dict(tool_headers("echo")))
        redirect = conn.getresponse()
        redirect.read()
        assert redirect.status == 307 and redirect.getheader("location", "").endswith("/mcp/")
        conn.close()


# -- the conformance fixture under ASGI servers ----------------------------------------------------
@pytest.mark.parametrize("server", ["asgi-uvicorn", "asgi-hypercorn", "asgi-hypercorn-trio"])
def test_fixture_serves_through_asgi_until_stdin_eof(server: str) -> None:
    """``fixture.py --server ...``: the ready line, a request, and on stdin EOF an open listen
    stream ends with its listen result and the process exits 0 (as conformance/run.py requires)."""
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "conformance" / "fixture.py"), "--port", "0", "--server", server],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        lines: list[bytes] = []
        reader = threading.Thread(target=lambda: lines.append(proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
        reader.start()
        reader.join(30)
        assert lines, "no ready line"
        url = json.loads(lines[0])["url"]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        conn = http.client.HTTPConnection("127.0.0.1", int(url.rsplit(":", 1)[1].split("/")[0]), timeout=TIMEOUT)
        conn.request("POST", "/mcp", body=LISTEN, headers=dict(mcp_headers("subscriptions/listen")))
        listen = conn.getresponse()
        (ack,), _ = read_events(listen, 1)
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        proc.stdin.close()
        messages = sse_messages(listen.read())  # the rest of the stream, to its end
        assert messages and messages[-1]["id"] == "listen" and "result" in messages[-1]
        assert proc.wait(5) == 0, proc.stderr.read() if proc.stderr else ""
        assert proc.stdout.read() == b""  # nothing but the ready line on stdout
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_disconnect_ends_only_its_own_cancellation(app: App, probe: Probe) -> None:
    # The handler's cancel scope is the one entered where it first waited: a cancellation of the
    # request's task from outside (the server's), swallowed by the handler meanwhile, still ends
    # the task after the disconnect's own has ended at the scope.
    call = AtOnce(http_scope(tool_headers("stubborn")))
    call.push_body(call_tool("stubborn", {"key": "s"}))
    task = asyncio.create_task(call.run(AsgiApp(app)))
    with anyio.fail_after(TIMEOUT):
        await until(probe.event("s:started").is_set)
        task.cancel()
        await until(probe.event("s:swallowed").is_set)
        call.push({"type": "http.disconnect"})
        await asyncio.wait([task])
    assert probe.event("s:cancelled").is_set()
    assert task.cancelled() and not call.done


async def open_session(asgi: AsgiApp, version: str) -> list[tuple[str, str]]:
    """Initialize an initialize-era session through ``asgi``: the headers its requests carry."""
    json_headers = [("content-type", "application/json"), ("accept", "application/json, text/event-stream")]
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    opened = await request(asgi, json.dumps(init).encode(), json_headers)
    session_id = opened.header(b"mcp-session-id")
    assert opened.status == 200 and session_id
    return [*json_headers, ("mcp-session-id", session_id.decode()), ("mcp-protocol-version", version)]


@pytest.mark.anyio
@pytest.mark.parametrize("kind", [Call, AtOnce], ids=["body-waits", "body-at-once"])
@pytest.mark.parametrize("how", ["delete", "cancelled"])
async def test_a_sessions_other_request_cancels_its_running_handler(
    app: App, probe: Probe, kind: type[Call], how: str
) -> None:
    # The handler's scope is cancelled from another request's task: the session's DELETE, or a
    # notifications/cancelled naming the call (body-at-once: the call's task had not waited yet).
    asgi = AsgiApp(app)
    session = await open_session(asgi, "2025-11-25")
    slow = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "slow", "arguments": {"key": how}}}
    call = kind(http_scope(session))
    call.push_body(json.dumps(slow).encode())
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(call.run, asgi)
            await until(probe.event(how + ":started").is_set)
            if how == "delete":
                ended = await request(asgi, b"", session, method="DELETE")
            else:
                cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
                ended = await request(asgi, json.dumps(cancel).encode(), session)
            assert ended.status in (200, 202)
            await until(lambda: call.done)
    assert probe.event(how + ":cancelled").is_set()


@pytest.mark.anyio
async def test_a_2025_03_26_batch_through_the_asgi_app(app: App) -> None:
    asgi = AsgiApp(app)
    session = await open_session(asgi, "2025-03-26")
    messages = [{"jsonrpc": "2.0", "id": 2, "method": "ping"},
                {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}}]
    call = await request(asgi, json.dumps(messages).encode(), session)
    answers = {m["id"]: m for m in sse_messages(call.body)}
    assert call.status == 200 and call.complete and sorted(answers) == [2, 3]
    assert answers[3]["result"]["content"] == [{"type": "text", "text": "hi"}]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_an_answer_given_at_once_starts_no_disconnect_watcher_on_asyncio(app: App, anyio_backend: str) -> None:
    """On asyncio the receive() watcher starts only once a handler suspends: an immediate answer
    receives the body and nothing more (the slow handler's disconnect is
    test_disconnect_cancels_the_handler)."""
    call = await request(AsgiApp(app), call_tool("echo", {"text": "x"}), tool_headers("echo"))
    assert call.status == 200 and call.receives == 1


# -- asyncio: a request runs by hand up to its first wait ------------------------------------------------
def no_cancellation_left() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() == 0


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_request_that_never_waits_arms_nothing(
    app: App, anyio_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    armed: list[float] = []
    monkeypatch.setattr(asgi_module, "LateTimeout", lambda task, seconds: armed.append(seconds))
    monkeypatch.setattr(asgi_module, "bounded", lambda step, seconds: armed.append(seconds))  # a step after a wait
    call = AtOnce(http_scope(tool_headers("echo")))
    call.push_body(call_tool("echo", {"text": "x"}))
    await call.run(AsgiApp(app))
    assert call.json()["result"]["content"] == [{"type": "text", "text": "x"}]
    assert armed == [] and call.receives == 1


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_body_whose_rest_is_the_first_wait_times_out_408(app: App, anyio_backend: str) -> None:
    call = AtOnce(http_scope(tool_headers("echo")))
    call.push_body(b"{", more=True)  # the first piece at once, the rest never
    with anyio.fail_after(TIMEOUT):
        await call.run(AsgiApp(app, config=AsgiConfig(body_timeout=0.1)))
    assert call.status == 408 and call.json()["error"]["code"] == INVALID_REQUEST
    assert no_cancellation_left()


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_send_that_is_the_first_wait_is_bounded(app: App, anyio_backend: str) -> None:
    class Stalled(AtOnce):
        async def send(self, message: MutableMapping[str, Any]) -> None:
            self.sent.append(dict(message))
            if message["type"] == "http.response.body":
                await anyio.sleep_forever()

    call = Stalled(http_scope(tool_headers("echo")))
    call.push_body(call_tool("echo", {"text": "x"}))
    with anyio.fail_after(TIMEOUT):
        await call.run(AsgiApp(app, config=AsgiConfig(send_timeout=0.1)))
    assert call.status == 200 and call.done
    assert no_cancellation_left()


def add_pause(app: App) -> None:
    @app.tool(description="Report progress once, then answer after longer than the tests' timeouts")
    async def pause(ctx: Context, arguments: dict[str, Any]) -> str:
        await ctx.progress(1, total=2)  # sent only when the request carries a progressToken
        await anyio.sleep(0.3)
        return "late"


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_body_that_waited_and_came_in_time_leaves_no_timer(app: App, anyio_backend: str) -> None:
    """The body's wait (the request's first) armed its timeout; the body came in time, so that
    timer is gone: a handler then running past body_timeout still answers."""
    add_pause(app)
    call = AtOnce(http_scope(tool_headers("pause")))
    body = call_tool("pause")
    call.push_body(body[:1], more=True)
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(call.run, AsgiApp(app, config=AsgiConfig(body_timeout=0.1)))
            await anyio.sleep(0.02)
            call.push_body(body[1:])
    assert call.status == 200 and call.json()["result"]["content"] == [{"type": "text", "text": "late"}]
    assert no_cancellation_left()


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_send_that_waited_and_went_in_time_leaves_no_timer(app: App, anyio_backend: str) -> None:
    """The progress event's send (the request's first wait) armed the send timeout; it went in
    time, so that timer is gone: the handler then running past send_timeout still answers."""

    class SlowFirstSend(AtOnce):
        async def send(self, message: MutableMapping[str, Any]) -> None:
            self.sent.append(dict(message))
            if len(self.sent) == 1:
                await anyio.sleep(0.02)

    add_pause(app)
    call = SlowFirstSend(http_scope(tool_headers("pause")))
    call.push_body(call_tool("pause", token="p"))
    with anyio.fail_after(TIMEOUT):
        await call.run(AsgiApp(app, config=AsgiConfig(send_timeout=0.1)))
    assert call.status == 200 and call.complete
    events = [json.loads(line[6:]) for line in call.body.decode().splitlines() if line.startswith("data: ")]
    assert [e.get("method") for e in events] == ["notifications/progress", None]
    assert events[-1]["result"]["content"] == [{"type": "text", "text": "late"}]
    assert no_cancellation_left()
