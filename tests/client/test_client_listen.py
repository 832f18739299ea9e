"""``Session.listen``: subscriptions/listen through the HTTP client and the stdio client, each
test on trio and on asyncio (``tests/_backends.py``).

HTTP: the conformance fixture app served by ``serve_http`` on 127.0.0.1 port 0 in a thread of
its own (pokes at the app go through ``Served.call``). stdio: ``python conformance/fixture.py --transport stdio`` as a subprocess. Each
test acknowledges a subscription, calls ``test_trigger_tool_change`` and sees the
``ListChanged`` it causes; leaving the block cancels the subscription (HTTP: the stream's
connection closes and the server drops the listener; stdio: ``notifications/cancelled``).
Every test runs under ``anyio.fail_after``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcpwire_adapters.app.app import App
from mcpwire_adapters.client.http import HttpClient, ServerError, Subscription
from mcpwire_adapters.client.stdio import StdioClient

from mcpwire.types import Implementation
from mcpwire import Keyring
from mcpwire.client.engine import Client
from mcpwire.client.events import ListChanged, ListenAck, ResourceUpdated, ResultReceived
from mcpwire.types import SubscriptionFilter

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "conformance"))

import fixture
from _backends import both, served

FIXTURE = [sys.executable, str(REPO / "conformance" / "fixture.py"), "--transport", "stdio"]


def make_client(**kw: Any) -> Client:
    return Client(Implementation(name="listen-test", version="1"), capabilities={}, **kw)


def make_app(**options: Any) -> App:
    return fixture.build_app(keyring=Keyring.single(b"L" * 32), **options)


async def next_event(sub: Subscription) -> Any:
    return await sub.__anext__()


async def wait_for(condition: Callable[[], bool]) -> None:
    while not condition():
        await anyio.sleep(0.01)


@both
async def test_http_listen_ack_list_changed_and_close_cancels() -> None:
    app = make_app(resource_subscribe=True)
    async with served(app) as server:
        async with HttpClient(server.url, make_client()) as c:
            wanted = {"toolsListChanged": True, "resourcesListChanged": True, "resourceSubscriptions": ["test://static-text"]}
            async with c.listen(wanted) as sub:
                # Entering waited for the acknowledgement: the server is listening now.
                assert app.server.open_listeners == 1
                honoured = SubscriptionFilter(tools_list_changed=True, resource_subscriptions=["test://static-text"])
                assert sub.acknowledged == honoured and sub.request is not None
                assert await next_event(sub) == ListenAck(subscription_id=sub.request.id, notifications=honoured)
                # Requests keep flowing on the client's own connection while the stream is open.
                await c.call_tool("test_trigger_tool_change")
                assert await next_event(sub) == ListChanged(subscription_id=sub.request.id, kind="tools")
                await server.call(app.notify_resource_updated, "test://static-text")
                assert await next_event(sub) == ResourceUpdated(subscription_id=sub.request.id, uri="test://static-text")
            # Leaving closed the stream's connection: the server notices and drops the listener.
            await wait_for(lambda: app.server.open_listeners == 0)
            assert c.connections_opened == 2  # the shared one and the stream's own


@both
async def test_http_listen_ends_with_the_listen_result() -> None:
    app = make_app()
    async with served(app) as server:
        async with (
            HttpClient(server.url, make_client()) as c,
            c.listen({"promptsListChanged": True}) as sub,
        ):
            seen: list[Any] = []
            await server.call(app.close_streams)  # a graceful end, as at shutdown
            async for event in sub:
                seen.append(event)
            assert [type(e) for e in seen] == [ListenAck]
            assert isinstance(sub.result, ResultReceived) and sub.result.method == "subscriptions/listen"
            assert sub.result.request_id == sub.subscription_id


@both
async def test_http_listen_dropped_by_the_server_is_a_transport_error_not_an_end() -> None:
    from mcpwire_adapters.client.http import TransportError

    app = make_app()
    opened: list[Any] = []
    open_stream = app.open_stream

    def recording(stream: Any, buffer: int = 64) -> Any:
        opened.append(stream)
        return open_stream(stream, buffer)

    app.open_stream = recording  # type: ignore[method-assign]
    async with served(app) as server:
        async with HttpClient(server.url, make_client()) as c:
            seen: list[Any] = []
            with pytest.raises(TransportError, match="incomplete chunked read"):
                async with c.listen({"promptsListChanged": True}) as sub:
                    await server.call(app.close_stream, opened[0])  # dropped without its listen result
                    async for event in sub:
                        seen.append(event)
            # The acknowledgement came; the abrupt end is not mistaken for the graceful one.
            assert [type(e) for e in seen] == [ListenAck] and sub.result is None


@both
async def test_http_listen_errors_and_version_fallback() -> None:
    app = make_app(max_listen_streams=1)
    async with served(app) as server:
        url = server.url
        async with HttpClient(url, make_client()) as c:
            with pytest.raises(ServerError) as info:
                async with c.listen({"toolsListChanged": "yes"}):
                    pass  # pragma: no cover
            assert info.value.code == -32602
            async with c.listen({"toolsListChanged": True}):
                with pytest.raises(ServerError) as info:
                    async with c.listen({"toolsListChanged": True}):
                        pass  # pragma: no cover
                assert info.value.code == -32603  # 503: too many open streams
        # A client preferring a version the server lacks falls back once, then listens.
        fallback = make_client(protocol_version="2099-01-01", supported_versions=("2099-01-01", "2026-07-28"))
        async with HttpClient(url, fallback) as c:
            await wait_for(lambda: app.server.open_listeners == 0)
            async with c.listen({"toolsListChanged": True}) as sub:
                assert sub.acknowledged == SubscriptionFilter(tools_list_changed=True) and sub.request is not None
                assert json.loads(sub.request.body)["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == (
                    "2026-07-28"
                )


class RecordingStdioClient(StdioClient):
    """Remembers every line written to the server's stdin."""

    written: list[dict[str, Any]]

    async def _write(self, data: bytes) -> None:
        self.__dict__.setdefault("written", []).extend(json.loads(line) for line in data.splitlines())
        await super()._write(data)


@both
async def test_stdio_listen_ack_list_changed_and_exit_cancels() -> None:
    async with RecordingStdioClient(FIXTURE, make_client()) as c:
        async with c.listen({"toolsListChanged": True, "promptsListChanged": True}) as sub:
            honoured = SubscriptionFilter(tools_list_changed=True, prompts_list_changed=True)
            assert sub.subscription_id is not None
            assert await next_event(sub) == ListenAck(subscription_id=sub.subscription_id, notifications=honoured)
            await c.call_tool("test_trigger_tool_change")  # concurrently on the same pipes
            assert await next_event(sub) == ListChanged(subscription_id=sub.subscription_id, kind="tools")
            await c.call_tool("test_trigger_prompt_change")
            assert await next_event(sub) == ListChanged(subscription_id=sub.subscription_id, kind="prompts")
        cancels = [m for m in c.written if m.get("method") == "notifications/cancelled"]
        assert [m["params"]["requestId"] for m in cancels] == [sub.subscription_id]
        # The subscription is gone; the connection still serves requests.
        answer = await c.call_tool("test_simple_text")
        assert answer.data["content"] == [{"type": "text", "text": "This is a simple text response for testing."}]
    assert c.returncode == 0
