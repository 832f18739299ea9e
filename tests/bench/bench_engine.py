"""In-process variants: the msgspec floor and our engines (no sockets).

Each ``*_variant`` builds its state, checks once that it produces the expected answer (so a
benchmark can never quietly time an error path), and returns a :class:`Variant` whose batch
runs the operation ``n`` times. Output is produced and dropped, as a host would write it.
"""

from __future__ import annotations

import importlib.util
import itertools
from time import perf_counter_ns
from collections.abc import Callable
from typing import Any

import msgspec

import mcpwire
from mcpwire import HttpExchange, ResponseBody, ResponseHead, StdioConnection, StdioExchange

from ._asgi import AsgiDriver
from ._harness import Variant
from ._workload import (
    BIG_TEXT, BIG_URI, CALL, CALL_HEADERS, ELICIT, INFO, INIT, INITIALIZED, LIST_TOOLS, MRTR_1, MRTR_HEADERS, NOW,
    PROGRESS, PROGRESS_FRAMES, PROGRESS_HEADERS, READ, READ_HEADERS, SERVER_INFO_META_KEY, SESSION_CALL, big_result,
    echo_result, headers, http, list_page, list_server, mrtr_round_2, our_app, schema_server, session_headers,
    small_server, TASK_CALL, TASK_CALL_HEADERS, TASK_GET, TASK_GET_HEADERS, tasks_server,
)

# -- the floor: msgspec alone, typed envelope in, the same response bytes out ---------------------


class _FArgs(msgspec.Struct):
    text: str


class _FCallParams(msgspec.Struct, rename={"meta": "_meta"}):
    name: str
    arguments: _FArgs
    meta: dict[str, Any]


class _FCallRequest(msgspec.Struct):
    jsonrpc: str
    id: int | str
    method: str
    params: _FCallParams


class _FText(msgspec.Struct, tag_field="type", tag="text"):
    text: str


class _FCallResult(msgspec.Struct, rename={"result_type": "resultType", "meta": "_meta"}):
    result_type: str
    content: list[_FText]
    meta: dict[str, Any]


class _FCallResponse(msgspec.Struct):
    jsonrpc: str
    id: int | str
    result: _FCallResult


class _FReadParams(msgspec.Struct, rename={"meta": "_meta"}):
    uri: str
    meta: dict[str, Any]


class _FReadRequest(msgspec.Struct):
    jsonrpc: str
    id: int | str
    method: str
    params: _FReadParams


class _FContents(msgspec.Struct, rename="camel"):
    uri: str
    mime_type: str
    text: str


class _FReadResult(msgspec.Struct, rename={"result_type": "resultType", "ttl_ms": "ttlMs",
                                           "cache_scope": "cacheScope", "meta": "_meta"}):
    result_type: str
    contents: list[_FContents]
    ttl_ms: int
    cache_scope: str
    meta: dict[str, Any]


class _FReadResponse(msgspec.Struct):
    jsonrpc: str
    id: int | str
    result: _FReadResult


_SERVER_META = {SERVER_INFO_META_KEY: msgspec.to_builtins(INFO)}


def _body_of(out: list[ResponseHead | ResponseBody]) -> bytes:
    return b"".join(e.data for e in out if isinstance(e, ResponseBody))


def _engine_call_bytes() -> bytes:
    server = small_server()
    ex = server.receive_http(http(CALL, CALL_HEADERS), now=NOW)
    assert isinstance(ex, HttpExchange)
    return _body_of(ex.complete(echo_result("hello")))


def floor_call_variant() -> Variant:
    dec = msgspec.json.Decoder(_FCallRequest)
    enc = msgspec.json.Encoder()
    meta = _SERVER_META

    def once() -> bytes:
        req = dec.decode(CALL)
        result = _FCallResult("complete", [_FText(req.params.arguments.text)], meta)
        return enc.encode(_FCallResponse("2.0", req.id, result))

    expected = _engine_call_bytes()
    if once() != expected:
        raise AssertionError(f"floor bytes differ from the engine's:\n{once()!r}\n{expected!r}")

    def batch(n: int) -> int:
        decode, encode = dec.decode, enc.encode
        t0 = perf_counter_ns()
        for _ in range(n):
            req = decode(CALL)
            encode(_FCallResponse("2.0", req.id, _FCallResult("complete", [_FText(req.params.arguments.text)], meta)))
        return perf_counter_ns() - t0

    return Variant("floor.call", batch)


def floor_read_variant() -> Variant:
    dec = msgspec.json.Decoder(_FReadRequest)
    enc = msgspec.json.Encoder()
    meta = _SERVER_META

    def make(req: _FReadRequest) -> _FReadResponse:
        contents = [_FContents(req.params.uri, "text/plain", BIG_TEXT)]
        return _FReadResponse("2.0", req.id, _FReadResult("complete", contents, 0, "private", meta))

    server = small_server()
    ex = server.receive_http(http(READ, READ_HEADERS), now=NOW)
    assert isinstance(ex, HttpExchange)
    if enc.encode(make(dec.decode(READ))) != _body_of(ex.complete(big_result())):
        raise AssertionError("floor bytes differ from the engine's for resources/read")

    def batch(n: int) -> int:
        t0 = perf_counter_ns()
        for _ in range(n):
            enc.encode(make(dec.decode(READ)))
        return perf_counter_ns() - t0

    return Variant("floor.read_1mib", batch)


# -- our engine over HTTP ---------------------------------------------------------------------------


def _echo_batch(server: mcpwire.Server, req: mcpwire.HttpRequest) -> Callable[[int], int]:
    """n times: ``req`` into ``server``, its exchange completed with the echoed text; the ns taken."""

    def batch(n: int) -> int:
        receive = server.receive_http
        t0 = perf_counter_ns()
        for _ in range(n):
            ex = receive(req, now=NOW)
            ex.complete(echo_result(ex.event.arguments.text))  # type: ignore[union-attr]
        return perf_counter_ns() - t0

    return batch


def engine_call_variant() -> Variant:
    server = small_server()
    req = http(CALL, CALL_HEADERS)
    assert _engine_call_bytes().startswith(b'{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"')

    return Variant("ours.call", _echo_batch(server, req))


def engine_call_no_lane_variant() -> Variant:
    """The same call with ``Server(call_memo=0)``: admitted the full way every time, as a call
    whose head the server does not remember (mcpwire/server/call_fast_path.py) always is."""
    server = small_server(call_memo=0)
    return Variant("ours.call_no_lane", _echo_batch(server, http(CALL, CALL_HEADERS)))


def engine_session_call_variant() -> Variant:
    """The same call on an initialize-era session (2025-11-25): opened once, then each call
    finds the session in the store, is admitted for its revision, answered and shaped."""
    server = small_server(session_ids=(f"session-{i}" for i in itertools.count()))
    opened = server.receive_http(http(INIT, session_headers(INIT, None)), now=NOW)
    assert isinstance(opened, tuple) and isinstance(opened[0], ResponseHead), opened
    session_id = dict(opened[0].headers)[b"mcp-session-id"].decode()
    note = server.receive_http(http(INITIALIZED, session_headers(INITIALIZED, session_id)), now=NOW)
    assert isinstance(note, tuple) and note[0].status == 202, note
    req = http(SESSION_CALL, session_headers(SESSION_CALL, session_id))
    ex = server.receive_http(req, now=NOW)
    assert isinstance(ex, HttpExchange)
    assert _body_of(ex.complete(echo_result("hello"))) == (
        b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}]}}')

    return Variant("ours.session_call", _echo_batch(server, req))


def engine_call_schema_variant() -> Variant:
    """The same call to a tool declared by raw JSON Schema (the jsonschema validator runs)."""
    server = schema_server()
    req = http(CALL, CALL_HEADERS)
    ex = server.receive_http(req, now=NOW)
    assert isinstance(ex, HttpExchange) and ex.event.arguments == {"text": "hello"}  # type: ignore[union-attr]

    def batch(n: int) -> int:
        receive = server.receive_http
        t0 = perf_counter_ns()
        for _ in range(n):
            ex = receive(req, now=NOW)
            ex.complete(echo_result(ex.event.arguments["text"]))  # type: ignore[union-attr]
        return perf_counter_ns() - t0

    return Variant("ours.call_jsonschema", batch)


def app_call_variant() -> Variant:
    """The engine plus our adapters' App.dispatch (the handler is called), inside trio."""
    import trio

    app = our_app()
    server = app.server
    req = http(CALL, CALL_HEADERS)
    sink: list[Any] = []

    async def send(out: Any) -> None:
        sink.append(out)

    async def run(n: int) -> int:
        dispatch, receive = app.dispatch, server.receive_http
        t0 = perf_counter_ns()
        for _ in range(n):
            await dispatch(receive(req, now=NOW), send)
        dt = perf_counter_ns() - t0
        sink.clear()
        return dt

    trio.run(run, 1)
    if not sink:
        async def check() -> None:
            await app.dispatch(server.receive_http(req, now=NOW), send)

        trio.run(check)
    assert b'"text":"hello"' in _body_of(sink[-1])

    def batch(n: int) -> int:
        return int(trio.run(run, n))

    return Variant("ours.app_call", batch)


def stdio_call_variant() -> Variant:
    server = small_server()
    conn = StdioConnection(server)
    line = CALL + b"\n"
    (ex,) = conn.receive_data(line, now=NOW)
    assert isinstance(ex, StdioExchange)
    assert ex.complete(echo_result("hello")) == _engine_call_bytes() + b"\n"

    def batch(n: int) -> int:
        receive = conn.receive_data
        t0 = perf_counter_ns()
        for _ in range(n):
            (ex,) = receive(line, now=NOW)
            ex.complete(echo_result(ex.event.arguments.text))  # type: ignore[union-attr]
        return perf_counter_ns() - t0

    return Variant("ours.stdio_call", batch)


def list_pages() -> list[mcpwire.HttpRequest]:
    """The requests that page through the whole catalog (cursors taken from a first pass)."""
    server = list_server()
    requests, cursor, seen = [], None, 0
    while True:
        body = list_page(cursor)
        req = http(body, headers("tools/list", None, body))
        requests.append(req)
        reply = server.receive_http(req, now=NOW)
        assert isinstance(reply, tuple) and reply[0].status == 200
        result = msgspec.json.decode(reply[1].data)["result"]
        seen += len(result["tools"])
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    assert seen == LIST_TOOLS, seen
    return requests


def engine_list_variant() -> Variant:
    server = list_server()
    pages = list_pages()

    def batch(n: int) -> int:
        receive = server.receive_http
        t0 = perf_counter_ns()
        for _ in range(n):
            for req in pages:
                receive(req, now=NOW)
        return perf_counter_ns() - t0

    return Variant("ours.list_1000", batch)


def engine_read_variant() -> Variant:
    server = small_server()
    req = http(READ, READ_HEADERS)

    def batch(n: int) -> int:
        receive = server.receive_http
        t0 = perf_counter_ns()
        for _ in range(n):
            ex = receive(req, now=NOW)
            ex.complete(big_result())  # type: ignore[union-attr]
        return perf_counter_ns() - t0

    ex = server.receive_http(req, now=NOW)
    assert isinstance(ex, HttpExchange) and ex.event.uri == BIG_URI  # type: ignore[union-attr]
    return Variant("ours.read_1mib", batch)


def engine_progress_variant() -> Variant:
    server = small_server()
    req = http(PROGRESS, PROGRESS_HEADERS)

    def once() -> list[Any]:
        ex = server.receive_http(req, now=NOW)
        out: list[Any] = []
        for i in range(1, PROGRESS_FRAMES + 1):
            out += ex.progress(i, total=PROGRESS_FRAMES)  # type: ignore[union-attr]
        out += ex.complete(echo_result(ex.event.arguments.text))  # type: ignore[union-attr]
        return out

    frames = _body_of(once())
    assert frames.count(b"notifications/progress") == PROGRESS_FRAMES and frames.count(b"data: ") == PROGRESS_FRAMES + 1

    def batch(n: int) -> int:
        receive = server.receive_http
        t0 = perf_counter_ns()
        for _ in range(n):
            ex = receive(req, now=NOW)
            for i in range(1, PROGRESS_FRAMES + 1):
                ex.progress(i, total=PROGRESS_FRAMES)  # type: ignore[union-attr]
            ex.complete(echo_result(ex.event.arguments.text))  # type: ignore[union-attr]
        return perf_counter_ns() - t0

    return Variant("ours.progress_sse", batch)


def engine_mrtr_variant() -> Variant:
    server = small_server()
    req1 = http(MRTR_1, MRTR_HEADERS)
    ex = server.receive_http(req1, now=NOW)
    assert isinstance(ex, HttpExchange)
    round_1 = _body_of(ex.input_required({"confirm": ELICIT}, state={"step": 1}))
    token = msgspec.json.decode(round_1)["result"]["requestState"]
    body2 = mrtr_round_2(token)
    req2 = http(body2, headers("tools/call", "confirm", body2))
    ex2 = server.receive_http(req2, now=NOW)
    assert isinstance(ex2, HttpExchange) and ex2.event.state == {"step": 1}  # type: ignore[union-attr]
    requests = {"confirm": ELICIT}
    state = {"step": 1}

    def batch(n: int) -> int:
        receive = server.receive_http
        t0 = perf_counter_ns()
        for _ in range(n):
            ex = receive(req1, now=NOW)
            ex.input_required(requests, state=state)  # type: ignore[union-attr]
            ex = receive(req2, now=NOW)  # verifies the requestState (HMAC, scope, expiry)
            ex.complete(echo_result("done"))  # type: ignore[union-attr]
        return perf_counter_ns() - t0

    return Variant("ours.mrtr_2_rounds", batch)


def engine_task_create_variant() -> Variant:
    """tools/call -> a task: create_task (stored, CreateTaskResult bytes), then the work's result
    recorded in the task (complete with now)."""
    server = tasks_server()
    req = http(TASK_CALL, TASK_CALL_HEADERS)
    ex = server.receive_http(req, now=NOW)
    assert isinstance(ex, HttpExchange) and ex.event.task_allowed  # type: ignore[union-attr]
    assert b'"resultType":"task"' in _body_of(ex.create_task(now=NOW))
    result = echo_result("hello")
    clock = [NOW]  # runs on from batch to batch: a later batch's tasks never predate an earlier one's

    def batch(n: int) -> int:
        receive = server.receive_http
        now = clock[0]
        t0 = perf_counter_ns()
        for _ in range(n):
            now += 0.002  # each task has expired by the next one (ttl 1 ms): the store stays small
            ex = receive(req, now=now)
            ex.create_task(now=now)  # type: ignore[union-attr]
            ex.complete(result, now=now)  # type: ignore[union-attr]
        elapsed = perf_counter_ns() - t0
        clock[0] = now
        return elapsed

    return Variant("ours.task_create", batch)


def engine_task_poll_variant() -> Variant:
    """tasks/get of one working task: the engine answers it from the store (DetailedTask)."""
    server = tasks_server()
    ex = server.receive_http(http(TASK_CALL, TASK_CALL_HEADERS), now=NOW)
    assert isinstance(ex, HttpExchange)
    ex.create_task(now=NOW, ttl_ms=None)  # "task-0", kept
    req = http(TASK_GET, TASK_GET_HEADERS)
    assert b'"status":"working"' in _body_of(server.receive_http(req, now=NOW))  # type: ignore[arg-type]

    def batch(n: int) -> int:
        receive = server.receive_http
        t0 = perf_counter_ns()
        for _ in range(n):
            receive(req, now=NOW)
        return perf_counter_ns() - t0

    return Variant("ours.task_poll", batch)


# -- our client engine --------------------------------------------------------------------------------


def client_available() -> bool:
    return importlib.util.find_spec("mcpwire.client.engine") is not None


def client_variants() -> tuple[list[Variant], str | None]:
    """Client engine rows, only when mcpwire/_client.py exists; else no rows and the reason
    (run.py then prints a TODO row rather than a number)."""
    if not client_available():
        return [], "mcpwire/_client.py absent at run time"
    try:
        from . import bench_client

        return bench_client.variants(), None
    except Exception as exc:  # the client engine is young: report, do not abort the run
        return [], f"client bench failed: {type(exc).__name__}: {exc}"[:200]


def asgi_call_variant(drivers: list[AsgiDriver]) -> Variant:
    """The same call into our adapters' ASGI app (``mcpwire_adapters.AsgiApp``) on asyncio,
    driven exactly like the SDK's ASGI app."""
    from mcpwire_adapters import asgi_app

    d = AsgiDriver(asgi_app(our_app()))
    drivers.append(d)
    status, body = d.run(d.call(CALL, CALL_HEADERS))
    assert status == 200 and body == _engine_call_bytes(), (status, body)
    return d.variant("ours.asgi_call", CALL, CALL_HEADERS)


async def _null_asgi(scope: Any, receive: Any, send: Any) -> None:
    """An ASGI app that reads the request and answers a fixed body: what the in-process driver
    itself costs (it stands in for the ASGI server), subtracted to judge an app's own cost."""
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": b"{}"})


def null_asgi_variant(drivers: list[AsgiDriver]) -> Variant:
    d = AsgiDriver(_null_asgi)
    drivers.append(d)
    return d.variant("asgi.null", CALL, CALL_HEADERS)


def factories(drivers: list[AsgiDriver]) -> list[tuple[str, Callable[[], Variant]]]:
    """Every in-process variant of ours and of the floor, by key (built lazily, so that one
    that fails to build can be reported without stopping the others)."""
    return [
        ("floor.call", floor_call_variant), ("ours.call", engine_call_variant),
        ("ours.call_no_lane", engine_call_no_lane_variant),
        ("ours.session_call", engine_session_call_variant),
        ("ours.call_jsonschema", engine_call_schema_variant), ("ours.app_call", app_call_variant),
        ("ours.asgi_call", lambda: asgi_call_variant(drivers)), ("asgi.null", lambda: null_asgi_variant(drivers)),
        ("ours.stdio_call", stdio_call_variant),
        ("ours.list_1000", engine_list_variant), ("floor.read_1mib", floor_read_variant),
        ("ours.read_1mib", engine_read_variant), ("ours.progress_sse", engine_progress_variant),
        ("ours.mrtr_2_rounds", engine_mrtr_variant), ("ours.task_create", engine_task_create_variant),
        ("ours.task_poll", engine_task_poll_variant),
    ]
