"""In-process variants of our client engine (``mcpwire.client.engine``), when it exists.

The bytes parsed are the ones our server engine answers to the client's own request, so the
client side reads real server output:

- ``client.build_call``: ``Client.call_tool("echo", {"text": "hello"})`` -> body and headers;
- ``client.parse_json``: the small call's JSON response through ``HttpResponseParser``;
- ``client.parse_sse``: the progress call's SSE response (5 progress events + the final one).
"""

from __future__ import annotations

from time import perf_counter_ns
from typing import Any

from mcpwire import HttpExchange, HttpRequest, ResponseBody
from mcpwire.types import Implementation

from ._harness import Variant
from ._workload import NOW, PROGRESS_FRAMES, echo_result, small_server


def _client_api() -> tuple[Any, Any]:
    import mcpwire

    client_cls = getattr(mcpwire, "Client", None)
    parser_cls = getattr(mcpwire, "HttpResponseParser", None)
    if client_cls is None or parser_cls is None:  # not re-exported yet: the private modules
        from mcpwire.client.engine import Client
        from mcpwire.client.stream import HttpResponseParser

        client_cls, parser_cls = Client, HttpResponseParser
    return client_cls, parser_cls


def _server_answer(request: Any, progress: int = 0) -> bytes:
    server = small_server()
    hdrs = [(k.lower(), v) for k, v in request.headers]
    hdrs.append((b"content-length", str(len(request.body)).encode()))
    ex = server.receive_http(HttpRequest(method="POST", target="/mcp", headers=hdrs, body=request.body), now=NOW)
    assert isinstance(ex, HttpExchange), ex
    out: list[Any] = []
    for i in range(1, progress + 1):
        out += ex.progress(i, total=progress)
    out += ex.complete(echo_result(ex.event.arguments.text))  # type: ignore[union-attr]
    return b"".join(e.data for e in out if isinstance(e, ResponseBody))


def variants() -> list[Variant]:
    client_cls, parser_cls = _client_api()
    client = client_cls(Implementation(name="bench-client", version="1.0"))

    def build_batch(n: int) -> int:
        call = client.call_tool
        t0 = perf_counter_ns()
        for _ in range(n):
            call("echo", {"text": "hello"})
        return perf_counter_ns() - t0

    request = client.call_tool("echo", {"text": "hello"})
    json_body = _server_answer(request)
    sse_request = client.call_tool("echo", {"text": "hello"}, progress_token="p-1")
    sse_body = _server_answer(sse_request, PROGRESS_FRAMES)

    def parse(req: Any, body: bytes, ctype: bytes) -> list[Any]:
        parser = parser_cls(client, req, status=200, content_type=ctype)
        return [*parser.feed(body), *parser.close()]

    # The final event's class has been renamed before (Result -> ResultReceived): check its shape.
    def final_ok(event: Any) -> bool:
        return type(event).__name__ not in ("ErrorResult", "InputRequired", "Progress") and "hello" in repr(event)

    events = parse(request, json_body, b"application/json")
    assert len(events) == 1 and final_ok(events[0]), events
    events = parse(sse_request, sse_body, b"text/event-stream")
    names = [type(e).__name__ for e in events]
    assert names[:-1] == ["Progress"] * PROGRESS_FRAMES and final_ok(events[-1]), events

    def json_batch(n: int) -> int:
        t0 = perf_counter_ns()
        for _ in range(n):
            parser = parser_cls(client, request, status=200, content_type=b"application/json")
            parser.feed(json_body)
            parser.close()
        return perf_counter_ns() - t0

    def sse_batch(n: int) -> int:
        t0 = perf_counter_ns()
        for _ in range(n):
            parser = parser_cls(client, sse_request, status=200, content_type=b"text/event-stream")
            parser.feed(sse_body)
            parser.close()
        return perf_counter_ns() - t0

    return [
        Variant("client.build_call", build_batch),
        Variant("client.parse_json", json_batch),
        Variant("client.parse_sse", sse_batch),
    ]
