"""mcpwire_adapters: the I/O half of mcpwire — an application layer, trio drivers and ASGI.

The core package ``mcpwire`` never touches sockets, pipes, clocks or tasks; this package does.
:class:`App` binds handler functions to a :class:`mcpwire.Server`; the drivers feed it bytes:

- :func:`serve_http` / :func:`serve_http_until`: Streamable HTTP over trio and h11
  (limits and timeouts in :class:`HttpServerConfig`);
- :func:`serve_stdio`: newline-delimited JSON over stdin/stdout;
- :class:`AsgiApp` / :func:`asgi_app`: Streamable HTTP as an ASGI 3 application for uvicorn,
  hypercorn or Starlette/FastAPI (limits in :class:`AsgiConfig`).

Example::

    app = App("demo", "1.0")

    @app.tool(description="Echo the text back")
    async def echo(ctx: Context, arguments: dict) -> str:
        return arguments.get("text", "")

    trio.run(serve_stdio, app)

The App layer and the ASGI adapter need the ``asgi`` extra (anyio); the trio drivers the
``trio`` extra (trio, h11, anyio). The trio drivers are imported on first use, so the ASGI
adapter works without trio installed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .app import App, Context, NeedInput
from .asgi import AsgiApp, AsgiConfig, asgi_app

if TYPE_CHECKING:
    from .http_server import HttpServerConfig, serve_http, serve_http_until
    from .stdio_server import serve_stdio

__all__ = [
    "App", "AsgiApp", "AsgiConfig", "Context", "HttpServerConfig", "NeedInput", "asgi_app", "serve_http",
    "serve_http_until", "serve_stdio",
]

_TRIO_DRIVERS = {
    "HttpServerConfig": "http_server", "serve_http": "http_server", "serve_http_until": "http_server",
    "serve_stdio": "stdio_server",
}


def __getattr__(name: str) -> Any:
    # The trio drivers import trio and h11 (extra "trio"): load them only when asked for.
    module = _TRIO_DRIVERS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)
