"""Interop with the TypeScript SDK v1 (``@modelcontextprotocol/sdk`` 1.32.2, the most used MCP
SDK), both directions, over Streamable HTTP and stdio, on the initialize-era revision it speaks
(2025-11-25):

- its ``Client`` (``peers/ts_client.cjs``) against our server (``peers/our_server.py``): every
  feature once, reported as one JSON object;
- our ``HttpClient`` and ``StdioClient`` against its ``McpServer`` (``peers/ts_server.cjs``,
  which sends elicitation, sampling and log messages on the session's GET stream over HTTP).

Node 22 and the SDK are installed on first use into the cache folder (``conformance/npm.py``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest
import trio

from _node import TS_SDK_VERSION, NodeSetup, node_or_skip, url_printed_by
from _peers import OUR_SERVER, ping_status, served
from mcpwire import Client, LogMessage, Progress, ResourceUpdated
from mcpwire.tasks import Task
from mcpwire.types import (
    CreateMessageRequest, CreateMessageResult, ElicitRequest, ElicitResult, Implementation, InputRequest, TextContent,
)
from mcpwire_adapters.client.http import HttpClient, Session
from mcpwire_adapters.client.stdio import StdioClient

TIMEOUT = 60.0


@pytest.fixture(scope="module")
def node() -> NodeSetup:
    return node_or_skip()


@pytest.fixture
def our_http_server() -> Iterator[str]:
    with served(OUR_SERVER, "http") as url:
        yield url


# -- the TypeScript SDK's client, our server -------------------------------------------------------


def run_ts_client(node: NodeSetup, *target: str) -> dict[str, Any]:
    done = subprocess.run(node.command("ts_client.cjs", *target), env=node.env, capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def check_ts_client_report(report: dict[str, Any]) -> None:
    assert report["server"] == {"name": "mcpwire-interop", "version": "1.0"}
    assert report["capabilities"]["resources"] == {"subscribe": True, "listChanged": True}
    assert report["tools"] == ["ask_llm", "chatty", "count", "echo", "greet", "slow_job", "touch", "vetted_job"]
    assert report["echo"] == "hi there" and report["count"] == "counted"
    assert report["progress"] == [[1, 3, "step 1"], [2, 3, "step 2"], [3, 3, "step 3"]]
    assert report["logsAtWarning"] == ["loud news"]
    assert report["logsAtDebug"] == ["quiet detail", "loud news"]
    assert report["greet"] == "Hello, Ada!"  # elicitation/create answered by the SDK's handler
    assert report["askLlm"] == "The model said: Paris"  # sampling/createMessage likewise
    assert report["asked"] == {"elicitation": [["Your name?", ["name"]]], "sampling": [[["Capital of France?"], 50]]}
    assert report["resources"] == ["test://note"] and report["note"] == "a note"
    assert report["updates"] == ["test://note"] and report["updatesAfterUnsubscribe"] == []
    assert report["prompts"] == ["greeting"] and report["prompt"] == "Say hello to Grace"
    assert report["completion"] == ["Ada", "Alan"] and report["ping"] == {}
    # 2025-11-25 tasks, driven by the SDK's experimental client (params.task, tasks/get polling
    # at our pollInterval, tasks/result; input through the session's stream).
    assert report["capabilities"]["tasks"] == {"cancel": {}, "requests": {"tools": {"call": {}}}}
    slow = report["slowJob"]
    assert slow[0] == ["taskCreated", "working"] and slow[-1] == ["result", "slow job done"]
    assert ["taskStatus", "completed"] in slow
    assert report["vettedJob"][0] == ["taskCreated", "working"]
    assert report["vettedJob"][-1] == ["result", "approved by Ada"]
    assert report["vettedAsked"] == [["Approve the job?", ["name"]]]
    # notifications/tasks/status reached the SDK's handler (the runner never checks these).
    assert report["taskStatuses"]["slow"][-1] == "completed"
    assert "input_required" in report["taskStatuses"]["vetted"] and report["taskStatuses"]["vetted"][-1] == "completed"
    assert report["taskGot"] == "completed" and report["cancelFinished"] == -32602


def test_the_ts_client_over_http(node: NodeSetup, our_http_server: str) -> None:
    report = run_ts_client(node, "http", our_http_server)
    check_ts_client_report(report)
    assert report["protocolVersion"] == "2025-11-25" and report["sessionId"]
    assert report["openStatus"] == 200
    assert report["terminated"] is True and report["closedStatus"] == 404  # DELETE ended it: our server forgot it


def test_the_ts_client_over_stdio(node: NodeSetup) -> None:
    check_ts_client_report(run_ts_client(node, "stdio", sys.executable, OUR_SERVER, "stdio"))


# -- our client, the TypeScript SDK's server -------------------------------------------------------


def answer(requests: dict[str, InputRequest]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, request in requests.items():
        if isinstance(request, ElicitRequest):
            assert request.params.message == "Your name?"
            out[key] = ElicitResult(action="accept", content={"name": "Ada"})
        else:
            assert isinstance(request, CreateMessageRequest)
            assert [m.content.text for m in request.params.messages] == ["Capital of France?"]  # type: ignore[union-attr]
            assert request.params.max_tokens == 50
            out[key] = CreateMessageResult(role="assistant", content=TextContent(text="Paris"), model="test-model")
    return out


def make_client() -> Client:
    return Client(Implementation(name="mcpwire-interop", version="1.0"),
                  capabilities={"elicitation": {"form": {}}, "sampling": {}})


def text(result: Any) -> str:
    return "".join(block["text"] for block in result.data["content"])


async def drive(c: Session, logs: list[LogMessage]) -> None:
    opened = await c.connect()
    assert opened.method == "initialize" and c.protocol_version == "2025-11-25"
    assert c.server_info is not None and (c.server_info.name, c.server_info.version) == ("ts-sdk-interop", "1.32.2")
    assert c.server_capabilities is not None and c.server_capabilities.logging is not None
    assert sorted(t.name for t in await c.list_tools()) == ["ask_llm", "chatty", "count", "echo", "greet", "slow_task", "touch"]
    assert text(await c.call_tool("echo", {"text": "hi there"})) == "hi there"
    # 2025-11-25 tasks: params.task, tasks/get polling at the SDK's pollInterval, tasks/result.
    states: list[Task] = []
    assert text(await c.call_tool("slow_task", {}, task={"ttl": 60_000}, on_task=states.append)) == "ts task done"
    assert states[0].status == "working" and states[0].poll_interval_ms == 100 and states[-1].status == "completed"
    assert (await c.get_task(states[0].task_id)).status == "completed"
    progress: list[Progress] = []
    assert text(await c.call_tool("count", {}, on_progress=progress.append)) == "counted"
    assert [(p.progress, p.total, p.message) for p in progress] == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    assert text(await c.call_tool("chatty", {}, on_log=logs.append, log_level="warning")) == "logged"
    with trio.fail_after(10):  # over HTTP the SDK logs on the GET stream: it may come after the answer
        while not logs:
            await trio.sleep(0.01)
    assert [m.data for m in logs] == ["loud news"] and logs[0].level == "warning"
    assert text(await c.call_tool("greet", {}, on_input=answer)) == "Hello, Ada!"
    assert text(await c.call_tool("ask_llm", {}, on_input=answer)) == "The model said: Paris"
    assert [r.uri for r in await c.list_resources()] == ["test://note"]
    assert (await c.read_resource("test://note")).data["contents"][0]["text"] == "a note"
    assert text(await c.call_tool("touch", {})) == "touched; subscribed: none"
    async with c.listen({"resourceSubscriptions": ["test://note"], "toolsListChanged": True}) as sub:
        assert text(await c.call_tool("touch", {})) == "touched; subscribed: test://note"  # resources/subscribe
        with trio.fail_after(10):
            event = await sub.__anext__()
    assert isinstance(event, ResourceUpdated) and event.uri == "test://note" and event.subscription_id is None
    assert text(await c.call_tool("touch", {})) == "touched; subscribed: none"  # leaving sent resources/unsubscribe
    assert [p.name for p in await c.list_prompts()] == ["greeting"]
    prompt = await c.get_prompt("greeting", {"name": "Grace"})
    assert prompt.data["messages"][0]["content"]["text"] == "Say hello to Grace"
    completion = await c.complete({"type": "ref/prompt", "name": "greeting"}, "name", "A")
    assert completion.data["completion"]["values"] == ["Ada", "Alan"]
    assert (await c.complete({"type": "ref/prompt", "name": "greeting"}, "name", "G")).data["completion"]["values"] == [
        "Grace"]
    await c.ping()


def test_our_http_client_against_the_ts_server(node: NodeSetup) -> None:
    async def main() -> None:
        logs: list[LogMessage] = []
        async with ts_server(node) as url:
            with trio.fail_after(TIMEOUT):
                async with HttpClient(url, make_client(), on_log=logs.append) as c:
                    await drive(c, logs)
                    session_id = c.client.session_id
                    assert session_id is not None and c.sessions_started == 1
                    assert await trio.to_thread.run_sync(ping_status, url, session_id) == 200
                assert c.client.session_id is None  # leaving sent DELETE: the SDK server forgot the session
                assert await trio.to_thread.run_sync(ping_status, url, session_id) == 404

    trio.run(main)


def test_our_stdio_client_against_the_ts_server(node: NodeSetup) -> None:
    async def main() -> None:
        logs: list[LogMessage] = []
        with trio.fail_after(TIMEOUT):
            async with StdioClient(node.command("ts_server.cjs", "stdio"), make_client(), env=node.env,
                                   on_log=logs.append) as c:
                await drive(c, logs)
            assert c.returncode is not None

    trio.run(main)


def ts_server(node: NodeSetup) -> AbstractAsyncContextManager[str]:
    return url_printed_by(node.command("ts_server.cjs", "http"), env=node.env, timeout=TIMEOUT)


def test_the_probes_initialize_era_checks_hold_for_the_ts_server(node: NodeSetup) -> None:
    """The probe's era.* checks against the TypeScript SDK v1's server: every rule holds (a
    failure here is a bug of the probe, not of the SDK, until shown from the specification)."""
    from mcpwire_adapters.testing.probe.runner import probe, select

    # The probe's checks of 2025-11-25 sessions (docs/probing.md has the rest of the era's).
    SESSION_CHECKS = ["era.version-negotiation", "era.ping", "era.session-required", "era.session-unknown",
                      "era.session-deleted", "era.version-header-*", "era.notification", "era.get-stream",
                      "era.tasks-unknown"]

    async def main() -> list[tuple[str, str, str]]:
        async with ts_server(node) as url:
            return [(f.subject.id, f.status, f.detail) for f in await probe(url, select(SESSION_CHECKS), rate=0,
                                                                             revisions=["2025-11-25"])]

    findings = trio.run(main)
    assert len(findings) == 9 and all(status == "pass" for _, status, _ in findings), findings


def test_the_peers_load_the_pinned_sdk(node: NodeSetup) -> None:
    script = "console.log(require.resolve('@modelcontextprotocol/sdk/server/mcp.js'))"
    probe = subprocess.run([str(node.node), "-e", script], env=node.env, capture_output=True, text=True, timeout=30)
    resolved = Path(probe.stdout.strip())
    assert resolved.is_relative_to(node.modules), (resolved, probe.stderr)
    package = json.loads((node.modules / "@modelcontextprotocol" / "sdk" / "package.json").read_text())
    assert package["version"] == TS_SDK_VERSION == "1.32.2"
