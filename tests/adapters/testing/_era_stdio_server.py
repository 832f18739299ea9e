"""A stdio server of one initialize-era revision, for the probe's and the fuzzer's tests: right
about every rule the probe checks but the one named by its second argument.

    python _era_stdio_server.py REVISION [FAULT]

Faults: ``stdout-log`` (a log line on stdout after each ping), ``pretty`` (tools/list answered as
indented JSON, over several lines), ``no-batch`` (2025-03-26: a batch refused), ``wrong-id`` (a
ping answered with another id), ``notify-answer`` (a notification answered). It stops at the
end of its input.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from _era_servers import answer

REVISION = sys.argv[1]
FAULT = sys.argv[2] if len(sys.argv) > 2 else None


def write(value: Any, *, pretty: bool = False) -> None:
    sys.stdout.write(json.dumps(value, indent=2 if pretty else None) + "\n")
    sys.stdout.flush()


def handle(message: Any) -> None:
    if isinstance(message, list):
        if not message or REVISION != "2025-03-26" or FAULT == "no-batch":
            return write({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "no batch"}})
        answers = [a for a in (answer(m, REVISION, FAULT) for m in message if isinstance(m, dict)) if a]
        if answers:
            write(answers)
        return None
    if not isinstance(message, dict):
        return write({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "not an object"}})
    response = answer(message, REVISION, FAULT)
    if response is None:
        if FAULT == "notify-answer" and "method" in message:
            write({"jsonrpc": "2.0", "id": "note", "result": {}})
        return None
    write(response, pretty=FAULT == "pretty" and message.get("method") == "tools/list")
    if FAULT == "stdout-log" and message.get("method") == "ping":
        sys.stdout.write("pinged\n")
        sys.stdout.flush()
    return None


for line in sys.stdin:
    if not line.strip():
        continue
    try:
        parsed = json.loads(line)
    except ValueError:
        write({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
        continue
    handle(parsed)
