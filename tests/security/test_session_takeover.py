"""A session and a ``requestState`` belong to the user they were made for, over real sockets:
the App served by the trio/h11 driver on 127.0.0.1 behind the OAuth resource-server guard,
with JWT access tokens signed here for two subjects (alice, mallory) and verified by
``JwtVerifier`` against this test's key set.

Mallory, holding her own valid token and alice's ``Mcp-Session-Id``, cannot call a tool in
alice's session, resume (replay) alice's stream with ``Last-Event-ID``, open its GET stream or
DELETE it: each gets the answer an unknown session id gets (404, -32600 "Session not found").
A ``requestState`` issued to alice is refused to mallory (-32602, as a tampered one). Alice's
own traffic is answered as before. The principal is kept by the Redis session store too (two
engines on one Redis), and a record written before it was kept reads as a session without one.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import redis
import trio
from _redis import RedisServer
from _wire_helpers import http_once, sse_events as events
from joserfc import jwk, jwt

from mcpwire import HttpExchange, HttpRequest, Keyring, SessionClosed
from mcpwire.auth import AccessToken, ResourceServer
from mcpwire.sessions import SessionStream
from mcpwire_adapters import App, Context, NeedInput
from mcpwire_adapters.oauth.jose import JwtVerifier
from mcpwire_adapters.oauth.resource_server import OAuthResource
from mcpwire_adapters.serve.trio_h11.server import HttpServerConfig, serve_http_until
from mcpwire_adapters.state.redis.sessions import RedisSessionStore

ISSUER = "https://as.example.test"
RESOURCE = "https://mcp.example.test/mcp"  # the guard checks the path; the audience is this URL
ERA = "2025-11-25"
STATELESS = "2026-07-28"
KEY = jwk.ECKey.generate_key("P-256", parameters={"kid": "k1"})
POST = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
NOT_FOUND = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Session not found"}}


def token(subject: str, **claims: Any) -> str:
    now = int(time.time())
    full = {"iss": ISSUER, "aud": RESOURCE, "sub": subject, "client_id": "app", "scope": "mcp", "iat": now,
            "exp": now + 86_400, **claims}  # made at import: valid for the whole run of the suite
    return str(jwt.encode({"alg": "ES256", "kid": "k1", "typ": "at+jwt"}, full, KEY))


ALICE = {"authorization": f"Bearer {token('alice')}"}
MALLORY = {"authorization": f"Bearer {token('mallory')}"}


def make_app() -> App:
    app = App("principals", "1.0", keyring=Keyring.single(b"k" * 32), input_timeout=5)

    @app.tool(description="Who is calling")
    def whoami(ctx: Context, arguments: dict[str, Any]) -> str:
        caller: AccessToken = ctx.principal
        return f"secret of {caller.subject}"

    @app.tool(description="closes its SSE stream, then tells the caller's secret")
    async def later(ctx: Context, arguments: dict[str, Any]) -> str:
        await ctx.close_sse_stream(retry_ms=50)
        await trio.sleep(0.3)
        caller: AccessToken = ctx.principal
        return f"later secret of {caller.subject}"

    @app.tool(description="asks for a name first (stateless: a requestState)")
    def greet(ctx: Context, arguments: dict[str, Any]) -> Any:
        answer = ctx.input_responses.get("name")
        if answer is None:
            request = {"method": "elicitation/create", "params": {"message": "Name?", "requestedSchema": {
                "type": "object", "properties": {"name": {"type": "string"}}}}}
            return NeedInput(requests={"name": request}, state={"for": ctx.principal.subject})
        return f"Hello, {answer['content']['name']} (state for {ctx.state['for']})"

    return app


def guard() -> OAuthResource:
    rs = ResourceServer(resource=RESOURCE, authorization_servers=[ISSUER], required_scopes=["mcp"])
    return OAuthResource(rs, JwtVerifier(issuer=ISSUER, audience=RESOURCE, jwks={"keys": [KEY.as_dict(private=False)]}))


def texts(body: bytes) -> list[str]:
    """The text of every tool result in a JSON or SSE body."""
    try:
        messages = [json.loads(body)]
    except ValueError:  # an event stream
        messages = [json.loads(e["data"]) for e in events(body) if e.get("data")]
    return [m["result"]["content"][0]["text"] for m in messages if "result" in m and "content" in m["result"]]


async def open_session(address: tuple[str, int], user: dict[str, str]) -> dict[str, str]:
    params = {"protocolVersion": ERA, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    status, headers, body = await http_once(address, "POST", {**POST, **user},
                                       {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
    assert status == 200 and json.loads(body)["result"]["protocolVersion"] == ERA
    session = {"mcp-session-id": headers["mcp-session-id"], "mcp-protocol-version": ERA}
    status, _, _ = await http_once(address, "POST", {**POST, **user, **session},
                              {"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert status == 202
    return session


def call(name: str, request_id: int = 2) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": name, "arguments": {}}}


Address = tuple[str, int]
Test = Callable[[Address], Awaitable[None]]


def served_by(
    make: Callable[[], App], config: Callable[[], HttpServerConfig], deadline: float = 30
) -> Callable[[Test], Callable[[], None]]:
    """A decorator: run ``test(address)`` against ``make()`` served with ``config()`` by the
    trio/h11 driver on 127.0.0.1, until the test ends (at most ``deadline`` seconds)."""

    def decorate(test: Test) -> Callable[[], None]:
        def run() -> None:
            async def main() -> None:
                stop = trio.Event()
                with trio.fail_after(deadline):
                    async with trio.open_nursery() as nursery:
                        address = await nursery.start(functools.partial(
                            serve_http_until, make(), "127.0.0.1", 0, stop=stop, grace_period=1, config=config()))
                        try:
                            await test(address)
                        finally:
                            stop.set()

            trio.run(main)

        run.__name__, run.__qualname__, run.__doc__ = test.__name__, test.__qualname__, test.__doc__
        return run

    return decorate


serving = served_by(make_app, lambda: HttpServerConfig(auth=guard()))
"""Run ``test(address)`` against the App behind the guard, served until the test ends."""


@serving
async def test_another_user_cannot_call_tools_in_the_session(address: tuple[str, int]) -> None:
    session = await open_session(address, ALICE)
    unknown = {**session, "mcp-session-id": "not-a-session-anyone-has"}
    expected = await http_once(address, "POST", {**POST, **MALLORY, **unknown}, call("whoami"))
    assert expected[0] == 404 and json.loads(expected[2]) == {**NOT_FOUND, "id": 2}
    status, _, body = await http_once(address, "POST", {**POST, **MALLORY, **session}, call("whoami"))
    assert (status, body) == (expected[0], expected[2])  # the takeover: refused as an unknown session
    answer = {"jsonrpc": "2.0", "id": 1, "result": {"action": "accept", "content": {}}}  # to alice's elicitation
    status, _, body = await http_once(address, "POST", {**POST, **MALLORY, **session}, answer)
    assert status == 404 and json.loads(body) == {**NOT_FOUND, "id": 1}
    # Alice's session is untouched and answers her.
    status, _, body = await http_once(address, "POST", {**POST, **ALICE, **session}, call("whoami"))
    assert status == 200 and texts(body) == ["secret of alice"]


@serving
async def test_another_user_cannot_replay_the_sessions_stream(address: tuple[str, int]) -> None:
    session = await open_session(address, ALICE)
    status, headers, body = await http_once(address, "POST", {**POST, **ALICE, **session}, call("later", 5))
    first = events(body)
    assert status == 200 and headers["content-type"] == "text/event-stream" and first[1] == {"retry": "50"}
    resume = {"accept": "text/event-stream", **session, "last-event-id": first[0]["id"]}
    status, _, body = await http_once(address, "GET", {**MALLORY, **resume})
    assert status == 404 and json.loads(body) == NOT_FOUND
    status, _, body = await http_once(address, "GET", {**ALICE, **resume})
    assert status == 200 and texts(body) == ["later secret of alice"]
    # Once the stream is over, its events are kept: still nothing for mallory.
    status, _, body = await http_once(address, "GET", {**MALLORY, **resume})
    assert status == 404 and json.loads(body) == NOT_FOUND
    # Nor the session's standalone GET stream.
    status, _, body = await http_once(address, "GET", {**MALLORY, "accept": "text/event-stream", **session})
    assert status == 404 and json.loads(body) == NOT_FOUND


@serving
async def test_another_user_cannot_delete_the_session(address: tuple[str, int]) -> None:
    session = await open_session(address, ALICE)
    status, _, body = await http_once(address, "DELETE", {**MALLORY, **session})
    assert status == 404 and json.loads(body) == NOT_FOUND
    status, _, body = await http_once(address, "POST", {**POST, **ALICE, **session}, call("whoami"))
    assert status == 200 and texts(body) == ["secret of alice"]
    status, _, _ = await http_once(address, "DELETE", {**ALICE, **session})
    assert status == 200
    status, _, body = await http_once(address, "POST", {**POST, **ALICE, **session}, call("whoami", 3))
    assert status == 404 and json.loads(body) == {**NOT_FOUND, "id": 3}


@serving
async def test_a_request_state_is_refused_to_another_user(address: tuple[str, int]) -> None:
    meta = {"io.modelcontextprotocol/protocolVersion": STATELESS,
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
    headers = {**POST, "mcp-protocol-version": STATELESS, "mcp-method": "tools/call", "mcp-name": "greet"}
    first: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                             "params": {"name": "greet", "arguments": {}, "_meta": meta}}
    status, _, body = await http_once(address, "POST", {**headers, **ALICE}, first)
    result = json.loads(body)["result"]
    assert status == 200 and result["resultType"] == "input_required"
    retry = {**first, "id": 2, "params": {**first["params"], "requestState": result["requestState"],
                                          "inputResponses": {"name": {"action": "accept", "content": {"name": "Eve"}}}}}
    status, _, body = await http_once(address, "POST", {**headers, **MALLORY}, retry)
    assert (status, json.loads(body)) == (400, {"jsonrpc": "2.0", "id": 2, "error": {
        "code": -32602, "message": "Invalid or expired request state"}})
    status, _, body = await http_once(address, "POST", {**headers, **ALICE}, retry)
    assert status == 200 and texts(body) == ["Hello, Eve (state for alice)"]


# -- the Redis session store keeps the principal -----------------------------------------------------

A = json.dumps([ISSUER, "alice", "app"], separators=(",", ":"))
M = json.dumps([ISSUER, "mallory", "app"], separators=(",", ":"))
NOW = 1_800_000_000.0


def redis_app(server: RedisServer) -> App:
    app = App("sessions", "1.0", keyring=Keyring.single(b"k" * 32))
    app.server.sessions = RedisSessionStore(redis.Redis.from_url(server.url, socket_timeout=2.0), prefix="p:")

    @app.tool(description="echo")
    def echo(ctx: Any, arguments: dict[str, Any]) -> str:
        return "ok"

    return app


def send(app: App, body: Any, principal: str | None, session: str | None = None, method: str = "POST") -> Any:
    headers = [(b"content-type", b"application/json"), (b"accept", b"application/json, text/event-stream"),
               (b"mcp-protocol-version", ERA.encode())]
    if session is not None:
        headers.append((b"mcp-session-id", session.encode()))
    data = b"" if body is None else json.dumps(body).encode()
    return app.server.receive_http(HttpRequest(method=method, target="/mcp", headers=headers, body=data,
                                               principal=principal), now=NOW)


def initialize(app: App, principal: str | None) -> str:
    params = {"protocolVersion": ERA, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    head, _ = send(app, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}, principal)
    assert head.status == 200
    return str(dict(head.headers)[b"mcp-session-id"].decode())


def status_of(answer: Any) -> int:
    return int(answer[0].status) if isinstance(answer, tuple) else 0


def test_the_redis_store_keeps_the_principal_for_every_process(redis_server: RedisServer) -> None:
    one, two = redis_app(redis_server), redis_app(redis_server)
    sid = initialize(one, A)
    stored = redis.Redis.from_url(redis_server.url).hgetall(f"p:session:{sid}")
    assert stored[b"principal"] == A.encode()
    seen = two.server.sessions.get(sid, NOW)
    assert seen is not None and seen.principal == A
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    for process in (one, two):
        assert status_of(send(process, ping, M, sid)) == 404
        assert status_of(send(process, None, M, sid, "GET")) == 404
        assert status_of(send(process, None, M, sid, "DELETE")) == 404
        assert status_of(send(process, ping, A, sid)) == 200
    exchange = send(two, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo"}}, A, sid)
    assert isinstance(exchange, HttpExchange) and exchange.principal == A
    exchange.cancel()
    assert isinstance(send(two, None, A, sid, "DELETE"), SessionClosed)


def test_a_redis_record_without_a_principal_is_bound_to_its_id_only(redis_server: RedisServer) -> None:
    one = redis_app(redis_server)
    client = redis.Redis.from_url(redis_server.url)
    unbound = initialize(one, None)
    assert b"principal" not in client.hgetall(f"p:session:{unbound}")  # the record as before
    # A record written before principals were kept: alice's, its field gone.
    old = initialize(one, A)
    client.hdel(f"p:session:{old}", "principal")
    two = redis_app(redis_server)  # a process that reads them from Redis
    for sid in (unbound, old):
        seen = two.server.sessions.get(sid, NOW)
        assert seen is not None and seen.principal is None
        assert status_of(send(two, {"jsonrpc": "2.0", "id": 2, "method": "ping"}, M, sid)) == 200
        stream = send(two, None, M, sid, "GET")
        assert isinstance(stream, SessionStream)
        stream.cancel()
