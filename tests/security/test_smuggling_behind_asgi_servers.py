"""AsgiApp refuses a request framed both by ``Transfer-Encoding`` and by ``Content-Length``.

RFC 9112 sections 6.1 and 6.3: a server that receives both MUST close the connection after
responding. uvicorn with ``--http h11`` and hypercorn read such a body as chunked and keep the
connection open, so a request hidden after that body would be served (request smuggling, when a
proxy in front frames the body by its Content-Length). The engine refuses such a head in its
admission (``admit_target``: 400, JSON-RPC -32600, ``connection: close``), whatever the driver,
and the server then closes the connection.

Over real sockets: each server runs in a thread on 127.0.0.1 (a port the OS picks), started and
stopped here; the client is a raw socket, so that the smuggled bytes go in the same packet.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from _asgi_servers import serve_hypercorn, serve_uvicorn

from mcpwire import HttpPolicy
from mcpwire_adapters import App, AsgiApp, Context

TIMEOUT = 10.0
VERSION = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": {}}
INVALID_REQUEST = -32600


def make_app(served: threading.Event) -> App:
    app = App("asgi-framing-test", "1.0", http=HttpPolicy(max_body_bytes=4096))

    @app.tool(description="Echo the text back")
    async def echo(ctx: Context, arguments: dict[str, Any]) -> str:
        text = str(arguments.get("text", ""))
        if text == "hidden":
            served.set()
        return text

    return app


def call_echo(text: str) -> bytes:
    body = {
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": text}, "_meta": META},
    }
    return json.dumps(body).encode()


def head(extra: list[tuple[str, str]]) -> bytes:
    lines = [
        "POST /mcp HTTP/1.1",
        "host: 127.0.0.1",
        "content-type: application/json",
        "accept: application/json, text/event-stream",
        f"mcp-protocol-version: {VERSION}",
        "mcp-method: tools/call",
        "mcp-name: echo",
        *(f"{name}: {value}" for name, value in extra),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def plain_request(text: str) -> bytes:
    body = call_echo(text)
    return head([("content-length", str(len(body)))]) + body


def smuggling_packet(te_first: bool) -> bytes:
    """A chunked call whose Content-Length covers only part of what follows, then a second,
    complete request: read as chunked, the second request is a request of its own."""
    body = call_echo("outer")
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    framing = [("transfer-encoding", "chunked"), ("content-length", str(len(chunked)))]
    if not te_first:
        framing.reverse()
    return head(framing) + chunked + plain_request("hidden")


def exchange(port: int, data: bytes) -> bytes:
    """Send ``data`` in one write, then read until the server closes (or TIMEOUT passes: an
    AssertionError, the connection left open)."""
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as sock:
        sock.sendall(data)
        received = b""
        deadline = time.monotonic() + TIMEOUT
        while True:
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                raise AssertionError(f"the connection was left open; received {received!r}") from None
            except ConnectionResetError:
                return received
            if not chunk:
                return received
            received += chunk


def responses(data: bytes) -> list[tuple[int, dict[str, str], bytes]]:
    """The HTTP/1.1 responses in ``data``, each framed by its Content-Length."""
    out: list[tuple[int, dict[str, str], bytes]] = []
    while data:
        raw_head, sep, rest = data.partition(b"\r\n\r\n")
        assert sep, f"an incomplete response head: {data!r}"
        status_line, *header_lines = raw_head.decode("latin-1").split("\r\n")
        headers: dict[str, str] = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        out.append((int(status_line.split()[1]), headers, rest[:length]))
        data = rest[length:]
    return out


# -- servers (the same as tests/adapters/serve/test_asgi.py runs) -----------------------------------
SERVERS: dict[str, Callable[[Any], Any]] = {
    "uvicorn-h11": lambda asgi: serve_uvicorn(asgi, "h11"),
    "uvicorn-httptools": lambda asgi: serve_uvicorn(asgi, "httptools"),
    "hypercorn-asyncio": lambda asgi: serve_hypercorn(asgi, "asyncio"),
    # Not hypercorn's trio worker: a head refused before the body is read (on trio the ASGI app
    # checks the head first) races hypercorn's own
    # sends on the socket (trio.BusyResourceError inside hypercorn, now and then no answer at all).
}


class Served:
    def __init__(self, port: int, hidden: threading.Event) -> None:
        self.port = port
        self.hidden = hidden


@pytest.fixture(scope="module", params=list(SERVERS))
def served(request: pytest.FixtureRequest) -> Iterator[Served]:
    if request.param == "uvicorn-httptools":
        pytest.importorskip("httptools")
    hidden = threading.Event()
    with SERVERS[request.param](AsgiApp(make_app(hidden))) as port:
        yield Served(port, hidden)


@pytest.mark.parametrize("te_first", [True, False], ids=["te-then-cl", "cl-then-te"])
def test_transfer_encoding_with_content_length_is_refused_and_closed(served: Served, te_first: bool) -> None:
    served.hidden.clear()
    answers = responses(exchange(served.port, smuggling_packet(te_first)))
    assert len(answers) == 1, f"more than one answer on the connection: {answers}"
    status, headers, body = answers[0]
    assert status == 400
    assert "close" in headers.get("connection", "").lower()
    # uvicorn with httptools refuses such a head itself (plain-text 400), before the app
    if headers.get("content-type") == "application/json":
        assert json.loads(body)["error"]["code"] == INVALID_REQUEST
    assert not served.hidden.is_set(), "the request hidden after the body was served"


def test_the_app_answers_the_refusal_as_the_engine_refuses(served: Served) -> None:
    # Through the app (servers that pass such a head on): the engine's JSON-RPC -32600 shape.
    answers = responses(exchange(served.port, smuggling_packet(True)))
    status, headers, body = answers[0]
    if headers.get("content-type") != "application/json":
        pytest.skip("this server refuses the head itself, before the app")
    assert status == 400 and headers["connection"] == "close"
    reply = json.loads(body)
    assert reply["jsonrpc"] == "2.0" and reply["id"] is None and reply["error"]["code"] == INVALID_REQUEST


def test_a_plain_request_keeps_the_connection(served: Served) -> None:
    # The usual request on the same connection twice: both answered (nothing closes it).
    with socket.create_connection(("127.0.0.1", served.port), timeout=TIMEOUT) as sock:
        sock.sendall(plain_request("one") + plain_request("two"))
        received = b""
        while received.count(b"HTTP/1.1 200") < 2 or not received.endswith(b"}"):
            chunk = sock.recv(65536)
            assert chunk, f"closed after {received!r}"
            received += chunk
    texts = [json.loads(body)["result"]["content"][0]["text"] for _, _, body in responses(received)]
    assert texts == ["one", "two"]
