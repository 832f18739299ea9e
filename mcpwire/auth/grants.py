"""What the flow is asked to obtain, and the host-supplied signers it calls.

Owns the grant descriptions (specification: Basic > Authorization; the extensions
``io.modelcontextprotocol/oauth-client-credentials`` (SEP-1046),
``io.modelcontextprotocol/enterprise-managed-authorization`` (SEP-990) and
``io.modelcontextprotocol/auth/wif`` (SEP-1933)), the credentials a flow returns, and the two
signing interfaces. mcpwire signs nothing itself: a :class:`ProofSigner` (DPoP, RFC 9449) and
an :class:`AssertionSigner` (``private_key_jwt``, RFC 7523) come from the host; the ones in
``mcpwire_adapters.oauth.jose`` use joserfc (``pip install 'mcpwire[oauth]'``).
"""

from __future__ import annotations

from typing import Literal, Protocol, Union

import msgspec

from .metadata import ClientInformation

__all__ = [
    "AuthorizationCode", "ClientCredentials", "JwtBearer", "EnterpriseManaged", "Grant",
    "Credentials", "ProofSigner", "AssertionSigner",
]


class AuthorizationCode(msgspec.Struct, frozen=True, kw_only=True):
    """The authorization code grant with PKCE S256 (RFC 7636; OAuth 2.1, Authorization Code Grant), for a user.

    The client's identity at an authorization server is, in order: what the host holds for
    that issuer (pre-registered or stored), the client ID metadata document at
    ``client_metadata_url`` when the server supports those, else dynamic registration with
    ``client_name``, ``redirect_uri`` and ``application_type``. ``offline_access`` asks for a
    refresh token when the server lists that scope.
    """

    redirect_uri: str
    client_metadata_url: str | None = None
    client_name: str = "mcpwire"
    application_type: Literal["native", "web"] = "native"
    offline_access: bool = True
    registration_auth_method: str | None = None  # None: choose from token_endpoint_auth_methods_supported


class ClientCredentials(msgspec.Struct, frozen=True, kw_only=True):
    """The client credentials grant (OAuth 2.1, Client Credentials Grant): a machine acting for itself, with
    the client the host holds for the issuer (secret or ``private_key_jwt``)."""


class JwtBearer(msgspec.Struct, frozen=True, kw_only=True):
    """The JWT bearer grant (RFC 7523 section 2.1) with a workload identity token as the
    assertion (workload identity federation). A refusal is final: no retry, no other grant."""

    assertion: str


class EnterpriseManaged(msgspec.Struct, frozen=True, kw_only=True):
    """Enterprise-managed authorization: exchange the user's ID token at the enterprise
    identity provider for an identity assertion grant (RFC 8693, ``id-jag``), then present it
    to the authorization server as a JWT bearer grant (RFC 7523)."""

    idp_token_endpoint: str
    id_token: str
    idp_client_id: str
    idp_client_secret: str | None = None


Grant = Union[AuthorizationCode, ClientCredentials, JwtBearer, EnterpriseManaged]


class Credentials(msgspec.Struct, frozen=True, kw_only=True):
    """What a finished flow returns and a token store keeps, keyed by (issuer, resource).

    ``scopes`` are the scopes that were requested; ``granted_scope`` is what the server said
    it granted, if it said. ``dpop_jkt`` is the thumbprint of the key the token is bound to
    (``token_type`` DPoP), None for a bearer token.
    """

    issuer: str
    resource: str
    client: ClientInformation | None = None
    access_token: str
    token_type: str = "Bearer"
    expires_at: float | None = None
    refresh_token: str | None = None
    scopes: tuple[str, ...] = ()
    granted_scope: str | None = None
    dpop_jkt: str | None = None

    def expired(self, now: float, *, leeway: float = 30.0) -> bool:
        return self.expires_at is not None and now >= self.expires_at - leeway


class ProofSigner(Protocol):
    """Makes DPoP proofs (RFC 9449 section 4) with one key pair the host holds."""

    @property
    def algorithm(self) -> str: ...

    @property
    def thumbprint(self) -> str:
        """The JWK SHA-256 thumbprint of the public key (RFC 7638), the token's ``cnf.jkt``."""
        ...

    def proof(self, *, method: str, url: str, issued_at: int, jti: str, nonce: str | None = None,
              access_token_hash: str | None = None) -> str:
        """A signed ``dpop+jwt`` with ``htm``, ``htu``, ``iat``, ``jti`` and, when given,
        ``nonce`` and ``ath``; the public key in the ``jwk`` header."""
        ...


class AssertionSigner(Protocol):
    """Makes client assertions for ``private_key_jwt`` (RFC 7523 section 2.2)."""

    @property
    def algorithm(self) -> str: ...

    def assertion(self, *, client_id: str, audience: str, issued_at: int, jti: str) -> str:
        """A signed JWT with ``iss`` and ``sub`` the client id, ``aud`` the audience, ``iat``,
        ``exp`` shortly after, and ``jti``."""
        ...
