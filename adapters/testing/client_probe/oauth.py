"""The OAuth side of the hostile server, sans-IO: a protected resource's metadata (RFC 9728) and
challenge, and a minimal authorization server (RFC 8414 metadata, dynamic registration, an
authorization endpoint that approves at once, a token endpoint) for the OAuth scenarios.

It checks nothing the client sends (the judge does, from the records): it answers so that a
client can go as far as it chooses, and every request it gets is evidence. The modes:

- ``good``: everything as a client expects it;
- ``issuer-mismatch``: the metadata fetched for issuer ``<base>/as`` names issuer
  ``<base>/not-this-as`` (RFC 8414 section 3.3: the client must not use it);
- ``no-pkce``: the metadata has no ``code_challenge_methods_supported`` (the client must refuse
  to proceed).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import parse_qs, urlencode, urlsplit

__all__ = ["AS_METADATA_PATHS", "MCP_PATH", "PRM_PATHS", "AuthorizationServer", "Response"]

MCP_PATH: Final = "/mcp"
ISSUER_PATH: Final = "/as"
PRM_PATHS: Final = ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource")
# Where a client may look for the metadata of issuer <base>/as (RFC 8414 section 3.1 and OpenID
# Connect Discovery, as the specification's Authorization Server Metadata Discovery lists them).
AS_METADATA_PATHS: Final = ("/.well-known/oauth-authorization-server/as", "/.well-known/openid-configuration/as",
                            "/as/.well-known/openid-configuration")
Response = tuple[int, tuple[tuple[str, str], ...], bytes]


class AuthorizationServer:
    """The resource's metadata and an authorization server on the same origin, ``base``
    (``http://127.0.0.1:<port>``), in ``mode``."""

    def __init__(self, mode: str, base: str) -> None:
        self.mode = mode
        self.base = base
        self.issuer = base + ISSUER_PATH
        self.resource = base + MCP_PATH
        self.tokens: set[str] = set()
        self._ids = itertools.count(1)

    def handles(self, path: str) -> bool:
        """Whether ``path`` is one of its own (not the MCP endpoint)."""
        return path in PRM_PATHS or path in AS_METADATA_PATHS or path.startswith(ISSUER_PATH + "/")

    def authorized(self, headers: Mapping[str, str]) -> bool:
        """Whether a request to the MCP endpoint carries a token this server issued."""
        scheme, _, token = headers.get("authorization", "").partition(" ")
        return scheme.lower() == "bearer" and token.strip() in self.tokens

    def challenge(self) -> Response:
        """The 401 of the MCP endpoint to a request without a good token (RFC 9728 section 5.1)."""
        header = f'Bearer resource_metadata="{self.base}{PRM_PATHS[0]}"'
        return 401, (("www-authenticate", header), ("content-type", "application/json")), \
            b'{"error": "invalid_token", "error_description": "authorization required"}'

    def metadata(self) -> dict[str, Any]:
        issuer = self.issuer if self.mode != "issuer-mismatch" else self.base + "/not-this-as"
        out: dict[str, Any] = {
            "issuer": issuer, "authorization_endpoint": self.issuer + "/authorize", "token_endpoint": self.issuer + "/token",
            "registration_endpoint": self.issuer + "/register", "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": ["none"], "code_challenge_methods_supported": ["S256"]}
        if self.mode == "no-pkce":
            del out["code_challenge_methods_supported"]
        return out

    def answer(self, method: str, target: str, body: bytes) -> Response:
        """The answer to a request for one of its paths."""
        parts = urlsplit(target)
        path = parts.path
        if path in PRM_PATHS:
            return _json(200, {"resource": self.resource, "authorization_servers": [self.issuer],
                               "bearer_methods_supported": ["header"]})
        if path in AS_METADATA_PATHS:
            return _json(200, self.metadata())
        if path == ISSUER_PATH + "/register" and method == "POST":
            try:
                asked = json.loads(body)
            except ValueError:
                asked = None
            if not isinstance(asked, dict):
                return _json(400, {"error": "invalid_client_metadata"})
            return _json(201, {**asked, "client_id": f"hostile-client-{next(self._ids)}",
                               "token_endpoint_auth_method": "none"})
        if path == ISSUER_PATH + "/authorize" and method == "GET":
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            redirect = query.get("redirect_uri")
            if not redirect:
                return _json(400, {"error": "invalid_request", "error_description": "no redirect_uri"})
            back = {"code": f"hostile-code-{next(self._ids)}", **({"state": query["state"]} if "state" in query else {}),
                    "iss": self.issuer}
            return 302, (("location", redirect + ("&" if "?" in redirect else "?") + urlencode(back)),), b""
        if path == ISSUER_PATH + "/token" and method == "POST":
            token = f"hostile-token-{next(self._ids)}"
            self.tokens.add(token)
            return _json(200, {"access_token": token, "token_type": "Bearer", "expires_in": 3600})
        return _json(404, {"error": "not_found"})


def _json(status: int, data: Any) -> Response:
    return status, (("content-type", "application/json"), ("cache-control", "no-store")), json.dumps(data).encode()
