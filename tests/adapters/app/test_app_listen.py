"""App.forward_listen: the one listen-stream forwarder the trio/h11, ASGI and stdio drivers share.

Each test admits a real subscriptions/listen stream through the engine (HTTP or stdio), hands
it to :meth:`App.forward_listen` and records what :meth:`ListenForwarder.run` emits: the
acknowledgement, the events the app delivers, the listen result at ``close_streams()``, SSE
keepalive comments on an idle HTTP stream, and how a drop or a departed client ends it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio
import trio.testing
from mcpwire_adapters import App
from mcpwire_adapters.app.app import ListenForwarder, PeerGone

from mcpwire import Client, HttpListenStream, HttpRequest, Keyring, ListenState, ResponseBody, ResponseHead, StdioConnection, StdioListenStream
from mcpwire.framing import encode_comment
from mcpwire.types import Implementation

ADAPTERS = Path(__file__).resolve().parents[3] / "adapters"
TIMEOUT = 5.0
NOW = 1_700_000_000.0
KEEPALIVE = encode_comment("keepalive")


def make_app() -> App:
    return App("listen-test", "1.0", keyring=Keyring.single(b"k" * 32), list_changed=("tools",))


def client() -> Client:
    return Client(Implementation(name="listen-test-client", version="1.0"))


def http_stream(app: App) -> HttpListenStream:
    req = client().listen({"toolsListChanged": True})
    stream = app.server.receive_http(
        HttpRequest(method="POST", target="/mcp", headers=list(req.headers), body=req.body), now=NOW
    )
    assert isinstance(stream, HttpListenStream)
    return stream


def stdio_stream(app: App) -> StdioListenStream:
    req = client().listen({"toolsListChanged": True})
    [stream] = StdioConnection(app.server).receive_data(req.line, now=NOW)
    assert isinstance(stream, StdioListenStream)
    return stream


def bodies(outputs: list[Any]) -> list[bytes]:
    return [b"".join(o.data for o in output if isinstance(o, ResponseBody)) for output in outputs]


def run(forwarder: ListenForwarder, after_ack: Callable[[], None], **options: Any) -> tuple[bool, list[Any]]:
    """Run the forwarder; call ``after_ack()`` once the acknowledgement was emitted."""
    emitted: list[Any] = []
    acked = trio.Event()

    async def emit(output: Any) -> None:
        emitted.append(output)
        acked.set()

    async def main() -> bool:
        with trio.fail_after(TIMEOUT):
            async with trio.open_nursery() as nursery:
                result: list[bool] = []

                async def forward() -> None:
                    result.append(await forwarder.run(emit, **options))

                nursery.start_soon(forward)
                await acked.wait()
                after_ack()
            return result[0]

    return trio.run(main), emitted


def test_http_stream_gets_ack_events_and_result_and_reports_ended() -> None:
    app = make_app()
    stream = http_stream(app)
    forwarder = app.forward_listen(stream)
    assert stream.state is ListenState.OPEN  # started at once: deliveries from now on reach it

    def deliver() -> None:
        app.notify_list_changed("tools")
        app.notify_list_changed("prompts")  # not asked for: nothing
        app.close_streams()

    ended, emitted = run(forwarder, deliver)
    assert ended is True
    assert isinstance(emitted[0][0], ResponseHead) and emitted[0][0].status == 200
    ack, changed, result = bodies(emitted)
    assert b"notifications/subscriptions/acknowledged" in ack
    assert b"notifications/tools/list_changed" in changed
    assert b'"resultType":"complete"' in result
    assert emitted[-1][-1].more is False
    assert app.server.open_listeners == 0


def test_idle_http_stream_gets_keepalive_comments() -> None:
    app = make_app()
    forwarder = app.forward_listen(http_stream(app))

    async def main() -> tuple[bool, list[Any]]:
        emitted: list[Any] = []

        async def emit(output: Any) -> None:
            emitted.append(output)
            if len(emitted) == 3:  # the ack, then two keepalives
                app.close_streams()

        with trio.fail_after(TIMEOUT):
            ended = await forwarder.run(emit, keepalive_interval=0.01)
        return ended, emitted

    ended, emitted = trio.run(main)
    assert ended is True
    assert emitted[1] == [ResponseBody(data=KEEPALIVE, more=True)] == emitted[2]
    assert len(emitted) == 4 and b'"resultType":"complete"' in bodies(emitted)[3]


def test_stdio_stream_lines_and_no_keepalive() -> None:
    app = make_app()
    stream = stdio_stream(app)
    forwarder = app.forward_listen(stream)

    def deliver() -> None:
        app.notify_list_changed("tools")
        app.close_streams()

    ended, emitted = run(forwarder, deliver, keepalive_interval=0.001)
    assert ended is True
    assert all(isinstance(line, bytes) and line.endswith(b"\n") for line in emitted)
    messages = [json.loads(line) for line in emitted]
    assert [m.get("method") for m in messages] == [
        "notifications/subscriptions/acknowledged", "notifications/tools/list_changed", None,
    ]
    assert messages[2]["result"]["resultType"] == "complete"


def test_a_stream_the_app_drops_is_not_ended() -> None:
    app = make_app()
    stream = http_stream(app)
    forwarder = app.forward_listen(stream)
    ended, emitted = run(forwarder, lambda: app.close_stream(stream))
    assert ended is False and len(emitted) == 1
    assert stream.state is ListenState.CANCELLED and app.server.open_listeners == 0


def test_a_result_that_did_not_fit_is_not_ended() -> None:
    app = make_app()
    stream = http_stream(app)
    forwarder = app.forward_listen(stream, buffer=1)
    app.notify_list_changed("tools")  # fills the buffer: nobody reads yet
    app.close_streams()  # the listen result does not fit: the stream is dropped instead
    ended, emitted = run(forwarder, lambda: None)
    assert ended is False
    assert len(emitted) == 2 and b"list_changed" in bodies(emitted)[1]


def test_a_client_gone_on_write_ends_the_stream() -> None:
    app = make_app()
    stream = http_stream(app)
    forwarder = app.forward_listen(stream)

    async def main() -> bool:
        async def emit(output: Any) -> None:
            if len(bodies([output])[0]) and b"acknowledged" not in bodies([output])[0]:
                raise PeerGone

        with trio.fail_after(TIMEOUT):
            async with trio.open_nursery() as nursery:
                result: list[bool] = []

                async def forward() -> None:
                    result.append(await forwarder.run(emit))

                nursery.start_soon(forward)
                await trio.testing.wait_all_tasks_blocked()
                app.notify_list_changed("tools")
            return result[0]

    assert trio.run(main) is False
    assert stream.state is ListenState.CANCELLED and app.server.open_listeners == 0
    app.notify_list_changed("tools")  # nothing is delivered to a dropped stream


def test_a_watched_disconnect_ends_the_stream() -> None:
    app = make_app()
    stream = http_stream(app)
    forwarder = app.forward_listen(stream)

    async def watch(gone: Callable[[], None]) -> None:
        await trio.sleep(0.01)
        gone()

    async def main() -> bool:
        async def emit(output: Any) -> None:
            pass

        with trio.fail_after(TIMEOUT):
            return await forwarder.run(emit, watch=watch)

    assert trio.run(main) is False
    assert stream.state is ListenState.CANCELLED and app.server.open_listeners == 0


def test_every_server_driver_forwards_through_the_app() -> None:
    for name in ("serve/trio_h11/connection.py", "serve/asgi/app.py", "serve/stdio.py"):
        source = (ADAPTERS / name).read_text()
        assert ".forward_listen(" in source, name
        assert ".open_stream(" not in source and "def _forward" not in source, name
        assert "keepalive\")" not in source, name  # the SSE keepalive comment is the forwarder's
