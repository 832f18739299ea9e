"""The Redis notification broker (``mcpwire_adapters.state.redis.broker``) against a real redis-server:
Apps in one trio run, each with its own broker as separate processes would have, and a listen
stream on one of them. A change raised on one App reaches the other's stream; an App skips
its own notices; another prefix is another server; poisoned or foreign messages on the channel
are logged and dropped; a Redis restart is survived (the broker subscribes again).

Every wait has a deadline; no assertion is about how long anything took.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import redis
import trio
from hypothesis import given
from hypothesis import strategies as st
from _redis import RedisServer
from mcpwire_adapters import App
from mcpwire_adapters.state.broker import ListChangedNotice, decode_envelope, encode_envelope
from mcpwire_adapters.state.redis.broker import RedisBroker

from mcpwire import Client, Keyring, ResponseBody, StdioConnection, StdioListenStream
from mcpwire.types import Implementation

TIMEOUT = 10.0
NOW = 1_700_000_000.0


def make_app(url: str, prefix: str = "svc:") -> App:
    client = redis.Redis.from_url(url, socket_timeout=2.0, socket_connect_timeout=2.0)
    return App("broker-test", "1.0", keyring=Keyring.single(b"k" * 32), list_changed=("tools",),
               resource_subscribe=True, broker=RedisBroker(client, prefix=prefix, reconnect_delay=0.1))


def broker(app: App) -> RedisBroker:
    found = app.fanout.broker
    assert isinstance(found, RedisBroker)
    return found


class Listening:
    """A stdio listen stream of ``app`` (tools list and one resource), its outputs as JSON."""

    def __init__(self, app: App) -> None:
        request = Client(Implementation(name="c", version="1")).listen(
            {"toolsListChanged": True, "resourceSubscriptions": ["file:///a"]})
        [stream] = StdioConnection(app.server).receive_data(request.line, now=NOW)
        assert isinstance(stream, StdioListenStream)
        self.forwarder = app.forward_listen(stream)
        self.messages: list[dict[str, Any]] = []
        self.arrived = trio.Event()

    async def emit(self, output: Any) -> None:
        data = output if isinstance(output, bytes) else b"".join(
            o.data for o in output if isinstance(o, ResponseBody))
        for line in data.splitlines():
            self.messages.append(json.loads(line))
        self.arrived.set()

    async def next(self) -> dict[str, Any]:
        """The next notification (after the acknowledgement)."""
        with trio.fail_after(TIMEOUT):
            while len(self.messages) < 2:
                self.arrived = trio.Event()
                await self.arrived.wait()
        return self.messages.pop(1)


@asynccontextmanager
async def serving(*apps: App) -> AsyncIterator[trio.Nursery]:
    async with trio.open_nursery() as nursery:
        for app in apps:
            await nursery.start(_run, app)
        with trio.fail_after(TIMEOUT):
            while not all(broker(app).subscribed.is_set() for app in apps):
                await trio.sleep(0.01)
        yield nursery
        nursery.cancel_scope.cancel()


async def _run(app: App, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
    async with app.running():
        task_status.started()
        await trio.sleep_forever()


async def listen(nursery: trio.Nursery, app: App) -> Listening:
    listening = Listening(app)
    nursery.start_soon(listening.forwarder.run, listening.emit)
    with trio.fail_after(TIMEOUT):
        while not listening.messages:
            await trio.sleep(0.01)
    assert listening.messages[0]["method"] == "notifications/subscriptions/acknowledged"
    return listening


def test_a_change_on_one_app_reaches_the_listeners_of_another(redis_server: RedisServer) -> None:
    here, there = make_app(redis_server.url), make_app(redis_server.url)

    async def main() -> None:
        async with serving(here, there) as nursery:
            near, far = await listen(nursery, here), await listen(nursery, there)
            here.notify_list_changed("tools")
            for listening in (near, far):  # once each: here skips its own notice
                assert (await listening.next())["method"] == "notifications/tools/list_changed"
            there.notify_resource_updated("file:///a")
            for listening in (near, far):
                message = await listening.next()
                assert message["method"] == "notifications/resources/updated"
                assert message["params"]["uri"] == "file:///a"
            here.notify_list_changed("tools")
            assert (await far.next())["method"] == "notifications/tools/list_changed"
            assert (await near.next())["method"] == "notifications/tools/list_changed"
            assert near.messages[1:] == [] and far.messages[1:] == []

    trio.run(main)


def test_another_prefix_is_another_server(redis_server: RedisServer) -> None:
    mine, theirs = make_app(redis_server.url, "mine:"), make_app(redis_server.url, "theirs:")
    peer = make_app(redis_server.url, "mine:")

    async def main() -> None:
        async with serving(mine, theirs, peer) as nursery:
            foreign, friend = await listen(nursery, theirs), await listen(nursery, peer)
            mine.notify_list_changed("tools")
            assert (await friend.next())["method"] == "notifications/tools/list_changed"
            await trio.sleep(0.2)
            assert foreign.messages[1:] == []

    trio.run(main)


def test_poisoned_and_foreign_messages_are_logged_and_dropped(
        redis_server: RedisServer, caplog: pytest.LogCaptureFixture) -> None:
    app = make_app(redis_server.url)
    raw = redis.Redis.from_url(redis_server.url)
    channel = broker(app).channel
    poison = [b"not json", b"{}", b'{"v":2,"origin":"x","notice":{"type":"list_changed","list":"tools"}}',
              b'{"v":1,"origin":"x","notice":{"type":"list_changed","list":"nope"}}',
              b'{"v":1,"origin":"x","notice":{"type":"rm -rf","list":"tools"}}',
              b'{"v":1,"origin":"","notice":{"type":"list_changed","list":"tools"}}',
              b'{"v":1,"origin":"x","notice":{"type":"resource_updated","uri":5}}',
              b'{"v":1,"origin":"x","notice":{"type":"resource_updated","uri":"not a uri"}}',
              b"[" * 100_000, "\u00e9".encode() * 3, b'{"v":1,"origin":"x","notice":{"type":"task_status","task_id":"t"}}']

    async def main() -> None:
        async with serving(app) as nursery:
            listening = await listen(nursery, app)
            with caplog.at_level(logging.WARNING, logger="mcpwire_adapters.state.broker"):
                for message in poison:
                    raw.publish(channel, message)
                raw.publish(channel, encode_envelope("another-process", ListChangedNotice(list="tools")))
                assert (await listening.next())["method"] == "notifications/tools/list_changed"
            assert broker(app).dropped == 9  # the other two are envelopes that concern no listener here
            assert "not a notice" in caplog.text
            assert listening.messages[1:] == []

    trio.run(main)


def test_a_redis_restart_is_survived(redis_server: RedisServer, caplog: pytest.LogCaptureFixture) -> None:
    here, there = make_app(redis_server.url), make_app(redis_server.url)

    async def main() -> None:
        async with serving(here, there) as nursery:
            far = await listen(nursery, there)
            near = await listen(nursery, here)
            with caplog.at_level(logging.WARNING, logger="mcpwire_adapters.state.broker"):
                await trio.to_thread.run_sync(redis_server.stop)
                here.notify_list_changed("tools")  # logged, not raised; this process's streams have it
                assert (await near.next())["method"] == "notifications/tools/list_changed"
                await trio.to_thread.run_sync(redis_server.start)
                with trio.fail_after(TIMEOUT):
                    while not broker(there).subscribed.is_set():
                        await trio.sleep(0.01)
                here.notify_list_changed("tools")
                assert (await far.next())["method"] == "notifications/tools/list_changed"
            assert "could not publish" in caplog.text and "lost the subscription" in caplog.text

    trio.run(main)


def test_the_envelope_decoder_is_strict() -> None:
    good = encode_envelope("p", ListChangedNotice(list="prompts"))
    envelope = decode_envelope(good)
    assert envelope is not None and envelope.notice == ListChangedNotice(list="prompts")
    for bad in (good.replace(b'"v":1', b'"v":1,"extra":1'), good.decode(), None, 5, b"\xff", b" " * 20_000):
        assert decode_envelope(bad) is None


@given(st.binary(max_size=512) | st.text(max_size=200).map(str.encode))
def test_any_message_decodes_to_an_envelope_or_none(data: bytes) -> None:
    decoded = decode_envelope(data)
    assert decoded is None or decode_envelope(encode_envelope(decoded.origin, decoded.notice)) == decoded
