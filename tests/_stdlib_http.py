"""A standard-library HTTP server in a thread, on 127.0.0.1 and a free port: the foreign and
deliberately broken servers the CLI and probe tests talk to."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["serving_http"]


@contextlib.contextmanager
def serving_http(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` until the block ends (its loop polls for the end every 50 ms); yield the
    MCP URL (``http://127.0.0.1:PORT/mcp``)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
