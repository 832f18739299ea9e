"""A flood of bare initializes, over real sockets against the trio/h11 driver with the App's
default session store (at most 1,000 sessions): it locks no new client out and pushes out no
session in use. The store evicts the oldest session never used after its initialize first
(docs/dialects.md); with OAuth on, one user's flood is capped at that user's own sessions
(100 by default) and cannot touch another user's.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from _wire_helpers import http_once
from test_session_takeover import ALICE, ERA, MALLORY, POST, Address, guard, open_session, served_by

from mcpwire import Keyring
from mcpwire_adapters import App
from mcpwire_adapters.serve.trio_h11.server import HttpServerConfig

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": ERA, "capabilities": {}, "clientInfo": {"name": "flood", "version": "1"}}}
PING = {"jsonrpc": "2.0", "id": 2, "method": "ping"}


def serving(config: HttpServerConfig) -> Callable[[Callable[[Address], Awaitable[None]]], Callable[[], None]]:
    return served_by(lambda: App("flooded", "1.0", keyring=Keyring.single(b"k" * 32)), lambda: config, deadline=120)


async def bare_initializes(address: Address, count: int, user: dict[str, str] | None = None) -> list[str]:
    """``count`` initializes never followed by anything, each on a connection of its own; their
    session ids."""
    ids: list[str] = []
    for _ in range(count):
        status, headers, _ = await http_once(address, "POST", {**POST, **(user or {})}, INIT)
        assert status == 200, status
        ids.append(headers["mcp-session-id"])
    return ids


async def ping(address: Address, session: dict[str, str], user: dict[str, str] | None = None) -> int:
    status, _, body = await http_once(address, "POST", {**POST, **(user or {}), **session}, PING)
    if status == 200:
        assert json.loads(body) == {"jsonrpc": "2.0", "id": 2, "result": {}}
    return status


@serving(HttpServerConfig())
async def test_a_flood_of_anonymous_initializes_locks_no_one_out(address: Address) -> None:
    in_use = [await open_session(address, {}), await open_session(address, {})]
    flood = await bare_initializes(address, 1100)  # more than the store holds
    for session in in_use:
        assert await ping(address, session) == 200  # not pushed out
    newcomer = await open_session(address, {})  # a new client still gets in
    assert await ping(address, newcomer) == 200
    first = {"mcp-session-id": flood[0], "mcp-protocol-version": ERA}
    assert await ping(address, first) == 404  # the oldest bare one made room


@serving(HttpServerConfig(auth=guard()))
async def test_one_users_flood_stays_within_that_users_sessions(address: Address) -> None:
    alice = await open_session(address, ALICE)
    flood = await bare_initializes(address, 150, MALLORY)  # beyond one user's cap of 100
    assert await ping(address, alice, ALICE) == 200
    oldest = {"mcp-session-id": flood[0], "mcp-protocol-version": ERA}
    assert await ping(address, oldest, MALLORY) == 404  # mallory's own oldest bare one made room
    assert await ping(address, await open_session(address, ALICE), ALICE) == 200  # alice still gets in
    assert await ping(address, await open_session(address, MALLORY), MALLORY) == 200  # so does mallory
