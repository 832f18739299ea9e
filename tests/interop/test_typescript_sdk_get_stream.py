"""Our HTTP client hears what the TypeScript SDK v1 server (``@modelcontextprotocol/sdk``
1.32.2) sends outside any request on an initialize-era session: the peer
(``peers/ts_stream_server.cjs``) logs, reports progress, pings and announces list changes on the
session's GET stream, which it drops when no stream is open, and replays from its event store to
a GET carrying ``Last-Event-ID`` (specification 2025-11-25: Basic > Transports > Streamable HTTP,
Listening for Messages from the Server; Resumability and Redelivery). The client declares no
capability and listens to nothing, so nothing but the session itself opens the stream. Each
test runs on trio and on asyncio; ``mcpwire call`` shows such a log line too."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import pytest

from _backends import run
from _lines import serving
from _node import node_or_skip
from mcpwire import Client, ListChanged, LogMessage, Progress
from mcpwire.types import Implementation
from mcpwire_adapters.client.http import HttpClient

WAIT = 10.0  # seconds any one message may take to arrive


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    node = node_or_skip()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NODE_PATH", str(node.modules))
        with serving(node.command("ts_stream_server.cjs"), r'^\{.*"url".*\}$') as ready:
            yield str(json.loads(ready.group(0))["url"])


def plain_client() -> Client:
    return Client(Implementation(name="mcpwire-interop", version="1.0"))


def text(result: Any) -> str:
    return "".join(block["text"] for block in result.data["content"])


async def until(done: Callable[[], bool]) -> None:
    with anyio.fail_after(WAIT):
        while not done():
            await anyio.sleep(0.01)


def lines(logs: list[LogMessage]) -> list[Any]:
    return [m.data for m in logs]


def test_log_lines_and_list_changes_sent_outside_the_call_arrive(url: str, backend: str) -> None:
    async def main() -> None:
        logs: list[LogMessage] = []
        async with HttpClient(url, plain_client(), on_log=logs.append) as c:
            await c.connect()
            assert c.protocol_version == "2025-11-25"
            assert text(await c.call_tool("log", {})) == "logged"
            await until(lambda: bool(logs))
            assert lines(logs) == ["a line on the GET stream"]
            assert logs[0].level == "info" and logs[0].logger == "peer"
            # Listening uses the session's one stream (the SDK refuses a second one with 409).
            async with c.listen({"toolsListChanged": True}) as sub:
                assert text(await c.call_tool("later", {})) == "scheduled"
                with anyio.fail_after(WAIT):
                    event = await sub.__anext__()
            assert isinstance(event, ListChanged) and event.kind == "tools" and event.subscription_id is None
            assert lines(logs) == ["a line on the GET stream", "a line after the call"]

    run(main, backend, timeout=30)


def test_progress_on_the_get_stream_reaches_its_call_and_a_ping_there_is_answered(url: str, backend: str) -> None:
    async def main() -> None:
        progress: list[Progress] = []
        async with HttpClient(url, plain_client()) as c:
            # The tool returns only once we answered its ping, sent on the GET stream after the progress.
            assert text(await c.call_tool("progress", {}, on_progress=progress.append)) == "reported"
        assert [(p.progress, p.total, p.message) for p in progress] == [(1, 2, "half way")]

    run(main, backend, timeout=30)


def test_a_get_stream_the_server_closed_is_resumed_with_its_last_event_id(url: str, backend: str) -> None:
    async def main() -> None:
        logs: list[LogMessage] = []
        async with HttpClient(url, plain_client(), on_log=logs.append) as c:
            assert text(await c.call_tool("drop", {})) == "dropping"
            # The second line was logged while no stream was open: only the replay brings it.
            await until(lambda: len(logs) == 2)
            assert lines(logs) == ["before the drop", "while the stream was closed"]

    run(main, backend, timeout=30)


@pytest.mark.parametrize("options", [["--no-input"], []], ids=["no-input", "answering"])
def test_mcpwire_call_shows_a_log_line_sent_on_the_get_stream(url: str, options: list[str]) -> None:
    done = subprocess.run([sys.executable, "-m", "mcpwire_adapters.cli", "call", url, "log", "--log-level", "info",
                           *options], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "logged\n"
    assert "log [info] peer: a line on the GET stream\n" in done.stderr, done.stderr
