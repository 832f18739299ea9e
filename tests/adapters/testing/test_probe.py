"""Tests of ``mcpwire probe`` (``mcpwire_adapters.testing.probe.runner``).

Two targets prove the checks both ways: the conformance fixture over HTTP (a subprocess,
stopped by closing its stdin), on which every check passes or is not applicable, even with
``strict`` (this project's conventions too); and a server that gets every rule wrong (the
standard library's HTTP server in a thread, on 127.0.0.1, shut down by the fixture), on which
every check fails, warns or advises with its evidence, as the strength of its rule says. The
reports parse as JSON and JUnit XML; docs/probing.md's tables of checks and of rules are
generated from the registry and the rule table, and its links to the specification are held to
the known pages and anchors by tests/integration/test_docs.py.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from _lines import FIXTURE_STDIO
from _stdlib_http import serving_http
import trio

from mcpwire_adapters.testing.judge import RULES
from mcpwire_adapters.testing.probe.checks import UNKNOWN_TOOL, cite_url
from mcpwire_adapters.testing.probe.runner import (
    CHECKS,
    REVISIONS,
    Check,
    Finding,
    Findings,
    evidence_json,
    json_report,
    junit_report,
    probe,
    probe_stdio,
    select,
    text_report,
)
from mcpwire_adapters.testing.rawwire import NDJSON, Reply, Request
from mcpwire_adapters.testing.verdict import Problem

REPO = Path(__file__).resolve().parents[3]
CLI = [sys.executable, "-m", "mcpwire_adapters.cli"]
TIMEOUT = 30.0




class WrongAboutEverything(BaseHTTPRequestHandler):
    """Answers any POST 200 with a result and a null id (requests, notifications, responses,
    batches and garbage alike), GET and DELETE too; opens a session for any initialize, naming
    the revision asked for and declaring tasks; advertises tools, resources and prompts
    with list changes but leaves ttlMs and cacheScope out; its one tool asks for input and then
    accepts any requestState. No header, version or _meta is looked at."""

    called: list[str] = []  # the tool names of every tools/call received

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _answer(self, result: Any, *extra: tuple[str, str]) -> None:
        body = json.dumps({"jsonrpc": "2.0", "id": None, "result": result}).encode()
        self.send_response(200)
        for name, value in extra:
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        try:
            message = json.loads(raw)
        except ValueError:
            message = None
        method = message.get("method") if isinstance(message, dict) else None
        params = message.get("params") if isinstance(message, dict) else None
        if method == "tools/call" and isinstance(params, dict):
            self.called.append(str(params.get("name")))
        if method == "server/discover":
            self._answer({"supportedVersions": ["2026-07-28"], "capabilities": {
                "tools": {"listChanged": True}, "resources": {}, "prompts": {}}})
        elif method == "initialize" and isinstance(params, dict):  # any version, as asked; tasks declared
            self._answer({"protocolVersion": params.get("protocolVersion"), "capabilities": {"tasks": {}},
                          "serverInfo": {"name": "broken", "version": "1"}}, ("Mcp-Session-Id", "broken-session"))
        elif method == "tools/list":
            self._answer({"tools": [{"name": "ask", "inputSchema": {"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"}}}}]})
        elif method == "tools/call" and isinstance(params, dict) and "requestState" not in params:
            self._answer({"resultType": "input_required", "requestState": "state-1",
                          "inputRequests": {"q": {"method": "roots/list", "params": {}}}})
        else:
            self._answer({})

    do_GET = do_DELETE = do_POST


@pytest.fixture(scope="module")
def broken_url() -> Iterator[str]:
    with serving_http(WrongAboutEverything) as url:
        yield url


def run_probe(url: str, **options: Any) -> Findings:
    async def go() -> Findings:
        with trio.fail_after(TIMEOUT):
            return await probe(url, **options)
    return trio.run(go)


# -- the registry ------------------------------------------------------------------------------------
def test_checks_are_named_rows_citing_a_section() -> None:
    assert len(CHECKS) >= 25
    assert len({c.id for c in CHECKS}) == len(CHECKS)
    for check in CHECKS:
        assert re.fullmatch(r"[a-z]+(\.[a-z0-9-]+)+", check.id), check.id
        assert re.fullmatch(r"[a-z/-]+(#[a-z-]+)?|JSON-RPC 2\.0 section [\d.]+", check.cites), (check.id, check.cites)
        assert check.revisions and set(check.revisions) <= set(REVISIONS), check.id
        assert check.transports and set(check.transports) <= {"streamable-http", "http+sse", "stdio"}, check.id
        assert check.title and check.sends
        assert (check.build is not None and check.expect is not None) != (check.steps is not None), check.id


def test_only_selects_by_pattern() -> None:
    assert [c.id for c in select(["envelope.id-*-refused"])] == [
        "envelope.id-null-refused", "envelope.id-bool-refused", "envelope.id-object-refused",
        "envelope.id-fraction-refused", "envelope.id-too-large-refused", "envelope.id-too-long-refused"]
    assert select([]) == CHECKS and select(["nothing.*"]) == ()


def test_reply_messages_of_json_sse_and_ndjson() -> None:
    sse = (("content-type", "text/event-stream"),)
    stream = b': keepalive\r\n\r\ndata: {"a": 1}\r\n\r\ndata: {"b"'
    assert Reply(200, sse, b": keepalive\r\n\r\n").messages(whole_events_only=True) == []
    assert Reply(200, sse, stream).messages(whole_events_only=True) == [{"a": 1}]
    assert Reply(200, sse, stream).messages()[1] == {"mcpwire-probe": "not JSON", "text": '{"b"'}
    assert Reply(200, (("content-type", "application/json"),), b'{"a": 1').messages(whole_events_only=True) == []
    assert Reply(0, (("content-type", NDJSON),), b'{"a": 1}\n\n{"b": 2}').messages() == [{"a": 1}, {"b": 2}]


# -- against our fixture: nothing fails ---------------------------------------------------------------
def _expected_keys(revisions: tuple[str, ...], transport: str) -> list[str]:
    """The keys of the checks a run over ``transport`` makes in ``revisions`` (no auth.*: the
    fixture asks for no authorization)."""
    return [c.bound(r).key for r in revisions for c in CHECKS
            if c.holds(r, transport) and not c.id.startswith("auth.")]


SERVED = ("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26")  # what the fixture negotiates
NO_RESUMPTION = "the GET stream gave no event id within 0.5 s (HTTP 200): the server offers no resumption"
NO_EVENT_IDS = "event ids on 0 of the session's streams (two GET, two POST): nothing to compare"


def test_every_check_passes_or_is_not_applicable_on_the_fixture(fixture_url: str) -> None:
    findings = run_probe(fixture_url, rate=0, call_tools=True, strict=True)
    assert findings.negotiated is not None and findings.negotiated.revisions == list(SERVED)
    assert [f.subject.key for f in findings] == _expected_keys(SERVED, "streamable-http")
    not_passed = [(f.subject.key, f.status, f.detail) for f in findings if f.status != "pass"]
    # With --call-tools the fixture has something for every check but one: it lacks no capability.
    # Its GET streams give event ids (for resumption) in 2025-11-25 only, whose streams start with a
    # priming event.
    assert not_passed == [
        ("cancel.listen-no-late-response", "n/a", "on HTTP a stream ends when its connection closes; nothing comes "
                                                  "back to observe"),
        ("capabilities.unadvertised-refused", "n/a", "the server advertises tools, prompts, resources and completions"),
        *((f"era.{c}@{r}", "n/a", detail) for r in ("2025-06-18", "2025-03-26")
          for c, detail in (("resume", NO_RESUMPTION), ("event-ids-unique", NO_EVENT_IDS))),
    ], not_passed
    without_tools = run_probe(fixture_url, checks=select(["mrtr.*"]), rate=0)
    assert [(f.status, f.detail) for f in without_tools] == [
        ("n/a", "needs a tool call: pass --call-tools to allow it")]


# -- against a broken server: every check fails, warns or advises, with evidence -------------------------
# What the official text only recommends (SHOULD): a warning; what it does not say at all (this
# project's codes, statuses and id bounds): advice, shown with strict. Every other check fails.
ERA = ("2025-11-25", "2025-06-18", "2025-03-26")  # it opens a session of any revision asked for
WARNED = {"http.get-refused", "http.delete-refused", *(f"era.session-required@{r}" for r in ERA)}
ADVISED = {"envelope.batch-refused", "envelope.id-null-refused", "envelope.id-bool-refused", "envelope.id-object-refused",
           "envelope.response-not-answered", "http.content-type-wrong", "era.batch-refused@2025-11-25",
           "era.batch-refused@2025-06-18", *(f"era.id-null-answered@{r}" for r in ERA)}
# served: RFC 9110 lets a server take these; its sessions' ids and its InitializeResult are right
PASSED = {"http.accept-missing", "http.accept-json-only",
          *(f"era.{c}@{r}" for r in ERA for c in ("initialize-result", "content-type", "session-id-visible"))}


def test_every_check_fails_on_a_server_wrong_about_everything(broken_url: str) -> None:
    findings = run_probe(broken_url, rate=0, call_tools=True, strict=True)
    by_status: dict[str, set[str]] = {}
    for f in findings:
        by_status.setdefault(f.status, set()).add(f.subject.key)
    # stdio only (shown to fail below); it declares no tools in its InitializeResult; its GET gives no event id
    assert by_status.pop("n/a") == {"cancel.listen-no-late-response",
                                    *(f"era.{c}@{r}" for r in ERA for c in ("tools-list", "resume",
                                                                             "event-ids-unique"))}
    assert by_status.pop("warn") == WARNED and by_status.pop("advice") == ADVISED and by_status.pop("pass") == PASSED
    assert set(by_status) == {"fail"}
    for finding in findings:
        if finding.status in ("n/a", "pass"):
            continue
        assert finding.detail and finding.evidence, finding.subject.id
        request, reply, error = finding.evidence[-1]
        assert reply is not None and error is None, finding.subject.id
        assert reply.status == 200
    by_id = {f.subject.key: f for f in findings}
    assert by_id["notification.cancelled-202"].detail == "HTTP status 200, expected 202; a body of 44 bytes, expected none"
    assert by_id["method.unknown"].detail == ("HTTP status 200, expected 404; a result, expected error -32601; "
                                              "id None, expected the request's id 'unknown-1'")
    assert "ttlMs None, expected an integer >= 0" in by_id["discover.shape"].detail
    assert by_id["http.get-refused"].detail == "HTTP status 200, expected 405 (or 400 from a server keeping sessions)"
    assert "expected notifications/subscriptions/acknowledged" in by_id["listen.acknowledged-first"].detail
    assert "-TAMPERED" in by_id["mrtr.request-state-tampered"].evidence[1][0].body.decode()
    # Each problem names its rule: 200 for a foreign Origin breaks the transport's MUST (403).
    origin = by_id["http.origin-foreign-refused"].problems[0]
    assert isinstance(origin, Problem) and (origin.rule.id, origin.strength) == ("mcp.origin", "MUST")


def test_without_strict_the_advice_is_withheld(broken_url: str) -> None:
    findings = run_probe(broken_url, checks=select(["http.*", "envelope.id-bool-refused"]), rate=0)
    assert {f.subject.id: f.status for f in findings} == {
        "http.get-refused": "warn", "http.delete-refused": "warn", "http.content-type-wrong": "pass",
        "http.accept-missing": "pass", "http.accept-json-only": "pass", "http.origin-foreign-refused": "fail",
        "envelope.id-bool-refused": "pass"}
    assert [f.withheld for f in findings if f.status == "pass"] == [2, 1, 0, 0]
    text = text_report(broken_url, findings)
    assert "advice on 2 checks withheld" in text and "--strict shows it" in text
    assert "NOTE" not in text and "WARN  http.get-refused" in text
    assert 'MUST: HTTP status 200, expected 403\n        MCP 2026-07-28: "If the Origin header is present and invalid' in text


def test_no_listed_tool_is_called_without_call_tools(broken_url: str) -> None:
    WrongAboutEverything.called.clear()
    run_probe(broken_url, rate=0)
    assert set(WrongAboutEverything.called) == {UNKNOWN_TOOL}  # only the name that cannot exist
    run_probe(broken_url, checks=select(["mrtr.*"]), rate=0, call_tools=True)
    assert "ask" in WrongAboutEverything.called


def test_evidence_bodies_are_cut() -> None:
    request = Request("POST", (), b"x" * 3000)
    shown = evidence_json((request, Reply(200, (), b"y" * 2500), None))
    assert shown["request"]["body"] == "x" * 2000 + "... (1000 more bytes)"
    assert shown["response"]["body"] == "y" * 2000 + "... (500 more bytes)"


def test_the_rate_limit_spaces_requests(broken_url: str) -> None:
    checks = select(["envelope.id-*-refused"])  # 6 checks, plus discover and tools/list: 8 requests

    async def go() -> float:
        start = trio.current_time()
        await probe(broken_url, checks, rate=40)
        return trio.current_time() - start
    assert trio.run(go) >= 7 / 40


# -- stdio ------------------------------------------------------------------------------------------------
BROKEN_STDIO = [sys.executable, str(Path(__file__).with_name("_probe_broken_stdio.py"))]


def run_stdio(command: list[str], **options: Any) -> Findings:
    async def go() -> Findings:
        with trio.fail_after(TIMEOUT):
            return await probe_stdio(command, rate=0, call_tools=True, timeout=3, strict=True, **options)
    return trio.run(go)


def test_over_stdio_the_fixture_passes_every_check_but_the_http_ones() -> None:
    findings = run_stdio(FIXTURE_STDIO)
    assert findings.negotiated is not None and findings.negotiated.revisions == list(SERVED)
    assert [f.subject.key for f in findings] == _expected_keys(SERVED, "stdio")
    not_passed = [(f.subject.key, f.status, f.detail) for f in findings if f.status != "pass"]
    unadvertised = ("capabilities.unadvertised-refused", "n/a",
                    "the server advertises tools, prompts, resources and completions")
    assert not_passed == [(c.id, "n/a", "a rule of HTTP; stdio has no statuses or headers") if c.http_only
                          else unadvertised for c in CHECKS if c.http_only or c.id == unadvertised[0]]


def test_a_server_lacking_a_capability_refuses_its_methods() -> None:
    """tests/stdio_app.py (an mcpwire App without every capability) passes the check the
    fixture cannot: a method of a capability it does not advertise is -32601."""
    findings = run_stdio([sys.executable, str(REPO / "tests" / "stdio_app.py")],
                         checks=select(["capabilities.*", "*.list-cacheable"]))
    assert [(f.subject.id, f.status) for f in findings if f.subject.id.startswith("capabilities.")] == [
        ("capabilities.unadvertised-refused", "pass")]
    assert "fail" not in {f.status for f in findings}


def test_over_stdio_every_check_fails_on_a_server_wrong_about_everything() -> None:
    findings = run_stdio(BROKEN_STDIO)
    applicable = [f for f in findings if not f.subject.http_only]
    # This server echoes the ids of server/discover (the method of most checks, and of the sentinel
    # after each message) and serves discover without clientInfo; it advertises no prompts. What it
    # serves that only this project refuses is advice; an unknown log level served, a warning.
    assert [(f.subject.id, f.status) for f in applicable if f.status != "fail"] == [
        ("meta.client-info-optional", "pass"), ("envelope.batch-refused", "advice"),
        ("envelope.jsonrpc-missing", "advice"), ("envelope.jsonrpc-wrong", "advice"),
        ("envelope.id-null-refused", "advice"), ("envelope.id-fraction-refused", "advice"),
        ("envelope.id-too-large-refused", "advice"), ("envelope.id-too-long-refused", "advice"),
        ("envelope.id-string-echoed", "pass"), ("envelope.id-echoed-exactly", "pass"),
        ("envelope.response-not-answered", "advice"), ("meta.log-level-unknown", "warn"),
        ("meta.progress-token-bool", "advice"), ("meta.key-invalid", "advice"), ("meta.client-info-invalid", "advice"),
        ("prompts.list-cacheable", "n/a")]
    by_id = {f.subject.id: f for f in findings}
    assert by_id["notification.cancelled-202"].detail == "1 lines in reply, expected none"
    assert by_id["envelope.batch-refused"].evidence[0][0].method == "LINE"
    assert "expected notifications/subscriptions/acknowledged" in by_id["listen.acknowledged-first"].detail
    assert by_id["cancel.listen-no-late-response"].detail.startswith("a response to the cancelled listen request")


def test_cli_probes_a_command_after_dashes() -> None:
    done = subprocess.run([*CLI, "probe", "--only", "notification.*", "--rate", "0", "--", *BROKEN_STDIO],
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 1, done.stderr
    assert done.stdout.count("FAIL  notification.") == 3


# -- reports ---------------------------------------------------------------------------------------------
def test_reports_parse_and_carry_the_evidence(broken_url: str) -> None:
    findings = run_probe(broken_url, checks=select(["envelope.batch-refused", "tools.unknown-tool",
                                                    "http.get-refused"]), rate=0, strict=True)
    report = json.loads(json_report(broken_url, findings))
    assert report["counts"] == {"pass": 0, "fail": 1, "warn": 1, "advice": 1, "n/a": 0}
    batch = report["checks"][0]
    assert (batch["id"], batch["cites"], batch["status"]) == (
        "envelope.batch-refused", "https://modelcontextprotocol.io/specification/2026-07-28/basic#messages", "advice")
    assert batch["evidence"][0]["request"]["body"].startswith("[{")
    assert batch["evidence"][0]["response"]["status"] == 200
    assert ["Content-Type", "application/json"] in batch["evidence"][0]["request"]["headers"]
    tool = report["checks"][2]["problems"][0]  # the unknown tool's result carries a null id: a MUST
    assert (tool["strength"], tool["rule"], tool["source"]) == ("MUST", "mcp.result-id", "MCP 2026-07-28")
    assert tool["quote"].startswith("Result responses MUST include the same ID")
    assert tool["url"] == "https://modelcontextprotocol.io/specification/2026-07-28/basic#responses"

    suite = ElementTree.fromstring(junit_report(broken_url, findings))
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("3", "1", "0")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["envelope.batch-refused", "http.get-refused", "tools.unknown-tool"]
    failure = cases[2].find("failure")
    assert failure is not None and failure.text is not None and '"status": 200' in failure.text
    warned = cases[1].find("system-out")
    assert warned is not None and warned.text is not None and warned.text.startswith("SHOULD: HTTP status 200")

    text = text_report(broken_url, findings)
    assert "NOTE  envelope.batch-refused" in text and "< 200 (application/json)" in text
    assert "FAIL  tools.unknown-tool" in text and "WARN  http.get-refused" in text
    assert text.endswith("0 passed, 1 failed (MUST), 1 warned (SHOULD), 1 with advice, 0 not applicable\n")


def test_the_text_report_escapes_control_characters() -> None:
    finding = Finding(CHECKS[0], "fail", "bad \x1b[31m red")
    assert "\x1b" not in text_report("http://x/mcp", [finding]) and "\\x1b[31m" in text_report("http://x/mcp", [finding])


# -- the command line ------------------------------------------------------------------------------------
def test_cli_exit_codes_and_files(fixture_url: str, broken_url: str, tmp_path: Path) -> None:
    done = subprocess.run([*CLI, "probe", fixture_url, "--only", "envelope.*", "--rate", "0",
                           "--json", str(tmp_path / "r.json"), "--junit", str(tmp_path / "r.xml")],
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads((tmp_path / "r.json").read_text())["counts"]["fail"] == 0
    assert ElementTree.parse(tmp_path / "r.xml").getroot().get("failures") == "0"
    assert "PASS  envelope.id-null-refused" in done.stdout

    done = subprocess.run([*CLI, "probe", broken_url, "--only", "http.*", "--rate", "0", "--json", "-"],
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 1, done.stderr  # the foreign Origin served: a MUST
    assert json.loads(done.stdout)["counts"] == {"pass": 3, "fail": 1, "warn": 2, "advice": 0, "n/a": 0}
    assert "FAIL  http.origin-foreign-refused" in done.stderr and "WARN  http.get-refused" in done.stderr

    # Warnings and advice never make the exit status non-zero; --strict shows the advice.
    for extra in ([], ["--strict"]):
        done = subprocess.run([*CLI, "probe", broken_url, "--only", "http.content-type-*", "--only", "http.get-*",
                               "--rate", "0", *extra], capture_output=True, text=True, timeout=TIMEOUT)
        assert done.returncode == 0, done.stdout + done.stderr
        assert ("NOTE  http.content-type-wrong" in done.stdout) == bool(extra), done.stdout
        assert "WARN  http.get-refused" in done.stdout

    done = subprocess.run([*CLI, "probe", broken_url, "--only", "nothing.*"], capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert done.returncode == 4 and "no check matches" in done.stderr


def test_cli_unreachable_target_exits_3() -> None:
    with socket_bound() as port:  # a port nothing listens on
        done = subprocess.run([*CLI, "probe", f"http://127.0.0.1:{port}/mcp"], capture_output=True, text=True,
                              timeout=TIMEOUT)
    assert done.returncode == 3 and "cannot reach" in done.stderr, done.stderr


class socket_bound:
    """A port taken and not listened on, for as long as the block runs."""

    def __enter__(self) -> int:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        return int(self.sock.getsockname()[1])

    def __exit__(self, *exc: object) -> None:
        self.sock.close()


# -- docs ------------------------------------------------------------------------------------------------
def _cell(text: str) -> str:  # markdown: no table breaks, no emphasis
    return re.sub(r"([|_*\\`<>\[\]])", r"\\\1", text)


_TRANSPORT_NAMES = {"streamable-http": "Streamable HTTP", "http+sse": "HTTP+SSE", "stdio": "stdio"}


def _anchor(rule_id: str) -> str:
    return "rule-" + rule_id.replace(".", "-").replace("@", "-")


def checks_table() -> str:
    rows = ["| Check | Rule | Revisions | Transports | Strength | Sends | Cites |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    def cites(check: Check) -> str:
        url = cite_url(check.cites, check.revisions[0])
        label = (url or "").split("#")[0].removeprefix("https://modelcontextprotocol.io/specification/")
        return f"[{label}]({url})" if url else check.cites
    def row_of(check: Check, name: str) -> str:  # the rule as the newest revision the check runs in states it
        return name if name in RULES else next(f"{name}@{r}" for r in check.revisions if f"{name}@{r}" in RULES)
    def strengths(check: Check) -> str:
        return ", ".join(f"{RULES[row_of(check, r)].strength} [`{r}`](#{_anchor(row_of(check, r))})"
                         for r in check.rules())
    def transports(check: Check) -> str:
        return ", ".join(_TRANSPORT_NAMES[t] for t in check.transports if not (check.http_only and t == "stdio"))
    rows += [f"| `{c.id}` | {_cell(c.title)} | {', '.join(c.revisions)} | {transports(c)} | {strengths(c)} | "
             f"{_cell(c.sends)} | {cites(c)} |" for c in CHECKS]
    return "\n".join(rows) + "\n"


def rules_table() -> str:
    rows = ["| Rule | Strength | Source | What it says |", "| --- | --- | --- | --- |"]
    for key, rule in RULES.items():
        source = f"[{rule.source}]({rule.url})" if rule.url else rule.source
        rows.append(f'| <span id="{_anchor(key)}"></span>`{key}` | {rule.strength} | {source} | '
                    f"{_cell(rule.quote)} |")
    return "\n".join(rows) + "\n"


@pytest.mark.parametrize("marker, table", [("checks", checks_table), ("rules", rules_table)])
def test_docs_list_every_check_and_rule(marker: str, table: Any) -> None:
    """docs/probing.md holds the tables generated from the registry and the rule table between
    markers (regenerate: MCPWIRE_REGEN_DOCS=1 pytest tests/adapters/testing/test_probe.py -k docs)."""
    path = REPO / "docs" / "probing.md"
    text = path.read_text()
    start, end = f"<!-- {marker}: begin (generated by tests/adapters/testing/test_probe.py) -->\n", f"<!-- {marker}: end -->"
    before, rest = text.split(start)
    _, after = rest.split(end)
    expected = before + start + table() + end + after
    if expected != text and os.environ.get("MCPWIRE_REGEN_DOCS") == "1":
        path.write_text(expected)
        return
    assert text == expected, f"docs/probing.md's table of {marker} is stale: regenerate it (see this test's docstring)"


# -- the pytest plugin ----------------------------------------------------------------------------
def _pytest_probe(target: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``pytest --mcp-target TARGET`` in an empty folder: only the probe's items run."""
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider",
                           "--mcp-target", target, "--mcp-rate", "0", "-rfs"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)


def test_the_pytest_plugin_runs_every_check_as_a_test(fixture_url: str, broken_url: str, tmp_path: Path) -> None:
    good = _pytest_probe(fixture_url, tmp_path)
    assert good.returncode == 0, good.stdout[-3000:]
    summary = good.stdout.strip().splitlines()[-1]
    passed = int(re.search(r"(\d+) passed", summary).group(1))  # type: ignore[union-attr]
    skipped = int(re.search(r"(\d+) skipped", summary).group(1)) if "skipped" in summary else 0  # type: ignore[union-attr]
    assert passed + skipped == len(CHECKS) and "failed" not in summary, summary
    assert "not applicable" in good.stdout  # -rs shows why each skipped check does not apply
    bad = _pytest_probe(broken_url, tmp_path)
    assert bad.returncode == 1, bad.stdout[-3000:]
    assert "FAILED mcp_probe[method.unknown]" in bad.stdout and "FAILED mcp_probe[envelope.id-null-refused]" not in bad.stdout
    assert "  FAIL (method.unknown): " in bad.stdout and "  request: " in bad.stdout and "  reply: " in bad.stdout
    gone = _pytest_probe("http://127.0.0.1:1/mcp", tmp_path)
    assert gone.returncode == 1 and "cannot probe http://127.0.0.1:1/mcp" in gone.stdout, gone.stdout[-2000:]
