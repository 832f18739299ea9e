"""The bound on the server's requests on a call's response stream (initialize era) holds for
invalid ones too: each is answered with its JSON-RPC error (-32600) and counts against
``max_rounds`` like a valid request for input, so a server that keeps sending requests nobody
can answer ends the call with :class:`ServerError` -32603 after the bound, instead of keeping it
alive for ever (each message would otherwise restart ``read_timeout``). Pings are not rounds.
:class:`HttpClient` (trio and asyncio) against a server scripted here on h11, over real sockets
on 127.0.0.1; ``mcpwire call`` as a process through the client probe's hostile server with the
mutation a fuzz run found (endless-requests, the elicitation's ``"jsonrpc"`` deleted).
:class:`BlockingClient` runs the same :class:`HttpClient` code on a loop of its own."""

from __future__ import annotations

import shlex
import sys
from functools import partial
from typing import Any

import anyio
import anyio.abc
import h11
import pytest
import trio

from mcpwire import ErrorCode
from mcpwire_adapters.client.http import HttpClient, ServerError
from mcpwire_adapters.testing.client_probe.fuzzing import Mutation, apply
from mcpwire_adapters.testing.client_probe.runner import run_scenario
from mcpwire_adapters.testing.client_probe.scenarios import by_name

from _backends import run
from test_session_get_stream import WAIT, Get, Scripted, frame, plain_client, scripted

ELICIT = {"mode": "form", "message": "Continue?", "requestedSchema": {"type": "object", "properties": {}}}
SENT_AT_MOST = 40  # the scripted server's own bound: past it, it holds the stream open, silent


def invalid_elicitation(n: int) -> dict[str, Any]:
    return {"id": f"e{n}", "method": "elicitation/create", "params": ELICIT}  # no "jsonrpc"


def ping(n: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": f"p{n}", "method": "ping"}


class Endless(Scripted):
    """:class:`Scripted` whose ``tools/call`` answers with an event stream of the server's own
    requests, ``kinds`` in turn, each sent once the client answered the one before, and never
    the call's result."""

    def __init__(self, *kinds: Any) -> None:
        super().__init__([], then=Get(status=405))
        self.kinds = kinds

    def answers(self) -> list[dict[str, Any]]:
        return [m for _, method, _, m in self.requests if method == "POST" and "method" not in m]

    def posted(self, method: str) -> list[dict[str, Any]]:
        return [m for _, verb, _, m in self.requests if verb == "POST" and m.get("method") == method]

    async def _post(self, conn: h11.Connection, stream: anyio.abc.ByteStream, message: dict[str, Any]) -> None:
        if message.get("method") != "tools/call":
            await super()._post(conn, stream, message)
            return
        head = [(b"content-type", b"text/event-stream"), (b"mcp-session-id", b"s1")]
        await stream.send(conn.send(h11.Response(status_code=200, headers=head)))
        try:
            for n in range(SENT_AT_MOST):
                await stream.send(conn.send(h11.Data(data=frame(self.kinds[n % len(self.kinds)](n)))))
                with anyio.move_on_after(WAIT):
                    while len(self.answers()) <= n:
                        await anyio.sleep(0.005)
            await anyio.sleep(WAIT)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass  # the client closed the call's connection: its cancellation


@pytest.mark.parametrize("kinds", [(invalid_elicitation,), (ping, invalid_elicitation)], ids=["invalid", "ping-and-invalid"])
def test_invalid_requests_on_a_call_s_stream_count_against_max_rounds(kinds: Any, backend: str) -> None:
    async def main() -> None:
        server = Endless(*kinds)
        async with scripted(server), HttpClient(server.url, plain_client(protocol_version="2025-11-25"),
                                                max_rounds=3, read_timeout=WAIT) as c:
            await c.connect()
            with anyio.fail_after(WAIT), pytest.raises(ServerError, match="more than 3 input rounds") as caught:
                await c.call_tool("work", {})
            assert caught.value.code == ErrorCode.INTERNAL_ERROR
            with anyio.fail_after(WAIT):  # the cancellation is POSTed before the call ends
                while not server.posted("notifications/cancelled"):
                    await anyio.sleep(0.01)
        invalid = [a for a in server.answers() if str(a["id"]).startswith("e")]
        assert [a["id"] for a in invalid] == ["e0", "e1", "e2", "e3"] if len(kinds) == 1 else ["e1", "e3", "e5", "e7"]
        assert all(a["error"]["code"] == ErrorCode.INVALID_REQUEST for a in invalid)  # each answered as JSON-RPC says
        pings = [a for a in server.answers() if str(a["id"]).startswith("p")]
        assert all(a["result"] == {} for a in pings) and len(pings) == (0 if len(kinds) == 1 else 4)  # not rounds

    run(main, backend, timeout=3 * WAIT)


# -- mcpwire call, through the client probe's hostile server ---------------------------------------------------

CLI = f"{shlex.quote(sys.executable)} -m mcpwire_adapters.cli call {{url}} echo --timeout 60"


def test_the_mcpwire_command_ends_a_call_whose_server_keeps_sending_invalid_requests() -> None:
    scenario = by_name("endless-requests")
    script = scenario.script()
    row = next(i for i, answer in enumerate(script) if answer.to == "tools/call")
    message = next(i for i, m in enumerate(script[row].messages) if isinstance(m, dict) and m.get("method") == "elicitation/create")
    answers = apply(script, [Mutation("field", row, [message, ["jsonrpc"], "delete", None])])
    done, _ = trio.run(partial(run_scenario, CLI, scenario, timeout=20.0, answers=answers, own=len(scenario.answers)))
    assert done.process.exit_code not in (None, 0) and not done.process.timed_out
    assert b"more than 8 input rounds" in done.process.stderr, done.process.stderr
    sent = [r.message() for r in done.records if r.method == "POST"]
    rejected = [m for m in sent if isinstance(m, dict) and m.get("error", {}).get("code") == ErrorCode.INVALID_REQUEST]
    assert len(rejected) == 9  # the bound (8), and the one past it
