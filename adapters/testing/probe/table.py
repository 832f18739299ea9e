"""The probe's table of checks: :data:`CHECKS`, one row per rule of Streamable HTTP, revision
2026-07-28, then the initialize-era checks of :mod:`mcpwire_adapters.testing.probe.era_checks`.

Each row cites the public page that states its rule: the 2026-07-28 specification (a page and
anchor, or the schema's ``$defs``) or JSON-RPC 2.0. The codes and HTTP statuses are mcpwire's
reading of the specification's error table and of its own admission order (docs/errors.md).
docs/probing.md lists the rows, generated from :data:`CHECKS` by tests/adapters/testing/test_probe.py,
so it cannot drift.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio

from ..judge import NULL, Expect, acknowledged_rule, cacheable, discover_shape, judge, status_rule, unsupported_version
from ..rawwire import CAPS_KEY, INFO_KEY, PV_KEY, Exchange, Request, Send, headers, meta, rpc
from ..verdict import FAIL, NOT_APPLICABLE, PASS, Outcome
from .checks import UNKNOWN_TOOL, UNKNOWN_URI, Check, Target, needs
from .era_checks import ERA_CHECKS, post_only

__all__ = ["CHECKS"]

# What each row cites: a page (and anchor) of the 2026-07-28 specification, relative to its
# root (SPEC_URL), or JSON-RPC 2.0.
ERRORS, MESSAGES, REQUEST_ID, META = "basic#error-codes", "basic#messages", "schema#requestid", "schema#requestmetaobject"
HTTP = "basic/transports/streamable-http"
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
# filter): the specification fixes 400 only for the three MCP errors (-32020, -32021, -32022) and the
# official runner for the missing _meta members; past admission a server may answer 200 (a 400
# there is one implementation's choice, mcpwire's among them, not a rule).
EXECUTION_400_OR_200 = (400, 200)


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
                 Expect(404, -32601))


def _meta_check(cid: str, title: str, sends: str, meta_value: Any) -> Check:
    params = {"_meta": meta_value} if meta_value is not _DROP else {}
    return Check(cid, title, META, sends, lambda t: rpc(D, params, rpc_id=21), Expect(400, -32602))


def _no_cache(cid: str, method: str, key: str, capability: str) -> Check:
    return Check(cid, f"{method} has {key}, ttlMs and cacheScope", CACHING,
                 f"{method} with valid headers and _meta", needs(capability, lambda t: rpc(method, rpc_id=f"{method}-1")),
                 Expect(200, None, more=cacheable(key)))


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
            return Outcome(FAIL, f"round 2 got no reply: {second[2]}", evidence)
        problems = judge(Expect(400, -32602), second[0], second[1], target)
        return Outcome(FAIL, "; ".join(problems), evidence) if problems else Outcome(PASS, f"tool {name}", evidence)
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
        return Outcome(FAIL, f"no acknowledgement: {first[2]}", [first])
    await anyio.sleep(0.2)
    after = await send(rpc(D, rpc_id="after-cancel"))
    evidence = [first, after]
    late = [m for m in (after[1].messages() if after[1] is not None else [])
            if isinstance(m, dict) and m.get("id") == "listen-cancel"]
    if late:
        return Outcome(FAIL, f"a response to the cancelled listen request: {json.dumps(late[0])[:120]}", evidence)
    if after[1] is None:
        return Outcome(FAIL, f"no answer after the cancellation: {after[2]}", evidence)
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
        return Outcome(FAIL, f"no reply: {exchange[2]}", [exchange])
    problems = [] if target.stdio else status_rule(reply.status, (200,))
    return Outcome.judged(problems + acknowledged_rule(reply.messages(), "listen-1"), [exchange])


def _origin(target: Target) -> Request | str:
    if not target.loopback:
        return "the target is not on a loopback address (the runner's dns-rebinding check needs one)"
    hdrs = headers(D, extra=(("Host", "evil.example.com"), ("Origin", "http://evil.example.com")))
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
          Expect(200, None, more=discover_shape)),
    Check("meta.client-info-optional", "a request without clientInfo is served", META,
          "server/discover whose _meta has protocolVersion and clientCapabilities only",
          lambda t: rpc(D, {"_meta": {PV_KEY: "2026-07-28", CAPS_KEY: {}}}, rpc_id=2), Expect(200, None)),
    # -- the JSON-RPC envelope ----------------------------------------------------------------------
    Check("envelope.parse-error", "a body that is not JSON is -32700 with a null id", ERRORS,
          "the bytes '{\"jsonrpc\": \"2.0\", \"id\": 1,' (cut short)",
          lambda t: _raw(b'{"jsonrpc": "2.0", "id": 1,'), Expect(400, -32700, id=NULL)),
    Check("envelope.not-an-object", "a JSON body that is not an object is -32600", MESSAGES,
          "the JSON string \"server/discover\"", lambda t: _raw(b'"server/discover"'), Expect(400, -32600, id=NULL)),
    Check("envelope.batch-refused", "a batch (JSON array) is refused in 2026-07-28", MESSAGES,
          "a JSON array holding one valid server/discover request",
          lambda t: _raw(json.dumps([{**_VALID, "params": {"_meta": meta()}}]).encode()), Expect(400, -32600, id=NULL)),
    Check("envelope.jsonrpc-missing", "a request without \"jsonrpc\" is -32600", MESSAGES,
          "server/discover without the jsonrpc member", lambda t: _envelope(3, jsonrpc=_DROP),
          Expect(400, -32600, id=None)),
    Check("envelope.jsonrpc-wrong", "a request with \"jsonrpc\": \"1.0\" is -32600", MESSAGES,
          "server/discover with jsonrpc \"1.0\"", lambda t: _envelope(4, jsonrpc="1.0"), Expect(400, -32600, id=None)),
    Check("envelope.method-not-string", "a method that is not a string is -32600", MESSAGES,
          "a request whose method is the number 5", lambda t: _envelope(5, method=5), Expect(400, -32600, id=None)),
    Check("envelope.id-null-refused", "a request id of null is -32600 with a null id", REQUEST_ID,
          "server/discover with \"id\": null", lambda t: _envelope(None), Expect(400, -32600, id=NULL)),
    Check("envelope.id-bool-refused", "a boolean request id is -32600 with a null id", REQUEST_ID,
          "server/discover with \"id\": true", lambda t: _envelope(True), Expect(400, -32600, id=NULL)),
    Check("envelope.id-object-refused", "an object request id is -32600 with a null id", REQUEST_ID,
          "server/discover with \"id\": {\"a\": 1}", lambda t: _envelope({"a": 1}), Expect(400, -32600, id=NULL)),
    Check("envelope.id-fraction-refused", "a fractional request id is -32600 with a null id", REQUEST_ID,
          "server/discover with \"id\": 1.5", lambda t: _envelope(1.5), Expect(400, -32600, id=NULL)),
    Check("envelope.id-too-large-refused", "an integer id past int64 is -32600 with a null id", REQUEST_ID,
          "server/discover with \"id\": 2**63", lambda t: _envelope(2 ** 63), Expect(400, -32600, id=NULL)),
    Check("envelope.id-too-long-refused", "a string id longer than 256 bytes is -32600 with a null id", REQUEST_ID,
          "server/discover whose id is 257 'x'", lambda t: _envelope("x" * 257), Expect(400, -32600, id=NULL)),
    Check("envelope.id-string-echoed", "a string id of 256 bytes is echoed", REQUEST_ID,
          "server/discover whose id is 256 'x'", lambda t: _envelope("x" * 256), Expect(200, None)),
    Check("envelope.params-not-object", "params that are not an object are -32602", MESSAGES,
          "server/discover with \"params\": [1]", lambda t: _envelope(6, params=[1]), Expect(400, -32602)),
    Check("envelope.response-not-answered", "a posted response object is not answered", FLOW,
          "a JSON-RPC response object {\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {}}",
          lambda t: _raw(b'{"jsonrpc": "2.0", "id": 1, "result": {}}'), Expect(202, empty=True, refusable=True)),
    # -- methods ----------------------------------------------------------------------------------------
    Check("method.unknown", "an unknown method is -32601, HTTP 404, id echoed", ERRORS,
          "a request for mcpwire/no-such-method", lambda t: rpc("mcpwire/no-such-method", rpc_id="unknown-1"),
          Expect(404, -32601)),
    *(_removed(m) for m in ("initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe")),
    # -- request _meta ---------------------------------------------------------------------------------
    _meta_check("meta.missing", "a request without _meta is -32602", "server/discover with \"params\": {}", _DROP),
    _meta_check("meta.null", "\"_meta\": null is -32602", "server/discover with \"_meta\": null", None),
    _meta_check("meta.protocol-version-missing", "_meta without protocolVersion is -32602",
                "server/discover whose _meta has clientCapabilities only", {CAPS_KEY: {}}),
    _meta_check("meta.client-capabilities-missing", "_meta without clientCapabilities is -32602",
                "server/discover whose _meta has protocolVersion only", {PV_KEY: "2026-07-28"}),
    _meta_check("meta.client-capabilities-null", "clientCapabilities null is -32602",
                "server/discover with clientCapabilities null", {PV_KEY: "2026-07-28", CAPS_KEY: None}),
    _meta_check("meta.log-level-unknown", "an unknown logLevel is -32602",
                "server/discover with logLevel \"loud\"",
                meta(**{"io.modelcontextprotocol/logLevel": "loud"})),
    _meta_check("meta.progress-token-bool", "a boolean progressToken is -32602",
                "server/discover with progressToken true", meta(progressToken=True)),
    _meta_check("meta.key-invalid", "a _meta key outside the key syntax is -32602",
                "server/discover whose _meta also has the key \"not a key!\"", meta(**{"not a key!": 1})),
    _meta_check("meta.client-info-invalid", "a clientInfo without string name and version is -32602",
                "server/discover with clientInfo {\"name\": 5}", meta(**{INFO_KEY: {"name": 5}})),
    # -- HTTP headers ------------------------------------------------------------------------------------
    Check("version.header-missing", "no MCP-Protocol-Version header is -32020", VERSION_HEADER,
          "server/discover without MCP-Protocol-Version", lambda t: _with_headers(version=None, rpc_id=31),
          Expect(400, -32020), http_only=True),
    Check("version.unsupported", "an unsupported version is -32022 with requested and supported", UNSUPPORTED,
          "server/discover with v999.0.0 in the header and in _meta",
          lambda t: _with_headers(params={"_meta": meta(**{PV_KEY: "v999.0.0"})}, version="v999.0.0", rpc_id=32),
          Expect(400, -32022, more=unsupported_version)),
    Check("version.header-body-mismatch", "a header version that differs from _meta is -32020", MISMATCH,
          "server/discover with header 2026-07-28 and _meta v999.0.0",
          lambda t: _with_headers(params={"_meta": meta(**{PV_KEY: "v999.0.0"})}, rpc_id=33), Expect(400, -32020), http_only=True),
    Check("headers.mcp-method-missing", "no Mcp-Method header is -32020", VALIDATION,
          "server/discover without Mcp-Method", lambda t: rpc(D, rpc_id=34, hdrs=headers(None)), Expect(400, -32020), http_only=True),
    Check("headers.mcp-method-mismatch", "an Mcp-Method unlike the body's method is -32020", VALIDATION,
          "server/discover with Mcp-Method: tools/list", lambda t: rpc(D, rpc_id=35, hdrs=headers("tools/list")),
          Expect(400, -32020), http_only=True),
    Check("headers.mcp-method-case", "Mcp-Method compares case-sensitively", VALIDATION,
          "server/discover with Mcp-Method: SERVER/DISCOVER",
          lambda t: rpc(D, rpc_id=36, hdrs=headers("SERVER/DISCOVER")), Expect(400, -32020), http_only=True),
    Check("headers.mcp-name-missing", "tools/call without Mcp-Name is -32020", VALIDATION,
          f"tools/call of {UNKNOWN_TOOL} without Mcp-Name", _tool_call(None), Expect(400, -32020), http_only=True),
    Check("headers.mcp-name-mismatch", "an Mcp-Name unlike params.name is -32020", VALIDATION,
          f"tools/call of {UNKNOWN_TOOL} with Mcp-Name: another-tool", _tool_call("another-tool"),
          Expect(400, -32020), http_only=True),
    Check("headers.mcp-param-missing", "an x-mcp-header argument without its Mcp-Param header is -32020",
          PARAM_HEADERS, "tools/call of a tool with an x-mcp-header parameter, the argument given, no Mcp-Param header",
          _param_header(None), Expect(400, -32020), needs_tool_calls=True, http_only=True),
    Check("headers.mcp-param-mismatch", "an Mcp-Param header unlike its argument is -32020", PARAM_HEADERS,
          "tools/call of a tool with an x-mcp-header parameter \"probe\" and its Mcp-Param header \"other\"",
          _param_header("other"), Expect(400, -32020), needs_tool_calls=True, http_only=True),
    # -- HTTP admission ----------------------------------------------------------------------------------
    Check("http.get-refused", "GET is 405 with Allow: POST", HTTP, "GET on the endpoint",
          steps=post_only("GET"), http_only=True),
    Check("http.delete-refused", "DELETE is 405 with Allow: POST", HTTP, "DELETE on the endpoint",
          steps=post_only("DELETE"), http_only=True),
    Check("http.content-type-wrong", "a Content-Type other than application/json is 415", HTTP,
          "server/discover with Content-Type: text/plain",
          lambda t: _with_headers(content_type="text/plain", rpc_id=41), Expect(415, id=None), http_only=True),
    Check("http.accept-missing", "no Accept header is 406", HTTP, "server/discover without Accept",
          lambda t: _with_headers(accept=None, rpc_id=42), Expect(406, id=None), http_only=True),
    Check("http.accept-json-only", "an Accept without text/event-stream is 406", HTTP,
          "server/discover with Accept: application/json", lambda t: _with_headers(accept="application/json", rpc_id=43),
          Expect(406, id=None), http_only=True),
    Check("http.origin-foreign-refused", "a foreign Host and Origin are refused (4xx)", HTTP,
          "server/discover with Host: evil.example.com and Origin: http://evil.example.com", _origin,
          Expect(tuple(range(400, 500)), id=None), http_only=True),
    # -- notifications are never answered ---------------------------------------------------------------
    Check("notification.cancelled-202", "a notification is answered 202 with no body", FLOW,
          "notifications/cancelled for an unknown request id",
          lambda t: _notify({"jsonrpc": "2.0", "method": "notifications/cancelled",
                             "params": {"requestId": "mcpwire-probe-none", "_meta": meta()}}), Expect(202, empty=True)),
    Check("notification.malformed-202", "a malformed notification is not answered either", NOTIFICATION,
          "notifications/cancelled whose params are [1]",
          lambda t: _notify({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": [1]}),
          Expect(202, empty=True, refusable=True)),
    Check("notification.unknown-202", "a notification of an unknown method is not answered", NOTIFICATION,
          "notifications/mcpwire-probe-unknown",
          lambda t: _notify({"jsonrpc": "2.0", "method": "notifications/mcpwire-probe-unknown"},
                            "notifications/mcpwire-probe-unknown"), Expect(202, empty=True)),
    # -- lists, caching, pagination ----------------------------------------------------------------------
    _no_cache("tools.list-cacheable", "tools/list", "tools", "tools"),
    _no_cache("prompts.list-cacheable", "prompts/list", "prompts", "prompts"),
    _no_cache("resources.list-cacheable", "resources/list", "resources", "resources"),
    _no_cache("resources.templates-list-cacheable", "resources/templates/list", "resourceTemplates", "resources"),
    # No check of a string cursor the server never issued: the specification says only that it
    # SHOULD be -32602 (server/utilities/pagination), and a server may serve the first page.
    Check("pagination.cursor-not-string", "a cursor that is not a string is -32602", PAGINATION,
          "tools/list with cursor 5",
          needs("tools", lambda t: rpc("tools/list", {"cursor": 5, "_meta": meta()}, rpc_id="cursor-2")),
          Expect(EXECUTION_400_OR_200, -32602)),
    Check("tools.unknown-tool", "tools/call of an unknown tool is -32602", TOOL_ERRORS,
          f"tools/call of {UNKNOWN_TOOL} with matching headers",
          needs("tools", lambda t: rpc("tools/call", {"name": UNKNOWN_TOOL, "arguments": {}, "_meta": meta()},
                                      rpc_id="call-2", name=UNKNOWN_TOOL)), Expect(EXECUTION_400_OR_200, -32602)),
    # server/resources#error-handling: a JSON-RPC error, never empty contents; -32602 and error.data.uri
    # are only SHOULD (the official runner warns, it does not fail).
    Check("resources.unknown-uri", "resources/read of an unknown URI is a JSON-RPC error", RESOURCE_ERRORS,
          f"resources/read of {UNKNOWN_URI}",
          needs("resources", lambda t: rpc("resources/read", {"uri": UNKNOWN_URI, "_meta": meta()},
                                          rpc_id="read-1", name=UNKNOWN_URI)),
          Expect((200, 400, 404, 500), any_error=True)),
    # -- multi round-trip, subscriptions -----------------------------------------------------------------
    Check("mrtr.request-state-tampered", "a tampered requestState is refused with -32602", MRTR,
          "tools/call of a tool that answers input_required, then round 2 with requestState + \"-TAMPERED\"",
          steps=_tampered_state, needs_tool_calls=True),
    Check("listen.acknowledged-first", "a listen stream starts with its acknowledgement", SUBSCRIPTIONS,
          "subscriptions/listen for the advertised list changes", steps=_listen_ack),
    Check("cancel.listen-no-late-response", "a listen cancelled on stdio gets no response", CANCELLATION,
          "subscriptions/listen, notifications/cancelled for it after the acknowledgement, then server/discover",
          steps=_cancelled_listen),
    Check("listen.notifications-missing", "subscriptions/listen without a notifications filter is -32602",
          FILTER, "subscriptions/listen whose params hold only _meta", _listen_without_filter,
          Expect(EXECUTION_400_OR_200, -32602)),
    Check("capabilities.unadvertised-refused", "a method of a capability not advertised is -32601", DISCOVER,
          "the first of tools/list, prompts/list, resources/list, completion/complete whose capability is absent",
          _unadvertised, Expect(404, -32601)),
    # -- the initialize era (2025-11-25 sessions) ------------------------------------------------------
    *ERA_CHECKS,
)

assert len({c.id for c in CHECKS}) == len(CHECKS), "check ids are unique"
