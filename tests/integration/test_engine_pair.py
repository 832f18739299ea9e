"""Our client engine against our server engine, through bytes only (STYLE habits 14 and 15).

The server is the conformance fixture (``conformance/fixture.py``'s ``build_app()``) run
in-process: the client builds an :class:`OutgoingRequest`; over HTTP its headers and body go
to ``server.receive_http`` and each exchange's handler runs under trio through
``app.dispatch``; the response head (status, content type) and body chunks go back to a
:class:`HttpResponseParser`. Over stdio the request's line goes to a
:class:`mcpwire.StdioConnection` and what the server writes to a
:class:`ClientStdioConnection`. No sockets, no subprocesses.

Invariants checked on every conversation:

- every message the client sends validates against the official schema
  (``schema-2026-07-28.json``): the generic JSON-RPC envelope, ``ClientRequest`` and the
  method's own request definition; ``notifications/cancelled`` lines as well;
- every response gives the same events fed whole, byte by byte, in the server's own chunks
  and in random chunks (hypothesis, derandomized, a few examples each);
- MRTR retries have new ids, the same method and params, and echo ``requestState`` exactly.
"""

from __future__ import annotations

import functools
import itertools
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import anyio
import msgspec
import pytest
import trio
from anyio.streams.memory import MemoryObjectReceiveStream
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcpwire_adapters import App, Context, NeedInput
from msgspec import UNSET
from schema_check import validate

import mcpwire
from mcpwire.types import CallToolResult, CreateMessageRequest, CreateMessageResult, DiscoverResult, ElicitRequest, ElicitRequestFormParams, ElicitResult, GetPromptResult, Implementation, InputRequest, ListRootsResult, ReadResourceResult, Root, SubscriptionFilter, TextContent, TextResourceContents, Tool
from mcpwire import Cancelled, ClientStdioConnection, ErrorResult, Exchange, ExchangeState, HttpExchange, HttpListenStream, HttpRequest, HttpResponseParser, InputRequired, Keyring, ListChanged, ListenAck, LocalProtocolError, LogMessage, OutgoingRequest, Progress, ProtocolError, RemoteProtocolError, ResourceUpdated, ResponseBody, ResponseHead, ResultReceived, StdioConnection, StdioExchange, StdioListenStream
from mcpwire.client.engine import Client, Paginator
from mcpwire.client.events import ClientEvent

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "conformance"))

import fixture

NOW = 1_800_000_000.0
VERSION = "2026-07-28"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
ALL_CAPS: dict[str, Any] = {"roots": {}, "sampling": {}, "elicitation": {"form": {}, "url": {}}}
FINAL = (ResultReceived, ErrorResult, InputRequired)
REQUEST_DEFS = {
    "server/discover": "DiscoverRequest",
    "tools/list": "ListToolsRequest",
    "tools/call": "CallToolRequest",
    "resources/list": "ListResourcesRequest",
    "resources/templates/list": "ListResourceTemplatesRequest",
    "resources/read": "ReadResourceRequest",
    "prompts/list": "ListPromptsRequest",
    "prompts/get": "GetPromptRequest",
    "completion/complete": "CompleteRequest",
    "subscriptions/listen": "SubscriptionsListenRequest",
}
SECRET_URI = "test://engine-pair/secret"


# -- the two ends ------------------------------------------------------------------------------------


def make_app(**options: Any) -> App:
    """The fixture plus what it lacks for these tests: a resource that needs input (MRTR on
    resources/read) and a tool whose handler fails (-32603)."""
    app = fixture.build_app(keyring=Keyring.single(b"e" * 32), **options)

    @app.resource(SECRET_URI, name="secret", mime_type="text/plain", description="Asks for a password first")
    async def secret(ctx: Context) -> ReadResourceResult | NeedInput:
        answer = ctx.input_responses.get("password")
        if answer is None or ctx.state != {"asked": "password"}:
            form = ElicitRequestFormParams(
                message="Password?",
                requested_schema={"type": "object", "properties": {"password": {"type": "string"}}},
            )
            return NeedInput(requests={"password": ElicitRequest(params=form)}, state={"asked": "password"})
        text = f"the secret behind {answer['content']['password']}"
        return ReadResourceResult(contents=[TextResourceContents(uri=SECRET_URI, text=text)])

    @app.tool("engine_pair_boom", description="Its handler raises", input_schema=fixture.NO_ARGUMENTS)
    async def boom(ctx: Context, arguments: Any) -> CallToolResult:
        # A -32603 ProtocolError: a bare exception in a tool is a tool execution error (isError)
        # since the App's typed tools, no JSON-RPC error (tests/adapters/app/test_app_typed_tools.py).
        raise ProtocolError("a detail that must not reach the wire", code=-32603)

    @app.tool("engine_pair_late_error", description="Reports progress, then fails", input_schema=fixture.NO_ARGUMENTS)
    async def late_error(ctx: Context, arguments: Any) -> CallToolResult:
        await ctx.progress(1, total=2)
        await ctx.log("error", "about to fail")
        raise mcpwire.RemoteProtocolError("Cannot finish", code=-32602, data={"step": 2})

    return app


def make_client(**kw: Any) -> Client:
    kw.setdefault("capabilities", ALL_CAPS)
    return Client(Implementation(name="engine-pair", version="1.0"), **kw)


def check_sent(req: OutgoingRequest) -> dict[str, Any]:
    """Validate a request the client built against the official schema; return its JSON."""
    message: dict[str, Any] = json.loads(req.body)
    assert message["id"] == req.id and message["method"] == req.method
    assert req.line == req.body + b"\n" and b"\n" not in req.body
    validate(message, "JSONRPCRequest")
    validate(message, "ClientRequest")
    validate(message, REQUEST_DEFS[req.method])
    headers = dict(req.headers)
    assert headers[b"MCP-Protocol-Version"].decode() == message["params"]["_meta"][VERSION_KEY]
    assert headers[b"Mcp-Method"].decode() == req.method
    return message


def check_cancel(line: bytes, request: OutgoingRequest) -> None:
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    message = json.loads(line)
    for definition in ("JSONRPCNotification", "ClientNotification", "CancelledNotification"):
        validate(message, definition)
    assert message["params"]["requestId"] == request.id


def run_exchange(app: App, exchange: Exchange[Any]) -> list[Any]:
    """Run the exchange's handler to its end; return what it sent, in order."""
    out: list[Any] = []

    async def send(output: Any) -> None:
        out.append(output)

    trio.run(app.dispatch, exchange, send)
    return out


def drain(channel: MemoryObjectReceiveStream[Any]) -> list[Any]:
    """What the app delivered to an open listen stream so far."""
    out: list[Any] = []
    while True:
        try:
            out.append(channel.receive_nowait())
        except (anyio.WouldBlock, anyio.EndOfStream):
            return out


# -- chunking ----------------------------------------------------------------------------------------


class Raised(NamedTuple):
    """A parse that raised, as an outcome comparable across chunkings."""

    kind: str
    code: int
    message: str


Outcome = list[Any]


def outcome(parse: Callable[[], list[ClientEvent]]) -> Outcome:
    try:
        return list(parse())
    except ProtocolError as exc:
        return [Raised(type(exc).__name__, exc.code, exc.message)]


def split(data: bytes, cuts: Sequence[int]) -> list[bytes]:
    bounds = [0, *sorted({c for c in cuts if 0 < c < len(data)}), len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


RANDOM_CHUNKS = settings(
    max_examples=5, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck)
)


def same_in_any_chunking(parse: Callable[[list[bytes]], Outcome], natural: list[bytes]) -> Outcome:
    """The outcome of ``parse`` over the server's own chunks, checked equal to the outcome
    whole, byte by byte and in random chunks."""
    data = b"".join(natural)
    expected = parse(natural)
    assert parse([data]) == expected, "fed whole"
    assert parse([data[i : i + 1] for i in range(len(data))]) == expected, "fed byte by byte"

    @RANDOM_CHUNKS
    @given(st.lists(st.integers(min_value=1, max_value=max(len(data) - 1, 1)), max_size=12))
    def random_chunks(cuts: list[int]) -> None:
        assert parse(split(data, cuts)) == expected, f"fed in chunks cut at {sorted(set(cuts))}"

    random_chunks()
    return expected


# -- HTTP --------------------------------------------------------------------------------------------


class Wire(NamedTuple):
    """One HTTP response as the client sees it."""

    status: int
    content_type: bytes
    chunks: list[bytes]


def wire_of(outputs: Sequence[ResponseHead | ResponseBody], *, ended: bool = True) -> Wire:
    head = outputs[0]
    assert isinstance(head, ResponseHead), outputs
    bodies = list(outputs[1:])
    assert all(isinstance(b, ResponseBody) for b in bodies), outputs
    assert not ended or (bodies and not bodies[-1].more), "the response must end"  # type: ignore[union-attr]
    ctype = {k.lower(): v for k, v in head.headers}.get(b"content-type", b"")
    return Wire(head.status, ctype, [b.data for b in bodies])  # type: ignore[union-attr]


def http_request(req: OutgoingRequest, headers: Sequence[tuple[bytes, bytes]] | None = None,
                 body: bytes | None = None) -> HttpRequest:
    return HttpRequest(method="POST", target="/mcp", headers=list(req.headers if headers is None else headers),
                       body=req.body if body is None else body)


class HttpPair:
    """The client engine and the fixture app, joined by HTTP messages in memory."""

    transport = "http"

    def __init__(self, app: App, client: Client) -> None:
        self.app = app
        self.client = client

    def post(self, req: OutgoingRequest, *, headers: Sequence[tuple[bytes, bytes]] | None = None,
             body: bytes | None = None) -> Wire:
        answer = self.app.server.receive_http(http_request(req, headers, body), now=NOW)
        if isinstance(answer, tuple):
            return wire_of(answer)
        assert isinstance(answer, HttpExchange), answer
        return wire_of([item for output in run_exchange(self.app, answer) for item in output])

    def parse(self, req: OutgoingRequest, wire: Wire, chunks: list[bytes]) -> Outcome:
        def run() -> list[ClientEvent]:
            parser = HttpResponseParser(self.client, req, status=wire.status, content_type=wire.content_type)
            events: list[ClientEvent] = []
            for chunk in chunks:
                events += parser.feed(chunk)
            events += parser.close()
            assert parser.done or req.method == "subscriptions/listen"
            return events

        return outcome(run)

    def events(self, req: OutgoingRequest, wire: Wire) -> Outcome:
        return same_in_any_chunking(lambda chunks: self.parse(req, wire, chunks), wire.chunks)

    def roundtrip(self, req: OutgoingRequest) -> list[ClientEvent]:
        check_sent(req)
        events = self.events(req, self.post(req))
        assert not any(isinstance(e, Raised) for e in events), events
        return events

    def raw(self, req: OutgoingRequest, *, headers: Sequence[tuple[bytes, bytes]] | None = None,
            body: bytes | None = None) -> tuple[Outcome, Wire]:
        """Send ``req``'s headers and body, either replaced; the parser still expects ``req``."""
        wire = self.post(req, headers=headers, body=body)
        return self.events(req, wire), wire


# -- stdio -------------------------------------------------------------------------------------------


class StdioPair:
    """The client engine and the fixture app, joined by NDJSON bytes in memory."""

    transport = "stdio"

    def __init__(self, app: App, client: Client, **connection: Any) -> None:
        self.app = app
        self.client = client
        self.server = StdioConnection(app.server, **connection)
        self.conn = ClientStdioConnection(client)
        self.streams: list[tuple[StdioListenStream, MemoryObjectReceiveStream[Any]]] = []
        self.cancelled: list[Cancelled] = []

    def to_server(self, data: bytes) -> bytes:
        """Write ``data`` to the server's stdin; return what it writes to stdout, every
        exchange run to its end and every listen stream acknowledged."""
        out = b""
        for item in self.server.receive_data(data, now=NOW):
            if isinstance(item, bytes):
                out += item
            elif isinstance(item, StdioExchange):
                out += b"".join(run_exchange(self.app, item))
            elif isinstance(item, StdioListenStream):
                self.streams.append((item, self.app.open_stream(item)))
                out += item.start()
            elif isinstance(item, Cancelled):
                self.cancelled.append(item)
        return out

    def events(self, requests: Sequence[OutgoingRequest], stdout: bytes) -> Outcome:
        """The client's events for ``stdout``, with ``requests`` in flight; checked the same in
        any chunking (each on a fresh connection) and on the long-lived connection."""

        def parse(chunks: list[bytes]) -> Outcome:
            conn = ClientStdioConnection(self.client)
            for request in requests:
                conn.send(request)
            return outcome(lambda: [e for chunk in chunks for e in conn.receive_data(chunk)])

        expected = same_in_any_chunking(parse, [stdout])
        assert outcome(lambda: self.conn.receive_data(stdout)) == expected
        return expected

    def roundtrip(self, req: OutgoingRequest, also: Sequence[OutgoingRequest] = ()) -> list[ClientEvent]:
        check_sent(req)
        return self.events([*also, req], self.to_server(self.conn.send(req)))

    def raw(self, req: OutgoingRequest, line: bytes) -> Outcome:
        """Write ``line`` instead of ``req``'s while the client awaits ``req``."""
        self.conn.send(req)
        return self.events([req], self.to_server(line))


class Pair(Protocol):
    transport: str
    app: App
    client: Client

    def roundtrip(self, req: OutgoingRequest) -> list[ClientEvent]: ...


@pytest.fixture(params=["http", "stdio"])
def pair(request: pytest.FixtureRequest) -> Pair:
    app, client = make_app(), make_client()
    return HttpPair(app, client) if request.param == "http" else StdioPair(app, client)


def final(events: list[ClientEvent]) -> ClientEvent:
    """The final event, checked to be the last and only one."""
    assert events and isinstance(events[-1], FINAL), events
    assert not any(isinstance(e, FINAL) for e in events[:-1]), events
    return events[-1]


def text(event: ClientEvent) -> str:
    assert isinstance(event, ResultReceived), event
    value = event.value
    if isinstance(value, GetPromptResult):
        content: Any = value.messages[0].content
    elif isinstance(value, ReadResourceResult):
        contents = value.contents[0]  # decoded as ResourceContents (text or blob)
        assert isinstance(contents.text, str), contents
        return contents.text
    else:
        assert isinstance(value, CallToolResult), event
        content = value.content[0]
    assert isinstance(content, TextContent)
    return content.text


def error(event: ClientEvent, code: int) -> ErrorResult:
    assert isinstance(event, ErrorResult), event
    assert event.code == code, event
    return event


# -- MRTR --------------------------------------------------------------------------------------------


def reply(request: InputRequest, value: Any = None) -> Any:
    """A plausible client answer to one input request (``value`` for a form's first field)."""
    if isinstance(request, ElicitRequest):
        schema = request.params.requested_schema
        assert isinstance(schema, dict)
        field, spec = next(iter(schema["properties"].items()))
        default: str | bool = "Ada" if spec["type"] == "string" else True
        return ElicitResult(action="accept", content={str(field): default if value is None else value})
    if isinstance(request, CreateMessageRequest):
        return CreateMessageResult(role="assistant", content=TextContent(text=value or "Paris"), model="test-model")
    return ListRootsResult(roots=[Root(uri=value or "file:///project", name="project")])


def answer_all(**values: Any) -> Callable[[InputRequired], dict[str, Any]]:
    def answer(event: InputRequired) -> dict[str, Any]:
        return {key: reply(request, values.get(key)) for key, request in event.input_requests.items()}

    return answer


def params_of(req: OutgoingRequest) -> dict[str, Any]:
    params: dict[str, Any] = json.loads(req.body)["params"]
    return params


def check_retry(previous: OutgoingRequest, retry: OutgoingRequest, event: InputRequired) -> None:
    before, after = params_of(previous), params_of(retry)
    assert retry.method == previous.method and retry.id != previous.id
    round_keys = ("inputResponses", "requestState")
    assert {k: v for k, v in after.items() if k not in round_keys} == {
        k: v for k, v in before.items() if k not in round_keys
    }, "a retry repeats the call"
    if event.request_state is UNSET:
        assert "requestState" not in after
    else:
        assert after["requestState"] == event.request_state, "requestState is echoed exactly"
    assert set(after.get("inputResponses", {})) <= set(event.input_requests)


def follow(pair: Pair, req: OutgoingRequest, answer: Callable[[InputRequired], Mapping[str, Any]],
           max_rounds: int = 5) -> tuple[list[InputRequired], ClientEvent]:
    """Send ``req`` and answer each input_required round; return the rounds and the end."""
    rounds: list[InputRequired] = []
    ids = {req.id}
    while True:
        event = final(pair.roundtrip(req))
        if not isinstance(event, InputRequired):
            return rounds, event
        assert event.request is req and event.request_id == req.id and event.method == req.method
        rounds.append(event)
        assert len(rounds) <= max_rounds
        retry = pair.client.retry(event, answer(event))
        check_retry(req, retry, event)
        assert retry.id not in ids, "every round has a new id"
        ids.add(retry.id)
        req = retry


def kinds(event: InputRequired) -> dict[str, str]:
    return {key: type(request).__name__ for key, request in event.input_requests.items()}


# == tests ===========================================================================================


def test_discover_list_and_call(pair: Pair) -> None:
    client = pair.client
    discovered = final(pair.roundtrip(client.discover()))
    assert isinstance(discovered, ResultReceived) and isinstance(discovered.value, DiscoverResult)
    assert discovered.value.supported_versions == [VERSION]
    caps = discovered.value.capabilities
    assert caps.tools is not UNSET and caps.tools.list_changed is True
    pages = client.paginate("tools/list")
    while (req := pages.next_request()) is not None:
        event = final(pair.roundtrip(req))
        assert isinstance(event, ResultReceived)
        pages.add(event)
    names = [tool.name for tool in pages.items]
    assert names == sorted(names) and "test_input_required_result_multi_round" in names and not pages.truncated
    # tools/list taught the engine the x-mcp-header annotation, which the server checks.
    call = client.call_tool("custom_header_region", {"region": "eu-west"})
    assert dict(call.headers)[b"Mcp-Param-Region"] == b"eu-west"
    assert text(final(pair.roundtrip(call))) == "Region: eu-west"
    call = client.call_tool("custom_header_region", {"region": " Zürich\tcafé "})
    assert dict(call.headers)[b"Mcp-Param-Region"].startswith(b"=?base64?")
    assert text(final(pair.roundtrip(call))) == "Region:  Zürich\tcafé "
    assert text(final(pair.roundtrip(client.call_tool("test_simple_text")))) == (
        "This is a simple text response for testing."
    )
    read = final(pair.roundtrip(client.read_resource("test://template/42/data")))
    assert text(read) == "Template resource data for id 42"
    done = final(pair.roundtrip(client.complete({"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                                                "arg1", "test")))
    assert isinstance(done, ResultReceived) and done.data["completion"]["values"][:2] == ["test", "testValue1"]


@pytest.mark.parametrize(
    ("tool", "asked", "expected"),
    [
        ("test_input_required_result_elicitation", {"user_name": "ElicitRequest"}, "Hello, Ada!"),
        ("test_input_required_result_sampling", {"capital_question": "CreateMessageRequest"}, "Sampling response: Paris"),
        ("test_input_required_result_list_roots", {"client_roots": "ListRootsRequest"},
         "Client roots (1): file:///project"),
        ("test_input_required_result_request_state", {"confirm": "ElicitRequest"},
         "state-ok: requestState verified, confirmation True"),
        ("test_input_required_result_multiple_inputs",
         {"user_name": "ElicitRequest", "greeting": "CreateMessageRequest", "client_roots": "ListRootsRequest"},
         "Ada: Paris (roots: file:///project)"),
        ("test_streaming_elicitation", {"user_name": "ElicitRequest"}, "Hello, Ada!"),
    ],
)
def test_mrtr_single_round_tools(pair: Pair, tool: str, asked: dict[str, str], expected: str) -> None:
    rounds, end = follow(pair, pair.client.call_tool(tool), answer_all())
    assert [kinds(r) for r in rounds] == [asked]
    assert text(end) == expected
    # Every round carries a requestState: the engine records in it what each id asked.
    assert isinstance(rounds[0].request_state, str)


def test_mrtr_multi_round_three_rounds(pair: Pair) -> None:
    req = pair.client.call_tool("test_input_required_result_multi_round")
    rounds, end = follow(pair, req, answer_all(step2="blue"))
    assert [kinds(r) for r in rounds] == [{"step1": "ElicitRequest"}, {"step2": "ElicitRequest"}]
    states = [r.request_state for r in rounds]
    assert all(isinstance(s, str) for s in states) and states[0] != states[1], "each round's state differs"
    assert text(end) == "Ada likes blue"  # the name travelled in the state of round 2
    assert len({req.id, *(r.request_id for r in rounds), end.request_id}) == 3  # type: ignore[union-attr]


def test_mrtr_missing_answers_are_asked_again(pair: Pair) -> None:
    client = pair.client
    req = client.call_tool("test_input_required_result_multiple_inputs")
    first = final(pair.roundtrip(req))
    assert isinstance(first, InputRequired) and len(first.input_requests) == 3
    # Answer one of three: the server keeps it (in its state) and asks for the other two.
    partial = client.retry(first, {"user_name": reply(first.input_requests["user_name"], "Grace")})
    check_retry(req, partial, first)
    second = final(pair.roundtrip(partial))
    assert isinstance(second, InputRequired) and kinds(second) == {
        "greeting": "CreateMessageRequest", "client_roots": "ListRootsRequest"}
    assert isinstance(second.request_state, str)
    rounds, end = follow(pair, client.retry(second, answer_all()(second)), answer_all())
    assert rounds == [] and text(end) == "Grace: Paris (roots: file:///project)"
    # An accepted form without its field is no answer: asked again, not an error.
    req = client.call_tool("test_input_required_result_elicitation")
    ask = final(pair.roundtrip(req))
    assert isinstance(ask, InputRequired)
    again = final(pair.roundtrip(client.retry(ask, {"user_name": ElicitResult(action="accept", content={})})))
    assert isinstance(again, InputRequired) and kinds(again) == {"user_name": "ElicitRequest"}
    declined = final(pair.roundtrip(client.retry(again, {"user_name": ElicitResult(action="decline")})))
    assert text(declined) == "No name given: the user chose decline."


def test_mrtr_answer_of_the_wrong_shape_is_invalid_params(pair: Pair) -> None:
    client = pair.client
    ask = final(pair.roundtrip(client.call_tool("test_input_required_result_elicitation")))
    assert isinstance(ask, InputRequired)
    wrong = client.retry(ask, {"user_name": ListRootsResult(roots=[])})
    error(final(pair.roundtrip(wrong)), -32602)
    with pytest.raises(LocalProtocolError, match="not asked"):
        client.retry(ask, {"somebody_else": {}})


def test_mrtr_tampered_state_is_rejected(pair: Pair) -> None:
    client = pair.client
    req = client.call_tool("test_input_required_result_tampered_state")
    ask = final(pair.roundtrip(req))
    assert isinstance(ask, InputRequired) and isinstance(ask.request_state, str)
    state = ask.request_state
    flipped = state[:-3] + ("A" if state[-3] != "A" else "B") + state[-2:]
    tampered = client.retry(msgspec.structs.replace(ask, request_state=flipped), answer_all()(ask))
    assert params_of(tampered)["requestState"] == flipped
    bad = error(final(pair.roundtrip(tampered)), -32602)
    assert bad.message == "Invalid or expired request state"
    # A state from another tool (same server, same key) is rejected too: states are scoped.
    other = final(pair.roundtrip(client.call_tool("test_input_required_result_request_state")))
    assert isinstance(other, InputRequired) and isinstance(other.request_state, str)
    swapped = client.retry(msgspec.structs.replace(ask, request_state=other.request_state), answer_all()(ask))
    error(final(pair.roundtrip(swapped)), -32602)
    # The untouched state still works.
    _, end = follow(pair, client.retry(ask, answer_all()(ask)), answer_all())
    assert text(end) == "requestState verified; confirmation True"


@pytest.mark.parametrize(
    ("caps", "asked"),
    [
        ({"elicitation": {"form": {}}}, {"user_name"}),
        ({"sampling": {}, "roots": {}}, {"greeting", "client_roots"}),
        (ALL_CAPS, {"user_name", "greeting", "client_roots"}),
    ],
)
def test_mrtr_asks_only_what_the_capabilities_allow(pair: Pair, caps: dict[str, Any], asked: set[str]) -> None:
    req = pair.client.call_tool("test_input_required_result_capabilities", capabilities=caps)
    rounds, end = follow(pair, req, answer_all())
    assert [set(r.input_requests) for r in rounds] == [asked]
    # The retry declared the same capabilities (the call's _meta is repeated).
    assert params_of(rounds[0].request)["_meta"]["io.modelcontextprotocol/clientCapabilities"] == caps
    assert text(end) == "Received: " + ", ".join(sorted(asked))


def test_missing_capability_is_32021(pair: Pair) -> None:
    client = pair.client
    for tool in ("test_missing_capability", "test_input_required_result_capabilities"):
        event = error(final(pair.roundtrip(client.call_tool(tool, capabilities={}))), -32021)
        required = event.data["requiredCapabilities"]  # type: ignore[index]
        assert "sampling" in required
    assert set(event.data["requiredCapabilities"]) == {"elicitation", "sampling", "roots"}  # type: ignore[index]
    rounds, end = follow(pair, client.call_tool("test_missing_capability"), answer_all())
    assert len(rounds) == 1 and text(end) == "Sampling answered: Paris"


def test_mrtr_prompt_and_resource(pair: Pair) -> None:
    client = pair.client
    rounds, end = follow(pair, client.get_prompt("test_input_required_result_prompt"), answer_all(user_context="tea"))
    assert [kinds(r) for r in rounds] == [{"user_context": "ElicitRequest"}]
    assert end.method == "prompts/get" and text(end) == "Answer using this context: tea"  # type: ignore[union-attr]
    rounds, end = follow(pair, client.read_resource(SECRET_URI), answer_all(password="hunter2"))
    assert len(rounds) == 1 and isinstance(rounds[0].request_state, str)
    assert end.method == "resources/read" and text(end) == "the secret behind hunter2"  # type: ignore[union-attr]


def test_progress_and_logs_come_before_the_result(pair: Pair) -> None:
    client = pair.client
    req = client.call_tool("test_tool_with_progress", progress_token="tok-1")
    events = pair.roundtrip(req)
    assert [type(e) for e in events] == [Progress, Progress, Progress, ResultReceived]
    assert [(e.progress, e.total, e.request_id) for e in events[:3]] == [  # type: ignore[union-attr]
        (0, 100, req.id), (50, 100, req.id), (100, 100, req.id)]
    assert events[0] == Progress(request_id=req.id, progress_token="tok-1", progress=0, total=100,
                                 message="Starting computation")
    # Without a progressToken, no progress is sent.
    assert [type(e) for e in pair.roundtrip(client.call_tool("test_tool_with_progress"))] == [ResultReceived]
    req = client.call_tool("test_logging_tool", log_level="warning")
    events = pair.roundtrip(req)
    logs = [e for e in events if isinstance(e, LogMessage)]
    assert [e.level for e in logs] == ["warning", "error", "critical", "alert", "emergency"]
    assert all(e.request_id == req.id and e.logger == "conformance" for e in logs)
    assert events[: len(logs)] == logs and text(final(events)) == "Logged at every level"
    assert [type(e) for e in pair.roundtrip(client.call_tool("test_logging_tool"))] == [ResultReceived]


def test_version_fallback(pair: Pair) -> None:
    # The client prefers a version the server lacks: -32022, then one retry with a shared one.
    client = make_client(protocol_version="2099-01-01", supported_versions=("2099-01-01", VERSION))
    pair.client = client
    if isinstance(pair, StdioPair):
        pair.conn = ClientStdioConnection(client)
    first = client.discover()
    refused = error(final(pair.roundtrip(first)), -32022)
    assert refused.data == {"requested": "2099-01-01", "supported": [VERSION]}
    second = client.version_retry(first, refused)
    assert second.id != first.id and client.protocol_version == VERSION
    assert params_of(second)["_meta"][VERSION_KEY] == VERSION
    assert isinstance(final(pair.roundtrip(second)), ResultReceived)
    assert isinstance(final(pair.roundtrip(client.list_tools())), ResultReceived)  # the new version sticks


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_version_fallback_to_the_servers_only_version(transport: str) -> None:
    app = make_app(supported_versions=("2099-01-01",))
    lone = make_client()
    pair: HttpPair | StdioPair = HttpPair(app, lone) if transport == "http" else StdioPair(app, lone)
    req = lone.discover()
    refused = error(final(pair.roundtrip(req)), -32022)
    assert refused.data == {"requested": VERSION, "supported": ["2099-01-01"]}
    with pytest.raises(LocalProtocolError, match="no common protocol version"):
        lone.version_retry(req, refused)
    both = make_client(supported_versions=(VERSION, "2099-01-01"))
    pair.client = both
    if isinstance(pair, StdioPair):
        pair.conn = ClientStdioConnection(both)
    req = both.discover()
    retry = both.version_retry(req, error(final(pair.roundtrip(req)), -32022))
    found = final(pair.roundtrip(retry))
    assert isinstance(found, ResultReceived) and found.data["supportedVersions"] == ["2099-01-01"]
    assert text(final(pair.roundtrip(both.call_tool("test_simple_text")))).startswith("This is a simple")


@functools.cache
def header_pair() -> HttpPair:
    pair = HttpPair(make_app(), make_client())
    listing = pair.client.list_tools()
    wire = pair.post(listing)
    pair.parse(listing, wire, wire.chunks)  # learn the x-mcp-header annotations
    return pair


@settings(max_examples=60, derandomize=True, database=None, deadline=None)
@given(region=st.text(max_size=24) | st.from_regex(r"=\?base64\?[A-Za-z0-9+/=]{0,12}\?=", fullmatch=True))
def test_any_argument_survives_the_param_header(region: str) -> None:
    # Whatever the client mirrors into Mcp-Param-Region (plain or base64), the server reads back
    # the same value as the body's: the call is answered, never -32020.
    pair = header_pair()
    req = pair.client.call_tool("custom_header_region", {"region": region})
    check_sent(req)
    wire = pair.post(req)
    [event] = pair.parse(req, wire, wire.chunks)
    assert text(event) == f"Region: {region}"


def test_an_error_after_progress_travels_as_an_event(pair: Pair) -> None:
    req = pair.client.call_tool("engine_pair_late_error", progress_token="late", log_level="info")
    events = pair.roundtrip(req)
    assert [type(e) for e in events] == [Progress, LogMessage, ErrorResult]
    assert error(events[-1], -32602).data == {"step": 2} and events[-1].request_id == req.id  # type: ignore[union-attr]
    if isinstance(pair, HttpPair):  # the SSE stream had started: status 200, error as its last event
        wire = pair.post(pair.client.call_tool("engine_pair_late_error", progress_token="late2"))
        assert wire.status == 200 and wire.content_type == b"text/event-stream"
        # Without progress or logs the same error is a plain JSON 400.
        wire = pair.post(pair.client.call_tool("engine_pair_late_error"))
        assert wire.status == 400 and wire.content_type == b"application/json"


# -- pagination ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_pagination_walks_every_page_and_stops_at_the_cap(transport: str) -> None:
    app = make_app(page_size=4)
    for i in range(30):
        app.server.add_tool(Tool(name=f"zz_extra_{i:02}", description="filler", input_schema={"type": "object"}))
    client = make_client()
    pair: HttpPair | StdioPair = HttpPair(app, client) if transport == "http" else StdioPair(app, client)
    pages = Paginator(client, "tools/list")
    cursors: list[Any] = []
    while (req := pages.next_request()) is not None:
        cursors.append(params_of(req).get("cursor"))
        event = final(pair.roundtrip(req))
        assert isinstance(event, ResultReceived) and len(event.value.tools) <= 4
        pages.add(event)
    total = len(pages.items)
    assert total >= 50 and pages.pages == -(-total // 4) and not pages.truncated
    assert cursors[0] is None and len(set(cursors[1:])) == len(cursors) - 1
    names = [t.name for t in pages.items]
    assert names == sorted(names) and len(set(names)) == total
    capped = client.paginate("tools/list", max_pages=3)
    while (req := capped.next_request()) is not None:
        capped.add(final(pair.roundtrip(req)))  # type: ignore[arg-type]
    assert capped.truncated and capped.pages == 3 and [t.name for t in capped.items] == names[:12]
    prompts = client.paginate("prompts/list")
    while (req := prompts.next_request()) is not None:
        prompts.add(final(pair.roundtrip(req)))  # type: ignore[arg-type]
    assert prompts.pages == 2 and len(prompts.items) == 5
    # A cursor the server never issued is -32602, and so is one the catalog outgrew.
    error(final(pair.roundtrip(client.list_tools(cursor="not-a-cursor"))), -32602)
    walk = client.paginate("tools/list")
    first = walk.next_request()
    assert first is not None
    walk.add(final(pair.roundtrip(first)))  # type: ignore[arg-type]
    app.server.add_tool(Tool(name="aa_new", description="added mid-walk", input_schema={"type": "object"}))
    second = walk.next_request()
    assert second is not None
    expired = error(final(pair.roundtrip(second)), -32602)
    assert expired.message == "Pagination cursor has expired"


# -- subscriptions/listen -----------------------------------------------------------------------------

LISTEN_ALL: dict[str, Any] = {
    "toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True,
    "resourceSubscriptions": ["test://static-text"],
}


def test_http_listen_ack_events_and_graceful_close() -> None:
    app, client = make_app(resource_subscribe=True), make_client()
    pair = HttpPair(app, client)
    req = client.listen(LISTEN_ALL)
    check_sent(req)
    stream = app.server.receive_http(http_request(req), now=NOW)
    assert isinstance(stream, HttpListenStream)
    channel = app.open_stream(stream)
    outputs: list[Any] = list(stream.start())
    assert text(final(pair.roundtrip(client.call_tool("test_trigger_tool_change")))).startswith("Sent")
    app.notify_resource_updated("test://static-text")
    app.notify_resource_updated("test://static-binary")  # not subscribed: nothing
    app.notify_list_changed("resources")  # not honoured (no listChanged for resources): nothing
    for output in drain(channel):
        outputs += output
    # The HTTP driver writes a comment on an idle stream; it is no event.
    outputs.append(ResponseBody(data=mcpwire.framing.encode_comment("keepalive"), more=True))
    open_wire = wire_of(outputs, ended=False)
    app.close_streams()
    for output in drain(channel):
        outputs += output
    events = pair.events(req, wire_of(outputs))
    honoured = SubscriptionFilter(tools_list_changed=True, prompts_list_changed=True,
                                  resource_subscriptions=["test://static-text"])
    assert events[:3] == [
        ListenAck(subscription_id=req.id, notifications=honoured),
        ListChanged(subscription_id=req.id, kind="tools"),
        ResourceUpdated(subscription_id=req.id, uri="test://static-text"),
    ]
    end = events[3]
    assert len(events) == 4 and isinstance(end, ResultReceived) and end.method == "subscriptions/listen"
    assert end.data["_meta"]["io.modelcontextprotocol/subscriptionId"] == req.id
    # A stream cut before its result (the server went away) ends with no event and no error.
    assert pair.events(req, open_wire) == events[:3]


def test_http_listen_checks_the_subscription_id() -> None:
    app, client = make_app(), make_client()
    req = client.listen({"toolsListChanged": True})
    other = client.call_tool("test_simple_text")
    stream = app.server.receive_http(http_request(req), now=NOW)
    assert isinstance(stream, HttpListenStream)
    body = b"".join(b.data for b in stream.start() if isinstance(b, ResponseBody))
    assert isinstance(req.id, int)
    for sid in (req.id + 1000, other.id, str(req.id)):
        forged = json.dumps({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                             "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": sid}}})
        parser = HttpResponseParser(client, req, status=200, content_type=b"text/event-stream")
        assert isinstance(parser.feed(body)[0], ListenAck)
        with pytest.raises(RemoteProtocolError, match="unknown subscription"):
            parser.feed(b"data: " + forged.encode() + b"\n\n")


def test_http_listen_refusals() -> None:
    app, client = make_app(max_listen_streams=1), make_client()
    pair = HttpPair(app, client)
    bad = client.listen({"toolsListChanged": "yes"})  # deliberately schema-invalid
    events, wire = pair.raw(bad)
    assert wire.status == 400 and error(final(events), -32602).request_id == bad.id
    first = client.listen({"toolsListChanged": True})
    assert isinstance(app.server.receive_http(http_request(first), now=NOW), HttpListenStream)
    second = client.listen({"toolsListChanged": True})
    events, wire = pair.raw(second)
    assert wire.status == 503 and error(final(events), -32603).request_id == second.id


def test_stdio_listen_events_and_cancel() -> None:
    app, client = make_app(resource_subscribe=True), make_client()
    pair = StdioPair(app, client)
    req = client.listen(LISTEN_ALL)
    ack = pair.roundtrip(req)
    honoured = SubscriptionFilter(tools_list_changed=True, prompts_list_changed=True,
                                  resource_subscriptions=["test://static-text"])
    assert ack == [ListenAck(subscription_id=req.id, notifications=honoured)]
    assert pair.conn.in_flight == 1
    trigger = pair.roundtrip(client.call_tool("test_trigger_prompt_change"), also=[req])
    assert text(final(trigger)).startswith("Sent")
    [(_, channel)] = pair.streams
    app.notify_resource_updated("test://static-text/deeper")  # under a subscribed URI
    stdout = b"".join(drain(channel))
    assert pair.events([req], stdout) == [
        ListChanged(subscription_id=req.id, kind="prompts"),
        ResourceUpdated(subscription_id=req.id, uri="test://static-text/deeper"),
    ]
    # Cancelling the listen request ends the stream at once: nothing more is sent for it.
    line = pair.conn.cancel(req, "done listening")
    check_cancel(line, req)
    assert pair.to_server(line) == b"" and pair.cancelled[-1].request_id == req.id
    assert pair.conn.in_flight == 0 and app.server.open_listeners == 0
    app.notify_list_changed("tools")
    app.close_streams()
    assert b"".join(drain(channel)) == b""


def test_stdio_listen_graceful_close_result() -> None:
    app, client = make_app(), make_client()
    pair = StdioPair(app, client)
    req = client.listen({"toolsListChanged": True})
    assert [type(e) for e in pair.roundtrip(req)] == [ListenAck]
    app.close_streams()
    [(_, channel)] = pair.streams
    [end] = pair.events([req], b"".join(drain(channel)))
    assert isinstance(end, ResultReceived) and end.method == "subscriptions/listen" and end.request_id == req.id
    assert pair.conn.in_flight == 0


def test_stdio_log_attributed_while_a_listen_stream_is_open() -> None:
    app, client = make_app(), make_client()
    pair = StdioPair(app, client)
    listen = client.listen({"toolsListChanged": True})
    pair.roundtrip(listen)
    call = client.call_tool("test_logging_tool", log_level="emergency")
    events = pair.roundtrip(call, also=[listen])
    assert events[0] == LogMessage(request_id=call.id, level="emergency", data="emergency message",
                                   logger="conformance")


# -- cancellation -------------------------------------------------------------------------------------


def test_stdio_cancel_leaves_no_late_response() -> None:
    app, client = make_app(), make_client()
    server, conn = StdioConnection(app.server), ClientStdioConnection(client)
    req = client.call_tool("test_tool_with_progress", progress_token="p")
    stdout = bytearray()

    async def main() -> None:
        [exchange] = server.receive_data(conn.send(req), now=NOW)
        assert isinstance(exchange, StdioExchange)
        first = trio.Event()

        async def send(data: bytes) -> None:
            stdout.extend(data)
            first.set()

        with trio.fail_after(5):
            await stdio_cancel(exchange, send, first)
        assert exchange.complete("late") == b"" and server.in_flight == 0

    async def stdio_cancel(exchange: StdioExchange, send: Callable[[bytes], Any], first: trio.Event) -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(app.dispatch, exchange, send)  # the handler runs to its end
            await first.wait()
            line = conn.cancel(req, "user pressed stop")
            check_cancel(line, req)
            [cancelled] = server.receive_data(line, now=NOW)
            assert cancelled == Cancelled(request_id=req.id, reason="user pressed stop")
            assert exchange.state is ExchangeState.CANCELLED

    trio.run(main)
    assert bytes(stdout).count(b"\n") == 1, "only the progress sent before the cancel"
    assert conn.in_flight == 0 and conn.receive_data(bytes(stdout)) == []  # the stale progress is dropped
    # A cancel for a request that already finished is ignored by the server.
    done = client.call_tool("test_simple_text")
    [ex] = server.receive_data(conn.send(done), now=NOW)
    assert isinstance(ex, StdioExchange)
    events = conn.receive_data(b"".join(run_exchange(app, ex)))
    assert isinstance(final(events), ResultReceived)
    assert server.receive_data(client.cancel(done), now=NOW) == []


def test_http_cancel_by_closing_the_stream() -> None:
    app, client = make_app(), make_client()
    req = client.call_tool("test_tool_with_progress", progress_token=9)
    exchange = app.server.receive_http(http_request(req), now=NOW)
    assert isinstance(exchange, HttpExchange)
    sent: list[Any] = []

    async def main() -> None:
        first = trio.Event()

        async def send(output: Any) -> None:
            sent.extend(output)
            first.set()

        with trio.fail_after(5):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(app.dispatch, exchange, send)
                await first.wait()
                    # The client closes the response stream; the host sees it and cancels (section 9).
                exchange.cancel()
                nursery.cancel_scope.cancel()

    trio.run(main)
    assert exchange.state is ExchangeState.CANCELLED and exchange.complete("late") == []
    wire = wire_of(sent, ended=False)
    parser = HttpResponseParser(client, req, status=wire.status, content_type=wire.content_type)
    events = [e for chunk in wire.chunks for e in parser.feed(chunk)]
    assert events == [Progress(request_id=req.id, progress_token=9, progress=0, total=100,
                               message="Starting computation")]
    assert not parser.done  # the client stops reading here; nothing is sent to cancel


# -- error paths ----------------------------------------------------------------------------------------


def replace_header(headers: Sequence[tuple[bytes, bytes]], name: bytes, value: bytes | None) -> list[tuple[bytes, bytes]]:
    out = [(k, v) for k, v in headers if k.lower() != name.lower()]
    return out if value is None else [*out, (name, value)]


class HttpCase(NamedTuple):
    make: Callable[[Client], OutgoingRequest]
    code: int
    status: int
    headers: Callable[[Sequence[tuple[bytes, bytes]]], list[tuple[bytes, bytes]]] | None = None
    body: Callable[[OutgoingRequest], bytes] | None = None


def _not_a_request(req: OutgoingRequest) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": req.id, "params": params_of(req)}).encode()


HTTP_ERRORS = {
    "parse error": HttpCase(lambda c: c.discover(), -32700, 400, body=lambda r: r.body[:-5]),
    "not a request": HttpCase(lambda c: c.discover(), -32600, 400, body=_not_a_request),
    "batch": HttpCase(lambda c: c.discover(), -32600, 400, body=lambda r: b"[" + r.body + b"]"),
    "Accept of neither type": HttpCase(lambda c: c.discover(), -32600, 406,
                                       headers=lambda h: replace_header(h, b"Accept", b"text/html")),
    "wrong Content-Type": HttpCase(lambda c: c.discover(), -32600, 415,
                                   headers=lambda h: replace_header(h, b"Content-Type", b"text/plain")),
    "removed initialize": HttpCase(lambda c: c.request("initialize", {"capabilities": {}}), -32601, 404),
    "removed ping": HttpCase(lambda c: c.request("ping"), -32601, 404),
    "removed resources/subscribe": HttpCase(lambda c: c.request("resources/subscribe", {"uri": "test://x"}),
                                            -32601, 404),
    "removed logging/setLevel": HttpCase(lambda c: c.request("logging/setLevel", {"level": "info"}), -32601, 404),
    "unknown tool": HttpCase(lambda c: c.call_tool("no_such_tool"), -32602, 400),
    "missing prompt argument": HttpCase(lambda c: c.get_prompt("test_prompt_with_arguments", {"arg1": "a"}),
                                        -32602, 400),
    "unknown resource": HttpCase(lambda c: c.read_resource("test://nowhere"), -32602, 400),
    "Mcp-Name tampered": HttpCase(lambda c: c.call_tool("test_simple_text"), -32020, 400,
                                  headers=lambda h: replace_header(h, b"Mcp-Name", b"test_error_handling")),
    "Mcp-Method tampered": HttpCase(lambda c: c.call_tool("test_simple_text"), -32020, 400,
                                    headers=lambda h: replace_header(h, b"Mcp-Method", b"tools/list")),
    "version header tampered": HttpCase(lambda c: c.discover(), -32020, 400,
                                        headers=lambda h: replace_header(h, b"MCP-Protocol-Version", b"2025-11-25")),
    "Mcp-Param tampered": HttpCase(lambda c: c.call_tool("custom_header_region", {"region": "eu"}), -32020, 400,
                                   headers=lambda h: replace_header(h, b"Mcp-Param-Region", b"us")),
    "missing capability": HttpCase(lambda c: c.call_tool("test_missing_capability", capabilities={}), -32021, 400),
    "handler raised": HttpCase(lambda c: c.call_tool("engine_pair_boom"), -32603, 500),
}


@pytest.mark.parametrize("case", HTTP_ERRORS.values(), ids=list(HTTP_ERRORS))
def test_http_error_paths(case: HttpCase) -> None:
    app, client = make_app(), make_client()
    pair = HttpPair(app, client)
    pair.roundtrip(client.list_tools())  # learn the x-mcp-header annotations
    req = case.make(client)
    if req.method in REQUEST_DEFS:
        check_sent(req)  # what the client built is valid; the test then breaks it on purpose
    headers = case.headers(req.headers) if case.headers else None
    events, wire = pair.raw(req, headers=headers, body=case.body(req) if case.body else None)
    assert wire.status == case.status and wire.content_type == b"application/json"
    event = error(final(events), case.code)
    assert event.request_id == req.id  # id null errors are the one request's on HTTP
    if case.code == -32603:
        assert event.message == "Internal error" and event.data is UNSET  # no detail leaks
    if case.code == -32021:
        assert event.data == {"requiredCapabilities": {"sampling": {}}}


def test_http_non_json_refusal_raises() -> None:
    client = make_client()
    req = client.discover()
    pair = HttpPair(make_app(), client)
    wire = Wire(405, b"text/plain", [b"Method Not Allowed"])
    [raised] = pair.events(req, wire)
    assert isinstance(raised, Raised) and raised.code == -32000 and "HTTP 405" in raised.message


STDIO_ERRORS: dict[str, tuple[Callable[[Client], OutgoingRequest], Callable[[OutgoingRequest], bytes] | None, int]] = {
    "parse error": (lambda c: c.discover(), lambda r: r.body[:-5] + b"\n", -32700),
    "not a request": (lambda c: c.discover(), lambda r: _not_a_request(r) + b"\n", -32600),
    "removed initialize": (lambda c: c.request("initialize", {"capabilities": {}}), None, -32601),
    "removed ping": (lambda c: c.request("ping"), None, -32601),
    "removed logging/setLevel": (lambda c: c.request("logging/setLevel", {"level": "info"}), None, -32601),
    "unknown tool": (lambda c: c.call_tool("no_such_tool"), None, -32602),
    "missing prompt argument": (lambda c: c.get_prompt("test_prompt_with_arguments", {"arg2": "b"}), None, -32602),
    "missing capability": (lambda c: c.call_tool("test_missing_capability", capabilities={}), None, -32021),
    "handler raised": (lambda c: c.call_tool("engine_pair_boom"), None, -32603),
}


@pytest.mark.parametrize("case", STDIO_ERRORS.values(), ids=list(STDIO_ERRORS))
def test_stdio_error_paths(case: tuple[Callable[[Client], OutgoingRequest], Callable[[OutgoingRequest], bytes] | None,
                                       int]) -> None:
    make, line_of, code = case
    app, client = make_app(), make_client()
    pair = StdioPair(app, client)
    req = make(client)
    if req.method in REQUEST_DEFS:
        check_sent(req)
    events = pair.raw(req, line_of(req) if line_of else req.line)
    event = error(final(events), code)
    assert event.request_id == req.id and pair.conn.in_flight == 0
    # The connection survives: the next request is answered.
    assert isinstance(final(pair.roundtrip(client.discover())), ResultReceived)


def test_stdio_limits_answer_with_errors() -> None:
    app, client = make_app(), make_client()
    pair = StdioPair(app, client, max_in_flight=1, max_line_bytes=4096)
    a, b = client.call_tool("test_simple_text"), client.call_tool("test_simple_text")
    check_sent(a)
    check_sent(b)
    stdout = pair.to_server(pair.conn.send(a) + pair.conn.send(b))
    by_id = {e.request_id: e for e in pair.events([a, b], stdout)}
    assert isinstance(by_id[a.id], ResultReceived)
    assert error(by_id[b.id], -32603).message == "Internal error"  # the in-flight bound; -32603 has no detail
    # A line over the server's limit: -32600 with id null, which the client gives the one request.
    big = client.call_tool("test_simple_text", {"pad": "x" * 5000})
    [oversize] = pair.roundtrip(big)
    assert error(oversize, -32600).request_id == big.id
    # Two requests in flight: an id-null error cannot be attributed.
    c, d = client.discover(), client.discover()
    pair.conn.send(c)
    pair.conn.send(d)
    stdout = pair.to_server(b"{oops\n")
    [unattributed] = pair.events([c, d], stdout)
    assert error(unattributed, -32700).request_id is None and pair.conn.in_flight == 2


def test_stdio_ids_1_and_string_1_are_different_requests() -> None:
    app, client = make_app(), make_client()
    pair = StdioPair(app, client)
    as_int = client.call_tool("test_tool_with_progress", progress_token=1, request_id=1)
    as_str = client.call_tool("test_simple_text", request_id="1")
    check_sent(as_int)
    check_sent(as_str)
    stdout = pair.to_server(pair.conn.send(as_int) + pair.conn.send(as_str))
    events = [e for e in pair.events([as_int, as_str], stdout) if isinstance(e, ResultReceived)]
    assert {(type(e.request_id), e.request_id): text(e)[:20] for e in events} == {
        (int, 1): "Progress computation", (str, "1"): "This is a simple tex"}


def test_stdio_eof_reads_the_last_line_and_fails_requests_in_flight() -> None:
    app, client = make_app(), make_client()
    pair = StdioPair(app, client)
    a, b = client.discover(), client.call_tool("test_simple_text")
    stdout = pair.to_server(pair.conn.send(a) + pair.conn.send(b))
    first_line = stdout[: stdout.index(b"\n") + 1]
    # The server's last line lost its newline, then stdout closed: the line still counts.
    events = pair.conn.receive_data(first_line) + pair.conn.receive_data(stdout[len(first_line) : -1])
    events += pair.conn.receive_eof()
    assert [type(e) for e in events] == [ResultReceived, ResultReceived] and pair.conn.in_flight == 0
    c = client.discover()
    pair.conn.send(c)
    [event] = pair.conn.receive_eof()
    assert error(event, -32000).request_id == c.id and pair.conn.in_flight == 0


def test_malformed_capabilities_are_a_local_error() -> None:
    with pytest.raises(LocalProtocolError):
        make_client().call_tool("test_simple_text", capabilities={"roots": True})
