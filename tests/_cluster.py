"""Many ``mcpwire serve --redis`` processes behind a round-robin TCP proxy, for
tests/integration/test_redis_cluster.py: :class:`Proxy` (127.0.0.1 only; each new connection
goes to the next backend that accepts it, as a load balancer with health checks would send
it), :class:`Served` (one server process), raw HTTP helpers for both revisions
(:func:`post`, :func:`session_post`) and :class:`SseReader` (a stream read in a thread).

Every wait has a deadline; processes and threads stop with the test that made them."""

from __future__ import annotations

import http.client
import itertools
import json
import queue
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from _lines import LineQueue

__all__ = ["Proxy", "Served", "SseReader", "post", "session_post", "TIMEOUT"]

REPO = Path(__file__).resolve().parent.parent
APP = REPO / "tests" / "cluster_app.py"
TIMEOUT = 20.0
VERSION = "2026-07-28"
ERA = "2025-11-25"
CAPABILITIES: dict[str, Any] = {"extensions": {"io.modelcontextprotocol/tasks": {}}, "elicitation": {"form": {}}}
META = {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": CAPABILITIES}
Address = tuple[str, int]


class Served:
    """``mcpwire serve tests/cluster_app.py:app --redis URL ...`` in a child process."""

    def __init__(self, redis_url: str, keys: Path, *options: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mcpwire_adapters.cli", "serve", f"{APP}:app", "--port", "0",
             "--redis", redis_url, "--keys", str(keys), *options],
            cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        assert self.process.stderr is not None
        self.stderr = LineQueue(self.process.stderr, TIMEOUT)
        url = urlsplit(self.stderr.wait_for(r"serving cluster-app 1\.0 at (http://127\.0\.0\.1:\d+/mcp)").group(1))
        self.address: Address = (url.hostname or "", url.port or 0)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                self.kill()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=TIMEOUT)


class Proxy:
    """A round-robin TCP proxy on 127.0.0.1: each connection to :attr:`address` is piped to the
    next backend that accepts a connection. :attr:`served` records which backend took each."""

    def __init__(self, backends: list[Address]) -> None:
        self.backends = backends
        self.served: list[Address] = []
        self._next = itertools.cycle(range(len(backends)))
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.address: Address = ("127.0.0.1", self._listener.getsockname()[1])
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._connect, args=(client,), daemon=True).start()

    def _connect(self, client: socket.socket) -> None:
        with client:
            for _ in range(len(self.backends)):
                backend = self.backends[next(self._next)]
                try:
                    upstream = socket.create_connection(backend, timeout=TIMEOUT)
                except OSError:
                    continue  # down: the next one
                self.served.append(backend)
                with upstream:
                    upstream.settimeout(None)
                    client.settimeout(None)
                    there = threading.Thread(target=_pipe, args=(upstream, client), daemon=True)
                    there.start()
                    _pipe(client, upstream)
                    there.join(TIMEOUT)
                return

    def close(self) -> None:
        self._stop.set()
        self._listener.close()
        self._thread.join(TIMEOUT)


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    try:
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def _exchange(address: Address, body: bytes, headers: dict[str, str], method: str = "POST") -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection(*address, timeout=TIMEOUT)
    try:
        connection.request(method, "/mcp", body, {"connection": "close", **headers})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def _answer(status: int, headers: dict[str, str], data: bytes) -> tuple[int, dict[str, Any] | None]:
    if not data:
        return status, None
    if headers.get("content-type", "").startswith("text/event-stream"):
        events = [json.loads(line[5:]) for line in data.decode().splitlines() if line.startswith("data:")]
        return status, next((e for e in events if "id" in e), None)
    return status, json.loads(data)


def post(address: Address, method: str, params: dict[str, Any], *, name: str | None = None,
         request_id: int = 1) -> tuple[int, dict[str, Any] | None]:
    """One 2026-07-28 request: the HTTP status and its JSON-RPC response."""
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method,
                       "params": {**params, "_meta": META}}).encode()
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
               "mcp-protocol-version": VERSION, "mcp-method": method}
    if name is not None:
        headers["mcp-name"] = name
    return _answer(*_exchange(address, body, headers))


def session_post(address: Address, message: dict[str, Any], session: str | None = None,
                 ) -> tuple[int, dict[str, Any] | None, str | None]:
    """One initialize-era message: the status, the JSON-RPC response, the Mcp-Session-Id sent back."""
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
               "mcp-protocol-version": ERA}
    if session is not None:
        headers["mcp-session-id"] = session
    status, head, data = _exchange(address, json.dumps(message).encode(), headers)
    return (*_answer(status, head, data), head.get("mcp-session-id"))


class SseReader:
    """An SSE response read in a thread: a 2026-07-28 listen stream (:meth:`listen`) or an
    initialize-era GET stream (:meth:`get`); :meth:`next` is its next JSON-RPC message."""

    def __init__(self, address: Address, method: str, body: bytes, headers: dict[str, str]) -> None:
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self.connection = http.client.HTTPConnection(*address, timeout=TIMEOUT * 3)
        self.connection.request(method, "/mcp", body, headers)
        self.response = self.connection.getresponse()
        assert self.response.status == 200, (self.response.status, self.response.read())
        threading.Thread(target=self._read, daemon=True).start()

    @classmethod
    def listen(cls, address: Address, notifications: dict[str, Any]) -> SseReader:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
                           "params": {"notifications": notifications, "_meta": META}}).encode()
        return cls(address, "POST", body, {"content-type": "application/json", "mcp-method": "subscriptions/listen",
                                           "accept": "application/json, text/event-stream",
                                           "mcp-protocol-version": VERSION})

    @classmethod
    def get(cls, address: Address, session: str) -> SseReader:
        return cls(address, "GET", b"", {"accept": "text/event-stream", "mcp-session-id": session,
                                         "mcp-protocol-version": ERA})

    def _read(self) -> None:
        try:
            for raw in self.response:
                line = raw.decode().rstrip("\r\n")
                if line.startswith("data:") and line[5:].strip():  # not a 2025-11-25 priming event
                    self.messages.put(json.loads(line[5:]))
        except (OSError, ValueError, AttributeError, http.client.HTTPException):  # AttributeError: closed under us
            pass

    def next(self, method: str | None = None) -> dict[str, Any]:
        """The next message (with ``method``: the next one of that method)."""
        while True:
            message = self.messages.get(timeout=TIMEOUT)
            if method is None or message.get("method") == method:
                return message

    def close(self) -> None:
        # Shut the socket down first: the reading thread holds the response's buffer while it
        # waits, so a plain close would wait for the server's next keepalive.
        if self.connection.sock is not None:
            try:
                self.connection.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.connection.close()
