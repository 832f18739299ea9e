"""Real WSGI servers for the tests of ``WsgiApp`` (``tests/adapters/serve/wsgi``) and of the App's
middleware under every driver (``tests/adapters/app``): :func:`served` runs ``wsgi_serve.py``
(gunicorn with its sync or gthread worker, or waitress) in a process of its own on 127.0.0.1
and a port the OS picks, serving a module of a test folder, and stops it when the test is done
(its stdin closed: it stops by itself, and is killed after 10 s); and the raw HTTP the tests
speak to them (``http.client``, every read under a socket timeout)."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from _lines import LineQueue, stop_by_stdin

__all__ = [
    "GUNICORN", "SERVERS", "THREADED", "TIMEOUT", "WSGI_SITES", "call_body", "headers_for", "open_post", "post", "served",
    "sse_events", "wait_for_file",
]

SERVE = Path(__file__).resolve().parent / "wsgi_serve.py"
WSGI_SITES = Path(__file__).resolve().parent / "adapters" / "serve" / "wsgi"
"""The folder of the WSGI tests' sites (``site_app``, ``flask_site``, ``django_wsgi``)."""
SERVERS = ("gunicorn-sync", "gunicorn-gthread", "waitress")
GUNICORN = ("gunicorn-sync", "gunicorn-gthread")
THREADED = ("gunicorn-gthread", "waitress")  # wsgi.multithread: long-lived streams are served
TIMEOUT = 15.0
VERSION = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": {}}


@contextlib.contextmanager
def served(server: str, module: str, folder: Path, *, env: dict[str, str] | None = None, workers: int = 1,
           threads: int = 8, where: Path = WSGI_SITES) -> Iterator[str]:
    """Run ``module``'s application (a module of the folder ``where``) under ``server``; yield its
    base URL (``http://127.0.0.1:PORT``). Its stderr goes to ``folder / "<server>-<module>.log"``."""
    command = [sys.executable, str(SERVE), server, module, "--workers", str(workers), "--threads", str(threads)]
    with (folder / f"{server}-{module}.log").open("w") as log:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True,
                                   env={**os.environ, **(env or {})}, cwd=where)
    assert process.stdout is not None and process.stdin is not None
    try:
        ready = LineQueue(process.stdout, timeout=30).wait_for(r'^\{.*"url".*\}$')
        url = str(json.loads(ready.group(0))["url"])
        _wait_until_answering(url)
        yield url
    finally:
        stop_by_stdin(process)


def _wait_until_answering(url: str) -> None:
    # The socket listens before the workers boot: wait until one answers (a GET: 405, or a site's page).
    deadline = time.monotonic() + 30
    while True:
        try:
            conn = _connection(url)
            conn.request("GET", "/")
            conn.getresponse().read()
            conn.close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _connection(url: str, timeout: float = TIMEOUT) -> http.client.HTTPConnection:
    parts = urlsplit(url)
    return http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=timeout)


def headers_for(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": VERSION, "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    return {**headers, **extra}


def call_body(method: str, params: dict[str, Any] | None = None, token: str | None = None, request_id: int = 1) -> bytes:
    meta = {**META, "progressToken": token} if token is not None else META
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method,
                       "params": {**(params or {}), "_meta": meta}}).encode()


def post(url: str, path: str, body: bytes, headers: dict[str, str], method: str = "POST") -> tuple[int, dict[str, str], bytes]:
    """One request on a connection of its own: (status, headers with lowercase names, body)."""
    conn = _connection(url)
    try:
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def open_post(url: str, path: str, body: bytes, headers: dict[str, str]) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
    """A request whose response the test reads itself (an event stream)."""
    conn = _connection(url)
    conn.request("POST", path, body=body, headers=headers)
    return conn, conn.getresponse()


def sse_events(response: http.client.HTTPResponse) -> Iterator[tuple[float, dict[str, Any] | str]]:
    """Each event of an event stream as it arrives: (time.monotonic(), its JSON data), or a
    comment line's text."""
    while True:
        line = response.readline()
        if not line:
            return
        text = line.decode().rstrip("\r\n")
        if text.startswith("data:"):
            yield time.monotonic(), json.loads(text[5:])
        elif text.startswith(":"):
            yield time.monotonic(), text


def wait_for_file(path: Path, timeout: float = TIMEOUT) -> bool:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
