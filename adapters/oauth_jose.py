"""Signing for the OAuth client with joserfc (``pip install 'mcpwire[oauth]'``).

:class:`DPoPKey` is a :class:`~mcpwire.auth.ProofSigner` (RFC 9449 section 4: a ``dpop+jwt``
proof, the public key in its ``jwk`` header); :class:`PrivateKeyJwt` is an
:class:`~mcpwire.auth.AssertionSigner` (RFC 7523 section 2.2 client assertions). Keys are
generated or imported by joserfc on top of ``cryptography``; nothing here is hand-rolled.
"""

from __future__ import annotations

from typing import Any

from joserfc import jwk, jwt

__all__ = ["DPoPKey", "PrivateKeyJwt", "key_type_for"]

_KEY_TYPES = {"ES256": ("EC", "P-256"), "ES384": ("EC", "P-384"), "ES512": ("EC", "P-521"), "EdDSA": ("OKP", "Ed25519"),
              "RS256": ("RSA", None), "RS384": ("RSA", None), "RS512": ("RSA", None),
              "PS256": ("RSA", None), "PS384": ("RSA", None), "PS512": ("RSA", None)}


def key_type_for(algorithm: str) -> str:
    """The JWK ``kty`` that signs with ``algorithm`` (asymmetric algorithms only)."""
    try:
        return _KEY_TYPES[algorithm][0]
    except KeyError:
        raise ValueError(f"not an asymmetric JWS algorithm mcpwire signs with: {algorithm!r}") from None


def _generate(algorithm: str) -> Any:
    kty, curve = _KEY_TYPES.get(algorithm, (None, None))
    if kty == "EC":
        return jwk.ECKey.generate_key(curve)
    if kty == "OKP":
        return jwk.OKPKey.generate_key("Ed25519")
    if kty == "RSA":
        return jwk.RSAKey.generate_key(2048)
    raise ValueError(f"not an asymmetric JWS algorithm mcpwire signs with: {algorithm!r}")


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
