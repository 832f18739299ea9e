"""Call lanes (mcpwire/server/call_fast_path.py): a call whose head was admitted before goes straight to
its body, and is answered exactly as the full admission answers it.

The differential test sends the same generated requests, mostly near-valid calls with one to
three things changed in the head or the body, to two servers that differ only in
``call_memo`` (the default, and 0: no lanes) and compares every outcome: the reply bytes, or the
event and what completing it (or answering input_required) writes. Both servers are primed
with valid calls first, so the lanes exist when the changed requests come.
"""

from __future__ import annotations

import itertools
import json
from typing import Annotated, Any, Callable

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mcpwire
import mcpwire.server.engine
import mcpwire.server.http
from mcpwire import HttpExchange, HttpPolicy, HttpRequest, Keyring, LocalProtocolError, Server
from mcpwire.tasks import MemoryTaskStore, Tasks
from mcpwire.types import CallToolResult, Implementation, TextContent, Tool

VERSION = "2026-07-28"
NOW = 1_800_000_000.0
PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
INFO_KEY = "io.modelcontextprotocol/clientInfo"
TASKS = "io.modelcontextprotocol/tasks"
LATER = "2026-12-31"  # a second stateless revision the servers speak: a lane is for one of them
MAX_BODY = 600


class Args(msgspec.Struct, forbid_unknown_fields=True):
    text: str
    count: int = 0


class HeadedArgs(msgspec.Struct):
    text: str
    region: Annotated[str, msgspec.Meta(extra_json_schema={"x-mcp-header": "Region"})] = ""


def make_server(call_memo: int, *, sessions: bool) -> Server:
    tasks = Tasks(MemoryTaskStore(), (f"task-{i}" for i in itertools.count()), ttl_ms=60_000)
    server = Server(
        Implementation(name="lanes", version="1"), keyring=Keyring.single(b"lanes-secret-key-of-32-bytes-min"),
        tasks=tasks, call_memo=call_memo, validator=mcpwire.UNCHECKED,
        http=HttpPolicy(allowed_origins=frozenset({"https://ok.example"}), allowed_hosts=frozenset({"127.0.0.1"}),
                        max_body_bytes=MAX_BODY),
        supported_versions=(VERSION, LATER, "2025-11-25", "2025-06-18", "2025-03-26"),
        session_ids=(f"s-{i}" for i in itertools.count()) if sessions else None,
    )
    server.add_tool(Tool(name="echo", input_schema={}), arguments_type=Args)
    server.add_tool(Tool(name="maybe", input_schema={}), arguments_type=Args, task_support="optional")
    server.add_tool(Tool(name="must", input_schema={}), arguments_type=Args, task_support="required")
    server.add_tool(Tool(name="loose", input_schema={"type": "object"}))  # arguments as a dict: no lane
    server.add_tool(Tool(name="headed", input_schema={}), arguments_type=HeadedArgs)  # Mcp-Param-Region: no lane
    return server


def call_body(name: str = "echo", **meta: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": {"text": "hi"}, "_meta": {PV: VERSION, CAPS: {}, **meta}}}


def call_headers(name: str = "echo") -> dict[str, str]:
    return {"host": "127.0.0.1:8000", "content-type": "application/json",
            "accept": "application/json, text/event-stream", "mcp-protocol-version": VERSION,
            "mcp-method": "tools/call", "mcp-name": name}


def as_request(body: bytes, headers: list[tuple[bytes, bytes]], method: str = "POST", target: str = "/mcp",
               principal: str | None = None) -> HttpRequest:
    return HttpRequest(method=method, target=target, headers=tuple(headers), body=body, principal=principal)


def plain_request(name: str = "echo", **meta: Any) -> HttpRequest:
    body = json.dumps(call_body(name, **meta)).encode()
    pairs = [(k.encode(), v.encode()) for k, v in call_headers(name).items()]
    return as_request(body, [*pairs, (b"content-length", str(len(body)).encode())])


def outcome(server: Server, request: HttpRequest, *, head: bool, answer: str) -> Any:
    """What the server does with ``request``, as plain data; with ``head``, check_head first."""
    seen: list[Any] = []
    if head:
        refused = server.check_head(request.method, request.target, request.headers)
        seen.append(None if refused is None else msgspec.to_builtins(refused))
        if refused is not None:
            return seen
    answered = server.receive_http(request, now=NOW)
    if isinstance(answered, HttpExchange):
        seen.append(msgspec.to_builtins(answered.event))
        try:
            if answer == "complete":
                out = answered.complete(CallToolResult(content=[TextContent(text="ok")]))
            else:  # the requestState is bound to the whole params, members the event omits included
                out = answered.input_required(state={"round": 1}, now=NOW)
        except LocalProtocolError as refused:  # e.g. state alone asked of an initialize-era call
            seen.append(("refused", str(refused)))
        else:
            seen.append(msgspec.to_builtins(out))
    elif isinstance(answered, tuple):
        seen.append(msgspec.to_builtins(answered))
    else:
        seen.append(repr(answered))
    return seen


# -- what a generated request changes ----------------------------------------------------------
# Each change edits the body and, when ``head`` allows, the headers. Half the requests keep the
# primed head as it is, so that their lane is found and the body decides.

Change = Callable[[st.DrawFn, dict[str, Any], dict[str, Any], bool], None]

NAMES = ["echo", "maybe", "must", "loose", "headed", "nope", "", "ECHO", 1, None]
VERSIONS = [VERSION, LATER, "2025-11-25", "2025-06-18", "2099-12-31", "garbage", "", 7]


def _header(draw: st.DrawFn, body: dict[str, Any], h: dict[str, Any], head: bool) -> None:
    if not head:
        return
    name = draw(st.sampled_from(["host", "origin", "content-type", "accept", "mcp-protocol-version",
                                 "mcp-method", "mcp-name", "mcp-session-id", "mcp-param-region", "x-trace"]))
    value = draw(st.sampled_from([
        None, "", "tools/call", "tools/list", "echo", "maybe", "Echo", "=?base64?ZWNobw==?=", VERSION, LATER,
        "2025-11-25", "application/json", "application/json; charset=utf-8", "text/plain",
        "application/json, text/event-stream", "*/*", "text/event-stream", "https://ok.example",
        "https://evil.example", "127.0.0.1:8000", "evil:80", "s-0", "  echo  ", "eu",
    ]))
    if value is None:
        h.pop(name, None)
    else:
        h[name] = value


def _params_of(body: dict[str, Any]) -> dict[str, Any] | None:
    params = body.get("params")
    return params if isinstance(params, dict) else None


def _name(draw: st.DrawFn, body: dict[str, Any], h: dict[str, Any], head: bool) -> None:
    name = draw(st.sampled_from(NAMES))
    if (params := _params_of(body)) is not None:
        params["name"] = name
    if head and isinstance(name, str) and draw(st.booleans()):
        h["mcp-name"] = name


def _version(draw: st.DrawFn, body: dict[str, Any], h: dict[str, Any], head: bool) -> None:
    version = draw(st.sampled_from(VERSIONS))
    where = draw(st.sampled_from(["meta", "header", "both"])) if head else "meta"
    params = _params_of(body)
    if where != "header" and params is not None and isinstance(params.get("_meta"), dict):
        params["_meta"][PV] = version
    if where != "meta" and isinstance(version, str):
        h["mcp-protocol-version"] = version


def _envelope(draw: st.DrawFn, body: dict[str, Any], h: dict[str, Any], head: bool) -> None:
    member = draw(st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error"]))
    value: Any = draw(st.sampled_from([
        "DROP", None, "2.0", "1.0", 2.0, 0, -1, 2**63, -(2**63) - 1, True, "", "x" * 300, "tools/call",
        "tools/list", "TOOLS/CALL", [], {}, [1], {"code": 1, "message": "m"}, 1e300,
    ]))
    if value == "DROP":
        body.pop(member, None)
    else:
        body[member] = value


def _params(draw: st.DrawFn, body: dict[str, Any], h: dict[str, Any], head: bool) -> None:
    if (params := _params_of(body)) is None:
        return
    member = draw(st.sampled_from(["arguments", "inputResponses", "requestState", "task", "_meta", "extra"]))
    value: Any = draw(st.sampled_from([
        "DROP", None, {}, {"text": "hi"}, {"text": 1}, {"text": "hi", "count": 2}, {"text": "hi", "other": 1},
        {"count": 1}, {"text": "é ☃"}, {"text": "hi", "region": "eu"}, [], "s", 1, {"ttl": 1000},
        {"k": {"action": "accept"}}, {"k": {"action": "accept", "content": {"ok": True}}},
    ]))
    if value == "DROP":
        params.pop(member, None)
    else:
        params[member] = value


def _meta(draw: st.DrawFn, body: dict[str, Any], h: dict[str, Any], head: bool) -> None:
    params = _params_of(body)
    if params is None or not isinstance(params.get("_meta"), dict):
        return
    key = draw(st.sampled_from([PV, CAPS, INFO_KEY, "progressToken", "io.modelcontextprotocol/logLevel",
                                "bad key!", "example.com/x"]))
    value: Any = draw(st.sampled_from([
        "DROP", None, {}, {"extensions": {TASKS: {}}}, {"elicitation": {}}, {"roots": 1},
        {"name": "c", "version": "1"}, {"name": "c"}, "p-1", 7, True, "debug", "loud", VERSION,
    ]))
    if value == "DROP":
        params["_meta"].pop(key, None)
    else:
        params["_meta"][key] = value


CHANGES: list[Change] = [_header, _name, _version, _envelope, _params, _meta]


@st.composite
def near_calls(draw: st.DrawFn) -> tuple[HttpRequest, bool, str]:
    name = draw(st.sampled_from(["echo", "maybe", "must", "loose", "headed"]))
    body = call_body(name)
    h: dict[str, Any] = call_headers(name)
    head = draw(st.booleans())  # False: the primed head as it is
    for change in draw(st.lists(st.sampled_from(CHANGES), max_size=3)):
        change(draw, body, h, head)
    data = json.dumps(body, ensure_ascii=draw(st.booleans())).encode()
    data = draw(st.sampled_from([
        data, data, data, b"\xef\xbb\xbf" + data, data.replace(b'"jsonrpc"', b'"junk":"\xff","jsonrpc"', 1),
        b" " + data + b"\n", data.replace(b'"id": 1', b'"id": 1, "id": 2', 1), b"[" + data + b"]", data[:-1],
        data + b" " * MAX_BODY,
    ]))
    pairs = [(k.encode(), v.encode("utf-8")) for k, v in h.items()]
    length = draw(st.sampled_from([len(data)] * 4 + [0, MAX_BODY + 1]))
    pairs.append((b"content-length", str(length).encode()))
    shape = draw(st.sampled_from(["as is", "as is", "upper", "shuffle"] + (["repeat"] if head else [])))
    if shape == "upper":
        i = draw(st.integers(0, len(pairs) - 1))
        pairs[i] = (pairs[i][0].title(), pairs[i][1])
    elif shape == "repeat":
        pairs.append(draw(st.sampled_from(pairs)))
    elif shape == "shuffle":
        pairs = draw(st.permutations(pairs))
    method = draw(st.sampled_from(["POST", "POST", "POST", "GET", "DELETE"])) if head else "POST"
    target = draw(st.sampled_from(["/mcp", "/mcp", "/mcp?x=1", "/other"])) if head else "/mcp"
    principal = draw(st.sampled_from([None, "alice"]))
    return (as_request(data, pairs, method, target, principal), draw(st.booleans()),
            draw(st.sampled_from(["complete", "input_required"])))


def _primed(sessions: bool) -> tuple[Server, Server]:
    servers = make_server(256, sessions=sessions), make_server(0, sessions=sessions)
    for server in servers:
        for name in ("echo", "maybe", "must", "loose", "headed"):
            meta: dict[str, Any]
            for meta in ({}, {CAPS: {"extensions": {TASKS: {}}}}):
                server.receive_http(plain_request(name, **meta), now=NOW)
    return servers


@pytest.mark.parametrize("sessions", [False, True], ids=["stateless", "with sessions"])
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases=st.lists(near_calls(), min_size=1, max_size=4))
def test_a_lane_answers_every_request_as_the_full_admission_does(
    sessions: bool, cases: list[tuple[HttpRequest, bool, str]]
) -> None:
    laned, full = _primed(sessions)
    for request, head, answer in cases:
        assert outcome(laned, request, head=head, answer=answer) == outcome(full, request, head=head, answer=answer)
    # ... and the next plain call still agrees (nothing a changed request did is left behind).
    plain = plain_request()
    assert outcome(laned, plain, head=False, answer="complete") == outcome(full, plain, head=False, answer="complete")


# Each change alone, on a primed head: what a lane must not take, and what it may.
def _set(*path: Any) -> Callable[[dict[str, Any], dict[str, Any]], None]:
    *where, key, value = path

    def change(body: dict[str, Any], headers: dict[str, Any]) -> None:
        target = headers if where[:1] == ["header"] else body
        for step in where[1:] if where[:1] == ["header"] else where:
            target = target[step]
        if value == "DROP":
            target.pop(key, None)
        else:
            target[key] = value

    return change


def _each(label: str, *path: Any, values: tuple[Any, ...]) -> dict[str, Callable[[dict[str, Any], dict[str, Any]], None]]:
    return {f"{label}={value!r}": _set(*path, value) for value in values}


TARGETED: dict[str, Callable[[dict[str, Any], dict[str, Any]], None]] = {
    **_each("name", "params", "name", values=("nope", "", 1, "ECHO", "maybe", "DROP")),
    **_each("method", "method", values=("tools/list", "TOOLS/CALL", "DROP")),
    **_each("id", "id", values=(
        True, None, 2**63, "x" * 300, 1.5, "DROP", "s", -(2**63), 2**63 - 1, -(2**63) - 1, 0, "",
        "x" * 64, "x" * 65, "x" * 256, "x" * 257, "\U0001F600" * 64, "\U0001F600" * 65)),
    **_each("jsonrpc", "jsonrpc", values=("1.0", 2, "DROP")),
    **_each("params", "params", values=([], "s", "DROP")),
    **_each("arguments", "params", "arguments", values=(
        "DROP", {}, {"text": 1}, [], {"text": "hi", "other": 1}, {"text": "é"}, {"text": "hi", "region": "eu"})),
    **_each("inputResponses", "params", "inputResponses", values=(
        {}, {"k": {"action": "accept"}}, None, "s")),
    **_each("requestState", "params", "requestState", values=("s", None, 1)),
    "task": _set("params", "task", {"ttl": 1000}),
    "params.extra": _set("params", "extra", 1),
    **_each("_meta", "params", "_meta", values=("DROP", None, [])),
    **_each("version", "params", "_meta", PV, values=(LATER, "2025-11-25", "garbage", 7, "DROP")),
    **_each("capabilities", "params", "_meta", CAPS, values=(
        {"extensions": {TASKS: {}}}, "DROP", None, {"roots": 1})),
    **_each("clientInfo", "params", "_meta", INFO_KEY, values=({"name": "c", "version": "1"}, {"name": 1})),
    **_each("progressToken", "params", "_meta", "progressToken", values=("p-1", True)),
    **_each("logLevel", "params", "_meta", "io.modelcontextprotocol/logLevel", values=("debug", "loud")),
    "meta key": _set("params", "_meta", "bad key!", 1),
    "result": _set("result", 1),
    "error": _set("error", {"code": 1, "message": "m"}),
    **{f"header {k}={v!r}": _set("header", k, v) for k, v in (
        ("origin", "https://evil.example"), ("origin", "https://ok.example"), ("host", "evil:80"),
        ("content-type", "text/plain"), ("accept", "text/event-stream"), ("mcp-protocol-version", LATER),
        ("mcp-protocol-version", "2025-11-25"), ("mcp-method", "tools/list"), ("mcp-name", "maybe"),
        ("mcp-session-id", "s-0"), ("mcp-param-region", "eu"), ("x-trace", "1"))},
}
BYTES: dict[str, Callable[[bytes], bytes]] = {
    "as is": lambda data: data,
    "BOM": lambda data: b"\xef\xbb\xbf" + data,
    "invalid UTF-8 in a member no one reads": lambda data: data.replace(b'"jsonrpc"', b'"junk":"\xff","jsonrpc"', 1),
    "spaces": lambda data: b" " + data + b"\n",
    "a repeated id": lambda data: data.replace(b'"id": 1', b'"id": 1, "id": 2', 1),
    "a batch": lambda data: b"[" + data + b"]",
    "cut short": lambda data: data[:-1],
    "too large": lambda data: data + b" " * MAX_BODY,
}


@pytest.mark.parametrize("sessions", [False, True], ids=["stateless", "with sessions"])
@pytest.mark.parametrize("change", [*TARGETED, *BYTES])
def test_each_change_alone_on_a_laned_head(sessions: bool, change: str) -> None:
    laned, full = _primed(sessions)
    for name, principal, head, answer in itertools.product(
        ("echo", "maybe", "must", "headed"), (None, "alice"), (False, True), ("complete", "input_required")
    ):
        body = call_body(name, **{CAPS: {"extensions": {TASKS: {}}}} if principal else {})
        headers = call_headers(name)
        if change in TARGETED:
            TARGETED[change](body, headers)
        data = BYTES.get(change, BYTES["as is"])(json.dumps(body, ensure_ascii=False).encode())
        pairs = [(k.encode(), v.encode()) for k, v in headers.items()]
        for length in (len(data), MAX_BODY + 1):
            request = as_request(data, [*pairs, (b"content-length", str(length).encode())], principal=principal)
            assert (outcome(laned, request, head=head, answer=answer)
                    == outcome(full, request, head=head, answer=answer)), (name, principal, head, answer, length)


# -- the lane is taken, and only where it may be ---------------------------------------------------

def count_admissions(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the full transport admission (``admit``) as the engine calls it."""
    calls = [0]
    real = mcpwire.server.http.admit

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(mcpwire.server.engine, "admit", counting)
    return calls


def test_a_second_call_with_the_same_head_skips_the_heads_admission(monkeypatch: pytest.MonkeyPatch) -> None:
    server = make_server(256, sessions=False)
    calls = count_admissions(monkeypatch)
    first = server.receive_http(plain_request(), now=NOW)
    assert isinstance(first, HttpExchange) and calls == [1]
    again = server.receive_http(plain_request(), now=NOW)
    assert isinstance(again, HttpExchange) and calls == [1]
    assert msgspec.to_builtins(again.event) == msgspec.to_builtins(first.event)
    # check_head too: the head passes from the memo, and receive_http reads only the body.
    request = plain_request()
    assert server.check_head(request.method, request.target, request.headers) is None
    assert isinstance(server.receive_http(request, now=NOW), HttpExchange) and calls == [1]


@pytest.mark.parametrize("tool", ["loose", "headed"])
def test_tools_without_a_struct_or_with_param_headers_get_no_lane(monkeypatch: pytest.MonkeyPatch, tool: str) -> None:
    server = make_server(256, sessions=False)
    calls = count_admissions(monkeypatch)
    for _ in range(3):
        assert isinstance(server.receive_http(plain_request(tool), now=NOW), HttpExchange)
    assert calls == [3]


def test_no_lane_with_call_memo_0_or_for_a_replaced_tool_or_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    server = make_server(0, sessions=False)
    calls = count_admissions(monkeypatch)
    for _ in range(2):
        server.receive_http(plain_request(), now=NOW)
    assert calls == [2]
    server = make_server(256, sessions=False)
    server.receive_http(plain_request(), now=NOW)
    server.add_tool(Tool(name="echo", input_schema={}), arguments_type=Args)  # replaced: its lane is gone
    server.receive_http(plain_request(), now=NOW)
    assert calls == [4]
    server.receive_http(plain_request(), now=NOW)  # ... and learnt again for the new tool
    assert calls == [4]
    server.http = msgspec.structs.replace(server.http, max_body_bytes=10)  # another policy: the head is admitted again
    answered = server.receive_http(plain_request(), now=NOW)
    assert isinstance(answered, tuple) and answered[0].status == 413 and calls == [5]
    server.http = msgspec.structs.replace(server.http, max_body_bytes=1000)
    for _ in range(2):
        assert isinstance(server.receive_http(plain_request(), now=NOW), HttpExchange)
    assert calls == [6]


def test_the_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    server = make_server(2, sessions=False)
    calls = count_admissions(monkeypatch)

    def send(i: int) -> None:  # each target its own head
        request = msgspec.structs.replace(plain_request(), target=f"/mcp?i={i}")
        assert isinstance(server.receive_http(request, now=NOW), HttpExchange)

    for i in (0, 1, 0, 1):
        send(i)
    assert calls == [2]  # two heads, each admitted once
    send(2)  # a third: the memo starts again, with it alone
    send(2)
    assert calls == [3]
    send(0)
    assert calls == [4]
    with pytest.raises(mcpwire.LocalProtocolError, match="call_memo"):
        make_server(-1, sessions=False)


def test_a_head_too_long_to_keep_is_not_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    server = make_server(256, sessions=False)
    calls = count_admissions(monkeypatch)
    for query, admissions in ((2000, [2]), (1500, [3])):  # the first head keeps over 2 KiB, the second not
        request = msgspec.structs.replace(plain_request(), target="/mcp?" + "q" * query)
        for _ in range(2):
            assert isinstance(server.receive_http(request, now=NOW), HttpExchange)
        assert calls == admissions
