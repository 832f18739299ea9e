"""Initialize-era sessions on Redis (``mcpwire_adapters.state.redis.sessions``), against a real
redis-server: two engines, each with its own store as two processes would have, one Redis. A
session opened on one is served by the other (its level and subscriptions travel both ways),
ended on one it is gone on both, its SSE events are replayed by either, another prefix never
sees it, and Redis lost is -32603 (the HTTP driver answers 500 and logs), then it works again.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
import redis
from _redis import RedisServer
from mcpwire_adapters import App
from mcpwire_adapters.state.redis.sessions import RedisEventStore, RedisSessionStore

from mcpwire import ErrorCode, HttpExchange, HttpRequest, Keyring, SessionClosed
from mcpwire.sessions import SessionStream

VERSION = "2025-11-25"
NOW = 1_800_000_000.0


def make_app(server: RedisServer, prefix: str = "s:") -> App:
    app = App("sessions", "1.0", keyring=Keyring.single(b"k" * 32), resource_subscribe=True)
    app.server.sessions = RedisSessionStore(redis.Redis.from_url(server.url, socket_timeout=2.0), prefix=prefix)

    @app.tool(description="echo")
    def echo(ctx: Any, arguments: dict[str, Any]) -> str:
        return "ok"

    return app


def post(app: App, body: dict[str, Any], session: str | None = None, now: float = NOW) -> Any:
    headers = [(b"content-type", b"application/json"), (b"accept", b"application/json, text/event-stream"),
               (b"mcp-protocol-version", VERSION.encode())]
    if session is not None:
        headers.append((b"mcp-session-id", session.encode()))
    return app.server.receive_http(HttpRequest(method="POST", target="/mcp", headers=headers,
                                               body=json.dumps(body).encode()), now=now)


def request(method: str, params: dict[str, Any], request_id: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def initialize(app: App, now: float = NOW) -> str:
    head, body = post(app, request("initialize", {"protocolVersion": VERSION, "capabilities": {},
                                                  "clientInfo": {"name": "c", "version": "1"}}), now=now)
    assert head.status == 200, body.data
    return str(dict(head.headers)[b"mcp-session-id"].decode())


def answer(reply: Any) -> tuple[int, dict[str, Any] | None]:
    head, body = reply
    return head.status, json.loads(body.data) if body.data else None


def test_a_session_opened_on_one_process_is_served_by_another(redis_server: RedisServer) -> None:
    one, two = make_app(redis_server), make_app(redis_server)
    sid = initialize(one)
    assert answer(post(two, {"jsonrpc": "2.0", "method": "notifications/initialized"}, sid))[0] == 202
    status, reply = answer(post(two, request("logging/setLevel", {"level": "error"}), sid))
    assert status == 200 and reply is not None and reply["result"] == {}
    status, reply = answer(post(one, request("resources/subscribe", {"uri": "file:///a"}), sid))
    assert status == 200 and reply is not None and "result" in reply
    seen_by_two = two.server.sessions.get(sid, NOW + 1)
    seen_by_one = one.server.sessions.get(sid, NOW + 1)
    assert seen_by_two is not None and seen_by_one is not None
    for seen in (seen_by_one, seen_by_two):
        assert seen.log_level == "error" and seen.subscriptions == {"file:///a"}
        assert seen.state.value == "ready" and seen.revision == VERSION and seen.client_info == {"name": "c", "version": "1"}
    exchange = post(two, request("tools/call", {"name": "echo", "arguments": {}}, 2), sid)
    assert isinstance(exchange, HttpExchange) and exchange.session is seen_by_two
    assert len(one.server.sessions) == 1
    # Ended on one process, gone on both.
    closed = one.server.receive_http(HttpRequest(method="DELETE", target="/mcp", headers=[
        (b"mcp-session-id", sid.encode()), (b"mcp-protocol-version", VERSION.encode())]), now=NOW + 2)
    assert isinstance(closed, SessionClosed) and answer(closed.reply)[0] == 200
    assert answer(post(two, request("tools/list", {}), sid))[0] == 404
    assert len(two.server.sessions) == 0


def test_events_recorded_on_one_process_are_replayed_by_another(redis_server: RedisServer) -> None:
    one, two = make_app(redis_server), make_app(redis_server)
    sid = initialize(one)
    mine = one.server.sessions.get(sid, NOW)
    assert mine is not None and isinstance(mine.events, RedisEventStore)
    key = mine.events.new_stream()
    for n in range(3):
        assert mine.events.next_event_id(key) == f"{key}-{n + 1}"
        mine.events.record(key, b"frame %d" % n, last=n == 2)
    theirs = two.server.sessions.get(sid, NOW)
    assert theirs is not None
    assert theirs.events.replay(f"{key}-1") == (key, [b"frame 1", b"frame 2"], True)
    assert theirs.events.replay(f"{key}-3") == (key, [], True)
    for unknown in (f"{key}-4", "99-1", "99-0", "x-1", "1-x", "", "-", f"{key}-99999999999"):
        assert theirs.events.replay(unknown) is None
    empty = mine.events.new_stream()
    assert theirs.events.replay(f"{empty}-0") == (empty, [], False)
    raw = redis.Redis.from_url(redis_server.url)
    assert raw.exists(*mine.events.keys()) == 5  # n, streams, the first stream, its count and its end (the empty one has none)
    one.server.sessions.remove(sid)
    assert raw.exists(*mine.events.keys()) == 0 and not raw.keys("s:events:*")


def test_another_prefix_never_sees_the_session(redis_server: RedisServer) -> None:
    mine, theirs = make_app(redis_server, "a:"), make_app(redis_server, "b:")
    sid = initialize(mine)
    assert answer(post(theirs, request("tools/list", {}), sid))[0] == 404


def test_the_bound_and_the_idle_expiry(redis_server: RedisServer) -> None:
    app = make_app(redis_server)
    store = app.server.sessions
    assert isinstance(store, RedisSessionStore)
    store.max_sessions = 2
    first, _ = initialize(app), initialize(app)
    head, body = post(app, request("initialize", {"protocolVersion": VERSION, "capabilities": {},
                                                  "clientInfo": {"name": "c", "version": "1"}}))
    assert head.status == 503 and json.loads(body.data)["error"]["code"] == -32603
    assert store.get(first, NOW + 10) is not None  # a request renews it; the other stays idle
    assert initialize(app, NOW + 1805)  # full: the idle one (by the caller's clock) is swept first
    assert post(app, request("initialize", {"protocolVersion": VERSION, "capabilities": {},
                                            "clientInfo": {"name": "c", "version": "1"}}), now=NOW + 1805)[0].status == 503
    raw = redis.Redis.from_url(redis_server.url)
    assert 0 < raw.pttl(f"s:session:{first}") <= 1800 * 1000  # Redis drops it after idle_timeout


def test_redis_lost_is_internal_error_then_it_works_again(
        redis_server: RedisServer, caplog: pytest.LogCaptureFixture) -> None:
    app = make_app(redis_server)
    sid = initialize(app)
    redis_server.stop()
    with caplog.at_level(logging.ERROR, logger="mcpwire_adapters.redis"):
        status, body = answer(post(app, request("ping", {}, request_id=7), sid))
    # The request's id is known and kept (JSON-RPC 2.0: null only when it cannot be read).
    assert status == 500 and body == {"jsonrpc": "2.0", "id": 7, "error": {"code": ErrorCode.INTERNAL_ERROR,
                                                                           "message": "Internal error"}}
    assert "session store: get failed" in caplog.text
    with caplog.at_level(logging.ERROR, logger="mcpwire_adapters.redis"):  # the GET stream and DELETE: no id
        for method in ("GET", "DELETE"):
            status, body = answer(app.server.receive_http(HttpRequest(
                method=method, target="/mcp", headers=[(b"accept", b"text/event-stream"), (b"mcp-protocol-version", VERSION.encode()),
                         (b"mcp-session-id", sid.encode())], body=b""), now=NOW))
            assert status == 500 and body is not None and body["id"] is None and body["error"]["code"] == -32603
    redis_server.start()  # empty (no persistence): the session is gone, a new one works
    assert answer(post(app, request("tools/list", {}), sid))[0] == 404
    assert answer(post(app, request("tools/list", {}), initialize(app)))[0] == 200


def test_foreign_or_stale_session_keys_are_unknown_sessions(
        redis_server: RedisServer, caplog: pytest.LogCaptureFixture) -> None:
    app = make_app(redis_server)
    raw = redis.Redis.from_url(redis_server.url)
    good: dict[Any, Any] = {"revision": VERSION, "caps": "{}", "info": "null", "events": "s:events:x:", "created": "1",
            "level": "", "subs": "[]", "state": "ready"}
    broken: dict[str, dict[Any, Any]] = {"junk": {"nothing": "here"}, "badjson": {**good, "caps": "{"}, "wrongtype": {**good, "caps": "5"},
              "badstate": {**good, "state": "sleeping"}, "elsewhere": {**good, "events": "other:events:x:"}}
    for sid, fields in broken.items():
        raw.hset(f"s:session:{sid}", mapping=fields)
    with caplog.at_level(logging.WARNING, logger="mcpwire_adapters.redis"):
        for sid in broken:
            assert answer(post(app, request("tools/list", {}), sid))[0] == 404
    assert caplog.text.count("not one of ours") == len(broken)
    raw.hset("s:session:fine", mapping=good)
    assert answer(post(app, request("tools/list", {}), "fine"))[0] == 200


def test_a_session_with_an_open_get_stream_is_not_idle(redis_server: RedisServer) -> None:
    app = make_app(redis_server)
    store = app.server.sessions
    assert isinstance(store, RedisSessionStore)
    idle, listening = initialize(app), initialize(app)
    stream = app.server.receive_http(HttpRequest(method="GET", target="/mcp", headers=[
        (b"accept", b"text/event-stream"), (b"mcp-session-id", listening.encode()),
        (b"mcp-protocol-version", VERSION.encode())]), now=NOW)
    assert isinstance(stream, SessionStream)
    stream.start()
    raw = redis.Redis.from_url(redis_server.url)
    for sid in (idle, listening):
        raw.pexpire(f"s:session:{sid}", 1000)
    assert store.renew_busy() == 1
    assert raw.pttl(f"s:session:{listening}") > 1000 >= raw.pttl(f"s:session:{idle}")
    store.close()
