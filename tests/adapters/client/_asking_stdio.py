"""An initialize-era stdio server, as a command, whose tools/call sends the lines it is given
(server requests, valid or not, or text that is not JSON) and answers the call with "ok" once
as many answers came back; it logs every line it reads, as read."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

__all__ = ["asking_server"]

_SOURCE = textwrap.dedent("""
    import json, sys
    log = open(sys.argv[1], "a")
    asks = sys.argv[2].split("\\n")

    def send(text):
        sys.stdout.write(text + "\\n")
        sys.stdout.flush()

    call, answers = None, 0
    for line in sys.stdin:
        log.write(line)
        log.flush()
        message = json.loads(line)
        method = message.get("method")
        if method == "initialize":
            send(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "s", "version": "1"}}}))
        elif method == "tools/call":
            call = message["id"]
            for ask in asks:
                send(ask)
        elif method is None:
            answers += 1
            if answers == len(asks) and call is not None:
                send(json.dumps({"jsonrpc": "2.0", "id": call, "result": {"content": [{"type": "text", "text": "ok"}]}}))
""")


def asking_server(log: Path, lines: Sequence[bytes]) -> list[str]:
    """The command that starts the server: it sends ``lines`` (one each, no newline in any) on
    tools/call and logs what it reads to ``log``."""
    return [sys.executable, "-c", _SOURCE, str(log), b"\n".join(lines).decode()]
