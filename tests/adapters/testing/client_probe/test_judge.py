"""The client judge, rule by rule, on traffic fed straight into the hostile server (no sockets):
each test builds what a client sent, judges it, and names the row of the rules table it breaks
(or that it keeps)."""

from __future__ import annotations

import json
from typing import Any

from mcpwire_adapters.testing.client_probe.checks import judge_run
from mcpwire_adapters.testing.client_probe.hostile import HostileServer, Plan, Seen
from mcpwire_adapters.testing.client_probe.process import ProcessOutcome
from mcpwire_adapters.testing.client_probe.rules import CLIENT_RULES
from mcpwire_adapters.testing.client_probe.scenarios import BIG_BYTES, by_name
from mcpwire_adapters.testing.client_probe.script import Answer, Await
from mcpwire_adapters.testing.verdict import Outcome, Problem

ACCEPT = ("accept", "application/json, text/event-stream")
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"}}


class Wire:
    """A client's traffic fed to a scenario's server; each answer written whole at once."""

    def __init__(self, scenario: str, **options: Any) -> None:
        self.scenario = by_name(scenario)
        self.server = HostileServer(self.scenario, base="http://127.0.0.1:9", **options)
        self.clock = 100.0

    def send(self, method: str, message: Any = None, *headers: tuple[str, str], end: str | None = None,
             target: str = "/mcp", raw: bytes = b"") -> Plan:
        self.clock += 0.01
        raw = json.dumps(message).encode() if message is not None else raw
        plan = self.server.receive(Seen(method, target, headers, raw, self.clock))
        size = sum(len(p) for p in plan.parts if isinstance(p, bytes))
        self.server.wrote(plan.record, size, self.clock)
        self.server.finished(plan.record, end or plan.end, self.clock + 0.001, b"".join(
            p for p in plan.parts if isinstance(p, bytes))[:16384])
        return plan

    def call(self, method: str, params: dict[str, Any] | None = None, *, rpc_id: Any = 1, meta: Any = META,
             headers: tuple[tuple[str, str], ...] | None = None) -> Plan:
        params = {**(params or {}), **({"_meta": meta} if meta is not None else {})}
        name = params.get("name") or params.get("uri")
        if headers is None:
            headers = (ACCEPT, ("mcp-protocol-version", "2026-07-28"), ("mcp-method", method),
                       *((("mcp-name", name),) if isinstance(name, str) else ()))
        return self.send("POST", {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}, *headers)

    def judge(self, *, exit_code: int | None = 0, timed_out: bool = False, stderr: bytes = b"",
              memory: list[tuple[float, int]] | None = None) -> Outcome:
        process = ProcessOutcome([], exit_code=exit_code, timed_out=timed_out, started=100.0,
                                 seconds=self.clock - 100.0 + 5.0, stderr=stderr, memory=memory or [])
        return judge_run(self.scenario, self.server.records, process, stdio=False, mcp_url="http://127.0.0.1:9/mcp")


def rules_of(outcome: Outcome) -> list[str]:
    return [p.rule.id for p in outcome.problems if isinstance(p, Problem)]


def test_a_conforming_2026_client_passes() -> None:
    wire = Wire("basic")
    wire.call("tools/list", rpc_id=1)
    wire.call("tools/call", {"name": "echo", "arguments": {}}, rpc_id=1)  # reusing an answered id is allowed
    assert wire.judge().status == "pass"


def test_2026_headers_and_meta() -> None:
    wire = Wire("basic")
    wire.call("tools/list", headers=(ACCEPT, ("mcp-method", "tools/list")), rpc_id=1)
    wire.call("tools/list", headers=(ACCEPT, ("mcp-protocol-version", "2025-11-25"), ("mcp-method", "tools/list")), rpc_id=2)
    wire.call("tools/call", {"name": "echo"}, headers=(ACCEPT, ("mcp-protocol-version", "2026-07-28"),
                                                        ("mcp-method", "tools/call")), rpc_id=3)
    wire.call("tools/call", {"name": "echo"}, headers=(("accept", "application/json"), ("mcp-protocol-version", "2026-07-28"),
                                                        ("mcp-method", "tools/call"), ("mcp-name", "=?base64?ZWNobw==?=")),
              rpc_id=4)
    wire.call("tools/list", meta={"io.modelcontextprotocol/protocolVersion": "2026-07-28"}, rpc_id=5)
    outcome = wire.judge()
    assert outcome.status == "fail"
    assert rules_of(outcome).count("2026.version-header") == 1
    assert {"2026.version-match", "2026.request-headers", "2026.accept", "2026.meta", "2026.client-info"} <= set(
        rules_of(outcome))
    assert not any("Mcp-Name '=?base64?" in p for p in outcome.problems)  # the sentinel form is decoded


def test_2026_ids_in_flight_and_null() -> None:
    wire = Wire("basic")
    wire.call("tools/call", {"name": "echo"}, rpc_id=7)
    wire.server.records[-1].ended, wire.server.records[-1].ended_at = "open", 1e9  # still awaiting its answer
    wire.call("tools/list", rpc_id=7)
    wire.call("tools/list", rpc_id=None)
    assert {"2026.id-in-flight", "2026.request-id"} <= set(rules_of(wire.judge()))


def initialize(wire: Wire, rpc_id: Any = 1) -> str:
    plan = wire.send("POST", {"jsonrpc": "2.0", "id": rpc_id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}, ACCEPT)
    return dict(plan.headers)["mcp-session-id"]


def era_headers(session: str) -> tuple[tuple[str, str], ...]:
    return ACCEPT, ("mcp-session-id", session), ("mcp-protocol-version", "2025-11-25")


def test_a_conforming_2025_client_passes() -> None:
    wire = Wire("list-changed")
    session = initialize(wire)
    wire.send("POST", {"jsonrpc": "2.0", "method": "notifications/initialized"}, *era_headers(session))
    wire.send("POST", {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, *era_headers(session))
    wire.send("GET", None, ("accept", "text/event-stream"), *era_headers(session)[1:])
    outcome = wire.judge()
    assert outcome.status == "n/a"  # it never called the tool: the scenario's point not reached, and no problem


def test_2025_handshake_session_and_ids() -> None:
    wire = Wire("list-changed")
    wire.send("POST", {"jsonrpc": "2.0", "id": 1, "method": "ping"}, ACCEPT)  # before initialize
    session = initialize(wire, rpc_id=2)
    wire.send("POST", {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, *era_headers(session))  # id 2 again
    wire.send("POST", {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, ACCEPT, ("mcp-session-id", session))
    wire.send("POST", {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "echo"}}, ACCEPT,
              ("mcp-session-id", "wrong"), ("mcp-protocol-version", "2025-06-18"))
    wire.send("GET", None, ("accept", "application/json"), *era_headers(session)[1:])
    rules = rules_of(wire.judge())
    assert {"2025.initialize-first", "2025.initialized", "2025.id-unique", "2025.version-header", "2025.session-id",
            "2025.version-negotiated", "2025.get-accept"} <= set(rules)


def test_2025_a_404_on_the_session_calls_for_a_new_initialize() -> None:
    for then_initialize in (True, False):
        wire = Wire("session-404")
        session = initialize(wire)
        wire.send("POST", {"jsonrpc": "2.0", "method": "notifications/initialized"}, *era_headers(session))
        assert wire.send("POST", {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo"}},
                         *era_headers(session)).status == 404
        if then_initialize:
            initialize(wire, rpc_id=3)
        else:
            wire.send("POST", {"jsonrpc": "2.0", "id": 3, "method": "tools/call"}, *era_headers(session))
        assert ("2025.session-404" in rules_of(wire.judge())) is not then_initialize


def test_2025_a_client_may_stop_when_its_new_session_gets_404_too() -> None:
    every_call_404 = (Answer("tools/call", status=404, kind="empty"), *by_name("session-404").script()[1:])
    wire = Wire("session-404", script=every_call_404)
    for rpc_id in (1, 3):
        session = initialize(wire, rpc_id=rpc_id)
        wire.send("POST", {"jsonrpc": "2.0", "method": "notifications/initialized"}, *era_headers(session))
        assert wire.send("POST", {"jsonrpc": "2.0", "id": rpc_id + 1, "method": "tools/call"},
                         *era_headers(session)).status == 404
    assert "2025.session-404" not in rules_of(wire.judge())  # it renewed once, then stopped


def test_2025_the_servers_requests_are_answered_with_their_ids() -> None:
    wire = Wire("basic-2025")
    session = initialize(wire)
    wire.send("POST", {"jsonrpc": "2.0", "method": "notifications/initialized"}, *era_headers(session))
    plan = wire.send("POST", {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo"}},
                     *era_headers(session))
    assert plan.parts[1] == Await((1001,))  # the call's stream awaits the answer to its ping
    assert "2025.ping" in rules_of(wire.judge())  # never answered
    wire.send("POST", {"jsonrpc": "2.0", "id": 1001, "result": {"x": 1}}, *era_headers(session))
    wire.send("POST", {"jsonrpc": "2.0", "id": 99, "result": {}}, *era_headers(session))
    rules = rules_of(wire.judge())
    assert rules.count("2025.ping") == 1 and "jsonrpc.response-id" in rules  # not empty; an id the server never sent


def test_2026_input_required_retries() -> None:
    caps = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
    wire = Wire("endless-rounds")
    wire.call("tools/call", {"name": "echo"}, rpc_id=1, meta=caps)
    wire.call("tools/call", {"name": "echo", "requestState": "hostile-state-1",
                             "inputResponses": {"confirm-1": {"action": "accept", "content": {"ok": True}}}},
              rpc_id=2, meta=caps)
    assert wire.judge().status == "pass"
    wire.call("tools/call", {"name": "echo", "requestState": "hostile-state-x", "inputResponses": {}}, rpc_id=2, meta=caps)
    wire.call("prompts/get", {"name": "p", "requestState": "hostile-state-1"}, rpc_id=9)
    rules = rules_of(wire.judge())
    assert {"2026.retry-id", "2026.request-state", "2026.inputs", "2026.state-elsewhere"} <= set(rules)


def test_resume_after_a_cut_stream() -> None:
    def run(*, wait: float, last_event_id: str | None) -> list[str]:
        wire = Wire("cut-stream-resumable")
        session = initialize(wire)
        wire.send("POST", {"jsonrpc": "2.0", "method": "notifications/initialized"}, *era_headers(session))
        wire.send("POST", {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo"}},
                  *era_headers(session))
        if last_event_id != "none":
            wire.clock += wait
            extra = () if last_event_id is None else (("last-event-id", last_event_id),)
            wire.send("GET", None, ("accept", "text/event-stream"), *era_headers(session)[1:], *extra)
        return rules_of(wire.judge())

    assert run(wait=0.4, last_event_id="ev-1") == []
    assert run(wait=0.05, last_event_id="ev-1") == ["2025.retry"]
    assert run(wait=0.4, last_event_id="ev-0") == ["2025.last-event-id"]
    assert run(wait=0.4, last_event_id=None) == ["2025.last-event-id"]
    assert run(wait=0.4, last_event_id="none") == ["2025.poll"]
    assert CLIENT_RULES["2025.poll"].strength == "SHOULD" and CLIENT_RULES["2025.retry"].strength == "MUST"


def test_oauth_flow_rules() -> None:
    wire = Wire("oauth")
    wire.call("tools/list")
    wire.send("GET", None, target="/.well-known/oauth-authorization-server/as")
    wire.send("GET", None, target="/as/authorize?response_type=code&redirect_uri=http%3A%2F%2F127.0.0.1%3A1%2Fcb"
                                  "&code_challenge=abc&code_challenge_method=plain&resource=http%3A%2F%2Fother%2Fmcp")
    wire.send("POST", None, target="/as/token", raw=b"grant_type=authorization_code&code=hostile-code-1")
    wire.call("tools/list", rpc_id=2)  # no Authorization header after the token was issued
    rules = rules_of(wire.judge())
    assert rules.count("2026.oauth-pkce") == 2  # plain, then no code_verifier at the token endpoint
    assert {"2026.oauth-resource", "2026.oauth-state", "2026.oauth-bearer"} <= set(rules)
    mismatch = Wire("oauth-issuer-mismatch")
    mismatch.send("GET", None, target="/.well-known/oauth-authorization-server/as")
    assert rules_of(mismatch.judge()) == []
    mismatch.send("POST", None, target="/as/register")
    assert rules_of(mismatch.judge()) == ["2026.oauth-issuer"]
    assert Wire("oauth-no-pkce").judge().status == "n/a"  # never fetched the metadata: no OAuth


def test_robustness_is_advice() -> None:
    wire = Wire("oversized")
    wire.call("tools/call", {"name": "echo"})
    big = wire.server.records[-1]
    assert big.big == BIG_BYTES
    grown = [(big.at - 0.1, 80 * 2**20), (big.at + 0.1, 80 * 2**20 + BIG_BYTES)]
    outcome = wire.judge(exit_code=None, timed_out=True, memory=grown)
    assert outcome.status == "advice" and set(rules_of(outcome)) == {"robust.memory", "robust.hang"}
    crashed = wire.judge(exit_code=1, stderr=b'Traceback (most recent call last):\n  File "c.py", line 1\nKeyError: 1\n')
    assert rules_of(crashed) == ["robust.crash"]
    assert wire.judge(memory=[(big.at - 0.1, 80 * 2**20), (big.at + 0.1, 90 * 2**20)]).status == "pass"


def test_every_rule_is_as_strong_as_its_sentence() -> None:
    for rule in CLIENT_RULES.values():
        words = rule.quote.replace("MUST NOT", "MUST")
        if rule.strength == "MUST":
            assert "MUST" in words or "REQUIRED" in words, rule.id
        elif rule.strength == "SHOULD":
            assert "SHOULD" in words and "MUST" not in words, rule.id
        else:
            assert rule.id.startswith("robust.") and rule.source == "mcpwire", rule.id
        revision = {"2026": "MCP 2026-07-28", "2025": "MCP 2025-11-25"}.get(rule.id.split(".")[0])
        assert revision is None or rule.source in (revision, "RFC 8414"), rule.id
        assert rule.url or rule.source == "mcpwire", rule.id
        if revision is not None and rule.url and "modelcontextprotocol.io" in rule.url:
            assert revision.split()[1] in rule.url, rule.id  # the page of the revision it belongs to
