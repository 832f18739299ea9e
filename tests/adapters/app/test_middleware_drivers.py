"""One middleware chain under every driver: the App of ``middleware_app.py`` served by the trio/h11
``serve_http``, by the ASGI app under uvicorn and by the WSGI app under gunicorn (its gthread
worker, in a process of its own: ``middleware_wsgi.py``), all on 127.0.0.1 behind the OAuth
guard (JWT access tokens for alice and mallory, signed here), and by ``serve_stdio`` in a child
process.

Under each, the chain sees the method, the params, the principal and the initialize-era session;
filters tools/list and refuses tools/call per user; changes the result. Every wait has a deadline.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import trio
from _asgi_servers import serve_uvicorn
from _wire_helpers import StdioChild, http_once, sse_events
from _wsgi_servers import post, served
from joserfc import jwk, jwt
from middleware_wsgi import GUARD, guard as oauth_guard

from mcpwire_adapters import App, AsgiConfig, asgi_app
from mcpwire_adapters.oauth.resource_server import OAuthResource
from mcpwire_adapters.serve.trio_h11.server import HttpServerConfig, serve_http_until

TIMEOUT = 20.0
HERE = Path(__file__).resolve().parent
APP_SCRIPT = HERE / "middleware_app.py"
ISSUER = "https://as.example.test"
RESOURCE = "https://mcp.example.test/mcp"
KEY = jwk.ECKey.generate_key("P-256", parameters={"kid": "k1"})
JWKS = {"keys": [KEY.as_dict(private=False)]}
STATELESS = "2026-07-28"
ERA = "2025-11-25"
META = {"io.modelcontextprotocol/protocolVersion": STATELESS, "io.modelcontextprotocol/clientCapabilities": {}}
POST = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def _load_app_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("middleware_app", APP_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build_app() -> App:
    app: App = _load_app_module().build_app()
    return app


def bearer(subject: str) -> dict[str, str]:
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": RESOURCE, "sub": subject, "client_id": "app", "scope": "mcp", "iat": now,
              "exp": now + 600}
    return {"authorization": f"Bearer {jwt.encode({'alg': 'ES256', 'kid': 'k1', 'typ': 'at+jwt'}, claims, KEY)}"}


def guard() -> OAuthResource:
    return oauth_guard(ISSUER, RESOURCE, JWKS)


def stateless(method: str, params: dict[str, Any], request_id: int) -> tuple[dict[str, str], dict[str, Any]]:
    headers = {**POST, "mcp-protocol-version": STATELESS, "mcp-method": method}
    if "name" in params:
        headers["mcp-name"] = params["name"]
    return headers, {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**params, "_meta": META}}


def message_of(body: bytes) -> dict[str, Any]:
    """The response in a JSON or an SSE body."""
    try:
        found: dict[str, Any] = json.loads(body)
    except ValueError:
        found = [json.loads(e["data"]) for e in sse_events(body) if e.get("data")][-1]
    return found


def names(message: dict[str, Any]) -> list[str]:
    return [tool["name"] for tool in message["result"]["tools"]]


def texts(message: dict[str, Any]) -> list[str]:
    return [block["text"] for block in message["result"]["content"]]


def audit_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = json.loads(texts(message)[0])
    return entries


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": ERA, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def era(request_id: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, **({} if params is None else {"params": params})}


def check_the_chain(answers: dict[str, dict[str, Any]], session: str) -> None:
    """What every HTTP driver's answers must show (the requests of :func:`exchanges`)."""
    assert names(answers["alice list"]) == ["admin", "audit_log", "echo"]
    assert names(answers["mallory list"]) == ["audit_log", "echo"]
    assert answers["mallory admin"]["error"] == {"code": -32602, "message": "Unknown tool: admin"}
    assert texts(answers["alice admin"]) == ["admin work", "[stamped]"]
    assert texts(answers["alice echo"]) == ["echo:hi", "[stamped]"]
    assert names(answers["era list"]) == ["admin", "audit_log", "echo"]
    assert audit_of(answers["audit"]) == [
        {"method": "tools/list", "subject": "alice", "session": None, "name": None},
        {"method": "tools/list", "subject": "mallory", "session": None, "name": None},
        {"method": "tools/call", "subject": "mallory", "session": None, "name": "admin"},
        {"method": "tools/call", "subject": "alice", "session": None, "name": "admin"},
        {"method": "tools/call", "subject": "alice", "session": None, "name": "echo"},
        {"method": "tools/list", "subject": "alice", "session": session, "name": None},
        {"method": "tools/call", "subject": "alice", "session": None, "name": "audit_log"},
    ]


STEPS: list[tuple[str, str, str, dict[str, Any]]] = [
    ("alice list", "alice", "tools/list", {}),
    ("mallory list", "mallory", "tools/list", {}),
    ("mallory admin", "mallory", "tools/call", {"name": "admin", "arguments": {}}),
    ("alice admin", "alice", "tools/call", {"name": "admin", "arguments": {}}),
    ("alice echo", "alice", "tools/call", {"name": "echo", "arguments": {"text": "hi"}}),
]


# -- trio/h11 over real sockets -------------------------------------------------------------------
def test_the_chain_under_serve_http() -> None:
    async def main() -> None:
        stop = trio.Event()
        with trio.fail_after(TIMEOUT):
            async with trio.open_nursery() as nursery:
                address = await nursery.start(functools.partial(
                    serve_http_until, build_app(), "127.0.0.1", 0, stop=stop, grace_period=1,
                    config=HttpServerConfig(auth=guard())))
                try:
                    answers: dict[str, dict[str, Any]] = {}
                    for number, (label, who, method, params) in enumerate(STEPS, start=1):
                        headers, body = stateless(method, params, number)
                        status, _, raw = await http_once(address, "POST", {**headers, **bearer(who)}, body)
                        answers[label] = message_of(raw)
                    status, reply_headers, raw = await http_once(address, "POST", {**POST, **bearer("alice")}, INIT)
                    assert status == 200
                    session = reply_headers["mcp-session-id"]
                    on_session = {**POST, **bearer("alice"), "mcp-session-id": session, "mcp-protocol-version": ERA}
                    assert (await http_once(address, "POST", on_session, INITIALIZED))[0] == 202
                    answers["era list"] = message_of((await http_once(address, "POST", on_session, era(2, "tools/list")))[2])
                    headers, body = stateless("tools/call", {"name": "audit_log", "arguments": {}}, 9)
                    answers["audit"] = message_of((await http_once(address, "POST", {**headers, **bearer("alice")}, body))[2])
                    check_the_chain(answers, session)
                finally:
                    stop.set()

    trio.run(main)


def exchanges_over_http(url: str) -> None:
    """The requests of :func:`check_the_chain`, each on a connection of its own to the MCP endpoint
    at ``url`` (``http://127.0.0.1:PORT``), and its check."""
    def ask(headers: dict[str, str], body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        return post(url, "/mcp", json.dumps(body).encode(), headers)

    answers: dict[str, dict[str, Any]] = {}
    for number, (label, who, method, params) in enumerate(STEPS, start=1):
        headers, body = stateless(method, params, number)
        answers[label] = message_of(ask({**headers, **bearer(who)}, body)[2])
    status, reply_headers, _ = ask({**POST, **bearer("alice")}, INIT)
    assert status == 200
    session = reply_headers["mcp-session-id"]
    on_session = {**POST, **bearer("alice"), "mcp-session-id": session, "mcp-protocol-version": ERA}
    assert ask(on_session, INITIALIZED)[0] == 202
    answers["era list"] = message_of(ask(on_session, era(2, "tools/list"))[2])
    headers, body = stateless("tools/call", {"name": "audit_log", "arguments": {}}, 9)
    answers["audit"] = message_of(ask({**headers, **bearer("alice")}, body)[2])
    check_the_chain(answers, session)


# -- ASGI under uvicorn ---------------------------------------------------------------------------
def test_the_chain_under_the_asgi_app_in_uvicorn() -> None:
    with serve_uvicorn(asgi_app(build_app(), config=AsgiConfig(auth=guard())), http="h11") as port:
        exchanges_over_http(f"http://127.0.0.1:{port}")


# -- WSGI under gunicorn, a real server process -----------------------------------------------------
def test_the_chain_under_the_wsgi_app_in_gunicorn(tmp_path: Path) -> None:
    # The App of middleware_app.py under gunicorn's gthread worker (8 threads), through WsgiApp,
    # behind the same guard: the chain runs on the WsgiApp's loop thread as under the other drivers.
    settings = json.dumps({"issuer": ISSUER, "resource": RESOURCE, "jwks": JWKS})
    with served("gunicorn-gthread", "middleware_wsgi", tmp_path, env={GUARD: settings}, where=HERE) as url:
        exchanges_over_http(url)


# -- stdio, a real child process --------------------------------------------------------------------
class Child(StdioChild):
    async def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        await self.send(json.dumps(message).encode() + b"\n")
        answer = await self.message()
        assert answer is not None and answer.get("id") == message["id"], answer
        return dict(answer)


async def served_on_stdio(backend: str, talk: Any) -> None:
    """``await talk(child)`` with the App served on stdio by a child process; then its stdin
    closes and it must exit 0."""
    process = await trio.lowlevel.open_process([sys.executable, str(APP_SCRIPT), "--backend", backend],
                                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        child = Child(process)
        await talk(child)
        await child.close_stdin()
        assert await child.exit_code() == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


@pytest.mark.parametrize("backend", ["trio", "asyncio"])
def test_the_chain_under_serve_stdio(backend: str) -> None:
    async def stateless_requests(child: Child) -> None:
        assert names(await child.ask(stateless("tools/list", {}, 1)[1])) == ["audit_log", "echo"]  # no principal
        refused = await child.ask(stateless("tools/call", {"name": "admin", "arguments": {}}, 2)[1])
        assert refused["error"] == {"code": -32602, "message": "Unknown tool: admin"}
        audit = audit_of(await child.ask(stateless("tools/call", {"name": "audit_log", "arguments": {}}, 3)[1]))
        assert [(e["method"], e["name"], e["subject"], e["session"]) for e in audit] == [
            ("tools/list", None, None, None), ("tools/call", "admin", None, None), ("tools/call", "audit_log", None, None)]

    async def a_session(child: Child) -> None:
        assert (await child.ask(INIT))["result"]["protocolVersion"] == ERA
        await child.send(json.dumps(INITIALIZED).encode() + b"\n")
        assert names(await child.ask(era(2, "tools/list"))) == ["audit_log", "echo"]
        echoed = await child.ask(era(3, "tools/call", {"name": "echo", "arguments": {"text": "hi"}}))
        assert texts(echoed) == ["echo:hi", "[stamped]"]
        audit = audit_of(await child.ask(era(4, "tools/call", {"name": "audit_log", "arguments": {}})))
        assert [(e["method"], e["name"]) for e in audit] == [
            ("tools/list", None), ("tools/call", "echo"), ("tools/call", "audit_log")]
        assert {(e["subject"], e["session"]) for e in audit} == {(None, None)}  # a stdio session has no id

    async def main() -> None:
        with trio.fail_after(TIMEOUT):
            await served_on_stdio(backend, stateless_requests)
            await served_on_stdio(backend, a_session)

    trio.run(main)
