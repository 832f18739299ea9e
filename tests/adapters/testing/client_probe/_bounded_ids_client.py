"""A 2025-11-25 client over Streamable HTTP, standard library only, that reads the server's
requests on its tools/call stream as it arrives and answers each, but takes request ids the way
a server of ours bounds its own (a string of at most 256 UTF-8 bytes, an int64 integer): past
them it answers -32600 with id null, where the schema's RequestId (any string or integer)
wants the id echoed. What ``mcpwire fuzz --client`` must find, by drawing such ids:

    python _bounded_ids_client.py URL
"""

from __future__ import annotations

import http.client
import json
import sys
from typing import Any
from urllib.parse import urlsplit

VERSION = "2025-11-25"


def within(value: Any) -> bool:
    if isinstance(value, str):
        return len(value.encode("utf-8", "surrogatepass")) <= 256
    return isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63


class Session:
    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.host, self.port, self.path = parts.hostname or "127.0.0.1", parts.port or 80, parts.path
        self.headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

    def post(self, message: dict[str, Any]) -> http.client.HTTPResponse:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=5)
        conn.request("POST", self.path, json.dumps(message).encode(), self.headers)
        return conn.getresponse()

    def send(self, message: dict[str, Any]) -> Any:
        """POST ``message``; the JSON-RPC response to it, answering the server's requests met first."""
        answer = self.post(message)
        if answer.headers.get("mcp-session-id"):
            self.headers.update({"Mcp-Session-Id": answer.headers["mcp-session-id"], "MCP-Protocol-Version": VERSION})
        if not answer.headers.get("content-type", "").startswith("text/event-stream"):
            body = answer.read()
            return json.loads(body) if body else None
        for line in answer:
            if not line.startswith(b"data:") or not line[5:].strip():
                continue
            data = json.loads(line[5:])
            if "method" not in data:
                return data
            if "id" in data:
                self.reply(data)
        return None

    def reply(self, request: dict[str, Any]) -> None:
        if not within(request["id"]):
            error = {"code": -32600, "message": "Invalid Request: id must be a string of at most 256 bytes or an int64"}
            answer: dict[str, Any] = {"jsonrpc": "2.0", "id": None, "error": error}
        elif request["method"] == "ping":
            answer = {"jsonrpc": "2.0", "id": request["id"], "result": {}}
        else:
            answer = {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "Method not found"}}
        self.post(answer).read()


def main() -> int:
    session = Session(sys.argv[1])
    session.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "bounded", "version": "1"}}})
    session.post({"jsonrpc": "2.0", "method": "notifications/initialized"}).read()
    session.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    answer = session.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo", "arguments": {}}})
    print(answer["result"]["content"][0]["text"] if isinstance(answer, dict) and "result" in answer else answer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
