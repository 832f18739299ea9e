"""Invariant 7 (fuzz/README.md): a call lane never changes an answer.

The fuzz server twice, once as it is and once with ``call_memo=0`` (no lanes,
mcpwire/server/call_fast_path.py), gets the same traffic in the same order: a valid tools/call of the
fuzz catalog (which teaches the first server that call's head), then that call mutated by the
strategies (its JSON, its bytes, its headers, or nothing). The host plays the same plan on
both. Every outcome must be the same: the reply, or what the exchange wrote, and the host's own
error if its plan misused the API.
"""

from __future__ import annotations

from typing import Any

import msgspec
import mcpwire
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz import strategies as S
from fuzz.bounds import budget, time_bound, tolerate_known
from fuzz.drive import Outcome, serve_http
from fuzz.targets import CATALOG, make_server

LANED, FULL = make_server(), make_server(call_memo=0)
TYPED_ONLY = msgspec.structs.replace(CATALOG, tools={})
SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


@st.composite
def calls_then_changed(draw: st.DrawFn) -> tuple[mcpwire.HttpRequest, mcpwire.HttpRequest]:
    # Mostly the Struct-typed tool, the one that has a lane; now and then any tool.
    catalog = draw(st.sampled_from([TYPED_ONLY, TYPED_ONLY, TYPED_ONLY, CATALOG]))
    message: Any = draw(S.valid_requests(catalog, methods=("tools/call",)))
    headers = draw(S.headers_for(message))
    valid = mcpwire.HttpRequest(method="POST", target="/mcp", headers=headers, body=S.body_bytes(message))
    kind = draw(st.sampled_from(["same", "json", "json", "bytes", "headers"]))
    body = valid.body
    if kind == "json":
        body = S.body_bytes(draw(S.mutated_json(message)))
    elif kind == "bytes":
        body = draw(S.mutated_bytes(body))
    elif kind == "headers":
        headers = draw(S.mutated_headers(headers))
    return valid, mcpwire.HttpRequest(method="POST", target="/mcp", headers=headers, body=body)


def _plain(outcome: Outcome) -> tuple[Any, ...]:
    return outcome.kind, outcome.output, outcome.final, outcome.method, repr(outcome.host_error)


@settings(max_examples=budget(300), suppress_health_check=SLOW)
@given(requests=calls_then_changed(), plan=S.host_plans())
def test_a_lane_never_changes_an_answer(requests: tuple[mcpwire.HttpRequest, mcpwire.HttpRequest], plan: Any) -> None:
    with time_bound(), tolerate_known():
        for request in requests:
            assert _plain(serve_http(LANED, request, plan)) == _plain(serve_http(FULL, request, plan)), request
    assert LANED.open_listeners == FULL.open_listeners == 0
