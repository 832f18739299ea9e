"""The client's authorization state for one MCP server: what to send, and what a 401 or 403 means.

Owns, client side (specification: Basic > Authorization, Access Token Usage, Scope Challenge
Handling; RFC 6750 section 3; RFC 9449 sections 7 and 9):

- the ``Authorization`` header (``Bearer`` or ``DPoP``) and, for a DPoP-bound token, a fresh
  proof per request with ``ath`` and the server's latest nonce. Credentials are only ever sent
  to the server they were issued for: they come from a flow run for this server's URL;
- the reading of a response: a 401 starts a new :class:`AuthorizationFlow` (the token in use
  is dropped and never offered again), a 403 with ``insufficient_scope`` starts one for the
  union of the scopes requested before and the challenged ones (step-up), a ``use_dpop_nonce``
  challenge retries once with the new nonce. Attempts per request are bounded
  (``max_attempts``, 3 by default); past that :class:`AuthError` ``too_many_attempts``.

The host (a driver) calls :meth:`ClientAuth.begin_request` before each MCP request,
:meth:`headers` for each send, :meth:`on_response` for each response head, and, when that
returns a flow, runs it and gives the result to :meth:`authorized`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from .challenge import Challenge, auth_challenge, parse_www_authenticate
from .errors import AuthError
from .flow import AuthorizationFlow, Authorized, _b64url, token_hash
from .grants import AssertionSigner, Credentials, Grant, ProofSigner

__all__ = ["ClientAuth"]


class ClientAuth:
    """Authorization for the MCP server at ``server_url``; the flow options are those of
    :class:`AuthorizationFlow`. One per server URL; not shared between servers."""

    def __init__(
        self,
        server_url: str,
        *,
        grant: Grant,
        random: Callable[[int], bytes],
        scopes: Sequence[str] | None = None,
        dpop: ProofSigner | None = None,
        client_assertion: AssertionSigner | None = None,
        max_attempts: int = 3,
        allow_http: bool = False,
    ) -> None:
        self.server_url = server_url
        self.grant = grant
        self.scopes = scopes
        self.dpop = dpop
        self.client_assertion = client_assertion
        self.max_attempts = max_attempts
        self.allow_http = allow_http
        self._random = random
        #: The credentials in use, from the last flow (None before the first 401).
        self.credentials: Credentials | None = None
        self._nonce: str | None = None
        self._attempts = 0
        self._nonce_retried = False
        parts = urlsplit(server_url)
        self._htu = urlunsplit((parts.scheme, parts.netloc, parts.path or "/", "", ""))

    def begin_request(self) -> None:
        """A new MCP request starts: its attempt budget is full again."""
        self._attempts = 0
        self._nonce_retried = False

    def headers(self, *, method: str = "POST", now: float) -> list[tuple[str, str]]:
        """The ``Authorization`` (and ``DPoP``) headers for one request; empty without credentials."""
        creds = self.credentials
        if creds is None:
            return []
        if creds.dpop_jkt is None:
            return [("authorization", f"Bearer {creds.access_token}")]
        assert self.dpop is not None
        proof = self.dpop.proof(method=method, url=self._htu, issued_at=int(now), jti=_b64url(self._random(16)),
                                nonce=self._nonce, access_token_hash=token_hash(creds.access_token))
        return [("authorization", f"DPoP {creds.access_token}"), ("dpop", proof)]

    def on_response(self, status: int, headers: Iterable[tuple[str, str]], *, now: float
                    ) -> Literal["ok", "retry"] | AuthorizationFlow:
        """Read a response head. ``"ok"``: hand the response on; ``"retry"``: send the request
        again (a new DPoP nonce); a flow: run it, pass its :class:`Authorized` to
        :meth:`authorized`, then send again. Raises :class:`AuthError`."""
        challenges: list[str] = []
        for name, value in headers:
            lname = name.lower()
            if lname == "dpop-nonce" and value:
                self._nonce = value  # RFC 9449 section 9: the latest nonce wins
            elif lname == "www-authenticate":
                challenges.append(value)
        if status not in (401, 403):
            return "ok"
        parsed = auth_challenge(parse_www_authenticate(challenges)) if challenges else None
        if status == 403 and (parsed is None or parsed.error != "insufficient_scope"):
            return "ok"  # a plain 403 is the server's answer, not a challenge
        if (status == 401 and parsed is not None and parsed.error == "use_dpop_nonce" and self.credentials is not None
                and self.credentials.dpop_jkt is not None and not self._nonce_retried):
            self._nonce_retried = True
            return "retry"
        self._attempts += 1
        if self._attempts > self.max_attempts:
            why = "insufficient scope" if status == 403 else "unauthorized"
            raise AuthError("too_many_attempts", f"{self.server_url} still answers {status} ({why}) after "
                            f"{self.max_attempts} authorization attempts", status=status)
        return self._flow(parsed, step_up=status == 403)

    def _flow(self, challenge: Challenge | None, *, step_up: bool) -> AuthorizationFlow:
        rejected = self.credentials.access_token if self.credentials is not None else None
        previous = self.credentials.scopes if step_up and self.credentials is not None else ()
        self.credentials = None  # a refused token is never sent again
        return AuthorizationFlow(self.server_url, grant=self.grant, random=self._random, challenge=challenge,
                                 previous_scopes=previous, scopes=self.scopes, dpop=self.dpop,
                                 client_assertion=self.client_assertion, rejected_token=rejected,
                                 allow_http=self.allow_http)

    def authorized(self, step: Authorized) -> None:
        """Use the credentials a flow returned (they are for this server: the flow checked)."""
        self.credentials = step.credentials
