#!/usr/bin/env python3
"""An MCP server on plain asyncio: the mcpwire core driven over stdio, with no trio and no anyio.

    python examples/asyncio_server.py        # newline-delimited JSON-RPC on stdin/stdout

The core (``mcpwire``) does no I/O; this file is the whole adapter. It reads stdin with an
``asyncio.StreamReader``, feeds the bytes to a :class:`mcpwire.StdioConnection`, and acts on
what comes back:

- ``bytes``: an answer the engine wrote by itself (discover, lists, errors): write it;
- a :class:`mcpwire.StdioExchange`: a tools/call to answer. A task runs the tool's plain async
  function, which may write ``exchange.progress(...)``; the task then writes one of
  ``exchange.complete(...)``, ``exchange.input_required(...)`` (a multi round-trip request:
  the tool answers with :class:`mcpwire_adapters.NeedInput`, the one type every adapter uses,
  which needs only msgspec) or ``exchange.fail(...)``. Every verb returns whole NDJSON lines, so tasks share stdout
  line by line;
- a :class:`mcpwire.Cancelled`: the client sent ``notifications/cancelled``; cancel that task
  (its exchange is already silenced by the engine);
- a :class:`mcpwire.StdioListenStream` (subscriptions/listen): write ``stream.start()``; at
  the end ``server.close_listeners()`` gives each open stream its last line.

At end of stdin, requests in flight get ``GRACE_SECONDS`` to finish, then the process exits.
stdout carries protocol lines only. With ``MCPWIRE_EXAMPLE_CHECK=1`` in the environment the
process writes, at exit, one line to stderr naming which of trio, anyio, h11 and the App layer
(``mcpwire_adapters.app.app``) got imported (``tests/integration/test_asyncio_example.py`` expects none). POSIX only
(asyncio's pipe transports); stdin or stdout redirected to a regular file is read or written
directly, since a file never blocks.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Protocol

import msgspec
from mcpwire_adapters import NeedInput  # msgspec only: no anyio, trio or h11

import mcpwire
from mcpwire import Cancelled, Keyring, Server, StdioConnection, StdioExchange, StdioListenStream, ToolCall
from mcpwire.types import ElicitRequest, ElicitRequestFormParams, Implementation, Tool
from mcpwire.types import RequestId

GRACE_SECONDS = 5.0
CHECKED_MODULES = ("trio", "anyio", "h11", "mcpwire_adapters.app.app")

Write = Callable[[bytes], Awaitable[None]]
Handler = Callable[[ToolCall, StdioExchange, Write], Awaitable[Any]]


# -- the tools: plain async functions -------------------------------------------------------------
class AddArgs(msgspec.Struct, frozen=True):
    a: float
    b: float


class CountArgs(msgspec.Struct, frozen=True):
    n: Annotated[int, msgspec.Meta(ge=1, le=20)]
    delay: Annotated[float, msgspec.Meta(ge=0, le=1)] = 0.02


# Each gets the validated event, the exchange (for progress) and the way to write a line now.
async def add(call: ToolCall, exchange: StdioExchange, write: Write) -> Any:
    args = call.arguments  # an AddArgs: the engine decoded and checked it
    return f"{args.a:g} + {args.b:g} = {args.a + args.b:g}"


async def count(call: ToolCall, exchange: StdioExchange, write: Write) -> Any:
    args = call.arguments
    for i in range(1, args.n + 1):
        await asyncio.sleep(args.delay)
        # An empty line (nothing) unless the request carried a progressToken.
        await write(exchange.progress(i, total=args.n, message=f"step {i} of {args.n}"))
    return f"counted to {args.n}"


async def greet(call: ToolCall, exchange: StdioExchange, write: Write) -> Any:
    answer = (call.input_responses or {}).get("name")
    if answer is None or answer.get("action") != "accept" or not (answer.get("content") or {}).get("name"):
        # Round 1 (or no usable answer): ask. The state comes back signed and verified.
        question = ElicitRequest(params=ElicitRequestFormParams(
            message="What is your name?",
            requested_schema={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        ))
        return NeedInput(requests={"name": question}, state={"round": 1})
    return f"Hello, {answer['content']['name']}! (state from round {call.state['round']})"


async def sleep(call: ToolCall, exchange: StdioExchange, write: Write) -> Any:
    await asyncio.sleep(float(call.arguments.get("seconds", 60)))
    return "slept"


TOOLS: dict[str, Handler] = {
    "add": add, "count": count, "greet": greet, "sleep": sleep,
}


def build_server() -> Server:
    # The randomness of the key is the host's: the core never draws random numbers.
    server = Server(Implementation(name="asyncio-example", version="1.0"), keyring=Keyring.single(os.urandom(32)),
                    resources=False, prompts=False)
    server.add_tool(Tool(name="add", description="Add two numbers", input_schema={}), arguments_type=AddArgs)
    server.add_tool(Tool(name="count", description="Count to n, reporting progress", input_schema={}),
                    arguments_type=CountArgs)
    server.add_tool(Tool(name="greet", description="Ask for the user's name, then greet them",
                         input_schema={"type": "object", "properties": {}}))
    server.add_tool(Tool(name="sleep", description="Sleep (until cancelled)", input_schema={
        "type": "object", "properties": {"seconds": {"type": "number"}}}))
    return server


# -- the adapter ---------------------------------------------------------------------------------
class AsyncioStdioServer:
    """Feeds a StdioConnection from an asyncio reader; one task per request."""

    def __init__(self, server: Server, reader: Reader, writer: Writer) -> None:
        self.server = server
        self.connection = StdioConnection(server)
        self.reader = reader
        self.writer = writer
        self.tasks: dict[tuple[type, RequestId], asyncio.Task[None]] = {}
        self.lock = asyncio.Lock()  # one writer at a time: lines never interleave, drain() never races

    async def write(self, data: bytes) -> None:
        if not data:
            return
        async with self.lock:
            self.writer.write(data)
            await self.writer.drain()

    async def run(self) -> None:
        while True:
            chunk = await self.reader.read(65536)
            now = time.time()  # the clock is the host's too: requestState expiry is checked against it
            items = self.connection.receive_data(chunk, now=now) if chunk else self.connection.receive_eof(now=now)
            for item in items:
                if isinstance(item, bytes):
                    await self.write(item)
                elif isinstance(item, StdioExchange):
                    key = (type(item.request_id), item.request_id)  # 1 and "1" are different ids
                    task = asyncio.create_task(self.answer(item))
                    self.tasks[key] = task
                    task.add_done_callback(functools.partial(self._forget, key))
                elif isinstance(item, StdioListenStream):
                    await self.write(item.start())  # the acknowledgement; later events come from
                    # server.list_changed(...) / resource_updated(...), and the end from close_listeners()
                elif isinstance(item, Cancelled):
                    running = self.tasks.pop((type(item.request_id), item.request_id), None)
                    if running is not None:
                        running.cancel()
            if not chunk:
                break
        if self.tasks:
            await asyncio.wait(list(self.tasks.values()), timeout=GRACE_SECONDS)
            for task in list(self.tasks.values()):
                task.cancel()
        for _, output in self.server.close_listeners():
            await self.write(output)

    def _forget(self, key: tuple[type, RequestId], task: asyncio.Task[None]) -> None:
        if self.tasks.get(key) is task:
            del self.tasks[key]

    async def answer(self, exchange: StdioExchange) -> None:
        event = exchange.event
        try:
            if not isinstance(event, ToolCall):  # this server offers tools only
                raise mcpwire.RemoteProtocolError("Not supported here", code=mcpwire.ErrorCode.METHOD_NOT_FOUND)
            answer = await TOOLS[event.name](event, exchange, self.write)
            if isinstance(answer, NeedInput):
                output = exchange.input_required(answer.requests, state=answer.state, ttl_seconds=answer.ttl_seconds)
            else:
                output = exchange.complete(answer)
        except asyncio.CancelledError:
            exchange.cancel()  # nothing more goes out for this request
            raise
        except mcpwire.ProtocolError as exc:
            output = exchange.fail(exc)  # keeps its code and data
        except Exception as exc:  # a bug in a tool: -32603, without detail on the wire
            print(f"asyncio-example: tool {event.request_id!r} failed: {exc!r}", file=sys.stderr)
            output = exchange.fail(exc)
        await self.write(output)


class Reader(Protocol):
    async def read(self, n: int) -> bytes: ...


class Writer(Protocol):
    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...

    def close(self) -> None: ...


class FileReader:
    """stdin redirected from a regular file, which asyncio cannot watch (reads never block)."""

    async def read(self, n: int) -> bytes:
        return os.read(0, n)


class FileWriter:
    """stdout redirected to a regular file (writes never block)."""

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(1, view):]

    async def drain(self) -> None:
        pass

    def close(self) -> None:
        pass


async def open_stdio() -> tuple[Reader, Writer]:
    """stdin and stdout as asyncio streams (pipes, sockets, terminals), or plain files."""
    loop = asyncio.get_running_loop()
    reader: Reader
    writer: Writer
    try:
        stream = asyncio.StreamReader(limit=4 * 1024 * 1024)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), sys.stdin)
        reader = stream
    except ValueError:  # "Pipe transport is only for pipes, sockets and character devices"
        reader = FileReader()
    try:
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout)
        # No write buffer above zero: drain() returns once the pipe took every byte, so the
        # last answers are out before the process exits.
        transport.set_write_buffer_limits(high=0)
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
    except ValueError:
        writer = FileWriter()
    return reader, writer


async def main() -> None:
    reader, writer = await open_stdio()
    try:
        await AsyncioStdioServer(build_server(), reader, writer).run()
    finally:
        writer.close()


def report_imports() -> None:
    loaded = [name for name in CHECKED_MODULES if name in sys.modules]
    sys.stderr.write("MCPWIRE_EXAMPLE_CHECK " + json.dumps({"loaded": loaded}) + "\n")
    sys.stderr.flush()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
    finally:
        if os.environ.get("MCPWIRE_EXAMPLE_CHECK") == "1":
            report_imports()
