"""StdioClient against a real stdio server process (initialize era):

- invalid requests the server sends while a call is the one in flight count against
  ``max_rounds``, as on an HTTP response stream (each still answered -32600, as JSON-RPC 2.0
  section 5 says): a server that keeps sending them ends the call with :class:`ServerError`
  -32603 instead of keeping it alive;
- an ``initialize`` left unanswered is given up, never cancelled ("The ``initialize`` request
  MUST NOT be cancelled by clients", 2025-11-25: Basic > Utilities > Cancellation): no
  ``notifications/cancelled`` for it reaches the server.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import anyio
import pytest

from mcpwire import Client, ErrorCode
from mcpwire.types import Implementation
from mcpwire_adapters.errors import MaybeDelivered, ServerError
from mcpwire_adapters.client.stdio import StdioClient

from _asking_stdio import asking_server
from _backends import run
from test_session_get_stream import WAIT

INVALID = [json.dumps({"id": f"e{n}", "method": "elicitation/create", "params": {}}).encode() for n in range(12)]


def test_invalid_requests_during_a_call_count_against_max_rounds(backend: str, tmp_path: Path) -> None:
    log = tmp_path / "read.jsonl"

    async def main() -> None:
        client = Client(Implementation(name="t", version="1"), protocol_version="2025-11-25")
        async with StdioClient(asking_server(log, INVALID), client, max_rounds=3, read_timeout=WAIT) as c:
            with anyio.fail_after(WAIT), pytest.raises(ServerError, match="more than 3 input rounds") as caught:
                await c.call_tool("echo", {})
            assert caught.value.code == ErrorCode.INTERNAL_ERROR

    run(main, backend)
    answers = [json.loads(line) for line in log.read_text().splitlines() if "method" not in json.loads(line)]
    assert [a["id"] for a in answers][:4] == ["e0", "e1", "e2", "e3"]  # each answered, the one past the bound too
    assert all(a["error"]["code"] == ErrorCode.INVALID_REQUEST for a in answers)


# A server that reads every line and answers none: initialize waits for ever.
SILENT = textwrap.dedent("""
    import sys
    log = open(sys.argv[1], "a")
    for line in sys.stdin:
        log.write(line)
        log.flush()
""")


def test_an_unanswered_initialize_is_given_up_not_cancelled(backend: str, tmp_path: Path) -> None:
    log = tmp_path / "read.jsonl"

    async def main() -> None:
        client = Client(Implementation(name="t", version="1"), protocol_version="2025-11-25")
        async with StdioClient([sys.executable, "-c", SILENT, str(log)], client, read_timeout=0.5) as c:
            with anyio.fail_after(WAIT), pytest.raises(MaybeDelivered, match="initialize"):
                await c.call_tool("echo", {})

    run(main, backend)
    methods = [json.loads(line).get("method") for line in log.read_text().splitlines()]
    assert "initialize" in methods and "notifications/cancelled" not in methods, methods
