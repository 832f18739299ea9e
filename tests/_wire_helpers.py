"""Test-side peers shared by the integration tests: an h11 client on one connection, and a
stdio server subprocess read line by line. Each test file subclasses them for its extras."""

from __future__ import annotations

import json
import socket
import struct
from typing import Any, Self

import h11
import trio


class H11Client:
    """One HTTP/1.1 connection driven by an h11 client state machine."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.conn = h11.Connection(h11.CLIENT)

    @classmethod
    async def connect(cls, address: tuple[str, int]) -> Self:
        return cls(await trio.open_tcp_stream(*address))

    async def send(self, *events: h11.Event) -> None:
        await self.stream.send_all(b"".join(self.conn.send(event) or b"" for event in events))

    async def request(
        self, body: bytes, headers: list[tuple[str, str]], method: str = "POST", target: str = "/mcp"
    ) -> None:
        headers = [*headers, ("content-length", str(len(body)))]
        await self.send(
            h11.Request(method=method, target=target, headers=headers), h11.Data(data=body), h11.EndOfMessage()
        )

    async def next_event(self) -> h11.Event:
        while True:
            event = self.conn.next_event()
            if event is h11.NEED_DATA:
                self.conn.receive_data(await self.stream.receive_some(65536))
                continue
            assert event is not h11.PAUSED
            return event  # type: ignore[return-value]

    async def response(self) -> tuple[h11.Response, bytes]:
        head = await self.next_event()
        assert isinstance(head, h11.Response), head
        body = b""
        while not isinstance(event := await self.next_event(), h11.EndOfMessage):
            assert isinstance(event, h11.Data), event
            body += event.data
        return head, body

    async def aclose(self, reset: bool = False) -> None:
        """Close with FIN, or with RST when ``reset`` (SO_LINGER 0: an abrupt disconnect)."""
        if reset:
            self.stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        await self.stream.aclose()


class StdioChild:
    """A stdio server subprocess: write to its stdin, read whole NDJSON lines from its stdout."""

    def __init__(self, process: trio.Process) -> None:
        self.process = process
        self._buffer = b""

    async def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send_all(data)

    async def close_stdin(self) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.aclose()

    async def read_line(self) -> bytes | None:
        """One whole line without its newline, or None at EOF."""
        assert self.process.stdout is not None
        while b"\n" not in self._buffer:
            chunk = await self.process.stdout.receive_some(65536)
            if not chunk:
                assert self._buffer == b"", f"partial line at EOF: {self._buffer!r}"
                return None
            self._buffer += chunk
        result, _, self._buffer = self._buffer.partition(b"\n")
        return result

    async def message(self) -> Any:
        """The next message, or None when stdout ends."""
        raw = await self.read_line()
        return None if raw is None else json.loads(raw)

    async def rest(self) -> list[Any]:
        """Every remaining message until stdout ends."""
        out = []
        while (raw := await self.read_line()) is not None:
            out.append(json.loads(raw))
        return out

    async def exit_code(self) -> int:
        return await self.process.wait()

    async def stderr(self) -> bytes:
        assert self.process.stderr is not None
        data = b""
        while chunk := await self.process.stderr.receive_some(65536):
            data += chunk
        return data


async def http_once(
    address: tuple[str, int], method: str, headers: dict[str, str], body: Any = None
) -> tuple[int, dict[str, str], bytes]:
    """One request on a connection of its own (``connection: close``): its status, its headers
    (lowercase names) and its body, de-chunked; ``(0, {}, b"")`` when the server closed the
    connection without a response."""
    stream = await trio.open_tcp_stream(*address)
    data = b"" if body is None else json.dumps(body).encode()
    head = f"{method} /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: {len(data)}\r\nconnection: close\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    await stream.send_all(head.encode() + b"\r\n" + data)
    raw = b""
    while chunk := await stream.receive_some(65536):
        raw += chunk
    await stream.aclose()
    if not raw:
        return 0, {}, b""  # the server closed the connection without a response
    top, _, rest = raw.partition(b"\r\n\r\n")
    lines = top.decode().split("\r\n")
    status = int(lines[0].split()[1])
    hdrs = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    if hdrs.get("transfer-encoding") == "chunked":
        body_out = b""
        while rest:
            size, _, rest = rest.partition(b"\r\n")
            n = int(size, 16)
            if n == 0:
                break
            body_out += rest[:n]
            rest = rest[n + 2:]
        rest = body_out
    return status, hdrs, rest


def sse_events(body: bytes) -> list[dict[str, str]]:
    """The events of an SSE body, each its fields by name (repeated fields joined)."""
    out = []
    for block in body.decode().split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.split("\n"):
            name, _, value = line.partition(":")
            if name:
                fields[name] = fields.get(name, "") + value.removeprefix(" ")
        if fields:
            out.append(fields)
    return out


def responses(raw: bytes) -> list[tuple[str, dict[bytes, bytes], Any]]:
    """Split bytes holding whole Content-Length-framed responses: (status line, headers, JSON,
    or None for an empty body)."""
    out = []
    while raw:
        top, _, raw = raw.partition(b"\r\n\r\n")
        lines = top.split(b"\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(b":") for line in lines[1:])}
        size = int(headers[b"content-length"])
        out.append((lines[0].decode(), headers, json.loads(raw[:size]) if size else None))
        raw = raw[size:]
    return out
