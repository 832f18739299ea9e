"""Invariant 1 (fuzz/README.md): any bytes and any headers into every entry point of both
engines give a documented answer or a documented exception, never anything else, never a hang.

Entry points: ``Server.receive_http`` (then the exchange or listen stream it hands out, played
by a host), ``StdioConnection.receive_data``/``receive_eof`` (likewise), and the client's
``HttpResponseParser`` and ``ClientStdioConnection``. "Documented" is docs/errors.md: the
status and code table, ``id`` null on unattributable errors, 202 empty for notifications;
``RemoteProtocolError`` from the client's HTTP parser; ``LocalProtocolError`` only when the
host plan itself misused the API.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import mcpwire
from fuzz import invariants
from fuzz import strategies as S
from fuzz.atheris_client import _requests
from fuzz.bounds import budget, time_bound, tolerate_known
from fuzz.drive import serve_http, serve_stdio
from fuzz.targets import CLIENT_CAPS, NOW, make_client, make_server

SERVER = make_server()
FINAL = (mcpwire.ResultReceived, mcpwire.ErrorResult, mcpwire.InputRequired)
SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


def check_outcome(outcome: Any) -> None:
    if outcome.kind == "reply":
        invariants.reply_invariants(*outcome.output)
    elif outcome.output:
        invariants.http_stream_invariants(outcome.output, final=outcome.final)


@settings(max_examples=budget(400), suppress_health_check=SLOW)
@given(traffic=S.http_traffic(), plan=S.host_plans())
def test_any_http_request_gets_a_documented_answer(traffic: tuple[str, mcpwire.HttpRequest], plan: Any) -> None:
    label, request = traffic
    with time_bound(), tolerate_known():
        outcome = serve_http(SERVER, request, plan)
        event(f"{label} -> {outcome.kind}")
        check_outcome(outcome)
        if label == "valid":
            # The strategies reach past admission: a valid request is never refused.
            assert outcome.kind != "reply" or json.loads(outcome.output[1].data).get("error") is None, outcome
    assert SERVER.open_listeners == 0


_header = st.tuples(st.binary(max_size=16) | st.sampled_from([b"content-type", b"accept", b"mcp-method",
                                                               b"MCP-Protocol-Version", b"mcp-name", b"origin"]),
                    st.binary(max_size=40))


@settings(max_examples=budget(150), suppress_health_check=SLOW)
@given(method=st.text(max_size=8) | st.just("POST"), target=st.text(max_size=8) | st.just("/mcp"),
       headers=st.lists(_header, max_size=8), body=st.binary(max_size=300))
def test_random_requests_get_a_documented_answer(method: str, target: str, headers: list[tuple[bytes, bytes]],
                                                 body: bytes) -> None:
    request = mcpwire.HttpRequest(method=method, target=target, headers=headers, body=body)
    with time_bound(), tolerate_known():
        check_outcome(serve_http(SERVER, request, [("complete", 0)]))


@settings(max_examples=budget(150), suppress_health_check=SLOW)
@given(stream=S.stdio_streams(), plans=st.lists(S.host_plans(), min_size=1, max_size=3),
       limit=st.sampled_from([4 * 1024 * 1024, 80, 400]), data=st.data())
def test_any_stdio_stream_gets_documented_lines(stream: bytes, plans: Any, limit: int, data: st.DataObject) -> None:
    cuts = data.draw(S.cut_points(stream))
    with time_bound(), tolerate_known():
        outputs, played = serve_stdio(SERVER, stream, cuts, plans, max_line_bytes=limit)
        for item in outputs:
            if isinstance(item, bytes):
                invariants.line_invariants(item)
            else:
                assert isinstance(item, (mcpwire.StdioExchange, mcpwire.StdioListenStream, mcpwire.Cancelled)), item
        for outcome in played:
            invariants.lines_invariants(outcome.output)
    assert SERVER.open_listeners == 0


@settings(max_examples=budget(100), suppress_health_check=SLOW)
@given(stream=st.binary(max_size=400))
def test_random_bytes_on_stdio_get_documented_lines(stream: bytes) -> None:
    with time_bound(), tolerate_known():
        outputs, _ = serve_stdio(SERVER, stream, [], [])
        for item in outputs:
            if isinstance(item, bytes):
                invariants.line_invariants(item)
    assert SERVER.open_listeners == 0


# --- the client engine ----------------------------------------------------------------------------

CONTENT_TYPES = [b"application/json", b"text/event-stream", b"application/json; charset=utf-8", None, b"text/html",
                 b"application/vnd.x+json"]


@st.composite
def http_responses(draw: st.DrawFn) -> tuple[int, int, bytes | None, bytes]:
    """(request index, status, content type, body) of a response to one of the client's requests."""
    index = draw(st.integers(0, len(_requests(make_client())) - 1))
    request = _requests(make_client())[index]
    messages = draw(st.lists(S.server_messages(request), min_size=1, max_size=4))
    ctype = draw(st.sampled_from(CONTENT_TYPES))
    body = draw(S.sse_bodies(messages)) if ctype == b"text/event-stream" else S.body_bytes(messages[-1])
    if draw(st.integers(0, 3)) == 0:
        body = draw(S.mutated_bytes(body))
    status = draw(st.sampled_from([200, 200, 400, 404, 500, 202, 503]))
    return index, status, ctype, body


def parse_http(index: int, status: int, ctype: bytes | None, body: bytes, cuts: list[int]) -> tuple[list[Any], Any]:
    client = make_client()
    request = _requests(client)[index]
    parser = mcpwire.HttpResponseParser(client, request, status=status, content_type=ctype)
    events: list[Any] = []
    bounds = [0, *cuts, len(body)]
    try:
        for start, end in zip(bounds, bounds[1:]):
            events += parser.feed(body[start:end])
        events += parser.close()
    except mcpwire.RemoteProtocolError as exc:  # documented: the server broke the protocol
        assert isinstance(exc.code, int) and isinstance(exc.message, str)
        return events, (exc.code, exc.message)
    finals = [e for e in events if isinstance(e, FINAL)]
    assert len(finals) <= 1 and all(e.request_id == request.id for e in finals), events
    assert parser.done or request.method == "subscriptions/listen", events
    return events, None


@settings(max_examples=budget(200), suppress_health_check=SLOW)
@given(response=http_responses(), data=st.data())
def test_any_http_response_gives_events_or_a_remote_protocol_error(response: Any, data: st.DataObject) -> None:
    index, status, ctype, body = response
    with time_bound():
        parse_http(index, status, ctype, body, data.draw(S.cut_points(body)))


@settings(max_examples=budget(100), suppress_health_check=SLOW)
@given(status=st.integers(100, 599), ctype=st.binary(max_size=30) | st.none(), body=st.binary(max_size=300))
def test_random_http_responses_give_events_or_a_remote_protocol_error(status: int, ctype: bytes | None,
                                                                     body: bytes) -> None:
    with time_bound():
        parse_http(2, status, ctype, body, [len(body) // 2])


@st.composite
def stdio_outputs(draw: st.DrawFn) -> bytes:
    """A server's stdout for the client's requests: their answers and more, in any order."""
    requests = _requests(make_client())
    lines = []
    for _ in range(draw(st.integers(1, 8))):
        message = draw(S.server_messages(draw(st.sampled_from(requests))))
        line = S.body_bytes(message).replace(b"\n", b"")
        if draw(st.integers(0, 4)) == 0:
            line = draw(S.mutated_bytes(line)).replace(b"\n", b"")
        lines.append(line + draw(st.sampled_from([b"\n", b"\r\n"])))
    return b"".join(lines)


def read_stdio(stdout: bytes, cuts: list[int], max_line_bytes: int = 4 * 1024 * 1024) -> list[Any]:
    client = make_client()
    conn = mcpwire.ClientStdioConnection(client, max_line_bytes=max_line_bytes)
    requests = _requests(client)
    for request in requests:
        conn.send(request)
    events: list[Any] = []
    bounds = [0, *cuts, len(stdout)]
    for start, end in zip(bounds, bounds[1:]):
        events += conn.receive_data(stdout[start:end])
    events += conn.receive_eof()
    assert conn.in_flight == 0
    finals = [(type(e.request_id), e.request_id) for e in events if isinstance(e, FINAL) and e.request_id is not None]
    assert len(finals) == len(set(finals)), events  # never two finals for one request
    assert len(finals) == len(requests), events  # every request ends with one final event (-32000 at EOF)
    return events


@settings(max_examples=budget(150), suppress_health_check=SLOW)
@given(stdout=stdio_outputs() | st.binary(max_size=300), data=st.data())
def test_any_server_stdout_gives_events_never_an_exception(stdout: bytes, data: st.DataObject) -> None:
    with time_bound():
        read_stdio(stdout, data.draw(S.cut_points(stdout)), data.draw(st.sampled_from([4 * 1024 * 1024, 64])))


@pytest.mark.parametrize("kind", ["name", "roots", "sample", "url"])
def test_capabilities_declared_by_the_fuzz_client_cover_every_input_request(kind: str) -> None:
    # So MRTR rounds in the suites are input_required, not -32021 (which has its own tests):
    # through the server engine, each kind of input request the host plans use is sent.
    from fuzz.host import INPUT_REQUESTS

    assert sorted(INPUT_REQUESTS) == ["name", "roots", "sample", "url"]  # a new kind is tested here too
    assert set(CLIENT_CAPS) == {"sampling", "elicitation", "roots"}
    client = make_client()
    request = client.call_tool("echo", {})
    exchange = make_server().receive_http(mcpwire.HttpRequest(method="POST", target="/mcp",
                                                              headers=list(request.headers), body=request.body), now=NOW)
    assert isinstance(exchange, mcpwire.HttpExchange), exchange
    head, body = exchange.input_required({kind: INPUT_REQUESTS[kind]}, state=None)
    assert isinstance(head, mcpwire.ResponseHead) and isinstance(body, mcpwire.ResponseBody)
    assert head.status == 200, body
    result = json.loads(body.data)["result"]
    assert result["resultType"] == "input_required" and list(result["inputRequests"]) == [kind], result


@pytest.mark.parametrize("seconds", [0.05])
def test_time_bound_turns_a_hang_into_a_failure(seconds: float) -> None:
    from fuzz.bounds import Hang

    with pytest.raises(Hang):
        with time_bound(seconds):
            while True:
                pass
