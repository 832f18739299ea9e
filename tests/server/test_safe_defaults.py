"""Safe defaults of the core, and a core API that says what it does.

Each section holds one promise the documentation makes (docs/server.md, embedding.md,
errors.md, limits.md) and a test that failed before the core kept it.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import msgspec
import pytest
from msgspec import UNSET
from schema_check import Reply, assemble, call, error_of, ev, exchange, make_server, meta, reply_of, request

import mcpwire
from mcpwire.types import CallToolResult, Tool

ROOT = Path(__file__).resolve().parents[2]
OBJ: dict[str, Any] = {"type": "object"}
CITY: dict[str, Any] = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def listed_tools(server: mcpwire.Server) -> list[dict[str, Any]]:
    return call(server, request("tools/list")).result["tools"]  # type: ignore[no-any-return]


def finish(ex: mcpwire.HttpExchange, result: Any) -> Reply:
    return assemble(ex.complete(result), "tools/call")


def tool_call(name: str, arguments: Any, rid: Any = "c") -> dict[str, Any]:
    return request("tools/call", {"name": name, "arguments": arguments}, id=rid)


class Args(msgspec.Struct):
    city: str


class Temp(msgspec.Struct):
    temp: float


# -- 1. raw JSON Schema tools are checked by default ----------------------------------------------------------


def test_raw_schema_arguments_are_checked_without_passing_a_validator() -> None:
    server = make_server()
    server.add_tool(Tool(name="weather", input_schema=CITY))
    reply = call(server, tool_call("weather", {}))
    assert reply.status == 200 and reply.result["isError"] is True
    assert reply.result["content"][0]["text"].startswith("Invalid arguments for tool weather")


def test_raw_output_schema_is_checked_without_passing_a_validator() -> None:
    server = make_server()
    server.add_tool(Tool(name="t", input_schema=OBJ, output_schema={"type": "object", "required": ["temp"]}))
    answering = exchange(server, tool_call("t", {}))
    reply = finish(answering, CallToolResult(content=[], structured_content={"cold": True}))
    assert error_of(reply, -32603, "c")["message"] == "Internal error"  # the cause stays with the host
    assert "outputSchema" in str(answering.internal_error)


def test_without_jsonschema_a_raw_schema_tool_is_refused_naming_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jsonschema", None)  # import jsonschema -> ImportError
    server = make_server()
    with pytest.raises(mcpwire.LocalProtocolError) as caught:
        server.add_tool(Tool(name="weather", input_schema=CITY))
    message = str(caught.value)
    assert "'weather'" in message and "mcpwire[jsonschema]" in message and "mcpwire.UNCHECKED" in message
    assert listed_tools(server) == []
    with pytest.raises(mcpwire.LocalProtocolError):
        server.add_tool(Tool(name="out", input_schema=OBJ, output_schema={"type": "object", "required": ["x"]}))


def test_without_jsonschema_trivial_and_struct_tools_still_register(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jsonschema", None)
    server = make_server()
    server.add_tool(Tool(name="open", input_schema=OBJ))
    server.add_tool(Tool(name="none", input_schema={"type": "object", "properties": {}, "title": "No arguments"}))
    server.add_tool(Tool(name="typed", input_schema={}), arguments_type=Args, output_type=Temp)
    server.add_tool(Tool(name="out", input_schema=OBJ, output_schema={"type": "object", "description": "any"}))
    ex = exchange(server, tool_call("open", {"anything": [1, 2]}))
    assert ev(ex).arguments == {"anything": [1, 2]}
    ex.cancel()


def test_trivial_output_schema_still_requires_an_object() -> None:
    server = make_server(validator=mcpwire.UNCHECKED)
    server.add_tool(Tool(name="out", input_schema=OBJ, output_schema=OBJ))
    answering = exchange(server, tool_call("out", {}))
    missing = finish(answering, CallToolResult(content=[]))
    assert error_of(missing, -32603, "c")["message"] == "Internal error"
    assert "no structuredContent" in str(answering.internal_error)


def test_unchecked_is_an_explicit_opt_out() -> None:
    server = make_server(validator=mcpwire.UNCHECKED)
    server.add_tool(Tool(name="weather", input_schema=CITY, output_schema={"type": "object", "required": ["temp"]}))
    ex = exchange(server, tool_call("weather", {}))
    assert ev(ex).arguments == {}
    assert finish(ex, CallToolResult(content=[], structured_content={"cold": True})).status == 200


def test_unchecked_is_a_validator_factory_that_accepts_everything() -> None:
    check = mcpwire.UNCHECKED({"type": "string"})
    assert check(5) is None and check({"x": 1}) is None


def test_import_and_a_server_without_raw_schemas_do_not_load_jsonschema() -> None:
    code = (
        "import sys, mcpwire\n"
        "from mcpwire.types import Implementation, Tool\n"
        "s = mcpwire.Server(Implementation(name='x', version='1'), keyring=mcpwire.Keyring.single(b'k' * 32))\n"
        "s.add_tool(Tool(name='a', input_schema={'type': 'object'}))\n"
        "before = 'jsonschema' in sys.modules\n"
        "s.add_tool(Tool(name='b', input_schema={'type': 'object', 'required': ['x']}))\n"
        "print(before, 'jsonschema' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert done.stdout.split() == ["False", "True"]


# -- 2. a Struct and an explicit schema must agree ----------------------------------------------------------------


def test_arguments_type_with_a_disagreeing_input_schema_is_refused() -> None:
    server = make_server()
    with pytest.raises(mcpwire.LocalProtocolError) as caught:
        server.add_tool(Tool(name="w", input_schema={"type": "object", "required": ["town"]}), arguments_type=Args)
    assert "arguments_type=Args" in str(caught.value) and "input_schema={}" in str(caught.value)
    assert listed_tools(server) == []


def test_arguments_type_with_the_derived_or_an_empty_schema_is_accepted() -> None:
    server = make_server()
    server.add_tool(Tool(name="a", input_schema=mcpwire.Server.tool_schema(Args)), arguments_type=Args)
    server.add_tool(Tool(name="b", input_schema={}), arguments_type=Args)
    assert [t["inputSchema"] for t in listed_tools(server)] == [mcpwire.Server.tool_schema(Args)] * 2
    ex = exchange(server, tool_call("a", {"city": "Oslo"}))
    assert ev(ex).arguments == Args(city="Oslo")
    ex.cancel()


def test_output_type_with_a_disagreeing_output_schema_is_refused() -> None:
    server = make_server()
    with pytest.raises(mcpwire.LocalProtocolError) as caught:
        server.add_tool(Tool(name="t", input_schema=OBJ, output_schema={"type": "object", "required": ["celsius"]}),
                        output_type=Temp)
    assert "output_type=Temp" in str(caught.value)
    with pytest.raises(mcpwire.LocalProtocolError):  # msgspec's $ref spelling is no object schema at the top
        server.add_tool(Tool(name="t", input_schema=OBJ, output_schema=msgspec.json.schema(Temp)), output_type=Temp)
    server.add_tool(Tool(name="t", input_schema=OBJ, output_schema=mcpwire.Server.tool_schema(Temp)), output_type=Temp)
    server.add_tool(Tool(name="u", input_schema=OBJ, output_schema=UNSET), output_type=Temp)
    assert [t["outputSchema"] for t in listed_tools(server)] == [mcpwire.Server.tool_schema(Temp)] * 2


def test_error_names_the_tool() -> None:
    server = make_server()
    with pytest.raises(mcpwire.LocalProtocolError, match="'w'"):
        server.add_tool(Tool(name="w", input_schema=CITY), arguments_type=Args)


def test_app_tool_with_a_struct_output_type_lists_an_object_schema() -> None:
    from mcpwire_adapters.app.app import App

    app = App("x", "1")

    @app.tool(description="d", output_type=Temp)
    def temp(ctx: Any, arguments: Any) -> None:
        return None

    (listed,) = listed_tools(app.server)
    assert listed["outputSchema"] == mcpwire.Server.tool_schema(Temp) and listed["outputSchema"]["type"] == "object"


# -- 3. answers to input requests are checked against what was asked ---------------------------------------------

ALL_CAPS: dict[str, Any] = {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}
ASKED: dict[str, Any] = {
    "name": {"method": "elicitation/create", "params": {"mode": "form", "message": "Name?",
                                                         "requestedSchema": {"type": "object", "properties": {}}}},
    "pick": {"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Pick"}}], "maxTokens": 10}},
    "dirs": {"method": "roots/list", "params": {}},
}
GOOD: dict[str, Any] = {
    "name": {"action": "accept", "content": {"name": "Ada"}},
    "pick": {"role": "assistant", "content": {"type": "text", "text": "blue"}, "model": "m"},
    "dirs": {"roots": [{"uri": "file:///p"}]},
}


def mrtr_call(rid: Any = 1, arguments: Any = None, **params: Any) -> dict[str, Any]:
    p = {"name": "ask", "arguments": arguments if arguments is not None else {}, **params,
         "_meta": meta(caps=ALL_CAPS)}
    return request("tools/call", p, id=rid)


def mrtr_server() -> mcpwire.Server:
    server = make_server()
    server.add_tool(Tool(name="ask", input_schema={"type": "object", "properties": {"n": {"type": "integer"}}}))
    return server


def first_round(server: mcpwire.Server, *, state: Any = UNSET) -> str:
    reply = assemble(exchange(server, mrtr_call()).input_required(ASKED, state=state), "tools/call")
    token = reply.result["requestState"]
    assert isinstance(token, str)
    return token


@pytest.mark.parametrize(("key", "answer", "type_name"), [
    ("name", {"action": "maybe"}, "ElicitResult"),
    ("pick", {"action": "accept"}, "CreateMessageResult"),  # an elicitation answer to a sampling request
    ("dirs", {"roots": "file:///p"}, "ListRootsResult"),
    ("dirs", {}, "ListRootsResult"),
])
def test_an_answer_of_the_wrong_shape_is_invalid_params_naming_the_id(key: str, answer: Any, type_name: str) -> None:
    server = mrtr_server()
    token = first_round(server)
    responses = {**GOOD, key: answer}
    reply = call(server, mrtr_call(2, inputResponses=responses, requestState=token))
    error = error_of(reply, -32602, 2)
    assert error["message"].startswith(f"inputResponses.{key} is not a valid {type_name}: ")


def test_right_answers_pass_and_answers_nobody_asked_for_are_left_alone() -> None:
    server = mrtr_server()
    token = first_round(server, state={"round": 1})
    responses = {**GOOD, "extra": {"anything": True}}
    ex = exchange(server, mrtr_call(2, inputResponses=responses, requestState=token))
    assert ev(ex).input_responses == responses and ev(ex).state == {"round": 1}
    ex.cancel()
    partial = exchange(server, mrtr_call(3, inputResponses={"name": GOOD["name"]}, requestState=token))
    assert ev(partial).input_responses == {"name": GOOD["name"]}  # a partial answer is no error
    partial.cancel()


def test_wrong_answers_are_refused_before_the_arguments_are_checked() -> None:
    server = mrtr_server()
    lenient = make_server(validator=mcpwire.UNCHECKED)  # same keyring: its tokens verify on `server`
    lenient.add_tool(Tool(name="ask", input_schema={"type": "object", "properties": {"n": {"type": "integer"}}}))
    reply = assemble(exchange(lenient, mrtr_call(arguments={"n": "x"})).input_required(ASKED), "tools/call")
    token = reply.result["requestState"]
    bad = call(server, mrtr_call(2, arguments={"n": "x"}, inputResponses={"name": {}}, requestState=token))
    assert error_of(bad, -32602, 2)["message"].startswith("inputResponses.name is not a valid ElicitResult")


def test_without_request_state_answers_are_only_shape_checked() -> None:
    server = mrtr_server()
    ex = exchange(server, mrtr_call(2, inputResponses={"name": {"action": "maybe"}}))
    assert ev(ex).input_responses == {"name": {"action": "maybe"}}
    ex.cancel()
    error_of(call(server, mrtr_call(3, inputResponses={"name": 5})), -32602, 3)


# -- 4. HttpRequest takes what frameworks give, or says what it expects -------------------------------------------

DISCOVER = request("server/discover", {}, id=1)
DISCOVER_BODY = json.dumps(DISCOVER).encode()
STR_HEADERS = [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream"),
               ("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "server/discover")]
BYTES_HEADERS = [(k.encode(), v.encode()) for k, v in STR_HEADERS]
DISCOVERY_SERVER = make_server()


def discover_with(**fields: Any) -> Reply:
    values: dict[str, Any] = {"method": "POST", "target": "/mcp", "headers": BYTES_HEADERS, "body": DISCOVER_BODY}
    values.update(fields)
    answer = DISCOVERY_SERVER.receive_http(mcpwire.HttpRequest(**values), now=0.0)
    assert isinstance(answer, tuple)
    return reply_of(answer, "server/discover")


@pytest.mark.parametrize("headers", [
    BYTES_HEADERS, tuple(BYTES_HEADERS), STR_HEADERS, dict(STR_HEADERS), dict(BYTES_HEADERS),
    [list(pair) for pair in STR_HEADERS], [(bytearray(k), memoryview(v)) for k, v in BYTES_HEADERS],
    iter(BYTES_HEADERS),
], ids=["bytes", "tuple", "str", "dict-str", "dict-bytes", "lists", "bytes-likes", "iterator"])
def test_headers_in_every_shape_frameworks_give_are_accepted(headers: Any) -> None:
    assert discover_with(headers=headers).status == 200


def test_a_multi_valued_mapping_gives_every_pair() -> None:
    class Multi(Mapping[str, str]):  # like aiohttp's CIMultiDict: items() has the repeats
        def __init__(self, pairs: list[tuple[str, str]]) -> None:
            self.pairs = pairs

        def __getitem__(self, key: str) -> str:
            return next(v for k, v in self.pairs if k == key)

        def __iter__(self) -> Iterator[str]:
            return iter(dict(self.pairs))

        def __len__(self) -> int:
            return len(self.pairs)

        def items(self) -> Any:
            return list(self.pairs)

    headers = Multi([*STR_HEADERS, ("Accept", "application/json"), ("Accept", "text/event-stream")])
    assert discover_with(headers=headers).status == 200
    repeated = Multi([*STR_HEADERS, ("Content-Type", "application/json")])
    assert discover_with(headers=repeated).status == 415  # the repeat was seen


@pytest.mark.parametrize(("headers", "says"), [
    ([("Content-Type", 5)], "must be bytes or str, not int"),
    ([("Content-Type",)], "(name, value) pairs"),
    (b"content-type: application/json", "pairs of bytes or str, or a mapping"),
    (42, "pairs of bytes or str, or a mapping"),
    ([("Accept", "caf\u00e9 \u2615")], "not Latin-1"),
    (iter(STR_HEADERS), "in a list or a mapping"),
])
def test_headers_of_another_type_are_refused_saying_what_is_expected(headers: Any, says: str) -> None:
    with pytest.raises(mcpwire.LocalProtocolError, match=re.escape(says)):
        discover_with(headers=headers)


def test_method_target_and_body_types() -> None:
    assert discover_with(method=b"POST", target=b"/mcp").status == 200
    assert discover_with(body=bytearray(DISCOVER_BODY)).status == 200
    assert discover_with(body=memoryview(DISCOVER_BODY)).status == 200
    with pytest.raises(mcpwire.LocalProtocolError, match="body must be the raw request body as bytes, not str"):
        discover_with(body=DISCOVER_BODY.decode())
    with pytest.raises(mcpwire.LocalProtocolError, match="method must be a str"):
        discover_with(method=None)
    with pytest.raises(mcpwire.LocalProtocolError, match="target must be a str"):
        discover_with(target=7)


# -- 7. HEAD is answered without a body ------------------------------------------------------------------------------


def test_head_gets_the_405_head_without_a_body() -> None:
    get = DISCOVERY_SERVER.receive_http(mcpwire.HttpRequest(method="GET", target="/mcp", headers=[]), now=0.0)
    head = DISCOVERY_SERVER.receive_http(mcpwire.HttpRequest(method="HEAD", target="/mcp", headers=[]), now=0.0)
    assert isinstance(get, tuple) and isinstance(head, tuple)
    assert head[0] == get[0]  # same status and headers, content-length of the GET's body included
    assert head[0].status == 405 and (b"allow", b"POST") in head[0].headers
    assert (b"content-length", str(len(get[1].data)).encode()) in head[0].headers
    assert head[1].data == b"" and head[1].more is False


# -- 8. refusing on the head, before reading the body -------------------------------------------------------------


def test_check_head_refuses_an_oversize_content_length_before_the_body() -> None:
    server = make_server(http=mcpwire.HttpPolicy(max_body_bytes=1024))
    headers = [*BYTES_HEADERS, (b"content-length", b"1025")]
    refusal = server.check_head("POST", "/mcp", headers)
    assert refusal is not None
    reply = reply_of(refusal)
    assert reply.status == 413 and reply.error["message"] == "Request body exceeds 1024 bytes"
    assert server.check_head("POST", "/mcp", [*BYTES_HEADERS, (b"content-length", b"1024")]) is None
    assert server.check_head("POST", "/mcp", BYTES_HEADERS) is None  # no length: read, bounded
    huge = server.check_head(b"POST", b"/mcp", [*BYTES_HEADERS, (b"content-length", b"9" * 30)])
    assert huge is not None and huge[0].status == 413


@pytest.mark.parametrize(("method", "target", "headers", "status"), [
    ("GET", "/mcp", BYTES_HEADERS, 405),
    ("POST", "/other", BYTES_HEADERS, 404),
    ("POST", "/mcp", [*BYTES_HEADERS, (b"origin", b"https://evil.example")], 403),
    ("POST", "/mcp", [(b"accept", b"application/json, text/event-stream")], 415),
    ("POST", "/mcp", [(b"content-type", b"application/json"), (b"accept", b"text/html")], 406),
])
def test_check_head_gives_every_refusal_the_head_decides(method: str, target: str, headers: Any, status: int) -> None:
    refusal = DISCOVERY_SERVER.check_head(method, target, headers)
    assert refusal is not None and reply_of(refusal).status == status
    full = DISCOVERY_SERVER.receive_http(
        mcpwire.HttpRequest(method=method, target=target, headers=headers, body=DISCOVER_BODY), now=0.0)
    assert full == refusal  # the same answer receive_http gives once the body is read


def test_check_head_index_is_reused_only_for_the_same_tuple() -> None:
    # check_head keeps its index of a tuple of headers for receive_http; any other headers
    # object (an equal tuple, a list) is indexed afresh, so the answer is always the request's.
    server = make_server()
    good = tuple(BYTES_HEADERS)
    assert server.check_head("POST", "/mcp", good) is None
    ok = server.receive_http(mcpwire.HttpRequest(method="POST", target="/mcp", headers=good, body=DISCOVER_BODY), now=0.0)
    assert reply_of(ok).status == 200
    assert server.check_head("POST", "/mcp", good) is None
    wrong = tuple((k, b"tools/list" if k.lower() == b"mcp-method" else v) for k, v in BYTES_HEADERS)
    mismatch = reply_of(server.receive_http(
        mcpwire.HttpRequest(method="POST", target="/mcp", headers=wrong, body=DISCOVER_BODY), now=0.0))
    assert mismatch.status == 400 and mismatch.error["code"] == -32020
    again = server.receive_http(mcpwire.HttpRequest(method="POST", target="/mcp", headers=good, body=DISCOVER_BODY), now=0.0)
    assert again == ok


def test_a_head_admitted_by_check_head_still_has_its_body_and_its_own_target_checked() -> None:
    # receive_http skips the head's steps only for the very tuple, method and target check_head
    # admitted; the body's own step (413 when it outgrows a missing Content-Length) still runs.
    server = make_server(http=mcpwire.HttpPolicy(max_body_bytes=len(DISCOVER_BODY)))
    good = tuple(BYTES_HEADERS)  # no Content-Length, as a chunked body comes

    def after_head(target: str, body: bytes) -> Any:
        assert server.check_head("POST", "/mcp", good) is None
        return reply_of(server.receive_http(mcpwire.HttpRequest(method="POST", target=target, headers=good, body=body),
                                            now=0.0))

    assert after_head("/mcp", DISCOVER_BODY).status == 200
    too_big = after_head("/mcp", DISCOVER_BODY + b" ")
    assert too_big.status == 413 and too_big.error["message"] == f"Request body exceeds {len(DISCOVER_BODY)} bytes"
    assert after_head("/other", DISCOVER_BODY).status == 404  # another target than the head's: admitted afresh
    bom = make_server()
    assert bom.check_head("POST", "/mcp", good) is None
    with_bom = bom.receive_http(mcpwire.HttpRequest(method="POST", target="/mcp", headers=good,
                                                    body=b"\xef\xbb\xbf" + DISCOVER_BODY), now=0.0)
    assert reply_of(with_bom).status == 200


def test_check_head_of_head_has_no_body_and_str_headers_work() -> None:
    refusal = DISCOVERY_SERVER.check_head("HEAD", "/mcp", STR_HEADERS)
    assert refusal is not None and refusal[0].status == 405 and refusal[1].data == b""
    assert DISCOVERY_SERVER.check_head("POST", "/mcp", dict(STR_HEADERS)) is None


def test_trio_driver_refuses_on_the_head_without_waiting_for_the_body() -> None:
    import h11
    import trio
    from mcpwire_adapters import App, HttpServerConfig, serve_http

    from _wire_helpers import H11Client

    async def scenario() -> None:
        async with trio.open_nursery() as nursery:
            config = HttpServerConfig(body_timeout=5.0)
            address = await nursery.start(functools.partial(serve_http, App("x", "1"), "127.0.0.1", 0, config=config))
            client = await H11Client.connect(address)
            headers = [("host", "127.0.0.1"), ("content-type", "text/plain"), ("content-length", "10"),
                       ("accept", "application/json, text/event-stream")]
            await client.send(h11.Request(method="POST", target="/mcp", headers=headers))  # no body, ever
            with trio.fail_after(2.0):  # well before body_timeout
                head, body = await client.response()
            assert head.status_code == 415 and json.loads(body)["error"]["code"] == -32600
            assert (b"connection", b"close") in list(head.headers)
            await client.aclose()
            nursery.cancel_scope.cancel()

    trio.run(scenario)


def test_asgi_driver_refuses_on_the_head_without_reading_the_body() -> None:
    import trio
    from mcpwire_adapters import App, AsgiApp

    sent: list[dict[str, Any]] = []
    receives = 0

    async def receive() -> dict[str, Any]:
        nonlocal receives
        receives += 1
        await trio.sleep_forever()
        raise AssertionError

    async def send(message: Any) -> None:
        sent.append(dict(message))

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "PUT", "scheme": "http",
        "path": "/mcp", "raw_path": b"/mcp", "root_path": "", "query_string": b"",
        "headers": [(b"content-type", b"application/json"), (b"content-length", b"10")],
    }

    async def scenario() -> None:
        with trio.fail_after(2.0):
            await AsgiApp(App("x", "1"))(scope, receive, send)

    trio.run(scenario)
    assert receives == 0 and sent[0]["status"] == 405 and (b"allow", b"POST") in sent[0]["headers"]


# -- 5. misuse is misuse whatever the client sent ------------------------------------------------------------------

NO_CAPS_CALL = request("tools/call", {"name": "ask", "arguments": {}}, id=9)  # no client capabilities


def tool_exchange(body: Any = None) -> mcpwire.HttpExchange:
    return exchange(mrtr_server(), body if body is not None else mrtr_call())


def test_a_bad_ttl_fails_even_when_the_client_lacks_the_capability() -> None:
    with pytest.raises(mcpwire.LocalProtocolError, match="ttl_seconds"):
        tool_exchange(NO_CAPS_CALL).input_required(ASKED, ttl_seconds=10_000)
    with pytest.raises(mcpwire.LocalProtocolError, match="ttl_seconds"):
        tool_exchange().input_required(ASKED, ttl_seconds=float("nan"))


def test_unencodable_state_fails_even_when_the_client_lacks_the_capability() -> None:
    with pytest.raises(mcpwire.LocalProtocolError, match="not JSON-encodable"):
        tool_exchange(NO_CAPS_CALL).input_required(ASKED, state={"at": object()})


def test_unknown_input_request_fails_on_a_cancelled_exchange() -> None:
    ex = tool_exchange()
    ex.cancel()
    with pytest.raises(mcpwire.LocalProtocolError):
        ex.input_required({"x": {"method": "tools/call", "params": {}}})
    assert ex.input_required(ASKED, state={"ok": 1}) == []  # well-formed: silent, as documented


def test_a_cancelled_exchange_still_checks_what_it_is_given() -> None:
    ex = tool_exchange()
    ex.cancel()
    with pytest.raises(mcpwire.LocalProtocolError, match="ttl_seconds"):
        ex.input_required(ASKED, ttl_seconds=-1)
    with pytest.raises(mcpwire.LocalProtocolError, match="CallToolResult"):
        ex.complete(42)
    with pytest.raises(mcpwire.LocalProtocolError, match="finite"):
        ex.progress(float("nan"))
    assert ex.progress(1) == [] and ex.complete("fine") == []


def test_progress_is_checked_whether_or_not_the_client_asked_for_it() -> None:
    ex = tool_exchange()  # no progressToken
    assert ex.progress(2) == []
    with pytest.raises(mcpwire.LocalProtocolError, match="strictly increase"):
        ex.progress(1)
    with pytest.raises(mcpwire.LocalProtocolError, match="must be a str"):
        ex.progress(3, message=5)  # type: ignore[arg-type]
    ex.cancel()


def test_log_data_is_encoded_whatever_level_the_client_asked_for() -> None:
    ex = tool_exchange()  # no logLevel: nothing is sent
    assert ex.log("debug", {"fine": 1}) == []
    with pytest.raises(mcpwire.LocalProtocolError, match="cannot be encoded"):
        ex.log("debug", {"at": object()})
    with pytest.raises(mcpwire.LocalProtocolError, match="logger"):
        ex.log("debug", "x", logger=5)  # type: ignore[arg-type]
    ex.cancel()
    with pytest.raises(mcpwire.LocalProtocolError, match="cannot be encoded"):
        ex.log("error", {"at": object()})


@pytest.mark.parametrize("now", [float("nan"), float("inf"), float("-inf"), "1700000000", None])
def test_a_bad_clock_fails_on_every_request(now: Any) -> None:
    server = make_server()
    ok = mcpwire.HttpRequest(method="POST", target="/mcp", headers=BYTES_HEADERS, body=DISCOVER_BODY)
    with pytest.raises(mcpwire.LocalProtocolError, match="now"):
        server.receive_http(ok, now=now)
    with pytest.raises(mcpwire.LocalProtocolError, match="now"):
        server.receive_http(mcpwire.HttpRequest(method="GET", target="/mcp", headers=[]), now=now)
    connection = mcpwire.StdioConnection(server)
    with pytest.raises(mcpwire.LocalProtocolError, match="now"):
        connection.receive_data(b"", now=now)
    with pytest.raises(mcpwire.LocalProtocolError, match="now"):
        connection.receive_eof(now=now)
    assert isinstance(server.receive_http(ok, now=1), tuple)  # an int is a fine clock


def test_list_and_resource_events_check_their_arguments_without_open_streams() -> None:
    server = make_server()
    with pytest.raises(mcpwire.LocalProtocolError, match="Unknown list kind"):
        server.list_changed("tool")  # type: ignore[arg-type]
    with pytest.raises(mcpwire.LocalProtocolError, match="resource URI"):
        server.resource_updated(5)  # type: ignore[arg-type]
    assert server.list_changed("tools") == [] and server.resource_updated("test://x") == []


# -- 6. the core advertises listChanged only when asked to ----------------------------------------------------------


def test_a_bare_server_advertises_no_list_changed_and_serves_no_listen_for_it() -> None:
    server = make_server()
    assert server.capabilities() == {"tools": {}, "resources": {}, "prompts": {}, "logging": {}}
    listen = request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=4)
    error_of(call(server, listen), -32601, 4)
    server = make_server(list_changed={"tools"})
    assert server.capabilities()["tools"] == {"listChanged": True} and server.capabilities()["prompts"] == {}


def test_the_app_still_advertises_what_notify_list_changed_sends() -> None:
    from mcpwire_adapters.app.app import App

    assert App("x", "1").server.capabilities()["tools"] == {"listChanged": True}
    assert App("x", "1", list_changed=False).server.capabilities()["tools"] == {}


# -- 9. one convention for "absent" on events, and a way to list what is registered ---------------------------------


def test_absent_is_none_on_every_event() -> None:
    server = mrtr_server()
    first = exchange(server, mrtr_call())
    assert ev(first).input_responses is None and ev(first).state is None
    reply = assemble(first.input_required(ASKED, state=None), "tools/call")  # None: no state
    retry = exchange(server, mrtr_call(2, inputResponses=GOOD, requestState=reply.result["requestState"]))
    assert ev(retry).state is None and ev(retry).input_responses == GOOD
    with pytest.raises(mcpwire.LocalProtocolError, match="needs input requests or a state"):
        retry.input_required(None, state=None)
    retry.cancel()
    for cls in (mcpwire.ToolCall, mcpwire.ResourceRead, mcpwire.PromptGet):
        absent = {f.name: f.default for f in msgspec.structs.fields(cls)
                  if f.default is not msgspec.NODEFAULT and f.type is not bool}  # flags default to False
        assert set(absent.values()) <= {None}, (cls.__name__, absent)


def test_unset_state_is_taken_as_none_for_callers_of_the_old_default() -> None:
    ex = exchange(mrtr_server(), mrtr_call())
    reply = assemble(ex.input_required(ASKED, state=UNSET), "tools/call")
    assert isinstance(reply.result["requestState"], str)


def test_the_server_lists_what_is_registered_in_list_order() -> None:
    from mcpwire.types import Prompt, Resource, ResourceTemplate

    server = make_server()
    server.add_tool(Tool(name="zeta", input_schema=OBJ))
    server.add_tool(Tool(name="alpha", input_schema={}), arguments_type=Args)
    server.add_resource(Resource(uri="test://b", name="b"))
    server.add_resource(Resource(uri="test://a", name="a"))
    server.add_template(ResourceTemplate(uri_template="test://t/{x}", name="t"))
    server.add_prompt(Prompt(name="p2"))
    server.add_prompt(Prompt(name="p1"))
    assert [t.name for t in server.tools()] == ["alpha", "zeta"]
    assert server.tools()[0].input_schema == mcpwire.Server.tool_schema(Args)  # as listed, derived
    assert [t["name"] for t in listed_tools(server)] == [t.name for t in server.tools()]
    assert [r.uri for r in server.resources()] == ["test://a", "test://b"]
    assert [t.uri_template for t in server.templates()] == ["test://t/{x}"]
    assert [p.name for p in server.prompts()] == ["p1", "p2"]
    server.remove_tool("zeta")
    assert [t.name for t in server.tools()] == ["alpha"]
