"""Small raw servers of the initialize era for the probe's and the fuzzer's tests, each right
about every rule the probe checks but the one ``fault`` names (None: right about all of them):

- :func:`session_server`: Streamable HTTP of one revision (2025-11-25, 2025-06-18, 2025-03-26)
  with sessions, a GET stream that starts with an event id, batches in 2025-03-26;
- :func:`legacy_server`: the HTTP+SSE transport of 2024-11-05 (a GET stream whose first event
  names the POST endpoint; the answers come back on the stream).

Both are standard-library handlers, served by ``_stdlib_http.serving_http`` (127.0.0.1, a thread
per connection, every stream bounded in time). ``_era_stdio_server.py`` is the stdio one.
"""

from __future__ import annotations

import itertools
import json
import queue
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["LEGACY_FAULTS", "SESSION_FAULTS", "answer", "legacy_server", "session_server"]


# Each fault breaks one rule: the check it makes fail, as "check id" (the key adds the revision).
SESSION_FAULTS = {
    "negotiation": "era.version-negotiation", "initialize-result": "era.initialize-result", "wrong-id": "era.ping",
    "ping-nonempty": "era.ping", "ids": "era.ids-echoed", "unknown-method": "era.unknown-method",
    "id-null": "era.id-null-answered", "parse-error": "era.parse-error", "notification": "era.notification",
    "tools-list": "era.tools-list", "content-type": "era.content-type", "session-id": "era.session-id-visible",
    "session-echo": "era.session-unknown", "keep-deleted": "era.session-deleted",
    "version-header": "era.version-header-unsupported", "get-response": "era.get-stream",
    "resume": "era.resume", "origin": "era.origin-foreign-refused", "no-batch": "era.batch-received",
    "task-unknown": "era.tasks-unknown", "event-ids": "era.event-ids-unique",
}
LEGACY_FAULTS = {"no-endpoint": "legacy.endpoint-first", "answer-on-post": "legacy.answered-on-stream",
                 "origin": "legacy.origin-foreign-refused", "message-event": "legacy.answered-on-stream",
                 "wrong-id": "era.ping"}
STREAM_SECONDS = 0.3  # how long a GET stream stays open after its first event
MAX_STREAM = 20.0  # an HTTP+SSE stream ends after this long at the most


def _foreign(headers: Any) -> bool:
    origin = headers.get("Origin")
    return origin is not None and not origin.startswith(("http://127.0.0.1", "http://localhost"))


def answer(message: dict[str, Any], revision: str, fault: str | None) -> dict[str, Any] | None:
    """The response to one message (None for a notification or a response)."""
    if "method" not in message or "id" not in message:
        return None
    rpc_id, method = message["id"], message["method"]
    if rpc_id is None:
        return {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "null id"}}
    if method == "initialize":
        asked = message.get("params", {}).get("protocolVersion")
        caps: dict[str, Any] = {"tools": {}, **({"tasks": {}} if revision == "2025-11-25" else {})}
        result: dict[str, Any] = {"protocolVersion": asked if fault == "negotiation" else revision,
                                  "capabilities": caps, "serverInfo": {"name": "era", "version": "1"}}
        if fault == "initialize-result":
            del result["serverInfo"]
        return {"jsonrpc": "2.0", "id": rpc_id, "result": result}
    if method == "ping":
        if fault == "wrong-id":
            rpc_id = f"{rpc_id}x"
        elif fault == "ids" and isinstance(rpc_id, int) and rpc_id > 2**53:
            rpc_id = float(rpc_id)
        return {"jsonrpc": "2.0", "id": rpc_id, "result": {"x": 1} if fault == "ping-nonempty" else {}}
    if method == "tasks/get" and fault != "task-unknown":
        return {"jsonrpc": "2.0", "id": rpc_id, "error": {"code": -32602, "message": "no such task"}}
    if method == "tools/list":
        tool = {"name": "echo"} if fault == "tools-list" else {"name": "echo", "inputSchema": {"type": "object"}}
        return {"jsonrpc": "2.0", "id": rpc_id, "result": {"tools": [tool]}}
    return {"jsonrpc": "2.0", "id": None if fault == "unknown-method" else rpc_id,
            "error": {"code": -32601, "message": f"no method {method}"}}


def session_server(revision: str, fault: str | None = None) -> type[BaseHTTPRequestHandler]:
    """Streamable HTTP of ``revision`` with sessions (see the module docstring)."""
    sessions: set[str] = set()
    ended: set[str] = set()
    counter = itertools.count(1)
    streams = itertools.count(1)  # each GET stream's ids are its own
    last_ping: list[bytes] = []
    headers_defined = revision != "2025-03-26"

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, body: bytes = b"", kind: str = "application/json",
                  extra: tuple[tuple[str, str], ...] = ()) -> None:
            self.send_response(status)
            for name, value in extra:
                self.send_header(name, value)
            if body:
                self.send_header("Content-Type", "text/plain" if fault == "content-type" and status == 200 else kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, value: Any, extra: tuple[tuple[str, str], ...] = ()) -> None:
            self._send(status, json.dumps(value).encode(), extra=extra)

        def _session_refusal(self) -> int | None:
            """The status refusing the session headers of a request, or None."""
            sid = self.headers.get("Mcp-Session-Id")
            if sid is None:
                return 400
            if sid not in sessions and not (fault == "session-echo" or (fault == "keep-deleted" and sid in ended)):
                return 404
            version = self.headers.get("MCP-Protocol-Version")
            if headers_defined and version is not None and version != revision and fault != "version-header":
                return 400
            return None

        def do_POST(self) -> None:
            if _foreign(self.headers) and fault != "origin":
                return self._send(403, b"foreign origin", "text/plain")
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            try:
                message = json.loads(body)
            except ValueError:
                if fault == "parse-error":
                    return self._send(400, b"bad", "text/plain")
                return self._json(400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse"}})
            if isinstance(message, dict) and message.get("method") == "initialize":
                sid = f"bad session {next(counter)}" if fault == "session-id" else f"s{next(counter)}"
                sessions.add(sid)
                return self._json(200, answer(message, revision, fault), (("Mcp-Session-Id", sid),))
            refused = self._session_refusal()
            if refused is not None:
                return self._json(refused, {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "no"}})
            if isinstance(message, list):
                if revision != "2025-03-26" or fault == "no-batch":
                    return self._json(400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "batch"}})
                answers = [a for a in (answer(m, revision, fault) for m in message if isinstance(m, dict)) if a]
                return self._json(200, answers) if answers else self._send(202)
            if not isinstance(message, dict):
                return self._json(400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "no"}})
            if "id" in message and message["id"] is None and fault == "id-null":
                return self._send(202)
            response = answer(message, revision, fault)
            if response is None:
                return self._json(200, {}) if fault == "notification" else self._send(202)
            if message.get("method") == "ping":
                last_ping[:] = [json.dumps(response).encode()]
                if fault == "event-ids":  # each POST stream's event has the same id
                    return self._send(200, b"id: e1\ndata: " + last_ping[0] + b"\n\n", "text/event-stream")
            self._json(200, response)

        def do_GET(self) -> None:
            refused = self._session_refusal()
            if refused is not None:
                return self._send(refused)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            stream = f"{self.headers.get('Mcp-Session-Id')}-get{next(streams)}"
            self.wfile.write(f"id: {stream}-1\ndata: \n\n".encode())
            if self.headers.get("Last-Event-ID") and fault == "resume" and last_ping:
                self.wfile.write(b"id: " + stream.encode() + b"-2\ndata: " + last_ping[0] + b"\n\n")
            if fault == "get-response":
                self.wfile.write(b'data: {"jsonrpc": "2.0", "id": 99, "result": {}}\n\n')
            self.wfile.flush()
            time.sleep(STREAM_SECONDS)

        def do_DELETE(self) -> None:
            sid = self.headers.get("Mcp-Session-Id")
            if sid in sessions:
                sessions.discard(sid)
                ended.add(sid)
                return self._send(200)
            self._send(404)

    return Handler


def legacy_server(fault: str | None = None, opened: list[str] | None = None) -> type[BaseHTTPRequestHandler]:
    """The HTTP+SSE transport of 2024-11-05 (see the module docstring): GET any path opens a
    stream whose first event names ``/messages?session=N`` (N appended to ``opened``); a POST
    there is 202 and its answer goes on the stream; a foreign Origin is refused 403 on both
    (but with the fault "origin"). The fault "drop-stream": a tools/list (but the fuzzer's own,
    id "fuzz-tools") ends the stream instead of being answered."""
    streams: dict[str, queue.Queue[bytes | None]] = {}
    counter = itertools.count(1)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            if _foreign(self.headers) and fault != "origin":
                self.send_response(403)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            name = str(next(counter))
            inbox: queue.Queue[bytes | None] = queue.Queue()
            with lock:
                streams[name] = inbox
                if opened is not None:
                    opened.append(name)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            kind = "message" if fault == "no-endpoint" else "endpoint"
            self.wfile.write(f"event: {kind}\ndata: /messages?session={name}\n\n".encode())
            self.wfile.flush()
            deadline = time.monotonic() + MAX_STREAM
            try:
                while time.monotonic() < deadline:
                    try:
                        event = inbox.get(timeout=0.1)
                    except queue.Empty:
                        continue
                    if event is None:
                        return  # HTTP/1.0: the stream ends with the connection
                    self.wfile.write(event)
                    self.wfile.flush()
            except OSError:
                pass  # the client hung up
            finally:
                with lock:
                    streams.pop(name, None)

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            name = parse_qs(urlsplit(self.path).query).get("session", [""])[0]
            with lock:
                inbox = streams.get(name)
            if _foreign(self.headers) and fault != "origin":
                return self._empty(403)
            if inbox is None:
                return self._empty(404)
            try:
                message = json.loads(body)
            except ValueError:
                response: dict[str, Any] | None = {"jsonrpc": "2.0", "id": None,
                                                   "error": {"code": -32700, "message": "parse"}}
            else:
                if fault == "drop-stream" and isinstance(message, dict) and message.get("method") == "tools/list" \
                        and message.get("id") != "fuzz-tools":
                    self._empty(202)
                    return inbox.put(None)
                response = answer(message, "2024-11-05", fault) if isinstance(message, dict) else None
            if response is not None and fault == "answer-on-post":
                data = json.dumps(response).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            self._empty(202)
            if response is not None:
                event = "reply" if fault == "message-event" else "message"
                inbox.put(f"event: {event}\ndata: {json.dumps(response)}\n\n".encode())

        def _empty(self, status: int) -> None:
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

    return Handler
