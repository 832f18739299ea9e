"""ClientAuth (what a driver sends and how it reads 401/403), challenge parsing, the token stores."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from _fake import AS, MCP, NOW, FakeSigner, counter_random

from mcpwire.auth import (
    AuthError, AuthorizationCode, AuthorizationFlow, Authorized, ClientAuth, ClientInformation, Credentials,
    build_challenge, parse_www_authenticate,
)
from mcpwire_adapters.oauth.store import FileTokenStore, MemoryTokenStore

GRANT = AuthorizationCode(redirect_uri="http://127.0.0.1:3030/callback")
CREDS = Credentials(issuer=AS, resource=MCP, access_token="tok", scopes=("mcp:basic",))


def auth(**kwargs: object) -> ClientAuth:
    return ClientAuth(MCP, grant=GRANT, random=counter_random(), **kwargs)  # type: ignore[arg-type]


def test_no_credentials_no_header_then_bearer() -> None:
    a = auth()
    assert a.headers(now=NOW) == []
    a.authorized(Authorized(credentials=CREDS))
    assert a.headers(now=NOW) == [("authorization", "Bearer tok")]


def test_dpop_bound_token_gets_a_fresh_proof_with_ath_and_the_latest_nonce() -> None:
    signer = FakeSigner()
    a = auth(dpop=signer)
    a.authorized(Authorized(credentials=Credentials(issuer=AS, resource=MCP, access_token="tok", dpop_jkt="jkt-1")))
    first = a.headers(now=NOW)
    assert first[0] == ("authorization", "DPoP tok") and first[1][0] == "dpop"
    assert a.on_response(401, [("WWW-Authenticate", 'DPoP error="use_dpop_nonce"'), ("DPoP-Nonce", "n1")], now=NOW) == "retry"
    a.headers(now=NOW)
    assert [p["nonce"] for p in signer.proofs] == [None, "n1"]
    assert signer.proofs[0]["url"] == MCP and signer.proofs[0]["access_token_hash"]
    assert signer.proofs[0]["jti"] != signer.proofs[1]["jti"]


def test_401_starts_a_flow_and_drops_the_refused_token() -> None:
    a = auth()
    a.authorized(Authorized(credentials=CREDS))
    a.begin_request()
    flow = a.on_response(401, [("www-authenticate", 'Bearer resource_metadata="https://mcp.example.com/x"')], now=NOW)
    assert isinstance(flow, AuthorizationFlow) and flow.rejected_token == "tok" and flow.previous_scopes == ()
    assert a.credentials is None and a.headers(now=NOW) == []


def test_403_insufficient_scope_steps_up_with_the_scopes_before() -> None:
    a = auth()
    a.authorized(Authorized(credentials=CREDS))
    flow = a.on_response(403, [("www-authenticate", 'Bearer error="insufficient_scope", scope="mcp:write"')], now=NOW)
    assert isinstance(flow, AuthorizationFlow) and flow.previous_scopes == ("mcp:basic",)
    assert a.on_response(403, [], now=NOW) == "ok"  # a plain 403 is an answer
    assert a.on_response(200, [], now=NOW) == "ok"


def test_attempts_are_bounded_per_request() -> None:
    a = auth(max_attempts=3)
    a.begin_request()
    for _ in range(3):
        assert isinstance(a.on_response(401, [("www-authenticate", "Bearer")], now=NOW), AuthorizationFlow)
    with pytest.raises(AuthError, match="too_many_attempts"):
        a.on_response(401, [("www-authenticate", "Bearer")], now=NOW)
    a.begin_request()
    assert isinstance(a.on_response(401, [], now=NOW), AuthorizationFlow)


def test_a_malformed_challenge_is_refused() -> None:
    with pytest.raises(AuthError, match="malformed_challenge"):
        auth().on_response(401, [("www-authenticate", 'Bearer scope="unterminated')], now=NOW)


@pytest.mark.parametrize(("header", "expected"), [
    ("Bearer", [("bearer", {}, None)]),
    ('Bearer realm="x", scope="a b"', [("bearer", {"realm": "x", "scope": "a b"}, None)]),
    ('Basic abc==, Bearer error=invalid_token', [("basic", {}, "abc=="), ("bearer", {"error": "invalid_token"}, None)]),
    ('DPoP error="use_dpop_nonce", algs="ES256"', [("dpop", {"error": "use_dpop_nonce", "algs": "ES256"}, None)]),
    ('BEARER Scope="q\\"uote"', [("bearer", {"scope": 'q"uote'}, None)]),
    (", , Bearer x=1 ,,", [("bearer", {"x": "1"}, None)]),
])
def test_challenge_grammar(header: str, expected: list[tuple[str, dict[str, str], str | None]]) -> None:
    assert [(c.scheme, c.params, c.token68) for c in parse_www_authenticate(header)] == expected


@pytest.mark.parametrize("header", ['Bearer a="x', "Bearer a=1, a=2", "=x", "Bearer a=1 b", 'Bearer a="\x01"',
                                    "x" * 9000])
def test_malformed_challenges(header: str) -> None:
    with pytest.raises(AuthError, match="malformed_challenge"):
        parse_www_authenticate(header)


def test_built_challenges_parse_back() -> None:
    text = build_challenge("Bearer", {"error": "insufficient_scope", "scope": 'a "b"', "missing": None})
    (challenge,) = parse_www_authenticate(text)
    assert challenge.error == "insufficient_scope" and challenge.scopes == ("a", '"b"')
    with pytest.raises(ValueError):
        build_challenge("Bearer", {"x": "bad\nvalue"})


def test_stores_key_by_issuer_and_resource(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "tokens.json"
    store = FileTokenStore(path)
    store.save(CREDS)
    store.save_client(AS, ClientInformation(client_id="c"))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    again = FileTokenStore(path)
    assert again.load(AS, MCP) == CREDS and again.client(AS) == ClientInformation(client_id="c")
    assert again.load("https://other.example", MCP) is None and again.load(AS, MCP + "2") is None
    assert again.client("https://other.example") is None
    again.delete(AS, MCP)
    assert FileTokenStore(path).load(AS, MCP) is None
    memory = MemoryTokenStore()
    memory.save(CREDS)
    assert memory.load(AS, MCP) is CREDS
