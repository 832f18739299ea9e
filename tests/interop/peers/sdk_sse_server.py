"""The official Python SDK (``mcp`` 2.3.0) over the HTTP+SSE transport of revision 2024-11-05,
for ``mcpwire probe`` and ``mcpwire fuzz``: ``sdk_server.py``'s MCPServer (``plain``: the SDK's
own handlers) served by its ``sse_app()`` (GET /sse opens the stream, whose first event names
the POST endpoint /messages/?session_id=...), with the SDK's default transport security for
127.0.0.1. Prints ``{"url": ".../sse"}`` and stops at the end of stdin.

    python tests/interop/peers/sdk_sse_server.py
"""

from __future__ import annotations

import json
import socket
import sys
import threading

import uvicorn
from sdk_server import build

if __name__ == "__main__":
    app = build(plain=True).sse_app(host="127.0.0.1")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    runner = uvicorn.Server(uvicorn.Config(app, log_level="warning"))

    def stop_at_eof() -> None:
        sys.stdin.read()
        runner.should_exit = True

    threading.Thread(target=stop_at_eof, daemon=True).start()
    print(json.dumps({"url": f"http://127.0.0.1:{sock.getsockname()[1]}/sse"}), flush=True)
    runner.run(sockets=[sock])
