"""Signing for the OAuth client with joserfc (``pip install 'mcpwire[oauth]'``).

:class:`DPoPKey` is a :class:`~mcpwire.auth.ProofSigner` (RFC 9449 section 4: a ``dpop+jwt``
proof, the public key in its ``jwk`` header); :class:`PrivateKeyJwt` is an
:class:`~mcpwire.auth.AssertionSigner` (RFC 7523 section 2.2 client assertions). Keys are
generated or imported by joserfc on top of ``cryptography``; nothing here is hand-rolled.
"""

from __future__ import annotations

import base64
import hashlib
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import msgspec
from joserfc import errors as jose_errors
from joserfc import jwk, jwt
from joserfc.jwk import KeySet

from mcpwire.auth import AccessToken, AuthError, HttpCall, HttpReply, check_endpoint

from .fetch import fetch
from ..errors import TransportError, UsageError

__all__ = ["DPoPKey", "PrivateKeyJwt", "JwtVerifier", "DPoPVerifier", "key_type_for"]

_KEY_TYPES = {"ES256": ("EC", "P-256"), "ES384": ("EC", "P-384"), "ES512": ("EC", "P-521"), "EdDSA": ("OKP", "Ed25519"),
              "RS256": ("RSA", None), "RS384": ("RSA", None), "RS512": ("RSA", None),
              "PS256": ("RSA", None), "PS384": ("RSA", None), "PS512": ("RSA", None)}


def key_type_for(algorithm: str) -> str:
    """The JWK ``kty`` that signs with ``algorithm`` (asymmetric algorithms only)."""
    try:
        return _KEY_TYPES[algorithm][0]
    except KeyError:
        raise UsageError(f"not an asymmetric JWS algorithm mcpwire signs with: {algorithm!r}") from None


def _generate(algorithm: str) -> Any:
    kty, curve = _KEY_TYPES.get(algorithm, (None, None))
    if kty == "EC":
        return jwk.ECKey.generate_key(curve)
    if kty == "OKP":
        return jwk.OKPKey.generate_key("Ed25519")
    if kty == "RSA":
        return jwk.RSAKey.generate_key(2048)
    raise UsageError(f"not an asymmetric JWS algorithm mcpwire signs with: {algorithm!r}")


class DPoPKey:
    """One DPoP key pair (kept in memory only). ``DPoPKey.generate()`` makes a P-256 key."""

    def __init__(self, key: Any, algorithm: str = "ES256") -> None:
        key_type_for(algorithm)
        self._key = key
        self._algorithm = algorithm
        self._public = key.as_dict(private=False)
        self._thumbprint: str = key.thumbprint()

    @classmethod
    def generate(cls, algorithm: str = "ES256") -> DPoPKey:
        return cls(_generate(algorithm), algorithm)

    @property
    def algorithm(self) -> str:
        return self._algorithm

    @property
    def thumbprint(self) -> str:
        return self._thumbprint

    def proof(self, *, method: str, url: str, issued_at: int, jti: str, nonce: str | None = None,
              access_token_hash: str | None = None) -> str:
        claims: dict[str, Any] = {"jti": jti, "htm": method, "htu": url, "iat": issued_at}
        if nonce is not None:
            claims["nonce"] = nonce
        if access_token_hash is not None:
            claims["ath"] = access_token_hash
        header = {"typ": "dpop+jwt", "alg": self._algorithm, "jwk": self._public}
        return jwt.encode(header, claims, self._key, algorithms=[self._algorithm])


class PrivateKeyJwt:
    """Client assertions signed with the client's private key; valid ``lifetime`` seconds."""

    def __init__(self, key: Any, algorithm: str = "ES256", *, lifetime: int = 300, key_id: str | None = None) -> None:
        key_type_for(algorithm)
        self._key = key
        self._algorithm = algorithm
        self.lifetime = lifetime
        self.key_id = key_id

    @classmethod
    def from_pem(cls, pem: str | bytes, algorithm: str = "ES256", **kwargs: Any) -> PrivateKeyJwt:
        """Import a PKCS#8 (or traditional) PEM private key for ``algorithm``."""
        kty = key_type_for(algorithm)
        key = jwk.import_key(pem, "EC") if kty == "EC" else jwk.import_key(pem, "OKP") if kty == "OKP" else jwk.import_key(pem, "RSA")
        return cls(key, algorithm, **kwargs)

    @property
    def algorithm(self) -> str:
        return self._algorithm

    def assertion(self, *, client_id: str, audience: str, issued_at: int, jti: str) -> str:
        claims = {"iss": client_id, "sub": client_id, "aud": audience, "iat": issued_at,
                  "exp": issued_at + self.lifetime, "jti": jti}
        header: dict[str, Any] = {"alg": self._algorithm, "typ": "JWT"}
        if self.key_id is not None:
            header["kid"] = self.key_id
        return jwt.encode(header, claims, self._key, algorithms=[self._algorithm])


# -- the resource server side ------------------------------------------------------------------------

class _Jwks(msgspec.Struct):
    """A JWK Set document (RFC 7517 section 5): its shape checked before joserfc reads the keys."""

    keys: list[dict[str, Any]]


_JWKS = msgspec.json.Decoder(_Jwks)

ASYMMETRIC = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")


class JwtVerifier:
    """Access tokens as JWTs (RFC 9068) signed by ``issuer``, verified against its JWKS.

    The key set comes from ``jwks_url`` (or is given as ``jwks``) and is cached for
    ``cache_seconds``; a token signed with an unknown ``kid`` refetches it at most once per
    ``refresh_interval`` (key rotation). ``iss`` must equal ``issuer``, ``aud`` must contain
    ``audience`` (this server's resource URL), ``exp`` must be present and in the future
    (``leeway`` seconds of clock skew). Only asymmetric ``algorithms`` are accepted.

    The JOSE header's ``typ`` must be ``at+jwt`` (RFC 9068 section 4: the resource server
    MUST refuse any other value), compared case-insensitively and with or without the
    ``application/`` prefix (RFC 7515 section 4.1.9), so that no other JWT the issuer signs (an
    ID token, a client assertion, a logout token) passes as an access token. Any other ``typ``,
    a missing one included, is ``invalid_token``. ``accept_typ`` is an explicit opt-out for an
    authorization server that does not follow RFC 9068: ``("at+jwt", "JWT")`` also takes
    ``JWT``, and ``None`` in it a token without ``typ``. Leave it strict when you can: the
    check is what tells an access token from the issuer's other JWTs.
    """

    def __init__(self, *, issuer: str, audience: str, jwks_url: str | None = None, jwks: dict[str, Any] | None = None,
                 algorithms: Sequence[str] = ("RS256", "ES256", "PS256", "EdDSA"), leeway: int = 30,
                 cache_seconds: float = 300.0, refresh_interval: float = 30.0,
                 fetcher: Callable[[HttpCall], Awaitable[HttpReply]] | None = None,
                 clock: Callable[[], float] = time.time, allow_http: bool = False,
                 accept_typ: Sequence[str | None] = ("at+jwt",)) -> None:
        if jwks_url is None and jwks is None:
            raise UsageError("give jwks_url or jwks")
        if any(a not in ASYMMETRIC for a in algorithms):
            raise UsageError(f"only asymmetric algorithms are accepted: {list(algorithms)}")
        if isinstance(accept_typ, str) or not accept_typ or any(
            t is not None and (not isinstance(t, str) or not _media_type(t)) for t in accept_typ
        ):
            raise UsageError(f"accept_typ: a sequence of JOSE typ values (or None for none), such as "
                             f"('at+jwt',), not {accept_typ!r}")
        self.accept_typ = tuple(accept_typ)
        self._typs = frozenset(None if t is None else _media_type(t) for t in accept_typ)
        self.issuer, self.audience = issuer, audience
        self.jwks_url = check_endpoint(jwks_url, "jwks_uri", allow_http=allow_http) if jwks_url is not None else None
        self.algorithms = list(algorithms)
        self.leeway = leeway
        self.cache_seconds, self.refresh_interval = cache_seconds, refresh_interval
        self._fetch = fetcher or fetch
        self.clock = clock
        self._keys: KeySet | None = KeySet.import_key_set(jwks) if jwks is not None else None  # type: ignore[arg-type]
        self._fetched_at = -1e18

    async def _key_set(self, *, force: bool = False) -> KeySet:
        now = self.clock()
        stale = now - self._fetched_at > (self.refresh_interval if force else self.cache_seconds)
        if self.jwks_url is not None and (self._keys is None or stale):
            try:
                reply = await self._fetch(HttpCall(method="GET", url=self.jwks_url, headers=(("accept", "application/json"),)))
                if reply.status != 200:
                    raise TransportError(f"HTTP {reply.status}")
                document = _JWKS.decode(reply.body)  # a list, a string, no "keys": DecodeError, not a TypeError
                self._keys = KeySet.import_key_set({"keys": document.keys})
                self._fetched_at = now
            except (TransportError, msgspec.DecodeError, ValueError, jose_errors.JoseError) as exc:
                if self._keys is None:
                    raise AuthError("invalid_token", f"the issuer's keys cannot be loaded: {exc}") from None
        assert self._keys is not None
        return self._keys

    async def verify(self, token: str) -> AccessToken:
        keys = await self._key_set()
        try:
            try:
                decoded = jwt.decode(token, keys, algorithms=self.algorithms)
            except (jose_errors.InvalidKeyIdError, jose_errors.MissingKeyError, ValueError):
                decoded = jwt.decode(token, await self._key_set(force=True), algorithms=self.algorithms)
        except (jose_errors.JoseError, ValueError) as exc:
            raise AuthError("invalid_token", f"the token's signature or format is not valid ({type(exc).__name__})") from None
        claims = decoded.claims
        now = self.clock()
        exp = claims.get("exp")
        if not isinstance(exp, (int, float)):
            raise AuthError("invalid_token", "the token has no exp")
        if exp + self.leeway <= now:
            raise AuthError("expired", "the token has expired")
        nbf = claims.get("nbf")
        if isinstance(nbf, (int, float)) and nbf - self.leeway > now:
            raise AuthError("invalid_token", "the token is not valid yet")
        if claims.get("iss") != self.issuer:
            raise AuthError("wrong_issuer", f"the token is not from {self.issuer}")
        aud = claims.get("aud")
        audience = (aud,) if isinstance(aud, str) else tuple(a for a in aud if isinstance(a, str)) if isinstance(aud, list) else ()
        if self.audience not in audience:
            raise AuthError("wrong_audience", f"the token is not for {self.audience}")
        typ = decoded.header.get("typ")
        if (_media_type(typ) if isinstance(typ, str) else None if typ is None else "") not in self._typs:
            wanted = " or ".join("no typ" if t is None else repr(t) for t in self.accept_typ)
            raise AuthError("invalid_token", f"the token's JOSE typ is not {wanted} (RFC 9068 section 4)")
        scope = claims.get("scope")
        scopes = tuple(scope.split()) if isinstance(scope, str) else tuple(s for s in claims.get("scp", ()) if isinstance(s, str))
        cnf = claims.get("cnf")
        jkt = cnf.get("jkt") if isinstance(cnf, dict) else None
        return AccessToken(subject=claims.get("sub"), client_id=claims.get("client_id") or claims.get("azp"), scopes=scopes,
                           issuer=self.issuer, audience=audience, expires_at=float(exp),
                           jkt=jkt if isinstance(jkt, str) else None, claims=dict(claims))


def _media_type(typ: str) -> str:
    """A JOSE ``typ`` as the media type it names, lowercase, for comparison (RFC 7515 section
    4.1.9: ``application/`` may be left out of it, and media types compare case-insensitively);
    ``""`` for a value that is empty or names another top-level type."""
    text = typ.lower()
    if text.startswith("application/"):
        text = text[len("application/"):]
    return "" if "/" in text else text


def _htu(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", "", ""))


class DPoPVerifier:
    """Checks DPoP proofs on requests to a resource server (RFC 9449 section 4.3): a ``dpop+jwt``
    signed by the ``jwk`` in its header with an asymmetric algorithm, that key's thumbprint
    equal to the token's ``cnf.jkt``, ``htm`` and ``htu`` naming this request, ``iat`` within
    ``max_age`` seconds, and ``ath`` the hash of the presented token. Replay (``jti``) is the
    caller's to track (:class:`~mcpwire_adapters.oauth.resource_server.OAuthResource` does)."""

    def __init__(self, *, algorithms: Sequence[str] = ASYMMETRIC, max_age: float = 300.0) -> None:
        self.algorithms = list(algorithms)
        self.max_age = max_age

    def check(self, proof: str, *, method: str, url: str, access_token: str, jkt: str, now: float) -> str:
        def bad(why: str) -> AuthError:
            return AuthError("invalid_dpop_proof", why)

        try:
            header_b64 = proof.split(".")[0]
            header = msgspec.json.decode(base64.urlsafe_b64decode(header_b64 + "=" * (-len(header_b64) % 4)))
        except (ValueError, msgspec.DecodeError):
            raise bad("the DPoP proof is not a JWT") from None
        if not isinstance(header, dict) or header.get("typ") != "dpop+jwt" or header.get("alg") not in self.algorithms:
            raise bad("the DPoP proof's typ or alg is not acceptable")
        public = header.get("jwk")
        if not isinstance(public, dict) or "d" in public:
            raise bad("the DPoP proof has no public jwk")
        try:
            key = jwk.import_key(public)
            claims = jwt.decode(proof, key, algorithms=[header["alg"]]).claims
            thumbprint = key.thumbprint()
        except (jose_errors.JoseError, ValueError, TypeError) as exc:
            raise bad(f"the DPoP proof does not verify ({type(exc).__name__})") from None
        if thumbprint != jkt:
            raise bad("the DPoP proof's key is not the one the token is bound to")
        if claims.get("htm") != method or not isinstance(claims.get("htu"), str) or _htu(claims["htu"]) != _htu(url):
            raise bad("the DPoP proof is for another request (htm/htu)")
        iat = claims.get("iat")
        if not isinstance(iat, (int, float)) or abs(now - iat) > self.max_age:
            raise bad("the DPoP proof's iat is outside the accepted window")
        expected = base64.urlsafe_b64encode(hashlib.sha256(access_token.encode()).digest()).rstrip(b"=").decode()
        if claims.get("ath") != expected:
            raise bad("the DPoP proof's ath does not match the token")
        jti = claims.get("jti")
        if not isinstance(jti, str) or not jti:
            raise bad("the DPoP proof has no jti")
        return jti
