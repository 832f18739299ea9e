"""The trio/h11 server's fast path for a plain JSON answer (adapters/serve/trio_h11/plain.py): answers
written without h11 keep HTTP/1.1 right (pipelined requests answered in order, a
``Connection: close`` or HTTP/1.0 request still ends the connection), and a client that does
not read is still dropped after ``send_timeout`` (on the server's one timer). Each fast path is
held equal to the general rule it shortcuts: h11's framing and keep-alive rule, and trio's
``SocketStream`` for the socket reads and writes."""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import h11
import pytest
import trio
from _wire_helpers import responses
from mcpwire_adapters import App, Context, HttpServerConfig, serve_http
from mcpwire_adapters.serve.trio_h11.plain import head_facts, plain_answer, reason
from mcpwire_adapters.serve.trio_h11.reader import ConnectionReading

from mcpwire import HttpRequest, RemoteProtocolError, ResponseBody, ResponseHead, error_reply

VERSION = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": {}}
BIG = 4_000_000


def make_app() -> App:
    app = App("fast-path", "1.0")

    @app.tool(description="Echo the text back")
    async def echo(ctx: Context, arguments: dict[str, Any]) -> str:
        return str(arguments.get("text", ""))

    @app.tool(description="A large answer")
    async def big(ctx: Context, arguments: dict[str, Any]) -> str:
        return "x" * BIG

    return app


def request(name: str, text: str, request_id: int, *, version: str = "1.1", close: bool = False) -> bytes:
    params = {"name": name, "arguments": {"text": text}, "_meta": META}
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}).encode()
    head = [
        f"POST /mcp HTTP/{version}", "host: 127.0.0.1", "content-type: application/json",
        "accept: application/json, text/event-stream", f"mcp-protocol-version: {VERSION}",
        "mcp-method: tools/call", f"mcp-name: {name}", f"content-length: {len(body)}",
    ]
    if close:
        head.append("connection: close")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


async def read_all(stream: trio.SocketStream) -> bytes:
    chunks = []
    try:
        while chunk := await stream.receive_some(1 << 16):
            chunks.append(chunk)
    except trio.BrokenResourceError:
        pass  # reset: what arrived before it is what the server sent
    return b"".join(chunks)


def served(config: HttpServerConfig) -> Callable[[Callable[[tuple[str, int]], Awaitable[None]]], Callable[[], None]]:
    def decorate(test: Callable[[tuple[str, int]], Awaitable[None]]) -> Callable[[], None]:
        @functools.wraps(test)
        def wrapper() -> None:
            async def main() -> None:
                with trio.fail_after(15):
                    async with trio.open_nursery() as nursery:
                        address = await nursery.start(functools.partial(serve_http, make_app(), config=config))
                        await test(address)
                        nursery.cancel_scope.cancel()

            trio.run(main)

        wrapper.__dict__.pop("__wrapped__", None)  # pytest must not look for fixtures in test()
        return wrapper

    return decorate


@served(HttpServerConfig())
async def test_pipelined_plain_answers_come_in_order_and_close_is_honoured(address: tuple[str, int]) -> None:
    stream = await trio.open_tcp_stream(*address)
    # Three requests in one write (each answer's next cycle starts on the bytes already read),
    # then one in two pieces, then one asking to close.
    await stream.send_all(b"".join(request("echo", t, i) for i, t in enumerate("abc", 1)))
    last = request("echo", "d", 4)
    await stream.send_all(last[:20])
    await trio.sleep(0.05)
    await stream.send_all(last[20:] + request("echo", "e", 5, close=True))
    got = responses(await read_all(stream))  # the server closes after the fifth
    await stream.aclose()
    assert [r[2]["id"] for r in got] == [1, 2, 3, 4, 5]
    assert [r[2]["result"]["content"][0]["text"] for r in got] == ["a", "b", "c", "d", "e"]
    assert all(r[0] == "HTTP/1.1 200 OK" and r[1][b"content-type"] == b"application/json" for r in got)
    assert [r[1].get(b"connection") for r in got] == [None] * 4 + [b"close"]


@served(HttpServerConfig())
async def test_an_http_1_0_request_is_answered_and_the_connection_closed(address: tuple[str, int]) -> None:
    stream = await trio.open_tcp_stream(*address)
    await stream.send_all(request("echo", "old", 1, version="1.0"))
    got = responses(await read_all(stream))
    await stream.aclose()
    assert len(got) == 1 and got[0][2]["result"]["content"][0]["text"] == "old"
    assert got[0][1].get(b"connection") == b"close"


@served(HttpServerConfig(send_timeout=0.3))
async def test_a_client_that_does_not_read_is_dropped_after_the_send_timeout(address: tuple[str, int]) -> None:
    stream = await trio.open_tcp_stream(*address)
    count = 6  # 24 MB of answers: more than loopback's socket buffers hold
    await stream.send_all(b"".join(request("big", "", i) for i in range(1, count + 1)))
    await trio.sleep(1.5)  # not reading: the server's write blocks past send_timeout
    received = await read_all(stream)  # ends (EOF or reset) instead of bringing every answer
    await stream.aclose()
    assert 0 < len(received) < count * BIG


# -- each fast path and the general rule it shortcuts ---------------------------------------------------
def h11_framed(head: ResponseHead, body: ResponseBody) -> bytes:
    """What the connection's h11 writes for ``head`` and ``body`` (``_Connection._emit``'s events)."""
    conn = h11.Connection(h11.SERVER)
    conn.receive_data(b"POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n")
    assert isinstance(conn.next_event(), h11.Request) and isinstance(conn.next_event(), h11.EndOfMessage)
    events: list[h11.Event] = [h11.Response(status_code=head.status, headers=list(head.headers), reason=reason(head.status))]
    if body.data:
        events.append(h11.Data(data=body.data))
    events.append(h11.EndOfMessage())
    return b"".join(conn.send(event) or b"" for event in events)


def test_a_plain_answer_is_the_bytes_h11_frames() -> None:
    listed = make_app().server.receive_http(HttpRequest(
        method="POST", target="/mcp", body=json.dumps({
            "jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META},
        }).encode(), headers=(
            (b"host", b"x"), (b"content-type", b"application/json"),
            (b"accept", b"application/json, text/event-stream"), (b"mcp-protocol-version", VERSION.encode()),
            (b"mcp-method", b"tools/list"),
        ),
    ), now=time.time())
    assert isinstance(listed, tuple)
    answers = [listed] + [
        error_reply(RemoteProtocolError("refused", code=-32600, http_status=status)) for status in (400, 413, 599)
    ]
    for head, body in answers:
        assert isinstance(head, ResponseHead) and isinstance(body, ResponseBody)
        assert plain_answer(head, body) == h11_framed(head, body)


@pytest.mark.parametrize("version, connection", [
    (b"1.1", None), (b"1.1", b"close"), (b"1.1", b"Keep-Alive, Close"), (b"1.1", b"keep-alive"),
    (b"1.0", None), (b"1.0", b"keep-alive"),
])
def test_head_facts_keeps_a_connection_alive_as_h11_does(version: bytes, connection: bytes | None) -> None:
    headers = [(b"host", b"x"), (b"content-length", b"0")]
    if connection is not None:
        headers.append((b"connection", connection))
    conn = h11.Connection(h11.SERVER)
    conn.receive_data(b"POST /mcp HTTP/%s\r\n%s\r\n" % (version, b"".join(b"%s: %s\r\n" % h for h in headers)))
    assert isinstance(conn.next_event(), h11.Request) and isinstance(conn.next_event(), h11.EndOfMessage)
    conn.send(h11.Response(status_code=200, headers=[(b"content-length", b"0")]))
    conn.send(h11.EndOfMessage())
    _, keep_alive = head_facts(version, headers)
    assert keep_alive == (conn.our_state is h11.DONE)


@pytest.mark.parametrize("test", [
    test_pipelined_plain_answers_come_in_order_and_close_is_honoured,
    test_an_http_1_0_request_is_answered_and_the_connection_closed,
    test_a_client_that_does_not_read_is_dropped_after_the_send_timeout,
], ids=["pipelined", "http-1.0", "client-not-reading"])
def test_the_fast_path_tests_pass_through_trio_streams(test: Callable[[], None], monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test above again, with every read and write of a connection through trio's
    ``SocketStream`` (as on Windows) instead of ``os.read``/``os.write`` on its socket."""
    setup = ConnectionReading.__init__

    def through_trio(self: ConnectionReading, *args: Any) -> None:
        setup(self, *args)
        self._socket = None

    monkeypatch.setattr(ConnectionReading, "__init__", through_trio)
    test()
