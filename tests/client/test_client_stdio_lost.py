"""``ClientStdioConnection`` when a line cannot be read: a line past ``max_line_bytes`` ends
every request in flight with a -32000 of the connection's own, named by ``lost()`` (stdio
cannot tell which request the line answered, and its answer would otherwise never come); the
lines after it are read as usual. A line that is not JSON ends nothing. Chunking changes none
of it. Through the public API, with the server engine writing the answers."""

from __future__ import annotations

from typing import Any

import pytest

from mcpwire import Client, ClientStdioConnection, ErrorResult, Keyring, ResultReceived, Server, StdioConnection, StdioExchange
from mcpwire.types import Implementation, Tool

NOW = 1_800_000_000.0
LIMIT = 256
LOST = f"server sent a line of more than {LIMIT} bytes (max_line_bytes); the answer it may have carried cannot be read"


def pair() -> tuple[Client, ClientStdioConnection, StdioConnection]:
    server = Server(Implementation(name="srv", version="1"), keyring=Keyring.single(b"k" * 32))
    server.add_tool(Tool(name="echo", description="Echo", input_schema={"type": "object"}))
    client = Client(Implementation(name="c", version="1"))
    return client, ClientStdioConnection(client, max_line_bytes=LIMIT), StdioConnection(server)


def feed(conn: ClientStdioConnection, data: bytes, step: int) -> list[Any]:
    events: list[Any] = []
    for start in range(0, len(data), step):
        events += conn.receive_data(data[start:start + step])
    return events


@pytest.mark.parametrize("step", [1, 7, 100_000], ids=["byte by byte", "small chunks", "whole"])
def test_a_line_past_the_limit_ends_every_request_in_flight_and_the_next_lines_are_read(step: int) -> None:
    client, conn, server = pair()
    a, b = client.call_tool("echo", {}), client.call_tool("echo", {})
    ex_a, ex_b = server.receive_data(conn.send(a) + conn.send(b), now=NOW)
    assert isinstance(ex_a, StdioExchange) and isinstance(ex_b, StdioExchange)
    stdout = ex_a.complete("x" * (2 * LIMIT))  # one answer too long to read: whose, stdio cannot tell
    later = client.call_tool("echo", {})
    events = feed(conn, stdout, step)
    assert events == [ErrorResult(request_id=a.id, code=-32000, message=LOST),
                      ErrorResult(request_id=b.id, code=-32000, message=LOST)]
    assert conn.in_flight == 0 and conn.lost(a.id) == LOST and conn.lost(b.id) == LOST
    (ex_later,) = server.receive_data(conn.send(later), now=NOW)
    assert isinstance(ex_later, StdioExchange)
    (answer,) = feed(conn, ex_b.complete("late") + ex_later.complete("ok"), step)  # b's late answer: dropped
    assert isinstance(answer, ResultReceived) and answer.request_id == later.id
    assert conn.lost(later.id) is None


def test_with_nothing_in_flight_a_long_line_is_one_event_for_no_request() -> None:
    _, conn, _ = pair()
    assert conn.receive_data(b'{"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "'
                             + b"y" * LIMIT + b'"}}\n') == [
        ErrorResult(request_id=None, code=-32600, message=f"Message exceeds {LIMIT} bytes")]


def test_a_line_that_is_not_json_ends_nothing_and_the_answer_after_it_is_read() -> None:
    client, conn, server = pair()
    a = client.call_tool("echo", {})
    (ex_a,) = server.receive_data(conn.send(a), now=NOW)
    assert isinstance(ex_a, StdioExchange)
    skipped, answer = conn.receive_data(b"Server started on stdio (not JSON)\n" + ex_a.complete("A"))
    assert isinstance(skipped, ErrorResult) and skipped.request_id is None and skipped.code == -32700
    assert isinstance(answer, ResultReceived) and answer.request_id == a.id
    assert conn.lost(a.id) is None


def test_the_servers_own_transport_error_is_not_the_connections() -> None:
    client, conn, _ = pair()
    a = client.call_tool("echo", {})
    conn.send(a)
    line = b'{"jsonrpc": "2.0", "id": ' + str(a.id).encode() + b', "error": {"code": -32000, "message": "server closed stdout"}}\n'
    (error,) = conn.receive_data(line)
    assert isinstance(error, ErrorResult) and error.code == -32000 and error.request_id == a.id
    assert conn.lost(a.id) is None  # the server said it: its error, not the connection's


def test_end_of_file_names_its_reason_for_each_request_left() -> None:
    client, conn, _ = pair()
    a = client.call_tool("echo", {})
    conn.send(a)
    assert conn.receive_eof() == [ErrorResult(request_id=a.id, code=-32000, message="server closed stdout")]
    assert conn.lost(a.id) == "server closed stdout"
