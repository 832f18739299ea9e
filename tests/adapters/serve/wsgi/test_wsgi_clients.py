"""Clients against WsgiApp under real servers: the official Python SDK's client (``mcp`` 2.3.0,
on 2026-07-28 and on the initialize era's sessions) and our ``HttpClient``; initialize-era
sessions shared by two gunicorn servers through a real redis-server."""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from _redis import RedisServer
from _wsgi_servers import SERVERS, THREADED, headers_for, post, served
from mcpwire_adapters.client.http import HttpClient

from mcpwire import Client as WireClient, ListChanged, ListenAck, Progress
from mcpwire.types import Implementation

from mcp import Client as SdkClient
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

TIMEOUT = 30.0


@pytest.fixture(scope="module", params=SERVERS)
def site(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    with served(request.param, "site_app", tmp_path_factory.mktemp(request.param)) as url:
        yield request.param, f"{url}/mcp"


@pytest.fixture(autouse=True)
def _quiet_deprecations() -> Iterator[None]:
    with warnings.catch_warnings():  # the SDK warns that the initialize-era features are deprecated
        warnings.simplefilter("ignore")
        yield


async def sdk_session(url: str, mode: str) -> dict[str, Any]:
    seen: dict[str, Any] = {"progress": [], "http": []}

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen["progress"].append((progress, time.monotonic()))

    async def on_response(response: Any) -> None:
        seen["http"].append((response.request.method, response.status_code))

    http = create_mcp_http_client()
    http.event_hooks = {"response": [on_response]}
    with anyio.fail_after(TIMEOUT):
        async with http, SdkClient(streamable_http_client(url, http_client=http), mode=mode) as client:
            seen["version"] = client.protocol_version
            seen["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
            echo = await client.call_tool("echo", {"text": "hi there"})
            seen["echo"] = [getattr(block, "text", None) for block in echo.content]
            done = await client.call_tool("progress", {}, progress_callback=on_progress)
            seen["done_at"] = time.monotonic()
            seen["done"] = [getattr(block, "text", None) for block in done.content]
            read = await client.read_resource("test://note")
            seen["note"] = getattr(read.contents[0], "text", None)
    return seen


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_official_sdk_client(site: tuple[str, str], mode: str) -> None:
    server, url = site
    seen = anyio.run(sdk_session, url, mode)
    assert seen["version"] == ("2026-07-28" if mode == "auto" else "2025-11-25")
    assert seen["tools"] == ["echo", "pid", "progress", "slow", "touch"]
    assert seen["echo"] == ["hi there"] and seen["done"] == ["done"] and seen["note"] == "a note"
    assert [p for p, _ in seen["progress"]] == [1, 2, 3]
    assert seen["done_at"] - seen["progress"][0][1] >= 0.45  # the first progress came as it happened
    if mode == "legacy":
        gets = {status for method, status in seen["http"] if method == "GET"}
        # The session's GET stream: served where the server has threads, else 405 (the SDK goes on without).
        assert gets <= ({200} if server in THREADED else {405}), seen["http"]
        assert ("DELETE", 200) in seen["http"]


async def our_session(url: str, threaded: bool) -> dict[str, Any]:
    seen: dict[str, Any] = {"progress": []}
    client = WireClient(Implementation(name="wsgi-tests", version="1.0"))
    with anyio.fail_after(TIMEOUT):
        async with HttpClient(url, client) as c:
            await c.discover()
            result = await c.call_tool("progress", {}, on_progress=lambda p: seen["progress"].append((p, time.monotonic())))
            seen["done_at"] = time.monotonic()
            seen["done"] = [block["text"] for block in result.data["content"]]
            if threaded:
                async with c.listen({"toolsListChanged": True}) as sub:
                    events = aiter(sub)
                    seen["ack"] = await anext(events)
                    await c.call_tool("touch", {})
                    seen["changed"] = await anext(events)
    return seen


def test_our_http_client(site: tuple[str, str]) -> None:
    server, url = site
    seen = anyio.run(our_session, url, server in THREADED)
    assert seen["done"] == ["done"]
    progress = seen["progress"]
    assert [p.progress for p, _ in progress] == [1, 2, 3] and all(isinstance(p, Progress) for p, _ in progress)
    assert seen["done_at"] - progress[0][1] >= 0.45
    if server in THREADED:
        assert isinstance(seen["ack"], ListenAck) and isinstance(seen["changed"], ListChanged)


def test_initialize_era_sessions_are_shared_through_redis(tmp_path: Path) -> None:
    # Two gunicorn servers (two processes, two ports) on one Redis: a session opened on one is
    # served by the other, and ended there for both.
    redis = RedisServer(tmp_path / "redis")
    redis.start()
    env = {"MCPWIRE_REDIS": redis.url, "MCPWIRE_REDIS_PREFIX": "wsgi-tests:"}
    try:
        with served("gunicorn-gthread", "site_app", tmp_path, env=env) as one, \
                served("gunicorn-sync", "site_app", tmp_path, env=env) as two:
            body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}}).encode()
            plain = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
            status, headers, _ = post(one, "/mcp", body, plain)
            assert status == 200
            session = {**plain, "Mcp-Session-Id": headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
            call = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                               "params": {"name": "pid", "arguments": {}}}).encode()
            pids = []
            for url in (one, two):
                status, _, answer = post(url, "/mcp", call, session)
                assert status == 200, answer
                pids.append(json.loads(answer)["result"]["content"][0]["text"])
            assert pids[0] != pids[1]
            assert post(two, "/mcp", b"", session, method="DELETE")[0] == 200
            assert post(one, "/mcp", call, session)[0] == 404  # ended on the other server: gone here too
    finally:
        redis.stop()


def test_a_post_without_a_session_id_is_still_a_2026_request(site: tuple[str, str]) -> None:
    _, url = site
    base = url.removesuffix("/mcp")
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}})
    status, _, answer = post(base, "/mcp", body.encode(), headers_for("server/discover"))
    assert status == 200 and "2026-07-28" in json.loads(answer)["result"]["supportedVersions"]

