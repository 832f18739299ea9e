"""Tests of conformance/fixture.py: every tool, resource, template and prompt of wire reference
section 16, driven in-process through ``app.server.receive_http`` and ``app.dispatch`` (no
sockets), plus one subprocess test of the command line over real HTTP.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import anyio
import pytest
import trio
from schema_check import assemble

import mcpwire
from mcpwire import HttpExchange, HttpListenStream, HttpRequest, ResponseBody, ResponseHead

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "conformance"))

import fixture

VERSION = "2026-07-28"
ALL_CAPS: dict[str, Any] = {"sampling": {}, "elicitation": {}, "roots": {"listChanged": True}}
NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


# -- harness ---------------------------------------------------------------------------------------
class Reply:
    """One HTTP response: status, the JSON-RPC messages it carried (SSE or JSON), and the final one."""

    def __init__(self, status: int, content_type: str, messages: list[dict[str, Any]]) -> None:
        self.status = status
        self.content_type = content_type
        self.messages = messages
        self.final = messages[-1] if messages else {}
        self.notifications = [m for m in messages if "method" in m and "id" not in m]

    @property
    def result(self) -> dict[str, Any]:
        assert "result" in self.final, self.final
        result: dict[str, Any] = self.final["result"]
        return result

    @property
    def error(self) -> dict[str, Any]:
        assert "error" in self.final, self.final
        error: dict[str, Any] = self.final["error"]
        return error


def _parse(events: list[ResponseHead | ResponseBody], method: str | None, *, final: bool = True) -> Reply:
    """Decode one response; every message in it is validated against the official schema
    (``schema_check.assemble``), as the runner's wire-schema-valid check does."""
    checked = assemble(events, method, final=final)
    content_type = checked.headers.get(b"content-type", b"").decode()
    return Reply(checked.status, content_type, list(checked.messages))


def _headers(method: str, params: dict[str, Any], extra: dict[str, str] | None) -> list[tuple[bytes, bytes]]:
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": VERSION,
        "Mcp-Method": method,
    }
    name = params.get("uri") if method == "resources/read" else params.get("name")
    if method in ("tools/call", "prompts/get", "resources/read") and isinstance(name, str):
        headers["Mcp-Name"] = name
    headers.update(extra or {})
    return [(k.encode(), v.encode()) for k, v in headers.items()]


def request(
    app: Any,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    caps: dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
    request_id: int = 1,
) -> Reply:
    """POST one request to the app in-process and collect everything sent for it."""
    params = dict(params or {})
    params["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": ALL_CAPS if caps is None else caps,
        "io.modelcontextprotocol/clientInfo": {"name": "test-fixture", "version": "1.0.0"},
        **(meta or {}),
    }
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()
    http = HttpRequest(method="POST", target="/mcp", headers=_headers(method, params, headers), body=body)

    async def run() -> Reply:
        answer = app.server.receive_http(http, now=time.time())
        if isinstance(answer, tuple):
            return _parse(list(answer), method)
        assert isinstance(answer, HttpExchange), answer
        events: list[ResponseHead | ResponseBody] = []

        async def send(out: list[ResponseHead | ResponseBody]) -> None:
            events.extend(out)

        await app.dispatch(answer, send)
        return _parse(events, method)

    return trio.run(run)


def call_tool(app: Any, name: str, arguments: dict[str, Any] | None = None, **kwargs: Any) -> Reply:
    params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
    for key in ("inputResponses", "requestState"):
        if key in kwargs:
            params[key] = kwargs.pop(key)
    return request(app, "tools/call", params, **kwargs)


def accept(content: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": content}


def sampled(text: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": {"type": "text", "text": text},
        "model": "test-model",
        "stopReason": "endTurn",
    }


ROOTS = {"roots": [{"uri": "file:///test/root", "name": "Test Root"}]}
SERVER_INFO = {"name": "mcpwire-conformance", "version": "0.1.0"}


def text_of(result: dict[str, Any]) -> str:
    return " ".join(block["text"] for block in result["content"] if block["type"] == "text")


@pytest.fixture(scope="module")
def app() -> Any:
    return fixture.build_app()


# -- discovery and lists ------------------------------------------------------------------------------
def test_discover_identifies_and_advertises(app: Any) -> None:
    reply = request(app, "server/discover")
    assert reply.status == 200
    result = reply.result
    assert result["resultType"] == "complete"
    assert result["supportedVersions"] == [VERSION]
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == SERVER_INFO
    caps = result["capabilities"]
    assert caps["tools"]["listChanged"] is True
    assert caps["prompts"]["listChanged"] is True
    assert {"resources", "completions", "logging"} <= set(caps)
    assert (result["ttlMs"], result["cacheScope"]) == (0, "private")


EXPECTED_TOOLS = {
    "a_header_probe",
    "custom_header_region",
    "json_schema_2020_12_tool",
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_error_handling",
    "test_tool_with_progress",
    "test_missing_capability",
    "test_logging_tool",
    "test_streaming_elicitation",
    "test_trigger_tool_change",
    "test_trigger_prompt_change",
    "test_input_required_result_elicitation",
    "test_input_required_result_sampling",
    "test_input_required_result_list_roots",
    "test_input_required_result_request_state",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_multi_round",
    "test_input_required_result_tampered_state",
    "test_input_required_result_capabilities",
}


def test_tools_list(app: Any) -> None:
    result = request(app, "tools/list").result
    tools = result["tools"]
    names = [t["name"] for t in tools]
    assert set(names) >= EXPECTED_TOOLS
    assert names == sorted(names) and names[0] == "a_header_probe"
    for tool in tools:
        assert NAME_RE.match(tool["name"]) and tool["description"] and tool["inputSchema"]["type"] == "object"
    assert (result["ttlMs"], result["cacheScope"]) == (0, "private")
    assert names == [t["name"] for t in request(app, "tools/list").result["tools"]]
    by_name = {t["name"]: t for t in tools}
    assert by_name["json_schema_2020_12_tool"]["inputSchema"] == fixture.JSON_SCHEMA_2020_12
    region = by_name["custom_header_region"]["inputSchema"]["properties"]["region"]
    assert region == {"type": "string", "description": "A region name", "x-mcp-header": "Region"}


def test_lists_never_need_input(app: Any) -> None:
    for method in ("tools/list", "prompts/list", "resources/list", "resources/templates/list"):
        result = request(app, method).result
        assert result["resultType"] == "complete"
        assert isinstance(result["ttlMs"], int) and result["cacheScope"] in ("public", "private")


# -- content tools ---------------------------------------------------------------------------------
def test_simple_text_without_arguments_key(app: Any) -> None:
    reply = request(app, "tools/call", {"name": "test_simple_text"})
    assert reply.status == 200
    assert reply.result["content"] == [{"type": "text", "text": "This is a simple text response for testing."}]
    assert reply.result["_meta"]["io.modelcontextprotocol/serverInfo"] == SERVER_INFO


def test_image_content(app: Any) -> None:
    [block] = call_tool(app, "test_image_content").result["content"]
    assert block["type"] == "image" and block["mimeType"] == "image/png"
    assert base64.b64decode(block["data"]).startswith(b"\x89PNG")


def test_audio_content(app: Any) -> None:
    [block] = call_tool(app, "test_audio_content").result["content"]
    assert block["type"] == "audio" and block["mimeType"] == "audio/wav"
    assert base64.b64decode(block["data"]).startswith(b"RIFF")


def test_embedded_resource(app: Any) -> None:
    [block] = call_tool(app, "test_embedded_resource").result["content"]
    assert block["type"] == "resource"
    resource = block["resource"]
    assert resource["uri"] and resource["mimeType"] == "text/plain" and resource["text"]


def test_multiple_content_types(app: Any) -> None:
    content = call_tool(app, "test_multiple_content_types").result["content"]
    assert [b["type"] for b in content] == ["text", "image", "resource"]
    assert json.loads(content[2]["resource"]["text"]) == {"test": "data", "value": 123}


def test_error_handling(app: Any) -> None:
    result = call_tool(app, "test_error_handling").result
    assert result["isError"] is True and result["content"][0]["text"]


# -- progress, logging, capabilities, streams ------------------------------------------------------------
def test_progress_with_token(app: Any) -> None:
    reply = call_tool(app, "test_tool_with_progress", meta={"progressToken": "progress-test-1"})
    assert reply.status == 200 and reply.content_type.startswith("text/event-stream")
    progress = [n["params"] for n in reply.notifications if n["method"] == "notifications/progress"]
    assert [p["progress"] for p in progress] == [0, 50, 100]
    assert all(p["progressToken"] == "progress-test-1" and p["total"] == 100 and p["message"] for p in progress)
    assert reply.messages[-1]["id"] == 1 and text_of(reply.result) == "Progress computation completed: 5050"


def test_progress_without_token_is_plain_json(app: Any) -> None:
    reply = call_tool(app, "test_tool_with_progress")
    assert reply.content_type == "application/json" and reply.notifications == []
    assert reply.result["resultType"] == "complete"


def test_logging_tool_without_level_sends_no_log(app: Any) -> None:
    reply = call_tool(app, "test_logging_tool")
    assert reply.notifications == [] and text_of(reply.result) == "Logged at every level"


@pytest.mark.parametrize(("level", "count"), [("debug", 8), ("error", 4), ("emergency", 1)])
def test_logging_tool_gated_by_level(app: Any, level: str, count: int) -> None:
    reply = call_tool(app, "test_logging_tool", meta={"io.modelcontextprotocol/logLevel": level})
    logs = [n["params"] for n in reply.notifications if n["method"] == "notifications/message"]
    assert len(logs) == count
    assert all(p["logger"] == "conformance" for p in logs)
    assert logs[0]["level"] == level and reply.result["resultType"] == "complete"


def test_missing_capability_is_32021(app: Any) -> None:
    reply = call_tool(app, "test_missing_capability", caps={})
    assert reply.status == 400
    assert reply.final["id"] == 1
    assert reply.error["code"] == -32021
    assert reply.error["data"]["requiredCapabilities"] == {"sampling": {}}


def test_missing_capability_with_sampling_round_trips(app: Any) -> None:
    first = call_tool(app, "test_missing_capability", caps={"sampling": {}}).result
    assert first["resultType"] == "input_required"
    [(key, req)] = first["inputRequests"].items()
    assert req["method"] == "sampling/createMessage"
    second = call_tool(app, "test_missing_capability", caps={"sampling": {}}, inputResponses={key: sampled("hi")})
    assert second.result["resultType"] == "complete" and "hi" in text_of(second.result)


def test_streaming_elicitation_returns_input_required(app: Any) -> None:
    reply = call_tool(app, "test_streaming_elicitation", caps={"elicitation": {}})
    assert all("id" in m or m["method"].startswith("notifications/") for m in reply.messages)
    result = reply.result
    assert result["resultType"] == "input_required"
    assert result["inputRequests"]["user_name"]["method"] == "elicitation/create"


def test_trigger_tools_notify_listen_streams(app: Any) -> None:
    async def run() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        streams = {}
        for flag in ("toolsListChanged", "promptsListChanged"):
            params = {
                "notifications": {flag: True},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": VERSION,
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            }
            body = json.dumps({"jsonrpc": "2.0", "id": flag, "method": "subscriptions/listen", "params": params})
            http = HttpRequest(
                method="POST", target="/mcp", headers=_headers("subscriptions/listen", params, None), body=body.encode()
            )
            stream = app.server.receive_http(http, now=time.time())
            assert isinstance(stream, HttpListenStream)
            streams[flag] = (stream, app.open_stream(stream), stream.start())
        for tool in ("test_trigger_tool_change", "test_trigger_prompt_change"):
            assert (await _call_async(app, tool)).result["resultType"] == "complete"
        frames: dict[str, list[dict[str, Any]]] = {}
        for flag, (stream, channel, start) in streams.items():
            out = list(start)
            while True:
                try:
                    out.extend(channel.receive_nowait())
                except anyio.WouldBlock:
                    break
            frames[flag] = _parse(out, "subscriptions/listen", final=False).messages
            app.close_stream(stream)
        return frames["toolsListChanged"], frames["promptsListChanged"]

    tools_frames, prompts_frames = trio.run(run)
    for frames, method, sub_id in (
        (tools_frames, "notifications/tools/list_changed", "toolsListChanged"),
        (prompts_frames, "notifications/prompts/list_changed", "promptsListChanged"),
    ):
        assert frames[0]["method"] == "notifications/subscriptions/acknowledged"
        assert [f["method"] for f in frames[1:]] == [method]
        assert all(f["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == sub_id for f in frames)


async def _call_async(app: Any, name: str) -> Reply:
    params: dict[str, Any] = {
        "name": name,
        "arguments": {},
        "_meta": {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": {}},
    }
    body = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params}).encode()
    exchange = app.server.receive_http(
        HttpRequest(method="POST", target="/mcp", headers=_headers("tools/call", params, None), body=body),
        now=time.time(),
    )
    events: list[ResponseHead | ResponseBody] = []

    async def send(out: list[ResponseHead | ResponseBody]) -> None:
        events.extend(out)

    await app.dispatch(exchange, send)
    return _parse(events, "tools/call")


# -- multi round-trip tools --------------------------------------------------------------------------
ELICIT = "test_input_required_result_elicitation"


def test_mrtr_elicitation_round_trip(app: Any) -> None:
    first = call_tool(app, ELICIT).result
    assert first["resultType"] == "input_required"
    req = first["inputRequests"]["user_name"]
    assert req["method"] == "elicitation/create"
    assert req["params"]["requestedSchema"]["properties"]["name"] == {"type": "string"}
    second = call_tool(app, ELICIT, inputResponses={"user_name": accept({"name": "Alice"})}, request_id=2)
    assert second.result["resultType"] == "complete" and text_of(second.result) == "Hello, Alice!"


def test_mrtr_elicitation_ignores_extra_responses(app: Any) -> None:
    reply = call_tool(
        app,
        ELICIT,
        inputResponses={
            "user_name": accept({"name": "Alice"}),
            "unknown_extra_key": accept({"foo": "bar"}),
            "another_unexpected": accept({"baz": 123}),
        },
    )
    assert reply.result["resultType"] == "complete"


def test_mrtr_elicitation_rerequests_missing_answer(app: Any) -> None:
    reply = call_tool(app, ELICIT, inputResponses={"wrong_key": accept({"data": "wrong"})})
    assert reply.result["resultType"] == "input_required"
    assert list(reply.result["inputRequests"]) == ["user_name"]
    # An accepted form that lacks the field asked for is asked again too.
    reply = call_tool(app, ELICIT, inputResponses={"user_name": accept({"other": "x"})})
    assert reply.result["resultType"] == "input_required"


@pytest.mark.parametrize(
    "responses", [{"user_name": 12345}, None, {"user_name": {"foo": 1}}, {"user_name": {"action": "maybe"}}]
)
def test_mrtr_elicitation_rejects_malformed_responses(app: Any, responses: Any) -> None:
    reply = call_tool(app, ELICIT, inputResponses=responses)
    assert reply.status == 400 and reply.error["code"] == -32602
    assert "result" not in reply.final


def test_mrtr_elicitation_decline_completes(app: Any) -> None:
    reply = call_tool(app, ELICIT, inputResponses={"user_name": {"action": "decline"}})
    assert reply.result["resultType"] == "complete" and "decline" in text_of(reply.result)


def test_mrtr_sampling_round_trip(app: Any) -> None:
    first = call_tool(app, "test_input_required_result_sampling").result
    [(key, req)] = first["inputRequests"].items()
    assert key == "capital_question" and req["method"] == "sampling/createMessage"
    assert req["params"]["maxTokens"] == 100
    assert req["params"]["messages"][0]["content"]["text"] == "What is the capital of France?"
    reply = call_tool(
        app, "test_input_required_result_sampling", inputResponses={key: sampled("The capital of France is Paris.")}
    )
    assert reply.result["resultType"] == "complete" and "Paris" in text_of(reply.result)


def test_mrtr_list_roots_round_trip(app: Any) -> None:
    first = call_tool(app, "test_input_required_result_list_roots").result
    [(key, req)] = first["inputRequests"].items()
    assert key == "client_roots" and req == {"method": "roots/list", "params": {}}
    reply = call_tool(app, "test_input_required_result_list_roots", inputResponses={key: ROOTS})
    assert reply.result["resultType"] == "complete" and "file:///test/root" in text_of(reply.result)


def test_mrtr_request_state_round_trip(app: Any) -> None:
    name = "test_input_required_result_request_state"
    first = call_tool(app, name).result
    assert first["resultType"] == "input_required" and isinstance(first["requestState"], str)
    assert first["inputRequests"]["confirm"]["params"]["requestedSchema"]["properties"]["ok"] == {"type": "boolean"}
    answers = {"confirm": accept({"ok": True})}
    second = call_tool(app, name, inputResponses=answers, requestState=first["requestState"])
    assert second.result["resultType"] == "complete" and "state-ok" in text_of(second.result)
    # Without the state it handed out, the tool starts over rather than trusting the answer.
    again = call_tool(app, name, inputResponses=answers)
    assert again.result["resultType"] == "input_required" and again.result["requestState"]


def test_mrtr_multiple_inputs_round_trip(app: Any) -> None:
    name = "test_input_required_result_multiple_inputs"
    first = call_tool(app, name).result
    requests = first["inputRequests"]
    assert {r["method"] for r in requests.values()} == {"elicitation/create", "sampling/createMessage", "roots/list"}
    assert first["requestState"]
    answers = {"user_name": accept({"name": "Alice"}), "greeting": sampled("Hello there!"), "client_roots": ROOTS}
    done = call_tool(app, name, inputResponses=answers, requestState=first["requestState"]).result
    assert done["resultType"] == "complete" and text_of(done).startswith("Alice: Hello there!")


def test_mrtr_multiple_inputs_partial_answers_accumulate(app: Any) -> None:
    name = "test_input_required_result_multiple_inputs"
    first = call_tool(app, name).result
    partial = call_tool(
        app, name, inputResponses={"user_name": accept({"name": "Bob"})}, requestState=first["requestState"]
    ).result
    assert partial["resultType"] == "input_required"
    assert set(partial["inputRequests"]) == {"greeting", "client_roots"}
    done = call_tool(
        app,
        name,
        inputResponses={"greeting": sampled("Hi"), "client_roots": ROOTS},
        requestState=partial["requestState"],
    ).result
    assert done["resultType"] == "complete" and text_of(done).startswith("Bob: Hi")


def test_mrtr_multi_round(app: Any) -> None:
    name = "test_input_required_result_multi_round"
    r1 = call_tool(app, name).result
    assert r1["resultType"] == "input_required" and list(r1["inputRequests"]) == ["step1"] and r1["requestState"]
    r2 = call_tool(
        app, name, inputResponses={"step1": accept({"name": "Alice"})}, requestState=r1["requestState"]
    ).result
    assert r2["resultType"] == "input_required" and list(r2["inputRequests"]) == ["step2"]
    assert r2["requestState"] and r2["requestState"] != r1["requestState"]
    r3 = call_tool(
        app, name, inputResponses={"step2": accept({"color": "blue"})}, requestState=r2["requestState"]
    ).result
    assert r3["resultType"] == "complete" and text_of(r3) == "Alice likes blue"


def test_mrtr_tampered_state_is_rejected(app: Any) -> None:
    name = "test_input_required_result_tampered_state"
    first = call_tool(app, name).result
    assert first["resultType"] == "input_required" and first["requestState"] and first["inputRequests"]
    key = next(iter(first["inputRequests"]))
    answers = {key: accept({"ok": True})}
    bad = call_tool(app, name, inputResponses=answers, requestState=first["requestState"] + "-TAMPERED")
    assert bad.status == 400 and bad.error["code"] == -32602
    good = call_tool(app, name, inputResponses=answers, requestState=first["requestState"])
    assert good.result["resultType"] == "complete"


def test_mrtr_state_is_bound_to_its_tool(app: Any) -> None:
    state = call_tool(app, "test_input_required_result_tampered_state").result["requestState"]
    reply = call_tool(
        app,
        "test_input_required_result_request_state",
        inputResponses={"confirm": accept({"ok": True})},
        requestState=state,
    )
    assert reply.error["code"] == -32602


def test_mrtr_capabilities_filtering(app: Any) -> None:
    name = "test_input_required_result_capabilities"
    first = call_tool(app, name, caps={"sampling": {}}).result
    assert first["resultType"] == "input_required"
    methods = [r["method"] for r in first["inputRequests"].values()]
    assert methods == ["sampling/createMessage"]
    key = next(iter(first["inputRequests"]))
    done = call_tool(
        app, name, caps={"sampling": {}}, inputResponses={key: sampled("Hi")}, requestState=first["requestState"]
    ).result
    assert done["resultType"] == "complete"
    every = call_tool(app, name).result
    assert len(every["inputRequests"]) == 3
    roots_only = call_tool(app, name, caps={"roots": {}}).result
    assert [r["method"] for r in roots_only["inputRequests"].values()] == ["roots/list"]
    url_only = call_tool(app, name, caps={"elicitation": {"url": {}}, "roots": {}}).result
    assert [r["method"] for r in url_only["inputRequests"].values()] == ["roots/list"]


def test_mrtr_capabilities_with_none_is_32021(app: Any) -> None:
    reply = call_tool(app, "test_input_required_result_capabilities", caps={})
    assert reply.status == 400 and reply.error["code"] == -32021
    assert set(reply.error["data"]["requiredCapabilities"]) == {"elicitation", "sampling", "roots"}


# -- header and schema tools --------------------------------------------------------------------------
def test_header_probe_accepts_empty_arguments(app: Any) -> None:
    assert call_tool(app, "a_header_probe").result["resultType"] == "complete"
    spaced = call_tool(app, "a_header_probe", headers={"Mcp-Name": "  a_header_probe  "})
    assert spaced.status == 200
    wrong = call_tool(app, "a_header_probe", headers={"Mcp-Name": "wrong_tool_name"})
    assert wrong.status == 400 and wrong.error["code"] == -32020


@pytest.mark.parametrize(
    ("value", "header", "ok"),
    [
        ("Hello", "Hello", True),
        ("Hello", "=?base64?SGVsbG8=?=", True),
        ("SGVsbG8=", "SGVsbG8=", True),
        ("=?base64?SGVsbG8=", "=?base64?SGVsbG8=", True),
        ("Hello", "=?base64?SGVsbG8?=", False),
        ("Hello", "=?base64?SGVs!!!bG8=?=", False),
        ("test-value", None, False),
    ],
)
def test_custom_header_region(app: Any, value: str, header: str | None, ok: bool) -> None:
    extra = {} if header is None else {"Mcp-Param-Region": header}
    reply = call_tool(app, "custom_header_region", {"region": value}, headers=extra)
    if ok:
        assert reply.status == 200 and text_of(reply.result) == f"Region: {value}"
    else:
        assert reply.status == 400 and reply.error["code"] == -32020


def test_json_schema_tool_validates_arguments(app: Any) -> None:
    good = call_tool(app, "json_schema_2020_12_tool", {"name": "A", "contactMethod": "email", "email": "a@b.c"})
    assert good.result.get("isError") is not True
    bad = call_tool(app, "json_schema_2020_12_tool", {"name": "A", "unexpected": 1})
    assert bad.result["isError"] is True


# -- resources --------------------------------------------------------------------------------------
def test_resources_list_and_first_is_readable(app: Any) -> None:
    resources = request(app, "resources/list").result["resources"]
    uris = [r["uri"] for r in resources]
    assert {"test://static-text", "test://static-binary"} <= set(uris) and uris == sorted(uris)
    assert all(r["name"] and r["mimeType"] for r in resources)
    first = request(app, "resources/read", {"uri": uris[0]}).result
    assert first["resultType"] == "complete" and (first["ttlMs"], first["cacheScope"]) == (0, "private")


def test_read_static_text(app: Any) -> None:
    [contents] = request(app, "resources/read", {"uri": "test://static-text"}).result["contents"]
    assert contents == {
        "uri": "test://static-text",
        "mimeType": "text/plain",
        "text": "This is a static text resource for testing.",
    }


def test_read_static_binary(app: Any) -> None:
    [contents] = request(app, "resources/read", {"uri": "test://static-binary"}).result["contents"]
    assert contents["mimeType"] == "application/octet-stream" and contents["blob"] == "AAECA3+A/v8="
    assert base64.b64decode(contents["blob"]) == bytes([0, 1, 2, 3, 0x7F, 0x80, 0xFE, 0xFF])


def test_templates_list_and_read(app: Any) -> None:
    templates = request(app, "resources/templates/list").result["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == ["test://template/{id}/data"]
    [contents] = request(app, "resources/read", {"uri": "test://template/123/data"}).result["contents"]
    assert contents["uri"] == "test://template/123/data" and "123" in contents["text"] and contents["mimeType"]


def test_unknown_resource_is_32602_with_uri(app: Any) -> None:
    uri = "test://nonexistent-resource-for-conformance-testing"
    reply = request(app, "resources/read", {"uri": uri})
    assert reply.status == 400 and reply.error["code"] == -32602 and reply.error["data"] == {"uri": uri}


# -- prompts and completion ------------------------------------------------------------------------------
def test_prompts_list(app: Any) -> None:
    prompts = {p["name"]: p for p in request(app, "prompts/list").result["prompts"]}
    assert {
        "test_simple_prompt",
        "test_prompt_with_arguments",
        "test_prompt_with_embedded_resource",
        "test_prompt_with_image",
        "test_input_required_result_prompt",
    } <= set(prompts)
    assert all(p["description"] for p in prompts.values())
    args = prompts["test_prompt_with_arguments"]["arguments"]
    assert [(a["name"], a["required"]) for a in args] == [("arg1", True), ("arg2", True)]


def test_simple_prompt(app: Any) -> None:
    messages = request(app, "prompts/get", {"name": "test_simple_prompt"}).result["messages"]
    assert messages and all(m["role"] and m["content"] for m in messages)


def test_prompt_with_arguments(app: Any) -> None:
    args = {"arg1": "testValue1", "arg2": "testValue2"}
    messages = request(app, "prompts/get", {"name": "test_prompt_with_arguments", "arguments": args}).result["messages"]
    text = json.dumps(messages)
    assert "testValue1" in text and "testValue2" in text
    missing = request(app, "prompts/get", {"name": "test_prompt_with_arguments", "arguments": {"arg1": "x"}})
    assert missing.error["code"] == -32602 and missing.error["data"] == {"missing": ["arg2"]}


def test_prompt_with_embedded_resource(app: Any) -> None:
    params = {"name": "test_prompt_with_embedded_resource", "arguments": {"resourceUri": "test://example-resource"}}
    messages = request(app, "prompts/get", params).result["messages"]
    resource = [m["content"] for m in messages if m["content"]["type"] == "resource"]
    assert resource and resource[0]["resource"]["uri"] == "test://example-resource"


def test_prompt_with_image(app: Any) -> None:
    messages = request(app, "prompts/get", {"name": "test_prompt_with_image"}).result["messages"]
    assert any(m["content"]["type"] == "image" and m["content"]["data"] and m["content"]["mimeType"] for m in messages)


def test_mrtr_prompt_round_trip(app: Any) -> None:
    name = "test_input_required_result_prompt"
    first = request(app, "prompts/get", {"name": name}).result
    assert first["resultType"] == "input_required"
    assert first["inputRequests"]["user_context"]["method"] == "elicitation/create"
    params = {"name": name, "inputResponses": {"user_context": accept({"context": "test context"})}}
    done = request(app, "prompts/get", params).result
    assert done["resultType"] == "complete" and "test context" in json.dumps(done["messages"])


def test_completion(app: Any) -> None:
    params = {
        "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
        "argument": {"name": "arg1", "value": "test"},
    }
    completion = request(app, "completion/complete", params).result["completion"]
    assert completion["values"] and all(v.startswith("test") for v in completion["values"])
    assert completion["total"] == len(completion["values"]) and completion["hasMore"] is False
    params["argument"] = {"name": "arg2", "value": "zzz"}
    assert request(app, "completion/complete", params).result["completion"]["values"] == ["zzz"]
    params = {
        "ref": {"type": "ref/resource", "uri": "test://template/{id}/data"},
        "argument": {"name": "id", "value": "12"},
    }
    assert request(app, "completion/complete", params).result["completion"]["values"] == ["123", "124"]


# -- the command line, over real HTTP --------------------------------------------------------------------
def test_command_line_serves_http_until_stdin_eof() -> None:
    pytest.importorskip("mcpwire_adapters.serve.trio_h11.server")
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "conformance" / "fixture.py"), "--port", "0"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        ready = json.loads(proc.stdout.readline())
        assert ready["conformanceReady"] is True
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", ready["url"])
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "server/discover",
            "params": {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": VERSION,
                    "io.modelcontextprotocol/clientCapabilities": {},
                }
            },
        }
        req = urllib.request.Request(
            ready["url"],
            data=json.dumps(body).encode(),
            method="POST",
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": VERSION,
                "Mcp-Method": "server/discover",
            },
        )
        with urllib.request.urlopen(req, timeout=10) as response:
            assert response.status == 200
            result = json.loads(response.read())["result"]
        assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == SERVER_INFO
        proc.stdin.close()
        assert proc.wait(10) == 0
        assert proc.stdout.read() == ""  # nothing but the ready line on stdout
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


_ = mcpwire


def test_command_line_serves_stdio_until_eof() -> None:
    pytest.importorskip("mcpwire_adapters.serve.stdio")
    meta = {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "progressToken": "p",
    }
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "test_tool_with_progress", "arguments": {}, "_meta": meta},
        },
    ]
    proc = subprocess.run(
        [sys.executable, str(REPO / "conformance" / "fixture.py"), "--transport", "stdio"],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    messages = [json.loads(line) for line in proc.stdout.splitlines()]
    by_id = {m["id"]: m for m in messages if "id" in m}
    assert by_id[1]["result"]["_meta"]["io.modelcontextprotocol/serverInfo"] == SERVER_INFO
    assert by_id[2]["result"]["resultType"] == "complete"
    progress = [m["params"]["progress"] for m in messages if m.get("method") == "notifications/progress"]
    assert progress == [0, 50, 100]
    assert messages.index(by_id[2]) == len(messages) - 1 or messages[-1]["id"] == 1
