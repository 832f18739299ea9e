"""``mcpwire probe`` of a server that asks for authorization (Basic > Authorization of 2026-07-28,
2025-11-25 and 2025-06-18, and RFC 9728): our own server behind its OAuth guard (a token verifier
of the test's: "good" has the scope, "narrow" lacks it, "foreign" was issued for another audience)
passes every auth check in every revision; a raw server wrong about one rule (no challenge,
metadata without an authorization server or naming another resource, a token it never issued
accepted, a narrow token refused 401, a foreign token served) fails that check, citing the MUST
of the revision it ran in. In 2026-07-28 the 401 answers server/discover (no handshake).
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
import trio
from _stdlib_http import serving_http

from mcpwire.auth import AccessToken, AuthError, ResourceServer
from mcpwire_adapters import App, Context
from mcpwire_adapters.oauth.resource_server import OAuthResource
from mcpwire_adapters.serve.trio_h11.server import HttpServerConfig, serve_http
from mcpwire_adapters.testing.judge import RULES
from mcpwire_adapters.testing.probe.runner import Findings, Tokens, probe, select
from mcpwire_adapters.testing.verdict import Problem

TIMEOUT = 60.0
TOKENS = Tokens(access="good", narrow="narrow", foreign="foreign")
AUTH = ("2026-07-28", "2025-11-25", "2025-06-18")  # the revisions with protected resource metadata
WELL_KNOWN = "/.well-known/oauth-protected-resource"


class Verifier:
    """The test's tokens: "good" and "narrow" are valid ("narrow" without the scope), "foreign"
    is for another audience, anything else unknown."""

    async def verify(self, token: str) -> AccessToken:
        if token in ("good", "narrow"):
            return AccessToken(subject="probe", scopes=("mcp",) if token == "good" else ())
        if token == "foreign":
            raise AuthError("wrong_audience", "issued for another resource")
        raise AuthError("invalid_token", "not a token of this server")


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def guarded_server() -> AsyncIterator[str]:
    """Our server behind its OAuth guard, on 127.0.0.1; its URL."""
    port = _port()
    url = f"http://127.0.0.1:{port}/mcp"
    app = App("guarded", "1")

    @app.tool(description="Echo")
    async def echo(ctx: Context, arguments: dict[str, Any]) -> str:
        return str(arguments.get("text", ""))

    rs = ResourceServer(resource=url, authorization_servers=["https://auth.example.com"], required_scopes=["mcp"])
    config = HttpServerConfig(auth=OAuthResource(rs, Verifier()))
    async with trio.open_nursery() as nursery:
        await nursery.start(lambda task_status: serve_http(app, "127.0.0.1", port, config=config,
                                                            task_status=task_status))
        yield url
        nursery.cancel_scope.cancel()


def run_probe(url: str, **options: Any) -> Findings:
    async def go() -> Findings:
        with trio.fail_after(TIMEOUT):
            return await probe(url, rate=0, **options)
    return trio.run(go)


def test_our_guarded_server_passes_the_auth_checks() -> None:
    async def main() -> tuple[Findings, Findings]:
        async with guarded_server() as url:
            with trio.fail_after(TIMEOUT):
                bare = await probe(url, rate=0, strict=True)
                tokened = await probe(url, rate=0, strict=True, tokens=TOKENS)
            return bare, tokened

    bare, tokened = trio.run(main)
    # Without a token only the auth checks run, in the revisions whose text states them.
    assert bare.negotiated is not None and bare.negotiated.challenge is not None
    assert {f.subject.revision for f in bare} == set(AUTH) and all(f.subject.id.startswith("auth.") for f in bare)
    assert [(f.subject.key, f.status) for f in bare if f.status != "pass"] == [
        (f"auth.{c}" + (f"@{r}" if r != "2026-07-28" else ""), "n/a") for r in AUTH
        for c in ("insufficient-scope", "wrong-audience")]
    # 2026-07-28 has no handshake: the 401 answers server/discover.
    challenge = next(f for f in bare if f.subject.key == "auth.challenge")
    assert b'"server/discover"' in challenge.evidence[0][0].body and challenge.evidence[0][1] is not None
    assert challenge.evidence[0][1].status == 401
    # With the tokens: everything the server negotiated, the auth checks included, passes.
    assert tokened.negotiated is not None and tokened.negotiated.revisions == [*AUTH, "2025-03-26"]
    not_passed = [(f.subject.key, f.status, f.detail) for f in tokened if f.status != "pass"]
    assert all(status == "n/a" for _, status, _ in not_passed), not_passed
    auth = {f.subject.key: f.status for f in tokened if f.subject.id.startswith("auth.")}
    assert auth and set(auth.values()) == {"pass"}, auth
    assert "auth.invalid-token@2025-03-26" in auth and "auth.challenge@2025-03-26" not in auth
    assert {"auth.challenge", "auth.resource-identical", "auth.resource-identical@2025-06-18"} <= set(auth)


# The raw server's faults that publish the metadata at a well-known URL only (the challenge names none).
AT_WELL_KNOWN = ("well-known-root", "well-known-origin")


def _wrong(fault: str) -> type[BaseHTTPRequestHandler]:
    """A server asking for authorization, wrong about one rule of it (``fault``)."""
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, body: Any = None, extra: tuple[tuple[str, str], ...] = ()) -> None:
            data = json.dumps(body).encode() if body is not None else b""
            self.send_response(status)
            for name, value in extra:
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            origin = f"http://{self.headers['Host']}"
            if self.path.startswith(WELL_KNOWN) and not (fault in AT_WELL_KNOWN and self.path != WELL_KNOWN):
                servers = [] if fault == "no-authorization-server" else ["https://auth.example.com"]
                resource = {"resource-other": origin + "/other", "resource-case": f"HTTP://{self.headers['Host']}/mcp",
                            "well-known-origin": origin}.get(fault, origin + "/mcp")
                return self._send(200, {"resource": resource, "authorization_servers": servers})
            self._send(404)

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            token = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            named = f'resource_metadata="http://{self.headers["Host"]}{WELL_KNOWN}/mcp", '
            metadata = "Bearer " + ("" if fault in AT_WELL_KNOWN else named)
            if token == "narrow":
                if fault == "narrow-401":
                    return self._send(401, extra=(("WWW-Authenticate", metadata + 'scope="mcp"'),))
                return self._send(403, extra=(("WWW-Authenticate", metadata + 'error="insufficient_scope", '
                                               'scope="mcp"'),))
            served = token == "good" or (token == "foreign" and fault == "foreign-served") or (
                token not in ("", "foreign") and fault == "any-token")
            if not served:
                challenge = () if fault == "no-challenge" else (("WWW-Authenticate", metadata + 'scope="mcp"'),)
                return self._send(401, extra=challenge)
            self._send(200, {"jsonrpc": "2.0", "id": "auth-1", "result": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "x", "version": "1"}}})

    return Handler


def _cases() -> list[tuple[str, str, str]]:
    """(fault, the check it fails, revision)."""
    both = ("2026-07-28", "2025-06-18")
    out = [("no-challenge", "auth.challenge", "2025-06-18")]  # later revisions take the well-known URL instead
    for fault, check in (("no-authorization-server", "auth.resource-metadata"), ("any-token", "auth.invalid-token"),
                         ("narrow-401", "auth.insufficient-scope"), ("foreign-served", "auth.wrong-audience")):
        out += [(fault, check, r) for r in both]
    out += [("resource-other", "auth.resource-identical", r) for r in AUTH]
    # Metadata found at the root well-known URL names the origin (the identifier the suffix was
    # inserted into), not the MCP endpoint.
    out += [("well-known-root", "auth.resource-identical", r) for r in AUTH[:2]]
    return out


@pytest.mark.parametrize("fault, check, revision", _cases())
def test_each_auth_check_fails_a_server_breaking_its_rule(fault: str, check: str, revision: str) -> None:
    with serving_http(_wrong(fault)) as url:
        findings = run_probe(url, checks=select(["auth.*"]), tokens=Tokens(narrow="narrow", foreign="foreign"),
                             revisions=[revision])
    failed = {f.subject.id: f for f in findings if f.status == "fail"}
    assert set(failed) == {check}, [(f.subject.key, f.status, f.detail) for f in findings]
    problem = failed[check].problems[0]
    assert isinstance(problem, Problem) and problem.rule.id.endswith(f"@{revision}") and problem.strength == "MUST"
    assert f"/specification/{revision}/basic/authorization" in (problem.rule.url or "")


def test_the_resource_identifier_rules_by_where_the_metadata_came_from() -> None:
    """RFC 9728 section 3.3: metadata named by the challenge names the URL the request went to;
    metadata found at the root well-known URL names the origin; an equivalent URI that is not
    the same string (an uppercase scheme) is advice, not a failure."""
    def identical(fault: str, revision: str, strict: bool) -> tuple[str, list[str]]:
        with serving_http(_wrong(fault)) as url:
            findings = run_probe(url, checks=select(["auth.resource-identical"]), revisions=[revision], strict=strict)
        [finding] = findings
        return finding.status, [str(p) for p in finding.problems]

    assert identical("well-known-origin", "2025-11-25", True)[0] == "pass"
    assert identical("resource-case", "2026-07-28", False) == ("pass", [])
    status, problems = identical("resource-case", "2026-07-28", True)
    assert status == "advice" and "an equivalent URI, not the same string" in problems[0], problems
    status, problems = identical("well-known-root", "2026-07-28", True)
    assert status == "fail" and problems[0].endswith("so it names the identifier the suffix was inserted into"), problems
    # 2026-07-28 states the rule on its own discovery page.
    assert RULES["auth.resource-identical@2026-07-28"].url == ("https://modelcontextprotocol.io/specification/2026-07-28/"
                                                               "basic/authorization/authorization-server-discovery"
                                                               "#authorization-server-location")
