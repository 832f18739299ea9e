"""The stdio sender of the tools that test other servers (the probe and the fuzzer):
:func:`stdio_sender`, one server subprocess for the whole run, one NDJSON line per message, each
exchange a :data:`~mcpwire_adapters.testing.rawwire.Exchange` as over HTTP
(:mod:`mcpwire_adapters.testing.rawwire`).

stdio has no statuses and no way to tell "no answer" from "a slow answer", so every message a
check sends is followed by a sentinel request (``server/discover`` with an id of its own; on an
initialize-era connection ``ping``, :func:`ping_sentinel`): the lines read up to the sentinel's
response, and past it until the check's own response arrived, are the check's reply. A
notification, or a posted response, conforms when nothing but the sentinel's response comes
back. A listen request's reply is its first line; the stream is then ended with
notifications/cancelled (specification: Basic > Patterns > Cancellation).

A request that is cheap to answer (``Request.grace``) is waited for only that long after the
sentinel's response: the server has read past it, so an answer still missing is not coming (a
tool call may take long: it is waited for until the timeout).

Every line the server wrote is kept, in order, in the sender's :attr:`StdioSend.transcript`
(up to :data:`MAX_TRANSCRIPT` bytes): what the rule "nothing but MCP messages on stdout" is
judged on.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc

from .rawwire import NDJSON, TIMED_OUT, Exchange, Reply, Request, meta, rpc

__all__ = ["MAX_TRANSCRIPT", "Sentinel", "StdioSend", "discover_sentinel", "ping_sentinel", "stdio_sender"]

MAX_LINE = 1024 * 1024
MAX_TRANSCRIPT = 4 * 1024 * 1024  # bytes of the server's lines kept for the run's transcript

Sentinel = Callable[[str], bytes]
"""The line of a sentinel request with the given id (no line feed)."""


def discover_sentinel(rpc_id: str) -> bytes:
    """A server/discover of 2026-07-28: the sentinel of a connection in that revision."""
    return rpc("server/discover", {"_meta": meta()}, rpc_id=rpc_id).body


def ping_sentinel(rpc_id: str) -> bytes:
    """A ping: the sentinel of an initialize-era connection (every such revision has it)."""
    return json.dumps({"jsonrpc": "2.0", "id": rpc_id, "method": "ping"}).encode()


class StdioSend:
    """``send(request) -> Exchange`` over one server process, and the ``transcript`` of every
    line it wrote (``truncated``: past :data:`MAX_TRANSCRIPT` bytes, later lines were not kept)."""

    def __init__(self, send: Callable[[Request], Any]) -> None:
        self._send = send
        self.transcript: list[bytes] = []
        self.truncated = False
        self._kept = 0

    async def __call__(self, request: Request) -> Exchange:
        exchange: Exchange = await self._send(request)
        return exchange

    def keep(self, line: bytes) -> None:
        if self._kept + len(line) > MAX_TRANSCRIPT:
            self.truncated = True
            return
        self._kept += len(line)
        self.transcript.append(line)


class _Lines:
    """The server's stdout, split into lines (each at most 1 MiB), with a timeout per read."""

    def __init__(self, stream: anyio.abc.ByteReceiveStream) -> None:
        self.stream, self.buffer, self.closed = stream, bytearray(), False

    async def next(self, deadline: float) -> bytes | None:
        while b"\n" not in self.buffer:
            if self.closed or len(self.buffer) > MAX_LINE:
                return None
            with anyio.move_on_after(max(0.0, deadline - anyio.current_time())):
                try:
                    self.buffer += await self.stream.receive(65536)
                except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    self.closed = True
                continue
            return None  # the deadline passed
        line, _, rest = bytes(self.buffer).partition(b"\n")
        self.buffer = bytearray(rest)
        return line.rstrip(b"\r")


def _ids_of(line: bytes) -> list[Any]:
    """The ids of the responses a line carries (a batch's, one by one); ``[None]`` for a line
    that is not JSON (it may be an answer whose id could not be read); none for other messages."""
    try:
        message = json.loads(line)
    except ValueError:
        return [None]
    return [m.get("id", "absent") for m in (message if isinstance(message, list) else [message])
            if isinstance(m, dict) and ("result" in m or "error" in m)]


@asynccontextmanager
async def stdio_sender(command: Sequence[str], *, timeout: float,
                       sentinel: Sentinel = discover_sentinel) -> AsyncIterator[StdioSend]:
    """Start ``command`` and yield a :class:`StdioSend` writing each request's body as a line,
    each followed by ``sentinel``'s line; the process is ended (stdin closed, then killed after
    5 s) when the block exits."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "LC_ALL", "SYSTEMROOT", "PYTHONPATH",
                                                      "VIRTUAL_ENV")}
    process = await anyio.open_process(list(command), env=env, stderr=None)
    assert process.stdin is not None and process.stdout is not None
    lines, count = _Lines(process.stdout), 0
    sender: StdioSend

    async def send(request: Request) -> Exchange:
        nonlocal count
        count += 1
        marker = f"probe-sentinel-{count}"
        shown = Request("LINE", (), request.body, rpc_id=request.rpc_id, first_event_only=request.first_event_only,
                        answered=request.answered)
        if request.method != "POST":
            return shown, None, "stdio carries JSON-RPC lines only"
        try:
            await process.stdin.send(request.body + b"\n")  # type: ignore[union-attr]
            if not request.first_event_only and request.sentinel:
                await process.stdin.send(sentinel(marker) + b"\n")  # type: ignore[union-attr]
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            return shown, None, f"the server's stdin is closed: {exc!r}"
        got: list[bytes] = []
        deadline = anyio.current_time() + timeout
        wants_own = request.answered if request.answered is not None else _expects_answer(request)
        seen_sentinel, own = not request.sentinel, False
        batch = {repr(i) for i in request.rpc_id} if isinstance(request.rpc_id, tuple) else None
        while not (seen_sentinel and (own or not wants_own)):
            line = await lines.next(deadline)
            if line is None:
                if request.first_event_only and got:
                    break
                if lines.closed:
                    why = "the server closed its stdout"
                elif seen_sentinel and wants_own and request.grace is not None:
                    why = f"no answer: the server answered the message sent after it, then nothing for {request.grace:g} s"
                else:
                    why = f"{TIMED_OUT} {timeout:g} s" + (
                        " (the server answered the message sent after it)" if seen_sentinel and wants_own else "")
                return shown, (Reply(0, (("content-type", NDJSON),), b"\n".join(got)) if got else None), why
            sender.keep(line)
            idents = _ids_of(line)
            if marker in idents:
                if not seen_sentinel and request.grace is not None:  # a cheap request: it is not coming
                    deadline = min(deadline, anyio.current_time() + request.grace)
                seen_sentinel = True
                if idents == [marker]:
                    continue
            got.append(line)
            if request.first_event_only:
                await process.stdin.send(json.dumps({  # type: ignore[union-attr]
                    "jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": request.rpc_id}}).encode() + b"\n")
                break
            # With ``answered`` given, the caller knows the id its answer carries: a null-id
            # line is then not taken for it (it may answer an earlier line).
            if batch is not None:  # the ids of a batch's requests: all of them answered
                batch -= {repr(i) for i in idents}
                own = not batch
            elif any(i == request.rpc_id or (i is None and request.answered is None) for i in idents):
                own = True
        return shown, Reply(0, (("content-type", NDJSON),), b"\n".join(got)), None

    sender = StdioSend(send)
    try:
        yield sender
    finally:
        with anyio.CancelScope(shield=True):
            await process.stdin.aclose()
            with anyio.move_on_after(5):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()


def _expects_answer(request: Request) -> bool:
    """A request (a message with a method and an id, or anything malformed) is answered; a
    notification or a posted response is not."""
    try:
        message = json.loads(request.body)
    except ValueError:
        return True
    if isinstance(message, dict) and "id" not in message and isinstance(message.get("method"), str):
        return False
    return not (isinstance(message, dict) and "method" not in message and ("result" in message or "error" in message))
