"""mcpwire's own clients as the commands ``mcpwire probe --client`` runs in the tests: each lists
the tools, calls ``echo`` and prints the text of its result.

    python _our_clients.py http URL          HttpClient (trio)
    python _our_clients.py blocking URL      BlockingClient.http
    python _our_clients.py stdio COMMAND...  StdioClient

A client error ends the script with status 3 and one line on stderr (no traceback: the probe
reads a traceback as a crash).
"""

from __future__ import annotations

import sys

import trio

from mcpwire import ResultReceived
from mcpwire_adapters.client.blocking import BlockingClient
from mcpwire_adapters.client.http import HttpClient
from mcpwire_adapters.client.stdio import StdioClient


def _text(result: ResultReceived) -> str:
    """The text blocks of a tools/call result, joined (``data``: the result as received)."""
    content = result.data.get("content")
    blocks = content if isinstance(content, list) else []
    return "".join(b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text"
                   and isinstance(b.get("text"), str))


async def _async(kind: str, target: list[str]) -> str:
    # stdio: a read timeout under the probe's deadline (4 s in the tests), so a call the server
    # never answers ends in the client's own error, not at the deadline.
    client = HttpClient(target[0], read_timeout=5.0) if kind == "http" else StdioClient(target, read_timeout=2.0)
    async with client as c:
        await c.list_tools()
        return _text(await c.call_tool("echo", {"text": "hi"}))


def main() -> int:
    kind, target = sys.argv[1], sys.argv[2:]
    try:
        if kind == "blocking":
            with BlockingClient.http(target[0]) as c:
                c.list_tools()
                text = _text(c.call_tool("echo", {"text": "hi"}))
        else:
            text = trio.run(_async, kind, target)
    except Exception as exc:  # noqa: BLE001 - a client error is an exit status, not a crash
        sys.stderr.write(f"error: {type(exc).__name__}: {exc}\n")
        return 3
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
