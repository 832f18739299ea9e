"""A stdio server with one planted bug, for tests/adapters/testing/test_fuzz_cli.py: it relays every line
to the conformance fixture (started as its child) and every answer back, but answers each
notification itself too, with a response of null id, which a notification never gets. It stops
at end of input."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

FIXTURE = [sys.executable, str(Path(__file__).resolve().parents[3] / "conformance" / "fixture.py"), "--transport", "stdio"]
lock = threading.Lock()


def write(line: bytes) -> None:
    with lock:
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()


def relay(source: IO[bytes]) -> None:
    for line in source:
        write(line)


child = subprocess.Popen(FIXTURE, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
assert child.stdin is not None and child.stdout is not None
thread = threading.Thread(target=relay, args=(child.stdout,), daemon=True)
thread.start()
for line in sys.stdin.buffer:
    try:
        message = json.loads(line)
    except ValueError:
        message = None
    if isinstance(message, dict) and isinstance(message.get("method"), str) and "id" not in message:
        write(b'{"jsonrpc":"2.0","id":null,"result":{}}\n')  # the planted bug
    child.stdin.write(line)
    child.stdin.flush()
child.stdin.close()
child.wait(timeout=10)
thread.join(timeout=10)
