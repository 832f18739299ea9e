"""WsgiApp mounted in real web frameworks beside their own routes, under real servers: a Flask
site (werkzeug's DispatcherMiddleware at ``/mcp``, ``flask_site.py``) and a Django project (a
view at ``/mcp`` among the usual middleware, ``django_site/``)."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from _wsgi_servers import TIMEOUT, call_body, headers_for, open_post, post, served, sse_events, wait_for_file
from mcpwire_adapters.client.http import HttpClient

from mcpwire import Client as WireClient
from mcpwire.types import Implementation

SITES = [("flask_site", "gunicorn-gthread"), ("flask_site", "waitress"), ("django_wsgi", "gunicorn-gthread"),
         ("django_wsgi", "gunicorn-sync")]


@pytest.fixture(scope="module", params=SITES, ids=lambda p: f"{p[0]}-{p[1]}")
def site(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, Path]]:
    module, server = request.param
    folder = tmp_path_factory.mktemp(module)
    marks = folder / "marks"
    marks.mkdir()
    with served(server, module, folder, env={"WSGI_TEST_MARKS": str(marks)}) as url:
        yield module, url, marks


def test_the_site_keeps_its_own_routes(site: tuple[str, str, Path]) -> None:
    module, url, _ = site
    status, _, body = post(url, "/", b"", {}, method="GET")
    assert status == 200 and body == (b"the Flask home page" if module == "flask_site" else b"the Django home page")
    status, _, body = post(url, "/api/items", b"{}", {"Content-Type": "application/json"})
    if module == "flask_site":
        assert status == 200 and json.loads(body) == {"created": True}
    else:
        assert status == 403  # Django's CSRF protection still guards the site's own views


def test_the_mounted_endpoint_serves_mcp(site: tuple[str, str, Path]) -> None:
    module, url, _ = site
    body = call_body("tools/call", {"name": "echo", "arguments": {"text": "mounted"}})
    paths = ["/mcp", "/mcp/"] if module == "flask_site" else ["/mcp"]  # the mount point itself, both ways
    for path in paths:
        status, headers, answer = post(url, path, body, headers_for("tools/call", "echo"))
        assert status == 200 and headers["content-type"] == "application/json", answer
        assert json.loads(answer)["result"]["content"][0]["text"] == "mounted"
    status, _, answer = post(url, "/mcp", b"", {}, method="GET")
    assert status == 405 and json.loads(answer)["error"]["code"] == -32600  # the engine's answer, not the framework's


def test_progress_streams_through_the_framework(site: tuple[str, str, Path]) -> None:
    _, url, _ = site
    body = call_body("tools/call", {"name": "progress", "arguments": {}}, token="p")
    conn, response = open_post(url, "/mcp", body, headers_for("tools/call", "progress"))
    try:
        assert response.getheader("content-type") == "text/event-stream"
        events = [(t, data) for t, data in sse_events(response) if isinstance(data, dict)]
    finally:
        conn.close()
    assert [data.get("method", "result") for _, data in events] == ["notifications/progress"] * 3 + ["result"]
    assert events[-1][0] - events[0][0] >= 0.45


def test_a_client_that_leaves_cancels_the_handler_through_the_framework(site: tuple[str, str, Path]) -> None:
    module, url, marks = site
    key = f"{module}-{url.rsplit(':', 1)[1]}"
    body = call_body("tools/call", {"name": "slow", "arguments": {"key": key, "report": True}}, token="s")
    head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n"
            f"Mcp-Method: tools/call\r\nMcp-Name: slow\r\nContent-Length: {len(body)}\r\n\r\n").encode()
    sock = socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1])), timeout=TIMEOUT)
    try:
        sock.sendall(head + body)
        assert wait_for_file(marks / f"{key}.started")
        assert b"notifications/progress" in sock.recv(65536)
    finally:
        sock.close()
    assert wait_for_file(marks / f"{key}.cancelled"), "the handler was not cancelled"


def test_our_client_through_the_framework(site: tuple[str, str, Path]) -> None:
    _, url, _ = site

    async def session() -> list[str]:
        with anyio.fail_after(TIMEOUT):
            async with HttpClient(f"{url}/mcp", WireClient(Implementation(name="t", version="1"))) as c:
                await c.discover()
                tools = sorted(tool.name for tool in await c.list_tools())
                result = await c.call_tool("echo", {"text": "through"})
                return [*tools, result.data["content"][0]["text"]]

    started = time.monotonic()
    assert anyio.run(session) == ["echo", "pid", "progress", "slow", "touch", "through"]
    assert time.monotonic() - started < TIMEOUT
