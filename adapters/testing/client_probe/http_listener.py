"""The hostile server over HTTP: a small trio + h11 listener on 127.0.0.1 (an OS-chosen port)
that hands each request to a :class:`~.hostile.HostileServer` and writes its :class:`~.hostile.Plan`
as it says, cut-short streams, split frames and open-ended streams included.

    async with hostile_http(server_for) as url:   # http://127.0.0.1:<port>/mcp
        ...                                         # run the client; server_for(base) made the server

One task per connection, keep-alive between answers that end; a request body past
:data:`MAX_REQUEST_BYTES` is answered 413 and the connection closed; a connection that sends
nothing for :data:`IDLE_SECONDS` is closed. Waiting for the client's answers (an await point)
and open-ended streams last until the client leaves or the listener is closed. Only this
package's probe uses it: it is no server to serve anything with (``mcpwire_adapters.serve`` is).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import Final

import h11
import trio

from .hostile import HostileServer, Plan, Seen
from .script import Await

__all__ = ["IDLE_SECONDS", "MAX_REQUEST_BYTES", "hostile_http"]

MAX_REQUEST_BYTES: Final = 8 * 1024 * 1024
IDLE_SECONDS: Final = 120.0
_POLL: Final = 0.02  # seconds between looks at whether the client answered (an await point)


@contextlib.asynccontextmanager
async def hostile_http(server_for: Callable[[str], HostileServer]) -> AsyncIterator[tuple[str, HostileServer]]:
    """Listen on 127.0.0.1; ``server_for(origin)`` makes the server; yield the MCP endpoint's URL
    and the server; closing stops the listener and every connection."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    origin = f"http://127.0.0.1:{port}"
    server = server_for(origin)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.serve_listeners, lambda stream: _connection(stream, server), listeners)
        try:
            yield origin + "/mcp", server
        finally:
            nursery.cancel_scope.cancel()


async def _connection(stream: trio.SocketStream, server: HostileServer) -> None:
    conn = h11.Connection(h11.SERVER, max_incomplete_event_size=64 * 1024)
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, h11.ProtocolError):
        async with stream:
            while True:
                seen = await _read_request(stream, conn)
                if seen is None:
                    return
                if isinstance(seen, int):
                    await _send_simple(stream, conn, seen)
                    return
                plan = server.receive(seen)
                ended = await _write(stream, conn, plan, server)
                if ended != "done" or conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                    return
                conn.start_next_cycle()


async def _read_request(stream: trio.SocketStream, conn: h11.Connection) -> Seen | int | None:
    """The next request, or a status to refuse it with, or None when the client is gone."""
    head: h11.Request | None = None
    body = bytearray()
    with trio.move_on_after(IDLE_SECONDS):
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                data = await stream.receive_some(65536)
                conn.receive_data(bytes(data))
                if not data and head is None:
                    return None
                continue
            if isinstance(event, h11.Request):
                head = event
            elif isinstance(event, h11.Data):
                body += event.data
                if len(body) > MAX_REQUEST_BYTES:
                    return 413
            elif isinstance(event, h11.EndOfMessage) and head is not None:
                headers = tuple((k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in head.headers)
                return Seen(head.method.decode("ascii", "replace"), head.target.decode("ascii", "replace"), headers,
                            bytes(body), time.monotonic())
            else:  # ConnectionClosed, PAUSED
                return None
    return None


async def _send_simple(stream: trio.SocketStream, conn: h11.Connection, status: int) -> None:
    with contextlib.suppress(h11.LocalProtocolError):
        await stream.send_all(conn.send(h11.Response(status_code=status, headers=[
            ("content-length", "0"), ("connection", "close")])) or b"")
        await stream.send_all(conn.send(h11.EndOfMessage()) or b"")


async def _write(stream: trio.SocketStream, conn: h11.Connection, plan: Plan, server: HostileServer) -> str:
    """Write ``plan``; tell the server how it ended (``open``: the listener closed first); return that."""
    written = bytearray()
    count = 0
    headers = list(plan.headers)
    if plan.length is not None:
        headers.append(("content-length", str(plan.length)))
    if plan.end != "done":
        headers.append(("connection", "close"))
    ended = "open"
    try:
        await stream.send_all(conn.send(h11.Response(status_code=plan.status, headers=headers)) or b"")
        for part in plan.parts:
            if isinstance(part, Await):
                while not server.all_answered(part.ids):
                    await trio.sleep(_POLL)
                continue
            if len(written) < 16 * 1024:
                written += part[:16 * 1024]
            began = time.monotonic()  # the client may answer before this task runs again: time the start
            await stream.send_all(conn.send(h11.Data(data=part)) or b"")
            count += len(part)
            server.wrote(plan.record, count, began)
        if plan.end == "done":
            await stream.send_all(conn.send(h11.EndOfMessage()) or b"")
            ended = "done"
        elif plan.end == "hold":
            ended = "hold"
            while await stream.receive_some(65536):  # until the client leaves (or the listener closes)
                pass
        else:
            ended = "cut"
    except (trio.BrokenResourceError, trio.ClosedResourceError):
        ended = "gone"
        raise
    finally:
        server.finished(plan.record, ended, time.monotonic(), bytes(written))
    return ended
