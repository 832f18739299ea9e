"""An App traced on the server side, served on stdio, for tests/adapters/tracing/test_tracing.py:
``python traced_stdio_app.py SPANS_FILE``. Each span it ends is written to SPANS_FILE as one line
of JSON (the SDK's ``ReadableSpan.to_json``), for the test to read once the process has exited."""

from __future__ import annotations

import functools
import sys

import anyio
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

from mcpwire_adapters import App, serve_stdio
from mcpwire_adapters.tracing import trace_server


def one_line(span: ReadableSpan) -> str:
    return str(span.to_json(indent=None)) + "\n"


def main() -> None:
    with open(sys.argv[1], "w", encoding="utf-8") as out:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=out, formatter=one_line)))
        app = App("traced-stdio", "1.0")
        trace_server(app, tracer_provider=provider)

        @app.tool(description="Echo the text")
        async def echo(text: str = "") -> str:
            return text

        anyio.run(functools.partial(serve_stdio, app, grace_period=5, quiet=True))
        provider.shutdown()


if __name__ == "__main__":
    main()
