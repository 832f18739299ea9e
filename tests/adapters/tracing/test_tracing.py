"""OpenTelemetry tracing (``mcpwire_adapters.tracing``), spans recorded by the SDK's in-memory
exporter (below): a trace started by our client goes on in our server, the server's span the
child of the client's, over HTTP (the trio/h11 driver on 127.0.0.1) and over stdio (a child
process that writes its spans to a file); a trace started by the official Python SDK's client
(which puts ``traceparent`` in ``_meta`` itself) goes on in our server; each span carries the
attributes of the semantic conventions for MCP, errors included."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
import trio
from _asgi_servers import serve_uvicorn
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

import mcpwire
from mcpwire import Client, Keyring
from mcpwire.types import Implementation
from mcpwire_adapters import App, Context, ToolError, asgi_app, serve_http
from mcpwire_adapters.app import CallNext
from mcpwire_adapters.client.http import HttpClient
from mcpwire_adapters.client.stdio import StdioClient
from mcpwire_adapters.errors import ServerError
from mcpwire_adapters.tracing import ClientTracing, ServerTracing, trace_client, trace_server

# -- the spans: one SDK tracer provider for the process (the official SDK's client takes the global
# one, which can be set once), whose in-memory exporter records only while a test here asks for
# ``spans`` (other tests that run the SDK's client record nothing) ---------------------------------
class Recording(SimpleSpanProcessor):
    """Exports finished spans while ``on`` is true."""

    on = False

    def on_end(self, span: ReadableSpan) -> None:
        if self.on:
            super().on_end(span)


EXPORTER = InMemorySpanExporter()
RECORDING = Recording(EXPORTER)
_PROVIDER: list[TracerProvider] = []


def provider() -> TracerProvider:
    """The process's SDK tracer provider, recording into :data:`EXPORTER`: set as the global one,
    unless an SDK provider was set before (then that one records into :data:`EXPORTER` too)."""
    if not _PROVIDER:
        current = trace.get_tracer_provider()
        if not isinstance(current, TracerProvider):
            current = TracerProvider()
            trace.set_tracer_provider(current)
        current.add_span_processor(RECORDING)
        _PROVIDER.append(current)
    return _PROVIDER[0]


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """The exporter, empty, recording during the test."""
    provider()
    EXPORTER.clear()
    RECORDING.on = True
    try:
        yield EXPORTER
    finally:
        RECORDING.on = False
        EXPORTER.clear()


TIMEOUT = 20.0
STDIO_APP = Path(__file__).resolve().parent / "traced_stdio_app.py"
SERVER_SCOPE = "mcpwire_adapters.tracing"


def make_app() -> App:
    app = App("traced", "1.0", keyring=Keyring.single(b"t" * 32))
    trace_server(app, tracer_provider=provider())

    async def gate(ctx: Context, call_next: CallNext) -> Any:
        if getattr(ctx.event, "name", None) == "forbidden":
            raise mcpwire.ProtocolError("Unknown tool: forbidden", code=mcpwire.ErrorCode.INVALID_PARAMS)
        return await call_next(ctx)

    app.add_middleware(gate, methods={"tools/call"})

    @app.tool(description="Echo the text")
    async def echo(text: str = "") -> str:
        return text

    @app.tool(description="Refused by a middleware")
    async def forbidden() -> str:
        return "never"

    @app.tool(description="A tool execution error")
    async def grumpy() -> str:
        raise ToolError("not today")

    @app.resource("test://note", description="a note")
    async def note() -> str:
        return "a note"

    return app


def by_name(spans: InMemorySpanExporter, name: str, kind: SpanKind) -> ReadableSpan:
    found = [s for s in spans.get_finished_spans() if s.name == name and s.kind is kind]
    assert len(found) == 1, [(s.name, s.kind) for s in spans.get_finished_spans()]
    return found[0]


def parent_of(child: ReadableSpan, parent: ReadableSpan) -> bool:
    assert child.parent is not None and child.context is not None and parent.context is not None
    return bool(child.parent.span_id == parent.context.span_id and child.context.trace_id == parent.context.trace_id)


async def serving_http(app: App, body: Any) -> None:
    """``await body(url)`` with ``app`` served by the trio/h11 driver on 127.0.0.1."""
    with trio.fail_after(TIMEOUT):
        async with trio.open_nursery() as nursery:
            host, port = await nursery.start(functools.partial(serve_http, app, "127.0.0.1", 0))
            try:
                await body(f"http://{host}:{port}/mcp")
            finally:
                nursery.cancel_scope.cancel()


# -- our client, our server, over HTTP -----------------------------------------------------------
def test_our_clients_trace_goes_on_in_our_server_over_http(spans: InMemorySpanExporter) -> None:
    async def body(url: str) -> None:
        async with HttpClient(url) as client:
            trace_client(client, tracer_provider=provider())
            assert (await client.call_tool("echo", {"text": "hi"})).value.content[0].text == "hi"
            await client.read_resource("test://note")

    trio.run(serving_http, make_app(), body)
    client_span = by_name(spans, "tools/call echo", SpanKind.CLIENT)
    server_span = by_name(spans, "tools/call echo", SpanKind.SERVER)
    assert parent_of(server_span, client_span)
    assert server_span.instrumentation_scope is not None and server_span.instrumentation_scope.name == SERVER_SCOPE
    port = client_span.attributes["server.port"] if client_span.attributes else None
    assert dict(client_span.attributes or {}) == {
        "mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "echo",
        "jsonrpc.request.id": "1", "mcp.protocol.version": "2026-07-28", "network.transport": "tcp",
        "network.protocol.name": "http", "server.address": "127.0.0.1", "server.port": port}
    assert dict(server_span.attributes or {}) == {
        "mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "echo",
        "jsonrpc.request.id": "1", "mcp.protocol.version": "2026-07-28", "network.transport": "tcp",
        "network.protocol.name": "http"}
    assert client_span.status.status_code is StatusCode.UNSET and server_span.status.status_code is StatusCode.UNSET
    read_client = by_name(spans, "resources/read", SpanKind.CLIENT)
    read_server = by_name(spans, "resources/read", SpanKind.SERVER)
    assert parent_of(read_server, read_client)
    assert (read_server.attributes or {})["mcp.resource.uri"] == "test://note"
    assert (read_client.attributes or {})["mcp.resource.uri"] == "test://note"


def test_errors_are_recorded_on_both_sides(spans: InMemorySpanExporter) -> None:
    async def body(url: str) -> None:
        async with HttpClient(url) as client:
            trace_client(client, tracer_provider=provider())
            with pytest.raises(ServerError):
                await client.call_tool("forbidden")
            result = await client.call_tool("grumpy")
            assert result.value.is_error is True

    trio.run(serving_http, make_app(), body)
    for kind in (SpanKind.CLIENT, SpanKind.SERVER):
        refused = by_name(spans, "tools/call forbidden", kind)
        attributes = refused.attributes or {}
        assert (attributes["error.type"], attributes["rpc.response.status_code"]) == ("-32602", "-32602")
        assert refused.status.status_code is StatusCode.ERROR and refused.status.description == "Unknown tool: forbidden"
        failed = by_name(spans, "tools/call grumpy", kind)
        assert (failed.attributes or {})["error.type"] == "tool_error" and failed.status.status_code is StatusCode.ERROR
        assert "rpc.response.status_code" not in (failed.attributes or {})


def test_an_initialize_era_session_is_named_on_both_sides(spans: InMemorySpanExporter) -> None:
    app = App("traced-era", "1.0", keyring=Keyring.single(b"t" * 32))
    trace_server(app, tracer_provider=provider())

    @app.prompt(description="a prompt")
    async def hello(name: str) -> str:
        return f"hello {name}"

    async def body(url: str) -> None:
        engine = Client(Implementation(name="c", version="1"), protocol_version="2025-11-25")
        async with HttpClient(url, engine) as client:
            trace_client(client, tracer_provider=provider())
            await client.get_prompt("hello", {"name": "Ann"})
            assert client.client.session_id is not None

    trio.run(serving_http, app, body)
    client_span = by_name(spans, "prompts/get hello", SpanKind.CLIENT)
    server_span = by_name(spans, "prompts/get hello", SpanKind.SERVER)
    assert parent_of(server_span, client_span)
    for span in (client_span, server_span):
        attributes = span.attributes or {}
        assert attributes["gen_ai.prompt.name"] == "hello" and attributes["mcp.protocol.version"] == "2025-11-25"
        assert isinstance(attributes["mcp.session.id"], str) and len(attributes["mcp.session.id"]) >= 16
    assert (client_span.attributes or {})["mcp.session.id"] == (server_span.attributes or {})["mcp.session.id"]
    initialize = by_name(spans, "initialize", SpanKind.CLIENT)  # the engine answers it: no server span
    assert "mcp.session.id" not in (initialize.attributes or {})


# -- our client, our server, over stdio ------------------------------------------------------------
def test_our_clients_trace_goes_on_in_our_server_over_stdio(spans: InMemorySpanExporter, tmp_path: Path) -> None:
    written = tmp_path / "spans.jsonl"

    async def main() -> None:
        with anyio.fail_after(TIMEOUT):
            async with StdioClient([sys.executable, str(STDIO_APP), str(written)]) as client:
                trace_client(client, tracer_provider=provider())
                assert (await client.call_tool("echo", {"text": "piped"})).value.content[0].text == "piped"

    anyio.run(main)
    client_span = by_name(spans, "tools/call echo", SpanKind.CLIENT)
    assert (client_span.attributes or {})["network.transport"] == "pipe"
    server_spans = [json.loads(line) for line in written.read_text().splitlines()]
    assert [(s["name"], s["kind"]) for s in server_spans] == [("tools/call echo", "SpanKind.SERVER")]
    server_span = server_spans[0]
    assert client_span.context is not None
    assert server_span["context"]["trace_id"] == f"0x{client_span.context.trace_id:032x}"
    assert server_span["parent_id"] == f"0x{client_span.context.span_id:016x}"
    assert server_span["attributes"] == {
        "mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "echo",
        "jsonrpc.request.id": str((client_span.attributes or {})["jsonrpc.request.id"]),
        "mcp.protocol.version": "2026-07-28", "network.transport": "pipe"}


# -- the official SDK's client ----------------------------------------------------------------------
def test_a_trace_started_by_the_official_sdks_client_goes_on_in_our_server(spans: InMemorySpanExporter) -> None:
    from mcp import Client as SdkClient
    from mcp.client.streamable_http import streamable_http_client

    async def main(port: int) -> None:
        with anyio.fail_after(TIMEOUT):
            tracer = trace.get_tracer("the-sdk-test")
            with tracer.start_as_current_span("agent step"):
                async with SdkClient(streamable_http_client(f"http://127.0.0.1:{port}/mcp"), mode="legacy") as client:
                    result = await client.call_tool("echo", {"text": "from the sdk"})
                    assert result.content[0].text == "from the sdk"  # type: ignore[union-attr]

    with serve_uvicorn(asgi_app(make_app())) as port:
        anyio.run(main, port)
    ours = by_name(spans, "tools/call echo", SpanKind.SERVER)
    theirs = [s for s in spans.get_finished_spans() if s.kind is SpanKind.CLIENT
              and (s.attributes or {}).get("mcp.method.name") == "tools/call"]
    assert len(theirs) == 1 and theirs[0].instrumentation_scope is not None
    assert theirs[0].instrumentation_scope.name == "mcp-python-sdk"  # it sent traceparent in _meta itself
    assert parent_of(ours, theirs[0])
    step = by_name(spans, "agent step", SpanKind.INTERNAL)
    assert parent_of(theirs[0], step)
    assert (ours.attributes or {})["mcp.protocol.version"] == "2025-11-25"
    assert isinstance((ours.attributes or {})["mcp.session.id"], str)


# -- the server's parent: the request's _meta first, the ambient span linked ------------------------
def run_in_process(app: App, meta_extra: dict[str, Any], ambient: bool) -> None:
    """One tools/call of ``echo`` through the engine and ``App.dispatch``, its ``_meta`` holding
    ``meta_extra``, under an ambient span (an HTTP server instrumentation's, say) or none."""
    from schema_check import exchange, meta, request

    ex = exchange(app.server, request("tools/call", {"name": "echo", "_meta": {**meta(), **meta_extra}}))

    async def send(outputs: Any) -> None:
        pass

    async def main() -> None:
        if ambient:
            with provider().get_tracer("ambient").start_as_current_span("HTTP POST"):
                await app.dispatch(ex, send)
        else:
            await app.dispatch(ex, send)

    trio.run(main)


REMOTE = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def test_the_requests_trace_context_is_the_parent_and_the_ambient_span_a_link(spans: InMemorySpanExporter) -> None:
    run_in_process(make_app(), {"traceparent": REMOTE, "tracestate": "rojo=00f067aa0ba902b7"}, ambient=True)
    span = by_name(spans, "tools/call echo", SpanKind.SERVER)
    ambient = by_name(spans, "HTTP POST", SpanKind.INTERNAL)
    assert span.parent is not None and span.parent.is_remote
    assert (span.parent.trace_id, span.parent.span_id) == (0x4BF92F3577B34DA6A3CE929D0E0E4736, 0x00F067AA0BA902B7)
    assert span.parent.trace_state.get("rojo") == "00f067aa0ba902b7"
    assert ambient.context is not None and [link.context.span_id for link in span.links] == [ambient.context.span_id]


@pytest.mark.parametrize("carried", [{}, {"traceparent": 7}, {"traceparent": "00-nonsense"}])
def test_without_a_valid_trace_context_the_ambient_span_is_the_parent(
    spans: InMemorySpanExporter, carried: dict[str, Any],
) -> None:
    run_in_process(make_app(), carried, ambient=True)
    span = by_name(spans, "tools/call echo", SpanKind.SERVER)
    assert parent_of(span, by_name(spans, "HTTP POST", SpanKind.INTERNAL)) and not span.links
    spans.clear()
    run_in_process(make_app(), carried, ambient=False)
    assert by_name(spans, "tools/call echo", SpanKind.SERVER).parent is None


def test_a_cancelled_request_is_named_by_its_exception(spans: InMemorySpanExporter) -> None:
    app = App("traced-cancel", "1.0", keyring=Keyring.single(b"t" * 32))
    app.add_middleware(ServerTracing(tracer_provider=provider()))

    @app.tool(description="Never answers")
    async def stuck() -> str:
        await trio.sleep_forever()
        return "never"

    from schema_check import exchange, request

    ex = exchange(app.server, request("tools/call", {"name": "stuck"}))

    async def main() -> None:
        async def send(outputs: Any) -> None:
            pass

        with trio.move_on_after(0.2):
            await app.dispatch(ex, send)

    trio.run(main)
    span = by_name(spans, "tools/call stuck", SpanKind.SERVER)
    assert (span.attributes or {})["error.type"] == "Cancelled" and span.status.status_code is StatusCode.ERROR


def test_the_client_adds_trace_context_to_meta_only_when_traced() -> None:
    engine = Client(Implementation(name="c", version="1"))
    request = engine.call_tool("echo", {"text": "x"})
    traced = engine.with_meta(request, {"traceparent": REMOTE})
    assert traced.id == request.id and traced.headers == request.headers
    assert msgspec.json.decode(traced.body)["params"]["_meta"]["traceparent"] == REMOTE
    assert "traceparent" not in msgspec.json.decode(request.body)["params"]["_meta"]
    assert engine.with_meta(request, {}) is request
    with pytest.raises(mcpwire.LocalProtocolError):
        engine.with_meta(request, {"io.modelcontextprotocol/protocolVersion": "x"})
    assert isinstance(ClientTracing(tracer_provider=provider()), ClientTracing)
