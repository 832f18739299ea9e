"""The probe's check that a response carries exactly the request's id, for every shape of id
(:func:`ids_echoed`): small and large integers (past 2**53, where a double rounds them, and past
int64), strings short, long and unicode.

The basic page of 2026-07-28: "Result responses MUST include the same ID as the request they
correspond to", and an error the same ID, or null where the id could not be read from a
malformed request. The same id is the same JSON token: 9223372036854775808 comes back as that
integer, not as 9223372036854776000 nor as 9.223372036854776e18, and 7 not as "7" or 7.0
(:func:`mcpwire_adapters.testing.judge.same_id`). Whether the server serves an id at all is not
judged here: the schema's RequestId is any string or integer, and this project's bounds (256
bytes, int64) are advice of the envelope.id-too-* checks.
"""

from __future__ import annotations

import json
from typing import Any

from ..judge import ECHO_OR_NULL, Expect, judge
from ..rawwire import Exchange, Request, Send, headers, meta
from ..verdict import Outcome, Problem
from .checks import Target

__all__ = ["IDS", "ids_echoed"]

IDS: tuple[Any, ...] = (
    0, -1, 7, 2**31, 2**53 + 1, 2**63 - 1, -(2**63), 2**63, 10**20,
    "", "7", "héllo ✓ 😀", 'a "quoted" \\ and\ttab', "x" * 256, "x" * 257, "é" * 512,
)
_EXPECT = Expect(None, id=ECHO_OR_NULL, any_answer=True, rule="jsonrpc.reply")


async def ids_echoed(target: Target, send: Send) -> Outcome:
    """server/discover once per id of :data:`IDS`; each answer's id judged against the one sent."""
    evidence: list[Exchange] = []
    problems: list[Problem] = []
    for rpc_id in IDS:
        body = json.dumps({"jsonrpc": "2.0", "id": rpc_id, "method": "server/discover", "params": {"_meta": meta()}},
                          ensure_ascii=False).encode()
        sent = await send(Request("POST", headers("server/discover"), body, rpc_id=rpc_id))
        evidence.append(sent)
        if sent[1] is None:
            continue  # no answer at all is not this check's to judge (the reply checks are)
        problems += [p for p in judge(_EXPECT, sent[0], sent[1], target) if p not in problems]
    return Outcome.judged(problems, evidence)
