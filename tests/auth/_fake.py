"""A scripted authorization server and MCP server for driving the sans-IO flow in tests.

Pure: replies are computed from the request, nothing listens. ``FakeServers.serve(call)``
answers an :class:`HttpCall`; ``FakeServers.authorize(step)`` plays the user agent and returns
the callback URL. Knobs on the instance change what the servers say.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from mcpwire.auth import (
    AuthorizationFlow, Authorize, Authorized, ClientInformation, Credentials, Fetch, HttpCall, HttpReply, NeedCredentials,
    Step,
)

MCP = "https://mcp.example.com/mcp"
AS = "https://auth.example.com"
NOW = 1_700_000_000.0


def counter_random() -> Any:
    count = itertools.count()
    return lambda n: bytes((next(count) + i) % 256 for i in range(n))


def reply(status: int, body: Any = None, **headers: str) -> HttpReply:
    data = b"" if body is None else json.dumps(body).encode()
    return HttpReply(status=status, headers=tuple((k.replace("_", "-"), v) for k, v in headers.items()), body=data)


class FakeSigner:
    algorithm = "ES256"
    thumbprint = "jkt-1"

    def __init__(self) -> None:
        self.proofs: list[dict[str, Any]] = []

    def proof(self, **claims: Any) -> str:
        self.proofs.append(claims)
        return f"proof-{len(self.proofs)}"


class FakeServers:
    def __init__(self) -> None:
        self.prm: dict[str, Any] = {"resource": MCP, "authorization_servers": [AS]}
        self.prm_path = "/.well-known/oauth-protected-resource/mcp"
        self.meta: dict[str, Any] = {
            "issuer": AS, "authorization_endpoint": f"{AS}/authorize", "token_endpoint": f"{AS}/token",
            "registration_endpoint": f"{AS}/register", "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": True,
        }
        self.iss: str | None = AS
        self.state_override: str | None = None
        self.token_status = 200
        self.token_body: dict[str, Any] = {"access_token": "at-1", "token_type": "Bearer", "expires_in": 3600,
                                           "refresh_token": "rt-1"}
        self.nonce_required = False
        self.calls: list[HttpCall] = []
        self.challenge = ""
        self.authorize_queries: list[dict[str, str]] = []

    def serve(self, call: HttpCall) -> HttpReply:
        self.calls.append(call)
        url = urlsplit(call.url)
        if call.url == f"https://mcp.example.com{self.prm_path}":
            return reply(200, self.prm)
        if call.url.startswith(AS + "/.well-known/oauth-authorization-server"):
            return reply(200, self.meta)
        if call.url == f"{AS}/register":
            return reply(201, {"client_id": "dyn-client"})
        if call.url == f"{AS}/token":
            form = {k: v[0] for k, v in parse_qs(call.body.decode()).items()}
            if self.nonce_required and "dpop" in dict(call.headers) and not getattr(self, "_nonce_sent", False):
                self._nonce_sent = True
                return reply(400, {"error": "use_dpop_nonce"}, DPoP_Nonce="n-1")
            if form.get("grant_type") == "authorization_code":
                verifier = form["code_verifier"]
                challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
                assert challenge == self.challenge
            return reply(self.token_status, self.token_body)
        return reply(404, {"error": "not_found"}) if url.netloc else reply(404)

    def authorize(self, step: Authorize) -> str:
        query = {k: v[0] for k, v in parse_qs(urlsplit(step.url).query).items()}
        self.authorize_queries.append(query)
        self.challenge = query["code_challenge"]
        params = {"code": "code-1", "state": self.state_override or query["state"]}
        if self.iss is not None:
            params["iss"] = self.iss
        return f"{step.redirect_uri}?{urlencode(params)}"


def drive(flow: AuthorizationFlow, servers: FakeServers, *, client: ClientInformation | None = None,
          stored: Credentials | None = None) -> Authorized:
    step: Step = flow.start(now=NOW)
    for _ in range(20):
        if isinstance(step, Authorized):
            return step
        if isinstance(step, Fetch):
            step = flow.receive_response(servers.serve(step.request), now=NOW)
        elif isinstance(step, NeedCredentials):
            step = flow.receive_credentials(client=client, stored=stored, now=NOW)
        else:
            step = flow.receive_redirect(servers.authorize(step), now=NOW)
    raise AssertionError("the flow did not finish")
