"""The fuzzer's oracle: what a conforming server may answer to one request, read from the request
as sent (so a replayed case is judged exactly as the run that found it).

Always, for every answer: each message is JSON-RPC 2.0 (a response with a string, integer or
null id and exactly one of ``result`` or ``error``, an error with an integer ``code`` and a
string ``message``, or a notification); no request to the client (this revision has none:
basic/patterns/mrtr); a request with a valid id gets one response, with that id; a notification or a
posted response gets none (HTTP 202 with no body); on HTTP a 200 is JSON or an event stream and
an error sent as JSON carries the status basic#error-codes gives its code.

Then, where the specification leaves no doubt, the error itself: the order in which a Streamable
HTTP server refuses a request (405, a foreign Origin a 4xx, 415, 406, then -32700 with a null id:
streamable-http#server-validation, docs/errors.md) and the envelope rules of JSON-RPC 2.0 and
schema#requestid (-32600 with a null id for an id that is not one; -32602 for params that are
not an object). Past the envelope a request can break several rules at once (a missing header, a bad
``_meta``, an unknown method) and the specification does not say which one a server reports first,
so the oracle collects every rule the request breaks and accepts any of their codes: it never
says a server is wrong for naming a different one of the request's real faults. A rule the
oracle cannot tell (a repeated Content-Type, a wildcard Accept, an initialize-era version in
the header, duplicate JSON keys) makes it assert nothing past the generic checks.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import msgspec

from mcpwire.types import (
    META_KEY_PATTERN,
    CallToolResult,
    CompleteResult,
    DiscoverResult,
    GetPromptResult,
    InputRequiredResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    ReadResourceResult,
)

from ...errors import McpwireAdapterError
from ..probe.checks import CAPS_KEY, INFO_KEY, PV_KEY, VERSION, Reply, Request

__all__ = ["Context", "Expect", "check", "expect_for", "sent_id", "valid_id", "validity"]

KEY = re.compile(META_KEY_PATTERN)
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
LOG_LEVELS = frozenset(("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"))
# The request methods of 2026-07-28 (schema ClientRequest), and which capability each needs.
METHODS = {"server/discover": None, "tools/list": "tools", "tools/call": "tools", "prompts/list": "prompts",
           "prompts/get": "prompts", "resources/list": "resources", "resources/templates/list": "resources",
           "resources/read": "resources", "completion/complete": "completions", "subscriptions/listen": None,
           "tasks/get": "tasks", "tasks/result": "tasks", "tasks/cancel": "tasks", "tasks/list": "tasks",
           "tasks/update": "tasks"}
PAGINATED = ("tools/list", "prompts/list", "resources/list", "resources/templates/list")
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}  # Mcp-Name (streamable-http#server-validation)
# The HTTP status of each error code sent as JSON (specification 2026-07-28: Basic, Error codes;
# the -32600 of a refusal before the body is read goes with that refusal's status; -32603 may also
# be 503 when overloaded). A -32602 or -32603 met while executing (an unknown tool, a bad argument,
# a crash) may come with 200: the specification fixes 400 only for the three MCP errors (-32020,
# -32021, -32022); a 400 for -32602 and a 500 for -32603 are mcpwire's choice, not a rule.
STATUS_OF = {-32700: {400}, -32600: {400, 403, 405, 406, 413, 415}, -32601: {404}, -32602: {400, 200}, -32020: {400},
             -32021: {400}, -32022: {400}, -32603: {500, 503, 200}}
BOM = b"\xef\xbb\xbf"
# A notification or a posted response: 202 with no body when the server accepts it, an HTTP error
# when it cannot (streamable-http#sending-messages-to-the-server), never an answer with an id.
ACCEPTED_OR_REFUSED = frozenset({202, *range(400, 500)})
# The typed result of each method (mcpwire.types mirrors the official schema, unknown members
# allowed): a result that does not decode as its type is not schema-valid.
RESULT_TYPES: dict[str, Any] = {
    "server/discover": DiscoverResult, "tools/list": ListToolsResult, "prompts/list": ListPromptsResult,
    "resources/list": ListResourcesResult, "resources/templates/list": ListResourceTemplatesResult,
    "resources/read": ReadResourceResult, "prompts/get": GetPromptResult, "tools/call": CallToolResult,
    "completion/complete": CompleteResult}
MRTR_METHODS = ("tools/call", "prompts/get", "resources/read")


@dataclass(frozen=True)
class Context:
    """What the oracle knows of the target: HTTP or stdio, a loopback URL (so a foreign Origin
    must be refused: DNS rebinding protection), its advertised capabilities (None: unknown), and the tools
    whose arguments travel in ``Mcp-Param-*`` headers (server/tools#x-mcp-header) too."""

    stdio: bool = False
    loopback: bool = True
    capabilities: frozenset[str] | None = None
    header_tools: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Expect:
    """What the request calls for. ``silent``: no answer (HTTP 202 with no body); ``codes``: an
    error with one of these codes (None: a result or any error); ``statuses``: the HTTP status
    (None: any); ``id``: "echo" (the request's), "null", "echo-or-null" or None (not looked at);
    ``why``: the rules behind it, for the report."""

    silent: bool = False
    codes: frozenset[int] | None = None
    statuses: frozenset[int] | None = None
    id: str | None = None
    why: tuple[str, ...] = field(default_factory=tuple)


def valid_id(value: Any) -> bool:
    """Schema $defs RequestId: a string of at most 256 bytes or an integer in the int64 range."""
    if isinstance(value, str):
        return len(value.encode("utf-8", "surrogatepass")) <= 256
    return isinstance(value, int) and not isinstance(value, bool) and INT64_MIN <= value <= INT64_MAX


class _Unclear(McpwireAdapterError):
    """The request is one the specification does not settle: assert nothing past the generic checks."""


def _strict_json(body: bytes) -> tuple[bool, Any]:
    """``(True, value)`` for strict JSON (a leading BOM skipped, as servers do), ``(False, None)``
    for bytes that are not JSON; :class:`_Unclear` for JSON parsers may differ on (duplicate
    keys, lone surrogates, very deep nesting)."""
    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        if len({k for k, _ in items}) != len(items):
            raise _Unclear("duplicate keys")
        return dict(items)

    def constant(name: str) -> Any:
        raise ValueError(name)

    try:
        text = body.removeprefix(BOM).decode("utf-8")
        value = json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    except RecursionError:
        raise _Unclear("deep nesting") from None
    except ValueError:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return False, None
    if not _plain(value) or len(text) > 512 * 1024:
        raise _Unclear("lone surrogates or a large body")
    return True, value


def _plain(value: Any, depth: int = 0) -> bool:
    if depth > 64:
        return False
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    if isinstance(value, dict):
        return all(_plain(k, depth) and _plain(v, depth + 1) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain(v, depth + 1) for v in value)
    return True


def _headers(request: Request) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, value in request.headers:
        out.setdefault(name.lower(), []).append(value.strip())
    return out


def _media(value: str) -> str:
    return value.split(";")[0].strip().lower()


def expect_for(request: Request, context: Context) -> Expect:
    """What a conforming server answers to ``request`` (see the module docstring)."""
    try:
        return _expect(request, context)
    except _Unclear as why:
        return Expect(why=(f"not settled by the specification: {why}",))


def _expect(request: Request, context: Context) -> Expect:
    headers = _headers(request)
    if not context.stdio:
        if request.method != "POST":
            return Expect(statuses=frozenset({405}), why=("streamable-http#message-flow: POST only, else 405",))
        origins = headers.get("origin", [])
        if origins and context.loopback and not all(_loopback_origin(o) for o in origins):
            return Expect(statuses=frozenset(range(400, 500)), why=("streamable-http#server-validation: a foreign Origin is refused",))
        types = headers.get("content-type", [])
        if len(types) != 1 and types:
            raise _Unclear("a repeated Content-Type")
        if not types or _media(types[0]) != "application/json":
            return Expect(statuses=frozenset({415}), codes=None, why=("streamable-http#server-validation: Content-Type application/json, else 415",))
        accepts = [_media(a) for value in headers.get("accept", []) for a in value.split(",")]
        if any("*" in a for a in accepts):
            raise _Unclear("a wildcard Accept")
        if "application/json" not in accepts or "text/event-stream" not in accepts:
            return Expect(statuses=frozenset({406}), why=("streamable-http#server-validation: Accept lists both types, else 406",))
    if context.stdio and not request.body.strip():
        raise _Unclear("a blank line")
    if context.stdio and request.body.startswith(BOM):
        raise _Unclear("a byte order mark on a stdio line")
    parsed, message = _strict_json(request.body)
    if not parsed:
        return Expect(codes=frozenset({-32700}), statuses=frozenset({400}), id="null",
                      why=("JSON-RPC 2.0 section 5.1: not JSON is -32700 with a null id",))
    if not isinstance(message, dict):
        return Expect(codes=frozenset({-32600}), statuses=frozenset({400}), id="null",
                      why=("basic#messages: a message is one object, no batch: -32600",))
    method = message.get("method")
    if "method" not in message:
        if ("result" in message) != ("error" in message) and valid_id(message.get("id")) \
                and message.get("jsonrpc") == "2.0" and _right_headers(headers, None, context):
            return Expect(silent=True, statuses=ACCEPTED_OR_REFUSED,
                          why=("streamable-http#message-flow: a posted response gets 202 and no body, or an HTTP error",))
        raise _Unclear("a message without a method")
    if "id" not in message:
        if isinstance(method, str):
            if _right_headers(headers, method, context) and _version_agrees(message, headers, context):
                return Expect(silent=True, statuses=ACCEPTED_OR_REFUSED,
                              why=("JSON-RPC 2.0 section 4.1: a notification is never answered (HTTP: 202, or an error with no id)",))
            raise _Unclear("a notification with headers the server may refuse")
        return Expect(codes=frozenset({-32600}), statuses=frozenset({400}), id="null",
                      why=("JSON-RPC 2.0 section 4: method must be a string",))
    if set(message) - {"jsonrpc", "id", "method", "params"}:
        # JSON-RPC 2.0 defines no other member of a request and says nothing of one: a server may
        # ignore it or refuse the request as invalid.
        raise _Unclear("a member of the request JSON-RPC does not define")
    id_rule = "echo-or-null" if valid_id(message["id"]) else "null"
    envelope = set()
    if message.get("jsonrpc") != "2.0":
        envelope.add(-32600)
    if not isinstance(method, str):
        envelope.add(-32600)
    if not valid_id(message["id"]):
        envelope.add(-32600)
    params = message.get("params", {})
    if "params" in message and not isinstance(params, dict):
        envelope.add(-32602)  # MCP params are an object (basic#messages)
        if not isinstance(params, list):
            # JSON-RPC 2.0 section 4.2: params, when present, are an array or an object, so a scalar
            # or null makes the message an Invalid Request: -32600 is as right as -32602.
            envelope.add(-32600)
    if envelope:
        return _error(envelope, id_rule, "JSON-RPC 2.0 section 4 and schema#requestid: the envelope")
    assert isinstance(method, str) and isinstance(params, dict)
    faults: set[int] = set()
    meta = params.get("_meta", {})
    body_version = meta.get(PV_KEY) if isinstance(meta, dict) else None
    if not context.stdio:
        versions = headers.get("mcp-protocol-version", [])
        if len(versions) != 1:
            faults.add(-32020)
        elif not isinstance(body_version, str):
            faults |= {-32602, -32020}
        elif versions[0] != body_version:
            faults.add(-32020)
        elif versions[0] != VERSION:
            if versions[0].startswith("20"):
                raise _Unclear("an initialize-era version names another dialect")
            faults.add(-32022)
        methods = headers.get("mcp-method", [])
        if len(methods) != 1 or methods[0] != method:
            faults.add(-32020)
        if method in NAMED:
            value = params.get(NAMED[method])
            names = headers.get("mcp-name", [])
            if not isinstance(value, str):
                faults |= {-32602, -32020}
            elif any(n.startswith("=?base64?") for n in names):
                raise _Unclear("a base64 Mcp-Name")
            elif len(names) != 1 or names[0] != value.strip():
                faults.add(-32020)
    faults |= _meta_faults(params, context)
    if method in PAGINATED and "cursor" in params and not isinstance(params["cursor"], str):
        faults.add(-32602)
    if method not in METHODS:
        if method in ("initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe",
                      "roots/list", "sampling/createMessage", "elicitation/create"):
            raise _Unclear("a method of another revision")
        faults.add(-32601)
    elif context.capabilities is not None and METHODS[method] is not None \
            and METHODS[method] not in context.capabilities:
        faults.add(-32601)
    if faults and not context.stdio and method == "tools/call" \
            and isinstance(params.get("name"), str) and params["name"] in context.header_tools:
        faults.add(-32020)  # its Mcp-Param-* headers may disagree with mutated arguments too
    if faults:
        return _error(faults, "echo", "schema#requestmetaobject, streamable-http#server-validation, basic#error-codes: the request breaks these rules")
    return Expect(id="echo", why=("a valid request: a result or an error, with its id",))


def _error(codes: set[int], id_rule: str, why: str) -> Expect:
    statuses = frozenset(s for c in codes for s in STATUS_OF.get(c, ()))
    return Expect(codes=frozenset(codes), statuses=statuses or None, id=id_rule,
                  why=(f"{why}: {', '.join(map(str, sorted(codes)))}",))


def _meta_faults(params: dict[str, Any], context: Context) -> set[int]:
    """Schema $defs RequestMetaObject: the request ``_meta`` rules (all -32602 but an unsupported version, -32022)."""
    meta = params.get("_meta", {})
    if not isinstance(meta, dict):
        return {-32602}
    faults = set()
    if any(not KEY.fullmatch(k) for k in meta):
        faults.add(-32602)
    if "progressToken" in meta and not valid_id(meta["progressToken"]):
        faults.add(-32602)
    if "io.modelcontextprotocol/logLevel" in meta and meta["io.modelcontextprotocol/logLevel"] not in LOG_LEVELS:
        faults.add(-32602)
    version = meta.get(PV_KEY)
    if not isinstance(version, str):
        faults.add(-32602)
    elif version != VERSION and context.stdio:
        if version.startswith("20"):
            raise _Unclear("an initialize-era version names another dialect")
        faults.add(-32022)
    info = meta.get(INFO_KEY)
    if INFO_KEY in meta and not (isinstance(info, dict) and isinstance(info.get("name"), str)
                                 and isinstance(info.get("version"), str)):
        faults.add(-32602)
    if not isinstance(meta.get(CAPS_KEY), dict):
        faults.add(-32602)
    return faults


def _right_headers(headers: dict[str, list[str]], method: str | None, context: Context) -> bool:
    """Every header a message needs, once and right (the body's were checked before)."""
    if context.stdio:
        return True
    if headers.get("mcp-protocol-version") != [VERSION]:
        return False
    return method is None or headers.get("mcp-method") == [method]


def _version_agrees(message: dict[str, Any], headers: dict[str, list[str]], context: Context) -> bool:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(PV_KEY, VERSION) if isinstance(meta, dict) else VERSION
    if "params" in message and not isinstance(params, dict):
        return False
    return version == VERSION


def _loopback_origin(origin: str) -> bool:
    return bool(re.fullmatch(r"https?://(localhost|127\.0\.0\.1|\[::1\])(:\d+)?", origin))


# -- judging -----------------------------------------------------------------------------------------------
def check(request: Request, reply: Reply, context: Context, expect: Expect | None = None) -> list[str]:
    """The problems with ``reply`` to ``request`` (empty: it conforms)."""
    expect = expect or expect_for(request, context)
    problems: list[str] = []
    kind = _media(reply.header("content-type") or "")
    if not context.stdio:
        if expect.statuses is not None and reply.status not in expect.statuses:
            problems.append(f"HTTP status {reply.status}, expected {_statuses(expect.statuses)} ({expect.why[0]})")
        if reply.status == 200 and kind not in ("application/json", "text/event-stream"):
            problems.append(f"a 200 with Content-Type {kind or 'none'!r} (streamable-http#message-flow: JSON or an event stream)")
        if reply.status == 202 and reply.body:
            problems.append(f"a 202 with a body of {len(reply.body)} bytes")
        if reply.status >= 300 and kind != "application/json":
            return problems  # a refusal's body need not be JSON-RPC
    messages = reply.messages() if reply.body else []
    responses = []
    for message in messages:
        fault = _not_jsonrpc(message)
        if fault:
            problems.append(fault)
        elif "method" not in message:
            responses.append(message)
    if expect.silent:
        if not context.stdio and reply.status >= 400:
            # streamable-http#sending-messages: a notification or response the server cannot accept is
            # an HTTP error, whose body MAY be a JSON-RPC error that has no id.
            responses = [r for r in responses if r.get("id") is not None or "result" in r]
        if responses:
            problems.append(f"{len(responses)} response(s) to a message that gets none ({expect.why[0]})")
        return problems
    sent = sent_id(request)
    if context.stdio:
        # Requests may run concurrently on stdio (basic/transports/stdio): a line may answer an earlier
        # message, so only the answers carrying this request's id (or null, where it may) are its.
        responses = [r for r in responses if (r.get("id") == sent and sent is not None)
                     or (r.get("id") is None and expect.id in ("null", "echo-or-null"))]
        responses = responses[-1:] if all(r.get("id") is None for r in responses) else responses
    if not responses:
        if expect.id is not None and (context.stdio or reply.status in (200, 202) or kind == "application/json"):
            problems.append("no response to a request" + (f" (HTTP {reply.status})" if not context.stdio else ""))
        return problems
    if len(responses) > 1 and not context.stdio:  # on stdio an earlier line's late answer may share the id
        problems.append(f"{len(responses)} responses to one request")
    answer = responses[-1]
    got = answer.get("id")
    if expect.id == "echo" and got != sent:
        problems.append(f"id {got!r}, expected the request's id {sent!r}")
    elif expect.id == "null" and got is not None:
        problems.append(f"id {got!r}, expected null ({expect.why[0]})")
    elif expect.id == "echo-or-null" and got is not None and got != sent:
        problems.append(f"id {got!r}, expected the request's id {sent!r} or null")
    error = answer.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    if expect.codes is not None:
        if "result" in answer:
            problems.append(f"a result, expected error {_codes(expect.codes)} ({expect.why[0]})")
        elif code not in expect.codes:
            problems.append(f"error code {code!r}, expected {_codes(expect.codes)} ({expect.why[0]})")
    if not context.stdio and kind == "application/json" and isinstance(code, int) and code in STATUS_OF \
            and reply.status not in STATUS_OF[code]:
        problems.append(f"error {code} with HTTP {reply.status}, basic#error-codes gives {_statuses(STATUS_OF[code])}")
    if "result" in answer:
        problems += _schema_problems(request, answer["result"])
    if not context.stdio and kind == "application/json" and "result" in answer and reply.status != 200:
        problems.append(f"a result with HTTP {reply.status}")
    return problems


def _schema_problems(request: Request, result: Any) -> list[str]:
    """The result decoded as the schema type of the request's method (only a method this
    revision has, and a complete or input_required result: a task is another shape)."""
    try:
        message = json.loads(request.body.removeprefix(BOM))
    except ValueError:
        return []
    method = message.get("method") if isinstance(message, dict) else None
    if not isinstance(method, str) or method not in RESULT_TYPES or not isinstance(result, dict):
        return []
    kind = result.get("resultType", "complete")
    if kind == "input_required":
        if method not in MRTR_METHODS:
            return [f"an input_required result to {method} (basic/patterns/mrtr: only tools/call, prompts/get, "
                    "resources/read)"]
        target = InputRequiredResult
    elif kind == "complete":
        target = RESULT_TYPES[method]
    else:
        return []
    try:
        msgspec.convert(result, type=target, strict=True)
    except msgspec.ValidationError as exc:
        return [f"the result is not a valid {target.__name__} (schema): {exc}"]
    return []


def sent_id(request: Request) -> Any:
    """The id the request's body carries (None when it has none, or is not JSON)."""
    try:
        message = json.loads(request.body.removeprefix(BOM))
    except ValueError:
        return None
    return message.get("id") if isinstance(message, dict) else None


def _not_jsonrpc(message: Any) -> str | None:
    """Why ``message`` is not a JSON-RPC 2.0 message a server may send (None: it is)."""
    if not isinstance(message, dict):
        return f"not a JSON-RPC message: {_short(message)}"
    if message.get("mcpwire-probe") == "not JSON":
        return f"not JSON: {_short(message.get('text'))}"
    if message.get("jsonrpc") != "2.0":
        return f"jsonrpc {message.get('jsonrpc')!r}, expected '2.0': {_short(message)}"
    if "method" in message:
        if not isinstance(message["method"], str):
            return f"a method that is not a string: {_short(message)}"
        if "id" in message:
            return f"a request to the client (none in this revision: basic/patterns/mrtr): {_short(message)}"
        return None
    if ("result" in message) == ("error" in message):
        return f"a response needs exactly one of result and error: {_short(message)}"
    if "id" not in message or not (message["id"] is None or valid_id(message["id"])):
        return f"a response id must be a string, an integer or null: {_short(message)}"
    if "error" in message:
        error = message["error"]
        if not isinstance(error, dict) or not isinstance(error.get("code"), int) or isinstance(error.get("code"), bool) \
                or not isinstance(error.get("message"), str):
            return f"an error needs an integer code and a string message: {_short(message)}"
    elif not isinstance(message["result"], dict):
        return f"a result must be an object: {_short(message)}"
    return None


def _short(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) < 160 else text[:157] + "..."


def _codes(codes: frozenset[int]) -> str:
    return " or ".join(map(str, sorted(codes)))


def _statuses(statuses: frozenset[int] | set[int]) -> str:
    if len(statuses) > 20:
        return f"{min(statuses)}-{max(statuses)}"
    return " or ".join(map(str, sorted(statuses)))


def validity(reply: Reply) -> list[str]:
    """Only the generic check: every message in ``reply`` is JSON-RPC a server may send."""
    return [p for p in map(_not_jsonrpc, reply.messages() if reply.body else []) if p]
