"""The JOSE ``typ`` of a JWT access token (RFC 9068 section 4): ``JwtVerifier`` takes only
``at+jwt`` (case-insensitive, with or without ``application/``) unless told otherwise with
``accept_typ``; any other type, a missing one included, is ``invalid_token``. This keeps an ID
token, a client assertion or any other JWT the issuer signs from passing as an access token.

Checked on the verifier alone (the key set given in memory), and end to end on 127.0.0.1: the
authorization server of tests/oauth_as.py, its JWKS fetched over HTTP, and the trio/h11 server
behind ``OAuthResource``, reached with raw bytes; a refused token reaches no handler.
"""

from __future__ import annotations

import base64
import functools
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import trio
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from joserfc import jwk, jwt

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from oauth_as import AuthServer

from mcpwire import Keyring
from mcpwire.auth import AccessToken, AuthError, ResourceServer, parse_www_authenticate
from mcpwire_adapters import App, Context
from mcpwire_adapters.errors import UsageError
from mcpwire_adapters.oauth.jose import JwtVerifier
from mcpwire_adapters.oauth.resource_server import OAuthResource
from mcpwire_adapters.serve.trio_h11.server import HttpServerConfig, serve_http

ISSUER = "https://auth.example.com"
AUDIENCE = "https://mcp.example.com/mcp"
KEY = jwk.ECKey.generate_key("P-256", parameters={"kid": "k1"})
JWKS = {"keys": [KEY.as_dict(private=False)]}
VERSION = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": {}}
_MISSING = object()


def token(typ: Any = "at+jwt", key: Any = KEY, **claims: Any) -> str:
    header: dict[str, Any] = {"alg": "ES256", "kid": "k1"}
    if typ is not _MISSING:
        header["typ"] = typ
    now = int(time.time())
    body = {"iss": ISSUER, "aud": AUDIENCE, "sub": "user-1", "exp": now + 600, "iat": now, "scope": "mcp", **claims}
    if isinstance(typ, str):
        return str(jwt.encode(header, body, key))
    # joserfc writes "typ": "JWT" when none is given, and no typ that is not a string
    return signed_by_hand(header, body, key)


def signed_by_hand(header: dict[str, Any], claims: dict[str, Any], key: Any) -> str:
    """An ES256 JWS (RFC 7515 compact form, RFC 7518 3.4 raw signature) of any header."""
    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    signing_input = f"{b64(json.dumps(header).encode())}.{b64(json.dumps(claims).encode())}"
    r, s = decode_dss_signature(key.private_key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
    return f"{signing_input}.{b64(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"


def verify(raw: str, **options: Any) -> AccessToken:
    return trio.run(JwtVerifier(issuer=ISSUER, audience=AUDIENCE, jwks=JWKS, **options).verify, raw)


@pytest.mark.parametrize("typ", ["at+jwt", "AT+JWT", "At+Jwt", "application/at+jwt", "APPLICATION/AT+JWT"])
def test_an_at_jwt_token_is_accepted(typ: str) -> None:
    assert verify(token(typ)).subject == "user-1"


@pytest.mark.parametrize("typ", [
    "JWT", "jwt", "application/jwt", _MISSING, None, "", "dpop+jwt", "secevent+jwt", "at+jwt ", " at+jwt",
    "at+jwt,JWT", "application/at+jwt+x", "text/at+jwt", "application/application/at+jwt", "at", 1, ["at+jwt"],
])
def test_any_other_typ_is_invalid_token(typ: Any) -> None:
    with pytest.raises(AuthError) as refused:
        verify(token(typ))
    assert refused.value.reason == "invalid_token"
    if isinstance(typ, str) or typ is _MISSING:  # joserfc itself refuses a typ that is not a string
        assert "typ" in refused.value.message, refused.value.message


def test_accept_typ_opts_into_plain_jwt_for_an_issuer_that_sends_it() -> None:
    lenient = {"accept_typ": ("at+jwt", "JWT")}
    for typ in ("JWT", "jwt", "application/jwt", "at+jwt", "application/at+jwt"):
        assert verify(token(typ), **lenient).subject == "user-1", typ
    for other in (_MISSING, "dpop+jwt"):
        with pytest.raises(AuthError):
            verify(token(other), **lenient)


def test_accept_typ_none_admits_a_token_without_typ() -> None:
    assert verify(token(_MISSING), accept_typ=("at+jwt", None)).subject == "user-1"
    with pytest.raises(AuthError):
        verify(token("JWT"), accept_typ=("at+jwt", None))


@pytest.mark.parametrize("accept", [(), ("",), (1,), "at+jwt"])
def test_accept_typ_must_name_media_types(accept: Any) -> None:
    with pytest.raises(UsageError):
        JwtVerifier(issuer=ISSUER, audience=AUDIENCE, jwks=JWKS, accept_typ=accept)


def test_the_typ_check_comes_after_the_signature() -> None:
    """A forged token is refused for its signature, whatever its typ says."""
    stranger = jwk.ECKey.generate_key("P-256", parameters={"kid": "k1"})
    with pytest.raises(AuthError) as refused:
        verify(token("JWT", key=stranger))
    assert "signature" in refused.value.message


def test_the_token_without_typ_has_none() -> None:
    header = json.loads(base64.urlsafe_b64decode(token(_MISSING).split(".")[0] + "=="))
    assert "typ" not in header


def test_the_test_authorization_server_issues_at_jwt() -> None:
    auth = AuthServer()
    auth.issuer = ISSUER
    issued = auth.issue({"aud": AUDIENCE})
    assert jwt.decode(issued, auth.key).header["typ"] == "at+jwt"


# -- end to end ---------------------------------------------------------------------------------------
def make_app(called: list[str]) -> App:
    app = App("typ", "1.0", keyring=Keyring.single(b"k" * 32))

    @app.tool(description="Who is calling")
    async def whoami(ctx: Context, arguments: dict[str, Any]) -> str:
        principal: AccessToken = ctx.principal
        called.append(str(principal.subject))
        return str(principal.subject)

    return app


async def post(port: int, authorization: str) -> tuple[int, bytes, list[str]]:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "whoami", "arguments": {}, "_meta": META}}).encode()
    head = (f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n"
            f"accept: application/json, text/event-stream\r\nmcp-protocol-version: {VERSION}\r\n"
            f"mcp-method: tools/call\r\nmcp-name: whoami\r\nauthorization: {authorization}\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n")
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    raw = b""
    async with stream:
        await stream.send_all(head.encode() + body)
        while chunk := await stream.receive_some(65536):
            raw += chunk
    top, _, data = raw.partition(b"\r\n\r\n")
    lines = top.decode("latin-1").split("\r\n")
    challenges = [line.partition(":")[2].strip() for line in lines[1:] if line.lower().startswith("www-authenticate:")]
    return int(lines[0].split(" ")[1]), data, challenges


def test_a_jwt_typed_token_is_refused_over_http_and_reaches_no_handler() -> None:
    async def main() -> None:
        with trio.fail_after(30):
            auth = AuthServer()
            called: list[str] = []
            async with trio.open_nursery() as nursery:
                await nursery.start(auth.serve)
                listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")  # a free port, known before serving
                port = listeners[0].socket.getsockname()[1]
                for listener in listeners:
                    await listener.aclose()
                url = f"http://127.0.0.1:{port}/mcp"
                rs = ResourceServer(resource=url, authorization_servers=[auth.issuer], required_scopes=["mcp:basic"])
                verifier = JwtVerifier(issuer=auth.issuer, audience=url, jwks_url=f"{auth.issuer}/jwks", allow_http=True)
                config = HttpServerConfig(auth=OAuthResource(rs, verifier))
                await nursery.start(functools.partial(serve_http, make_app(called), "127.0.0.1", port, config=config))
                claims = {"iss": auth.issuer, "aud": url, "sub": "user-1", "scope": "mcp:basic",
                          "exp": int(time.time()) + 600}

                plain_jwt = str(jwt.encode({"alg": "ES256", "kid": "k1", "typ": "JWT"}, claims, auth.key))
                status, _body, challenges = await post(port, f"Bearer {plain_jwt}")
                assert status == 401 and called == []
                bearer = parse_www_authenticate(challenges)[0]
                assert bearer.error == "invalid_token"

                status, body, _challenges = await post(port, "Bearer " + auth.issue({"aud": url, "scope": "mcp:basic"}))
                assert status == 200, body
                assert called == ["user-1"]
                nursery.cancel_scope.cancel()

    trio.run(main)
