"""mcpwire_adapters: the I/O half of mcpwire — an application layer and trio transport drivers.

The core package ``mcpwire`` never touches sockets, pipes, clocks or tasks; this package does.
:class:`App` binds handler functions to a :class:`mcpwire.Server`; the drivers feed it bytes:

- :func:`serve_http` / :func:`serve_http_until`: Streamable HTTP over trio and h11
  (limits and timeouts in :class:`HttpServerConfig`);
- :func:`serve_stdio`: newline-delimited JSON over stdin/stdout.

Example::

    app = App("demo", "1.0")

    @app.tool(description="Echo the text back")
    async def echo(ctx: Context, arguments: dict) -> str:
        return arguments.get("text", "")

    trio.run(serve_stdio, app)

Requires the ``trio`` extra (trio and h11).
"""

from .app import App, Context, NeedInput
from .http_server import HttpServerConfig, serve_http, serve_http_until
from .stdio_server import serve_stdio

__all__ = ["App", "Context", "HttpServerConfig", "NeedInput", "serve_http", "serve_http_until", "serve_stdio"]
