"""The anyio driver of :mod:`mcpwire.auth`: runs authorization flows for :class:`HttpClient`.

    oauth = OAuth(grant=AuthorizationCode(redirect_uri="http://127.0.0.1:8765/callback"),
                  redirect=open_browser_and_wait, store=FileTokenStore("~/.mcpwire/tokens.json"))
    async with HttpClient("https://mcp.example.com/mcp", client, auth=oauth) as c:
        await c.list_tools()   # a 401 runs the flow, then the request is sent again

:class:`OAuth` holds what is shared between servers (the grant, the store, the pre-registered
clients, the signers, the redirect handler); :meth:`OAuth.bind` makes the per-server
:class:`~mcpwire.auth.ClientAuth` an HTTP client keeps. :meth:`OAuth.run` performs one
:class:`~mcpwire.auth.AuthorizationFlow`: each :class:`~mcpwire.auth.Fetch` on a connection
of its own, each :class:`~mcpwire.auth.NeedCredentials` answered from the pre-registered
clients and the store, the :class:`~mcpwire.auth.Authorize` step through ``redirect`` (an
async callable that takes the step and returns the callback URL the user agent reached), and
the :class:`~mcpwire.auth.Authorized` credentials saved in the store.

It runs on trio and asyncio alike (anyio), as :class:`HttpClient` does. For an HTTP client of
your own, write the same loop over the flow's steps with it (docs/auth.md shows one with httpx).
"""

from __future__ import annotations

import os
import ssl
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence

from mcpwire.auth import (
    AssertionSigner, AuthError, AuthorizationFlow, Authorize, Authorized, ClientAuth, ClientInformation, Fetch, Grant,
    HttpCall, HttpReply, NeedCredentials, ProofSigner, Step,
)

from .fetch import fetch
from .store import MemoryTokenStore, TokenStore

__all__ = ["OAuth", "RedirectHandler", "follow_redirect"]

RedirectHandler = Callable[[Authorize], Awaitable[str]]
MAX_STEPS = 32  # fetches and answers in one flow; discovery tries at most five URLs


class OAuth:
    """OAuth for HTTP clients (see the module docstring).

    ``clients`` maps an issuer to the client pre-registered there; ``client`` is used at any
    issuer that has none (a machine client configured for one deployment). Registered
    clients are saved in the store per issuer, never offered to another issuer.
    ``clock`` and ``random`` are the time and randomness given to the sans-IO flow.
    """

    def __init__(
        self,
        *,
        grant: Grant,
        redirect: RedirectHandler | None = None,
        store: TokenStore | None = None,
        clients: Mapping[str, ClientInformation] | None = None,
        client: ClientInformation | None = None,
        scopes: Sequence[str] | None = None,
        dpop: ProofSigner | None = None,
        client_assertion: AssertionSigner | None = None,
        max_attempts: int = 3,
        allow_http: bool = False,
        timeout: float = 30.0,
        ssl_context: ssl.SSLContext | None = None,
        clock: Callable[[], float] = time.time,
        random: Callable[[int], bytes] = os.urandom,
    ) -> None:
        self.grant = grant
        self.redirect = redirect
        self.store: TokenStore = store if store is not None else MemoryTokenStore()
        self.clients = dict(clients or {})
        self.client = client
        self.scopes = scopes
        self.dpop = dpop
        self.client_assertion = client_assertion
        self.max_attempts = max_attempts
        self.allow_http = allow_http
        self.timeout = timeout
        self.ssl_context = ssl_context
        self.clock = clock
        self.random = random

    def bind(self, server_url: str) -> ClientAuth:
        """The authorization state for one MCP server URL."""
        return ClientAuth(server_url, grant=self.grant, random=self.random, scopes=self.scopes, dpop=self.dpop,
                          client_assertion=self.client_assertion, max_attempts=self.max_attempts,
                          allow_http=self.allow_http)

    async def fetch(self, call: HttpCall) -> HttpReply:
        return await fetch(call, timeout=self.timeout, ssl_context=self.ssl_context)

    async def run(self, auth: ClientAuth, flow: AuthorizationFlow) -> None:
        """Run ``flow`` to the end and give its credentials to ``auth`` (and the store)."""
        step: Step = flow.start(now=self.clock())
        for _ in range(MAX_STEPS):
            if isinstance(step, Authorized):
                if step.registered and step.credentials.client is not None:
                    self.store.save_client(step.credentials.issuer, step.credentials.client)
                self.store.save(step.credentials)
                auth.authorized(step)
                return
            if isinstance(step, Fetch):
                step = flow.receive_response(await self.fetch(step.request), now=self.clock())
            elif isinstance(step, NeedCredentials):
                client = self.clients.get(step.issuer) or self.store.client(step.issuer) or self.client
                stored = self.store.load(step.issuer, step.resource)
                step = flow.receive_credentials(client=client, stored=stored, now=self.clock())
            else:
                if self.redirect is None:
                    raise AuthError("authorization_denied", "the authorization code grant needs a redirect handler")
                step = flow.receive_redirect(await self.redirect(step), now=self.clock())
        raise AuthError("too_many_attempts", f"the authorization flow took more than {MAX_STEPS} steps")


async def follow_redirect(oauth: OAuth, step: Authorize) -> str:
    """A headless redirect handler: GET the authorization URL and return the ``Location`` it
    redirects to. For authorization servers that approve without a person (tests, CI)."""
    reply = await oauth.fetch(HttpCall(method="GET", url=step.url))
    location = reply.header("location")
    if reply.status not in (301, 302, 303, 307, 308) or location is None:
        raise AuthError("authorization_denied", f"the authorization endpoint answered HTTP {reply.status} without a redirect",
                        status=reply.status)
    return location
