"""Many ``mcpwire serve --redis`` processes behind a round-robin TCP proxy, for
tests/integration/test_redis_cluster*.py: :class:`Cluster` (three of them and the proxy),
:class:`Proxy` (127.0.0.1 only; each new connection goes to the next backend that accepts it,
as a load balancer with health checks would send it), :class:`Served` (one server process),
raw HTTP helpers for both revisions (:func:`post`, :func:`session_post`, :func:`open_session`,
:func:`session_request`) and :class:`SseReader` (a stream read in a thread, its events with
their ids).

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
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from _lines import LineQueue
from _redis import RedisServer

__all__ = [
    "Cluster", "Proxy", "Refused", "Served", "SseEvent", "SseReader", "TIMEOUT", "open_session", "post", "session_post",
    "session_request",
]

REPO = Path(__file__).resolve().parent.parent
APP = REPO / "tests" / "cluster_app.py"
TIMEOUT = 20.0
VERSION = "2026-07-28"
ERA = "2025-11-25"
PREFIX = "cluster-test:"
CAPABILITIES: dict[str, Any] = {"extensions": {"io.modelcontextprotocol/tasks": {}}, "elicitation": {"form": {}}}
META = {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": CAPABILITIES}
Address = tuple[str, int]


class Served:
    """``mcpwire serve tests/cluster_app.py:app --redis URL ...`` in a child process (without a
    Redis URL: one process on its memory stores, its tasks in memory)."""

    def __init__(self, redis_url: str | None, keys: Path, *options: str) -> None:
        state = ["--redis", redis_url] if redis_url is not None else ["--tasks-db", ":memory:"]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mcpwire_adapters.cli", "serve", f"{APP}:app", "--port", "0",
             *state, "--keys", str(keys), *options],
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


class Cluster:
    """Three ``mcpwire serve`` processes on one Redis (key prefix :data:`PREFIX`) behind a
    :class:`Proxy`; :meth:`close` kills them."""

    def __init__(self, redis_server: RedisServer, keys: Path) -> None:
        self.redis = redis_server
        self.servers: list[Served] = []
        try:
            for _ in range(3):
                self.servers.append(Served(redis_server.url, keys, "--redis-prefix", PREFIX))
        except BaseException:
            self.close()
            raise
        self.proxy = Proxy([s.address for s in self.servers])

    def close(self) -> None:
        if hasattr(self, "proxy"):
            self.proxy.close()
        for server in self.servers:
            server.kill()


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


def _exchange(address: Address, body: bytes, headers: dict[str, str], method: str = "POST",
              ) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection(*address, timeout=TIMEOUT)
    try:
        connection.request(method, "/mcp", body, {"connection": "close", **headers})
        response = connection.getresponse()
        head = {k.lower(): v for k, v in response.getheaders()}
        if method == "GET" and head.get("content-type", "").startswith("text/event-stream"):
            return response.status, head, b""  # an open stream: its status is the answer (closed unread)
        return response.status, head, response.read()
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


def open_session(address: Address, capabilities: dict[str, Any] | None = None) -> str:
    """A 2025-11-25 session opened (``initialize``, ``notifications/initialized``) on ``address``."""
    status, answer, session = session_post(address, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": ERA, "capabilities": capabilities or {}, "clientInfo": {"name": "c", "version": "1"}}})
    assert status == 200 and answer is not None and session is not None, answer
    assert session_post(address, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)[0] == 202
    return session


def session_request(address: Address, method: str, session: str, headers: dict[str, str] | None = None,
                    ) -> tuple[int, dict[str, Any] | None]:
    """A bodiless request of a session (a GET answered at once, a DELETE): the status and its
    JSON-RPC body, if any."""
    status, head, data = _exchange(address, b"", {"accept": "text/event-stream", "mcp-session-id": session,
                                                  "mcp-protocol-version": ERA, **(headers or {})}, method)
    return status, json.loads(data) if data and head.get("content-type", "").startswith("application/json") else None


class Refused(AssertionError):
    """An SSE request answered with another status than 200: ``status`` and the JSON-RPC ``body``."""

    def __init__(self, status: int, body: dict[str, Any] | None) -> None:
        super().__init__(status, body)
        self.status = status
        self.body = body


class SseEvent(NamedTuple):
    """One SSE event of a stream: its ``id`` (``None`` without one) and its JSON-RPC message."""

    id: str | None
    message: dict[str, Any]


class SseReader:
    """An SSE response read in a thread: a 2026-07-28 listen stream (:meth:`listen`) or an
    initialize-era GET stream (:meth:`get`); :meth:`next` is its next JSON-RPC message,
    :meth:`next_event` the next one with its event id. :attr:`last_id` is the newest event id
    read (a 2025-11-25 priming event's too), :attr:`ended` is set when the stream ends."""

    def __init__(self, address: Address, method: str, body: bytes, headers: dict[str, str]) -> None:
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self.events: queue.Queue[SseEvent] = queue.Queue()
        self.last_id: str | None = None
        self.ended = threading.Event()
        self.connection = http.client.HTTPConnection(*address, timeout=TIMEOUT * 3)
        self.connection.request(method, "/mcp", body, headers)
        self.response = self.connection.getresponse()
        if self.response.status != 200:
            body = self.response.read()
            self.connection.close()
            raise Refused(self.response.status, json.loads(body) if body else None)
        threading.Thread(target=self._read, daemon=True).start()

    @classmethod
    def listen(cls, address: Address, notifications: dict[str, Any]) -> SseReader:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
                           "params": {"notifications": notifications, "_meta": META}}).encode()
        return cls(address, "POST", body, {"content-type": "application/json", "mcp-method": "subscriptions/listen",
                                           "accept": "application/json, text/event-stream",
                                           "mcp-protocol-version": VERSION})

    @classmethod
    def get(cls, address: Address, session: str, last_event_id: str | None = None) -> SseReader:
        resume = {} if last_event_id is None else {"last-event-id": last_event_id}
        return cls(address, "GET", b"", {"accept": "text/event-stream", "mcp-session-id": session,
                                         "mcp-protocol-version": ERA, **resume})

    @classmethod
    def session_call(cls, address: Address, session: str, message: dict[str, Any]) -> SseReader:
        """A session's POST whose answer is an event stream."""
        return cls(address, "POST", json.dumps(message).encode(), {
            "content-type": "application/json", "accept": "application/json, text/event-stream",
            "mcp-session-id": session, "mcp-protocol-version": ERA})

    def _read(self) -> None:
        event_id: str | None = None
        data: list[str] = []
        try:
            for raw in self.response:
                line = raw.decode().rstrip("\r\n")
                if line.startswith("id:"):
                    event_id = self.last_id = line[3:].strip()
                elif line.startswith("data:"):
                    data.append(line[5:])
                elif not line:
                    text = "\n".join(data).strip()
                    if text:  # not a 2025-11-25 priming event
                        message = json.loads(text)
                        self.events.put(SseEvent(event_id, message))
                        self.messages.put(message)
                    event_id, data = None, []
        except (OSError, ValueError, AttributeError, http.client.HTTPException):  # AttributeError: closed under us
            pass
        finally:
            self.ended.set()

    def next(self, method: str | None = None) -> dict[str, Any]:
        """The next message (with ``method``: the next one of that method)."""
        while True:
            message = self.messages.get(timeout=TIMEOUT)
            if method is None or message.get("method") == method:
                return message

    def next_event(self, method: str | None = None) -> SseEvent:
        """The next event (with ``method``: the next one of that method). Use either this or
        :meth:`next` on one reader, not both."""
        while True:
            event = self.events.get(timeout=TIMEOUT)
            if method is None or event.message.get("method") == method:
                return event

    def wait_ended(self) -> None:
        """Wait (at most :data:`TIMEOUT`) for the server to end the stream."""
        assert self.ended.wait(TIMEOUT), "the stream did not end"

    def close(self) -> None:
        # Shut the socket down first: the reading thread holds the response's buffer while it
        # waits, so a plain close would wait for the server's next keepalive.
        if self.connection.sock is not None:
            try:
                self.connection.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.connection.close()
