"""The sans-IO authorization flow against scripted servers: the happy paths of each grant,
and every refusal the issue names (forged or mixed-up metadata, wrong state or iss, resource
mismatch), each a clear AuthError that leaves the flow FAILED and returns nothing to store."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from _fake import AS, MCP, NOW, FakeServers, FakeSigner, counter_random, drive, reply

from mcpwire import LocalProtocolError
from mcpwire.auth import (
    AuthError, AuthorizationCode, AuthorizationFlow, Authorized, ClientCredentials, ClientInformation,
    Credentials, EnterpriseManaged, Fetch, FlowState, HttpReply, JwtBearer, NeedCredentials, parse_www_authenticate, select_scopes,
)

GRANT = AuthorizationCode(redirect_uri="http://127.0.0.1:3030/callback")


def flow(challenge: str | None = 'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"',
         **kwargs: Any) -> AuthorizationFlow:
    parsed = parse_www_authenticate(challenge)[0] if challenge else None
    kwargs.setdefault("grant", GRANT)
    return AuthorizationFlow(MCP, random=counter_random(), challenge=parsed, **kwargs)


def form(body: bytes) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(body.decode()).items()}


def test_authorization_code_with_registration_pkce_and_resource() -> None:
    servers = FakeServers()
    done = drive(flow(), servers)
    creds = done.credentials
    assert done.registered and creds.client == ClientInformation(client_id="dyn-client")
    assert (creds.issuer, creds.resource, creds.access_token, creds.refresh_token) == (AS, MCP, "at-1", "rt-1")
    assert creds.expires_at == NOW + 3600 and creds.dpop_jkt is None
    query = servers.authorize_queries[0]
    assert query["resource"] == MCP and query["code_challenge_method"] == "S256" and "scope" not in query
    token = form(servers.calls[-1].body)
    assert token["resource"] == MCP and token["client_id"] == "dyn-client" and token["grant_type"] == "authorization_code"
    registration = servers.calls[2]
    assert b'"application_type":"native"' in registration.body and b"refresh_token" in registration.body


def test_discovery_without_a_hint_tries_the_path_then_the_root() -> None:
    servers = FakeServers()
    servers.prm_path = "/.well-known/oauth-protected-resource"
    servers.prm = {"resource": "https://mcp.example.com", "authorization_servers": [AS]}
    creds = drive(flow(None), servers).credentials
    assert [c.url for c in servers.calls[:2]] == [
        "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
        "https://mcp.example.com/.well-known/oauth-protected-resource"]
    assert creds.resource == "https://mcp.example.com"  # sent exactly as published


def test_issuer_with_a_path_tries_oauth_then_openid_insertion_then_appending() -> None:
    from mcpwire.auth import authorization_server_metadata_urls
    assert authorization_server_metadata_urls("https://a.example/tenant1") == [
        "https://a.example/.well-known/oauth-authorization-server/tenant1",
        "https://a.example/.well-known/openid-configuration/tenant1",
        "https://a.example/tenant1/.well-known/openid-configuration"]


@pytest.mark.parametrize(("resource", "ok"), [
    (MCP, True), ("https://mcp.example.com", True), ("https://mcp.example.com/", True),
    ("https://evil.example.com/mcp", False), ("http://mcp.example.com/mcp", False), ("https://mcp.example.com/other", False),
    ("https://mcp.example.com/m", False), ("https://mcp.example.com/mcp#x", False),
])
def test_resource_must_name_this_server(resource: str, ok: bool) -> None:
    servers = FakeServers()
    servers.prm["resource"] = resource
    f = flow()
    if ok:
        assert drive(f, servers).credentials.resource == resource
        return
    with pytest.raises(AuthError) as err:
        drive(f, servers)
    assert err.value.reason == "resource_mismatch" and f.state is FlowState.FAILED
    assert len(servers.calls) == 1  # nothing went to any authorization server


@pytest.mark.parametrize(("iss", "advertised", "reason"), [
    (AS, True, None), (None, False, None), (None, True, "iss_missing"), ("https://evil.example.com", True, "iss_mismatch"),
    ("https://evil.example.com", False, "iss_mismatch"), (AS + "/", True, "iss_mismatch"),
    ("HTTPS://auth.example.com", True, "iss_mismatch"),
])
def test_iss_response_parameter(iss: str | None, advertised: bool, reason: str | None) -> None:
    servers = FakeServers()
    servers.iss = iss
    servers.meta["authorization_response_iss_parameter_supported"] = advertised
    f = flow()
    if reason is None:
        assert isinstance(drive(f, servers), Authorized)
        return
    with pytest.raises(AuthError) as err:
        drive(f, servers)
    assert err.value.reason == reason and f.state is FlowState.FAILED
    assert not any(c.url.endswith("/token") for c in servers.calls)  # the code never reached the token endpoint


def test_wrong_state_is_refused_and_the_flow_stays_failed() -> None:
    servers = FakeServers()
    servers.state_override = "forged"
    f = flow()
    with pytest.raises(AuthError, match="state_mismatch"):
        drive(f, servers)
    with pytest.raises(LocalProtocolError):
        f.receive_redirect("http://127.0.0.1:3030/callback?code=x", now=NOW)


def test_metadata_with_another_issuer_is_refused() -> None:
    servers = FakeServers()
    servers.meta["issuer"] = "https://attacker.example.com"
    with pytest.raises(AuthError, match="issuer_mismatch"):
        drive(flow(), servers)
    assert not any("/register" in c.url or "/token" in c.url for c in servers.calls)


@pytest.mark.parametrize(("where", "body", "reason"), [
    ("prm", b"{not json", "malformed_metadata"),
    ("prm", b'{"resource": 5}', "malformed_metadata"),
    ("prm", b'{"resource": "https://mcp.example.com/mcp", "authorization_servers": []}', "malformed_metadata"),
    ("prm", b'{"resource": "https://mcp.example.com/mcp", "authorization_servers": ["http://auth.example.com"]}',
     "insecure_endpoint"),
    ("meta", b'{"issuer": "https://auth.example.com", "token_endpoint": "http://auth.example.com/t", '
             b'"authorization_endpoint": "https://auth.example.com/a", "code_challenge_methods_supported": ["S256"]}',
     "insecure_endpoint"),
    ("meta", b'{"issuer": "https://auth.example.com", "token_endpoint": "https://auth.example.com/t", '
             b'"authorization_endpoint": "https://auth.example.com/a"}', "pkce_unsupported"),
])
def test_malformed_documents_are_refused(where: str, body: bytes, reason: str) -> None:
    f = flow()
    step = f.start(now=NOW)
    if where == "meta":
        step = f.receive_response(FakeServers().serve(step.request), now=NOW) if isinstance(step, Fetch) else step
    assert isinstance(step, Fetch)
    with pytest.raises(AuthError) as err:
        f.receive_response(HttpReply(status=200, body=body), now=NOW)
    assert err.value.reason == reason and f.state is FlowState.FAILED


@pytest.mark.parametrize("header", ['Bearer resource_metadata="https://evil.example.com/prm"',
                                    'Bearer resource_metadata="http://mcp.example.com/prm"'])
def test_a_hint_off_the_servers_origin_is_refused(header: str) -> None:
    with pytest.raises(AuthError, match="malformed_challenge"):
        flow(header).start(now=NOW)


def test_scope_selection_and_step_up_union() -> None:
    assert select_scopes(["a"], ["x", "y"]) == ("a",)
    assert select_scopes(None, ["x", "y"]) == ("x", "y")
    assert select_scopes(None, None) is None
    assert select_scopes(["w"], ["x"], previous=["a", "w"]) == ("a", "w")
    servers = FakeServers()
    f = flow('Bearer error="insufficient_scope", scope="mcp:write"', previous_scopes=("mcp:basic",))
    creds = drive(f, servers).credentials
    assert creds.scopes == ("mcp:basic", "mcp:write")
    assert servers.authorize_queries[0]["scope"] == "mcp:basic mcp:write"


def test_offline_access_only_when_advertised() -> None:
    servers = FakeServers()
    servers.prm["scopes_supported"] = ["mcp:basic"]
    servers.meta["scopes_supported"] = ["mcp:basic", "offline_access"]
    drive(flow(), servers)
    assert servers.authorize_queries[0]["scope"] == "mcp:basic offline_access"
    servers = FakeServers()
    servers.prm["scopes_supported"] = ["mcp:basic"]
    drive(flow(), servers)
    assert servers.authorize_queries[0]["scope"] == "mcp:basic"


def test_preregistered_client_uses_basic_and_no_registration() -> None:
    servers = FakeServers()
    client = ClientInformation(client_id="pre id", client_secret="s:e")
    drive(flow(), servers, client=client)
    assert not any("/register" in c.url for c in servers.calls)
    token = servers.calls[-1]
    assert dict(token.headers)["authorization"] == "Basic cHJlJTIwaWQ6cyUzQWU="  # form-encoded first (RFC 6749)
    assert "client_secret" not in form(token.body)


def test_client_id_metadata_document_when_supported() -> None:
    servers = FakeServers()
    servers.meta["client_id_metadata_document_supported"] = True
    grant = AuthorizationCode(redirect_uri="http://127.0.0.1:3030/callback", client_metadata_url="https://app.example/cimd.json")
    drive(flow(grant=grant), servers)
    assert servers.authorize_queries[0]["client_id"] == "https://app.example/cimd.json"
    assert not any("/register" in c.url for c in servers.calls)


def test_no_client_and_no_registration_is_refused() -> None:
    servers = FakeServers()
    del servers.meta["registration_endpoint"]
    with pytest.raises(AuthError, match="no_client"):
        drive(flow(), servers)


def test_token_errors_are_refused_with_the_oauth_code() -> None:
    servers = FakeServers()
    servers.token_status, servers.token_body = 400, {"error": "invalid_grant", "error_description": "bad code"}
    with pytest.raises(AuthError) as err:
        drive(flow(), servers)
    assert (err.value.reason, err.value.oauth_error, err.value.status) == ("token_error", "invalid_grant", 400)


def test_stored_credentials_are_used_refreshed_or_ignored() -> None:
    stored = Credentials(issuer=AS, resource=MCP, access_token="old", refresh_token="rt-0", expires_at=NOW + 600,
                         client=ClientInformation(client_id="c"))
    servers = FakeServers()
    assert drive(flow(), servers, stored=stored).credentials is stored  # still valid: no token request
    servers = FakeServers()
    creds = drive(flow(rejected_token="old"), servers, stored=stored).credentials
    assert form(servers.calls[-1].body)["grant_type"] == "refresh_token" and creds.refresh_token == "rt-1"
    servers = FakeServers()
    servers.token_status, servers.token_body = 400, {"error": "invalid_grant"}
    f = flow(rejected_token="old")
    step = f.start(now=NOW)
    while not isinstance(step, NeedCredentials):
        assert isinstance(step, Fetch)
        step = f.receive_response(servers.serve(step.request), now=NOW)
    step = f.receive_credentials(client=None, stored=stored, now=NOW)
    assert isinstance(step, Fetch)
    step = f.receive_response(servers.serve(step.request), now=NOW)  # refresh refused: authorize again
    assert f.state is FlowState.AUTHORIZE and step.url.startswith(f"{AS}/authorize")  # type: ignore[union-attr]
    other = Credentials(issuer="https://other.example", resource=MCP, access_token="x", expires_at=NOW + 600)
    servers = FakeServers()
    assert drive(flow(), servers, stored=other).credentials.access_token == "at-1"  # another issuer's: ignored


def test_dpop_proofs_and_the_token_endpoint_nonce() -> None:
    servers = FakeServers()
    servers.meta["dpop_signing_alg_values_supported"] = ["ES256"]
    servers.nonce_required = True
    servers.token_body = {"access_token": "at-d", "token_type": "DPoP", "expires_in": 60}
    signer = FakeSigner()
    creds = drive(flow(dpop=signer), servers).credentials
    assert creds.token_type == "DPoP" and creds.dpop_jkt == "jkt-1"
    assert [p.get("nonce") for p in signer.proofs] == [None, "n-1"]
    assert all(p["url"] == f"{AS}/token" and p["method"] == "POST" for p in signer.proofs)


def test_a_dpop_token_without_a_proof_is_refused() -> None:
    servers = FakeServers()
    servers.token_body = {"access_token": "at-d", "token_type": "DPoP"}
    with pytest.raises(AuthError, match="malformed_token"):
        drive(flow(), servers)


def test_client_credentials_jwt_bearer_and_enterprise_grants() -> None:
    client = ClientInformation(client_id="m", client_secret="s", token_endpoint_auth_method="client_secret_post")
    servers = FakeServers()
    drive(flow(grant=ClientCredentials()), servers, client=client)
    assert form(servers.calls[-1].body) == {"grant_type": "client_credentials", "resource": MCP, "client_id": "m",
                                            "client_secret": "s"}
    with pytest.raises(AuthError, match="no_client"):
        drive(flow(grant=ClientCredentials()), FakeServers())
    servers = FakeServers()
    drive(flow(grant=JwtBearer(assertion="wl.jwt")), servers, client=ClientInformation(client_id="w"))
    assert form(servers.calls[-1].body)["assertion"] == "wl.jwt"
    servers = FakeServers()
    original = servers.serve

    def serve(call: Any) -> Any:
        if call.url == "https://idp.example/token":
            assert form(call.body)["audience"] == AS and form(call.body)["resource"] == MCP
            return reply(200, {"access_token": "jag", "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                               "token_type": "N_A"})
        return original(call)

    servers.serve = serve  # type: ignore[method-assign]
    grant = EnterpriseManaged(idp_token_endpoint="https://idp.example/token", id_token="idt", idp_client_id="idp-c")
    drive(flow(grant=grant), servers, client=client)
    last = form(servers.calls[-1].body)
    assert last["assertion"] == "jag" and last["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"


def test_verbs_out_of_order_are_the_hosts_mistake() -> None:
    f = flow()
    with pytest.raises(LocalProtocolError):
        f.receive_redirect("http://127.0.0.1:3030/callback", now=NOW)
    with pytest.raises(LocalProtocolError):
        f.receive_response(reply(200, {}), now=NOW)
    f.start(now=NOW)
    with pytest.raises(LocalProtocolError):
        f.start(now=NOW)
