"""Discovery documents and the checks made on them.

Owns (specification: Basic > Authorization, Authorization Server Discovery):

- Protected Resource Metadata (RFC 9728): its Struct, the URLs to try in order (the
  ``resource_metadata`` of the challenge, else the path-inserted well-known URL, then the root
  one; RFC 9728 section 3.1), and the resource check: the document's ``resource`` must name our server,
  the same origin and a path prefix of the MCP endpoint (RFC 9728 section 3.3; RFC 8707 canonical URIs);
- Authorization Server Metadata (RFC 8414, with OpenID Connect Discovery 1.0 as fallback): its
  Struct, the URLs to try in the specification's order (path insertion for OAuth, then path
  insertion and path appending for OpenID Connect), and the issuer check: the ``issuer`` of the
  document is compared with the issuer the URL was built from by exact string comparison, no
  normalization (RFC 8414 section 3.3);
- Client registration (RFC 7591) and token responses (RFC 6749 section 5), each decoded into
  a Struct and checked, and the OAuth error body (RFC 6749 section 5.2).

Endpoints must be https, or http on a loopback host (``localhost``, 127.0.0.0/8, ``[::1]``):
OAuth 2.1, Communication Security; a loopback server cannot be reached by anyone else.
"""

from __future__ import annotations

from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

import msgspec

from .errors import AuthError

__all__ = [
    "ProtectedResourceMetadata", "AuthorizationServerMetadata", "ClientInformation", "TokenResponse", "OAuthErrorBody",
    "protected_resource_metadata_urls", "authorization_server_metadata_urls", "check_resource", "check_endpoint",
    "decode_protected_resource_metadata", "decode_authorization_server_metadata", "decode_client_information",
    "decode_token_response", "decode_oauth_error", "is_loopback",
]

PRM_WELL_KNOWN: Final = "/.well-known/oauth-protected-resource"
OAUTH_WELL_KNOWN: Final = "/.well-known/oauth-authorization-server"
OIDC_WELL_KNOWN: Final = "/.well-known/openid-configuration"
MAX_DOCUMENT: Final = 256 * 1024  # bytes of any one discovery document, registration or token response


class ProtectedResourceMetadata(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """RFC 9728 section 2 (the members mcpwire reads or publishes; others are ignored). Members
    left at their default are not published: an optional member is absent, never null."""

    resource: str
    authorization_servers: list[str] = []
    scopes_supported: list[str] | None = None
    bearer_methods_supported: list[str] | None = None
    resource_name: str | None = None
    resource_documentation: str | None = None
    dpop_signing_alg_values_supported: list[str] | None = None
    dpop_bound_access_tokens_required: bool = False


class AuthorizationServerMetadata(msgspec.Struct, frozen=True, kw_only=True):
    """RFC 8414 section 2, plus the members of later specifications MCP uses."""

    issuer: str
    authorization_endpoint: str | None = None
    token_endpoint: str | None = None
    registration_endpoint: str | None = None
    jwks_uri: str | None = None
    introspection_endpoint: str | None = None
    scopes_supported: list[str] | None = None
    response_types_supported: list[str] | None = None
    grant_types_supported: list[str] | None = None
    token_endpoint_auth_methods_supported: list[str] | None = None
    token_endpoint_auth_signing_alg_values_supported: list[str] | None = None
    code_challenge_methods_supported: list[str] | None = None
    authorization_response_iss_parameter_supported: bool = False  # RFC 9207 section 3
    client_id_metadata_document_supported: bool = False  # draft-ietf-oauth-client-id-metadata-document
    dpop_signing_alg_values_supported: list[str] | None = None  # RFC 9449 section 5.1


class ClientInformation(msgspec.Struct, frozen=True, kw_only=True):
    """The client's identity at one authorization server (RFC 7591 section 3.2.1)."""

    client_id: str
    client_secret: str | None = None
    token_endpoint_auth_method: str | None = None
    client_secret_expires_at: int | None = None


class TokenResponse(msgspec.Struct, frozen=True, kw_only=True):
    """RFC 6749 section 5.1 (and RFC 9449 section 5 for ``token_type`` DPoP)."""

    access_token: str
    token_type: str
    expires_in: int | float | None = None
    refresh_token: str | None = None
    scope: str | None = None
    issued_token_type: str | None = None  # RFC 8693 section 2.2.1


class OAuthErrorBody(msgspec.Struct, frozen=True, kw_only=True):
    """RFC 6749 section 5.2."""

    error: str
    error_description: str | None = None


def is_loopback(host: str | None) -> bool:
    """Whether ``host`` names this machine (``localhost``, 127.0.0.0/8 or ::1)."""
    if host is None:
        return False
    host = host.lower()
    return host == "localhost" or host.endswith(".localhost") or host == "::1" or (
        host.startswith("127.") and host.count(".") == 3 and all(p.isdigit() for p in host.split(".")))


def check_endpoint(url: str, what: str, *, allow_http: bool = False) -> str:
    """``url`` if it is an absolute https URL (http on loopback or with ``allow_http``) without a
    fragment; else :class:`AuthError` (``insecure_endpoint``, or ``malformed_metadata``)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise AuthError("malformed_metadata", f"{what} is not a URL: {url[:200]!r}") from None
    if parts.scheme not in ("https", "http") or not parts.hostname or parts.fragment:
        raise AuthError("malformed_metadata", f"{what} is not an absolute http(s) URL without fragment: {url[:200]!r}")
    if parts.scheme == "http" and not (allow_http or is_loopback(parts.hostname)):
        raise AuthError("insecure_endpoint", f"{what} must use https: {url[:200]!r}")
    return url


def protected_resource_metadata_urls(server_url: str, resource_metadata: str | None) -> list[str]:
    """Where to look for the server's metadata, in order (RFC 9728 section 3.1; specification:
    Authorization, Protected Resource Metadata Discovery Requirements)."""
    if resource_metadata is not None:
        return [resource_metadata]
    parts = urlsplit(server_url)
    path = parts.path.rstrip("/")
    urls = [urlunsplit((parts.scheme, parts.netloc, PRM_WELL_KNOWN + path, "", ""))] if path else []
    return urls + [urlunsplit((parts.scheme, parts.netloc, PRM_WELL_KNOWN, "", ""))]


def authorization_server_metadata_urls(issuer: str) -> list[str]:
    """Where to look for the issuer's metadata, in order (specification: Authorization,
    Authorization Server Metadata Discovery): with a path, OAuth path insertion, OpenID
    Connect path insertion, OpenID Connect path appending; without, the two root URLs."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")

    def at(p: str) -> str:
        return urlunsplit((parts.scheme, parts.netloc, p, "", ""))

    if path:
        return [at(OAUTH_WELL_KNOWN + path), at(OIDC_WELL_KNOWN + path), at(path + OIDC_WELL_KNOWN)]
    return [at(OAUTH_WELL_KNOWN), at(OIDC_WELL_KNOWN)]


def check_resource(server_url: str, resource: str) -> str:
    """``resource`` if it identifies the MCP server at ``server_url``: same scheme and
    authority, and its path a segment-wise prefix of the server's (a document at the root
    well-known URL may name the origin). Else :class:`AuthError` (``resource_mismatch``).
    The value is returned unchanged: it is sent as the ``resource`` parameter exactly as
    published (RFC 8707 section 2; RFC 9728 section 3.3)."""
    try:
        ours, theirs = urlsplit(server_url), urlsplit(resource)
        same_origin = (ours.scheme.lower(), ours.hostname, ours.port) == (theirs.scheme.lower(), theirs.hostname, theirs.port)
    except ValueError:
        same_origin = False
    if not same_origin or theirs.fragment or theirs.query:
        raise AuthError("resource_mismatch", f"the protected resource metadata names {resource[:200]!r}, not {server_url!r}")
    mine, named = ours.path.rstrip("/"), theirs.path.rstrip("/")
    if named and not (mine == named or mine.startswith(named + "/")):
        raise AuthError("resource_mismatch", f"the protected resource metadata names {resource[:200]!r}, not {server_url!r}")
    return resource


def _decode(body: bytes, kind: type[Any], what: str, reason: str = "malformed_metadata") -> Any:
    if len(body) > MAX_DOCUMENT:
        raise AuthError(reason, f"{what} is larger than {MAX_DOCUMENT} bytes")
    try:
        return msgspec.json.decode(body, type=kind)
    except msgspec.DecodeError as exc:  # ValidationError is a DecodeError
        raise AuthError(reason, f"{what} is not valid: {exc}") from None


def decode_protected_resource_metadata(body: bytes, *, server_url: str, allow_http: bool = False) -> ProtectedResourceMetadata:
    """Decode and check a protected resource metadata document fetched for ``server_url``."""
    prm: ProtectedResourceMetadata = _decode(body, ProtectedResourceMetadata, "the protected resource metadata")
    check_resource(server_url, prm.resource)
    if not prm.authorization_servers:
        raise AuthError("malformed_metadata", "the protected resource metadata names no authorization server")
    for issuer in prm.authorization_servers:
        check_endpoint(issuer, "an authorization server", allow_http=allow_http)
    return prm


def decode_authorization_server_metadata(body: bytes, *, issuer: str, allow_http: bool = False) -> AuthorizationServerMetadata:
    """Decode and check the metadata of ``issuer`` (exact issuer match; https endpoints)."""
    meta: AuthorizationServerMetadata = _decode(body, AuthorizationServerMetadata, "the authorization server metadata")
    if meta.issuer != issuer:
        raise AuthError("issuer_mismatch", f"the metadata fetched for issuer {issuer!r} names issuer {meta.issuer[:200]!r}")
    for name in ("authorization_endpoint", "token_endpoint", "registration_endpoint", "jwks_uri", "introspection_endpoint"):
        value = getattr(meta, name)
        if value is not None:
            check_endpoint(value, name, allow_http=allow_http)
    return meta


def decode_client_information(body: bytes) -> ClientInformation:
    info: ClientInformation = _decode(body, ClientInformation, "the client registration response", "registration_failed")
    if not info.client_id:
        raise AuthError("registration_failed", "the registration response has an empty client_id")
    return info


def decode_token_response(body: bytes) -> TokenResponse:
    tokens: TokenResponse = _decode(body, TokenResponse, "the token response", "malformed_token")
    if not tokens.access_token:
        raise AuthError("malformed_token", "the token response has an empty access_token")
    if tokens.token_type.lower() not in ("bearer", "dpop", "n_a"):
        raise AuthError("malformed_token", f"unsupported token_type {tokens.token_type[:50]!r}")
    return tokens


def decode_oauth_error(body: bytes) -> OAuthErrorBody | None:
    """The RFC 6749 error body, or None when the body is not one."""
    try:
        return msgspec.json.decode(body[:MAX_DOCUMENT], type=OAuthErrorBody)
    except msgspec.DecodeError:
        return None
