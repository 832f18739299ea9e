"""``era.event-ids-unique``: an SSE event id, where a server gives one, is globally unique across
all streams of a session (Basic > Transports, Resumability and Redelivery, of 2025-11-25,
2025-06-18 and 2025-03-26). The raw session server of ``_era_servers.py`` with its GET stream
changed: one whose every GET stream starts with the same id fails; one that refuses the next
GET streams with 409 (as a server that has not yet seen the first end would) is tried again,
and passes.
"""

from __future__ import annotations

import itertools
from http.server import BaseHTTPRequestHandler
from typing import Any

import trio
from _era_servers import session_server
from _stdlib_http import serving_http

from mcpwire_adapters.testing.probe.runner import Findings, probe, select
from mcpwire_adapters.testing.verdict import Problem

TIMEOUT = 60.0
REFUSED = 2  # GETs refused 409 after the first (the probe tries up to 5 times)


def _getting(revision: str, *, repeat: bool, refusals: int = 0) -> type[BaseHTTPRequestHandler]:
    """The raw session server of ``revision``, its GET streams each starting with an event id:
    the same one on every stream (``repeat``) or one of its own; the ``refusals`` GETs after the
    first are refused 409 (counted, not timed: the test does not depend on the machine's pace)."""
    streams = itertools.count(1)
    gets = itertools.count(1)

    class Getting(session_server(revision)):  # type: ignore[misc]
        def do_GET(self) -> None:
            refused = self._session_refusal()
            if refused is not None:
                return self._send(refused)  # type: ignore[no-any-return]
            if 1 < next(gets) <= 1 + refusals:
                return self._send(409, b"a GET stream is open", "text/plain")  # type: ignore[no-any-return]
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(f"id: {'g-1' if repeat else f'g{next(streams)}-1'}\ndata: \n\n".encode())
            self.wfile.flush()

    return Getting


def _probe(handler: type[BaseHTTPRequestHandler], revision: str) -> Findings:
    async def go(url: str) -> Findings:
        with trio.fail_after(TIMEOUT):
            return await probe(url, checks=select(["era.event-ids-unique"]), rate=0, revisions=[revision])
    with serving_http(handler) as url:
        return trio.run(go, url)


def test_an_id_given_on_two_get_streams_fails() -> None:
    for revision in ("2025-11-25", "2025-03-26"):
        [finding] = _probe(_getting(revision, repeat=True), revision)
        assert (finding.status, finding.detail) == ("fail", "event id 'g-1' on GET stream 1 and again on GET stream 2")
        problem: Any = finding.problems[0]
        assert isinstance(problem, Problem) and problem.rule.id == f"era.event-ids-unique@{revision}"
        assert problem.strength == "MUST" and "globally unique across all streams" in problem.rule.quote


def test_a_second_get_refused_while_the_first_is_not_seen_closed_is_tried_again() -> None:
    [finding] = _probe(_getting("2025-06-18", repeat=False, refusals=REFUSED), "2025-06-18")
    assert (finding.status, finding.detail) == ("pass", "2 event ids on 2 streams")
    statuses = [reply.status for _, reply, _ in finding.evidence if reply is not None]
    assert statuses.count(409) == REFUSED, statuses
