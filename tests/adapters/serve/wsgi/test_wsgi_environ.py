"""The WSGI environ as the engine takes it (``mcpwire_adapters.serve.wsgi.environ``), and a
WsgiApp called in-process with the environ a server would pass: no server needed."""

from __future__ import annotations

import asyncio
import io
import json
import threading
import time
from typing import Any

import pytest
from mcpwire_adapters import App, WsgiApp

from mcpwire import ResponseHead
from mcpwire_adapters.serve.wsgi.environ import read_body, request_head, response_start


class Counted(io.BytesIO):
    """A ``wsgi.input`` that counts the bytes taken from it."""

    taken = 0

    def read(self, size: int | None = -1) -> bytes:
        data = super().read(size)
        self.taken += len(data)
        return data


class Untouchable(io.RawIOBase):
    def read(self, size: int = -1) -> bytes:
        raise AssertionError("the body was read")


def test_the_target_is_the_path_below_the_mount_point_quoted_again() -> None:
    environ = {"REQUEST_METHOD": "POST", "SCRIPT_NAME": "/api", "PATH_INFO": "/m p\xe9?x", "QUERY_STRING": "a=1"}
    assert request_head(environ)[:2] == ("POST", "/m%20p%E9%3Fx?a=1")
    assert request_head({"REQUEST_METHOD": "POST", "PATH_INFO": ""})[1] == "/"


def test_headers_come_from_the_cgi_variables() -> None:
    environ = {"CONTENT_TYPE": "application/json", "CONTENT_LENGTH": "", "HTTP_ACCEPT": "a, b",
               "HTTP_MCP_PROTOCOL_VERSION": "2026-07-28", "HTTP_CONTENT_LENGTH": "9", "SERVER_NAME": "x"}
    assert sorted(request_head(environ)[2]) == [
        (b"accept", b"a, b"), (b"content-type", b"application/json"), (b"mcp-protocol-version", b"2026-07-28")]


def test_a_body_is_read_to_its_content_length() -> None:
    stream = Counted(b"12345trailing")
    assert read_body({"CONTENT_LENGTH": "5", "wsgi.input": stream}, 10) == b"12345" and stream.taken == 5
    short = read_body({"CONTENT_LENGTH": "9", "wsgi.input": io.BytesIO(b"123")}, 10)
    assert not isinstance(short, bytes) and short[0].status == 400
    bad = read_body({"CONTENT_LENGTH": "5x", "wsgi.input": Untouchable()}, 10)
    assert not isinstance(bad, bytes) and bad[0].status == 400
    huge = read_body({"CONTENT_LENGTH": "9" * 40, "wsgi.input": Untouchable()}, 10)
    assert not isinstance(huge, bytes) and huge[0].status == 413


def test_a_terminated_body_is_read_no_further_than_one_byte_past_the_limit() -> None:
    stream = Counted(b"x" * 100_000)
    refused = read_body({"wsgi.input_terminated": True, "wsgi.input": stream}, 1024)
    assert not isinstance(refused, bytes) and refused[0].status == 413 and stream.taken == 1025
    assert read_body({"wsgi.input_terminated": True, "wsgi.input": io.BytesIO(b"abc")}, 1024) == b"abc"


def test_a_body_of_unknown_length_is_never_guessed() -> None:
    refused = read_body({"HTTP_TRANSFER_ENCODING": "chunked", "wsgi.input": Untouchable()}, 1024)
    assert not isinstance(refused, bytes) and refused[0].status == 411
    assert read_body({"wsgi.input": Untouchable()}, 1024) == b""


def test_hop_by_hop_headers_never_reach_start_response() -> None:
    head = ResponseHead(status=400, headers=((b"connection", b"close"), (b"content-type", b"application/json")))
    assert response_start(head) == ("400 Bad Request", [("content-type", "application/json")])


def call(wsgi: WsgiApp, environ: dict[str, Any]) -> tuple[str, bytes]:
    started: list[str] = []
    body = wsgi(environ, lambda status, headers, exc_info=None: started.append(status))  # type: ignore[arg-type]
    return started[0], b"".join(body)


def test_the_head_is_refused_before_the_body_is_touched_and_a_closed_app_answers_503() -> None:
    wsgi = WsgiApp(App("environ-test", "1.0"))
    environ = {"REQUEST_METHOD": "POST", "PATH_INFO": "/mcp", "CONTENT_TYPE": "text/plain", "CONTENT_LENGTH": "5",
               "HTTP_ACCEPT": "application/json, text/event-stream", "wsgi.input": Untouchable()}
    try:
        status, body = call(wsgi, environ)
        assert status == "415 Unsupported Media Type" and json.loads(body)["error"]["code"] == -32600
    finally:
        wsgi.close(grace=0.5)
    status, body = call(wsgi, environ)
    assert status == "503 Service Unavailable" and json.loads(body)["error"]["code"] == -32603


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_other_methods_get_the_engines_405(method: str) -> None:
    wsgi = WsgiApp(App("environ-test", "1.0"))
    try:
        status, body = call(wsgi, {"REQUEST_METHOD": method, "PATH_INFO": "/mcp", "wsgi.input": Untouchable()})
    finally:
        wsgi.close(grace=0.5)
    assert status == "405 Method Not Allowed" and json.loads(body)["error"]["code"] == -32600


def echo_app() -> App:
    app = App("environ-test", "1.0")

    @app.tool(description="Echo the text back")
    async def echo(text: str = "") -> str:
        return text

    return app


def call_environ(request_id: int = 1) -> dict[str, Any]:
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": "hi"}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}},
    }).encode()
    return {"REQUEST_METHOD": "POST", "PATH_INFO": "/mcp", "CONTENT_TYPE": "application/json",
            "CONTENT_LENGTH": str(len(body)), "HTTP_ACCEPT": "application/json, text/event-stream",
            "HTTP_MCP_PROTOCOL_VERSION": "2026-07-28", "HTTP_MCP_METHOD": "tools/call", "HTTP_MCP_NAME": "echo",
            "wsgi.input": io.BytesIO(body)}


def test_a_request_runs_on_the_loop_as_its_one_task() -> None:
    # The lean path: the head check is a callback, the request one task; the handler's cancel
    # scope is that task's own and a departure is told by the pipe, with no watcher task.
    wsgi = WsgiApp(echo_app())
    made: list[str] = []
    try:
        loop = wsgi.loop.running()

        def counting(loop: asyncio.AbstractEventLoop, coro: Any, **options: Any) -> asyncio.Task[Any]:
            made.append(coro.__qualname__)
            return asyncio.Task(coro, loop=loop, **options)

        installed = threading.Event()

        def install() -> None:
            loop.set_task_factory(counting)
            installed.set()

        wsgi.loop.wake(install)
        assert installed.wait(10)
        for number in range(1, 4):
            status, body = call(wsgi, call_environ(number))
            assert status == "200 OK" and json.loads(body)["result"]["content"] == [{"type": "text", "text": "hi"}]
        refused = {**call_environ(), "CONTENT_TYPE": "text/plain", "wsgi.input": Untouchable()}
        assert call(wsgi, refused)[0] == "415 Unsupported Media Type"
        assert made == ["WsgiApp._serve"] * 3  # the refused head made none
    finally:
        wsgi.close(grace=0.5)


def test_a_request_whose_loop_died_is_answered_503() -> None:
    wsgi = WsgiApp(echo_app())
    assert call(wsgi, call_environ())[0] == "200 OK"

    def die() -> None:
        raise SystemExit("the loop thread ends here")

    wsgi.loop.wake(die)
    deadline = time.monotonic() + 10
    while wsgi.loop.alive and time.monotonic() < deadline:
        time.sleep(0.01)
    answered: list[tuple[str, bytes]] = []
    caller = threading.Thread(target=lambda: answered.append(call(wsgi, call_environ())), daemon=True)
    caller.start()
    caller.join(15)  # never left waiting for a loop that is gone
    try:
        assert answered and answered[0][0] == "503 Service Unavailable", answered
        assert json.loads(answered[0][1])["error"]["code"] == -32603
    finally:
        wsgi.close(grace=0.5)
