"""OAuth for the ``mcpwire`` command (docs/cli.md, docs/auth.md): a person's authorization
through the browser and a loopback redirect for ``inspect`` and ``call``, and the resource
server options of ``serve``. Loaded only when an OAuth option is given."""

from __future__ import annotations

import argparse
import contextlib
import webbrowser
from pathlib import Path
from urllib.parse import urlsplit

import h11
import trio

from mcpwire.auth import AuthorizationCode, Authorize, ResourceServer

from .terminal import EXIT_USAGE, CliError, Terminal, clean
from ..oauth.client import OAuth
from ..oauth.resource_server import OAuthResource
from ..oauth.store import FileTokenStore

__all__ = ["DEFAULT_TOKEN_STORE", "browser_oauth", "resource_guard"]

DEFAULT_TOKEN_STORE = Path("~/.mcpwire/tokens.json")
AUTHORIZE_TIMEOUT = 300.0  # seconds a person has to finish in the browser
_DONE_PAGE = b"<!doctype html><title>mcpwire</title><p>Authorized. You can close this window.</p>\n"


class Loopback:
    """The redirect URI ``http://127.0.0.1:<port>/callback`` (RFC 8252 section 7.3), listened
    on from before the flow starts, for one callback."""

    def __init__(self, listener: trio.SocketListener, term: Terminal) -> None:
        self.listener = listener
        self.port = listener.socket.getsockname()[1]
        self.redirect_uri = f"http://127.0.0.1:{self.port}/callback"
        self.term = term

    async def __call__(self, step: Authorize) -> str:
        """Open the browser at the authorization URL and wait for it to come back."""
        self.term.say(f"mcpwire: authorize in your browser (it should open by itself): {clean(step.url)}")
        path = urlsplit(self.redirect_uri).path
        async with trio.open_nursery() as nursery:
            # The browser may only return once the page loaded: listen meanwhile.
            nursery.start_soon(_open_browser, step.url)
            with trio.fail_after(AUTHORIZE_TIMEOUT):
                while True:
                    stream = await self.listener.accept()
                    try:
                        target = await _one_request(stream)
                    finally:
                        await trio.aclose_forcefully(stream)
                    if target is not None and urlsplit(target).path == path:
                        return f"http://127.0.0.1:{self.port}{target}"
        raise AssertionError("unreachable")  # pragma: no cover


async def _open_browser(url: str) -> None:
    await trio.to_thread.run_sync(webbrowser.open, url)


async def _one_request(stream: trio.abc.Stream) -> str | None:
    """Read one request head, answer it with the done page, return its target."""
    conn = h11.Connection(h11.SERVER, max_incomplete_event_size=16 * 1024)
    with trio.move_on_after(10), contextlib.suppress(trio.BrokenResourceError, h11.RemoteProtocolError):
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(bytes(await stream.receive_some(16 * 1024)))
                continue
            if not isinstance(event, h11.Request):
                return None
            headers = [(b"content-type", b"text/html; charset=utf-8"), (b"content-length", str(len(_DONE_PAGE)).encode()),
                       (b"connection", b"close")]
            await stream.send_all(conn.send(h11.Response(status_code=200, headers=headers)) or b"")
            await stream.send_all((conn.send(h11.Data(data=_DONE_PAGE)) or b"") + (conn.send(h11.EndOfMessage()) or b""))
            return event.target.decode("ascii", "replace")
    return None


async def browser_oauth(args: argparse.Namespace, term: Terminal) -> tuple[OAuth, trio.SocketListener]:
    """The OAuth of ``inspect``/``call --oauth``: the authorization code grant through the
    browser, tokens kept in ``--token-store`` (0600). Close the returned listener when done."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    loopback = Loopback(listeners[0], term)
    store = FileTokenStore(Path(args.token_store or DEFAULT_TOKEN_STORE).expanduser())
    grant = AuthorizationCode(redirect_uri=loopback.redirect_uri, client_name="mcpwire-cli")
    return OAuth(grant=grant, redirect=loopback, store=store, scopes=args.oauth_scope or None), listeners[0]


def resource_guard(args: argparse.Namespace) -> OAuthResource | None:
    """The ``serve --oauth-issuer`` guard: JWT access tokens from that issuer, for this resource."""
    if args.oauth_issuer is None:
        if args.oauth_jwks_url or args.oauth_resource or args.oauth_scope:
            raise CliError("--oauth-jwks-url, --oauth-resource and --oauth-scope need --oauth-issuer", EXIT_USAGE)
        return None
    if args.transport != "http":
        raise CliError("OAuth protects an HTTP server (stdio servers are not authorized this way)", EXIT_USAGE)
    try:
        from ..oauth.jose import JwtVerifier
    except ImportError as exc:  # pragma: no cover - the extra is missing
        raise CliError(f"--oauth-issuer needs the oauth extra (pip install 'mcpwire[oauth]'): {exc}", EXIT_USAGE) from None
    resource = args.oauth_resource
    if resource is None:
        if args.port == 0:
            raise CliError("--oauth-issuer with --port 0 needs --oauth-resource (the URL clients use)", EXIT_USAGE)
        authority = f"[{args.host}]" if ":" in args.host else args.host
        resource = f"http://{authority}:{args.port}/mcp"
    if args.oauth_jwks_url is None:
        raise CliError("--oauth-issuer needs --oauth-jwks-url (the issuer's jwks_uri)", EXIT_USAGE)
    try:
        server = ResourceServer(resource=resource, authorization_servers=[args.oauth_issuer],
                                required_scopes=args.oauth_scope)
        verifier = JwtVerifier(issuer=args.oauth_issuer, audience=resource, jwks_url=args.oauth_jwks_url)
    except Exception as exc:  # an AuthError for an endpoint that is not https, say
        raise CliError(f"bad OAuth options: {exc}", EXIT_USAGE) from None
    return OAuthResource(server, verifier)
