"""Multi round-trip requests through the HTTP server engine (wire reference section 10).

Round 1: the host answers ``input_required`` (10.1), unless an input request needs a client
capability this request did not declare (-32021 with merged requiredCapabilities, 10.2).
Round 2: the retry's inputResponses / requestState are checked at admission (10.3) and the
requestState verified: integrity, scope (method + params minus _meta / requestState /
inputResponses) and expiry against ``now`` (10.4).
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from msgspec import UNSET
from schema_check import (
    NOW,
    SERVER_INFO_META_KEY,
    assemble,
    call,
    error_of,
    ev,
    exchange,
    make_server,
    meta,
    request,
)

import mcpwire
from mcpwire.types import CallToolResult, CreateMessageRequest, ElicitRequest, ElicitRequestURLParams, GetPromptResult, Prompt, ReadResourceResult, Resource, SamplingMessage, TextContent, Tool
from mcpwire.types import CreateMessageRequestParams

OBJ = {"type": "object"}
ELICIT_FORM: dict[str, Any] = {"method": "elicitation/create", "params": {
    "mode": "form", "message": "Please provide name",
    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}}
ELICIT_FORM_NO_MODE: dict[str, Any] = {"method": "elicitation/create", "params": {
    "message": "Name?", "requestedSchema": {"type": "object", "properties": {}}}}
ELICIT_URL: dict[str, Any] = {"method": "elicitation/create", "params": {
    "mode": "url", "message": "Sign in", "url": "https://example.com/auth"}}
SAMPLING: dict[str, Any] = {"method": "sampling/createMessage", "params": {
    "messages": [{"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}],
    "maxTokens": 100}}
SAMPLING_TOOLS: dict[str, Any] = {"method": "sampling/createMessage", "params": {
    **SAMPLING["params"], "tools": [{"name": "lookup", "inputSchema": OBJ}], "toolChoice": {"mode": "auto"}}}
SAMPLING_CONTEXT: dict[str, Any] = {"method": "sampling/createMessage", "params": {**SAMPLING["params"], "includeContext": "thisServer"}}
SAMPLING_NO_CONTEXT: dict[str, Any] = {"method": "sampling/createMessage", "params": {**SAMPLING["params"], "includeContext": "none"}}
ROOTS: dict[str, Any] = {"method": "roots/list", "params": {}}
ALL_CAPS: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}, "sampling": {"tools": {}, "context": {}}, "roots": {}}


def mrtr_server(**kw: Any) -> mcpwire.Server:
    server = make_server(**kw)
    for name in ("confirm", "other"):
        server.add_tool(Tool(name=name, description=name, input_schema=OBJ))
    server.add_resource(Resource(uri="test://r", name="r"))
    server.add_prompt(Prompt(name="ctx", description="ctx"))
    server.add_prompt(Prompt(name="confirm", description="same name as a tool"))
    return server


SERVER = mrtr_server()


def call_tool(name: str = "confirm", arguments: Any = UNSET, rid: Any = 1, caps: Any = None, **params: Any) -> Any:
    p: dict[str, Any] = {"name": name, **params}
    if arguments is not UNSET:
        p["arguments"] = arguments
    p["_meta"] = meta(caps=caps if caps is not None else ALL_CAPS)
    return request("tools/call", p, id=rid)


def round1(body: Any = None, *, requests: Any = None, state: Any = UNSET, server: mcpwire.Server = SERVER,
           now: float = NOW, **kw: Any) -> Any:
    ex = exchange(server, body if body is not None else call_tool(), now=now)
    return assemble(ex.input_required(requests, state=state, **kw), _method(ex))


def _method(ex: mcpwire.HttpExchange) -> str:
    methods: dict[type, str] = {mcpwire.ToolCall: "tools/call", mcpwire.ResourceRead: "resources/read",
                                mcpwire.PromptGet: "prompts/get"}
    return methods[type(ev(ex))]


def token_of(reply: Any) -> str:
    token = reply.result["requestState"]
    assert isinstance(token, str)
    return token


# --- round 1 (10.1) ---------------------------------------------------------------------------------


def test_input_required_with_requests_and_no_state() -> None:
    reply = round1(requests={"user_name": ELICIT_FORM, "greeting": SAMPLING, "client_roots": ROOTS})
    assert reply.status == 200
    result = reply.result
    assert result["resultType"] == "input_required"
    assert result["inputRequests"] == {"user_name": ELICIT_FORM, "greeting": SAMPLING, "client_roots": ROOTS}
    assert isinstance(result["requestState"], str)  # always: it records what each id asked
    assert result["_meta"][SERVER_INFO_META_KEY] == {"name": "test-server", "version": "1.0.0"}


def test_input_required_with_state_only() -> None:
    result = round1(state={"step": 1}).result
    assert "inputRequests" not in result and result["requestState"].startswith("mcpwire1.")


def test_input_requests_may_be_wire_structs() -> None:
    requests = {
        "go": ElicitRequest(params=ElicitRequestURLParams(message="Sign in", url="https://example.com/a")),
        "ask": CreateMessageRequest(params=CreateMessageRequestParams(
            messages=[SamplingMessage(role="user", content=TextContent(text="hi"))], max_tokens=5)),
    }
    result = round1(requests=requests).result
    assert result["inputRequests"]["go"]["params"]["mode"] == "url"
    assert result["inputRequests"]["ask"]["method"] == "sampling/createMessage"


def test_input_required_needs_requests_or_state() -> None:
    ex = exchange(SERVER, call_tool())
    with pytest.raises(mcpwire.LocalProtocolError, match="needs input requests or a state"):
        ex.input_required()
    with pytest.raises(mcpwire.LocalProtocolError, match="needs input requests or a state"):
        ex.input_required({})
    ex.cancel()


def test_unknown_input_request_method_is_a_host_error() -> None:
    ex = exchange(SERVER, call_tool())
    with pytest.raises(mcpwire.LocalProtocolError, match="Input request 'x' is not an elicitation, sampling or roots request"):
        ex.input_required({"x": {"method": "ping", "params": {}}})
    ex.cancel()


def test_every_mrtr_method_may_need_input() -> None:
    read = request("resources/read", {"uri": "test://r", "_meta": meta(caps=ALL_CAPS)})
    assert round1(read, requests={"r": ROOTS}).result["resultType"] == "input_required"
    get = request("prompts/get", {"name": "ctx", "_meta": meta(caps=ALL_CAPS)})
    assert round1(get, requests={"c": ELICIT_FORM}).result["resultType"] == "input_required"


def test_list_methods_never_return_input_required() -> None:
    for method in ("tools/list", "prompts/list", "resources/list", "resources/templates/list", "server/discover"):
        assert call(SERVER, request(method)).result["resultType"] == "complete"


# --- capability check (10.2) ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("caps", "requests", "required"),
    [
        ({}, {"u": ELICIT_URL, "s": SAMPLING_TOOLS}, {"elicitation": {"url": {}}, "sampling": {"tools": {}}}),
        ({}, {"s": SAMPLING}, {"sampling": {}}),
        ({}, {"e": ELICIT_FORM}, {"elicitation": {"form": {}}}),
        ({}, {"r": ROOTS}, {"roots": {}}),
        ({}, {"e": ELICIT_FORM, "u": ELICIT_URL}, {"elicitation": {"form": {}, "url": {}}}),
        ({"elicitation": {}}, {"u": ELICIT_URL}, {"elicitation": {"url": {}}}),
        ({"elicitation": {"url": {}}}, {"e": ELICIT_FORM_NO_MODE}, {"elicitation": {"form": {}}}),
        ({"sampling": {}}, {"s": SAMPLING_TOOLS, "e": ELICIT_FORM}, {"sampling": {"tools": {}}, "elicitation": {"form": {}}}),
        ({"sampling": {"tools": {}}}, {"s": SAMPLING_CONTEXT}, {"sampling": {"context": {}}}),
        ({"sampling": {}, "elicitation": {"form": {}}}, {"s": SAMPLING, "r": ROOTS, "e": ELICIT_FORM}, {"roots": {}}),
    ],
    ids=range(10),
)
def test_missing_capabilities_are_32021_with_merged_required_capabilities(
    caps: dict[str, Any], requests: dict[str, Any], required: dict[str, Any]
) -> None:
    reply = round1(call_tool(caps=caps, rid="cap"), requests=requests, state={"x": 1})
    error_of(reply, -32021, "cap", data={"requiredCapabilities": required},
             message_text="Missing required client capability")


@pytest.mark.parametrize(
    ("caps", "requests"),
    [
        ({"elicitation": {}}, {"e": ELICIT_FORM}),
        ({"elicitation": {"form": {}}}, {"e": ELICIT_FORM_NO_MODE}),
        ({"elicitation": {"url": {}}}, {"u": ELICIT_URL}),
        ({"sampling": {}}, {"s": SAMPLING, "n": SAMPLING_NO_CONTEXT}),
        ({"sampling": {"tools": {}, "context": {}}}, {"t": SAMPLING_TOOLS, "c": SAMPLING_CONTEXT}),
        ({"roots": {}}, {"r": ROOTS}),
    ],
    ids=range(6),
)
def test_declared_capabilities_allow_input_requests(caps: dict[str, Any], requests: dict[str, Any]) -> None:
    assert round1(call_tool(caps=caps), requests=requests).result["resultType"] == "input_required"


def test_request_meta_tells_the_host_what_is_missing_before_it_asks() -> None:
    ex = exchange(SERVER, call_tool(caps={"sampling": {}}))
    requests = {"u": ELICIT_URL, "s": SAMPLING_TOOLS, "ok": SAMPLING}
    missing = ev(ex).meta.missing_capabilities(requests)
    assert missing == {"elicitation": {"url": {}}, "sampling": {"tools": {}}}
    assert ev(ex).meta.missing_capabilities({"ok": SAMPLING}) == {}
    reply = assemble(ex.input_required(requests), "tools/call")
    error_of(reply, -32021, 1, data={"requiredCapabilities": missing})


def test_capability_check_applies_to_resources_and_prompts() -> None:
    read = request("resources/read", {"uri": "test://r", "_meta": meta()}, id="rr")
    error_of(round1(read, requests={"s": SAMPLING}), -32021, "rr", data={"requiredCapabilities": {"sampling": {}}})
    get = request("prompts/get", {"name": "ctx", "_meta": meta()}, id="pg")
    error_of(round1(get, requests={"r": ROOTS}), -32021, "pg", data={"requiredCapabilities": {"roots": {}}})


# --- round 2: admission of inputResponses / requestState (10.3) ------------------------------------

MRTR_BODIES = {
    "tools/call": lambda **p: request("tools/call", {"name": "confirm", **p}, id="m"),
    "resources/read": lambda **p: request("resources/read", {"uri": "test://r", **p}, id="m"),
    "prompts/get": lambda **p: request("prompts/get", {"name": "ctx", **p}, id="m"),
}


@pytest.mark.parametrize("method", list(MRTR_BODIES))
@pytest.mark.parametrize("value", [[], "x", 5, None, True, [{"a": {}}]], ids=json.dumps)
def test_input_responses_not_an_object(method: str, value: Any) -> None:
    reply = call(SERVER, MRTR_BODIES[method](inputResponses=value))
    error_of(reply, -32602, "m", message_text="inputResponses must be an object")


@pytest.mark.parametrize("method", list(MRTR_BODIES))
@pytest.mark.parametrize("value", [{"user_name": 12345}, {"a": {}, "b": "x"}, {"a": None}, {"a": [{}]}],
                         ids=json.dumps)
def test_input_responses_values_must_be_objects(method: str, value: Any) -> None:
    reply = call(SERVER, MRTR_BODIES[method](inputResponses=value))
    error_of(reply, -32602, "m", message_text="inputResponses must map string IDs to bare result objects")


@pytest.mark.parametrize("method", list(MRTR_BODIES))
@pytest.mark.parametrize("value", [5, None, {}, ["s"], True], ids=json.dumps)
def test_request_state_not_a_string(method: str, value: Any) -> None:
    reply = call(SERVER, MRTR_BODIES[method](requestState=value))
    error_of(reply, -32602, "m", message_text="requestState must be a string")


def test_input_responses_error_beats_request_state_error() -> None:
    reply = call(SERVER, MRTR_BODIES["tools/call"](inputResponses=[], requestState=5))
    error_of(reply, -32602, "m", message_text="inputResponses must be an object")


def test_unknown_tool_beats_mrtr_checks() -> None:
    body = request("tools/call", {"name": "nope", "inputResponses": [], "requestState": 5}, id="u")
    error_of(call(SERVER, body), -32602, "u", message_text="Unknown tool: nope")


def test_bad_request_state_beats_argument_validation() -> None:
    server = make_server(validator=mcpwire.jsonschema_validator())
    server.add_tool(Tool(name="need", description="d", input_schema={"type": "object", "required": ["x"]}))
    body = request("tools/call", {"name": "need", "arguments": {}, "requestState": "forged"}, id="s")
    error_of(call(server, body), -32602, "s", message_text="Invalid or expired request state")


def test_responses_without_state_are_passed_through() -> None:
    responses = {"user_name": {"action": "accept", "content": {"name": "Alice"}}, "extra": {"ignored": True}}
    ex = exchange(SERVER, call_tool(inputResponses=responses))
    assert ev(ex).input_responses == responses and ev(ex).state is None
    ex.cancel()


def test_first_round_has_no_responses() -> None:
    ex = exchange(SERVER, call_tool())
    assert ev(ex).input_responses is None and ev(ex).state is None
    ex.cancel()


# --- round 2: the token (10.4) --------------------------------------------------------------------------


def retry(token: str, *, name: str = "confirm", arguments: Any = UNSET, now: float = NOW, rid: Any = 2,
          caps: Any = None, server: mcpwire.Server = SERVER, responses: Any = UNSET) -> Any:
    params: dict[str, Any] = {"requestState": token}
    if responses is not UNSET:
        params["inputResponses"] = responses
    return post_or_exchange(server, call_tool(name, arguments, rid=rid, caps=caps, **params), now)


def post_or_exchange(server: mcpwire.Server, body: Any, now: float) -> Any:
    from schema_check import post, reply_of
    answer = post(server, body, now=now)
    return answer if isinstance(answer, mcpwire.HttpExchange) else reply_of(answer, body["method"])


def rejected(answer: Any, rid: Any = 2) -> None:
    assert not isinstance(answer, mcpwire.HttpExchange), f"accepted: {ev(answer)}"
    error = error_of(answer, -32602, rid, message_text="Invalid or expired request state")
    assert "data" not in error


def accepted(answer: Any) -> Any:
    assert isinstance(answer, mcpwire.HttpExchange), f"rejected: {answer.body!r}"
    answer.cancel()
    return ev(answer)


def test_round_trip_returns_the_state_and_the_responses() -> None:
    token = token_of(round1(call_tool(arguments={"q": 1}), requests={"confirm": ELICIT_FORM},
                            state={"step": 1, "items": ("a", "b")}))
    responses = {"confirm": {"action": "accept", "content": {"name": "Alice"}}}
    event = accepted(retry(token, arguments={"q": 1}, responses=responses, now=NOW + 10))
    assert event.state == {"step": 1, "items": ["a", "b"]}
    assert event.input_responses == responses


def test_multi_round_states_differ() -> None:
    token1 = token_of(round1(state={"step": 1}))
    ex = retry(token1)
    assert isinstance(ex, mcpwire.HttpExchange)
    token2 = token_of(assemble(ex.input_required({"c": ELICIT_FORM}, state={"step": 2}), "tools/call"))
    assert token2 != token1
    assert accepted(retry(token2, rid=3)).state == {"step": 2}
    assert accepted(retry(token1, rid=4)).state == {"step": 1}  # replayable until expiry (signed, not stored)


def test_tampered_states_are_rejected() -> None:
    token = token_of(round1(state={"admin": False}))
    prefix, kid, payload, mac = token.split(".")
    data = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    data[3] = {"admin": True}
    forged = base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()
    for bad in [token + "-TAMPERED", token[:-1], f"{prefix}.{kid}.{forged}.{mac}", f"{prefix}.zz.{payload}.{mac}",
                f"mcpcur1.{kid}.{payload}.{mac}", "", "x" * 20_000, token.upper(), token + "\u00e9"]:
        rejected(retry(bad))
    accepted(retry(token))


def test_state_from_another_tool_is_rejected() -> None:
    token = token_of(round1(call_tool("confirm"), state=1))
    rejected(retry(token, name="other"))


def test_state_from_other_arguments_is_rejected_and_argument_order_does_not_matter() -> None:
    token = token_of(round1(call_tool(arguments={"a": 1, "b": [1, 2]}), state=1))
    rejected(retry(token, arguments={"a": 2, "b": [1, 2]}))
    rejected(retry(token, arguments={"a": 1, "b": [2, 1]}))
    rejected(retry(token))  # no arguments at all
    accepted(retry(token, arguments={"b": [1, 2], "a": 1}))


def test_state_is_not_bound_to_meta_or_responses() -> None:
    token = token_of(round1(call_tool(caps={"elicitation": {}}), state=1))
    accepted(retry(token, caps={"sampling": {}}, responses={"x": {"action": "cancel"}}))


def test_state_from_another_method_is_rejected() -> None:
    token = token_of(round1(state=1))
    body = request("prompts/get", {"name": "confirm", "requestState": token}, id=2)
    rejected(post_or_exchange(SERVER, body, NOW))
    read_token = token_of(round1(request("resources/read", {"uri": "test://r"}), state=1))
    rejected(retry(read_token))


def test_state_for_another_resource_uri_is_rejected() -> None:
    server = mrtr_server()
    server.add_resource(Resource(uri="test://s", name="s"))
    token = token_of(round1(request("resources/read", {"uri": "test://r"}), state=1, server=server))
    body = request("resources/read", {"uri": "test://s", "requestState": token}, id=2)
    rejected(post_or_exchange(server, body, NOW))
    body = request("resources/read", {"uri": "test://r", "requestState": token}, id=2)
    accepted(post_or_exchange(server, body, NOW))


def test_state_for_other_prompt_arguments_is_rejected() -> None:
    token = token_of(round1(request("prompts/get", {"name": "ctx", "arguments": {"a": "1"}}), state=1))
    body = request("prompts/get", {"name": "ctx", "arguments": {"a": "2"}, "requestState": token}, id=2)
    rejected(post_or_exchange(SERVER, body, NOW))


def test_state_from_another_keyring_is_rejected_and_a_shared_one_accepts() -> None:
    token = token_of(round1(state=1))
    rejected(retry(token, server=mrtr_server(keyring=mcpwire.Keyring.single(b"z" * 32))))
    accepted(retry(token, server=mrtr_server()))
    rotated = mrtr_server(keyring=mcpwire.Keyring({"k1": b"k" * 32, "k2": b"n" * 32}, "k2"))
    accepted(retry(token, server=rotated))


def test_state_expires_with_now() -> None:
    token = token_of(round1(state=1, now=NOW))
    accepted(retry(token, now=NOW + 299.9))
    rejected(retry(token, now=NOW + 300))
    rejected(retry(token, now=NOW + 10_000))


def test_state_issued_in_the_future_is_rejected() -> None:
    token = token_of(round1(state=1, now=NOW))
    accepted(retry(token, now=NOW - 60))  # within the allowed clock skew
    rejected(retry(token, now=NOW - 61))


def test_state_ttl_per_answer_and_per_server() -> None:
    token = token_of(round1(state=1, ttl_seconds=5))
    accepted(retry(token, now=NOW + 4))
    rejected(retry(token, now=NOW + 5))
    short = mrtr_server(request_state_ttl=1)
    token = token_of(round1(state=1, server=short))
    rejected(retry(token, now=NOW + 1, server=short))
    ex = exchange(SERVER, call_tool())
    with pytest.raises(mcpwire.LocalProtocolError):
        ex.input_required(state=1, ttl_seconds=901)  # over the 900 s maximum
    ex.cancel()


def test_oversize_state_is_a_host_error() -> None:
    # Tokens are bounded (16 KiB): the host must carry less, it is never sent.
    ex = exchange(SERVER, call_tool())
    with pytest.raises(mcpwire.LocalProtocolError):
        ex.input_required(state="x" * 20_000)
    with pytest.raises(mcpwire.LocalProtocolError):
        ex.input_required(state=object())  # not JSON
    assert ex.state is mcpwire.ExchangeState.OPEN
    assert token_of(assemble(ex.input_required(state="x" * 1000), "tools/call"))


def test_state_survives_the_round_trip_byte_for_byte() -> None:
    state = {"unicode": "\u00e9\U0001f600", "n": [1, 2.5, None, True], "nested": {"k": "v"}}
    token = token_of(round1(state=state))
    assert token.isascii()
    assert accepted(retry(token)).state == state


def test_host_completes_after_the_retry() -> None:
    token = token_of(round1(state="s"))
    ex = retry(token)
    reply = assemble(ex.complete(CallToolResult(content=[TextContent(text="state-ok")])), "tools/call")
    assert reply.result["resultType"] == "complete"


def test_read_and_prompt_complete_after_the_retry() -> None:
    read_token = token_of(round1(request("resources/read", {"uri": "test://r"}), state=1))
    ex = post_or_exchange(SERVER, request("resources/read", {"uri": "test://r", "requestState": read_token}), NOW)
    assert assemble(ex.complete(ReadResourceResult(contents=[])), "resources/read").result["ttlMs"] == 0
    get_token = token_of(round1(request("prompts/get", {"name": "ctx"}), state=1))
    ex = post_or_exchange(SERVER, request("prompts/get", {"name": "ctx", "requestState": get_token}), NOW)
    assert assemble(ex.complete(GetPromptResult(messages=[])), "prompts/get").status == 200
