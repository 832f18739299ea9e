"""The probe's checks of a server that asks for authorization (:data:`AUTH_CHECKS`): the 401
and its ``WWW-Authenticate`` challenge, the protected resource metadata (RFC 9728) and whether
its ``resource`` is identical to the identifier the probe reached it by (RFC 9728 section 3.3),
an invalid token, a token with too small a scope (403), a token for another audience (401).
Specification of the revision the check runs in: Basic > Authorization (2026-07-28: with its
Authorization Server Discovery page).

They run when the server answered a request without a token with 401 (before the checks, or
when the user gave a token for the other checks); the narrow and foreign tokens are the user's
(``Tokens``), and their checks are not applicable without them. Each sends the revision's first
request: ``initialize`` in the initialize era, ``server/discover`` in 2026-07-28 (which has no
handshake: any request reaches the 401). Only the target's origin is contacted: metadata named
on another origin is not fetched.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from mcpwire.auth import AuthError, Challenge, parse_www_authenticate, protected_resource_metadata_urls

from ..era_rules import AUTH_REVISIONS, DISCOVERY_REVISIONS, METADATA_REVISIONS
from ..era_wire import ERA_BASE, initialize
from ..judge import problem, rule
from ..rawwire import VERSION, Exchange, Reply, Request, Send, headers, http_sender, rpc
from ..verdict import NOT_APPLICABLE, PASS, Outcome, Problem
from .checks import STREAMABLE_HTTP, Check, Target

__all__ = ["AUTH_CHECKS"]

AUTHORIZATION = "basic/authorization#authorization-server-location"
WELL_KNOWN = "/.well-known/oauth-protected-resource"  # RFC 9728 section 3: the well-known URI suffix
DEFAULT_PORTS = {"http": 80, "https": 443}


def _initialize(target: Target, token: str | None) -> Request:
    """The revision's first request (2026-07-28: server/discover), with ``token`` if given."""
    extra = (("Authorization", f"Bearer {token}"),) if token is not None else ()
    if target.revision == VERSION:
        return rpc("server/discover", rpc_id="auth-1", hdrs=headers("server/discover", extra=extra))
    body = json.dumps(initialize(target.revision, "auth-1")).encode()
    return Request("POST", ERA_BASE + extra, body, rpc_id="auth-1")


def _raw(target: Target) -> Send:
    """A sender without the user's access token (the auth checks choose what to present)."""
    return http_sender(target.url, target.rate, target.timeout)


def _challenge(reply: Reply) -> tuple[Challenge | None, str | None]:
    """The Bearer challenge of a 401 (or why there is none)."""
    values = [v for k, v in reply.headers if k.lower() == "www-authenticate"]
    if not values:
        return None, "no WWW-Authenticate header"
    try:
        challenges = parse_www_authenticate(values)
    except AuthError as exc:
        return None, f"WWW-Authenticate does not parse: {exc}"
    bearer = next((c for c in challenges if c.scheme in ("bearer", "dpop")), None)
    return bearer, None if bearer is not None else f"no Bearer challenge in {', '.join(values)[:120]!r}"


def _same_origin(a: str, b: str) -> bool:
    x, y = urlsplit(a), urlsplit(b)
    return (x.scheme, x.hostname, x.port) == (y.scheme, y.hostname, y.port)


async def _metadata(target: Target, send: Send, challenge: Challenge | None,
                    evidence: list[Exchange]) -> tuple[dict[str, Any] | None, str]:
    """The protected resource metadata: at the challenge's resource_metadata, else the
    well-known URLs (RFC 9728 section 3.1); the document and its URL, or None and why there
    is none."""
    urls = protected_resource_metadata_urls(target.url, challenge.resource_metadata if challenge else None)
    for url in urls:
        if not _same_origin(url, target.url):
            return None, f"the metadata is on another origin ({url[:100]}): not fetched"
        got = await http_sender(url, target.rate, target.timeout)(Request("GET", (("Accept", "application/json"),)))
        evidence.append(got)
        if got[1] is not None and got[1].status == 200:
            try:
                document = json.loads(got[1].body)
            except ValueError:
                return None, f"{url} is not JSON"
            return (document, url) if isinstance(document, dict) else (None, f"{url} is not a JSON object")
    return None, f"no protected resource metadata at {', '.join(urls)}"


def _guarded(run: Any) -> Any:
    async def steps(target: Target, send: Send) -> Outcome:
        if target.challenge is None:
            return Outcome(NOT_APPLICABLE, "the server does not ask for authorization (no 401 to a request without a "
                                           "token)")
        result: Outcome = await run(target, _raw(target))
        return result
    return steps


async def _challenged(target: Target, send: Send) -> Outcome:
    """The first request without a token: 401 with a Bearer challenge naming its resource
    metadata (from 2025-11-25: or the metadata at a well-known URL), and a scope (from
    2025-11-25: SHOULD)."""
    sent = await send(_initialize(target, None))
    evidence = [sent]
    if sent[1] is None:
        return Outcome.broken(rule("jsonrpc.reply"), f"no reply: {sent[2]}", evidence)
    if sent[1].status != 401:
        return Outcome.broken(rule(target.rule("auth.error-status")), f"HTTP {sent[1].status} to a request without a "
                              "token, where the server asked for one before (expected 401)", evidence)
    bearer, why = _challenge(sent[1])
    problems: list[Problem] = []
    if bearer is None or bearer.resource_metadata is None:
        missing = why or "the challenge has no resource_metadata"
        if target.revision in DISCOVERY_REVISIONS:
            document, _ = await _metadata(target, send, None, evidence)
            if document is None:
                problems.append(problem(target.rule("auth.www-authenticate"), f"{missing}, and no protected resource "
                                                                              "metadata at a well-known URL"))
        else:
            problems.append(problem(target.rule("auth.www-authenticate"), missing))
    if target.revision in DISCOVERY_REVISIONS and (bearer is None or bearer.scopes is None):
        problems.append(problem(target.rule("auth.scope-parameter"), "the challenge has no scope parameter"))
    return Outcome.judged(problems, evidence)


async def _resource_metadata(target: Target, send: Send) -> Outcome:
    sent = await send(_initialize(target, None))
    evidence = [sent]
    bearer = _challenge(sent[1])[0] if sent[1] is not None and sent[1].status == 401 else None
    document, where = await _metadata(target, send, bearer, evidence)
    if document is None:
        if "another origin" in where:
            return Outcome(NOT_APPLICABLE, where, evidence)
        return Outcome.broken(rule(target.rule("auth.resource-metadata")), where, evidence)
    broken = rule(target.rule("auth.resource-metadata"))
    problems = []
    if not isinstance(document.get("resource"), str) or not document["resource"]:
        problems.append(f"resource {json.dumps(document.get('resource'))[:80]}, expected the resource's identifier")
    servers = document.get("authorization_servers")
    if not isinstance(servers, list) or not servers or not all(isinstance(s, str) for s in servers):
        problems.append(f"authorization_servers {json.dumps(servers)[:80]}, expected at least one")
    return Outcome.judged([Problem(p, broken) for p in problems], evidence, f"at {where}")


def _inserted_into(url: str) -> tuple[str, ...]:
    """The resource identifier the well-known suffix was inserted into to build ``url`` (at the
    root: the origin, written with or without its "/")."""
    parts = urlsplit(url)
    rest = parts.path.removeprefix(WELL_KNOWN)
    origin = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
    return (origin + rest,) if rest else (origin, origin + "/")


def _normalized(url: str) -> tuple[str, str, int | None, str, str, str] | None:
    """``url`` as RFC 3986 section 6.2.2 compares it (the scheme and host without case, a
    default port left out, an empty path as "/"), or None if it is no URL."""
    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        port = parts.port if parts.port != DEFAULT_PORTS.get(scheme) else None
    except ValueError:
        return None
    return scheme, parts.hostname or "", port, parts.path or "/", parts.query, parts.fragment


async def _resource_identical(target: Target, send: Send) -> Outcome:
    """The metadata's ``resource`` is identical to what the probe reached it by (RFC 9728
    section 3.3): when the challenge named the metadata, the URL the request went to; else the
    identifier the well-known suffix was inserted into. An equivalent URI that is not the same
    string is advice."""
    sent = await send(_initialize(target, None))
    evidence = [sent]
    bearer = _challenge(sent[1])[0] if sent[1] is not None and sent[1].status == 401 else None
    document, where = await _metadata(target, send, bearer, evidence)
    if document is None:
        return Outcome(NOT_APPLICABLE, f"no metadata to compare ({where}): auth.resource-metadata judges that",
                       evidence)
    resource = document.get("resource")
    if not isinstance(resource, str) or not resource:
        return Outcome(NOT_APPLICABLE, "the metadata has no resource: auth.resource-metadata judges that", evidence)
    named = bearer is not None and bearer.resource_metadata is not None
    expected = (target.url,) if named else _inserted_into(where)
    if resource in expected:
        return Outcome(PASS, f"{resource} (at {where})", evidence)
    came = (f"the challenge's resource_metadata ({where}), so it names the URL the request went to" if named else
            f"the well-known URL {where}, so it names the identifier the suffix was inserted into")
    text = f"resource {json.dumps(resource)[:120]}, expected {expected[0]!r}: the metadata came from {came}"
    normalized = _normalized(resource)
    if normalized is not None and normalized in {_normalized(e) for e in expected}:
        return Outcome.judged([problem("mcpwire.resource-exact", text + " (an equivalent URI, not the same string)")],
                              evidence)
    return Outcome.judged([problem(target.rule("auth.resource-identical"), text)], evidence)


async def _refused(target: Target, send: Send, token: str, rule_id: str, what: str) -> Outcome:
    """``token`` sent: 401 passes; any other status breaks ``rule_id`` (``what``: the token)."""
    sent = await send(_initialize(target, token))
    if sent[1] is None:
        return Outcome.broken(rule("jsonrpc.reply"), f"no reply: {sent[2]}", [sent])
    if sent[1].status != 401:
        return Outcome.broken(rule(target.rule(rule_id)), f"HTTP {sent[1].status} for {what}, expected 401", [sent])
    return Outcome(PASS, "", [sent])


async def _invalid_token(target: Target, send: Send) -> Outcome:
    return await _refused(target, send, "mcpwire-probe-invalid-token", "auth.invalid-token",
                          "a token the server never issued")


async def _narrow_token(target: Target, send: Send) -> Outcome:
    if target.tokens.narrow is None:
        return Outcome(NOT_APPLICABLE, "needs a token with too small a scope (--insufficient-scope-token)")
    sent = await send(_initialize(target, target.tokens.narrow))
    evidence = [sent]
    if sent[1] is None:
        return Outcome.broken(rule("jsonrpc.reply"), f"no reply: {sent[2]}", evidence)
    if sent[1].status < 400:
        return Outcome(NOT_APPLICABLE, f"initialize was served with the narrow token (HTTP {sent[1].status}): it needs "
                                       "no scope the token lacks", evidence)
    if sent[1].status != 403:
        return Outcome.broken(rule(target.rule("auth.error-status")), f"HTTP {sent[1].status} for a token with too "
                              "small a scope, expected 403", evidence)
    problems: list[Problem] = []
    if target.revision in DISCOVERY_REVISIONS:
        bearer, why = _challenge(sent[1])
        if bearer is None or bearer.error != "insufficient_scope" or bearer.scopes is None:
            problems.append(problem(target.rule("auth.scope-challenge"), why or "the challenge lacks "
                                    "error=\"insufficient_scope\" or scope"))
    return Outcome.judged(problems, evidence)


async def _foreign_token(target: Target, send: Send) -> Outcome:
    if target.tokens.foreign is None:
        return Outcome(NOT_APPLICABLE, "needs a token issued for another audience (--wrong-audience-token)")
    return await _refused(target, send, target.tokens.foreign, "auth.audience", "a token issued for another audience")


def _auth(cid: str, title: str, cites: str, sends: str, run: Any, enforces: tuple[str, ...],
          revisions: tuple[str, ...] = METADATA_REVISIONS) -> Check:
    return Check(f"auth.{cid}", title, cites, sends, steps=_guarded(run), enforces=enforces, revisions=revisions,
                 transports=(STREAMABLE_HTTP,))


FIRST = "the first request (initialize; 2026-07-28: server/discover)"
AUTH_CHECKS: tuple[Check, ...] = (
    _auth("challenge", "a request without a token is 401 with a challenge naming the resource metadata",
          AUTHORIZATION, f"{FIRST} without Authorization", _challenged,
          ("auth.error-status", "auth.www-authenticate", "auth.scope-parameter")),
    _auth("resource-metadata", "the protected resource metadata names the resource and an authorization server",
          AUTHORIZATION, "GET of the challenge's resource_metadata (or the well-known URLs)", _resource_metadata,
          ("auth.resource-metadata",)),
    _auth("resource-identical", "the metadata's resource is identical to the URL the probe used (RFC 9728 section "
          "3.3)", AUTHORIZATION, f"{FIRST} without Authorization, then GET of the metadata it names (or the "
          "well-known URLs)", _resource_identical, ("auth.resource-identical", "mcpwire.resource-exact")),
    _auth("invalid-token", "a token the server never issued is 401", "basic/authorization#token-handling",
          f"{FIRST} with Authorization: Bearer mcpwire-probe-invalid-token", _invalid_token,
          ("auth.invalid-token",), AUTH_REVISIONS),
    _auth("insufficient-scope", "a token with too small a scope is 403 (from 2025-11-25: with error and scope)",
          "basic/authorization#error-handling", f"{FIRST} with the narrow token", _narrow_token,
          ("auth.error-status", "auth.scope-challenge"), AUTH_REVISIONS),
    _auth("wrong-audience", "a token issued for another audience is 401", "basic/authorization#token-handling",
          f"{FIRST} with the foreign token", _foreign_token, ("auth.audience",)),
)
