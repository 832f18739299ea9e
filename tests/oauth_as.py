"""A small OAuth 2.1 authorization server for the end-to-end tests, on 127.0.0.1 (trio + h11).

Keys are generated per instance (ES256, joserfc). It serves RFC 8414 metadata, dynamic
registration, an authorization endpoint that approves at once (302 back with ``code``,
``state`` and ``iss``), a token endpoint (authorization code with PKCE S256 and ``resource``,
refresh, client credentials; DPoP-bound tokens when a proof comes with the request), its JWKS
and RFC 7662 introspection. Access tokens are JWTs: ``iss``, ``aud`` = the requested
resource, ``sub``, ``client_id``, ``scope``, ``exp``, and ``cnf.jkt`` when bound.

    auth = AuthServer()
    async with trio.open_nursery() as nursery:
        await nursery.start(auth.serve)      # auth.issuer is http://127.0.0.1:<port>
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import time
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import h11
import trio
from joserfc import jwk, jwt

INTROSPECTION_CLIENT = ("rs-client", "rs-secret")


class AuthServer:
    def __init__(self) -> None:
        self.key = jwk.ECKey.generate_key("P-256", parameters={"kid": "k1"})
        self.issuer = ""
        self.scopes_supported = ["mcp:basic", "mcp:write", "offline_access"]
        self.codes: dict[str, dict[str, str]] = {}
        self.refresh: dict[str, dict[str, str]] = {}
        self.clients: dict[str, str | None] = {"machine": "machine-secret"}
        self.requests: list[tuple[str, str]] = []  # (method, path) of everything received
        self.token_requests: list[dict[str, str]] = []
        self._ids = itertools.count(1)

    # -- tokens -----------------------------------------------------------------------------------
    def issue(self, claims: dict[str, Any], key: Any = None) -> str:
        now = int(time.time())
        full = {"iss": self.issuer, "sub": "user-1", "iat": now, "exp": now + 600, "jti": f"t{next(self._ids)}", **claims}
        return jwt.encode({"alg": "ES256", "kid": "k1", "typ": "at+jwt"}, full, key or self.key)

    def _token(self, *, resource: str, scope: str, client_id: str, jkt: str | None) -> dict[str, Any]:
        claims: dict[str, Any] = {"aud": resource, "scope": scope, "client_id": client_id}
        if jkt is not None:
            claims["cnf"] = {"jkt": jkt}
        refresh = f"rt-{next(self._ids)}"
        self.refresh[refresh] = {"resource": resource, "scope": scope, "client_id": client_id}
        return {"access_token": self.issue(claims), "token_type": "DPoP" if jkt else "Bearer", "expires_in": 600,
                "refresh_token": refresh, "scope": scope}

    @staticmethod
    def _proof_jkt(proof: str | None) -> str | None:
        if proof is None:
            return None
        header = json.loads(base64.urlsafe_b64decode(proof.split(".")[0] + "=="))
        key = jwk.import_key(header["jwk"])
        jwt.decode(proof, key, algorithms=[header["alg"]])  # the proof must verify
        return key.thumbprint()

    # -- HTTP -------------------------------------------------------------------------------------
    def metadata(self) -> dict[str, Any]:
        i = self.issuer
        return {"issuer": i, "authorization_endpoint": f"{i}/authorize", "token_endpoint": f"{i}/token",
                "registration_endpoint": f"{i}/register", "jwks_uri": f"{i}/jwks", "introspection_endpoint": f"{i}/introspect",
                "scopes_supported": self.scopes_supported, "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
                "token_endpoint_auth_methods_supported": ["none", "client_secret_basic"],
                "code_challenge_methods_supported": ["S256"], "authorization_response_iss_parameter_supported": True,
                "dpop_signing_alg_values_supported": ["ES256"]}

    def handle(self, method: str, target: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
        path, query = urlsplit(target).path, {k: v[0] for k, v in parse_qs(urlsplit(target).query).items()}
        form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
        self.requests.append((method, path))

        def reply(status: int, data: Any, **extra: str) -> tuple[int, dict[str, str], bytes]:
            return status, {"content-type": "application/json", **extra}, json.dumps(data).encode()

        if path == "/.well-known/oauth-authorization-server":
            return reply(200, self.metadata())
        if path == "/jwks":
            return reply(200, {"keys": [self.key.as_dict(private=False)]})
        if path == "/register" and method == "POST":
            meta = json.loads(body)
            client_id = f"client-{next(self._ids)}"
            self.clients[client_id] = None
            return reply(201, {"client_id": client_id, "token_endpoint_auth_method": "none", **meta})
        if path == "/authorize":
            code = f"code-{next(self._ids)}"
            self.codes[code] = query
            back = {"code": code, **({"state": query["state"]} if "state" in query else {}), "iss": self.issuer}
            location = query["redirect_uri"] + "?" + urlencode(back)  # state is the client's choice with PKCE
            return 302, {"location": location}, b""
        if path == "/token" and method == "POST":
            self.token_requests.append(form)
            jkt = self._proof_jkt(headers.get("dpop"))
            grant = form.get("grant_type")
            if grant == "authorization_code":
                asked = self.codes.pop(form.get("code", ""), None)
                challenge = base64.urlsafe_b64encode(hashlib.sha256(form.get("code_verifier", "").encode()).digest()).rstrip(b"=").decode()
                if asked is None or challenge != asked["code_challenge"] or form.get("resource") != asked["resource"]:
                    return reply(400, {"error": "invalid_grant"})
                return reply(200, self._token(resource=asked["resource"], scope=asked.get("scope", ""),
                                              client_id=asked["client_id"], jkt=jkt))
            if grant == "refresh_token":
                held = self.refresh.pop(form.get("refresh_token", ""), None)
                if held is None:
                    return reply(400, {"error": "invalid_grant"})
                return reply(200, self._token(resource=form.get("resource", held["resource"]), scope=held["scope"],
                                              client_id=held["client_id"], jkt=jkt))
            if grant == "client_credentials":
                user, _, secret = base64.b64decode(headers.get("authorization", "Basic ")[6:]).decode().partition(":")
                if self.clients.get(user) != secret or not secret:
                    return reply(401, {"error": "invalid_client"})
                return reply(200, self._token(resource=form["resource"], scope=form.get("scope", ""), client_id=user, jkt=jkt))
            return reply(400, {"error": "unsupported_grant_type"})
        if path == "/introspect" and method == "POST":
            expected = "Basic " + base64.b64encode(":".join(INTROSPECTION_CLIENT).encode()).decode()
            if headers.get("authorization") != expected:
                return reply(401, {"error": "invalid_client"})
            try:
                claims = dict(jwt.decode(form.get("token", ""), self.key).claims)
            except Exception:  # noqa: BLE001 - any bad token is simply inactive
                return reply(200, {"active": False})
            return reply(200, {"active": claims.get("exp", 0) > time.time(), **claims})
        return reply(404, {"error": "not_found"})

    async def _connection(self, stream: trio.SocketStream) -> None:
        conn = h11.Connection(h11.SERVER)
        request: h11.Request | None = None
        body = b""
        async with stream:
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    conn.receive_data(await stream.receive_some(65536))
                elif isinstance(event, h11.Request):
                    request = event
                elif isinstance(event, h11.Data):
                    body += event.data
                elif isinstance(event, h11.EndOfMessage):
                    break
                elif isinstance(event, h11.ConnectionClosed):
                    return
            assert request is not None
            headers = {k.decode().lower(): v.decode() for k, v in request.headers}
            status, out, data = self.handle(request.method.decode(), request.target.decode(), headers, body)
            response = [(k, v) for k, v in out.items()] + [("content-length", str(len(data))), ("connection", "close")]
            await stream.send_all((conn.send(h11.Response(status_code=status, headers=response)) or b"")
                                  + (conn.send(h11.Data(data=data)) or b"") + (conn.send(h11.EndOfMessage()) or b""))

    async def serve(self, task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        port = listeners[0].socket.getsockname()[1]
        self.issuer = f"http://127.0.0.1:{port}"
        async with trio.open_nursery() as nursery:
            nursery.start_soon(trio.serve_listeners, self._connection, listeners)
            task_status.started(self.issuer)
