"""Bad input at mcpwire's resource server, over the trio/h11 server and the ASGI app.

Real components only: the per-run authorization server of tests/oauth_as.py (its keys, its JWKS,
its introspection endpoint), ``OAuthResource`` with ``JwtVerifier``, ``IntrospectionVerifier`` and
``DPoPVerifier``, the trio/h11 server reached over a socket with raw bytes (so duplicate, oversized
and non-ASCII header fields reach it as sent) and the ASGI app driven in-process with the same
header bytes.

Each bad request must be answered (never a crash, never a 500): 401 with a ``Bearer`` and a
``DPoP`` challenge naming ``resource_metadata`` and the scope, ``error="invalid_token"`` when a
token was presented, no echo of what was presented; no handler runs; and the server still
answers a good token afterwards. Heads over the server's limit are 431 before any OAuth.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import socket
import sys
import time
import uuid
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import h11
import msgspec
import pytest
import trio
from joserfc import jwk, jwt

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from oauth_as import INTROSPECTION_CLIENT, AuthServer

from mcpwire import Client, Keyring
from mcpwire.auth import AccessToken, AuthError, AuthorizationCode, Authorize, ResourceServer, parse_www_authenticate
from mcpwire.types import Implementation
from mcpwire_adapters import App, AsgiConfig, Context, asgi_app
from mcpwire_adapters.client.http import HttpClient
from mcpwire_adapters.serve.trio_h11.server import HttpServerConfig, serve_http
from mcpwire_adapters.oauth.client import OAuth, follow_redirect
from mcpwire_adapters.oauth.store import MemoryTokenStore
from mcpwire_adapters.oauth.jose import DPoPVerifier, JwtVerifier
from mcpwire_adapters.oauth.resource_server import IntrospectionVerifier, OAuthResource, TokenVerifier
from _backends import trio_test

VERSION = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": {}}
WHOAMI = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": "whoami", "arguments": {}, "_meta": META}}).encode()
MAX_HEAD = 16 * 1024  # the trio server's max_header_bytes in these tests
Headers = list[tuple[bytes, bytes]]
Reply = tuple[int, Headers, bytes]
Send = Callable[[Headers, str, str], Awaitable[Reply]]  # headers (the body last, named ""), method, path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unsigned(header: dict[str, Any], claims: dict[str, Any], signature: bytes = b"") -> str:
    """A JWS built by hand, for shapes a JOSE library refuses to produce (alg none, bad jwk)."""
    return f"{b64(json.dumps(header).encode())}.{b64(json.dumps(claims).encode())}.{b64(signature)}"


class Protected:
    """An authorization server, an MCP app behind ``OAuthResource``, and a way to send it headers."""

    def __init__(self, auth: AuthServer, url: str, send: Send, called: list[AccessToken]) -> None:
        self.auth, self.url, self.send, self.called = auth, url, send, called
        self.metadata_url = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")

    def token(self, **claims: Any) -> str:
        return self.auth.issue({"aud": self.url, "scope": "mcp:basic", **claims})

    async def post(self, *fields: tuple[str | bytes, str | bytes], body: bytes = WHOAMI) -> Reply:
        headers: Headers = [(b"content-type", b"application/json"), (b"accept", b"application/json, text/event-stream"),
                            (b"mcp-protocol-version", VERSION.encode()), (b"mcp-method", b"tools/call"),
                            (b"mcp-name", b"whoami"), (b"content-length", str(len(body)).encode())]
        headers += [(k.encode() if isinstance(k, str) else k, v.encode("latin-1") if isinstance(v, str) else v)
                    for k, v in fields]
        return await self.send(headers + [(b"", body)], "POST", "/mcp")

    async def refused(self, name: str, *fields: tuple[str | bytes, str | bytes], error: str | None = "invalid_token",
                      status: int = 401) -> None:
        """The request is answered ``status`` (401) with well-formed challenges, and reaches no handler."""
        before = len(self.called)
        got, headers, body = await self.post(*fields)
        assert got == status, (name, got, body)
        values = [v.decode("latin-1") for k, v in headers if k.lower() == b"www-authenticate"]
        challenges = parse_www_authenticate(values)
        assert [c.scheme for c in challenges] == ["bearer", "dpop"], name
        for challenge in challenges:
            assert challenge.resource_metadata == self.metadata_url, name
            assert challenge.scopes == ("mcp:basic",), name
            assert challenge.error == error, (name, challenge.params)
        assert json.loads(body)["error"] == (error or "unauthorized"), name
        answer = "".join(values).encode("latin-1") + body
        for _field, presented in fields:  # nothing presented is echoed (a token's parts, a proof's)
            raw = presented.encode("latin-1") if isinstance(presented, str) else presented
            for piece in raw.replace(b" ", b".").split(b"."):
                assert len(piece) < 16 or piece not in answer, (name, piece[:40])
        assert len(self.called) == before, name

    async def accepted(self, *fields: tuple[str, str]) -> AccessToken:
        before = len(self.called)
        status, _headers, body = await self.post(*fields)
        assert status == 200, (status, body)
        assert len(self.called) == before + 1
        return self.called[-1]


# -- the two drivers ---------------------------------------------------------------------------------
async def over_socket(port: int, headers: Headers, method: str, path: str) -> Reply:
    """The request's bytes written by hand (h11 would refuse some of them), the reply read by h11."""
    body = headers[-1][1]
    head = f"{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n".encode()
    head += b"".join(k + b": " + v + b"\r\n" for k, v in headers[:-1]) + b"\r\n"
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    conn = h11.Connection(h11.CLIENT)
    conn.send(h11.Request(method=method, target=path, headers=[("host", "x")]))  # h11 now expects a response
    status, reply_headers, data = 0, Headers(), b""
    async with stream:
        try:
            await stream.send_all(head + body)
        except trio.BrokenResourceError:
            pass  # the server may close before reading it all (431): its answer is still there
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                try:
                    conn.receive_data(await stream.receive_some(65536))
                except trio.BrokenResourceError:
                    conn.receive_data(b"")
            elif isinstance(event, h11.Response):
                status, reply_headers = event.status_code, list(event.headers)
            elif isinstance(event, h11.Data):
                data += event.data
            else:
                break
    return status, reply_headers, data


def over_asgi(asgi: Any) -> Send:
    async def send(headers: Headers, method: str, path: str) -> Reply:
        body = headers[-1][1]
        scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.4"}, "http_version": "1.1",
                 "method": method, "scheme": "http", "path": path, "raw_path": path.encode(), "root_path": "",
                 "query_string": b"", "headers": [(b"host", b"127.0.0.1"), *headers[:-1]],
                 "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000)}
        sent: list[dict[str, Any]] = []
        given = False

        async def receive() -> dict[str, Any]:
            nonlocal given
            if given:
                await trio.sleep_forever()
            given = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def emit(message: Any) -> None:
            sent.append(dict(message))

        await asgi(scope, receive, emit)
        start = sent[0]
        assert start["type"] == "http.response.start", sent
        return int(start["status"]), list(start["headers"]), b"".join(m.get("body", b"") for m in sent[1:])

    return send


def make_app(called: list[AccessToken]) -> App:
    app = App("oauth-bad-input", "1.0", keyring=Keyring.single(b"k" * 32))

    @app.tool(description="Who is calling")
    async def whoami(ctx: Context, arguments: dict[str, Any]) -> str:
        called.append(ctx.principal)
        return str(ctx.principal.subject)

    return app


async def protect(nursery: trio.Nursery, driver: str, auth: AuthServer, verifier: Callable[[str], TokenVerifier],
                  *, dpop: bool = True) -> Protected:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    rs = ResourceServer(resource=url, authorization_servers=[auth.issuer], required_scopes=["mcp:basic"], allow_http=True)
    guard = OAuthResource(rs, verifier(url), dpop=DPoPVerifier() if dpop else None)
    called: list[AccessToken] = []
    if driver == "h11":
        config = HttpServerConfig(auth=guard, max_header_bytes=MAX_HEAD)
        await nursery.start(functools.partial(serve_http, make_app(called), "127.0.0.1", port, config=config))
        return Protected(auth, url, functools.partial(over_socket, port), called)
    return Protected(auth, url, over_asgi(asgi_app(make_app(called), config=AsgiConfig(auth=guard))), called)


def jwks_of(auth: AuthServer) -> Callable[[str], TokenVerifier]:
    return lambda url: JwtVerifier(issuer=auth.issuer, audience=url, jwks_url=f"{auth.issuer}/jwks", allow_http=True)


def scenario(test: Callable[[str], Awaitable[None]]) -> Callable[[str], None]:
    """Run ``test(driver)`` under trio with a deadline, once per driver."""

    @pytest.mark.parametrize("driver", ["h11", "asgi"])
    @functools.wraps(test)
    def wrapper(driver: str) -> None:
        async def limited() -> None:
            with trio.fail_after(60):
                await test(driver)

        trio.run(limited)

    return wrapper


# -- malformed, forged and misdirected tokens --------------------------------------------------------
@scenario
async def test_malformed_and_wrong_tokens_get_a_challenge(driver: str) -> None:
    auth = AuthServer()
    async with trio.open_nursery() as nursery:
        await nursery.start(auth.serve)
        rs = await protect(nursery, driver, auth, jwks_of(auth))
        now = int(time.time())
        stranger = jwk.ECKey.generate_key("P-256", parameters={"kid": "k1"})
        rotated = jwk.ECKey.generate_key("P-256", parameters={"kid": "k2"})
        good = rs.token()
        head, claims, signature = good.split(".")
        hmac_key = jwk.OctKey.import_key(json.dumps(auth.key.as_dict(private=False)).encode())
        await rs.refused("no token", error=None)
        cases: dict[str, tuple[str | bytes, str | bytes]] = {
            "empty": ("authorization", ""),
            "scheme only": ("authorization", "Bearer"),
            "scheme and blank": ("authorization", "Bearer    "),
            "two words": ("authorization", f"Bearer {good} extra"),
            "basic": ("authorization", "Basic dXNlcjpwYXNz"),
            "unknown scheme": ("authorization", f"Token {good}"),
            "not a jwt": ("authorization", "Bearer abc.def.ghi"),
            "one segment": ("authorization", "Bearer " + "x" * 200),
            "no signature": ("authorization", f"Bearer {head}.{claims}."),
            "bad base64": ("authorization", f"Bearer {head}.!!{claims}.{signature}"),
            "payload not json": ("authorization", f"Bearer {head}.{b64(b'{nope')}.{signature}"),
            "payload a list": ("authorization", f"Bearer {head}.{b64(b'[1,2]')}.{signature}"),
            "non-ascii": (b"authorization", b"Bearer \xe9\xe8\xff." + good.encode()),
            "alg none": ("authorization", "Bearer " + unsigned({"alg": "none", "kid": "k1"},
                                                                {"iss": auth.issuer, "aud": rs.url, "exp": now + 600})),
            "hmac with the public key": ("authorization", "Bearer " + jwt.encode(
                {"alg": "HS256", "kid": "k1"}, {"iss": auth.issuer, "aud": rs.url, "exp": now + 600, "scope": "mcp:basic"},
                hmac_key)),
            "forged": ("authorization", "Bearer " + auth.issue({"aud": rs.url, "scope": "mcp:basic"}, key=stranger)),
            "unknown kid": ("authorization", "Bearer " + jwt.encode(
                {"alg": "ES256", "kid": "k2"}, {"iss": auth.issuer, "aud": rs.url, "exp": now + 600, "scope": "mcp:basic"},
                rotated)),
            "expired": ("authorization", "Bearer " + rs.token(exp=now - 3600)),
            "no exp": ("authorization", "Bearer " + jwt.encode(
                {"alg": "ES256", "kid": "k1"}, {"iss": auth.issuer, "aud": rs.url, "scope": "mcp:basic"}, auth.key)),
            "exp a string": ("authorization", "Bearer " + rs.token(exp=str(now + 600))),
            "not yet valid": ("authorization", "Bearer " + rs.token(nbf=now + 3600)),
            "wrong audience": ("authorization", "Bearer " + rs.token(aud="http://127.0.0.1:1/mcp")),
            "audience list without us": ("authorization", "Bearer " + rs.token(aud=["http://127.0.0.1:1/mcp", 7])),
            "no audience": ("authorization", "Bearer " + rs.token(aud=None)),
            "audience of the issuer": ("authorization", "Bearer " + rs.token(aud=auth.issuer)),
            "wrong issuer": ("authorization", "Bearer " + rs.token(iss="http://127.0.0.1:2")),
            "bound token as bearer": ("authorization", "Bearer " + rs.token(cnf={"jkt": "x" * 43})),
            "bearer token as dpop": ("authorization", "DPoP " + good),
        }
        for name, field in cases.items():
            await rs.refused(name, field)
        await rs.refused("two authorization fields", ("authorization", f"Bearer {good}"), ("authorization", f"Bearer {good}"))
        assert (await rs.accepted(("authorization", f"Bearer {good}"))).subject == "user-1"
        await rs.refused("too few scopes", ("authorization", "Bearer " + rs.token(scope="other")), error="insufficient_scope",
                         status=403)
        nursery.cancel_scope.cancel()


@scenario
async def test_the_resource_metadata_is_served_without_a_token(driver: str) -> None:
    auth = AuthServer()
    async with trio.open_nursery() as nursery:
        await nursery.start(auth.serve)
        rs = await protect(nursery, driver, auth, jwks_of(auth))
        path = "/.well-known/oauth-protected-resource/mcp"
        status, headers, body = await rs.send([(b"", b"")], "GET", path)
        assert status == 200 and (b"content-type", b"application/json") in headers
        document = json.loads(body)
        assert document["resource"] == rs.url and document["authorization_servers"] == [auth.issuer]
        assert document["scopes_supported"] == ["mcp:basic"] and None not in document.values()
        status, headers, body = await rs.send([(b"", b"")], "HEAD", path)
        assert status == 200 and body == b""
        status, _headers, _body = await rs.send([(b"", b"")], "GET", "/.well-known/oauth-protected-resource/other")
        assert status not in (200, 401) and status < 500  # not this endpoint's document: the guard leaves it to the engine
        nursery.cancel_scope.cancel()


# -- oversized header fields -------------------------------------------------------------------------
@scenario
async def test_oversized_authorization_and_dpop_fields(driver: str) -> None:
    auth = AuthServer()
    async with trio.open_nursery() as nursery:
        await nursery.start(auth.serve)
        rs = await protect(nursery, driver, auth, jwks_of(auth))
        good = rs.token()
        # Under the head limit: the guard reads it, the verifier refuses it.
        await rs.refused("long token", ("authorization", "Bearer " + "a" * (MAX_HEAD // 2)))
        await rs.refused("long jwt", ("authorization", "Bearer " + good + "A" * (MAX_HEAD // 2)))
        await rs.refused("long proof", ("authorization", f"DPoP {good}"), ("dpop", "b" * (MAX_HEAD // 2)))
        if driver == "h11":  # over it: 431 from the server before any OAuth (an ASGI server bounds its own heads)
            status, _headers, body = await rs.post(("authorization", "Bearer " + "a" * MAX_HEAD * 2))
            assert status == 431 and json.loads(body)["error"]["code"] == -32600
            status, _headers, body = await rs.post(*[("x-pad", "p" * 1000)] * 20, ("authorization", f"Bearer {good}"))
            assert status == 431
        assert rs.called == []
        assert (await rs.accepted(("authorization", f"Bearer {good}"))).subject == "user-1"
        nursery.cancel_scope.cancel()


# -- DPoP proofs ---------------------------------------------------------------------------------------
class Proofs:
    """Proofs for one bound token, good and bad (RFC 9449 section 4.2 and 4.3)."""

    def __init__(self, rs: Protected) -> None:
        self.rs = rs
        self.key = jwk.ECKey.generate_key("P-256")
        self.other = jwk.ECKey.generate_key("P-256")
        self.token = rs.token(cnf={"jkt": self.key.thumbprint()})
        self.ath = b64(hashlib.sha256(self.token.encode()).digest())

    def claims(self, **changes: Any) -> dict[str, Any]:
        claims = {"jti": str(uuid.uuid4()), "htm": "POST", "htu": self.rs.url, "iat": int(time.time()), "ath": self.ath}
        claims.update(changes)
        return {k: v for k, v in claims.items() if v is not None}

    def proof(self, *, key: Any = None, header: dict[str, Any] | None = None, **changes: Any) -> str:
        signer = key or self.key
        full = {"typ": "dpop+jwt", "alg": "ES256", "jwk": self.key.as_dict(private=False), **(header or {})}
        return jwt.encode(full, self.claims(**changes), signer, algorithms=[full["alg"]])

    def fields(self, proof: str) -> tuple[tuple[str, str], tuple[str, str]]:
        return ("authorization", f"DPoP {self.token}"), ("dpop", proof)


@scenario
async def test_bad_dpop_proofs_get_a_challenge(driver: str) -> None:
    auth = AuthServer()
    async with trio.open_nursery() as nursery:
        await nursery.start(auth.serve)
        rs = await protect(nursery, driver, auth, jwks_of(auth))
        p = Proofs(rs)
        now = int(time.time())
        good_header = {"typ": "dpop+jwt", "alg": "ES256", "jwk": p.key.as_dict(private=False)}
        cases: dict[str, str] = {
            "garbage": "garbage",
            "three garbage segments": "a.b.c",
            "header not json": f"{b64(b'{x')}.{b64(b'{}')}.",
            "header a list": f"{b64(b'[]')}.{b64(b'{}')}.",
            "typ JWT": p.proof(header={"typ": "JWT"}),
            "no typ": unsigned({"alg": "ES256", "jwk": p.key.as_dict(private=False)}, p.claims()),
            "alg none": unsigned({**good_header, "alg": "none"}, p.claims()),
            "hmac": jwt.encode({**good_header, "alg": "HS256"}, p.claims(), jwk.OctKey.generate_key(256),
                               algorithms=["HS256"]),
            "no jwk": unsigned({"typ": "dpop+jwt", "alg": "ES256"}, p.claims()),
            "jwk a string": unsigned({**good_header, "jwk": "key"}, p.claims()),
            "jwk not a key": unsigned({**good_header, "jwk": {"kty": "nope"}}, p.claims()),
            "private jwk": p.proof(header={"jwk": p.key.as_dict(private=True)}),
            "signed by another key": p.proof(key=p.other),
            "another key, self-consistent": p.proof(key=p.other, header={"jwk": p.other.as_dict(private=False)}),
            "signature cut": p.proof().rsplit(".", 1)[0] + ".",
            "wrong htm": p.proof(htm="GET"),
            "no htm": p.proof(htm=None),
            "wrong htu": p.proof(htu="http://127.0.0.1:1/mcp"),
            "htu another path": p.proof(htu=rs.url + "/other"),
            "htu not a string": p.proof(htu=7),
            "no htu": p.proof(htu=None),
            "stale iat": p.proof(iat=now - 3600),
            "future iat": p.proof(iat=now + 3600),
            "iat a string": p.proof(iat=str(now)),
            "no iat": p.proof(iat=None),
            "no ath": p.proof(ath=None),
            "ath of another token": p.proof(ath=b64(hashlib.sha256(b"other").digest())),
            "no jti": p.proof(jti=None),
            "empty jti": p.proof(jti=""),
        }
        for name, proof in cases.items():
            await rs.refused(name, *p.fields(proof))
        await rs.refused("no proof", ("authorization", f"DPoP {p.token}"))
        await rs.refused("two proofs", *p.fields(p.proof()), ("dpop", p.proof()))
        await rs.refused("bound token as bearer", ("authorization", f"Bearer {p.token}"), ("dpop", p.proof()))
        once = p.proof()
        assert (await rs.accepted(*p.fields(once))).jkt == p.key.thumbprint()
        await rs.refused("replayed proof", *p.fields(once))
        assert (await rs.accepted(*p.fields(p.proof()))).jkt == p.key.thumbprint()  # a fresh proof is fine
        nursery.cancel_scope.cancel()


@scenario
async def test_dpop_bound_tokens_without_a_proof_checker_or_where_dpop_is_off(driver: str) -> None:
    auth = AuthServer()
    async with trio.open_nursery() as nursery:
        await nursery.start(auth.serve)
        rs = await protect(nursery, driver, auth, jwks_of(auth), dpop=False)
        p = Proofs(rs)
        await rs.refused("no checker", *p.fields(p.proof()))
        assert (await rs.accepted(("authorization", f"Bearer {rs.token()}"))).jkt is None
        nursery.cancel_scope.cancel()


# -- the issuer's documents: JWKS and introspection, malformed or missing -----------------------------
class BadAuthServer(AuthServer):
    """The authorization server, with its JWKS or introspection answer replaced."""

    def __init__(self) -> None:
        super().__init__()
        self.override: dict[str, tuple[int, bytes]] = {}
        self.challenge: str | None = None  # the WWW-Authenticate of an overridden answer

    def handle(self, method: str, target: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
        path = target.split("?")[0]
        if path in self.override:
            self.requests.append((method, path))
            status, data = self.override[path]
            extra = {"www-authenticate": self.challenge} if self.challenge is not None and status == 401 else {}
            return status, {"content-type": "application/json", **extra}, data
        return super().handle(method, target, headers, body)


MALFORMED_DOCUMENTS: dict[str, tuple[int, bytes]] = {
    "500": (500, b'{"error": "server_error"}'),
    "404": (404, b""),
    "not json": (200, b"<html>keys</html>"),
    "truncated": (200, b'{"keys": [{"kty": "EC"'),
    "a list": (200, b"[]"),
    "keys a string": (200, b'{"keys": "k1"}'),
    "a key of no type": (200, b'{"keys": [{"kid": "k1"}]}'),
    "a key of an unknown type": (200, b'{"keys": [{"kty": "XYZ", "kid": "k1"}]}'),
    "a broken EC key": (200, b'{"keys": [{"kty": "EC", "crv": "P-256", "x": "!!", "y": "", "kid": "k1"}]}'),
    "over a megabyte": (200, b'{"keys": [], "pad": "' + b"x" * (1024 * 1024 + 1) + b'"}'),
}


@scenario
async def test_a_malformed_jwks_refuses_tokens_and_keeps_keys_it_had(driver: str) -> None:
    auth = BadAuthServer()
    async with trio.open_nursery() as nursery:
        await nursery.start(auth.serve)
        rs = await protect(nursery, driver, auth,
                           lambda url: JwtVerifier(issuer=auth.issuer, audience=url, jwks_url=f"{auth.issuer}/jwks",
                                                   allow_http=True, cache_seconds=0.0, refresh_interval=0.0))
        good = rs.token()
        for name, document in MALFORMED_DOCUMENTS.items():
            auth.override["/jwks"] = document
            await rs.refused(name, ("authorization", f"Bearer {good}"))
        del auth.override["/jwks"]
        assert (await rs.accepted(("authorization", f"Bearer {good}"))).subject == "user-1"
        for name, document in MALFORMED_DOCUMENTS.items():  # a bad refetch keeps the keys already held
            auth.override["/jwks"] = document
            assert (await rs.accepted(("authorization", f"Bearer {good}"))).subject == "user-1", name
        await rs.refused("forged, keys unreachable", ("authorization", "Bearer " + auth.issue(
            {"aud": rs.url, "scope": "mcp:basic"}, key=jwk.ECKey.generate_key("P-256", parameters={"kid": "k9"}))))
        nursery.cancel_scope.cancel()


@scenario
async def test_malformed_introspection_answers_refuse_the_token(driver: str) -> None:
    auth = BadAuthServer()

    def introspection(url: str) -> TokenVerifier:
        return IntrospectionVerifier(endpoint=f"{auth.issuer}/introspect", client_id=INTROSPECTION_CLIENT[0],
                                     client_secret=INTROSPECTION_CLIENT[1], audience=url, issuer=auth.issuer,
                                     allow_http=True)

    async with trio.open_nursery() as nursery:
        await nursery.start(auth.serve)
        rs = await protect(nursery, driver, auth, introspection)
        good = rs.token()
        answers = {
            **MALFORMED_DOCUMENTS,
            "active missing": (200, b'{"sub": "user-1"}'),
            "active a string": (200, b'{"active": "true", "aud": "x"}'),
            "inactive": (200, b'{"active": false}'),
            "scope a list": (200, msgspec.json.encode({"active": True, "aud": rs.url, "scope": ["mcp:basic"]})),
            "no audience": (200, msgspec.json.encode({"active": True, "scope": "mcp:basic", "iss": auth.issuer})),
            "another audience": (200, msgspec.json.encode({"active": True, "scope": "mcp:basic", "iss": auth.issuer,
                                                           "aud": "http://127.0.0.1:1/mcp"})),
            "another issuer": (200, msgspec.json.encode({"active": True, "scope": "mcp:basic", "iss": "http://x",
                                                         "aud": rs.url})),
            "expired": (200, msgspec.json.encode({"active": True, "scope": "mcp:basic", "iss": auth.issuer,
                                                  "aud": rs.url, "exp": 1000})),
        }
        for name, answer in answers.items():
            auth.override["/introspect"] = answer
            await rs.refused(name, ("authorization", f"Bearer {good}"))
        del auth.override["/introspect"]
        assert (await rs.accepted(("authorization", f"Bearer {good}"))).subject == "user-1"
        nursery.cancel_scope.cancel()


@scenario
async def test_an_unreachable_introspection_endpoint_refuses_the_token(driver: str) -> None:
    auth = AuthServer()
    async with trio.open_nursery() as nursery:
        await nursery.start(auth.serve)
        dead = f"http://127.0.0.1:{free_port()}/introspect"
        rs = await protect(nursery, driver, auth, lambda url: IntrospectionVerifier(
            endpoint=dead, client_id="c", client_secret="s", audience=url, allow_http=True))
        await rs.refused("unreachable", ("authorization", f"Bearer {rs.token()}"))
        nursery.cancel_scope.cancel()


# -- the client: a tampered redirect, mixed-up issuers, malformed documents and challenges -------------
client_scenario = trio_test(60)


async def refused_by_the_client(url: str, issuer: str, redirect: Callable[[OAuth, Authorize], Awaitable[str]] | None = None
                                ) -> AuthError:
    """Run the flow against ``url``; return its AuthError, having checked nothing was stored
    (neither tokens nor a registered client, for the issuer or the one a document named)."""

    async def follow(step: Authorize) -> str:
        return await (redirect or follow_redirect)(oauth, step)

    oauth = OAuth(grant=AuthorizationCode(redirect_uri="http://127.0.0.1:1/callback"), redirect=follow)
    async with HttpClient(url, Client(Implementation(name="t", version="1")), auth=oauth) as session:
        with pytest.raises(AuthError) as refused:
            await session.list_tools()
    assert isinstance(oauth.store, MemoryTokenStore)
    for named in (issuer, issuer + "/", "http://127.0.0.1:1"):
        assert oauth.store.load(named, url) is None and oauth.store.client(named) is None, "a failed flow stores nothing"
    return refused.value


def tampered(change: Callable[[list[tuple[str, str]]], list[tuple[str, str]]]) -> Callable[[OAuth, Authorize], Awaitable[str]]:
    async def redirect(oauth: OAuth, step: Authorize) -> str:
        location = urlsplit(await follow_redirect(oauth, step))
        return urlunsplit(location._replace(query=urlencode(change(parse_qsl(location.query)))))

    return redirect


@client_scenario
async def test_a_tampered_authorization_response_is_refused_and_nothing_is_stored() -> None:
    auth = AuthServer()
    async with trio.open_nursery() as nursery:
        await nursery.start(auth.serve)
        rs = await protect(nursery, "h11", auth, jwks_of(auth))
        cases: dict[str, tuple[Callable[[list[tuple[str, str]]], list[tuple[str, str]]], str]] = {
            "another state": (lambda q: [(k, "forged" if k == "state" else v) for k, v in q], "state_mismatch"),
            "no state": (lambda q: [(k, v) for k, v in q if k != "state"], "state_mismatch"),
            "state twice": (lambda q: [*q, ("state", dict(q)["state"])], "state_mismatch"),
            "another iss": (lambda q: [(k, "http://127.0.0.1:1" if k == "iss" else v) for k, v in q], "iss_mismatch"),
            "no iss (advertised)": (lambda q: [(k, v) for k, v in q if k != "iss"], "iss_missing"),
            "denied": (lambda q: [(k, v) for k, v in q if k != "code"] + [("error", "access_denied")],
                       "authorization_denied"),
            "no code": (lambda q: [(k, v) for k, v in q if k != "code"], "authorization_denied"),
        }
        for name, (change, reason) in cases.items():
            error = await refused_by_the_client(rs.url, auth.issuer, tampered(change))
            assert error.reason == reason, (name, error)
        assert auth.token_requests == [] and rs.called == []  # no code was ever redeemed
        nursery.cancel_scope.cancel()


@client_scenario
async def test_mixed_up_issuers_and_malformed_documents_are_refused_and_nothing_is_stored() -> None:
    auth = BadAuthServer()
    async with trio.open_nursery() as nursery:
        await nursery.start(auth.serve)
        rs = await protect(nursery, "h11", auth, jwks_of(auth))
        good = auth.metadata()
        documents: dict[str, tuple[tuple[int, bytes], str]] = {
            "another issuer": ((200, json.dumps({**good, "issuer": "http://127.0.0.1:1"}).encode()), "issuer_mismatch"),
            "issuer with a slash": ((200, json.dumps({**good, "issuer": auth.issuer + "/"}).encode()), "issuer_mismatch"),
            "not json": ((200, b"<html>"), "malformed_metadata"),
            "a list": ((200, b"[]"), "malformed_metadata"),
            "no token endpoint": ((200, json.dumps({k: v for k, v in good.items() if k != "token_endpoint"}).encode()),
                                  "malformed_metadata"),
            "an endpoint that is not a URL": ((200, json.dumps({**good, "token_endpoint": "token"}).encode()),
                                              "malformed_metadata"),
        }
        for name, (document, reason) in documents.items():
            auth.override["/.well-known/oauth-authorization-server"] = document
            error = await refused_by_the_client(rs.url, auth.issuer)
            assert error.reason == reason, (name, error)
        assert ("POST", "/register") not in auth.requests and auth.token_requests == [] and rs.called == []
        nursery.cancel_scope.cancel()


@client_scenario
async def test_malformed_challenges_and_resource_metadata_are_refused_and_nothing_is_stored() -> None:
    auth = BadAuthServer()  # here it is also the protected server: /mcp answers 401 with a chosen challenge
    async with trio.open_nursery() as nursery:
        await nursery.start(auth.serve)
        url = f"{auth.issuer}/mcp"
        prm = f"{auth.issuer}/.well-known/oauth-protected-resource/mcp"
        auth.override["/mcp"] = (401, b'{"error": "unauthorized"}')
        good_prm = {"resource": url, "authorization_servers": [auth.issuer]}
        cases: dict[str, tuple[str, bytes, str]] = {
            "unterminated quote": ('Bearer resource_metadata="' + prm, b"", "malformed_challenge"),
            "parameter twice": (f'Bearer resource_metadata="{prm}", resource_metadata="{prm}"', b"", "malformed_challenge"),
            "stray character": (f'Bearer resource_metadata="{prm}" ;', b"", "malformed_challenge"),
            "oversized": ('Bearer scope="' + "s" * 9000 + '"', b"", "malformed_challenge"),
            "prm not json": (f'Bearer resource_metadata="{prm}"', b"nope", "malformed_metadata"),
            "prm for another resource": (f'Bearer resource_metadata="{prm}"',
                                         json.dumps({**good_prm, "resource": "http://127.0.0.1:1/mcp"}).encode(),
                                         "resource_mismatch"),
            "prm without servers": (f'Bearer resource_metadata="{prm}"', json.dumps({**good_prm, "authorization_servers": []}).encode(),
                                    "malformed_metadata"),
            "prm naming a non-URL server": (f'Bearer resource_metadata="{prm}"',
                                            json.dumps({**good_prm, "authorization_servers": ["auth"]}).encode(),
                                            "malformed_metadata"),
        }
        for name, (challenge, document, reason) in cases.items():
            auth.challenge = challenge
            auth.override["/.well-known/oauth-protected-resource/mcp"] = (200, document)
            error = await refused_by_the_client(url, auth.issuer)
            assert error.reason == reason, (name, error)
        assert ("POST", "/register") not in auth.requests and auth.token_requests == []
        nursery.cancel_scope.cancel()
