"""OAuth for MCP servers: the resource server guard every HTTP driver calls, and token verifiers.

    rs = ResourceServer(resource="https://mcp.example.com/mcp",
                        authorization_servers=["https://auth.example.com"], required_scopes=["mcp"])
    guard = OAuthResource(rs, JwtVerifier(issuer="https://auth.example.com",
                                          audience=rs.resource, jwks_url="https://auth.example.com/jwks"))
    await serve_http(app, port=8000, config=HttpServerConfig(auth=guard))   # or AsgiConfig(auth=guard)

:meth:`OAuthResource.check_http` runs before the engine sees a request: it answers the
protected resource metadata at its well-known path, refuses a request without a valid token
(401) or with too few scopes (403), and otherwise lets the request through with the verified
:class:`~mcpwire.auth.AccessToken` as the current principal: handlers read it as
``ctx.principal`` (or :func:`principal`).

Verifiers (:class:`TokenVerifier`): :class:`IntrospectionVerifier` here (RFC 7662; no crypto),
:class:`~mcpwire_adapters.oauth.jose.JwtVerifier` (a JWT against the issuer's JWKS, with
``mcpwire[oauth]``). DPoP-bound tokens are checked with a :class:`DPoPChecker`
(:class:`~mcpwire_adapters.oauth.jose.DPoPVerifier`). All network I/O uses anyio, so the same
guard serves under the trio/h11 server and any ASGI server.
"""

from __future__ import annotations

import base64
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from typing import Any, Protocol
from urllib.parse import quote, urlencode, urlsplit

import msgspec

from mcpwire import ResponseBody, ResponseHead
from mcpwire.auth import AccessToken, AuthError, HttpCall, HttpReply, ResourceReply, ResourceServer, check_endpoint

from .fetch import fetch
from ..errors import TransportError

__all__ = ["OAuthResource", "TokenVerifier", "DPoPChecker", "IntrospectionVerifier", "principal", "current_principal"]

#: The verified token of the request being handled (None without OAuth, or outside a request).
current_principal: ContextVar[AccessToken | None] = ContextVar("mcpwire_principal", default=None)


def principal() -> AccessToken | None:
    """The verified access token of the current request (see :class:`OAuthResource`)."""
    return current_principal.get()


class TokenVerifier(Protocol):
    """Turns a presented access token into an :class:`AccessToken`, or raises :class:`AuthError`
    (``invalid_token``, ``expired``, ``wrong_audience``, ``wrong_issuer``)."""

    async def verify(self, token: str) -> AccessToken: ...


class DPoPChecker(Protocol):
    """Checks a DPoP proof for a request (RFC 9449 section 4.3) and returns its ``jti``."""

    def check(self, proof: str, *, method: str, url: str, access_token: str, jkt: str, now: float) -> str: ...


Fetcher = Callable[[HttpCall], Awaitable[HttpReply]]


class OAuthResource:
    """The resource server guard (module docstring). A DPoP proof's ``htu`` is checked against
    the ``resource`` URL: the URL clients were told to use."""

    def __init__(self, server: ResourceServer, verifier: TokenVerifier, *, dpop: DPoPChecker | None = None,
                 clock: Callable[[], float] = time.time, replay_cache: int = 10_000) -> None:
        self.server = server
        self.verifier = verifier
        self.dpop = dpop
        self.clock = clock
        self._seen: OrderedDict[str, float] = OrderedDict()  # DPoP jti -> when it stops mattering
        self._replay_cache = replay_cache

    def metadata_for(self, method: str, target: str) -> tuple[ResponseHead, ResponseBody] | None:
        """The protected resource metadata when the request is for it (before any body is read)."""
        if not self.server.is_metadata_request(method, target):
            return None
        return _outputs(self.server.metadata_reply(), method)

    async def check_http(self, method: str, target: str, headers: Sequence[tuple[bytes, bytes]], body: bytes
                         ) -> tuple[ResponseHead, ResponseBody] | None:
        """An answer to send instead of asking the engine, or None to go on (with the
        principal set for this task and the tasks it starts)."""
        current_principal.set(None)
        reply = await self._decide(method, target, [(k.decode("latin-1"), v.decode("latin-1")) for k, v in headers], body)
        return None if reply is None else _outputs(reply, method)

    async def _decide(self, method: str, target: str, headers: list[tuple[str, str]], body: bytes) -> ResourceReply | None:
        rs = self.server
        if rs.is_metadata_request(method, target):
            return rs.metadata_reply()
        if urlsplit(target).path != rs.path:
            return None  # not the MCP endpoint: the engine answers (404)
        required = rs.required_for(body)
        try:
            presented = rs.presented(headers)
            if presented is None:
                return rs.unauthorized()
            token = await self.verifier.verify(presented.token)
            if token.jkt is not None and presented.scheme == "dpop":
                self._check_proof(presented.proof or "", presented.token, method, token)
        except AuthError as exc:
            return rs.refuse(exc, required)
        refusal = rs.check(presented, token, required)
        if refusal is None:
            current_principal.set(token)
        return refusal

    def _check_proof(self, proof: str, access_token: str, method: str, token: AccessToken) -> None:
        if self.dpop is None:
            raise AuthError("invalid_dpop_proof", "this server cannot check DPoP proofs")
        assert token.jkt is not None
        now = self.clock()
        jti = self.dpop.check(proof, method=method, url=self.server.resource, access_token=access_token, jkt=token.jkt, now=now)
        while self._seen and (next(iter(self._seen.values())) < now or len(self._seen) >= self._replay_cache):
            self._seen.popitem(last=False)
        if jti in self._seen:
            raise AuthError("invalid_dpop_proof", "the DPoP proof was replayed (jti seen before)")
        self._seen[jti] = now + 600  # proofs older than the checker's window are refused anyway


def _outputs(reply: ResourceReply, method: str) -> tuple[ResponseHead, ResponseBody]:
    head = ResponseHead(status=reply.status, headers=tuple((k.encode(), v.encode("latin-1")) for k, v in reply.headers))
    return head, ResponseBody(data=b"" if method == "HEAD" else reply.body)


class _Introspection(msgspec.Struct, kw_only=True):
    active: bool
    scope: str | None = None
    client_id: str | None = None
    sub: str | None = None
    exp: float | None = None
    aud: str | list[str] | None = None
    iss: str | None = None
    cnf: dict[str, Any] | None = None


class IntrospectionVerifier:
    """RFC 7662 token introspection at ``endpoint``, authenticated as ``client_id`` with
    ``client_secret`` (``client_secret_basic``). The token must be active, unexpired, issued
    by ``issuer`` (when given) and for ``audience`` (``aud`` must be present and name it)."""

    def __init__(self, *, endpoint: str, client_id: str, client_secret: str, audience: str, issuer: str | None = None,
                 fetcher: Fetcher | None = None, clock: Callable[[], float] = time.time, allow_http: bool = False) -> None:
        self.endpoint = check_endpoint(endpoint, "the introspection endpoint", allow_http=allow_http)
        user = quote(client_id, safe="") + ":" + quote(client_secret, safe="")
        self._auth = "Basic " + base64.b64encode(user.encode()).decode("ascii")
        self.audience = audience
        self.issuer = issuer
        self._fetch = fetcher or fetch
        self.clock = clock

    async def verify(self, token: str) -> AccessToken:
        call = HttpCall(method="POST", url=self.endpoint, body=urlencode({"token": token, "token_type_hint": "access_token"}).encode(),
                        headers=(("authorization", self._auth), ("content-type", "application/x-www-form-urlencoded"),
                                 ("accept", "application/json")))
        try:
            reply = await self._fetch(call)
        except TransportError as exc:
            raise AuthError("invalid_token", f"the introspection endpoint cannot be reached: {exc}") from None
        if reply.status != 200:
            raise AuthError("invalid_token", f"the introspection endpoint answered HTTP {reply.status}")
        try:
            data = msgspec.json.decode(reply.body, type=_Introspection)
        except msgspec.DecodeError:
            raise AuthError("invalid_token", "the introspection response is not valid") from None
        if not data.active:
            raise AuthError("invalid_token", "the token is not active")
        if data.exp is not None and data.exp <= self.clock():
            raise AuthError("expired", "the token has expired")
        audience = (data.aud,) if isinstance(data.aud, str) else tuple(data.aud or ())
        if self.audience not in audience:
            raise AuthError("wrong_audience", f"the token is not for {self.audience}")
        if self.issuer is not None and data.iss != self.issuer:
            raise AuthError("wrong_issuer", f"the token is not from {self.issuer}")
        jkt = data.cnf.get("jkt") if data.cnf else None
        return AccessToken(subject=data.sub, client_id=data.client_id, scopes=tuple((data.scope or "").split()),
                           issuer=data.iss, audience=audience, expires_at=data.exp,
                           jkt=jkt if isinstance(jkt, str) else None, claims=msgspec.structs.asdict(data))
