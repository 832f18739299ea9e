"""The official Python SDK's client (``mcp``, pinned in the dev extra) as a command for
``mcpwire probe --client``: its ``ClientSession`` over its Streamable HTTP client (or its stdio
client) initializes, lists the tools, calls ``echo`` and prints the text of the result; its
``Client`` (which probes with server/discover and speaks 2026-07-28 where the server does) the
same way.

    python sdk_client.py http URL
    python sdk_client.py stdio COMMAND [ARG]...
    python sdk_client.py client URL

A client error ends it with status 1 and one line on stderr.
"""

from __future__ import annotations

import sys
from contextlib import AsyncExitStack
from typing import Any

import anyio
from mcp import Client, ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

TIMEOUT = 15.0


async def run(kind: str, target: list[str]) -> str:
    if kind == "client":
        with anyio.fail_after(TIMEOUT):
            async with Client(target[0]) as client:
                await client.list_tools()
                result = await client.call_tool("echo", {"text": "hi"})
        return "".join(getattr(block, "text", "") for block in result.content)
    async with AsyncExitStack() as stack:
        streams: Any
        if kind == "http":
            streams = await stack.enter_async_context(streamable_http_client(target[0]))
        else:
            streams = await stack.enter_async_context(stdio_client(StdioServerParameters(command=target[0],
                                                                                         args=target[1:])))
        session = await stack.enter_async_context(ClientSession(streams[0], streams[1]))
        with anyio.fail_after(TIMEOUT):
            await session.initialize()
            await session.list_tools()
            result = await session.call_tool("echo", {"text": "hi"})
        return "".join(getattr(block, "text", "") for block in result.content)


def main() -> int:
    try:
        text = anyio.run(run, sys.argv[1], sys.argv[2:])
    except Exception as exc:  # noqa: BLE001 - a client error is an exit status, not a crash
        sys.stderr.write(f"error: {type(exc).__name__}: {exc}\n")
        return 1
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
