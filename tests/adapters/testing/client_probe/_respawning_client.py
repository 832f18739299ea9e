"""An MCP client over stdio, standard library only, that starts the server twice, as a client
that probes a server's revision on a process of its own does (the TypeScript SDK v2 in its
``auto`` mode): a first connection, ended by closing the server's stdin, then a second one that
initializes (2025-11-25), lists the tools, calls ``echo`` and prints the text. Each connection
numbers its requests from 0.

    python _respawning_client.py clean SERVER_COMMAND...      the first connection initializes and
                                                            lists the tools, correctly
    python _respawning_client.py null-id-first SERVER...     the first connection lists the tools
                                                            with "id": null (a MUST broken)
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import IO, Any

INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "respawning", "version": "1"}}


class Connection:
    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin: IO[bytes] = self.process.stdin
        self.stdout: IO[bytes] = self.process.stdout

    def send(self, message: dict[str, Any]) -> None:
        self.stdin.write(json.dumps(message).encode() + b"\n")
        self.stdin.flush()

    def request(self, rpc_id: Any, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send a request; answer the server's pings on the way; its answer (None with a null id:
        no answer is waited for)."""
        self.send({"jsonrpc": "2.0", "id": rpc_id, "method": method, **({"params": params} if params else {})})
        if rpc_id is None:
            return None
        for line in self.stdout:
            message = json.loads(line)
            if "method" in message and "id" in message:
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
            elif message.get("id") == rpc_id:
                return message
        raise RuntimeError(f"the server ended before it answered {method}")

    def initialize(self) -> None:
        self.request(0, "initialize", INIT)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def close(self) -> None:
        self.stdin.close()
        self.process.wait(timeout=5)


def main() -> int:
    mode, command = sys.argv[1], sys.argv[2:]
    first = Connection(command)
    first.initialize()
    first.request(None if mode == "null-id-first" else 1, "tools/list")
    first.close()
    second = Connection(command)
    second.initialize()
    second.request(1, "tools/list")
    answer = second.request(2, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    second.close()
    print("".join(block.get("text", "") for block in answer["result"]["content"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
