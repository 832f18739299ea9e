"""Invariant 2 (fuzz/README.md): splitting a byte stream at any points gives exactly the events
of feeding it whole, at the engine level, for generated traffic (valid and mutated):

- NDJSON into the server (``StdioConnection``): the same answers, exchanges, listen streams
  and cancellations, in the same order, whatever the line limit;
- NDJSON into the client (``ClientStdioConnection``): the same client events;
- SSE response bodies into the client (``HttpResponseParser``): the same events, and the same
  error (or none) at the same point; likewise a JSON body.

The framing readers themselves (``LineReader``, ``SSEReader``) have their own chunking
properties in tests/wire/test_ndjson.py and tests/wire/test_sse.py; these hold the engines above them.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mcpwire
from fuzz import invariants
from fuzz import strategies as S
from fuzz.atheris_client import _requests
from fuzz.bounds import budget, time_bound, tolerate_known
from fuzz.drive import serve_stdio
from fuzz.targets import make_client, make_server

SERVER = make_server()
SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
LIMITS = st.sampled_from([4 * 1024 * 1024, 64, 300])


def summarize(outputs: list[Any]) -> list[Any]:
    out: list[Any] = []
    for item in outputs:
        if isinstance(item, bytes):
            out.append(invariants.line_invariants(item))
        elif isinstance(item, mcpwire.StdioExchange):
            event = item.event
            out.append(("exchange", item.request_id, type(event).__name__, getattr(event, "arguments", None),
                        getattr(event, "state", None)))
        elif isinstance(item, mcpwire.StdioListenStream):
            out.append(("listen", item.request_id, item.filter))
        else:
            out.append(item)
    return out


def server_run(stream: bytes, cuts: list[int], limit: int) -> list[Any]:
    outputs, _ = serve_stdio(SERVER, stream, cuts, [[("cancel",)]], max_line_bytes=limit)
    return summarize(outputs)


@settings(max_examples=budget(120), suppress_health_check=SLOW)
@given(stream=S.stdio_streams(max_lines=8), limit=LIMITS, data=st.data())
def test_server_ndjson_chunking_never_changes_the_outputs(stream: bytes, limit: int, data: st.DataObject) -> None:
    cuts = data.draw(S.cut_points(stream))
    with time_bound(), tolerate_known():
        whole = server_run(stream, [], limit)
        assert server_run(stream, cuts, limit) == whole
        if len(stream) < 800:
            assert server_run(stream, list(range(1, len(stream))), limit) == whole  # byte by byte
    assert SERVER.open_listeners == 0


# --- client side ----------------------------------------------------------------------------------


@st.composite
def server_stdout(draw: st.DrawFn) -> bytes:
    requests = _requests(make_client())
    lines = []
    for _ in range(draw(st.integers(1, 8))):
        message = draw(S.server_messages(draw(st.sampled_from(requests))))
        line = S.body_bytes(message).replace(b"\n", b"")
        if draw(st.integers(0, 5)) == 0:
            line = draw(S.mutated_bytes(line)).replace(b"\n", b"")
        lines.append(line + draw(st.sampled_from([b"\n", b"\r\n", b"\n\n"])))
    return b"".join(lines)


def client_stdio_run(stdout: bytes, cuts: list[int], limit: int) -> list[Any]:
    client = make_client()
    conn = mcpwire.ClientStdioConnection(client, max_line_bytes=limit)
    for request in _requests(client):
        conn.send(request)
    bounds = [0, *cuts, len(stdout)]
    events: list[Any] = []
    for start, end in zip(bounds, bounds[1:]):
        events += conn.receive_data(stdout[start:end])
    return events + conn.receive_eof()


@settings(max_examples=budget(120), suppress_health_check=SLOW)
@given(stdout=server_stdout(), limit=LIMITS, data=st.data())
def test_client_ndjson_chunking_never_changes_the_events(stdout: bytes, limit: int, data: st.DataObject) -> None:
    cuts = data.draw(S.cut_points(stdout))
    with time_bound():
        whole = client_stdio_run(stdout, [], limit)
        assert client_stdio_run(stdout, cuts, limit) == whole
        if len(stdout) < 800:
            assert client_stdio_run(stdout, list(range(1, len(stdout))), limit) == whole


def client_http_run(index: int, ctype: bytes, body: bytes, cuts: list[int], limit: int) -> tuple[list[Any], Any]:
    client = make_client()
    request = _requests(client)[index]
    parser = mcpwire.HttpResponseParser(client, request, status=200, content_type=ctype, max_event_bytes=limit)
    events: list[Any] = []
    bounds = [0, *cuts, len(body)]
    try:
        for start, end in zip(bounds, bounds[1:]):
            events += parser.feed(body[start:end])
        events += parser.close()
    except mcpwire.RemoteProtocolError as exc:
        return events, (exc.code, exc.message, exc.data)
    return events, None


@st.composite
def sse_responses(draw: st.DrawFn) -> tuple[int, bytes]:
    index = draw(st.integers(0, len(_requests(make_client())) - 1))
    request = _requests(make_client())[index]
    messages = draw(st.lists(S.server_messages(request), min_size=1, max_size=5))
    body = draw(S.sse_bodies(messages))
    if draw(st.integers(0, 4)) == 0:
        body = draw(S.mutated_bytes(body))
    return index, body


@settings(max_examples=budget(150), suppress_health_check=SLOW)
@given(response=sse_responses(), limit=st.sampled_from([4 * 1024 * 1024, 48, 200]), data=st.data())
def test_client_sse_chunking_never_changes_the_events(response: tuple[int, bytes], limit: int,
                                                      data: st.DataObject) -> None:
    index, body = response
    cuts = data.draw(S.cut_points(body))
    with time_bound():
        whole = client_http_run(index, b"text/event-stream", body, [], limit)
        same_events(client_http_run(index, b"text/event-stream", body, cuts, limit), whole)
        if len(body) < 800:
            same_events(client_http_run(index, b"text/event-stream", body, list(range(1, len(body))), limit), whole)


def same_events(chunked: tuple[list[Any], Any], whole: tuple[list[Any], Any]) -> None:
    # Including the events that precede a protocol error in one chunk (they come first, the
    # error at the next call: F3, fixed in bcd0d04).
    assert chunked == whole


@settings(max_examples=budget(60), suppress_health_check=SLOW)
@given(response=sse_responses(), data=st.data())
def test_client_json_body_chunking_never_changes_the_events(response: tuple[int, bytes], data: st.DataObject) -> None:
    index, _ = response
    request = _requests(make_client())[index]
    body = S.body_bytes(data.draw(S.server_messages(request)))
    cuts = data.draw(S.cut_points(body))
    with time_bound():
        whole = client_http_run(index, b"application/json", body, [], 1024)
        same_events(client_http_run(index, b"application/json", body, cuts, 1024), whole)
