"""Interop with the official Python SDK (``mcp`` 2.3.0, pinned by the dev extra), both
directions, over Streamable HTTP and stdio, on the initialize-era revision 2025-11-25:

- its ``Client`` (``mode="legacy"``: ``initialize``, no probe) against our server
  (``peers/our_server.py``), in this process on asyncio;
- our ``HttpClient`` and ``StdioClient`` (pinned to 2025-11-25) against its ``MCPServer``
  (``peers/sdk_server.py``, which adds the initialize-era ``logging/setLevel`` and
  ``resources/subscribe`` handlers), and unpinned, when our client probes and picks the era itself;
  our client on trio and on asyncio (the ``backend`` fixture, ``tests/_backends.py``).

MCPServer alone (``sdk_server.py ... plain``) declares no ``resources.subscribe`` and no
``logging`` capability: our client then sends neither ``resources/subscribe`` nor
``logging/setLevel`` (both would be -32601).
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import warnings
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest

from mcpwire import PROTOCOL_VERSION, Client as WireClient, ListenAck, LogMessage, Progress, ResourceUpdated
from mcpwire.types import CreateMessageRequest, CreateMessageResult, ElicitRequest, ElicitResult, Implementation
from mcpwire.types import InputRequest, ResourcesCapability, TextContent as WireText
from mcpwire_adapters.client.http import HttpClient, Session
from mcpwire_adapters.client.stdio import StdioClient

from _backends import run
from _peers import OUR_SERVER, SDK_SERVER, ping_status, served

import mcp_types
from mcp import Client as SdkClient
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

TIMEOUT = 60.0  # per test; the whole module takes a few seconds
TRANSPORTS = ["http", "stdio"]


@pytest.fixture(autouse=True)
def _quiet_deprecations() -> Iterator[None]:
    with warnings.catch_warnings():  # the SDK warns that the initialize-era features are deprecated
        warnings.simplefilter("ignore")
        yield


# -- the SDK's client, our server -------------------------------------------------------------------


async def sdk_client_session(transport: str, url: str | None) -> dict[str, Any]:
    seen: dict[str, Any] = {"logs": [], "updates": [], "progress": [], "http": []}

    async def on_sampling(context: Any, params: mcp_types.CreateMessageRequestParams) -> mcp_types.CreateMessageResult:
        seen["sampling_asked"] = params.messages[0].content.text  # type: ignore[union-attr]
        return mcp_types.CreateMessageResult(role="assistant", model="test-model",
                                             content=mcp_types.TextContent(type="text", text="Paris"))

    async def on_elicitation(context: Any, params: Any) -> mcp_types.ElicitResult:
        seen["elicitation_asked"] = params.message
        return mcp_types.ElicitResult(action="accept", content={"name": "Ada"})

    async def on_log(params: mcp_types.LoggingMessageNotificationParams) -> None:
        seen["logs"].append((params.level, params.data))

    async def on_message(message: Any) -> None:
        if isinstance(message, mcp_types.ResourceUpdatedNotification):
            seen["updates"].append(str(message.params.uri))

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen["progress"].append((progress, total, message))

    async def on_response(response: httpx2.Response) -> None:
        seen["http"].append((response.request.method, response.request.headers.get("mcp-session-id"),
                             response.status_code))

    def text(result: Any) -> str:
        return "".join(block.text for block in result.content)

    http = create_mcp_http_client()
    http.event_hooks = {"response": [on_response]}
    target: Any
    if transport == "http":
        assert url is not None
        target = streamable_http_client(url, http_client=http)
    else:
        target = StdioServerParameters(command=sys.executable, args=[OUR_SERVER, "stdio"])
    with anyio.fail_after(TIMEOUT):
        async with http, SdkClient(target, mode="legacy", sampling_callback=on_sampling,
                                   elicitation_callback=on_elicitation, logging_callback=on_log,
                                   message_handler=on_message) as client:
            seen["version"] = client.protocol_version
            seen["server"] = client.server_info.name if client.server_info else None
            seen["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
            seen["echo"] = text(await client.call_tool("echo", {"text": "hi there"}))
            seen["count"] = text(await client.call_tool("count", {}, progress_callback=on_progress))
            await client.set_logging_level("warning")
            seen["chatty"] = text(await client.call_tool("chatty", {}))
            seen["logs_at_warning"] = list(seen["logs"])
            await client.set_logging_level("debug")
            await client.call_tool("chatty", {})
            seen["greet"] = text(await client.call_tool("greet", {}))
            seen["ask_llm"] = text(await client.call_tool("ask_llm", {}))
            seen["resources"] = [str(r.uri) for r in (await client.list_resources()).resources]
            read = await client.read_resource("test://note")
            seen["note"] = getattr(read.contents[0], "text", None)
            await client.subscribe_resource("test://note")
            seen["touch"] = text(await client.call_tool("touch", {}))
            with anyio.fail_after(10):
                while not seen["updates"]:
                    await anyio.sleep(0.01)
            seen["prompts"] = [p.name for p in (await client.list_prompts()).prompts]
            seen["prompt"] = (await client.get_prompt("greeting", {"name": "Grace"})).messages[0].content.text  # type: ignore[union-attr]
            ref = mcp_types.PromptReference(type="ref/prompt", name="greeting")
            seen["completion"] = (await client.complete(ref, {"name": "name", "value": "A"})).completion.values
            await client.send_ping()
            sessions = {sid for _, sid, _ in seen["http"] if sid}
            if url is not None:
                assert len(sessions) == 1, seen["http"]
                seen["session_id"] = sessions.pop()
                seen["open_status"] = await anyio.to_thread.run_sync(ping_status, url, seen["session_id"])
        if url is not None:
            seen["closed_status"] = await anyio.to_thread.run_sync(ping_status, url, seen["session_id"])
    return seen


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_sdk_client_against_our_server(transport: str) -> None:
    peer: contextlib.AbstractContextManager[str | None]
    peer = served(OUR_SERVER, "http") if transport == "http" else contextlib.nullcontext()
    with peer as url:
        seen = anyio.run(sdk_client_session, transport, url)
    assert seen["version"] == "2025-11-25" and seen["server"] == "mcpwire-interop"
    assert seen["tools"] == ["ask_llm", "chatty", "count", "echo", "greet", "slow_job", "touch", "vetted_job"]
    assert seen["echo"] == "hi there" and seen["count"] == "counted" and seen["chatty"] == "logged"
    assert seen["progress"] == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    assert seen["logs_at_warning"] == [("warning", "loud news")]
    assert seen["logs"] == [("warning", "loud news"), ("debug", "quiet detail"), ("warning", "loud news")]
    assert seen["elicitation_asked"] == "Your name?" and seen["greet"] == "Hello, Ada!"
    assert seen["sampling_asked"] == "Capital of France?" and seen["ask_llm"] == "The model said: Paris"
    assert seen["resources"] == ["test://note"] and seen["note"] == "a note"
    assert seen["touch"] == "touched" and seen["updates"] == ["test://note"]
    assert seen["prompts"] == ["greeting"] and seen["prompt"] == "Say hello to Grace"
    assert seen["completion"] == ["Ada", "Alan"]
    if transport == "http":  # the SDK ended the session with DELETE, and our server forgot it
        assert seen["open_status"] == 200
        assert [(m, s) for m, sid, s in seen["http"] if m == "DELETE"] == [("DELETE", 200)]
        assert seen["closed_status"] == 404


# -- our client, the SDK's server -------------------------------------------------------------------


def answer(requests: dict[str, InputRequest]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, request in requests.items():
        if isinstance(request, ElicitRequest):
            assert request.params.message == "Your name?"
            out[key] = ElicitResult(action="accept", content={"name": "Ada"})
        else:
            assert isinstance(request, CreateMessageRequest)
            assert [m.content.text for m in request.params.messages] == ["Capital of France?"]  # type: ignore[union-attr]
            out[key] = CreateMessageResult(role="assistant", content=WireText(text="Paris"), model="test-model")
    return out


def make_client(pinned: bool = True) -> WireClient:
    return WireClient(Implementation(name="mcpwire-interop", version="1.0"),
                      capabilities={"elicitation": {"form": {}}, "sampling": {}},
                      protocol_version="2025-11-25" if pinned else PROTOCOL_VERSION)


def text(result: Any) -> str:
    return "".join(block["text"] for block in result.data["content"])


async def drive(c: Session) -> None:
    opened = await c.connect()
    assert opened.method == "initialize" and c.client.initialize_era and c.protocol_version == "2025-11-25"
    assert c.server_info is not None and (c.server_info.name, c.server_info.version) == ("python-sdk-interop", "2.3.0")
    assert sorted(t.name for t in await c.list_tools()) == ["ask_llm", "chatty", "count", "echo", "greet", "touch"]
    assert text(await c.call_tool("echo", {"text": "hi there"})) == "hi there"
    progress: list[Progress] = []
    assert text(await c.call_tool("count", {}, on_progress=progress.append)) == "counted"
    assert [(p.progress, p.total, p.message) for p in progress] == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    logs: list[LogMessage] = []
    assert text(await c.call_tool("chatty", {}, on_log=logs.append, log_level="warning")) == "logged"
    assert [(m.level, m.data) for m in logs] == [("warning", "loud news")]
    logs.clear()
    assert text(await c.call_tool("chatty", {}, on_log=logs.append, log_level="debug")) == "logged"
    assert [(m.level, m.data) for m in logs] == [("debug", "quiet detail"), ("warning", "loud news")]
    assert text(await c.call_tool("greet", {}, on_input=answer)) == "Hello, Ada!"
    assert text(await c.call_tool("ask_llm", {}, on_input=answer)) == "The model said: Paris"
    assert [r.uri for r in await c.list_resources()] == ["test://note"]
    assert (await c.read_resource("test://note")).data["contents"][0]["text"] == "a note"
    async with c.listen({"resourceSubscriptions": ["test://note"]}) as sub:
        honoured = sub.acknowledged
        assert text(await c.call_tool("touch", {})) == "touched"
        with anyio.fail_after(10):
            event = await sub.__anext__()
    assert honoured is not None and honoured.resource_subscriptions == ["test://note"]
    assert isinstance(event, ResourceUpdated) and event.uri == "test://note" and event.subscription_id is None
    assert [p.name for p in await c.list_prompts()] == ["greeting"]
    prompt = await c.get_prompt("greeting", {"name": "Grace"})
    assert prompt.data["messages"][0]["content"]["text"] == "Say hello to Grace"
    completion = await c.send(c.client.request("completion/complete", {
        "ref": {"type": "ref/prompt", "name": "greeting"}, "argument": {"name": "name", "value": "A"}}))
    assert completion.data["completion"]["values"] == ["Ada", "Alan"]
    await c.ping()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_our_client_against_the_sdk_server(transport: str, backend: str) -> None:
    async def over_http(url: str) -> None:
        async with HttpClient(url, make_client()) as c:
            await drive(c)
            session_id = c.client.session_id
            assert session_id is not None
            assert await anyio.to_thread.run_sync(ping_status, url, session_id) == 200
        assert c.client.session_id is None  # leaving sent DELETE: the SDK server forgot the session
        assert await anyio.to_thread.run_sync(ping_status, url, session_id) == 404

    async def over_stdio() -> None:
        command = [sys.executable, SDK_SERVER, "stdio"]
        async with StdioClient(command, make_client(), stderr=subprocess.DEVNULL) as c:
            await drive(c)

    if transport == "http":
        with served(SDK_SERVER, "http") as url:
            run(lambda: over_http(url), backend, TIMEOUT)
    else:
        run(over_stdio, backend, TIMEOUT)


def test_our_client_against_the_plain_sdk_server(backend: str) -> None:
    """MCPServer without the initialize-era handlers: no logging, no resources.subscribe."""

    async def main(url: str) -> None:
        async with HttpClient(url, make_client()) as c:
            await c.connect()
            caps = c.server_capabilities
            assert caps is not None and not isinstance(caps.logging, dict)
            assert isinstance(caps.resources, ResourcesCapability) and not caps.resources.subscribe
            logs: list[LogMessage] = []
            # No logging/setLevel is sent (it would be -32601): the server logs every level.
            assert text(await c.call_tool("chatty", {}, on_log=logs.append, log_level="warning")) == "logged"
            assert [(m.level, m.data) for m in logs] == [("debug", "quiet detail"), ("warning", "loud news")]
            async with c.listen({"resourceSubscriptions": ["test://note"], "toolsListChanged": True}) as sub:
                honoured = sub.acknowledged  # nothing is asked for
            assert honoured is not None and not honoured.resource_subscriptions
            assert not honoured.tools_list_changed

    with served(SDK_SERVER, "http", "plain") as url:
        run(lambda: main(url), backend, TIMEOUT)


def test_our_unpinned_client_connects_to_the_dual_era_sdk_server(backend: str) -> None:
    async def main(url: str) -> None:
        async with HttpClient(url, make_client(pinned=False)) as c:
            opened = await c.connect()
            assert opened.method == "server/discover" and c.protocol_version == "2026-07-28"
            assert not c.client.initialize_era
            assert text(await c.call_tool("echo", {"text": "modern"})) == "modern"
            progress: list[Progress] = []
            assert text(await c.call_tool("count", {}, on_progress=progress.append)) == "counted"
            assert [(p.progress, p.total, p.message) for p in progress] == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
            logs: list[LogMessage] = []  # the level rides each request's _meta: no logging/setLevel
            assert text(await c.call_tool("chatty", {}, on_log=logs.append, log_level="warning")) == "logged"
            assert [(m.level, m.data) for m in logs] == [("warning", "loud news")]
            asked: list[str] = []  # input requests come as InputRequired rounds: one each

            def answering(requests: dict[str, InputRequest]) -> dict[str, Any]:
                asked.extend(type(r).__name__ for r in requests.values())
                return answer(requests)

            assert text(await c.call_tool("greet", {}, on_input=answering)) == "Hello, Ada!"
            assert text(await c.call_tool("ask_llm", {}, on_input=answering)) == "The model said: Paris"
            assert asked == ["ElicitRequest", "CreateMessageRequest"]
            async with c.listen({"resourceSubscriptions": ["test://note"]}) as sub:
                honoured = sub.acknowledged
                assert text(await c.call_tool("touch", {})) == "touched"
                with anyio.fail_after(10):
                    event = await sub.__anext__()
                    while isinstance(event, ListenAck):
                        event = await sub.__anext__()
            assert honoured is not None and honoured.resource_subscriptions == ["test://note"]
            assert isinstance(event, ResourceUpdated) and event.uri == "test://note"
            assert event.subscription_id == sub.subscription_id

    with served(SDK_SERVER, "http") as url:
        run(lambda: main(url), backend, TIMEOUT)


def test_the_probes_initialize_era_checks_hold_for_the_sdk_server() -> None:
    """The probe's era.* checks against the Python SDK's server: every rule holds; it declares
    no tasks, so that check is not applicable."""
    from mcpwire_adapters.testing.probe.runner import probe, select

    # The probe's checks of 2025-11-25 sessions (docs/probing.md has the rest of the era's).
    SESSION_CHECKS = ["era.version-negotiation", "era.ping", "era.session-required", "era.session-unknown",
                      "era.session-deleted", "era.version-header-*", "era.notification", "era.get-stream",
                      "era.tasks-unknown"]

    with served(SDK_SERVER, "http") as url:
        findings = anyio.run(lambda: probe(url, select(SESSION_CHECKS), rate=0, revisions=["2025-11-25"]),
                             backend="trio")
    assert [(f.subject.id, f.status) for f in findings if f.status != "pass"] == [("era.tasks-unknown", "n/a")], [
        (f.subject.id, f.status, f.detail) for f in findings]
