"""HTTP hygiene of the trio/h11 server, over raw sockets on 127.0.0.1: message framing that
two parsers could read differently (request smuggling, RFC 9112 sections 6.1 and 6.3) is
refused with 400 and the connection closed, so that nothing the client hid after the first
body is ever served; and an Origin that only looks like an allowed one is refused with 403.

Each test starts the server on port 0 and stops it by cancellation, under a hard deadline.
The app's one tool records every call it runs: a smuggled request that was served shows there
even when its answer would be lost.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import trio
from _wire_helpers import responses
from mcpwire_adapters import App, Context, HttpServerConfig, serve_http

from mcpwire import HttpPolicy

VERSION = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": {}}
QUIET = 1.5  # seconds without a byte after which a connection the server kept open is taken as open

Address = tuple[str, int]


class Served:
    """The server's address and the texts its ``echo`` tool was called with."""

    def __init__(self, address: Address, calls: list[str]) -> None:
        self.address = address
        self.calls = calls


def make_app(calls: list[str], http: HttpPolicy) -> App:
    app = App("hygiene", "1.0", http=http)

    @app.tool(description="Echo the text back")
    async def echo(ctx: Context, arguments: dict[str, Any]) -> str:
        text = str(arguments.get("text", ""))
        calls.append(text)
        return text

    return app


DEFAULT_POLICY = HttpPolicy()


def served(http: HttpPolicy = DEFAULT_POLICY) -> Callable[[Callable[[Served], Awaitable[None]]], Callable[[], None]]:
    def decorate(test: Callable[[Served], Awaitable[None]]) -> Callable[[], None]:
        @functools.wraps(test)
        def wrapper() -> None:
            async def main() -> None:
                with trio.fail_after(20):
                    calls: list[str] = []
                    async with trio.open_nursery() as nursery:
                        address = await nursery.start(functools.partial(
                            serve_http, make_app(calls, http), "127.0.0.1", 0, config=HttpServerConfig()))
                        await test(Served(address, calls))
                        nursery.cancel_scope.cancel()

            trio.run(main)

        wrapper.__dict__.pop("__wrapped__", None)  # pytest must not look for fixtures in test()
        return wrapper

    return decorate


def call_body(text: str, request_id: int | str) -> bytes:
    params = {"name": "echo", "arguments": {"text": text}, "_meta": META}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}).encode()


def head(*extra: str, version: str = "1.1", origin: str | None = None, host: str | None = "127.0.0.1") -> bytes:
    lines = [
        f"POST /mcp HTTP/{version}", *([] if host is None else [f"host: {host}"]), "content-type: application/json",
        "accept: application/json, text/event-stream", f"mcp-protocol-version: {VERSION}",
        "mcp-method: tools/call", "mcp-name: echo", *extra,
    ]
    if origin is not None:
        lines.append(f"origin: {origin}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def plain(
    text: str, request_id: int | str, *extra: str, origin: str | None = None, host: str | None = "127.0.0.1"
) -> bytes:
    """A well-framed call (Content-Length only)."""
    body = call_body(text, request_id)
    return head(f"content-length: {len(body)}", *extra, origin=origin, host=host) + body


def chunked(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n0\r\n\r\n" % (len(data), data) if data else b"0\r\n\r\n"


HIDDEN = plain("smuggled", "hidden")


async def exchange(address: Address, data: bytes) -> tuple[list[tuple[int, dict[bytes, bytes], Any]], bool]:
    """Send ``data``, then read until the server closes or stays quiet for ``QUIET`` seconds:
    the responses (status, headers, JSON body) and whether the server closed the connection."""
    stream = await trio.open_tcp_stream(*address)
    raw = b""
    closed = False
    async with stream:
        await stream.send_all(data)
        while True:
            with trio.move_on_after(QUIET):
                try:
                    chunk = await stream.receive_some(65536)
                except trio.BrokenResourceError:
                    chunk = b""
                if not chunk:
                    closed = True
                    break
                raw += chunk
                continue
            break  # quiet: the connection was kept open
    return parse(raw), closed


def parse(raw: bytes) -> list[tuple[int, dict[bytes, bytes], Any]]:
    """Content-Length framed responses, one after the other: (status, headers, JSON or None)."""
    return [(int(line.split(" ")[1]), headers, body) for line, headers, body in responses(raw)]


def assert_refused_and_closed(got: list[tuple[int, dict[bytes, bytes], Any]], closed: bool, status: int,
                              served: Served) -> None:
    summary = [(s, h.get(b"connection"), b["error"]["code"] if b and "error" in b else b) for s, h, b in got]
    assert (summary, closed, served.calls) == ([(status, b"close", -32600)], True, [])


# -- 1. framing: Content-Length with Transfer-Encoding --------------------------------------------------
def _both(order: str, te: str, length: int) -> list[str]:
    pair = [f"transfer-encoding: {te}", f"content-length: {length}"]
    return pair if order == "te-first" else pair[::-1]


@pytest.mark.parametrize("order", ["te-first", "cl-first"])
@pytest.mark.parametrize("te", ["chunked", "Chunked"])
def test_content_length_and_chunked_together_are_refused_and_nothing_hidden_is_served(order: str, te: str) -> None:
    """A proxy reading the Content-Length sees one request (its body ends after HIDDEN); a
    server reading the chunks sees two. Ours must answer 400, close, and serve neither."""
    @served()
    async def check(server: Served) -> None:
        inner = chunked(call_body("outer", 1)) + HIDDEN
        got, closed = await exchange(server.address, head(*_both(order, te, len(inner))) + inner)
        assert_refused_and_closed(got, closed, 400, server)

    check()


@served()
async def test_chunked_with_a_shorter_content_length_is_refused(server: Served) -> None:
    """The other way round: a proxy reading the Content-Length stops early, and the rest of
    the chunked body is to it a second request."""
    body = chunked(call_body("outer", 1))
    got, closed = await exchange(server.address, head(*_both("cl-first", "chunked", 5)) + body + HIDDEN)
    assert_refused_and_closed(got, closed, 400, server)


@served()
async def test_an_empty_chunked_body_with_a_longer_content_length_is_refused(server: Served) -> None:
    """An empty chunked body, a Content-Length that covers HIDDEN and more: the shape that was
    answered 400 while HIDDEN was still served on the connection kept open."""
    body = chunked(b"") + HIDDEN
    got, closed = await exchange(server.address, head(*_both("te-first", "chunked", len(body) + 40)) + body)
    assert_refused_and_closed(got, closed, 400, server)


@served()
async def test_smuggling_after_a_plain_answer_on_a_kept_alive_connection(server: Served) -> None:
    """A good request answered by the fast plain path, then, pipelined on the same connection,
    one with both framings: the first is answered and kept alive, the second refused and the
    connection closed, HIDDEN never served."""
    inner = chunked(call_body("second", 2)) + HIDDEN
    data = plain("first", 1) + head(*_both("te-first", "chunked", len(inner))) + inner
    got, closed = await exchange(server.address, data)
    assert [(s, h.get(b"connection")) for s, h, _ in got] == [(200, None), (400, b"close")]
    assert got[0][2]["result"]["content"][0]["text"] == "first"
    assert closed and server.calls == ["first"]


# -- 1. framing: Transfer-Encoding other than exactly chunked, Content-Length that disagrees -----------
@pytest.mark.parametrize("te", [
    "gzip", "identity", "chunked, gzip", "gzip, chunked", "chunked, chunked", "chunked;q=1", "xchunked",
])
def test_a_transfer_encoding_other_than_chunked_is_400_and_closed(te: str) -> None:
    @served()
    async def check(server: Served) -> None:
        data = head(f"transfer-encoding: {te}") + chunked(call_body("outer", 1)) + HIDDEN
        got, closed = await exchange(server.address, data)
        assert_refused_and_closed(got, closed, 400, server)

    check()


@served()
async def test_two_transfer_encoding_fields_are_400_and_closed(server: Served) -> None:
    data = head("transfer-encoding: chunked", "transfer-encoding: chunked") + chunked(call_body("outer", 1)) + HIDDEN
    got, closed = await exchange(server.address, data)
    assert_refused_and_closed(got, closed, 400, server)


@served()
async def test_transfer_encoding_on_http_1_0_is_400_and_closed(server: Served) -> None:
    """RFC 9112 6.1: an HTTP/1.0 message with Transfer-Encoding has faulty framing."""
    data = head("transfer-encoding: chunked", version="1.0") + chunked(call_body("outer", 1)) + HIDDEN
    got, closed = await exchange(server.address, data)
    assert_refused_and_closed(got, closed, 400, server)


@pytest.mark.parametrize("lengths", [("5", "6"), ("5, 6",), ("5,",), ("-5",), ("+5",), ("5 5",), ("0x5",)])
def test_conflicting_or_malformed_content_lengths_are_400_and_closed(lengths: tuple[str, ...]) -> None:
    @served()
    async def check(server: Served) -> None:
        data = head(*(f"content-length: {value}" for value in lengths)) + b"12345" + HIDDEN
        got, closed = await exchange(server.address, data)
        assert_refused_and_closed(got, closed, 400, server)

    check()


@pytest.mark.parametrize("lengths", [("{n}", "{n}"), ("{n}, {n}",)])
def test_identical_repeated_content_lengths_frame_one_body(lengths: tuple[str, ...]) -> None:
    """RFC 9110 8.6 lets a recipient take identical repeated values as one (h11 does so before
    the driver sees the head): every reader frames the same body, so nothing can hide. The
    request is served, and what follows it is an ordinary pipelined request."""
    @served()
    async def check(server: Served) -> None:
        body = call_body("one", 1)
        data = head(*(f"content-length: {value.format(n=len(body))}" for value in lengths)) + body
        got, closed = await exchange(server.address, data + plain("two", 2, "connection: close"))
        assert [(s, b["id"]) for s, _, b in got] == [(200, 1), (200, 2)]
        assert closed and server.calls == ["one", "two"]

    check()


# -- 2. Origin over the socket ----------------------------------------------------------------------------
@pytest.mark.parametrize("origin", [
    "http://127.0.0.1:{port}.evil.example", "http://localhost.evil.example", "http://127.0.0.1.evil.example:{port}",
    "http://127.0.0.1:{port}@evil.example", "http://127.0.0.1:{port}/", "http://127.0.0.1:", "http://127.0.0.1:+80",
    "http://[::1]evil", "http://localhost:80:80", "http://local host", "null", "http://",
])
def test_a_malformed_or_look_alike_origin_is_403(origin: str) -> None:
    @served()
    async def check(server: Served) -> None:
        value = origin.format(port=server.address[1])
        got, _closed = await exchange(server.address, plain("x", 1, "connection: close", origin=value))
        assert [(s, b["error"]["code"]) for s, _, b in got] == [(403, -32600)], value
        assert server.calls == []

    check()


@pytest.mark.parametrize("origin", [
    "http://127.0.0.1:{port}", "http://localhost", "HTTP://LocalHost:{port}", "https://[::1]:{port}",
])
def test_a_loopback_origin_is_admitted_by_default(origin: str) -> None:
    @served()
    async def check(server: Served) -> None:
        value = origin.format(port=server.address[1])
        got, _closed = await exchange(server.address, plain("x", 1, "connection: close", origin=value))
        assert [s for s, _, _ in got] == [200], value

    check()


@served(HttpPolicy(allowed_origins=frozenset({"https://app.example.com"})))
async def test_a_listed_origin_is_compared_exactly_after_parsing(server: Served) -> None:
    for value, status in (
        ("https://app.example.com", 200), ("https://APP.example.com:443", 200), ("https://app.example.com.evil.example", 403),
        ("https://app.example.com:8443", 403), ("http://app.example.com", 403), ("null", 403),
        ("https://app.example.com/", 403),
    ):
        got, _closed = await exchange(server.address, plain("x", 1, "connection: close", origin=value))
        assert [s for s, _, _ in got] == [status], value


# -- 3. Host over the socket (the DNS-rebinding check for loopback servers) ---------------------------------
HOSTS = HttpPolicy(allowed_hosts=frozenset({"127.0.0.1", "localhost"}))


@served(HOSTS)
async def test_only_a_listed_host_is_served(server: Served) -> None:
    port = server.address[1]
    for host, extra, status in (
        ("127.0.0.1", (), 200), (f"127.0.0.1:{port}", (), 200), (f"LocalHost:{port}", (), 200),
        ("evil.example", (), 403), (f"127.0.0.1.evil.example:{port}", (), 403), (f"127.0.0.1:{port}@evil.example", (), 403),
        (f"evil.example:{port}", (), 403), ("127.0.0.1:80:80", (), 403), ("127.0.0.1:", (), 403), ("[::1]", (), 403),
        ("127.0.0.1", ("host: evil.example",), 400), (None, (), 400),
    ):
        got, _closed = await exchange(server.address, plain("x", 1, *extra, "connection: close", host=host))
        assert [s for s, _, _ in got] == [status], (host, extra)
    assert server.calls == ["x"] * 3
