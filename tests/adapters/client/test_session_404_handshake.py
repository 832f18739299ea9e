"""The HTTP clients on an initialize-era server that answers the handshake with 404, over real
sockets on 127.0.0.1 (specification 2025-11-25: Basic > Transports > Streamable HTTP, Session
Management): an ``initialize`` answered with 404 (and an ``Mcp-Session-Id``) opened no session,
so it is a clear error and that session is never used; a 404 on the ``notifications/initialized``
that follows (the first request carrying the new session's id) starts a new session without a
session id, at most ``MAX_NEW_SESSIONS`` in a row. :class:`HttpClient` (trio and asyncio) and
:class:`BlockingClient` against a server scripted here on h11; ``mcpwire call`` as a process
through the client probe's hostile server with the mutation a fuzz run found."""

from __future__ import annotations

import json
import logging
import shlex
import sys
from functools import partial
from typing import Any

import anyio
import anyio.abc
import h11
import pytest
import trio
from anyio.from_thread import start_blocking_portal

from mcpwire import RemoteProtocolError
from mcpwire_adapters.client.blocking import BlockingClient
from mcpwire_adapters.client.http import HttpClient, SessionExpired
from mcpwire_adapters.client.session import MAX_NEW_SESSIONS
from mcpwire_adapters.testing.client_probe.fuzzing import Mutation, apply
from mcpwire_adapters.testing.client_probe.hostile import Record
from mcpwire_adapters.testing.client_probe.runner import ScenarioRun, run_scenario
from mcpwire_adapters.testing.client_probe.scenarios import by_name

from _backends import run
from test_session_get_stream import WAIT, Get, Scripted, plain_client, scripted

INITIALIZED = "notifications/initialized"


class Forgetful(Scripted):
    """:class:`Scripted` (GET: 405) that issues a new session per ``initialize`` (``s1``, ``s2``,
    ...), answered with ``init_status``; it answers the ``notifications/initialized`` of the
    first ``forget`` sessions with 404, and every request naming one of them too."""

    def __init__(self, *, init_status: int = 200, forget: int = 0) -> None:
        super().__init__([], then=Get(status=405))
        self.init_status, self.forget, self.issued = init_status, forget, 0

    async def _post(self, conn: h11.Connection, stream: anyio.abc.ByteStream, message: dict[str, Any]) -> None:
        headers = self.requests[-1][2]  # this request's: nothing awaited since it was appended
        if message.get("method") == "initialize":
            self.issued += 1
            result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "forgetful", "version": "1"}}
            body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
            await self._reply(conn, stream, self.init_status, body,
                              [(b"content-type", b"application/json"), (b"mcp-session-id", f"s{self.issued}".encode())])
            return
        session = headers.get(b"mcp-session-id", b"s0").decode()
        if int(session[1:]) <= self.forget:
            error = {"jsonrpc": "2.0", "id": message.get("id"), "error": {"code": -32001, "message": "Session not found"}}
            await self._reply(conn, stream, 404, json.dumps(error).encode(), [(b"content-type", b"application/json")])
            return
        await super()._post(conn, stream, message)


def posts(server: Scripted, method: str) -> list[bytes | None]:
    """The ``Mcp-Session-Id`` of each POST of ``method`` (None: sent without one)."""
    return [h.get(b"mcp-session-id") for _, m, h, body in server.requests if m == "POST" and body.get("method") == method]


def era_client() -> Any:
    return plain_client(protocol_version="2025-11-25")


# -- initialize answered with 404 ---------------------------------------------------------------------------


def test_an_initialize_answered_with_404_is_an_error_and_its_session_is_never_used(backend: str) -> None:
    async def main() -> None:
        async with scripted(Forgetful(init_status=404)) as server:
            async with HttpClient(server.url, era_client()) as c:
                with pytest.raises(RemoteProtocolError, match="HTTP 404 response to initialize") as caught:
                    await c.connect()
                assert caught.value.data == {"status": 404}
                assert c.client.session_id is None and c.sessions_started == 0
            assert posts(server, "initialize") == [None]
            # nothing after it named s1: no notifications/initialized, no GET, no DELETE
            assert [m for _, m, h, _ in server.requests if b"mcp-session-id" in h] == []

    run(main, backend)


def test_an_initialize_answered_with_500_is_an_error_too(backend: str) -> None:
    async def main() -> None:
        async with scripted(Forgetful(init_status=500)) as server, HttpClient(server.url, era_client()) as c:
            with pytest.raises(RemoteProtocolError) as caught:
                await c.connect()
            assert caught.value.data == {"status": 500} and c.client.session_id is None

    run(main, backend)


# -- notifications/initialized answered with 404 -------------------------------------------------------------


def test_a_404_on_notifications_initialized_starts_a_new_session(
        caplog: pytest.LogCaptureFixture, backend: str) -> None:
    async def main() -> None:
        async with scripted(Forgetful(forget=1)) as server:
            async with HttpClient(server.url, era_client()) as c:
                with anyio.fail_after(WAIT):
                    await c.connect()
                    result = await c.call_tool("work", {})
                assert result.data["content"][0]["text"] == "done"
                assert c.client.session_id == "s2" and c.sessions_started == 2
            assert posts(server, "initialize") == [None, None]  # the new one without a session id
            assert posts(server, INITIALIZED) == [b"s1", b"s2"]
            assert posts(server, "tools/call") == [b"s2"]

    with caplog.at_level(logging.WARNING, logger="mcpwire.client"):
        run(main, backend)
    assert any("'s1' (HTTP 404); starting a new session" in r.getMessage() for r in caplog.records)


def test_a_server_that_forgets_every_new_session_at_once_is_an_error_after_a_few(backend: str) -> None:
    async def main() -> None:
        async with scripted(Forgetful(forget=1000)) as server:
            async with HttpClient(server.url, era_client()) as c:
                with anyio.fail_after(WAIT), pytest.raises(SessionExpired, match=f"forgot each of {MAX_NEW_SESSIONS} "):
                    await c.call_tool("work", {})
                assert c.sessions_started == MAX_NEW_SESSIONS and c.client.session_id is None
            assert posts(server, "initialize") == [None] * MAX_NEW_SESSIONS
            assert posts(server, "tools/call") == []

    run(main, backend)


def test_blocking_client_starts_a_new_session_after_a_404_on_notifications_initialized() -> None:
    # BlockingClient runs HttpClient on a loop of its own: the same path; the server runs in a
    # thread of its own too (its portal), so that neither waits for the other.
    server = Forgetful(forget=1)
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(scripted(server)):
        with BlockingClient.http(server.url, era_client(), read_timeout=WAIT) as c:
            c.connect()
            assert c.session.client.session_id == "s2"
            assert c.call_tool("work", {}).data["content"][0]["text"] == "done"
    assert posts(server, INITIALIZED) == [b"s1", b"s2"]


# -- mcpwire call, through the client probe's hostile server ---------------------------------------------------

CLI = f"{shlex.quote(sys.executable)} -m mcpwire_adapters.cli call {{url}} echo --timeout 5"


def hostile_run(row: str, status: int) -> ScenarioRun:
    """``mcpwire call`` through basic-2025 with the status of the answer ``row`` (its ``to``) mutated."""
    scenario = by_name("basic-2025")
    script = scenario.script()
    index = next(i for i, answer in enumerate(script) if answer.to == row)
    answers = apply(script, [Mutation("status", index, status)])
    done, _ = trio.run(partial(run_scenario, CLI, scenario, timeout=20.0, answers=answers, own=len(scenario.answers)))
    return done


def mcp_posts(done: ScenarioRun) -> list[Record]:
    return [r for r in done.records if r.method == "POST" and r.era == "2025-11-25"]


def method_of(record: Record) -> Any:
    message = record.message()
    return message.get("method") if isinstance(message, dict) else None


def test_the_mcpwire_command_stops_with_the_status_when_initialize_gets_404() -> None:
    done = hostile_run("initialize", 404)
    assert done.process.exit_code == 3, done.process.stderr
    assert b"HTTP 404 response to initialize" in done.process.stderr
    assert [method_of(r) for r in mcp_posts(done)] == ["initialize"]
    assert all(not r.header("mcp-session-id") for r in done.records)


def test_the_mcpwire_command_starts_new_sessions_on_404s_to_notifications_initialized_within_the_bound() -> None:
    done = hostile_run("*notification", 404)  # every notification of every session: 404
    assert done.process.exit_code == 3, done.process.stderr
    assert b"forgot each of 3 new sessions in a row" in done.process.stderr
    sent = [(method_of(r), r.header("mcp-session-id")) for r in mcp_posts(done)]
    assert sent == [("initialize", None), (INITIALIZED, "hostile-session-1"),
                    ("initialize", None), (INITIALIZED, "hostile-session-2"),
                    ("initialize", None), (INITIALIZED, "hostile-session-3")]
