"""mcpwire.auth: OAuth 2.1 for MCP, both roles, sans-IO (specification: Basic > Authorization).

Client: :class:`AuthorizationFlow` runs one authorization (discovery, client identity, the
authorization code grant with PKCE or an extension grant, the token request) as a series of
steps the host performs; :class:`ClientAuth` keeps one server's credentials, builds the
``Authorization`` header and turns 401/403 responses into flows. Resource server:
:func:`protected_resource_metadata`, :func:`unauthorized` and :func:`insufficient_scope` build
what the server publishes and answers; :class:`AccessToken` is what a token verifier returns.

Nothing here does I/O, keeps a clock or signs: time and randomness are arguments, signers
(DPoP, ``private_key_jwt``) and token verifiers come from the host (``mcpwire_adapters.oauth.client``
and ``mcpwire_adapters.oauth.jose``, the latter with ``pip install 'mcpwire[oauth]'``).
"""

from .challenge import Challenge, auth_challenge, build_challenge, parse_www_authenticate
from .errors import AuthError
from .flow import (
    AuthorizationFlow, Authorize, Authorized, Fetch, HttpCall, HttpReply, NeedCredentials, Step, pkce_challenge,
    select_scopes, token_hash,
)
from .grants import (
    AssertionSigner, AuthorizationCode, ClientCredentials, Credentials, EnterpriseManaged, Grant, JwtBearer, ProofSigner,
)
from .metadata import (
    AuthorizationServerMetadata, ClientInformation, ProtectedResourceMetadata, TokenResponse,
    authorization_server_metadata_urls, protected_resource_metadata_urls,
)
from .metadata import check_endpoint
from .resource import AccessToken, PresentedToken, ResourceReply, ResourceServer
from .session import ClientAuth
from .states import FLOW, FlowState

__all__ = [
    "AuthError",
    # challenges
    "Challenge", "parse_www_authenticate", "auth_challenge", "build_challenge",
    # documents
    "ProtectedResourceMetadata", "AuthorizationServerMetadata", "ClientInformation", "TokenResponse",
    "protected_resource_metadata_urls", "authorization_server_metadata_urls",
    # client: grants, signers, credentials
    "Grant", "AuthorizationCode", "ClientCredentials", "JwtBearer", "EnterpriseManaged",
    "ProofSigner", "AssertionSigner", "Credentials",
    # client: the flow and its steps
    "AuthorizationFlow", "FlowState", "FLOW", "Step", "Fetch", "NeedCredentials", "Authorize", "Authorized",
    "HttpCall", "HttpReply", "pkce_challenge", "token_hash", "select_scopes",
    # client: one server's authorization state
    "ClientAuth", "check_endpoint",
    # resource server
    "ResourceServer", "AccessToken", "PresentedToken", "ResourceReply",
]  # fmt: skip
