"""The anyio/h11 HTTP client and the stdio client against mcpwire's own servers, each test
on trio and on asyncio (``tests/_backends.py``).

HTTP: ``serve_http`` on 127.0.0.1 port 0 in a thread of its own; raw TCP servers on anyio in
the test's own loop. stdio: the client starts ``tests/stdio_app.py`` (written for the stdio
server tests) as a subprocess. Every test runs under ``anyio.fail_after``.
"""

from __future__ import annotations

import socket
import ssl
import sys
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest
from _apps import add_echo_and_progress
from mcpwire_adapters import App, Context, NeedInput
from mcpwire_adapters.client.http import HttpClient, ServerError, TransportError
from mcpwire_adapters.client.stdio import StdioClient

from mcpwire.types import CallToolResult, Implementation
from mcpwire import Keyring
from mcpwire.client.engine import Client
from mcpwire.client.events import Progress
from mcpwire.types import ElicitRequest, ElicitResult, InputRequest, TextContent

from _backends import both, run, served

CAPS: dict[str, Any] = {"elicitation": {"form": {}}}


def make_app() -> App:
    app = App("http-client-test", "1.0", keyring=Keyring.single(b"s" * 32))

    add_echo_and_progress(app)

    @app.tool(description="Ask for a name, then greet")
    async def greet(ctx: Context, arguments: dict[str, Any]) -> Any:
        answer = ctx.input_responses.get("name")
        if answer is None:
            return NeedInput(requests={"name": {"method": "elicitation/create", "params": {
                "message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}}},
                state={"round": 1})
        return f"Hello, {answer['content']['name']} ({ctx.state['round']})"

    return app


def client() -> Client:
    return Client(Implementation(name="t", version="1"), capabilities=CAPS)


def on_input(requests: dict[str, InputRequest]) -> dict[str, Any]:
    assert isinstance(requests["name"], ElicitRequest)
    return {"name": ElicitResult(action="accept", content={"name": "Ada"})}


def text(result: Any) -> str:
    assert isinstance(result.value, CallToolResult)
    block = result.value.content[0]
    assert isinstance(block, TextContent)
    return block.text


@both
async def test_http_client_end_to_end() -> None:
    async with served(make_app()) as server:
        async with HttpClient(server.url, client()) as c:
            discovered = await c.discover()
            assert discovered.data["supportedVersions"] == ["2026-07-28"]
            assert sorted(t.name for t in await c.list_tools()) == ["echo", "greet", "progress"]
            assert text(await c.call_tool("echo", {"text": "hi"})) == "hi"
            seen: list[Progress] = []
            assert text(await c.call_tool("progress", {}, on_progress=seen.append)) == "done"
            assert [p.progress for p in seen] == [1, 2, 3]
            assert text(await c.call_tool("greet", {}, on_input=on_input)) == "Hello, Ada (1)"
            with pytest.raises(ServerError) as info:
                await c.call_tool("greet", {})  # input required but no handler
            assert info.value.code == -32603
            with pytest.raises(ServerError) as info:
                await c.call_tool("missing", {})
            assert info.value.code == -32602
            assert c.connections_opened == 1  # keep-alive: one connection for every request


@pytest.mark.parametrize("url", ["ftp://127.0.0.1/mcp", "127.0.0.1:8000/mcp", "http:///mcp"])
def test_http_client_needs_an_http_url(url: str) -> None:
    with pytest.raises(ValueError, match=r"not an http\(s\) URL"):
        HttpClient(url, client())


@both
async def test_http_client_connect_failure_and_read_timeout() -> None:
    with socket.socket() as held:  # bound, never listening: refused, and no other process can take the port
        held.bind(("127.0.0.1", 0))
        port = held.getsockname()[1]
        with pytest.raises(TransportError, match="cannot connect"):
            async with HttpClient(f"http://127.0.0.1:{port}/mcp", client(), connect_timeout=2) as c:
                await c.discover()

    async def silent(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            await anyio.sleep(10)

    async with anyio.create_task_group() as tasks:
        port = await tcp_server(tasks, silent)
        with pytest.raises(TransportError, match="no data"):
            async with HttpClient(f"http://127.0.0.1:{port}/mcp", client(), read_timeout=0.3) as c:
                await c.discover()
        tasks.cancel_scope.cancel()


@both
async def test_http_client_response_size_limit() -> None:
    async with served(make_app()) as server:
        async with HttpClient(server.url, client(), max_response_bytes=200) as c:
            with pytest.raises(TransportError, match="exceeds"):
                await c.call_tool("echo", {"text": "x" * 500})


async def tcp_server(tasks: anyio.abc.TaskGroup, handle: Any) -> int:
    """Serve TCP on 127.0.0.1 (a free port) with ``handle`` in ``tasks``; return the port."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")

    async def serve() -> None:
        async with listener:
            await listener.serve(handle)

    tasks.start_soon(serve)
    return int(listener.extra(anyio.abc.SocketAttribute.local_port))


async def raw_server(tasks: anyio.abc.TaskGroup, answer: bytes | None) -> tuple[int, list[int]]:
    """A TCP server on 127.0.0.1 that reads one request head per connection, writes ``answer``
    (None: nothing) and closes. Returns its port and a list that counts its connections."""
    accepted: list[int] = []

    async def handle(stream: anyio.abc.SocketStream) -> None:
        accepted.append(1)
        head = b""
        async with stream:
            while b"\r\n\r\n" not in head:
                try:
                    head += await stream.receive(65536)
                except anyio.EndOfStream:
                    break
            if answer is not None:
                await stream.send(answer)

    return await tcp_server(tasks, handle), accepted


@both
async def test_http_client_does_not_follow_redirects() -> None:
    for status in (301, 302, 307, 308):
        redirect = b"HTTP/1.1 %d Moved\r\nLocation: http://127.0.0.1:1/elsewhere\r\nContent-Length: 0\r\n\r\n" % status
        async with anyio.create_task_group() as tasks:
            port, _ = await raw_server(tasks, redirect)
            async with HttpClient(f"http://127.0.0.1:{port}/mcp", client()) as c:
                with pytest.raises(TransportError, match=rf"redirects \(HTTP {status}\); not followed"):
                    await c.discover()
            tasks.cancel_scope.cancel()


@both
async def test_http_client_does_not_retry_a_fresh_connection_closed_without_an_answer() -> None:
    async with anyio.create_task_group() as tasks:
        port, accepted = await raw_server(tasks, None)
        async with HttpClient(f"http://127.0.0.1:{port}/mcp", client()) as c:
            with pytest.raises(TransportError, match="closed the connection without a response"):
                await c.discover()
            assert c.connections_opened == 1 and len(accepted) == 1  # only a reused connection is retried
        tasks.cancel_scope.cancel()


@both
async def test_http_client_retries_once_when_a_kept_alive_connection_went_stale() -> None:
    from mcpwire_adapters import HttpServerConfig

    async with served(make_app(), HttpServerConfig(keepalive_idle_timeout=0.05)) as server:
        async with HttpClient(server.url, client()) as c:
            assert text(await c.call_tool("echo", {"text": "one"})) == "one"
            await anyio.sleep(1.0)  # the server closes the idle kept-alive connection meanwhile (20x its timeout)
            assert text(await c.call_tool("echo", {"text": "two"})) == "two"
            assert c.connections_opened == 2


STDIO_APP = Path(__file__).resolve().parents[2] / "stdio_app.py"


@pytest.mark.skipif(not STDIO_APP.exists(), reason="tests/stdio_app.py is not there")
@both
async def test_stdio_client_concurrent_requests() -> None:
    async with StdioClient([sys.executable, str(STDIO_APP)], client()) as c:
        await c.discover()
        names = {t.name for t in await c.list_tools()}
        assert {"echo", "wait"} <= names
        results: dict[str, str] = {}

        async def call(key: str, name: str, args: dict[str, Any]) -> None:
            results[key] = text(await c.call_tool(name, args))

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(call, "slow", "wait", {"seconds": 0.3})
            tasks.start_soon(call, "fast", "echo", {"text": "quick"})
        assert results == {"slow": "waited 0.3", "fast": "quick"}
        with anyio.move_on_after(0.2):
            await c.call_tool("wait", {"seconds": 5})  # cancelled: writes notifications/cancelled
        assert text(await c.call_tool("echo", {"text": "still alive"})) == "still alive"
    assert c.returncode == 0
    # Closed: asking more is a TransportError naming why, not a write to a dead pipe.
    with pytest.raises(TransportError, match="the server process is not running"):
        await c.call_tool("echo", {"text": "too late"})
    with pytest.raises(TransportError, match="the server process is not running"):
        async with c.listen({"toolsListChanged": True}):
            pass  # pragma: no cover


# -- https --------------------------------------------------------------------------------------------


def self_signed(folder: Path) -> tuple[Path, Path, str]:
    """A certificate for 127.0.0.1, signed by its own key: (cert file, key file, cert PEM)."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    pem = cert.public_bytes(serialization.Encoding.PEM).decode()
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_text(pem)
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_file, key_file, pem


async def tls_front(tasks: anyio.abc.TaskGroup, context: ssl.SSLContext, upstream_port: int) -> int:
    """A TLS-terminating relay on 127.0.0.1 to ``upstream_port`` (our plain-HTTP server); its port."""
    from anyio.streams.tls import TLSListener

    async def pump(source: anyio.abc.ByteStream, sink: anyio.abc.ByteStream, done: anyio.CancelScope) -> None:
        try:
            async for chunk in source:
                await sink.send(chunk)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
        done.cancel()  # either side ended: the relay ends

    async def relay(client: anyio.abc.ByteStream) -> None:
        async with client, await anyio.connect_tcp("127.0.0.1", upstream_port) as upstream:
            async with anyio.create_task_group() as both_ways:
                both_ways.start_soon(pump, client, upstream, both_ways.cancel_scope)
                both_ways.start_soon(pump, upstream, client, both_ways.cancel_scope)

    listener = TLSListener(await anyio.create_tcp_listener(local_host="127.0.0.1"), context, standard_compatible=False)

    async def serve() -> None:
        async with listener:
            await listener.serve(relay)

    tasks.start_soon(serve)
    return int(listener.listener.extra(anyio.abc.SocketAttribute.local_port))


def test_https_through_anyio_tls_and_a_certificate_checked(backend: str, tmp_path: Path) -> None:
    cert_file, key_file, pem = self_signed(tmp_path)
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(cert_file, key_file)
    trusted = ssl.create_default_context(cadata=pem)

    async def main() -> None:
        async with served(make_app()) as server, anyio.create_task_group() as tasks:
            port = await tls_front(tasks, server_context, server.port)
            url = f"https://127.0.0.1:{port}/mcp"
            async with HttpClient(url, client(), ssl_context=trusted) as c:
                assert text(await c.call_tool("echo", {"text": "over tls"})) == "over tls"
                assert text(await c.call_tool("greet", {}, on_input=on_input)) == "Hello, Ada (1)"
                assert c.connections_opened == 1  # kept alive across TLS too
            # The default context does not trust a self-signed certificate: no connection.
            async with HttpClient(url, client()) as c:
                with pytest.raises(TransportError, match="cannot connect"):
                    await c.discover()
            # https to a port that speaks plain HTTP: the handshake fails, a TransportError too.
            async with HttpClient(f"https://127.0.0.1:{server.port}/mcp", client(), ssl_context=trusted) as c:
                with pytest.raises(TransportError, match="cannot connect"):
                    await c.discover()
            tasks.cancel_scope.cancel()

    run(main, backend)


def test_cancelling_a_call_closes_its_connection_and_the_server_stops_it(backend: str) -> None:
    """HTTP cancels by disconnecting: the awaiting task cancelled (anyio's scope on either loop,
    and asyncio's own ``asyncio.timeout`` there) closes the call's connection, the server's
    handler is cancelled, and the next call opens a fresh connection."""
    import threading

    import trio

    app = make_app()
    stopped: list[threading.Event] = []

    @app.tool(description="Hang until cancelled")
    async def hang(ctx: Context, arguments: dict[str, Any]) -> str:
        stopped.append(threading.Event())
        try:
            await trio.sleep(30)  # the server's trio loop
        except trio.Cancelled:
            stopped[-1].set()
            raise
        return "never"

    async def main() -> None:
        async with served(app) as server, HttpClient(server.url, client()) as c:
            assert text(await c.call_tool("echo", {"text": "warm"})) == "warm"
            with anyio.move_on_after(0.3) as scope:
                await c.call_tool("hang", {})
            assert scope.cancelled_caught
            if backend == "asyncio":
                import asyncio

                with pytest.raises(TimeoutError):
                    async with asyncio.timeout(0.3):
                        await c.call_tool("hang", {})
            for event in stopped:
                assert await anyio.to_thread.run_sync(event.wait, 10), "the server's handler was not cancelled"
            assert len(stopped) == (2 if backend == "asyncio" else 1)
            assert text(await c.call_tool("echo", {"text": "after"})) == "after"
            assert c.connections_opened == 1 + len(stopped)  # each cancelled call's connection was closed

    run(main, backend)
