"""Invariant 3 (fuzz/README.md): every message either engine emits validates against
schema-2026-07-28.json (Draft 2020-12, through tests/schema_check.py), for generated valid and
invalid traffic alike. The one documented exception is ``"id": null`` on an error that
answers a message which could not be attributed (docs/errors.md), which schema_check accepts
on error responses only.

Server: every HTTP reply, exchange output (JSON or SSE, host plans of every kind) and listen
stream; every stdio line. Client: every request it builds (first calls, MRTR retries,
version retries, pagination), and every cancellation line. The strategies' own valid requests
are held to the schema first, so "valid" means what the schema means.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from schema_check import check_message, check_http, validate

import mcpwire
from fuzz import strategies as S
from fuzz.bounds import budget, time_bound, tolerate_known
from fuzz.drive import serve_http, serve_stdio
from fuzz.targets import CATALOG, NOW, make_client, make_server

SERVER = make_server()
SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


@settings(max_examples=budget(100), suppress_health_check=SLOW)
@given(message=S.valid_requests())
def test_generated_valid_requests_are_schema_valid(message: dict[str, Any]) -> None:
    validate(message, "JSONRPCRequest")
    validate(message, "ClientRequest")


def check_output(outcome: Any) -> None:
    if not outcome.output:
        return
    head, pieces = outcome.output[0], outcome.output[1:]
    body = b"".join(p.data for p in pieces)
    check_http(head.status, head.headers, body, outcome.method)  # validates every message in it


@settings(max_examples=budget(150), suppress_health_check=SLOW)
@given(traffic=S.http_traffic(), plan=S.host_plans())
def test_every_http_message_the_server_emits_is_schema_valid(traffic: Any, plan: Any) -> None:
    _, request = traffic
    with time_bound(), tolerate_known():
        check_output(serve_http(SERVER, request, plan))


@settings(max_examples=budget(80), suppress_health_check=SLOW)
@given(stream=S.stdio_streams(), plans=st.lists(S.host_plans(), min_size=1, max_size=3))
def test_every_stdio_line_the_server_emits_is_schema_valid(stream: bytes, plans: Any) -> None:
    with time_bound(), tolerate_known():
        for line in stream.split(b"\n"):
            # One line at a time, so each answer is checked against its request's method.
            method = _method_of(line)
            outputs, played = serve_stdio(SERVER, line + b"\n", [], plans)
            for item in outputs:
                if isinstance(item, bytes):
                    for text in item.split(b"\n")[:-1]:
                        check_message(json.loads(text), method)
            for outcome in played:
                for data in outcome.output:
                    for text in data.split(b"\n")[:-1]:
                        check_message(json.loads(text), outcome.method)


def _method_of(line: bytes) -> str | None:
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    method = message.get("method") if isinstance(message, dict) else None
    return method if isinstance(method, str) and method in S.REQUEST_METHODS else None


# --- the client engine ------------------------------------------------------------------------------

tool_names = st.sampled_from(sorted(CATALOG.tools)) | st.text(min_size=1, max_size=8)
# A client must not put an unrepresentable method or version in a header: those raise
# LocalProtocolError (documented), so the strategies keep to printable ASCII methods here.
extra_kw: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries({}, optional={
    "log_level": st.sampled_from(S.LOG_LEVELS), "progress_token": S.request_ids,
    "capabilities": S.client_capabilities,
})


@st.composite
def client_calls(draw: st.DrawFn, client: mcpwire.Client) -> mcpwire.OutgoingRequest:
    kw = draw(extra_kw)
    kind = draw(st.sampled_from(["discover", "list", "call", "read", "prompt", "complete", "listen", "raw"]))
    if kind == "discover":
        return client.discover(**kw)
    if kind == "list":
        method = draw(st.sampled_from(["tools/list", "resources/list", "prompts/list", "resources/templates/list"]))
        return client.request(method, {"cursor": draw(st.text(max_size=10))} if draw(st.booleans()) else None, **kw)
    if kind == "call":
        return client.call_tool(draw(tool_names), draw(st.none() | S.json_objects), **kw)
    if kind == "read":
        return client.read_resource(draw(S.absolute_uris), **kw)
    if kind == "prompt":
        return client.get_prompt(draw(st.text(min_size=1, max_size=6)),
                                 draw(st.none() | st.dictionaries(st.text(max_size=4), st.text(max_size=4))), **kw)
    if kind == "complete":
        ref = draw(st.sampled_from([{"type": "ref/prompt", "name": "greet"}, {"type": "ref/resource", "uri": "a://{x}"}]))
        return client.complete(ref, draw(st.text(max_size=4)), draw(st.text(max_size=4)), **kw)
    if kind == "listen":
        return client.listen(draw(st.fixed_dictionaries({}, optional={
            "toolsListChanged": st.booleans(), "resourceSubscriptions": st.lists(S.absolute_uris, max_size=2)})), **kw)
    # The generic builder sends what it is given; only methods whose params need nothing but
    # _meta are complete without more (the engine does not invent required params).
    bare = [m for m in S.REQUEST_METHODS if S.REQUIRED_PARAMS[m] == ("_meta",)]
    return client.request(draw(st.sampled_from(bare)), None, **kw)


def check_request(request: mcpwire.OutgoingRequest) -> None:
    message = json.loads(request.body)
    validate(message, "JSONRPCRequest")
    if message["method"] in S.REQUEST_METHODS:
        validate(message, "ClientRequest")
    assert json.loads(request.line) == message and request.line.count(b"\n") == 1


@settings(max_examples=budget(80), suppress_health_check=SLOW)
@given(data=st.data())
def test_every_request_the_client_builds_is_schema_valid(data: st.DataObject) -> None:
    client = make_client()
    for _ in range(data.draw(st.integers(1, 2))):
        try:
            request = data.draw(client_calls(client))
        except mcpwire.LocalProtocolError:
            continue  # documented: the host asked for something that cannot be sent
        check_request(request)
        cancel = json.loads(client.cancel(request, data.draw(st.none() | st.text(max_size=5))))
        validate(cancel, "CancelledNotification")
        validate(cancel, "ClientNotification")


@settings(max_examples=budget(60), suppress_health_check=SLOW)
@given(call=S.valid_requests(methods=("tools/call", "resources/read", "prompts/get")),
       asks=st.lists(st.sampled_from(["name", "url", "sample", "roots"]), unique=True, min_size=1, max_size=3),
       state=st.none() | S.json_values(4),
       answers=st.dictionaries(st.sampled_from(["name", "url", "sample", "roots"]),
                               st.sampled_from([{"action": "accept", "content": {"name": "A"}}, {"action": "cancel"},
                                                {"roots": []}]), max_size=3))
def test_mrtr_retries_the_client_builds_are_schema_valid(call: dict[str, Any], asks: list[str], state: Any,
                                                        answers: Any) -> None:
    """Client -> server -> input_required -> client.retry, through bytes: the retry validates."""
    plan = [("progress", 1.0, None, "p"), ("input_required", asks, state)]
    client = make_client()
    params = {k: v for k, v in call["params"].items() if k not in ("_meta", "inputResponses", "requestState")}
    request = client.request(call["method"], params)
    with time_bound(), tolerate_known():
        outcome = serve_http(SERVER, mcpwire.HttpRequest(method="POST", target="/mcp", headers=list(request.headers),
                                                         body=request.body), plan)
        check_output(outcome)
        if not outcome.output or not outcome.final:
            return
        head, body = outcome.output[0], b"".join(p.data for p in outcome.output[1:])
        parser = mcpwire.HttpResponseParser(client, request, status=head.status,
                                            content_type=dict(head.headers).get(b"content-type"))
        events = parser.feed(body) + parser.close()
        for ev in events:
            if isinstance(ev, mcpwire.InputRequired):
                asked = {k: v for k, v in answers.items() if k in ev.input_requests}
                retry = client.retry(ev, asked)
                check_request(retry)
                event("an MRTR retry was built and checked")
                assert retry.params.get("requestState", None) == (None if ev.request_state is msgspec_unset()
                                                                  else ev.request_state)


def msgspec_unset() -> Any:
    import msgspec

    return msgspec.UNSET


def test_version_retry_is_schema_valid() -> None:
    client = make_client(supported_versions=("2026-07-28", "2025-11-25"), protocol_version="2099-01-01")
    first = client.discover()
    error = mcpwire.ErrorResult(request_id=first.id, code=-32022, message="Unsupported protocol version",
                                data={"requested": "2099-01-01", "supported": ["2026-07-28"]})
    retry = client.version_retry(first, error)
    check_request(retry)
    # Not merely valid: a new request, at the version the server named, in body and header alike,
    # which the server engine then answers.
    assert retry.id != first.id and retry.method == "server/discover"
    assert json.loads(retry.body)["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert dict(retry.headers)[b"MCP-Protocol-Version"] == b"2026-07-28"
    answer = SERVER.receive_http(mcpwire.HttpRequest(method="POST", target="/mcp", headers=list(retry.headers),
                                                     body=retry.body), now=NOW)
    assert isinstance(answer, tuple), answer
    reply = check_http(answer[0].status, answer[0].headers, answer[1].data, "server/discover")
    assert reply.status == 200 and reply.result["supportedVersions"] == ["2026-07-28"]
