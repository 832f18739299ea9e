"""A Flask site with routes of its own and the MCP endpoint mounted at ``/mcp`` with werkzeug's
``DispatcherMiddleware`` (docs/wsgi.md): the App's ``HttpPolicy(path="/")`` is the mount point
itself, so ``/mcp`` and ``/mcp/`` both reach it."""

from __future__ import annotations

from flask import Flask, Response, jsonify
from site_app import build_app, config
from werkzeug.middleware.dispatcher import DispatcherMiddleware

from mcpwire_adapters import WsgiApp

site = Flask(__name__)


@site.get("/")
def home() -> str:
    return "the Flask home page"


@site.post("/api/items")
def items() -> Response:
    return jsonify(created=True)


wsgi = WsgiApp(build_app(path="/"), config=config())
site.wsgi_app = DispatcherMiddleware(site.wsgi_app, {"/mcp": wsgi})  # type: ignore[method-assign]
application = site
