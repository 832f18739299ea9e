"""The App of ``middleware_app.py`` behind the OAuth guard, as the tests of
``test_middleware_drivers.py`` run it under every driver: :func:`guard` makes the guard (JWT
access tokens of ``issuer`` for ``resource``, checked against the public key set ``jwks``).

Served by ``tests/wsgi_serve.py`` under gunicorn, in a process of its own, it is the WSGI
application (``application``, and ``wsgi``, the :class:`WsgiApp` the server's shutdown hooks
close), its guard made from the JSON object of keyword arguments in ``MIDDLEWARE_TEST_GUARD``.
"""

from __future__ import annotations

import json
import os
from typing import Any

from middleware_app import build_app

from mcpwire.auth import ResourceServer
from mcpwire_adapters import WsgiApp, WsgiConfig
from mcpwire_adapters.oauth.jose import JwtVerifier
from mcpwire_adapters.oauth.resource_server import OAuthResource

GUARD = "MIDDLEWARE_TEST_GUARD"


def guard(issuer: str, resource: str, jwks: dict[str, Any]) -> OAuthResource:
    rs = ResourceServer(resource=resource, authorization_servers=[issuer], required_scopes=["mcp"])
    return OAuthResource(rs, JwtVerifier(issuer=issuer, audience=resource, jwks=jwks))


if GUARD in os.environ:  # served by wsgi_serve.py: the guard the test made
    wsgi = WsgiApp(build_app(), config=WsgiConfig(auth=guard(**json.loads(os.environ[GUARD]))))
    application = wsgi
