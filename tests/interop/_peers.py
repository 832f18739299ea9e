"""Peer servers of the interop tests, run as subprocesses: each prints ``{"url": ...}`` on its
first line and stops at the end of its stdin."""

from __future__ import annotations

import contextlib
import json
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from _lines import serving

__all__ = ["OUR_SERVER", "PEERS", "SDK_SERVER", "ping_status", "served"]

PEERS = Path(__file__).resolve().parent / "peers"
OUR_SERVER, SDK_SERVER = str(PEERS / "our_server.py"), str(PEERS / "sdk_server.py")


@contextlib.contextmanager
def served(*args: str) -> Iterator[str]:
    """Run a Python peer (``script, "http", options...``); yield its URL; stop it (killed after 10 s)."""
    with serving([sys.executable, *args], r'^\{.*"url".*\}$') as ready:
        yield str(json.loads(ready.group(0))["url"])


def ping_status(url: str, session_id: str) -> int:
    """The HTTP status a ping on initialize-era session ``session_id`` gets, on a connection of its own
    (404: no such session)."""
    body = json.dumps({"jsonrpc": "2.0", "id": "probe", "method": "ping"}).encode()
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            response.read()
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)
