"""A stdio server wrong about everything, for tests/adapters/testing/test_probe.py: it answers every line
with a result, notifications and garbage included; only server/discover echoes its id (and its
result lacks ttlMs and cacheScope), and a cancellation gets a response for the request it names;
every other answer has a null id. It stops at end of input."""

from __future__ import annotations

import json
import sys
from typing import Any


def answer(message: Any) -> dict[str, Any]:
    method = message.get("method") if isinstance(message, dict) else None
    params = message.get("params") if isinstance(message, dict) else None
    if method == "server/discover":
        return {"jsonrpc": "2.0", "id": message.get("id"), "result": {
            "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {"listChanged": True}, "resources": {}}}}
    if method == "notifications/cancelled" and isinstance(params, dict):  # a late response
        return {"jsonrpc": "2.0", "id": params.get("requestId"), "result": {}}
    if method == "tools/list":
        result: dict[str, Any] = {"tools": [{"name": "ask", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call" and isinstance(params, dict) and "requestState" not in params:
        result = {"resultType": "input_required", "requestState": "state-1"}
    else:
        result = {}
    return {"jsonrpc": "2.0", "id": None, "result": result}


for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        message = None
    sys.stdout.write(json.dumps(answer(message)) + "\n")
    sys.stdout.flush()
