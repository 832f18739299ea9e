"""WsgiApp under real WSGI servers: gunicorn (sync and gthread workers) and waitress, each in a
process of its own on 127.0.0.1 (``_wsgi_servers.served``), spoken to with ``http.client`` and
raw sockets, every read under a timeout."""

from __future__ import annotations

import http.client
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from _wsgi_servers import (
    GUNICORN, SERVERS, THREADED, TIMEOUT, call_body, headers_for, open_post, post, served, sse_events, wait_for_file,
)


@pytest.fixture(scope="module", params=SERVERS)
def site(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, Path]]:
    """(server, base URL, the folder of the handlers' marks) of the plain site under each server."""
    folder = tmp_path_factory.mktemp(request.param)
    marks = folder / "marks"
    marks.mkdir()
    with served(request.param, "site_app", folder, env={"WSGI_TEST_MARKS": str(marks)}) as url:
        yield request.param, url, marks


def call(url: str, name: str, arguments: dict[str, object], token: str | None = None) -> tuple[int, dict[str, str], bytes]:
    body = call_body("tools/call", {"name": name, "arguments": arguments}, token)
    return post(url, "/mcp", body, headers_for("tools/call", name))


def test_a_call_is_answered_with_one_json_body(site: tuple[str, str, Path]) -> None:
    _, url, _ = site
    status, headers, body = call(url, "echo", {"text": "hi"})
    assert status == 200 and headers["content-type"] == "application/json"
    assert int(headers["content-length"]) == len(body)
    assert json.loads(body)["result"]["content"] == [{"type": "text", "text": "hi"}]


def test_progress_arrives_as_it_happens_before_the_result(site: tuple[str, str, Path]) -> None:
    _, url, _ = site
    body = call_body("tools/call", {"name": "progress", "arguments": {}}, token="p")
    conn, response = open_post(url, "/mcp", body, headers_for("tools/call", "progress"))
    try:
        assert response.status == 200 and response.getheader("content-type") == "text/event-stream"
        events = [event for event in sse_events(response) if isinstance(event[1], dict)]
    finally:
        conn.close()
    kinds = [data.get("method", "result") for _, data in events if isinstance(data, dict)]
    assert kinds == ["notifications/progress"] * 3 + ["result"]
    # The handler waits 0.2 s after each step: each event was written when it happened, not at the end.
    first, last = events[0][0], events[-1][0]
    assert last - first >= 0.45, [round(t - first, 3) for t, _ in events]


def test_the_engine_refuses_what_it_refuses_under_any_driver(site: tuple[str, str, Path]) -> None:
    _, url, _ = site
    status, headers, body = post(url, "/mcp", b"{}", headers_for("tools/list", **{"Content-Type": "text/plain"}))
    assert status == 415 and json.loads(body)["error"]["code"] == -32600
    status, _, body = post(url, "/mcp", b"", {}, method="GET")
    assert status == 405 and json.loads(body)["error"]["code"] == -32600
    status, _, _ = post(url, "/elsewhere", call_body("tools/list"), headers_for("tools/list"))
    assert status == 404
    status, _, body = post(url, "/mcp", call_body("tools/list"), headers_for("tools/list", Origin="http://evil.example"))
    assert status == 403 and json.loads(body)["error"]["message"] == "Origin is not allowed"
    status, _, body = post(url, "/mcp", b"x" * 2000, headers_for("tools/list"))
    assert status == 413 and json.loads(body)["error"]["code"] == -32600


def raw_exchange(url: str, head: bytes, body: bytes = b"") -> tuple[socket.socket, bytes]:
    """Send ``head`` (and ``body``) on a socket of its own; the first bytes of the answer."""
    port = int(url.rsplit(":", 1)[1])
    sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    sock.sendall(head + body)
    return sock, sock.recv(65536)


def request_head(extra: str) -> bytes:
    return ("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
            f"Mcp-Method: tools/list\r\n{extra}\r\n").encode()


@pytest.mark.parametrize("server", GUNICORN)
def test_a_content_length_over_the_limit_is_refused_before_any_body_is_sent(
    server: str, tmp_path: Path,
) -> None:
    # The body never comes: a server that waited for it would time out this test. (waitress reads
    # a whole body before it calls the application: docs/wsgi.md.)
    with served(server, "site_app", tmp_path) as url:
        sock, answer = raw_exchange(url, request_head("Content-Length: 50000000\r\n"))
        try:
            while not answer.endswith(b"}"):
                more = sock.recv(65536)
                assert more, answer
                answer += more
        finally:
            sock.close()
    assert answer.startswith(b"HTTP/1.1 413 ")
    assert b"Request body exceeds 1024 bytes" in answer


@pytest.mark.parametrize("server", GUNICORN)
def test_a_chunked_body_is_refused_once_past_the_limit_without_reading_on(server: str, tmp_path: Path) -> None:
    # 2 KiB in chunks, and no last chunk: the answer comes as soon as 1025 bytes were read.
    chunks = b"".join(b"200\r\n" + b"x" * 512 + b"\r\n" for _ in range(4))
    with served(server, "site_app", tmp_path) as url:
        sock, answer = raw_exchange(url, request_head("Transfer-Encoding: chunked\r\n"), chunks)
        sock.close()
    assert answer.startswith(b"HTTP/1.1 413 ")


def test_a_chunked_body_within_the_limit_is_served(site: tuple[str, str, Path]) -> None:
    _, url, _ = site
    body = call_body("tools/list")
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    sock, answer = raw_exchange(url, request_head("Transfer-Encoding: chunked\r\n"), chunked)
    try:
        while b'"tools"' not in answer:
            more = sock.recv(65536)
            assert more, answer
            answer += more
    finally:
        sock.close()
    assert answer.startswith(b"HTTP/1.1 200 ")


@pytest.mark.parametrize("report", [False, True], ids=["silent", "after-progress"])
def test_a_client_that_leaves_cancels_the_handler(site: tuple[str, str, Path], report: bool) -> None:
    # Silent: the response has not started; the departure is seen by the server's probe
    # (gunicorn's socket, waitress's client_disconnected). After progress: an SSE response is open.
    server, url, marks = site
    key = f"{server}-{report}"
    body = call_body("tools/call", {"name": "slow", "arguments": {"key": key, "report": report}}, token="s")
    head = request_head(f"Content-Length: {len(body)}\r\n").replace(b"tools/list", b"tools/call")
    head = head.replace(b"\r\n\r\n", b"\r\nMcp-Name: slow\r\n\r\n")
    port = int(url.rsplit(":", 1)[1])
    sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    try:
        sock.sendall(head + body)
        assert wait_for_file(marks / f"{key}.started")
        if report:
            assert b"notifications/progress" in sock.recv(65536)
    finally:
        sock.close()
    assert wait_for_file(marks / f"{key}.cancelled"), "the handler was not cancelled"


def listen_body(request_id: int = 7) -> bytes:
    return call_body("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, request_id=request_id)


def test_listen_streams_where_the_server_has_threads(site: tuple[str, str, Path]) -> None:
    server, url, _ = site
    headers = headers_for("subscriptions/listen")
    if server not in THREADED:
        status, _, body = post(url, "/mcp", listen_body(), headers)
        error = json.loads(body)["error"]
        assert status == 503 and error["code"] == -32603 and json.loads(body)["id"] == 7
        return
    conn, response = open_post(url, "/mcp", listen_body(), headers)
    try:
        assert response.status == 200 and response.getheader("content-type") == "text/event-stream"
        events = sse_events(response)
        _, ack = next(events)
        assert isinstance(ack, dict) and ack["method"] == "notifications/subscriptions/acknowledged"
        assert call(url, "touch", {})[0] == 200
        changed = next(data for _, data in events if isinstance(data, dict))
        assert changed["method"] == "notifications/tools/list_changed"
        _, keepalive = next(events)  # the stream stays open: a comment every sse_keepalive_interval (1 s)
        assert keepalive == ": keepalive"
        # max_streams=2: a second stream is served, a third refused while both are open.
        conn2, second = open_post(url, "/mcp", listen_body(8), headers)
        try:
            assert second.status == 200
            status, _, body = post(url, "/mcp", listen_body(9), headers)
            assert status == 503 and json.loads(body)["error"]["code"] == -32603 and json.loads(body)["id"] == 9
        finally:
            second.close()  # the response holds the socket too: both closed, the connection is
            conn2.close()
    finally:
        response.close()
        conn.close()
    # Both clients left: their streams are released (at the next keep-alive comment at the latest),
    # and so are the threads they held.
    deadline = time.monotonic() + 5
    while True:
        conn, response = open_post(url, "/mcp", listen_body(10), headers)
        response.close()
        conn.close()
        if response.status == 200 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert response.status == 200


def initialize(url: str) -> str:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).encode()
    status, headers, _ = post(url, "/mcp", body, {"Content-Type": "application/json",
                                                  "Accept": "application/json, text/event-stream"})
    assert status == 200
    return headers["mcp-session-id"]


def test_an_initialize_era_get_stream_is_held_only_where_the_server_has_threads(site: tuple[str, str, Path]) -> None:
    server, url, _ = site
    session = initialize(url)
    headers = {"Accept": "text/event-stream", "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
    if server not in THREADED:
        status, answer_headers, body = post(url, "/mcp", b"", headers, method="GET")
        assert status == 405 and answer_headers["allow"] == "POST, DELETE"
        assert "one request at a time" in json.loads(body)["error"]["message"]
    else:
        conn = http_get(url, headers)
        try:
            response = conn.getresponse()
            assert response.status == 200 and response.getheader("content-type") == "text/event-stream"
            assert response.readline().strip()  # the stream's first frame came, and the stream stays open
        finally:
            conn.close()
    status, _, _ = post(url, "/mcp", b"", headers, method="DELETE")
    assert status == 200


def http_get(url: str, headers: dict[str, str]) -> http.client.HTTPConnection:
    port = int(url.rsplit(":", 1)[1])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    conn.request("GET", "/mcp", headers=headers)
    return conn


def test_stopping_the_server_ends_a_listen_stream_with_its_result(tmp_path: Path) -> None:
    # gunicorn's SIGTERM (wsgi_serve.py chains WsgiApp.close_streams in front of the worker's own
    # handler, as docs/wsgi.md shows): the stream gets its listen result, then ends cleanly.
    with served("gunicorn-gthread", "site_app", tmp_path) as url:
        conn, response = open_post(url, "/mcp", listen_body(), headers_for("subscriptions/listen"))
        events = sse_events(response)
        _, ack = next(events)
        assert isinstance(ack, dict) and ack["method"] == "notifications/subscriptions/acknowledged"
        started = time.monotonic()
    # served() closed the server's stdin: it stops as on SIGTERM.
    try:
        last = [data for _, data in events if isinstance(data, dict)]
    finally:
        conn.close()
    assert last and last[-1]["id"] == 7 and last[-1]["result"]["resultType"] == "complete"
    assert time.monotonic() - started < 10
