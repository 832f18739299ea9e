"""The stdio sender of the tools that test other servers (the probe and the fuzzer):
:func:`stdio_sender`, one server subprocess for the whole run, one NDJSON line per message, each
exchange a :data:`~mcpwire_adapters.testing.rawwire.Exchange` as over HTTP
(:mod:`mcpwire_adapters.testing.rawwire`).

stdio has no statuses and no way to tell "no answer" from "a slow answer", so every message a
check sends is followed by a sentinel request (``server/discover`` with an id of its own): the
lines read up to the sentinel's response, and past it until the check's own response arrived,
are the check's reply. A notification, or a posted response, conforms when nothing but the
sentinel's response comes back. A listen request's reply is its first line; the stream is then
ended with notifications/cancelled (specification: Basic > Patterns > Cancellation).
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc

from .rawwire import NDJSON, TIMED_OUT, Exchange, Reply, Request, meta, rpc

__all__ = ["stdio_sender"]

MAX_LINE = 1024 * 1024


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


def _id_of(line: bytes) -> Any:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message.get("id", "absent") if isinstance(message, dict) and ("result" in message or "error" in message) \
        else "not-a-response"


@asynccontextmanager
async def stdio_sender(command: Sequence[str], *, timeout: float) -> AsyncIterator[Any]:
    """Start ``command`` and yield ``send(request) -> Exchange`` writing the request's body as a
    line; the process is ended (stdin closed, then killed after 5 s) when the block exits."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "LC_ALL", "SYSTEMROOT", "PYTHONPATH",
                                                      "VIRTUAL_ENV")}
    process = await anyio.open_process(list(command), env=env, stderr=None)
    assert process.stdin is not None and process.stdout is not None
    lines, count = _Lines(process.stdout), 0

    async def send(request: Request) -> Exchange:
        nonlocal count
        count += 1
        sentinel = f"probe-sentinel-{count}"
        shown = Request("LINE", (), request.body, rpc_id=request.rpc_id, first_event_only=request.first_event_only,
                        answered=request.answered)
        if request.method != "POST":
            return shown, None, "stdio carries JSON-RPC lines only"
        try:
            await process.stdin.send(request.body + b"\n")  # type: ignore[union-attr]
            if not request.first_event_only:
                await process.stdin.send(rpc("server/discover", {"_meta": meta()}, rpc_id=sentinel).body  # type: ignore[union-attr]
                                         + b"\n")
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            return shown, None, f"the server's stdin is closed: {exc!r}"
        got: list[bytes] = []
        deadline = anyio.current_time() + timeout
        wants_own = request.answered if request.answered is not None else _expects_answer(request)
        seen_sentinel = own = False
        while not (seen_sentinel and (own or not wants_own)):
            line = await lines.next(deadline)
            if line is None:
                if request.first_event_only and got:
                    break
                why = "the server closed its stdout" if lines.closed else f"{TIMED_OUT} {timeout:g} s" + (
                    " (the server answered the message sent after it)" if seen_sentinel and wants_own else "")
                return shown, (Reply(0, (("content-type", NDJSON),), b"\n".join(got)) if got else None), why
            ident = _id_of(line)
            if ident == sentinel:
                seen_sentinel = True
                continue
            got.append(line)
            if request.first_event_only:
                await process.stdin.send(json.dumps({  # type: ignore[union-attr]
                    "jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": request.rpc_id}}).encode() + b"\n")
                break
            # With ``answered`` given, the caller knows the id its answer carries: a null-id
            # line is then not taken for it (it may answer an earlier line).
            if ident != "not-a-response" and (ident == request.rpc_id or (ident is None and request.answered is None)):
                own = True
        return shown, Reply(0, (("content-type", NDJSON),), b"\n".join(got)), None

    try:
        yield send
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
