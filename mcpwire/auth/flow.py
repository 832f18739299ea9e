"""The sans-IO authorization flow of an MCP client: from a challenge to credentials.

Owns the client half of Basic > Authorization: protected resource discovery, authorization
server discovery, the choice of client identity, the authorization request with PKCE S256 and
the resource indicator (RFC 8707), the authorization response checks (``state``; RFC 9207
``iss``), the token request with its client authentication, refresh, the extension grants,
scope selection, and DPoP proofs on token requests (RFC 9449 section 5, with the server nonce of
RFC 9449 section 8).

The flow sends nothing: each input verb returns the next :class:`Step` for the host, and the
state table (``states.py``) says which verb is legal when:

    flow = AuthorizationFlow(server_url, grant=AuthorizationCode(redirect_uri=...),
                             challenge=challenge, random=os.urandom)
    step = flow.start(now=time())
    while not isinstance(step, Authorized):
        if isinstance(step, Fetch):          # send step.request, then
            step = flow.receive_response(reply, now=time())
        elif isinstance(step, NeedCredentials):  # look in the store for (issuer, resource)
            step = flow.receive_credentials(client=..., stored=..., now=time())
        elif isinstance(step, Authorize):    # send the user agent to step.url, then
            step = flow.receive_redirect(callback_url, now=time())
    store(step.credentials)

A refusal raises :class:`AuthError` and leaves the flow FAILED; nothing the refused step
produced is returned, so nothing can be stored or sent on.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Iterable, Sequence
from typing import Final
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import msgspec

from .challenge import Challenge
from .errors import AuthError
from .grants import (
    AssertionSigner, AuthorizationCode, ClientCredentials, Credentials, EnterpriseManaged, Grant, JwtBearer, ProofSigner,
)
from .metadata import (
    AuthorizationServerMetadata, ClientInformation, ProtectedResourceMetadata, authorization_server_metadata_urls,
    check_endpoint, decode_authorization_server_metadata, decode_client_information, decode_oauth_error,
    decode_protected_resource_metadata, decode_token_response, protected_resource_metadata_urls,
)
from .states import FLOW, FlowState
from ..wire.statemachine import StateMachine

__all__ = [
    "AuthorizationFlow", "HttpCall", "HttpReply", "Step", "Fetch", "NeedCredentials", "Authorize", "Authorized",
    "pkce_challenge", "select_scopes",
]

JWT_BEARER: Final = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE: Final = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG: Final = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN: Final = "urn:ietf:params:oauth:token-type:id_token"
CLIENT_ASSERTION_TYPE: Final = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
OFFLINE_ACCESS: Final = "offline_access"
_FORM: Final = ("content-type", "application/x-www-form-urlencoded")
_JSON_ACCEPT: Final = ("accept", "application/json")


class HttpCall(msgspec.Struct, frozen=True, kw_only=True):
    """An HTTP request for the host to send. Redirects must not be followed."""

    method: str
    url: str
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""


class HttpReply(msgspec.Struct, frozen=True, kw_only=True):
    """What came back for an :class:`HttpCall`: status, headers (any case), the whole body."""

    status: int
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""

    def header(self, name: str) -> str | None:
        name = name.lower()
        return next((v for k, v in self.headers if k.lower() == name), None)


class Fetch(msgspec.Struct, frozen=True, kw_only=True):
    """Send ``request``; then call :meth:`AuthorizationFlow.receive_response`."""

    request: HttpCall


class NeedCredentials(msgspec.Struct, frozen=True, kw_only=True):
    """Discovery is done. Look up what the host holds for ``issuer`` (a registered or
    pre-registered client) and for (``issuer``, ``resource``) (stored credentials); then call
    :meth:`AuthorizationFlow.receive_credentials`."""

    issuer: str
    resource: str
    metadata: AuthorizationServerMetadata
    resource_metadata: ProtectedResourceMetadata


class Authorize(msgspec.Struct, frozen=True, kw_only=True):
    """Send the user agent to ``url``; when it comes back to ``redirect_uri``, call
    :meth:`AuthorizationFlow.receive_redirect` with the full callback URL."""

    url: str
    redirect_uri: str
    state: str


class Authorized(msgspec.Struct, frozen=True, kw_only=True):
    """Done: ``credentials`` are for ``credentials.resource`` only; store them and retry."""

    credentials: Credentials
    registered: bool = False  # the client was registered in this flow (worth storing per issuer)


Step = Fetch | NeedCredentials | Authorize | Authorized


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def pkce_challenge(verifier: str) -> str:
    """The S256 code challenge of a code verifier (RFC 7636 section 4.2)."""
    return _b64url(hashlib.sha256(verifier.encode("ascii")).digest())


def token_hash(access_token: str) -> str:
    """The ``ath`` of a DPoP proof: base64url SHA-256 of the access token (RFC 9449 section 4.2)."""
    return _b64url(hashlib.sha256(access_token.encode("ascii")).digest())


def select_scopes(challenge_scopes: Sequence[str] | None, scopes_supported: Sequence[str] | None,
                  previous: Iterable[str] = ()) -> tuple[str, ...] | None:
    """The scopes to request (specification: Authorization, Scope Selection Strategy): the
    challenge's ``scope``, else the resource's ``scopes_supported``, else none (the parameter is
    omitted); on a step-up, united with what was requested before, in first-seen order."""
    base = challenge_scopes if challenge_scopes is not None else scopes_supported
    merged = list(dict.fromkeys([*previous, *(base or ())]))
    return tuple(merged) if merged else None


def _form(fields: dict[str, str | None]) -> bytes:
    return urlencode({k: v for k, v in fields.items() if v is not None}).encode("ascii")


def _describe(reply: HttpReply) -> tuple[str, str | None]:
    error = decode_oauth_error(reply.body) if reply.body else None
    if error is None:
        return f"HTTP {reply.status}", None
    detail = f": {error.error_description[:300]}" if error.error_description else ""
    return f"HTTP {reply.status} {error.error}{detail}", error.error


class AuthorizationFlow:
    """One authorization attempt for the MCP server at ``server_url``.

    ``challenge`` is the Bearer/DPoP challenge of the 401 or 403 that started it (None to
    authorize up front); ``previous_scopes`` are the scopes requested before (a step-up unites
    them with the challenge's). ``random(n)`` returns ``n`` unpredictable bytes (PKCE verifier,
    ``state``, JWT ids); ``dpop`` signs DPoP proofs when the authorization server supports the
    signer's algorithm; ``client_assertion`` signs ``private_key_jwt`` client assertions.
    ``rejected_token`` is the access token the server just refused: never returned again.
    ``allow_http`` permits plain-http endpoints off loopback (tests only).
    """

    machine: StateMachine[FlowState] = FLOW

    def __init__(
        self,
        server_url: str,
        *,
        grant: Grant,
        random: Callable[[int], bytes],
        challenge: Challenge | None = None,
        previous_scopes: Iterable[str] = (),
        scopes: Sequence[str] | None = None,
        dpop: ProofSigner | None = None,
        client_assertion: AssertionSigner | None = None,
        rejected_token: str | None = None,
        allow_http: bool = False,
    ) -> None:
        check_endpoint(server_url, "the MCP server URL", allow_http=allow_http)
        self.server_url = server_url
        self.grant = grant
        self.challenge = challenge
        self.previous_scopes = tuple(previous_scopes)
        self.scopes_override = tuple(scopes) if scopes is not None else None
        self.dpop = dpop
        self.client_assertion = client_assertion
        self.rejected_token = rejected_token
        self.allow_http = allow_http
        self._random = random
        self.state = self.machine.initial
        self._candidates: list[str] = []
        self.resource_metadata: ProtectedResourceMetadata | None = None
        self.metadata: AuthorizationServerMetadata | None = None
        self.issuer = ""
        self.resource = ""
        self.scopes: tuple[str, ...] | None = None
        self.client: ClientInformation | None = None
        self._registered = False
        self._stored: Credentials | None = None
        self._verifier = ""
        self._state_value = ""
        self._token_fields: dict[str, str | None] = {}
        self._token_kind = ""  # "grant" or "refresh"
        self._nonce_retried = False
        self._use_dpop = False
        self._id_jag = ""

    # -- plumbing -----------------------------------------------------------------------------------
    def _move(self, verb: str) -> None:
        self.state = self.machine.move(self.state, verb)

    def _fail(self, error: AuthError) -> AuthError:
        self.state = self.machine.move(self.state, "fail")
        return error

    def _random_text(self, n: int = 32) -> str:
        data = self._random(n)
        if len(data) < n:
            raise ValueError(f"random({n}) returned {len(data)} bytes")
        return _b64url(data)

    def _get(self, url: str) -> Fetch:
        return Fetch(request=HttpCall(method="GET", url=url, headers=(_JSON_ACCEPT,)))

    # -- verbs ----------------------------------------------------------------------------------------
    def start(self, *, now: float) -> Step:
        """Begin with protected resource discovery: returns a :class:`Fetch`."""
        self._move("start")
        hinted = self.challenge.resource_metadata if self.challenge is not None else None
        if hinted is not None:
            try:
                check_endpoint(hinted, "resource_metadata", allow_http=self.allow_http)
            except AuthError as exc:
                raise self._fail(AuthError("malformed_challenge", exc.message)) from None
            if urlsplit(hinted).netloc.lower() != urlsplit(self.server_url).netloc.lower():
                raise self._fail(AuthError("malformed_challenge",
                                           f"resource_metadata {hinted[:200]!r} is not on the server's origin"))
        self._candidates = protected_resource_metadata_urls(self.server_url, hinted)
        return self._get(self._candidates.pop(0))

    def receive_response(self, reply: HttpReply, *, now: float) -> Step:
        """The reply to the last :class:`Fetch`. Returns the next step; raises :class:`AuthError`."""
        try:
            if self.state is FlowState.RESOURCE_METADATA:
                return self._on_resource_metadata(reply)
            if self.state is FlowState.SERVER_METADATA:
                return self._on_server_metadata(reply)
            if self.state is FlowState.REGISTER:
                return self._on_registration(reply, now)
            if self.state is FlowState.EXCHANGE:
                return self._on_exchange(reply, now)
            if self.state is FlowState.TOKEN:
                return self._on_token(reply, now)
        except AuthError as exc:
            raise self._fail(exc) from None
        self.machine.move(self.state, "response")  # raises LocalProtocolError: no fetch is out
        raise AssertionError("unreachable")  # pragma: no cover

    def receive_credentials(self, *, client: ClientInformation | None, stored: Credentials | None, now: float) -> Step:
        """Answer :class:`NeedCredentials`: the client the host holds for the issuer (or None)
        and the credentials it stored for (issuer, resource) (or None)."""
        if self.state is not FlowState.CREDENTIALS:
            self.machine.move(self.state, "credentials")
        assert self.metadata is not None
        if stored is not None and (stored.issuer != self.issuer or stored.resource != self.resource):
            stored = None  # never reuse what was issued by another server or for another resource
        if stored is not None and stored.dpop_jkt is not None and (self.dpop is None or self.dpop.thumbprint != stored.dpop_jkt):
            stored = None  # bound to a key we no longer hold
        self.client = client or (stored.client if stored is not None else None)
        wanted = set(self.scopes or ())
        if (stored is not None and stored.access_token != self.rejected_token and not stored.expired(now)
                and wanted <= set(stored.scopes)):
            self._move("stored_token")
            return Authorized(credentials=stored)
        try:
            if stored is not None and stored.refresh_token and self.client is not None and wanted <= set(stored.scopes) | {OFFLINE_ACCESS}:
                self._stored = stored
                self._move("refresh")
                return self._token_request("refresh", {
                    "grant_type": "refresh_token", "refresh_token": stored.refresh_token, "resource": self.resource,
                }, now)
            return self._begin_grant(now)
        except AuthError as exc:
            raise self._fail(exc) from None

    def receive_redirect(self, callback_url: str, *, now: float) -> Step:
        """The URL the user agent was sent back to (the authorization response, RFC 6749
        section 4.1.2, with RFC 9207 ``iss``). Checks ``state`` and ``iss`` before anything."""
        self._move("redirect")
        try:
            return self._on_redirect(callback_url, now)
        except AuthError as exc:
            raise self._fail(exc) from None

    # -- discovery ----------------------------------------------------------------------------------
    def _on_resource_metadata(self, reply: HttpReply) -> Step:
        if reply.status != 200:
            if not self._candidates:
                raise AuthError("no_metadata", f"no protected resource metadata for {self.server_url} (last: HTTP {reply.status})",
                                status=reply.status)
            self._move("try_next")
            return self._get(self._candidates.pop(0))
        prm = decode_protected_resource_metadata(reply.body, server_url=self.server_url, allow_http=self.allow_http)
        self.resource_metadata, self.resource = prm, prm.resource
        self.issuer = prm.authorization_servers[0]
        self._candidates = authorization_server_metadata_urls(self.issuer)
        self._move("found")
        return self._get(self._candidates.pop(0))

    def _on_server_metadata(self, reply: HttpReply) -> Step:
        if reply.status != 200:
            if not self._candidates:
                raise AuthError("no_metadata", f"no authorization server metadata for issuer {self.issuer} (last: HTTP {reply.status})",
                                status=reply.status)
            self._move("try_next")
            return self._get(self._candidates.pop(0))
        meta = decode_authorization_server_metadata(reply.body, issuer=self.issuer, allow_http=self.allow_http)
        if meta.token_endpoint is None:
            raise AuthError("malformed_metadata", f"issuer {self.issuer} has no token_endpoint")
        if isinstance(self.grant, AuthorizationCode):
            if meta.authorization_endpoint is None:
                raise AuthError("malformed_metadata", f"issuer {self.issuer} has no authorization_endpoint")
            # Basic > Authorization, Authorization Code Protection: no advertised S256, no flow.
            if "S256" not in (meta.code_challenge_methods_supported or ()):
                raise AuthError("pkce_unsupported", f"issuer {self.issuer} does not advertise PKCE S256")
        self.metadata = meta
        prm = self.resource_metadata
        assert prm is not None
        challenged = self.challenge.scopes if self.challenge is not None else None
        self.scopes = self.scopes_override or select_scopes(challenged, prm.scopes_supported, self.previous_scopes)
        if (isinstance(self.grant, AuthorizationCode) and self.grant.offline_access
                and OFFLINE_ACCESS in (meta.scopes_supported or ()) and OFFLINE_ACCESS not in (self.scopes or ())):
            self.scopes = (*(self.scopes or ()), OFFLINE_ACCESS)  # SEP-2207: only when advertised
        algs = meta.dpop_signing_alg_values_supported or ()
        self._use_dpop = self.dpop is not None and self.dpop.algorithm in algs
        self._move("found")
        return NeedCredentials(issuer=self.issuer, resource=self.resource, metadata=meta, resource_metadata=prm)

    # -- client identity and grants -----------------------------------------------------------------
    def _begin_grant(self, now: float) -> Step:
        meta, grant = self.metadata, self.grant
        assert meta is not None
        if isinstance(grant, AuthorizationCode):
            if self.client is None and grant.client_metadata_url is not None and meta.client_id_metadata_document_supported:
                self.client = ClientInformation(client_id=grant.client_metadata_url, token_endpoint_auth_method=(
                    "private_key_jwt" if self.client_assertion is not None else "none"))
            if self.client is None:
                if meta.registration_endpoint is None:
                    raise AuthError("no_client", f"no client for issuer {self.issuer}: no pre-registered client, "
                                    "no client ID metadata document support and no registration endpoint")
                self._move("register")
                return self._registration_request(grant, meta.registration_endpoint)
            self._move("authorize")
            return self._authorization_request()
        if isinstance(grant, EnterpriseManaged):
            if self.client is None:
                raise AuthError("no_client", f"no client for issuer {self.issuer}")
            self._move("exchange")
            fields = {
                "grant_type": TOKEN_EXCHANGE, "requested_token_type": ID_JAG, "subject_token": grant.id_token,
                "subject_token_type": ID_TOKEN, "audience": self.issuer, "resource": self.resource,
                "scope": " ".join(self.scopes) if self.scopes else None, "client_id": grant.idp_client_id,
                "client_secret": grant.idp_client_secret,
            }
            url = check_endpoint(grant.idp_token_endpoint, "the identity provider's token endpoint", allow_http=self.allow_http)
            return Fetch(request=HttpCall(method="POST", url=url, headers=(_FORM, _JSON_ACCEPT), body=_form(fields)))
        if self.client is None and isinstance(grant, ClientCredentials):
            raise AuthError("no_client", f"no client credentials for issuer {self.issuer}")
        self._move("request_token")
        return self._grant_token_request(now)

    def _registration_request(self, grant: AuthorizationCode, endpoint: str) -> Fetch:
        assert self.metadata is not None
        supported = self.metadata.token_endpoint_auth_methods_supported
        method = grant.registration_auth_method
        if method is None:
            prefer: tuple[str, ...] = ("private_key_jwt",) if self.client_assertion is not None else ()
            prefer += ("none", "client_secret_basic", "client_secret_post")
            method = next((m for m in prefer if supported is None or m in supported), "client_secret_basic")
        body = {
            "client_name": grant.client_name,
            "redirect_uris": [grant.redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
            "application_type": grant.application_type,
        }
        if self.scopes:
            body["scope"] = " ".join(self.scopes)
        return Fetch(request=HttpCall(method="POST", url=endpoint, body=msgspec.json.encode(body),
                                      headers=(("content-type", "application/json"), _JSON_ACCEPT)))

    def _on_registration(self, reply: HttpReply, now: float) -> Step:
        if reply.status not in (200, 201):
            why, code = _describe(reply)
            raise AuthError("registration_failed", f"registration at {self.issuer} refused: {why}", status=reply.status,
                            oauth_error=code)
        self.client = decode_client_information(reply.body)
        self._registered = True
        assert isinstance(self.grant, AuthorizationCode)
        self._move("authorize")
        return self._authorization_request()

    def _authorization_request(self) -> Authorize:
        grant, meta, client = self.grant, self.metadata, self.client
        assert isinstance(grant, AuthorizationCode) and meta is not None and client is not None
        assert meta.authorization_endpoint is not None
        self._verifier = self._random_text(32)
        self._state_value = self._random_text(32)
        query = {
            "response_type": "code", "client_id": client.client_id, "redirect_uri": grant.redirect_uri,
            "state": self._state_value, "code_challenge": pkce_challenge(self._verifier),
            "code_challenge_method": "S256", "resource": self.resource,
            "scope": " ".join(self.scopes) if self.scopes else None,
        }
        parts = urlsplit(meta.authorization_endpoint)
        extra = urlencode({k: v for k, v in query.items() if v is not None}, quote_via=quote)
        url = urlunsplit((parts.scheme, parts.netloc, parts.path, f"{parts.query}&{extra}" if parts.query else extra, ""))
        return Authorize(url=url, redirect_uri=grant.redirect_uri, state=self._state_value)

    def _on_redirect(self, callback_url: str, now: float) -> Step:
        grant, meta = self.grant, self.metadata
        assert isinstance(grant, AuthorizationCode) and meta is not None
        parts = urlsplit(callback_url)
        expected = urlsplit(grant.redirect_uri)
        if (parts.scheme, parts.netloc, parts.path) != (expected.scheme, expected.netloc, expected.path):
            raise AuthError("state_mismatch", f"the authorization response came back to {callback_url[:200]!r}, "
                            f"not the redirect URI {grant.redirect_uri!r}")
        params: dict[str, str] = {}
        for key, value in parse_qsl(parts.query, keep_blank_values=True):
            if key in params:
                raise AuthError("state_mismatch", f"the authorization response repeats {key!r}")
            params[key] = value
        if params.get("state") != self._state_value:
            raise AuthError("state_mismatch", "the authorization response's state is not the one sent")
        # RFC 9207 section 2.4: compare iss whenever present; require it when advertised.
        iss = params.get("iss")
        if iss is None and meta.authorization_response_iss_parameter_supported:
            raise AuthError("iss_missing", f"issuer {self.issuer} advertises the iss parameter but the response has none")
        if iss is not None and iss != self.issuer:
            raise AuthError("iss_mismatch", f"the authorization response is from issuer {iss[:200]!r}, not {self.issuer!r}")
        if "error" in params:
            detail = params.get("error_description")
            raise AuthError("authorization_denied", f"{params['error'][:100]}" + (f": {detail[:300]}" if detail else ""),
                            oauth_error=params["error"])
        code = params.get("code")
        if not code:
            raise AuthError("authorization_denied", "the authorization response has no code")
        return self._token_request("grant", {
            "grant_type": "authorization_code", "code": code, "redirect_uri": grant.redirect_uri,
            "code_verifier": self._verifier, "resource": self.resource,
        }, now)

    def _grant_token_request(self, now: float) -> Fetch:
        grant = self.grant
        scope = " ".join(self.scopes) if self.scopes else None
        if isinstance(grant, ClientCredentials):
            fields = {"grant_type": "client_credentials", "resource": self.resource, "scope": scope}
        elif isinstance(grant, JwtBearer):
            fields = {"grant_type": JWT_BEARER, "assertion": grant.assertion, "resource": self.resource, "scope": scope}
        else:
            assert isinstance(grant, EnterpriseManaged)
            fields = {"grant_type": JWT_BEARER, "assertion": self._id_jag, "resource": self.resource, "scope": scope}
        return self._token_request("grant", fields, now)

    def _on_exchange(self, reply: HttpReply, now: float) -> Step:
        if reply.status != 200:
            why, code = _describe(reply)
            raise AuthError("token_error", f"the identity provider refused the token exchange: {why}", status=reply.status,
                            oauth_error=code)
        answer = decode_token_response(reply.body)
        if answer.issued_token_type != ID_JAG:
            raise AuthError("malformed_token", f"the identity provider issued {answer.issued_token_type!r}, not an ID-JAG")
        self._id_jag = answer.access_token
        self._move("request_token")
        return self._grant_token_request(now)

    # -- the token endpoint ---------------------------------------------------------------------------
    def _client_auth(self, now: float) -> tuple[list[tuple[str, str]], dict[str, str | None]]:
        """Headers and form fields that authenticate the client at the token endpoint
        (OAuth 2.1, Client Authentication; RFC 7523 section 2.2 for ``private_key_jwt``)."""
        client, meta = self.client, self.metadata
        assert meta is not None
        if client is None:
            return [], {}  # a JWT bearer grant may stand alone (RFC 7523 section 3.1)
        supported = meta.token_endpoint_auth_methods_supported
        method = client.token_endpoint_auth_method
        if method is None:
            if self.client_assertion is not None and "private_key_jwt" in (supported or ()):
                method = "private_key_jwt"
            elif client.client_secret:
                method = ("client_secret_post" if supported is not None and "client_secret_basic" not in supported
                          and "client_secret_post" in supported else "client_secret_basic")
            else:
                method = "none"
        if method == "client_secret_basic" and client.client_secret:
            user = quote(client.client_id, safe="") + ":" + quote(client.client_secret, safe="")  # RFC 6749 section 2.3.1
            return [("authorization", "Basic " + base64.b64encode(user.encode()).decode("ascii"))], {}
        if method == "client_secret_post" and client.client_secret:
            return [], {"client_id": client.client_id, "client_secret": client.client_secret}
        if method == "private_key_jwt":
            if self.client_assertion is None:
                raise AuthError("no_client", f"client {client.client_id} authenticates with private_key_jwt but no signer was given")
            assertion = self.client_assertion.assertion(client_id=client.client_id, audience=self.issuer,
                                                        issued_at=int(now), jti=self._random_text(16))
            return [], {"client_id": client.client_id, "client_assertion_type": CLIENT_ASSERTION_TYPE,
                        "client_assertion": assertion}
        return [], {"client_id": client.client_id}

    def _token_request(self, kind: str, fields: dict[str, str | None], now: float, nonce: str | None = None) -> Fetch:
        assert self.metadata is not None and self.metadata.token_endpoint is not None
        self._token_kind, self._token_fields = kind, fields
        headers, auth_fields = self._client_auth(now)
        headers += [_FORM, _JSON_ACCEPT]
        if self._use_dpop:
            assert self.dpop is not None
            proof = self.dpop.proof(method="POST", url=self.metadata.token_endpoint, issued_at=int(now),
                                    jti=self._random_text(16), nonce=nonce)
            headers.append(("dpop", proof))
        return Fetch(request=HttpCall(method="POST", url=self.metadata.token_endpoint, headers=tuple(headers),
                                      body=_form({**fields, **auth_fields})))

    def _on_token(self, reply: HttpReply, now: float) -> Step:
        if reply.status != 200:
            why, code = _describe(reply)
            nonce = reply.header("dpop-nonce")
            if code == "use_dpop_nonce" and nonce and self._use_dpop and not self._nonce_retried:
                self._nonce_retried = True  # RFC 9449 section 8: once, with the server's nonce
                self._move("retry_with_nonce")
                return self._token_request(self._token_kind, self._token_fields, now, nonce=nonce)
            if self._token_kind == "refresh":
                # A refused refresh token is dropped, and the grant runs again from the start.
                self._stored, self._nonce_retried = None, False
                if isinstance(self.grant, AuthorizationCode):
                    self._move("refresh_refused")
                    return self._authorization_request()
                self._move("refresh_refused_grant")
                if isinstance(self.grant, EnterpriseManaged):
                    raise AuthError("token_error", f"the refresh token was refused: {why}", status=reply.status, oauth_error=code)
                return self._grant_token_request(now)
            raise AuthError("token_error", f"the token endpoint of {self.issuer} refused: {why}", status=reply.status,
                            oauth_error=code)
        answer = decode_token_response(reply.body)
        bound = answer.token_type.lower() == "dpop"
        if bound and not self._use_dpop:
            raise AuthError("malformed_token", "the server issued a DPoP-bound token without a DPoP proof")
        refresh = answer.refresh_token or (self._stored.refresh_token if self._stored is not None else None)
        expires_at = now + float(answer.expires_in) if answer.expires_in is not None else None
        scopes = self.scopes or (self._stored.scopes if self._stored is not None else ())
        credentials = Credentials(
            issuer=self.issuer, resource=self.resource, client=self.client, access_token=answer.access_token,
            token_type="DPoP" if bound else "Bearer", expires_at=expires_at, refresh_token=refresh,
            scopes=tuple(scopes or ()), granted_scope=answer.scope,
            dpop_jkt=self.dpop.thumbprint if bound and self.dpop is not None else None,
        )
        self._move("tokens")
        return Authorized(credentials=credentials, registered=self._registered)
