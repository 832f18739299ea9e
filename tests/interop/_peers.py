"""Peer servers of the interop tests, run as subprocesses: each prints ``{"url": ...}`` on its
first line and stops at the end of its stdin."""

from __future__ import annotations

import contextlib
import json
import select
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

__all__ = ["OUR_SERVER", "PEERS", "SDK_SERVER", "ping_status", "served"]

PEERS = Path(__file__).resolve().parent / "peers"
OUR_SERVER, SDK_SERVER = str(PEERS / "our_server.py"), str(PEERS / "sdk_server.py")


@contextlib.contextmanager
def served(*args: str) -> Iterator[str]:
    """Run a Python peer (``script, "http", options...``); yield its URL; stop it (killed after 10 s)."""
    process = subprocess.Popen([sys.executable, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None and process.stdin is not None
    try:
        ready, _, _ = select.select([process.stdout], [], [], 15)
        assert ready, f"{args} printed no URL within 15 s"
        yield str(json.loads(process.stdout.readline())["url"])
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            process.kill()
            process.wait()


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
