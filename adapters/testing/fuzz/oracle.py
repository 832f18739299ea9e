"""The fuzzer's oracle: what a conforming server must answer to one request, read from the
request as sent (so a replayed case is judged exactly as the run that found it). This module
owns :func:`expect_for` (the :class:`~mcpwire_adapters.testing.demand.Demand` of a request) and
:class:`Context` (what the oracle knows of the target); the answer is then judged against it by
the one judge, :mod:`mcpwire_adapters.testing.judge` (:func:`check` here;
:func:`~mcpwire_adapters.testing.demand.judge_step` for a step of a case), with the rules every
answer keeps whatever was sent.

Each fault the request has is a :class:`~mcpwire_adapters.testing.demand.Fault` naming its rule
of :data:`~mcpwire_adapters.testing.judge.RULES`, so a problem carries the strength of the
official text (a MUST fails, a SHOULD warns) or is advice (this project's own answer: the order
in which it refuses a request, 405, 403, 415, 406, its codes and statuses, docs/errors.md). Past
the envelope a request can break several rules at once (a missing header, a bad ``_meta``, an
unknown method) and the specification does not say which one a server reports first, so the
oracle collects every rule the request breaks and accepts any of their codes: it never says a
server is wrong for naming a different one of the request's real faults. Any id the schema
allows (a string or an integer, whatever its size) makes a valid request. A rule the oracle
cannot tell (a repeated Content-Type, a wildcard Accept, an initialize-era version in the
header, duplicate JSON keys) makes it demand nothing past the rules every answer keeps.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from mcpwire.types import META_KEY_PATTERN

from ...errors import McpwireAdapterError
from ..demand import Demand, Fault, judge_answer
from ..judge import ECHO, ECHO_OR_NULL, NULL, valid_id, within_bounds
from ..rawwire import BOM, CAPS_KEY, INFO_KEY, PV_KEY, VERSION, Reply, Request, media_type
from ..verdict import Problem

__all__ = ["Context", "check", "expect_for"]

KEY = re.compile(META_KEY_PATTERN)
LOG_LEVELS = frozenset(("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"))
# The request methods of 2026-07-28 (schema ClientRequest), and which capability each needs.
METHODS = {"server/discover": None, "tools/list": "tools", "tools/call": "tools", "prompts/list": "prompts",
           "prompts/get": "prompts", "resources/list": "resources", "resources/templates/list": "resources",
           "resources/read": "resources", "completion/complete": "completions", "subscriptions/listen": None,
           "tasks/get": "tasks", "tasks/result": "tasks", "tasks/cancel": "tasks", "tasks/list": "tasks",
           "tasks/update": "tasks"}
PAGINATED = ("tools/list", "prompts/list", "resources/list", "resources/templates/list")
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}  # Mcp-Name (streamable-http#server-validation)


@dataclass(frozen=True)
class Context:
    """What the oracle knows of the target: HTTP or stdio, a loopback URL (so a foreign Origin
    must be refused: DNS rebinding protection), its advertised capabilities (None: unknown), the tools
    whose arguments travel in ``Mcp-Param-*`` headers (server/tools#x-mcp-header) too, and
    whether it serves clients of revisions older than 2025-06-18 (which MAY take a request
    without MCP-Protocol-Version for 2025-03-26, and answer GET and DELETE by that era's rules)."""

    stdio: bool = False
    loopback: bool = True
    capabilities: frozenset[str] | None = None
    header_tools: frozenset[str] = frozenset()
    initialize_era: bool = False  # it serves clients older than 2025-06-18 too (an initialize naming 2025-03-26)


class _Unclear(McpwireAdapterError):
    """The request is one the specification does not settle: demand nothing past the rules every answer keeps."""


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


def _lenient_json(body: bytes) -> bool:
    """Whether ``body``, its bytes that are not UTF-8 replaced, is JSON."""
    try:
        json.loads(body.removeprefix(BOM).decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return False
    return True


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


def expect_for(request: Request, context: Context) -> Demand:
    """What a conforming server answers to ``request`` (see the module docstring)."""
    try:
        demand = _expect(request, context)
    except _Unclear as why:
        return Demand(why=(f"not settled by the specification: {why}",))
    if not context.stdio and demand.refusal is None and not _accepts_both(request):
        return replace(demand, refusable=True)  # Accept is the client's rule: a server may refuse (4xx) or serve
    return demand


def _accepts_both(request: Request) -> bool:
    accepts = {media_type(a) for value in _headers(request).get("accept", []) for a in value.split(",")}
    return {"application/json", "text/event-stream"} <= accepts


def _refusal(rule_id: str, status: int | frozenset[int], why: str) -> Demand:
    statuses = frozenset({status}) if isinstance(status, int) else status
    return Demand(refusal=Fault(rule_id, statuses=statuses), why=(why,))


def _fault(rule_id: str, *codes: int, statuses: Iterable[int] | None = (400,), advice: Fault | None = None) -> Fault:
    return Fault(rule_id, frozenset(codes) if codes else None, frozenset(statuses) if statuses is not None else None,
                 advice)


def _advice(rule_id: str, *codes: int, statuses: Iterable[int] = (400,)) -> Fault:
    return Fault(rule_id, frozenset(codes), frozenset(statuses))


def _expect(request: Request, context: Context) -> Demand:
    headers = _headers(request)
    if not context.stdio:
        if request.method != "POST":
            rule_id = "mcp.get-delete-405" if request.method in ("GET", "DELETE") and not context.initialize_era \
                else "mcpwire.post-only"
            return _refusal(rule_id, 405, "streamable-http: POST only, else 405")
        origins = headers.get("origin", [])
        if origins and context.loopback and not all(_loopback_origin(o) for o in origins):
            return _refusal("mcp.origin", 403, "streamable-http: a foreign Origin is refused with 403")
        types = headers.get("content-type", [])
        if len(types) != 1 and types:
            raise _Unclear("a repeated Content-Type")
        if not types or media_type(types[0]) != "application/json":
            return _refusal("mcpwire.content-type", 415, "mcpwire: Content-Type application/json, else 415")
        accepts = [media_type(a) for value in headers.get("accept", []) for a in value.split(",")]
        if any("*" in a for a in accepts):
            raise _Unclear("a wildcard Accept")
        if accepts and "application/json" not in accepts and "text/event-stream" not in accepts:
            return _refusal("mcpwire.accept", 406, "mcpwire: an Accept listing neither type is 406")
        # No Accept (any type, RFC 9110), or one of the two: the rule is the client's; served or refused.
    if context.stdio and not request.body.strip():
        raise _Unclear("a blank line")
    if context.stdio and request.body.startswith(BOM):
        raise _Unclear("a byte order mark on a stdio line")
    parsed, message = _strict_json(request.body)
    if not parsed and _lenient_json(request.body):
        # Not UTF-8, so not JSON (RFC 8259); but read with the bad bytes replaced it is, and RFC 8259
        # leaves what a receiver does with ill-formed text open: an id read that way is no fault.
        return Demand(faults=(_advice("mcpwire.parse-error", -32700),),
                      why=("mcpwire: a body that is not UTF-8 is not JSON (RFC 8259), -32700",))
    if not parsed:
        return Demand(faults=(_fault("jsonrpc.error-member", statuses=None,
                                     advice=_advice("mcpwire.parse-error", -32700)),), id=NULL,
                      why=("JSON-RPC 2.0 section 5.1: not JSON is an error (-32700) with a null id",))
    if isinstance(message, list):  # a batch: JSON-RPC 2.0 has them, revision 2026-07-28 does not say
        return Demand(faults=(_advice("mcpwire.no-batch", -32600),), why=("mcpwire: no batches",))
    if not isinstance(message, dict):
        return Demand(faults=(_fault("jsonrpc.error-member", statuses=None,
                                     advice=_advice("mcpwire.invalid-request", -32600)),), id=NULL,
                      why=("JSON-RPC 2.0 section 5: not a request object is an error (-32600) with a null id",))
    method = message.get("method")
    if "method" not in message:
        if ("result" in message) != ("error" in message) and valid_id(message.get("id")) \
                and message.get("jsonrpc") == "2.0" and _right_headers(headers, None, context):
            return Demand(silent=True, rule="mcpwire.posted-response",
                          why=("mcpwire: a posted response gets 202 and no body, or an HTTP error",))
        raise _Unclear("a message without a method")
    if "id" not in message:
        if isinstance(method, str):
            if _right_headers(headers, method, context) and _version_agrees(message, headers, context):
                return Demand(silent=True, rule="jsonrpc.notification",
                              why=("JSON-RPC 2.0 section 4.1: a notification is never answered (HTTP: 202, or an "
                                   "error with no id)",))
            raise _Unclear("a notification with headers the server may refuse")
        return Demand(faults=(_fault("jsonrpc.error-member", statuses=None,
                                     advice=_advice("mcpwire.invalid-request", -32600)),), id=NULL,
                      why=("JSON-RPC 2.0 section 4: method must be a string",))
    if set(message) - {"jsonrpc", "id", "method", "params"}:
        # JSON-RPC 2.0 defines no other member of a request and says nothing of one: a server may
        # ignore it or refuse the request as invalid.
        raise _Unclear("a member of the request JSON-RPC does not define")
    rpc_id = message["id"]
    id_rule = NULL if not _jsonrpc_id(rpc_id) else ECHO_OR_NULL
    envelope = []
    if message.get("jsonrpc") != "2.0":
        envelope.append(_advice("mcpwire.invalid-request", -32600))
    if not isinstance(method, str):
        envelope.append(_fault("jsonrpc.error-member", statuses=None, advice=_advice("mcpwire.invalid-request", -32600)))
    if not valid_id(rpc_id):
        envelope.append(_advice("mcpwire.invalid-request", -32600))
    params = message.get("params", {})
    if "params" in message and not isinstance(params, dict):
        # MCP params are an object (the required _meta is missing: -32602); JSON-RPC 2.0 section 4.2
        # lets params be an array, but a scalar or null makes the message an Invalid Request, and an
        # array is no valid MCP request either: -32600 is as right as -32602.
        envelope.append(_fault("mcp.meta-required", -32602, -32600, statuses=None,
                               advice=_advice("mcpwire.params-object", *((-32602,) if isinstance(params, list)
                                                                         else (-32602, -32600)))))
    if envelope:
        return Demand(faults=tuple(envelope), id=id_rule,
                      why=("JSON-RPC 2.0 section 4 and schema#requestid: the envelope",))
    assert isinstance(method, str) and isinstance(params, dict)
    faults = _header_faults(method, params, headers, context) + _meta_faults(params, context)
    if not within_bounds(rpc_id):
        faults.append(_advice("mcpwire.id-bounds", -32600))
    if method in PAGINATED and "cursor" in params and not isinstance(params["cursor"], str):
        faults.append(_fault("mcp.cursor", -32602, statuses=None, advice=_advice("mcpwire.error-status", -32602,
                                                                                 statuses=(400, 200))))
    if method not in METHODS:
        if method in ("initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe",
                      "roots/list", "sampling/createMessage", "elicitation/create"):
            raise _Unclear("a method of another revision")
        faults.append(_fault("mcp.method-not-found", -32601, statuses=None if context.stdio else (404,)))
    elif context.capabilities is not None and METHODS[method] is not None \
            and METHODS[method] not in context.capabilities:
        faults.append(_fault("mcp.method-not-found", -32601, statuses=None if context.stdio else (404,)))
    if faults and not context.stdio and method == "tools/call" \
            and isinstance(params.get("name"), str) and params["name"] in context.header_tools:
        faults.append(_advice("mcpwire.param-headers", -32020))  # its Mcp-Param-* headers may disagree with the arguments
    if faults and method in NAMED:  # it may need a capability the request does not declare: -32021 reports that
        faults.append(_advice("mcpwire.may-need-capability", -32021))
    if faults and valid_id(rpc_id) and isinstance(rpc_id, int) and abs(rpc_id) > 2**53 - 1:
        faults.append(_advice("mcpwire.id-limit", -32600))  # an id it cannot hold exactly may be refused
    if faults:
        return Demand(faults=tuple(faults), id=ECHO if not any(f.rule in ("mcpwire.id-bounds", "mcpwire.id-limit")
                                                               for f in faults) else ECHO_OR_NULL,
                      why=("schema#requestmetaobject, streamable-http#server-validation, basic#error-codes: the request "
                           f"breaks {', '.join(sorted({f.rule for f in faults}))}",))
    return Demand(id=ECHO, why=("a valid request: a result or an error, with its id",))


def _header_faults(method: str, params: dict[str, Any], headers: dict[str, list[str]], context: Context) -> list[Fault]:
    """Streamable HTTP, request metadata: the headers mirroring the body (all -32020, 400)."""
    if context.stdio:
        return []
    faults = []
    meta = params.get("_meta", {})
    body_version = meta.get(PV_KEY) if isinstance(meta, dict) else None
    versions = headers.get("mcp-protocol-version", [])
    if not versions:
        if context.initialize_era:
            raise _Unclear("no MCP-Protocol-Version to a server of earlier clients (it may take it for 2025-03-26)")
        faults.append(_fault("mcp.version-header-missing", -32020))
    elif len(versions) != 1:
        faults.append(_fault("mcp.header-mismatch", -32020))
    elif not isinstance(body_version, str):
        faults.append(_fault("mcp.header-mismatch", -32602, -32020))
    elif versions[0] != body_version:
        faults.append(_fault("mcp.version-mismatch", -32020))
        if body_version != VERSION and not body_version.startswith("20"):
            faults.append(_fault("mcp.version-unsupported", -32022))
    elif versions[0] != VERSION:
        if versions[0].startswith("20"):
            raise _Unclear("an initialize-era version names another dialect")
        faults.append(_fault("mcp.version-unsupported", -32022))
    methods = headers.get("mcp-method", [])
    if len(methods) != 1 or methods[0] != method:
        faults.append(_fault("mcp.header-mismatch", -32020))
    if method in NAMED:
        value = params.get(NAMED[method])
        names = headers.get("mcp-name", [])
        if not isinstance(value, str):  # a malformed request first: no Mcp-Name can match a name it lacks
            faults.append(_fault("mcp.malformed-params", -32602, -32020, statuses=None,
                                 advice=_advice("mcpwire.error-status", -32602, -32020, statuses=(400, 200))))
        elif any(n.startswith("=?base64?") for n in names):
            raise _Unclear("a base64 Mcp-Name")
        elif len(names) != 1 or names[0] != value.strip():
            faults.append(_fault("mcp.header-mismatch", -32020))
    return faults


def _meta_faults(params: dict[str, Any], context: Context) -> list[Fault]:
    """Schema $defs RequestMetaObject: a required field missing is -32602 and 400 (MUST; -32600
    too where _meta or clientCapabilities is not even an object, the request being no valid MCP
    request); an unknown log level -32602 (SHOULD); an unsupported version -32022 (MUST, stdio:
    on HTTP the header's check says it); the rest this project's -32602 (advice)."""
    meta = params.get("_meta", {})
    wrong_type = _advice("mcpwire.meta-rules", -32602)
    if not isinstance(meta, dict):
        return [_fault("mcp.meta-required", -32602, -32600, advice=wrong_type)]
    faults = []
    if any(not KEY.fullmatch(k) for k in meta):
        faults.append(wrong_type)
    if "progressToken" in meta and not valid_id(meta["progressToken"]):
        faults.append(wrong_type)
    if "io.modelcontextprotocol/logLevel" in meta and meta["io.modelcontextprotocol/logLevel"] not in LOG_LEVELS:
        faults.append(_fault("mcp.log-level", -32602, statuses=None, advice=wrong_type))
    version = meta.get(PV_KEY)
    if not isinstance(version, str):
        faults.append(_fault("mcp.meta-required", -32602, *(() if PV_KEY not in meta else (-32600,))))
    elif version != VERSION and context.stdio:
        if version.startswith("20"):
            raise _Unclear("an initialize-era version names another dialect")
        faults.append(_fault("mcp.version-unsupported", -32022, statuses=None))
    info = meta.get(INFO_KEY)
    if INFO_KEY in meta and not (isinstance(info, dict) and isinstance(info.get("name"), str)
                                 and isinstance(info.get("version"), str)):
        faults.append(wrong_type)
    if CAPS_KEY not in meta:
        faults.append(_fault("mcp.meta-required", -32602))
    elif not isinstance(meta[CAPS_KEY], dict):
        faults.append(_fault("mcp.meta-required", -32602, -32600, advice=wrong_type))
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


def _jsonrpc_id(value: Any) -> bool:
    """JSON-RPC 2.0 section 4: an id is a String, Number or Null (else the answer's id is null)."""
    return value is None or isinstance(value, (str, float)) or valid_id(value)


def _loopback_origin(origin: str) -> bool:
    return bool(re.fullmatch(r"https?://(localhost|127\.0\.0\.1|\[::1\])(:\d+)?", origin))


# -- judging ---------------------------------------------------------------------------------------------
def check(request: Request, reply: Reply, context: Context, expect: Demand | None = None) -> list[Problem]:
    """The problems with ``reply`` to ``request`` (empty: it conforms), judged by the one judge
    against what the request demands (``expect``, else :func:`expect_for`)."""
    return judge_answer(request, reply, expect or expect_for(request, context), stdio=context.stdio)

