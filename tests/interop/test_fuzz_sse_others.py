"""``mcpwire fuzz`` over the HTTP+SSE transport of 2024-11-05 against the official SDKs' servers
of that transport (docs/probing-others.md): the Python SDK's ``sse_app()``
(``peers/sdk_sse_server.py``) and the TypeScript SDK v1's SSEServerTransport
(``peers/ts_sse_server.cjs``, Node and the SDK from ``_node.py``). Neither is given
``--revision``: the fuzzer finds the transport as the probe does.

A short fixed-seed run against each breaks only the MUSTs listed here, each re-sent by hand
(curl: open the stream, initialize, post the shrunk case, read the stream) and read against its
sentence:

- both: a JSON request that is not a valid JSON-RPC request (``{"id": "", "method": "ping"}``,
  no ``jsonrpc``) is refused with HTTP 400 and plain text, and no response ever comes on the
  stream: JSON-RPC 2.0 "When a rpc call is made, the Server MUST reply with a Response" (an
  Invalid Request is answered -32600 with a null id);
- the TypeScript SDK v1: a POST with ``Origin: http://evil.example`` to the loopback server is
  accepted (202) and answered on the stream: 2024-11-05, "Servers MUST validate the Origin
  header on all incoming connections to prevent DNS rebinding attacks" (its Express app checks
  the Host header only). The Python SDK refuses it (403).

Bytes that are not JSON, refused with 400 and no -32700 on the stream, are this project's advice
only (the message never became JSON-RPC, and 2024-11-05 says nothing of how a POST is answered),
as the probe's parse-error check reads it.
"""

from __future__ import annotations

from typing import Any

import trio
from _node import PEERS, node_or_skip, node_setup, url_printed_by
from _peers import served

from mcpwire_adapters.testing.fuzz.runner import FuzzReport, fuzz
from mcpwire_adapters.testing.verdict import Problem

TIMEOUT = 120
SDK_SSE = str(PEERS / "sdk_sse_server.py")
OPTIONS: dict[str, Any] = dict(max_examples=60, seed=11, all_tools=True, timeout=3)
TRUE_FAILURES = {"python": {"jsonrpc.reply"}, "typescript-v1": {"jsonrpc.reply", "era.origin@2024-11-05"}}


def _must_rules(report: FuzzReport) -> set[str]:
    return {p.rule.id for f in report.failures for p in f.problems if isinstance(p, Problem) and p.strength == "MUST"}


def _shown(report: FuzzReport) -> list[tuple[list[str], list[bytes]]]:
    return [(list(f.problems), [s.request.body[:200] for s in f.subject]) for f in report.failures]


def test_a_short_fuzz_of_the_python_sdk_over_http_sse_finds_only_the_true_failures() -> None:
    async def go() -> FuzzReport:
        with trio.fail_after(TIMEOUT), served(SDK_SSE) as url:
            return await fuzz(url, **OPTIONS)

    report = trio.run(go)
    assert report.cases >= 20, report.cases
    assert _must_rules(report) <= TRUE_FAILURES["python"], _shown(report)


def test_a_short_fuzz_of_the_typescript_sdk_v1_over_http_sse_finds_only_the_true_failures() -> None:
    node = node_or_skip(node_setup)

    async def go() -> FuzzReport:
        with trio.fail_after(TIMEOUT):
            async with url_printed_by(node.command("ts_sse_server.cjs"), env=node.env, timeout=TIMEOUT) as url:
                return await fuzz(url, **OPTIONS)

    report = trio.run(go)
    assert report.cases >= 10, report.cases
    assert _must_rules(report) <= TRUE_FAILURES["typescript-v1"], _shown(report)
