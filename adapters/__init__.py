"""mcpwire_adapters: the I/O half of mcpwire — an application layer, drivers and ASGI.

The core package ``mcpwire`` never touches sockets, pipes, clocks or tasks; this package does.
:class:`App` binds handler functions to a :class:`mcpwire.Server`; the drivers feed it bytes:

- :func:`serve_http` / :func:`serve_http_until`: Streamable HTTP over trio and h11
  (limits and timeouts in :class:`HttpServerConfig`);
- :func:`serve_stdio`: newline-delimited JSON over stdin/stdout, on anyio (trio or asyncio);
- :class:`AsgiApp` / :func:`asgi_app`: Streamable HTTP as an ASGI 3 application for uvicorn,
  hypercorn or Starlette/FastAPI (limits in :class:`AsgiConfig`);
- :class:`WsgiApp` / :func:`wsgi_app`: Streamable HTTP as a WSGI application for gunicorn,
  waitress, uWSGI, Flask or Django (the App on an event loop in a thread of its own; limits in
  :class:`WsgiConfig`);
- :class:`BlockingClient`: the HTTP and stdio clients as plain methods for scripts and
  notebooks (the async client runs on an event loop in a thread of its own).

Example::

    app = App("demo", "1.0")

    @app.tool(description="Echo the text back")
    async def echo(ctx: Context, arguments: dict) -> str:
        return arguments.get("text", "")

    trio.run(serve_stdio, app)        # or asyncio.run(serve_stdio(app))

Every name is imported on first use, so each needs only its own extra: :class:`NeedInput`
needs only msgspec (an adapter of your own, on any event loop, answers with it too); the App
layer, :func:`serve_stdio` and the ASGI and WSGI adapters need the ``asgi`` (or ``wsgi``) extra (anyio); the HTTP
server the ``trio`` extra (trio, h11, anyio). So the ASGI adapter and stdio work without trio
installed. The clients (:mod:`mcpwire_adapters.client.http`,
:mod:`mcpwire_adapters.client.stdio`) are on anyio too, the same classes under asyncio and
trio, with the ``client`` extra (anyio, h11).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import _moved
from .app.need_input import NeedInput
from .errors import McpwireAdapterError

if TYPE_CHECKING:
    from .app.app import App, Context
    from .app.tool_error import ToolError
    from .client.blocking import BlockingClient
    from .client.http import HttpClient
    from .client.stdio import StdioClient
    from .serve.asgi.app import AsgiApp, AsgiConfig, asgi_app
    from .serve.stdio import serve_stdio
    from .serve.wsgi.app import WsgiApp, WsgiConfig, wsgi_app
    from .serve.trio_h11.server import HttpServerConfig, serve_http, serve_http_until

__all__ = [
    "App", "AsgiApp", "AsgiConfig", "BlockingClient", "Context", "HttpClient", "HttpServerConfig", "McpwireAdapterError",
    "NeedInput", "StdioClient", "ToolError", "WsgiApp", "WsgiConfig", "asgi_app", "serve_http", "serve_http_until",
    "serve_stdio", "wsgi_app",
]

_LAZY = {
    "App": "app.app", "Context": "app.app", "ToolError": "app.tool_error",
    "AsgiApp": "serve.asgi.app", "AsgiConfig": "serve.asgi.app", "asgi_app": "serve.asgi.app",
    "BlockingClient": "client.blocking", "HttpClient": "client.http", "StdioClient": "client.stdio",
    "HttpServerConfig": "serve.trio_h11.server", "serve_http": "serve.trio_h11.server",
    "serve_http_until": "serve.trio_h11.server", "serve_stdio": "serve.stdio",
    "WsgiApp": "serve.wsgi.app", "WsgiConfig": "serve.wsgi.app", "wsgi_app": "serve.wsgi.app",
}
_moved.install()


def __getattr__(name: str) -> Any:
    # anyio (the App layer, ASGI, the clients) and trio/h11 (the trio drivers) load only when asked for.
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)
