"""OAuth end to end on 127.0.0.1: mcpwire's resource server (trio/h11 server, JWT or
introspection verifier, DPoP) and mcpwire's client (the trio driver), against the small
authorization server in tests/oauth_as.py with keys generated per run."""

from __future__ import annotations

import functools
import json
import socket
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from oauth_as import INTROSPECTION_CLIENT, AuthServer
from joserfc import jwk

from mcpwire import Client, Keyring
from mcpwire.auth import (
    AccessToken, AuthError, AuthorizationCode, ClientCredentials, ClientInformation, HttpCall, ResourceServer,
    parse_www_authenticate,
)
from mcpwire.types import Implementation
from mcpwire_adapters import App, Context
from mcpwire_adapters.oauth.fetch import fetch
from mcpwire_adapters.client.http import HttpClient
from mcpwire_adapters.serve.trio_h11.server import HttpServerConfig, serve_http
from mcpwire_adapters.oauth.client import OAuth, follow_redirect
from mcpwire_adapters.oauth.jose import DPoPKey, DPoPVerifier, JwtVerifier
from mcpwire_adapters.oauth.resource_server import IntrospectionVerifier, OAuthResource, TokenVerifier
from _backends import trio_test

REDIRECT = "http://127.0.0.1:1/callback"  # never reached: the test follows the redirect itself


run = trio_test(30)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def make_app() -> App:
    app = App("oauth-e2e", "1.0", keyring=Keyring.single(b"k" * 32))

    @app.tool(description="Who is calling")
    async def whoami(ctx: Context, arguments: dict[str, Any]) -> str:
        token: AccessToken = ctx.principal
        return f"{token.subject} {' '.join(token.scopes)} {token.jkt is not None}"

    @app.tool(description="Needs mcp:write")
    def write(ctx: Context, arguments: dict[str, Any]) -> str:  # a worker thread sees the principal too
        return f"written by {ctx.principal.subject}"

    return app


async def start_mcp(nursery: trio.Nursery, auth: AuthServer, *, verifier: str = "jwt", dpop: bool = False) -> str:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    rs = ResourceServer(resource=url, authorization_servers=[auth.issuer], required_scopes=["mcp:basic"],
                        tool_scopes={"write": ["mcp:write"]})
    checker: TokenVerifier
    if verifier == "jwt":
        checker = JwtVerifier(issuer=auth.issuer, audience=url, jwks_url=f"{auth.issuer}/jwks")
    else:
        checker = IntrospectionVerifier(endpoint=f"{auth.issuer}/introspect", client_id=INTROSPECTION_CLIENT[0],
                                        client_secret=INTROSPECTION_CLIENT[1], audience=url, issuer=auth.issuer)
    guard = OAuthResource(rs, checker, dpop=DPoPVerifier() if dpop else None)
    await nursery.start(functools.partial(serve_http, make_app(), "127.0.0.1", port, config=HttpServerConfig(auth=guard)))
    return url


def user_oauth(**kwargs: Any) -> OAuth:
    async def redirect(step: Any) -> str:
        return await follow_redirect(oauth, step)

    oauth = OAuth(grant=AuthorizationCode(redirect_uri=REDIRECT), redirect=redirect, **kwargs)
    return oauth


def text(result: Any) -> str:
    return str(result.data["content"][0]["text"])


@run
async def test_authorization_code_step_up_and_principal() -> None:
    auth = AuthServer()
    async with trio.open_nursery() as nursery:
        await nursery.start(auth.serve)
        url = await start_mcp(nursery, auth)
        oauth = user_oauth()
        client = Client(Implementation(name="t", version="1"))
        async with HttpClient(url, client, auth=oauth) as session:
            assert [t.name for t in await session.list_tools()] == ["whoami", "write"]
            assert text(await session.call_tool("whoami", {})) == "user-1 mcp:basic offline_access False"
            assert text(await session.call_tool("write", {})) == "written by user-1"  # 403, step-up, retry
        grants = [r["grant_type"] for r in auth.token_requests]
        assert grants == ["authorization_code", "authorization_code"]
        assert all(r["resource"] == url for r in auth.token_requests)
        scopes = [c["scope"] for c in auth.codes.values()] or None  # codes are spent
        assert scopes is None
        assert ("GET", "/.well-known/oauth-authorization-server") in auth.requests
        nursery.cancel_scope.cancel()


@run
async def test_an_initialize_era_session_behind_oauth() -> None:
    """A client pinned to 2025-11-25: the 401 comes on initialize, the session opens with the
    token, the step-up runs on that session, and the DELETE that ends it is authorized too."""
    auth = AuthServer()
    async with trio.open_nursery() as nursery:
        await nursery.start(auth.serve)
        port = free_port()
        url = f"http://127.0.0.1:{port}/mcp"
        rs = ResourceServer(resource=url, authorization_servers=[auth.issuer], required_scopes=["mcp:basic"],
                            tool_scopes={"write": ["mcp:write"]})
        guard = OAuthResource(rs, JwtVerifier(issuer=auth.issuer, audience=url, jwks_url=f"{auth.issuer}/jwks"))
        app = make_app()
        await nursery.start(functools.partial(serve_http, app, "127.0.0.1", port, config=HttpServerConfig(auth=guard)))
        client = Client(Implementation(name="t", version="1"), protocol_version="2025-11-25")
        async with HttpClient(url, client, auth=user_oauth()) as session:
            assert text(await session.call_tool("whoami", {})) == "user-1 mcp:basic offline_access False"
            assert session.protocol_version == "2025-11-25" and client.session_id is not None
            assert len(app.server.sessions) == 1
            assert text(await session.call_tool("write", {})) == "written by user-1"  # 403, step-up, same session
            assert session.sessions_started == 1
        assert len(app.server.sessions) == 0  # the DELETE carried the token
        assert [r["grant_type"] for r in auth.token_requests] == ["authorization_code", "authorization_code"]
        nursery.cancel_scope.cancel()


@run
async def test_dpop_bound_tokens_end_to_end() -> None:
    auth = AuthServer()
    async with trio.open_nursery() as nursery:
        await nursery.start(auth.serve)
        url = await start_mcp(nursery, auth, dpop=True)
        oauth = user_oauth(dpop=DPoPKey.generate())
        async with HttpClient(url, Client(Implementation(name="t", version="1")), auth=oauth) as session:
            assert text(await session.call_tool("whoami", {})).endswith(" True")
            assert text(await session.call_tool("whoami", {})).endswith(" True")  # a fresh proof each time
        nursery.cancel_scope.cancel()


@run
async def test_client_credentials_with_introspection() -> None:
    auth = AuthServer()
    async with trio.open_nursery() as nursery:
        await nursery.start(auth.serve)
        url = await start_mcp(nursery, auth, verifier="introspection")
        oauth = OAuth(grant=ClientCredentials(), client=ClientInformation(client_id="machine", client_secret="machine-secret"))
        async with HttpClient(url, Client(Implementation(name="t", version="1")), auth=oauth) as session:
            assert text(await session.call_tool("whoami", {})).startswith("user-1 mcp:basic")
        nursery.cancel_scope.cancel()


@run
async def test_tokens_never_cross_servers() -> None:
    auth = AuthServer()
    async with trio.open_nursery() as nursery:
        await nursery.start(auth.serve)
        first, second = await start_mcp(nursery, auth), await start_mcp(nursery, auth)
        oauth = user_oauth()
        for url in (first, second):
            async with HttpClient(url, Client(Implementation(name="t", version="1")), auth=oauth) as session:
                await session.list_tools()
        assert [r["resource"] for r in auth.token_requests] == [first, second]
        assert oauth.store.load(auth.issuer, first) != oauth.store.load(auth.issuer, second)
        nursery.cancel_scope.cancel()


async def raw(url: str, authorization: str | None, body: dict[str, Any] | None = None) -> tuple[int, str]:
    headers = [("content-type", "application/json"), ("accept", "application/json, text/event-stream")]
    if authorization is not None:
        headers.append(("authorization", authorization))
    reply = await fetch(HttpCall(method="POST", url=url, headers=tuple(headers),
                                 body=json.dumps(body or {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()))
    return reply.status, ", ".join(v for k, v in reply.headers if k.lower() == "www-authenticate")


@run
async def test_bad_tokens_are_refused_with_a_challenge() -> None:
    auth = AuthServer()
    async with trio.open_nursery() as nursery:
        await nursery.start(auth.serve)
        url = await start_mcp(nursery, auth)
        stranger = jwk.ECKey.generate_key("P-256", parameters={"kid": "k1"})
        good = {"aud": url, "scope": "mcp:basic"}
        cases = {
            "none": None,
            "malformed": "Bearer",
            "forged": "Bearer " + auth.issue(good, key=stranger),
            "expired": "Bearer " + auth.issue({**good, "exp": 1000}),
            "wrong audience": "Bearer " + auth.issue({**good, "aud": "http://127.0.0.1:1/mcp"}),
            "wrong issuer": "Bearer " + auth.issue({**good, "iss": "http://127.0.0.1:2"}),
            "not a jwt": "Bearer abc.def.ghi",
            "bound token as bearer": "Bearer " + auth.issue({**good, "cnf": {"jkt": "x"}}),
            "bearer token as dpop": "DPoP " + auth.issue(good),
        }
        for name, header in cases.items():
            status, challenge = await raw(url, header)
            assert status == 401, name
            (bearer, _dpop) = parse_www_authenticate(challenge)
            assert bearer.resource_metadata == url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp"), name
            assert (bearer.error is None) == (name == "none"), name
        status, challenge = await raw(url, "Bearer " + auth.issue(good), {
            "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "write", "arguments": {}}})
        assert status == 403
        assert parse_www_authenticate(challenge)[0].scopes == ("mcp:basic", "mcp:write")
        prm = await fetch(HttpCall(method="GET", url=url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")))
        assert json.loads(prm.body)["resource"] == url and json.loads(prm.body)["authorization_servers"] == [auth.issuer]
        nursery.cancel_scope.cancel()


@run
async def test_a_client_refuses_metadata_for_another_resource() -> None:
    auth = AuthServer()
    async with trio.open_nursery() as nursery:
        await nursery.start(auth.serve)
        url = await start_mcp(nursery, auth)
        elsewhere = url.replace("127.0.0.1", "localhost")  # same server, another name: not the resource it publishes
        oauth = user_oauth()
        async with HttpClient(elsewhere, Client(Implementation(name="t", version="1")), auth=oauth) as session:
            with pytest.raises(AuthError, match="not on the server.s origin"):  # its hint names 127.0.0.1
                await session.list_tools()
        assert auth.token_requests == [] and ("GET", "/authorize") not in auth.requests
        nursery.cancel_scope.cancel()


@run
async def test_the_typescript_sdk_auth_client_against_our_resource_server() -> None:
    """The TypeScript SDK v1's own OAuth provider (tests/interop/peers/ts_auth_client.cjs):
    registered dynamically, authorized with PKCE and the resource indicator, its token
    accepted by our guard and its principal seen by the tool."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "interop"))
    from _node import node_or_skip

    node = node_or_skip()
    auth = AuthServer()
    async with trio.open_nursery() as nursery:
        await nursery.start(auth.serve)
        url = await start_mcp(nursery, auth)
        # An optional member is absent, never null: strict clients (this one) refuse a null.
        prm = await fetch(HttpCall(method="GET", url=url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")))
        assert prm.status == 200 and None not in json.loads(prm.body).values()
        done = await trio.run_process(node.command("ts_auth_client.cjs", url), env=node.env, capture_stdout=True,
                                      capture_stderr=True, check=False)
        assert done.returncode == 0, done.stderr.decode()
        report = json.loads(done.stdout)
        assert report["authorizations"] == 1  # one 401, one authorization, then the call
        assert "mcp:basic" in report["text"].split() and report["text"].endswith(" False")  # a bearer token
        assert ("POST", "/register") in auth.requests and ("POST", "/token") in auth.requests
        nursery.cancel_scope.cancel()
