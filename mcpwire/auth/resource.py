"""The resource server half: what an MCP server publishes, how it challenges, what it requires.

Owns, server side (specification: Basic > Authorization, Authorization Server Location, Access
Token Usage, Error Handling, Scope Challenge Handling; RFC 9728; RFC 6750 section 3; RFC 9449
section 7):

- the protected resource metadata document and the well-known path it is served at (the
  path-inserted one, RFC 9728 section 3.1);
- reading the ``Authorization`` header (``Bearer`` or ``DPoP``; a token in the query or the
  body is not accepted, RFC 6750 section 2);
- the 401 answer with ``WWW-Authenticate`` carrying ``resource_metadata`` (and ``scope``), the
  403 ``insufficient_scope`` answer naming every scope the request needs;
- the scopes a request needs: the server-wide ones, plus the tool's own for ``tools/call``.

Verifying a token (a JWT against the issuer's keys, or RFC 7662 introspection) is I/O and
crypto, so it is the host's: a verifier returns an :class:`AccessToken` or raises
:class:`AuthError`; :meth:`ResourceServer.check` then decides.
"""

from __future__ import annotations

import json

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import msgspec

from .challenge import build_challenge
from .errors import AuthError
from .metadata import PRM_WELL_KNOWN, ProtectedResourceMetadata, check_endpoint

__all__ = ["AccessToken", "PresentedToken", "ResourceReply", "ResourceServer"]

# Reasons that are "the token is no good" (401 invalid_token) rather than a bad request.
_INVALID = {"invalid_token", "expired", "wrong_audience", "wrong_issuer", "invalid_dpop_proof", "use_dpop_nonce"}


class AccessToken(msgspec.Struct, frozen=True, kw_only=True):
    """A verified access token: the principal that reaches handlers.

    ``jkt`` is the thumbprint of the key the token is bound to (``cnf.jkt``, RFC 9449 section 6),
    None for a bearer token. ``claims`` keeps everything the verifier saw.
    """

    subject: str | None = None
    client_id: str | None = None
    scopes: tuple[str, ...] = ()
    issuer: str | None = None
    audience: tuple[str, ...] = ()
    expires_at: float | None = None
    jkt: str | None = None
    claims: dict[str, Any] = {}

    @property
    def principal(self) -> str:
        """Who the token speaks for, as one opaque string (issuer, subject and client id): what
        the engine binds tasks to (``HttpRequest.principal``)."""
        return json.dumps([self.issuer, self.subject, self.client_id], separators=(",", ":"))


class PresentedToken(msgspec.Struct, frozen=True, kw_only=True):
    """What the request presented: the scheme (``bearer`` or ``dpop``), the token, the DPoP proof."""

    scheme: Literal["bearer", "dpop"]
    token: str
    proof: str | None = None


class ResourceReply(msgspec.Struct, frozen=True, kw_only=True):
    """An answer the host sends instead of handing the request to the engine."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes


class _Peek(msgspec.Struct):
    method: str = ""
    params: dict[str, Any] = {}


_PEEK = msgspec.json.Decoder(_Peek)


class ResourceServer:
    """An MCP server as an OAuth protected resource.

    ``resource`` is the server's canonical URL (the MCP endpoint, e.g.
    ``https://mcp.example.com/mcp``): tokens must be issued for it. ``required_scopes`` are
    needed for every request; ``tool_scopes`` adds per tool name. ``dpop`` is ``"allowed"``
    (bearer or DPoP-bound tokens), ``"required"`` (DPoP only) or ``"off"`` (bearer only).
    """

    def __init__(
        self,
        *,
        resource: str,
        authorization_servers: Sequence[str],
        scopes_supported: Sequence[str] | None = None,
        required_scopes: Sequence[str] = (),
        tool_scopes: Mapping[str, Sequence[str]] | None = None,
        resource_name: str | None = None,
        dpop: Literal["off", "allowed", "required"] = "allowed",
        dpop_algorithms: Sequence[str] = ("ES256", "RS256", "EdDSA", "PS256"),
        allow_http: bool = False,
    ) -> None:
        check_endpoint(resource, "the resource", allow_http=allow_http)
        for issuer in authorization_servers:
            check_endpoint(issuer, "an authorization server", allow_http=allow_http)
        self.resource = resource
        self.required_scopes = tuple(required_scopes)
        self.tool_scopes = {name: tuple(scopes) for name, scopes in (tool_scopes or {}).items()}
        self.dpop = dpop
        parts = urlsplit(resource)
        self.path = parts.path or "/"
        self.metadata_path = PRM_WELL_KNOWN + parts.path.rstrip("/")
        self.metadata_url = urlunsplit((parts.scheme, parts.netloc, self.metadata_path, "", ""))
        if scopes_supported is None:
            everything = [*self.required_scopes, *(s for scopes in self.tool_scopes.values() for s in scopes)]
            scopes_supported = list(dict.fromkeys(everything)) or None
        self.metadata = ProtectedResourceMetadata(
            resource=resource, authorization_servers=list(authorization_servers),
            scopes_supported=list(scopes_supported) if scopes_supported is not None else None,
            bearer_methods_supported=["header"], resource_name=resource_name,
            dpop_signing_alg_values_supported=list(dpop_algorithms) if dpop != "off" else None,
            dpop_bound_access_tokens_required=dpop == "required",
        )
        self._metadata_body = msgspec.json.encode(self.metadata)

    # -- what the server publishes -----------------------------------------------------------------
    def is_metadata_request(self, method: str, target: str) -> bool:
        return method in ("GET", "HEAD") and urlsplit(target).path == self.metadata_path

    def metadata_reply(self) -> ResourceReply:
        """The protected resource metadata (RFC 9728 section 3.2), cacheable for an hour."""
        return ResourceReply(status=200, body=self._metadata_body, headers=(
            ("content-type", "application/json"), ("cache-control", "public, max-age=3600")))

    # -- what a request presents -------------------------------------------------------------------
    def presented(self, headers: Iterable[tuple[str, str]]) -> PresentedToken | None:
        """The token in the ``Authorization`` header, or None when there is none. Several
        ``Authorization`` or ``DPoP`` fields, or a malformed one, are :class:`AuthError`."""
        authorization = [v for k, v in headers if k.lower() == "authorization"]
        proofs = [v for k, v in headers if k.lower() == "dpop"]
        if not authorization:
            return None
        if len(authorization) > 1 or len(proofs) > 1:
            raise AuthError("invalid_token", "more than one Authorization or DPoP header")
        scheme, _, token = authorization[0].strip().partition(" ")
        token = token.strip()
        kind = scheme.lower()
        if kind not in ("bearer", "dpop") or not token or " " in token:
            raise AuthError("invalid_token", "the Authorization header is not 'Bearer <token>' or 'DPoP <token>'")
        if kind == "dpop" and not proofs:
            raise AuthError("invalid_dpop_proof", "a DPoP token without a DPoP proof")
        return PresentedToken(scheme="dpop" if kind == "dpop" else "bearer", token=token, proof=proofs[0] if proofs else None)

    def required_for(self, body: bytes) -> tuple[str, ...]:
        """The scopes a request body needs: ``required_scopes``, plus the tool's for ``tools/call``.
        A body that does not decode needs the server-wide ones; the engine answers it."""
        if not self.tool_scopes:
            return self.required_scopes
        try:
            peek = _PEEK.decode(body)
        except msgspec.DecodeError:
            return self.required_scopes
        name = peek.params.get("name") if peek.method == "tools/call" else None
        extra = self.tool_scopes.get(name, ()) if isinstance(name, str) else ()
        return tuple(dict.fromkeys([*self.required_scopes, *extra]))

    # -- the decision --------------------------------------------------------------------------------
    def check(self, presented: PresentedToken, token: AccessToken, required: Sequence[str]) -> ResourceReply | None:
        """None when ``token`` (verified from ``presented``) may make a request needing
        ``required``; else the 401 or 403 to send. Binding: a DPoP-bound token must come with
        the DPoP scheme (its proof is the verifier's to check), a bearer token must not."""
        if token.jkt is not None and presented.scheme != "dpop":
            return self.unauthorized("invalid_token", "a DPoP-bound token presented as a bearer token")
        if token.jkt is None and presented.scheme == "dpop":
            return self.unauthorized("invalid_token", "the token is not DPoP-bound")
        if token.jkt is None and self.dpop == "required":
            return self.unauthorized("invalid_token", "this server requires DPoP-bound tokens")
        if token.jkt is not None and self.dpop == "off":
            return self.unauthorized("invalid_token", "this server does not accept DPoP")
        missing = [s for s in required if s not in token.scopes]
        if missing:
            return self.insufficient_scope(required)
        return None

    def refuse(self, error: AuthError, required: Sequence[str] = ()) -> ResourceReply:
        """The answer for a verifier's (or :meth:`presented`'s) refusal."""
        if error.reason == "insufficient_scope":
            return self.insufficient_scope(required)
        return self.unauthorized("invalid_token" if error.reason in _INVALID else "invalid_request", error.message,
                                 nonce_error=error.reason == "use_dpop_nonce")

    def _challenges(self, params: dict[str, str | None]) -> tuple[tuple[str, str], ...]:
        schemes = {"off": ("Bearer",), "allowed": ("Bearer", "DPoP"), "required": ("DPoP",)}[self.dpop]
        out = []
        for scheme in schemes:
            extra = {"algs": " ".join(self.metadata.dpop_signing_alg_values_supported or ())} if scheme == "DPoP" else {}
            out.append(("www-authenticate", build_challenge(scheme, {**params, **extra})))
        return tuple(out)

    def unauthorized(self, error: str | None = None, description: str | None = None, *,
                     nonce_error: bool = False) -> ResourceReply:
        """401 with a challenge naming ``resource_metadata`` and the server-wide ``scope``
        (RFC 6750 section 3; RFC 9728 section 5.1). No ``error`` when no token was presented."""
        scope = " ".join(self.required_scopes) or None
        params: dict[str, str | None] = {"error": "use_dpop_nonce" if nonce_error else error,
                                         "error_description": description, "scope": scope,
                                         "resource_metadata": self.metadata_url}
        body = msgspec.json.encode({"error": error or "unauthorized", **({"error_description": description} if description else {})})
        return ResourceReply(status=401, body=body, headers=(("content-type", "application/json"), *self._challenges(params)))

    def insufficient_scope(self, required: Sequence[str]) -> ResourceReply:
        """403 ``insufficient_scope`` naming every scope the request needs (the client requests
        their union with what it holds)."""
        scope = " ".join(required)
        params: dict[str, str | None] = {"error": "insufficient_scope", "scope": scope,
                                         "resource_metadata": self.metadata_url,
                                         "error_description": f"this request needs the scopes: {scope}"}
        body = msgspec.json.encode({"error": "insufficient_scope", "error_description": f"this request needs the scopes: {scope}"})
        return ResourceReply(status=403, body=body, headers=(("content-type", "application/json"), *self._challenges(params)))
