"""The probe's table of checks: :data:`CHECKS`, one row per rule of revision 2026-07-28 (over
Streamable HTTP and stdio), then the initialize-era checks, each run in every revision the
server negotiated whose text states its rule: those every transport shares
(:mod:`~mcpwire_adapters.testing.probe.era_checks`), Streamable HTTP's sessions, headers and
streams (:mod:`~mcpwire_adapters.testing.probe.era_http`), authorization
(:mod:`~mcpwire_adapters.testing.probe.auth_checks`), 2024-11-05's HTTP+SSE
(:mod:`~mcpwire_adapters.testing.probe.legacy_checks`) and stdio's framing
(:mod:`~mcpwire_adapters.testing.probe.era_stdio`).

Each row cites the public page that states its rule (the 2026-07-28 specification: a page and
anchor, or the schema's ``$defs``; or JSON-RPC 2.0) and gives its expectations strongest first,
each naming its rule of :data:`mcpwire_adapters.testing.judge.RULES`: what the official text
demands (a MUST fails the check, a SHOULD warns), then, where this project is stricter (the
codes and HTTP statuses of docs/errors.md, its id bounds), that convention as advice. A
refusal may name any fault the request really has. docs/probing.md lists the rows, generated
from :data:`CHECKS` by tests/adapters/testing/test_probe.py, so it cannot drift.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio

from ..judge import ECHO_OR_NULL, NULL, Expect, judge, rule, status_rule
from ..rawwire import CAPS_KEY, INFO_KEY, PV_KEY, Exchange, Request, Send, headers, meta, rpc
from ..shapes import acknowledged_rule, cacheable, discover_shape, unsupported_version
from ..verdict import NOT_APPLICABLE, PASS, Outcome
from .checks import UNKNOWN_TOOL, UNKNOWN_URI, Check, Target, needs
from .auth_checks import AUTH_CHECKS
from .era_checks import ERA_CHECKS
from .era_http import ERA_HTTP_CHECKS
from .era_stdio import ERA_STDIO_CHECKS
from .eras_apart import post_only, version_header_missing
from .legacy_checks import LEGACY_CHECKS
from .exact_ids import ids_echoed

__all__ = ["CHECKS"]

# What each row cites: a page (and anchor) of the 2026-07-28 specification, relative to its
# root (SPEC_URL), or JSON-RPC 2.0.
ERRORS, MESSAGES, REQUEST_ID, META = "basic#error-codes", "basic#messages", "schema#requestid", "schema#requestmetaobject"
RESPONSES = "basic#responses"
HTTP = "basic/transports/streamable-http"
COMPAT = f"{HTTP}#backward-compatibility"
FLOW, VALIDATION, VERSION_HEADER = f"{HTTP}#message-flow", f"{HTTP}#server-validation", f"{HTTP}#protocol-version-header"
PARAM_HEADERS = f"{HTTP}#server-behavior-for-custom-headers"
MISMATCH, UNSUPPORTED = "schema#headermismatcherror", "schema#unsupportedprotocolversionerror"
DISCOVER, CACHING, PAGINATION = "server/discover", "server/utilities/caching", "server/utilities/pagination"
TOOL_ERRORS, RESOURCE_ERRORS = "server/tools#error-handling", "server/resources#error-handling"
MRTR, SUBSCRIPTIONS = "basic/patterns/mrtr#multi-round-trip-requests", "basic/patterns/subscriptions"
FILTER = "schema#subscriptionfilter"
CANCELLATION = "basic/patterns/cancellation#transport-specific-cancellation"
NOTIFICATION = "JSON-RPC 2.0 section 4.1"

D = "server/discover"
# The HTTP status of a -32602 met while executing a request (an unknown tool or URI, a bad cursor or
# filter): the specification fixes 400 only for the three MCP errors (-32020, -32021, -32022) and
# for a request missing a required _meta field; past admission a server may answer 200 (a 400
# there is one implementation's choice, mcpwire's among them, not a rule).
EXECUTION_400_OR_200 = (400, 200)
_SERVED_OR_REFUSED = (200, *range(400, 500))


def _refused(advice: str, code: int = -32600, *, must_id: str = ECHO_OR_NULL, advice_id: str | None = NULL,
             must: str = "jsonrpc.reply", error: bool = False) -> tuple[Expect, ...]:
    """A request this project refuses, where the official text demands less: at ``must`` a
    response (``error``: an error) whose id is ``must_id`` (ECHO_OR_NULL: the request's, or null
    as an error may carry when the request is malformed; NULL: JSON-RPC's null for an id it
    could not detect), then, at ``advice``, this project's answer: ``code`` with HTTP 400 and
    ``advice_id``."""
    return (Expect(None, id=must_id, any_answer=not error, any_error=error, rule=must),
            Expect(400, code, id=advice_id, rule=advice, id_rule=advice))


def _raw(body: bytes, method: str = D, rpc_id: Any = None, **kw: Any) -> Request:
    return Request("POST", headers(method, **kw), body, rpc_id=rpc_id)


def _envelope(rpc_id: Any = 1, **fields: Any) -> Request:
    message = {"jsonrpc": "2.0", "id": rpc_id, "method": D, "params": {"_meta": meta()}}
    message.update(fields)
    message = {k: v for k, v in message.items() if v is not _DROP}
    return _raw(json.dumps(message).encode(), rpc_id=rpc_id)


_DROP = object()


def _removed(method: str) -> Check:
    return Check(f"method.removed.{method.replace('/', '-').lower()}", f"{method} does not exist in 2026-07-28", ERRORS,
                 f"a {method} request with a valid _meta", lambda t: rpc(method, rpc_id="removed-1"),
                 Expect(404, -32601, rule="mcp.method-not-found"))


def _meta_check(cid: str, title: str, sends: str, meta_value: Any, expect: tuple[Expect, ...]) -> Check:
    params = {"_meta": meta_value} if meta_value is not _DROP else {}
    return Check(cid, title, META, sends, lambda t: rpc(D, params, rpc_id=21), expect)


# A required _meta field missing: -32602 and 400 (MUST); where it is the version, on HTTP a server
# may name the header that no longer matches the body instead (-32020, MUST as well).
_VERSION_MISSING = (Expect(400, (-32602, -32020), rule="mcp.meta-required"),
                    Expect(400, -32602, rule="mcpwire.meta-rules"))
_META_MISSING = (Expect(400, -32602, rule="mcp.meta-required"),)
# _meta, or clientCapabilities, of the wrong type: the required fields are missing (MUST -32602), and
# the message is not a valid MCP request either (-32600 names that).
_META_WRONG_TYPE = (Expect(400, (-32602, -32600, -32020), rule="mcp.meta-required"),
                    Expect(400, -32602, rule="mcpwire.meta-rules"))
# A _meta value the specification gives no refusal for: this project's -32602 is advice.
_META_ADVICE = (Expect(400, -32602, rule="mcpwire.meta-rules"),)


def _no_cache(cid: str, method: str, key: str, capability: str) -> Check:
    return Check(cid, f"{method} has {key}, ttlMs and cacheScope", CACHING,
                 f"{method} with valid headers and _meta", needs(capability, lambda t: rpc(method, rpc_id=f"{method}-1")),
                 Expect(200, None, more=cacheable(key), rule="mcp.caching"))


def _notify(body: dict[str, Any], method: str = "notifications/cancelled") -> Request:
    return _raw(json.dumps(body).encode(), method=method)


async def _tampered_state(target: Target, send: Send) -> Outcome:
    """Call the listed tools without required arguments, with every client
    capability, until one answers input_required with a requestState; send round 2 with that
    state altered; a conforming server answers with a JSON-RPC error."""
    caps: dict[str, Any] = {"elicitation": {}, "sampling": {}, "roots": {}}
    evidence: list[Exchange] = []
    for tool in (target.tools or [])[:20]:
        schema = tool.get("inputSchema")
        if not isinstance(schema, dict) or schema.get("required") or "task" in json.dumps(tool.get("execution", {})):
            continue
        name = str(tool.get("name"))
        first = await send(rpc("tools/call", {"name": name, "arguments": {}, "_meta": meta(**{CAPS_KEY: caps})},
                               rpc_id="mrtr-1", name=name))
        reply = first[1]
        answers = reply.messages() if reply is not None else []
        result = next((m.get("result") for m in answers if isinstance(m, dict) and "result" in m), None)
        if not (isinstance(result, dict) and result.get("resultType") == "input_required"
                and isinstance(result.get("requestState"), str)):
            continue
        evidence.append(first)
        second = await send(rpc("tools/call", {"name": name, "arguments": {}, "inputResponses": {},
                                               "requestState": result["requestState"] + "-TAMPERED",
                                               "_meta": meta(**{CAPS_KEY: caps})}, rpc_id="mrtr-2", name=name))
        evidence.append(second)
        if second[1] is None:
            return Outcome.broken(rule("jsonrpc.reply"), f"round 2 got no reply: {second[2]}", evidence)
        problems = judge((Expect(None, any_answer=True, rule="jsonrpc.reply"),
                          Expect((400, 200), -32602, rule="mcpwire.request-state")), second[0], second[1], target)
        return Outcome.judged(problems, evidence, f"tool {name}")
    return Outcome(NOT_APPLICABLE, "no listed tool without required arguments answered input_required with a requestState",
                   evidence)


def _listen_flags(target: Target) -> dict[str, bool] | None:
    """The list changes the server advertises, or None when it advertises nothing to listen to
    (no listChanged, no resources.subscribe): then subscriptions/listen may be -32601."""
    tools, prompts, resources = (target.capability(k) for k in ("tools", "prompts", "resources"))
    flags = {"toolsListChanged": isinstance(tools, dict) and tools.get("listChanged") is True,
             "promptsListChanged": isinstance(prompts, dict) and prompts.get("listChanged") is True,
             "resourcesListChanged": isinstance(resources, dict) and resources.get("listChanged") is True}
    if not any(flags.values()) and not (isinstance(resources, dict) and resources.get("subscribe") is True):
        return None
    return flags


async def _cancelled_listen(target: Target, send: Send) -> Outcome:
    """On stdio a listen stream is ended with notifications/cancelled, and a cancelled request
    gets no late response: after the acknowledgement, the cancellation (sent by the stdio
    driver) and a pause, no line may carry the listen request's id."""
    if not target.stdio:
        return Outcome(NOT_APPLICABLE, "on HTTP a stream ends when its connection closes; nothing comes back to observe")
    flags = _listen_flags(target)
    if flags is None:
        return Outcome(NOT_APPLICABLE, "the server advertises no listChanged nor resources.subscribe")
    first = await send(rpc("subscriptions/listen", {"notifications": flags, "_meta": meta()},
                           rpc_id="listen-cancel", first_event_only=True))
    if first[1] is None:
        return Outcome.broken(rule("mcp.listen-ack"), f"no acknowledgement: {first[2]}", [first])
    await anyio.sleep(0.2)
    after = await send(rpc(D, rpc_id="after-cancel"))
    evidence = [first, after]
    late = [m for m in (after[1].messages() if after[1] is not None else [])
            if isinstance(m, dict) and m.get("id") == "listen-cancel"]
    if late:
        return Outcome.broken(rule("mcp.cancelled-silent"), f"a response to the cancelled listen request: "
                                                             f"{json.dumps(late[0])[:120]}", evidence)
    if after[1] is None:
        return Outcome.broken(rule("jsonrpc.reply"), f"no answer after the cancellation: {after[2]}", evidence)
    return Outcome(PASS, "", evidence)


def _listen_without_filter(target: Target) -> Request | str:
    if _listen_flags(target) is None:
        return "the server advertises no listChanged nor resources.subscribe"
    return rpc("subscriptions/listen", {"_meta": meta()}, rpc_id="listen-2")


_UNADVERTISED: tuple[tuple[str, str, dict[str, Any]], ...] = (  # capability, a request its handlers answer
    ("tools", "tools/list", {}), ("prompts", "prompts/list", {}), ("resources", "resources/list", {}),
    ("completions", "completion/complete", {"ref": {"type": "ref/prompt", "name": "mcpwire-probe"},
                                            "argument": {"name": "a", "value": ""}}),
)


def _unadvertised(target: Target) -> Request | str:
    if target.discover is None:
        return "server/discover failed, so the capabilities are unknown"
    for capability, method, params in _UNADVERTISED:
        if target.capability(capability) is None:
            return rpc(method, {**params, "_meta": meta()}, rpc_id="unadvertised-1")
    return "the server advertises tools, prompts, resources and completions"


async def _listen_ack(target: Target, send: Send) -> Outcome:
    """The first message of a listen stream is notifications/subscriptions/acknowledged
    carrying the listen request's id as its subscriptionId."""
    flags = _listen_flags(target)
    if flags is None:
        return Outcome(NOT_APPLICABLE, "the server advertises no listChanged nor resources.subscribe")
    exchange = await send(rpc("subscriptions/listen", {"notifications": flags, "_meta": meta()},
                              rpc_id="listen-1", first_event_only=True))
    reply = exchange[1]
    if reply is None:
        return Outcome.broken(rule("mcp.listen-ack"), f"no reply: {exchange[2]}", [exchange])
    problems = [] if target.stdio else status_rule(reply.status, (200,), rule_id="mcp.request-content-type")
    return Outcome.judged(problems + acknowledged_rule(reply.messages(), "listen-1"), [exchange])


def _origin(target: Target) -> Request | str:
    if not target.loopback:
        return "the target is not on a loopback address (for another, which origins are valid is its own choice)"
    hdrs = headers(D, extra=(("Origin", "http://evil.example.com"),))
    return Request("POST", hdrs, json.dumps({"jsonrpc": "2.0", "id": 1, "method": D,
                                             "params": {"_meta": meta()}}).encode(), rpc_id=1)


def _with_headers(method: str = D, rpc_id: Any = 1, params: Any = None, **kw: Any) -> Request:
    body = {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": {"_meta": meta()} if params is None else params}
    return Request("POST", headers(method, **kw), json.dumps(body).encode(), rpc_id=rpc_id)


def _tool_call(name_header: str | None) -> Any:
    def build(target: Target) -> Request:
        params = {"name": UNKNOWN_TOOL, "arguments": {}, "_meta": meta()}
        return rpc("tools/call", params, rpc_id="call-1", hdrs=headers("tools/call", name_header))
    return needs("tools", build)


def _param_tool(target: Target) -> tuple[str, str, str] | None:
    """A listed tool with a top-level string parameter annotated ``x-mcp-header``: its name, the
    parameter and the header's name part."""
    for tool in target.tools or ():
        properties = (tool.get("inputSchema") or {}).get("properties")
        for key, schema in (properties.items() if isinstance(properties, dict) else ()):
            name = schema.get("x-mcp-header") if isinstance(schema, dict) else None
            if isinstance(name, str) and name and schema.get("type") == "string":
                return str(tool.get("name")), str(key), name
    return None


def _param_header(value: str | None) -> Callable[[Target], Request | str]:
    """tools/call of a tool with an x-mcp-header parameter, the argument in the body, and its
    Mcp-Param header absent (``value`` None) or unlike the body."""
    def build(target: Target) -> Request | str:
        found = _param_tool(target)
        if found is None:
            return "no listed tool has a string parameter annotated x-mcp-header"
        tool, key, name = found
        extra = () if value is None else ((f"Mcp-Param-{name}", value),)
        params = {"name": tool, "arguments": {key: "probe"}, "_meta": meta()}
        return rpc("tools/call", params, rpc_id="param-1", hdrs=headers("tools/call", tool, extra=extra))
    return build


_VALID = {"jsonrpc": "2.0", "id": 1, "method": D}

CHECKS: tuple[Check, ...] = (
    # -- server/discover --------------------------------------------------------------------------
    Check("discover.shape", "server/discover answers with the required fields", DISCOVER,
          "server/discover with valid headers and _meta", lambda t: rpc(D, rpc_id="discover-1"),
          Expect(200, None, more=discover_shape, rule="mcp.discover")),
    Check("meta.client-info-optional", "a request without clientInfo is served", META,
          "server/discover whose _meta has protocolVersion and clientCapabilities only",
          lambda t: rpc(D, {"_meta": {PV_KEY: "2026-07-28", CAPS_KEY: {}}}, rpc_id=2),
          Expect(200, None, rule="mcpwire.client-info-optional")),
    # -- the JSON-RPC envelope ----------------------------------------------------------------------
    Check("envelope.parse-error", "a body that is not JSON is an error with a null id (-32700)", ERRORS,
          "the bytes '{\"jsonrpc\": \"2.0\", \"id\": 1,' (cut short)",
          lambda t: _raw(b'{"jsonrpc": "2.0", "id": 1,'),
          _refused("mcpwire.parse-error", -32700, must_id=NULL, must="jsonrpc.error-member", error=True)),
    Check("envelope.not-an-object", "a JSON body that is not an object is an error with a null id (-32600)",
          MESSAGES, "the JSON string \"server/discover\"", lambda t: _raw(b'"server/discover"'),
          _refused("mcpwire.invalid-request", must_id=NULL, must="jsonrpc.error-member", error=True)),
    Check("envelope.batch-refused", "a batch (JSON array) is refused in 2026-07-28", MESSAGES,
          "a JSON array holding one valid server/discover request",
          lambda t: _raw(json.dumps([{**_VALID, "params": {"_meta": meta()}}]).encode()),
          Expect(400, -32600, id=NULL, rule="mcpwire.no-batch", id_rule="mcpwire.no-batch")),
    Check("envelope.jsonrpc-missing", "a request without \"jsonrpc\" is -32600", MESSAGES,
          "server/discover without the jsonrpc member", lambda t: _envelope(3, jsonrpc=_DROP),
          _refused("mcpwire.invalid-request", advice_id=None)),
    Check("envelope.jsonrpc-wrong", "a request with \"jsonrpc\": \"1.0\" is -32600", MESSAGES,
          "server/discover with jsonrpc \"1.0\"", lambda t: _envelope(4, jsonrpc="1.0"),
          _refused("mcpwire.invalid-request", advice_id=None)),
    Check("envelope.method-not-string", "a method that is not a string is an error (-32600)", MESSAGES,
          "a request whose method is the number 5", lambda t: _envelope(5, method=5),
          _refused("mcpwire.invalid-request", advice_id=None, must="jsonrpc.error-member", error=True)),
    Check("envelope.id-null-refused", "a request id of null is -32600 with a null id", REQUEST_ID,
          "server/discover with \"id\": null", lambda t: _envelope(None), _refused("mcpwire.invalid-request")),
    Check("envelope.id-bool-refused", "a boolean request id is an error with a null id (-32600)", REQUEST_ID,
          "server/discover with \"id\": true", lambda t: _envelope(True),
          _refused("mcpwire.invalid-request", must_id=NULL)),
    Check("envelope.id-object-refused", "an object request id is an error with a null id (-32600)", REQUEST_ID,
          "server/discover with \"id\": {\"a\": 1}", lambda t: _envelope({"a": 1}),
          _refused("mcpwire.invalid-request", must_id=NULL)),
    Check("envelope.id-fraction-refused", "a fractional request id is -32600 with a null id", REQUEST_ID,
          "server/discover with \"id\": 1.5", lambda t: _envelope(1.5), _refused("mcpwire.invalid-request")),
    Check("envelope.id-too-large-refused", "an integer id past int64 is -32600 with a null id", REQUEST_ID,
          "server/discover with \"id\": 2**63", lambda t: _envelope(2 ** 63), _refused("mcpwire.id-bounds")),
    Check("envelope.id-too-long-refused", "a string id longer than 256 bytes is -32600 with a null id", REQUEST_ID,
          "server/discover whose id is 257 'x'", lambda t: _envelope("x" * 257), _refused("mcpwire.id-bounds")),
    Check("envelope.id-string-echoed", "a string id of 256 bytes is served and echoed", REQUEST_ID,
          "server/discover whose id is 256 'x'", lambda t: _envelope("x" * 256),
          (Expect(None, id=ECHO_OR_NULL, any_answer=True, rule="jsonrpc.reply"),
           Expect(200, None, rule="mcpwire.id-bounds"))),
    Check("envelope.id-echoed-exactly", "every id comes back exactly as sent: same JSON type and value", RESPONSES,
          "server/discover with ids 0, -1, 7, 2**31, 2**53+1, 2**63-1, -2**63, 2**63, 10**20, \"\", \"7\", unicode, "
          "an escape, 256, 257 and 1024 bytes", steps=ids_echoed, enforces=("mcp.result-id", "mcp.error-id")),
    Check("envelope.params-not-object", "params that are not an object are an error (-32602)", MESSAGES,
          "server/discover with \"params\": [1]", lambda t: _envelope(6, params=[1]),
          (Expect(None, (-32602, -32600), id=ECHO_OR_NULL, rule="mcp.meta-required"),
           Expect(400, -32602, id=None, rule="mcpwire.params-object"))),
    Check("envelope.response-not-answered", "a posted response object is not answered", FLOW,
          "a JSON-RPC response object {\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {}}",
          lambda t: _raw(b'{"jsonrpc": "2.0", "id": 1, "result": {}}'),
          Expect(202, empty=True, refusable=True, rule="mcpwire.posted-response")),
    # -- methods ----------------------------------------------------------------------------------------
    Check("method.unknown", "an unknown method is -32601, HTTP 404, id echoed", VERSION_HEADER,
          "a request for mcpwire/no-such-method", lambda t: rpc("mcpwire/no-such-method", rpc_id="unknown-1"),
          Expect(404, -32601, rule="mcp.method-not-found")),
    *(_removed(m) for m in ("initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe")),
    # -- request _meta ---------------------------------------------------------------------------------
    _meta_check("meta.missing", "a request without _meta is -32602", "server/discover with \"params\": {}", _DROP,
                _VERSION_MISSING),
    _meta_check("meta.null", "\"_meta\": null is refused (-32602)", "server/discover with \"_meta\": null", None,
                _META_WRONG_TYPE),
    _meta_check("meta.protocol-version-missing", "_meta without protocolVersion is -32602",
                "server/discover whose _meta has clientCapabilities only", {CAPS_KEY: {}}, _VERSION_MISSING),
    _meta_check("meta.client-capabilities-missing", "_meta without clientCapabilities is -32602",
                "server/discover whose _meta has protocolVersion only", {PV_KEY: "2026-07-28"}, _META_MISSING),
    _meta_check("meta.client-capabilities-null", "clientCapabilities null is refused (-32602)",
                "server/discover with clientCapabilities null", {PV_KEY: "2026-07-28", CAPS_KEY: None},
                _META_WRONG_TYPE),
    _meta_check("meta.log-level-unknown", "an unknown logLevel is -32602",
                "server/discover with logLevel \"loud\"", meta(**{"io.modelcontextprotocol/logLevel": "loud"}),
                (Expect(None, -32602, rule="mcp.log-level"), Expect(400, -32602, rule="mcpwire.error-status"))),
    _meta_check("meta.progress-token-bool", "a boolean progressToken is -32602",
                "server/discover with progressToken true", meta(progressToken=True), _META_ADVICE),
    _meta_check("meta.key-invalid", "a _meta key outside the key syntax is -32602",
                "server/discover whose _meta also has the key \"not a key!\"", meta(**{"not a key!": 1}), _META_ADVICE),
    _meta_check("meta.client-info-invalid", "a clientInfo without string name and version is -32602",
                "server/discover with clientInfo {\"name\": 5}", meta(**{INFO_KEY: {"name": 5}}), _META_ADVICE),
    # -- HTTP headers ------------------------------------------------------------------------------------
    Check("version.header-missing", "no MCP-Protocol-Version header is -32020 (unless the server serves clients "
          "older than 2025-06-18)", VERSION_HEADER, "server/discover without MCP-Protocol-Version (then, if it is "
          "not refused with -32020, initialize naming 2025-03-26)", steps=version_header_missing, http_only=True,
          enforces=("mcp.version-header-missing",)),
    Check("version.unsupported", "an unsupported version is -32022 with requested and supported", UNSUPPORTED,
          "server/discover with v999.0.0 in the header and in _meta",
          lambda t: _with_headers(params={"_meta": meta(**{PV_KEY: "v999.0.0"})}, version="v999.0.0", rpc_id=32),
          Expect(400, -32022, more=unsupported_version, rule="mcp.version-unsupported")),
    Check("version.header-body-mismatch", "a header version that differs from _meta is -32020", MISMATCH,
          "server/discover with header 2026-07-28 and _meta v999.0.0",
          lambda t: _with_headers(params={"_meta": meta(**{PV_KEY: "v999.0.0"})}, rpc_id=33),
          (Expect(400, (-32020, -32022), rule="mcp.version-mismatch"), Expect(400, -32020, rule="mcpwire.error-status")),
          http_only=True),
    Check("headers.mcp-method-missing", "no Mcp-Method header is -32020", VALIDATION,
          "server/discover without Mcp-Method", lambda t: rpc(D, rpc_id=34, hdrs=headers(None)),
          Expect(400, -32020, rule="mcp.header-mismatch"), http_only=True),
    Check("headers.mcp-method-mismatch", "an Mcp-Method unlike the body's method is -32020", VALIDATION,
          "server/discover with Mcp-Method: tools/list", lambda t: rpc(D, rpc_id=35, hdrs=headers("tools/list")),
          Expect(400, -32020, rule="mcp.header-mismatch"), http_only=True),
    Check("headers.mcp-method-case", "Mcp-Method compares case-sensitively", VALIDATION,
          "server/discover with Mcp-Method: SERVER/DISCOVER",
          lambda t: rpc(D, rpc_id=36, hdrs=headers("SERVER/DISCOVER")), Expect(400, -32020, rule="mcp.header-mismatch"),
          http_only=True),
    # The tool does not exist either: a server may report that (-32602) first.
    Check("headers.mcp-name-missing", "tools/call without Mcp-Name is -32020", VALIDATION,
          f"tools/call of {UNKNOWN_TOOL} without Mcp-Name", _tool_call(None),
          (Expect(400, (-32020, -32602), rule="mcp.header-mismatch"), Expect(400, -32020, rule="mcpwire.error-status")),
          http_only=True),
    Check("headers.mcp-name-mismatch", "an Mcp-Name unlike params.name is -32020", VALIDATION,
          f"tools/call of {UNKNOWN_TOOL} with Mcp-Name: another-tool", _tool_call("another-tool"),
          (Expect(400, (-32020, -32602), rule="mcp.header-mismatch"), Expect(400, -32020, rule="mcpwire.error-status")),
          http_only=True),
    Check("headers.mcp-param-missing", "an x-mcp-header argument without its Mcp-Param header is -32020",
          PARAM_HEADERS, "tools/call of a tool with an x-mcp-header parameter, the argument given, no Mcp-Param header",
          _param_header(None), Expect(400, -32020, rule="mcp.param-header"), needs_tool_calls=True, http_only=True),
    Check("headers.mcp-param-mismatch", "an Mcp-Param header unlike its argument is -32020", PARAM_HEADERS,
          "tools/call of a tool with an x-mcp-header parameter \"probe\" and its Mcp-Param header \"other\"",
          _param_header("other"), Expect(400, -32020, rule="mcp.param-header"), needs_tool_calls=True, http_only=True),
    # -- HTTP admission ----------------------------------------------------------------------------------
    Check("http.get-refused", "GET is 405 with Allow: POST", COMPAT, "GET on the endpoint",
          steps=post_only("GET"), http_only=True, enforces=("mcp.get-delete-405", "http.allow-on-405")),
    Check("http.delete-refused", "DELETE is 405 with Allow: POST", COMPAT, "DELETE on the endpoint",
          steps=post_only("DELETE"), http_only=True, enforces=("mcp.get-delete-405", "http.allow-on-405")),
    Check("http.content-type-wrong", "a Content-Type other than application/json is 415", HTTP,
          "server/discover with Content-Type: text/plain",
          lambda t: _with_headers(content_type="text/plain", rpc_id=41),
          Expect(415, id=None, rule="mcpwire.content-type"), http_only=True),
    # RFC 9110: no Accept means any media type; one of the two may be all the answer needs. The
    # specification puts the Accept rule on the client: a server may serve these or refuse them.
    Check("http.accept-missing", "no Accept header is served or refused (4xx)", HTTP, "server/discover without Accept",
          lambda t: _with_headers(accept=None, rpc_id=42), Expect(_SERVED_OR_REFUSED, id=None, rule="mcpwire.accept"),
          http_only=True),
    Check("http.accept-json-only", "an Accept without text/event-stream is served or refused (4xx)", HTTP,
          "server/discover with Accept: application/json", lambda t: _with_headers(accept="application/json", rpc_id=43),
          Expect(_SERVED_OR_REFUSED, id=None, rule="mcpwire.accept"), http_only=True),
    Check("http.origin-foreign-refused", "a foreign Origin is refused with 403", HTTP,
          "server/discover with Origin: http://evil.example.com", _origin,
          Expect(403, id=None, rule="mcp.origin"), http_only=True),
    # -- notifications are never answered ---------------------------------------------------------------
    Check("notification.cancelled-202", "a notification is answered 202 with no body (or refused)", HTTP,
          "notifications/cancelled for an unknown request id",
          lambda t: _notify({"jsonrpc": "2.0", "method": "notifications/cancelled",
                             "params": {"requestId": "mcpwire-probe-none", "_meta": meta()}}),
          Expect(202, empty=True, refusable=True, rule="mcp.notification-202")),
    Check("notification.malformed-202", "a malformed notification is not answered either", NOTIFICATION,
          "notifications/cancelled whose params are [1]",
          lambda t: _notify({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": [1]}),
          Expect(202, empty=True, refusable=True, rule="jsonrpc.notification")),
    Check("notification.unknown-202", "a notification of an unknown method is not answered", NOTIFICATION,
          "notifications/mcpwire-probe-unknown",
          lambda t: _notify({"jsonrpc": "2.0", "method": "notifications/mcpwire-probe-unknown"},
                            "notifications/mcpwire-probe-unknown"),
          Expect(202, empty=True, refusable=True, rule="jsonrpc.notification")),
    # -- lists, caching, pagination ----------------------------------------------------------------------
    _no_cache("tools.list-cacheable", "tools/list", "tools", "tools"),
    _no_cache("prompts.list-cacheable", "prompts/list", "prompts", "prompts"),
    _no_cache("resources.list-cacheable", "resources/list", "resources", "resources"),
    _no_cache("resources.templates-list-cacheable", "resources/templates/list", "resourceTemplates", "resources"),
    # No check of a string cursor the server never issued: an unknown cursor need not be invalid
    # (a server may serve the first page).
    Check("pagination.cursor-not-string", "a cursor that is not a string is -32602", PAGINATION,
          "tools/list with cursor 5",
          needs("tools", lambda t: rpc("tools/list", {"cursor": 5, "_meta": meta()}, rpc_id="cursor-2")),
          (Expect(None, -32602, rule="mcp.cursor"), Expect(EXECUTION_400_OR_200, -32602, rule="mcpwire.error-status"))),
    Check("tools.unknown-tool", "tools/call of an unknown tool is -32602", TOOL_ERRORS,
          f"tools/call of {UNKNOWN_TOOL} with matching headers",
          needs("tools", lambda t: rpc("tools/call", {"name": UNKNOWN_TOOL, "arguments": {}, "_meta": meta()},
                                      rpc_id="call-2", name=UNKNOWN_TOOL)),
          Expect(EXECUTION_400_OR_200, -32602, rule="mcp.unknown-tool")),
    Check("resources.unknown-uri", "resources/read of an unknown URI is -32602", RESOURCE_ERRORS,
          f"resources/read of {UNKNOWN_URI}",
          needs("resources", lambda t: rpc("resources/read", {"uri": UNKNOWN_URI, "_meta": meta()},
                                          rpc_id="read-1", name=UNKNOWN_URI)),
          (Expect(None, -32602, rule="mcp.resource-not-found"),
           Expect(EXECUTION_400_OR_200, -32602, rule="mcpwire.error-status"))),
    # -- multi round-trip, subscriptions -----------------------------------------------------------------
    Check("mrtr.request-state-tampered", "a tampered requestState is refused with -32602", MRTR,
          "tools/call of a tool that answers input_required, then round 2 with requestState + \"-TAMPERED\"",
          steps=_tampered_state, needs_tool_calls=True, enforces=("mcpwire.request-state",)),
    Check("listen.acknowledged-first", "a listen stream starts with its acknowledgement", SUBSCRIPTIONS,
          "subscriptions/listen for the advertised list changes", steps=_listen_ack, enforces=("mcp.listen-ack",)),
    Check("cancel.listen-no-late-response", "a listen cancelled on stdio gets no response", CANCELLATION,
          "subscriptions/listen, notifications/cancelled for it after the acknowledgement, then server/discover",
          steps=_cancelled_listen, enforces=("mcp.cancelled-silent",)),
    Check("listen.notifications-missing", "subscriptions/listen without a notifications filter is -32602",
          FILTER, "subscriptions/listen whose params hold only _meta", _listen_without_filter,
          Expect(EXECUTION_400_OR_200, -32602, rule="mcpwire.listen-filter")),
    Check("capabilities.unadvertised-refused", "a method of a capability not advertised is -32601", VERSION_HEADER,
          "the first of tools/list, prompts/list, resources/list, completion/complete whose capability is absent",
          _unadvertised, Expect(404, -32601, rule="mcp.method-not-found")),
    # -- the initialize era: each check runs in every revision the server negotiated whose text states it
    *ERA_CHECKS, *ERA_HTTP_CHECKS, *AUTH_CHECKS, *LEGACY_CHECKS,
    *ERA_STDIO_CHECKS,  # last: it judges every line written on the connection
)

assert len({c.id for c in CHECKS}) == len(CHECKS), "check ids are unique"
