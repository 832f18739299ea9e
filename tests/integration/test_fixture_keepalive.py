"""The conformance fixture under uvicorn, hypercorn and gunicorn keeps an idle kept-alive
connection open far longer than clients keep one (Node's fetch closes its own after 4 s).

With those servers' defaults (5, 5 and 2 s) a client that sends on a connection just as the
server closes it gets no answer at all, and a POST is not retried: the official runner then
reports "fetch failed". Here each server sees one request, an idle pause past all three
defaults, and a second request on the same connection, which must be answered; then each stops
on the end of its stdin, with that connection still open, within the 5 s the runner allows.
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from _lines import FIXTURE_READY, LineQueue

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "conformance"))

import fixture  # noqa: E402 - the conformance folder is not a package

COMMANDS = {
    "asgi-uvicorn": [str(REPO / "conformance" / "fixture.py"), "--server", "asgi-uvicorn"],
    "asgi-hypercorn": [str(REPO / "conformance" / "fixture.py"), "--server", "asgi-hypercorn"],
    "wsgi-gunicorn": [str(REPO / "conformance" / "fixture_wsgi.py"), "--threads", "4"],
}
IDLE = 5.5  # past uvicorn's and hypercorn's 5 s and gunicorn's 2 s
VERSION = "2026-07-28"
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": VERSION,
    "Mcp-Method": "server/discover",
}


def discover(conn: http.client.HTTPConnection, number: int) -> None:
    meta = {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": {}}
    body = {"jsonrpc": "2.0", "id": number, "method": "server/discover", "params": {"_meta": meta}}
    conn.request("POST", "/mcp", body=json.dumps(body).encode(), headers=HEADERS)
    response = conn.getresponse()
    answer = json.loads(response.read())
    assert response.status == 200 and answer["id"] == number and "result" in answer


def test_the_fixture_keeps_idle_connections_longer_than_its_clients() -> None:
    pytest.importorskip("uvicorn")
    pytest.importorskip("hypercorn")
    pytest.importorskip("gunicorn")
    assert fixture.KEEPALIVE_IDLE > IDLE
    processes = {
        name: subprocess.Popen([sys.executable, *command, "--port", "0"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        for name, command in COMMANDS.items()
    }
    try:
        connections: dict[str, http.client.HTTPConnection] = {}
        for name, process in processes.items():
            assert process.stdout is not None
            ready = LineQueue(process.stdout, timeout=30).wait_for(FIXTURE_READY)
            port = urlsplit(json.loads(ready.group(0))["url"]).port
            connections[name] = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            discover(connections[name], 1)
        time.sleep(IDLE)
        for name, conn in connections.items():
            sock = conn.sock
            discover(conn, 2)  # closed by the server: BrokenPipeError or RemoteDisconnected
            assert conn.sock is sock, f"{name}: the second request went on a new connection"
        for process in processes.values():
            assert process.stdin is not None
            process.stdin.close()
        for name, process in processes.items():
            assert process.wait(5) == 0, name
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.kill()
                process.wait()
