"""OAuth for the conformance client: one :class:`OAuth` per run, chosen from the scenario context.

The runner's auth scenarios (conformance/RUNNER_NOTES.md) pass credentials in
MCP_CONFORMANCE_CONTEXT when the flow needs them:

- ``private_key_pem`` (+ ``client_id``, ``signing_algorithm``): client credentials with
  ``private_key_jwt``;
- ``idp_id_token`` (+ ``idp_token_endpoint``, ``idp_client_id``, ``client_id``,
  ``client_secret``): enterprise-managed authorization;
- ``valid_jwt`` (+ ``client_id``): workload identity federation (JWT bearer);
- ``client_id`` + ``client_secret`` + ``issuer``: a client pre-registered at that issuer;
- ``client_id`` + ``client_secret`` alone: client credentials with ``client_secret_basic``.

Otherwise it is the authorization code grant: the client ID metadata document URL the runner
expects where the server supports those, else dynamic registration, and the authorization
endpoint's redirect followed headlessly. A DPoP key is always at hand; it is used only where
the authorization server advertises DPoP.
"""

from __future__ import annotations

from typing import Any

from mcpwire_adapters.oauth.client import OAuth, follow_redirect
from mcpwire_adapters.oauth.jose import DPoPKey, PrivateKeyJwt

from mcpwire.auth import (
    Authorize, AuthorizationCode, ClientCredentials, ClientInformation, EnterpriseManaged, Grant, JwtBearer,
)

CIMD_URL = "https://conformance-test.local/client-metadata.json"
REDIRECT_URI = "http://127.0.0.1:3030/callback"


def oauth_for(context: dict[str, Any]) -> OAuth:
    def text(key: str) -> str:
        value = context.get(key)
        if not isinstance(value, str):
            raise ValueError(f"the scenario context has no string {key!r}")
        return value

    grant: Grant
    clients: dict[str, ClientInformation] = {}
    client: ClientInformation | None = None
    assertion: PrivateKeyJwt | None = None
    if "private_key_pem" in context:
        grant = ClientCredentials()
        client = ClientInformation(client_id=text("client_id"), token_endpoint_auth_method="private_key_jwt")
        assertion = PrivateKeyJwt.from_pem(text("private_key_pem"), str(context.get("signing_algorithm") or "ES256"))
    elif "idp_id_token" in context:
        grant = EnterpriseManaged(idp_token_endpoint=text("idp_token_endpoint"), id_token=text("idp_id_token"),
                                  idp_client_id=text("idp_client_id"))
        client = ClientInformation(client_id=text("client_id"), client_secret=text("client_secret"),
                                   token_endpoint_auth_method="client_secret_basic")
    elif "valid_jwt" in context:
        grant = JwtBearer(assertion=text("valid_jwt"))
        client = ClientInformation(client_id=text("client_id"), token_endpoint_auth_method="none")
    elif "client_secret" in context and "issuer" not in context:
        grant = ClientCredentials()
        client = ClientInformation(client_id=text("client_id"), client_secret=text("client_secret"),
                                   token_endpoint_auth_method="client_secret_basic")
    else:
        grant = AuthorizationCode(redirect_uri=REDIRECT_URI, client_metadata_url=CIMD_URL,
                                  client_name="mcpwire-conformance-client")
        if "issuer" in context:
            clients[text("issuer")] = ClientInformation(client_id=text("client_id"), client_secret=text("client_secret"))

    async def redirect(step: Authorize) -> str:
        return await follow_redirect(oauth, step)

    oauth = OAuth(grant=grant, redirect=redirect, clients=clients, client=client, client_assertion=assertion,
                  dpop=DPoPKey.generate(), timeout=10.0)
    return oauth
