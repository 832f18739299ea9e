"""The scenarios ``mcpwire probe --client`` runs a client through, as data: :class:`Scenario`
(its revision, its transports, the check that says it was reached, its own :class:`Answer` rows)
and :data:`SCENARIOS`. Each scenario's rows come first; the rows of its revision
(:func:`defaults`) answer everything else as a plain, well-formed server would.

Every scenario serves one tool, ``echo`` (an optional string ``text``): a client command is
expected to list the tools and call ``echo`` (``mcpwire call {url} echo``). docs/probing-clients.md
says what each scenario does and which rules it holds the client to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, Literal

from .script import Answer

__all__ = [
    "BIG_BYTES", "ERA", "MODERN", "OK_TEXT", "SCENARIOS", "TOOL", "WRONG_ID_TEXT", "Scenario", "by_name", "defaults",
    "select_scenarios",
]

MODERN: Final = "2026-07-28"
ERA: Final = "2025-11-25"
Revision = Literal["2026-07-28", "2025-11-25", "any"]
OAuthMode = Literal["good", "issuer-mismatch", "no-pkce"]
BIG_BYTES: Final = 50 * 1024 * 1024
OK_TEXT: Final = "hostile-ok"
WRONG_ID_TEXT: Final = "hostile-wrong-id-answer"  # in a response whose id is no request's
SERVER_INFO: Final = {"name": "mcpwire-hostile", "version": "1"}
TOOL: Final = {"name": "echo", "description": "Echoes its text.",
               "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}
_TOOL_V2: Final = {"name": "echo_v2", "description": "Echoes its text, twice.",
                   "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}, "times": {"type": "integer"}},
                                   "required": ["times"]}}


@dataclass(frozen=True)
class Scenario:
    """One scenario: ``name``, ``revision`` (the protocol revision the server speaks; ``any``:
    2026-07-28 to modern requests and 2025-11-25 to the rest), ``summary`` (one line for the
    report), ``answers`` (its own rows, before the revision's), ``transports`` it runs on,
    ``trigger`` (the method whose request shows the client reached the scenario's point; the
    scenario is not applicable to a client that never sends one), ``checks`` (the judge's checks
    beyond those every run gets) and ``oauth`` (the authorization server it puts in front, if any)."""

    name: str
    revision: Revision
    summary: str
    answers: tuple[Answer, ...] = ()
    transports: tuple[str, ...] = ("http", "stdio")
    trigger: str = "tools/call"
    checks: tuple[str, ...] = ()
    oauth: OAuthMode | None = None

    def script(self) -> tuple[Answer, ...]:
        """Every row the server looks answers up in, in order: the scenario's, then its revision's."""
        return self.answers + defaults(self.revision)


def _result(result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": "$id", "result": result}


def _error(code: int, message: str, data: Any = None, *, null_id: bool = False) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": None if null_id else "$id", "error": error}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


_CACHE: Final = {"ttlMs": 0, "cacheScope": "private"}
_MODERN_ROWS: Final = (
    Answer("server/discover", messages=(_result({"resultType": "complete", "supportedVersions": [MODERN],
                                                  "capabilities": {"tools": {"listChanged": True}}, **_CACHE,
                                                  "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO}}),)),
    Answer("tools/list", messages=(_result({"resultType": "complete", "tools": [TOOL], **_CACHE}),)),
    Answer("tools/call", messages=(_result({"resultType": "complete", "content": [_text(OK_TEXT)]}),)),
    Answer("initialize", status=400, messages=(_error(-32022, "Unsupported protocol version", {
        "supported": [MODERN], "requested": ERA}),)),
    Answer("*notification", status=202, kind="empty"),
    Answer("*response", status=400, messages=(_error(-32600, "2026-07-28 clients send no responses", null_id=True),)),
    Answer("GET", status=405, headers=(("allow", "POST"),), kind="empty"),
    Answer("DELETE", status=405, headers=(("allow", "POST"),), kind="empty"),
    Answer("*", status=404, messages=(_error(-32601, "Method not found"),)),
)
_ERA_ROWS: Final = (
    Answer("initialize", headers=(("mcp-session-id", "$session"),), messages=(_result({
        "protocolVersion": ERA, "capabilities": {"tools": {"listChanged": True}}, "serverInfo": SERVER_INFO}),)),
    Answer("*notification", status=202, kind="empty"),
    Answer("*response", status=202, kind="empty"),
    Answer("tools/list", messages=(_result({"tools": [TOOL]}),)),
    Answer("tools/call", messages=(_result({"content": [_text(OK_TEXT)]}),)),
    Answer("ping", messages=(_result({}),)),
    Answer("GET", status=405, headers=(("allow", "POST, DELETE"),), kind="empty"),
    Answer("DELETE", status=200, kind="empty"),
    Answer("*", messages=(_error(-32601, "Method not found"),)),
)


def defaults(revision: Revision) -> tuple[Answer, ...]:
    """The rows of a plain server of ``revision`` (``any``: the modern rows for modern requests,
    then the initialize-era rows)."""
    if revision == MODERN:
        return _MODERN_ROWS
    if revision == ERA:
        return _ERA_ROWS
    return tuple(replace(a, to=f"{MODERN} {a.to}") for a in _MODERN_ROWS) + tuple(
        replace(a, to=f"{ERA} {a.to}") for a in _ERA_ROWS)


_ROUND: Final = {"resultType": "input_required", "inputRequests": "$inputs", "requestState": "$state"}
_PING: Final = {"jsonrpc": "2.0", "id": "$ask", "method": "ping"}
_ELICIT: Final = {"jsonrpc": "2.0", "id": "$ask", "method": "elicitation/create", "params": {
    "mode": "form", "message": "Continue?", "requestedSchema": {
        "type": "object", "properties": {"ok": {"type": "boolean"}}}}}
_LIST_CHANGED: Final = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
_LOG: Final = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "working"}}

SCENARIOS: Final[tuple[Scenario, ...]] = (
    Scenario("basic", MODERN, "a plain 2026-07-28 server: discover, list, call"),
    Scenario("basic-2025", ERA, "a plain 2025-11-25 server; the call's SSE stream pings the client first", (
        Answer("tools/call", kind="sse", messages=(_PING, {"$await": True}, _result({"content": [_text(OK_TEXT)]}))),
    )),
    Scenario("invalid-json", "any", "the call's answer is cut-short JSON", (
        Answer("tools/call", messages=({"$raw": '{"jsonrpc": "2.0", "result": {"content": [{"type": "te\n'},)),)),
    Scenario("malformed-sse", "any", "the call's SSE stream has a frame that is not JSON, then the answer", (
        Answer("tools/call", kind="sse", messages=({"$raw": 'data: {"jsonrpc": "2.0", oops\n\n'},
                                                   _result({"resultType": "complete", "content": [_text(OK_TEXT)]}))),
    )),
    Scenario("wrong-id", "any", "the call's stream first carries a response with another id, then the right one", (
        Answer("tools/call", kind="sse", messages=(
            {"jsonrpc": "2.0", "id": 987654321, "result": {"resultType": "complete", "content": [_text(WRONG_ID_TEXT)]}},
            _result({"resultType": "complete", "content": [_text(OK_TEXT)]}))),
    ), checks=("wrong-id",)),
    Scenario("cut-stream-resumable", ERA, "the call's SSE stream primes an event id (retry 300 ms) and is cut before "
             "the answer; a GET with Last-Event-ID gets it", (
        Answer("tools/call", kind="sse", event_ids=True, retry_ms=300, messages=({"$prime": True},), end="cut"),
        Answer("GET last-event-id", kind="sse", event_ids=True, messages=(_result({"content": [_text(OK_TEXT)]}),)),
    ), transports=("http",), checks=("resume",)),
    Scenario("cut-stream", ERA, "the call's SSE stream (no event ids) is cut before the answer", (
        Answer("tools/call", kind="sse", messages=(_LOG,), end="cut"),
    ), transports=("http",)),
    Scenario("oversized", "any", f"the call's result is a {BIG_BYTES // 2**20} MiB text", (
        Answer("tools/call", messages=(_result({"resultType": "complete", "content": [
            {"type": "text", "text": {"$big": BIG_BYTES}}]}),)),
    ), checks=("memory",)),
    Scenario("endless-rounds", MODERN, "every call is answered input_required, with a new requestState, for ever", (
        Answer("tools/call", messages=(_result(_ROUND),)),
    ), checks=("rounds",)),
    Scenario("endless-requests", ERA, "the call's stream sends ping and elicitation requests, each after the last "
             "was answered, and never the answer", (
        Answer("tools/call", kind="sse", messages=(_PING, {"$await": True}, _ELICIT, {"$await": True}), repeat=500,
               end="hold"),
    )),
    Scenario("list-changed", ERA, "the call's stream announces a list change; the next tools/list differs", (
        Answer("tools/list", nth=1, messages=(_result({"tools": [TOOL]}),)),
        Answer("tools/list", messages=(_result({"tools": [_TOOL_V2]}),)),
        Answer("tools/call", kind="sse", messages=(_LIST_CHANGED, _result({"content": [_text(OK_TEXT)]}))),
    )),
    Scenario("tool-gone", MODERN, "the tool listed is unknown when called; the next tools/list differs", (
        Answer("tools/list", nth=1, messages=(_result({"resultType": "complete", "tools": [TOOL], **_CACHE}),)),
        Answer("tools/list", messages=(_result({"resultType": "complete", "tools": [_TOOL_V2], **_CACHE}),)),
        Answer("tools/call", messages=(_error(-32602, "Unknown tool: echo"),)),
    )),
    Scenario("session-404", ERA, "the first call gets 404: the session is gone", (
        Answer("tools/call", nth=1, status=404, messages=(_error(-32001, "Session not found", null_id=True),)),
    ), transports=("http",)),
    Scenario("oauth", "any", "the server wants OAuth; a well-behaved authorization server", transports=("http",),
             trigger="oauth", checks=("oauth",), oauth="good"),
    Scenario("oauth-issuer-mismatch", "any", "the authorization server's metadata names another issuer than the one "
             "its URL was built from", transports=("http",), trigger="oauth", checks=("oauth",), oauth="issuer-mismatch"),
    Scenario("oauth-no-pkce", "any", "the authorization server's metadata has no code_challenge_methods_supported",
             transports=("http",), trigger="oauth", checks=("oauth",), oauth="no-pkce"),
)


def by_name(name: str) -> Scenario:
    """The scenario named ``name`` (KeyError for another name)."""
    for scenario in SCENARIOS:
        if scenario.name == name:
            return scenario
    raise KeyError(name)


def select_scenarios(patterns: Sequence[str], *, stdio: bool) -> tuple[Scenario, ...]:
    """The scenarios a transport runs whose name matches one of the shell-style ``patterns`` (all
    when none is given)."""
    import fnmatch

    transport = "stdio" if stdio else "http"
    return tuple(s for s in SCENARIOS if transport in s.transports
                 and (not patterns or any(fnmatch.fnmatchcase(s.name, p) for p in patterns)))
