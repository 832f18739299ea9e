"""Invariant 5 (fuzz/README.md): requestState tokens and pagination cursors, through the engine.

- Any mutation of a token (a character changed, dropped, inserted, the token cut or extended,
  re-padded, its key id swapped) is rejected: -32602 "Invalid or expired request state"
  (cursors: "Invalid pagination cursor" or "Pagination cursor has expired").
- A token issued for one tool, argument set, URI, prompt, method or key is never accepted for
  another; the same arguments in another order are the same call and are accepted.
- Expiry runs on the clock passed in: valid while ``issued - 60 s skew <= now < issued + ttl``.
- A cursor is bound to its list and to the catalog version; another keyring rejects both.

Round 1 is real: the client engine builds the call, the server engine admits it, the host
answers input_required, the client engine parses the token out of the bytes.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import mcpwire
from fuzz import strategies as S
from fuzz.bounds import budget, time_bound
from fuzz.host import INPUT_REQUESTS
from fuzz.targets import NOW, OTHER_SECRET, SECRET, make_client, make_server

SERVER = make_server()
SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
STATE_ERROR = "Invalid or expired request state"
CURSOR_ERRORS = ("Invalid pagination cursor", "Pagination cursor has expired")


def post(server: mcpwire.Server, request: mcpwire.OutgoingRequest, now: float = NOW) -> Any:
    return server.receive_http(mcpwire.HttpRequest(method="POST", target="/mcp", headers=list(request.headers),
                                                   body=request.body), now=now)


def error_of(answer: Any) -> dict[str, Any]:
    assert isinstance(answer, tuple), f"expected an error reply, got {answer!r}"
    head, body = answer
    message = json.loads(body.data)
    assert head.status == 400 and "error" in message, message
    error: dict[str, Any] = message["error"]
    return error


def round_one(method: str, params: dict[str, Any], state: Any, *, server: mcpwire.Server = SERVER,
              now: float = NOW, ttl: float | None = None) -> tuple[mcpwire.Client, mcpwire.InputRequired]:
    """Call, answer input_required with ``state``, parse the result: the InputRequired event."""
    client = make_client()
    request = client.request(method, params)
    exchange = post(server, request, now)
    assert isinstance(exchange, mcpwire.HttpExchange), exchange
    head, body = exchange.input_required({"name": INPUT_REQUESTS["name"]}, state=state, ttl_seconds=ttl)
    assert isinstance(head, mcpwire.ResponseHead) and isinstance(body, mcpwire.ResponseBody)
    parser = mcpwire.HttpResponseParser(client, request, status=head.status, content_type=b"application/json")
    (event,) = parser.feed(body.data) + parser.close()
    assert isinstance(event, mcpwire.InputRequired) and isinstance(event.request_state, str)
    return client, event


def retry_with(client: mcpwire.Client, method: str, params: dict[str, Any], token: Any) -> mcpwire.OutgoingRequest:
    return client.request(method, {**params, "inputResponses": {"name": {"action": "accept", "content": {"name": "A"}}},
                                   "requestState": token})


def accepted_state(answer: Any) -> Any:
    assert isinstance(answer, mcpwire.HttpExchange), f"expected the retry admitted, got {answer!r}"
    answer.cancel()
    return getattr(answer.event, "state", None)


CALLS = st.one_of(
    st.tuples(st.just("tools/call"), st.fixed_dictionaries({"name": st.just("echo"), "arguments": S.json_objects})),
    st.tuples(st.just("tools/call"), st.fixed_dictionaries({"name": st.just("typed"),
                                                            "arguments": st.fixed_dictionaries({"a": S.INT64})})),
    st.tuples(st.just("resources/read"), st.fixed_dictionaries({"uri": st.sampled_from(
        ["test://static-text", "test://template/1/data", "https://example.com/r?id=1"])})),
    st.tuples(st.just("prompts/get"), st.fixed_dictionaries({"name": st.just("greet"), "arguments": st.fixed_dictionaries(
        {"who": st.text(max_size=5)})})),
)


@st.composite
def token_mutations(draw: st.DrawFn, token: str) -> str:
    op = draw(st.sampled_from(["replace", "delete", "insert", "truncate", "append", "pad", "case", "kid", "swap"]))
    i = draw(st.integers(0, len(token) - 1))
    if op == "replace":
        return token[:i] + draw(st.characters(codec="utf-8").filter(lambda c: c != token[i])) + token[i + 1:]
    if op == "delete":
        return token[:i] + token[i + 1:]
    if op == "insert":
        return token[:i] + draw(st.characters(codec="utf-8")) + token[i:]
    if op == "truncate":
        return token[:i]
    if op == "append":
        return token + draw(st.text(min_size=1, max_size=10))
    if op == "pad":
        return token + "="
    if op == "case":
        assume(token[i].swapcase() != token[i])
        return token[:i] + token[i].swapcase() + token[i + 1:]
    parts = token.split(".")
    if op == "kid":
        parts[1] = draw(st.sampled_from(["k2", "k", "K1", "k1 ", ""]))
        return ".".join(parts)
    parts[2], parts[3] = parts[3], parts[2]  # payload and MAC swapped
    return ".".join(parts)


@settings(max_examples=budget(100), suppress_health_check=SLOW)
@given(call=CALLS, state=S.json_values(5), data=st.data())
def test_a_state_token_round_trips_and_any_mutation_is_rejected(call: Any, state: Any, data: st.DataObject) -> None:
    method, params = call
    with time_bound():
        client, event = round_one(method, params, state)
        token = event.request_state
        assert isinstance(token, str)
        # The genuine token, echoed by the client engine's own retry, is accepted with the state.
        got = accepted_state(post(SERVER, client.retry(event, {"name": {"action": "accept", "content": {"name": "A"}}})))
        assert got == json.loads(json.dumps(state))
        mutated = data.draw(token_mutations(token))
        assert mutated != token
        error = error_of(post(SERVER, retry_with(client, method, params, mutated)))
        assert error == {"code": -32602, "message": STATE_ERROR}, error


@st.composite
def other_calls(draw: st.DrawFn, method: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A different call: another tool, arguments, URI, prompt argument or method."""
    other_method, other = draw(CALLS)
    if other_method == method:
        key = {"tools/call": "arguments", "resources/read": "uri", "prompts/get": "arguments"}[method]
        if draw(st.booleans()) and method == "tools/call":
            other = {**params, "name": draw(st.sampled_from(["region", "t0", "structured"]))}
        elif method == "resources/read":
            other = {"uri": draw(st.sampled_from(["test://static-binary", "test://template/2/data", "test://static-text/"]))}
        elif draw(st.booleans()):
            other = {**params, key: {**params.get(key, {}), draw(st.text(max_size=3)): "x"}}
    canonical = json.dumps(params, sort_keys=True)
    assume(other_method != method or json.dumps(other, sort_keys=True) != canonical)
    return other_method, other


@settings(max_examples=budget(80), suppress_health_check=SLOW)
@given(call=CALLS, state=S.json_values(3), data=st.data())
def test_a_state_token_is_bound_to_its_call(call: Any, state: Any, data: st.DataObject) -> None:
    method, params = call
    with time_bound():
        client, event = round_one(method, params, state)
        token = event.request_state
        other_method, other = data.draw(other_calls(method, params))
        answer = post(SERVER, retry_with(client, other_method, other, token))
        if isinstance(answer, tuple):
            error = error_of(answer)
            # Rejected for the token; or, for a call the catalog refuses anyway, for that.
            assert error["code"] == -32602, error
        else:
            raise AssertionError(f"a token for {method} {params} was accepted for {other_method} {other}")


@settings(max_examples=budget(40), suppress_health_check=SLOW)
@given(arguments=st.dictionaries(st.text(max_size=4), S.json_values(3), min_size=2, max_size=5))
def test_argument_order_does_not_matter(arguments: dict[str, Any]) -> None:
    client, event = round_one("tools/call", {"name": "echo", "arguments": arguments}, {"s": 1})
    reordered = dict(reversed(list(arguments.items())))
    answer = post(SERVER, retry_with(client, "tools/call", {"name": "echo", "arguments": reordered}, event.request_state))
    assert accepted_state(answer) == {"s": 1}


def test_a_token_is_bound_to_its_key() -> None:
    params = {"name": "echo", "arguments": {"a": 1}}
    client, event = round_one("tools/call", params, "x")
    retry = retry_with(client, "tools/call", params, event.request_state)
    other_key = make_server(keyring=mcpwire.Keyring.single(OTHER_SECRET))
    assert error_of(post(other_key, retry))["message"] == STATE_ERROR
    same_key_other_id = make_server(keyring=mcpwire.Keyring.single(SECRET, key_id="k2"))
    assert error_of(post(same_key_other_id, retry))["message"] == STATE_ERROR
    rotated = make_server(keyring=mcpwire.Keyring({"k1": SECRET, "k2": OTHER_SECRET}, "k2"))
    assert accepted_state(post(rotated, retry)) == "x"  # rotation: an old key still verifies


@settings(max_examples=budget(100), suppress_health_check=SLOW)
@given(ttl=st.none() | st.floats(min_value=0.001, max_value=900), offset=st.floats(min_value=-200, max_value=1200))
def test_expiry_follows_the_clock_passed_in(ttl: float | None, offset: float) -> None:
    params = {"name": "echo", "arguments": {}}
    client, event = round_one("tools/call", params, 7, ttl=ttl)
    lifetime = 300.0 if ttl is None else ttl
    now = NOW + offset
    answer = post(SERVER, retry_with(client, "tools/call", params, event.request_state), now)
    if -60 <= offset < lifetime:
        assert accepted_state(answer) == 7
    else:
        assert error_of(answer)["message"] == STATE_ERROR


@settings(max_examples=budget(40), suppress_health_check=SLOW)
@given(message=S.valid_requests(methods=S.MRTR_METHODS, retry=True))
def test_the_strategies_retries_carry_genuine_tokens(message: dict[str, Any]) -> None:
    # The strategies have the fuzz server's keyring issue each retry's requestState for the
    # first round of that very call, up to 200 s before NOW: every one verifies.
    with time_bound():
        (answer,) = mcpwire.StdioConnection(SERVER).receive_data(S.body_bytes({**message, "id": 1}) + b"\n", now=NOW)
    if isinstance(answer, bytes):  # arguments that break the tool's schema: verified, then a tool error
        assert json.loads(answer)["result"]["isError"] is True, answer
    else:
        assert isinstance(answer, mcpwire.StdioExchange), answer
        assert getattr(answer.event, "state", msgspec.UNSET) is not msgspec.UNSET, answer.event
        answer.cancel()


# --- cursors ----------------------------------------------------------------------------------------


def list_page(server: mcpwire.Server, method: str, cursor: Any = None) -> Any:
    client = make_client()
    params = None if cursor is None else {"cursor": cursor}
    head, body = post(server, client.request(method, params))
    return head.status, json.loads(body.data)


def test_pages_chain_to_the_end() -> None:
    names, cursor, pages = [], None, 0
    while True:
        status, message = list_page(SERVER, "tools/list", cursor)
        assert status == 200
        names += [t["name"] for t in message["result"]["tools"]]
        pages += 1
        cursor = message["result"].get("nextCursor")
        if cursor is None:
            break
    assert pages > 1 and names == sorted(names) and len(names) == len(set(names)) == 10


@settings(max_examples=budget(80), suppress_health_check=SLOW)
@given(index=st.integers(0, 10), data=st.data())
def test_any_mutation_of_a_cursor_is_rejected(index: int, data: st.DataObject) -> None:
    cursors = S.real_cursors()["tools/list"]
    cursor = cursors[index % len(cursors)]
    mutated = data.draw(token_mutations(cursor))
    status, message = list_page(SERVER, "tools/list", mutated)
    assert status == 400 and message["error"]["code"] == -32602 and message["error"]["message"] in CURSOR_ERRORS


@settings(max_examples=budget(20), suppress_health_check=SLOW)
@given(method=st.sampled_from(["resources/list", "prompts/list", "resources/templates/list"]), index=st.integers(0, 5))
def test_a_cursor_is_bound_to_its_list(method: str, index: int) -> None:
    cursors = S.real_cursors()["tools/list"]
    status, message = list_page(SERVER, method, cursors[index % len(cursors)])
    assert status == 400 and message["error"] == {"code": -32602, "message": "Invalid pagination cursor"}


def test_a_cursor_expires_when_its_list_changes_and_is_bound_to_its_key() -> None:
    server = make_server()
    status, first = list_page(server, "tools/list")
    cursor = first["result"]["nextCursor"]
    assert list_page(server, "tools/list", cursor)[0] == 200
    other = make_server(keyring=mcpwire.Keyring.single(OTHER_SECRET))
    assert list_page(other, "tools/list", cursor)[1]["error"]["message"] == "Invalid pagination cursor"
    server.remove_tool("t0")
    status, message = list_page(server, "tools/list", cursor)
    assert status == 400 and message["error"] == {"code": -32602, "message": "Pagination cursor has expired"}
