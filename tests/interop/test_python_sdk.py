"""Interop with the official Python SDK (``mcp`` 2.3.0, pinned by the dev extra), both
directions, over Streamable HTTP and stdio, on the initialize-era revision 2025-11-25:

- its ``Client`` (``mode="legacy"``: ``initialize``, no probe) against our server
  (``peers/our_server.py``), in this process on asyncio;
- our ``HttpClient`` and ``StdioClient`` (pinned to 2025-11-25) against its ``MCPServer``
  (``peers/sdk_server.py``), and unpinned, when our client probes and picks the era itself;
  our client on trio and on asyncio (the ``backend`` fixture, ``tests/_backends.py``).

The SDK's server declares no ``resources.subscribe`` and no ``logging`` capability: our client
then sends neither ``resources/subscribe`` nor ``logging/setLevel`` (both would be -32601).
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from mcpwire import PROTOCOL_VERSION, Client as WireClient, LogMessage, Progress
from mcpwire.types import CreateMessageRequest, CreateMessageResult, ElicitRequest, ElicitResult, Implementation
from mcpwire.types import InputRequest, TextContent as WireText
from mcpwire_adapters.http_client import HttpClient, Session
from mcpwire_adapters.stdio_client import StdioClient

from _backends import run
from _peers import OUR_SERVER, SDK_SERVER, served

import mcp_types
from mcp import Client as SdkClient
from mcp.client.stdio import StdioServerParameters

TIMEOUT = 60.0


@pytest.fixture(autouse=True)
def _quiet_deprecations() -> Iterator[None]:
    with warnings.catch_warnings():  # the SDK warns that the initialize-era features are deprecated
        warnings.simplefilter("ignore")
        yield


@pytest.fixture
def our_url() -> Iterator[str]:
    yield from served(OUR_SERVER)


@pytest.fixture
def sdk_url() -> Iterator[str]:
    yield from served(SDK_SERVER)


# -- the SDK's client, our server -------------------------------------------------------------------


async def sdk_client_session(target: str | StdioServerParameters) -> dict[str, Any]:
    seen: dict[str, Any] = {"logs": [], "updates": [], "progress": []}

    async def on_sampling(context: Any, params: mcp_types.CreateMessageRequestParams) -> mcp_types.CreateMessageResult:
        return mcp_types.CreateMessageResult(role="assistant", model="test-model",
                                             content=mcp_types.TextContent(type="text", text="Paris"))

    async def on_elicitation(context: Any, params: Any) -> mcp_types.ElicitResult:
        return mcp_types.ElicitResult(action="accept", content={"name": "Ada"})

    async def on_log(params: mcp_types.LoggingMessageNotificationParams) -> None:
        seen["logs"].append(params.data)

    async def on_message(message: Any) -> None:
        if isinstance(message, mcp_types.ResourceUpdatedNotification):
            seen["updates"].append(str(message.params.uri))

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen["progress"].append((progress, total, message))

    def text(result: Any) -> str:
        return "".join(block.text for block in result.content)

    with anyio.fail_after(TIMEOUT):
        async with SdkClient(target, mode="legacy", sampling_callback=on_sampling, elicitation_callback=on_elicitation,
                             logging_callback=on_log, message_handler=on_message) as client:
            seen["version"] = client.protocol_version
            seen["server"] = client.server_info.name if client.server_info else None
            seen["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
            seen["echo"] = text(await client.call_tool("echo", {"text": "hi there"}))
            seen["count"] = text(await client.call_tool("count", {}, progress_callback=on_progress))
            await client.set_logging_level("warning")
            await client.call_tool("chatty", {})
            await client.set_logging_level("debug")
            await client.call_tool("chatty", {})
            seen["greet"] = text(await client.call_tool("greet", {}))
            seen["ask_llm"] = text(await client.call_tool("ask_llm", {}))
            seen["resources"] = [str(r.uri) for r in (await client.list_resources()).resources]
            read = await client.read_resource("test://note")
            seen["note"] = getattr(read.contents[0], "text", None)
            await client.subscribe_resource("test://note")
            await client.call_tool("touch", {})
            while not seen["updates"]:
                await anyio.sleep(0.01)
            seen["prompt"] = (await client.get_prompt("greeting", {"name": "Grace"})).messages[0].content.text  # type: ignore[union-attr]
            ref = mcp_types.PromptReference(type="ref/prompt", name="greeting")
            seen["completion"] = (await client.complete(ref, {"name": "name", "value": "A"})).completion.values
            await client.send_ping()
    return seen


def check_sdk_client(seen: dict[str, Any]) -> None:
    assert seen["version"] == "2025-11-25" and seen["server"] == "mcpwire-interop"
    assert seen["tools"] == ["ask_llm", "chatty", "count", "echo", "greet", "touch"]
    assert seen["echo"] == "hi there" and seen["count"] == "counted"
    assert seen["progress"] == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    assert seen["logs"] == ["loud news", "quiet detail", "loud news"]  # warning only, then everything
    assert seen["greet"] == "Hello, Ada!" and seen["ask_llm"] == "The model said: Paris"
    assert seen["resources"] == ["test://note"] and seen["note"] == "a note" and seen["updates"] == ["test://note"]
    assert seen["prompt"] == "Say hello to Grace" and seen["completion"] == ["Ada", "Alan"]


def test_the_sdk_client_over_http(our_url: str) -> None:
    check_sdk_client(anyio.run(sdk_client_session, our_url))


def test_the_sdk_client_over_stdio() -> None:
    params = StdioServerParameters(command=sys.executable, args=[OUR_SERVER, "stdio"])
    check_sdk_client(anyio.run(sdk_client_session, params))


# -- our client, the SDK's server -------------------------------------------------------------------


def answer(requests: dict[str, InputRequest]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, request in requests.items():
        if isinstance(request, ElicitRequest):
            out[key] = ElicitResult(action="accept", content={"name": "Ada"})
        else:
            assert isinstance(request, CreateMessageRequest)
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
    assert opened.method == "initialize" and c.client.initialize_era
    assert c.server_info is not None and (c.server_info.name, c.server_info.version) == ("python-sdk-interop", "2.3.0")
    assert sorted(t.name for t in await c.list_tools()) == ["ask_llm", "chatty", "count", "echo", "greet"]
    assert text(await c.call_tool("echo", {"text": "hi there"})) == "hi there"
    progress: list[Progress] = []
    assert text(await c.call_tool("count", {}, on_progress=progress.append)) == "counted"
    assert [(p.progress, p.total, p.message) for p in progress] == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    logs: list[LogMessage] = []
    # No logging capability declared: no logging/setLevel is sent, and the server logs every level.
    assert text(await c.call_tool("chatty", {}, on_log=logs.append, log_level="warning")) == "logged"
    assert [(m.level, m.data) for m in logs] == [("debug", "quiet detail"), ("warning", "loud news")]
    assert text(await c.call_tool("greet", {}, on_input=answer)) == "Hello, Ada!"
    assert text(await c.call_tool("ask_llm", {}, on_input=answer)) == "The model said: Paris"
    assert [r.uri for r in await c.list_resources()] == ["test://note"]
    assert (await c.read_resource("test://note")).data["contents"][0]["text"] == "a note"
    async with c.listen({"resourceSubscriptions": ["test://note"], "toolsListChanged": True}) as sub:
        honoured = sub.acknowledged  # the SDK offers no resources.subscribe: nothing is asked
    assert honoured is not None and not honoured.resource_subscriptions
    prompt = await c.get_prompt("greeting", {"name": "Grace"})
    assert prompt.data["messages"][0]["content"]["text"] == "Say hello to Grace"
    completion = await c.send(c.client.request("completion/complete", {
        "ref": {"type": "ref/prompt", "name": "greeting"}, "argument": {"name": "name", "value": "A"}}))
    assert completion.data["completion"]["values"] == ["Ada", "Alan"]
    await c.ping()


def test_our_http_client_against_the_sdk_server(sdk_url: str, backend: str) -> None:
    async def main() -> None:
        async with HttpClient(sdk_url, make_client()) as c:
            await drive(c)
            assert c.protocol_version == "2025-11-25" and c.client.session_id is not None
        assert c.client.session_id is None  # leaving sent DELETE

    run(main, backend, TIMEOUT)


def test_our_stdio_client_against_the_sdk_server(backend: str) -> None:
    async def main() -> None:
        async with StdioClient([sys.executable, SDK_SERVER, "stdio"], make_client(), stderr=subprocess.DEVNULL) as c:
            await drive(c)
            assert c.protocol_version == "2025-11-25"

    run(main, backend, TIMEOUT)


def test_our_unpinned_client_connects_to_the_dual_era_sdk_server(sdk_url: str, backend: str) -> None:
    async def main() -> None:
        async with HttpClient(sdk_url, make_client(pinned=False)) as c:
            opened = await c.connect()
            assert opened.method == "server/discover" and c.protocol_version == "2026-07-28"
            assert text(await c.call_tool("echo", {"text": "modern"})) == "modern"

    run(main, backend, TIMEOUT)
