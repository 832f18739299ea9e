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
header, duplicate JSON keys) makes it demand nothing past the rules every answer keeps. A target
of the initialize era is judged by :mod:`mcpwire_adapters.testing.fuzz.era_oracle` instead.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from mcpwire.types import META_KEY_PATTERN

from ..demand import Demand, Fault, judge_answer
from ..judge import ECHO, ECHO_OR_NULL, NULL, valid_id, within_bounds
from ..rawwire import BOM, CAPS_KEY, INFO_KEY, PV_KEY, VERSION, Reply, Request
from ..verdict import Problem
from .era_oracle import expect_era
from .reading import (Context, Unclear, accepts_both, advice, fault, header_values, is_jsonrpc_id, lenient_json,
                      loopback_origin, media_refusal, refusal, strict_json)

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


def expect_for(request: Request, context: Context) -> Demand:
    """What a conforming server answers to ``request`` (see the module docstring; an
    initialize-era target's: :func:`mcpwire_adapters.testing.fuzz.era_oracle.expect_era`)."""
    if context.revision != VERSION:
        return expect_era(request, context)
    try:
        demand = _expect(request, context)
    except Unclear as why:
        return Demand(why=(f"not settled by the specification: {why}",))
    if not context.stdio and demand.refusal is None and not accepts_both(request):
        return replace(demand, refusable=True)  # Accept is the client's rule: a server may refuse (4xx) or serve
    return demand


def _expect(request: Request, context: Context) -> Demand:
    headers = header_values(request)
    if not context.stdio:
        if request.method != "POST":
            rule_id = "mcp.get-delete-405" if request.method in ("GET", "DELETE") and not context.initialize_era \
                else "mcpwire.post-only"
            return refusal(rule_id, 405, "streamable-http: POST only, else 405")
        origins = headers.get("origin", [])
        if origins and context.loopback and not all(loopback_origin(o) for o in origins):
            return refusal("mcp.origin", 403, "streamable-http: a foreign Origin is refused with 403")
        refused = media_refusal(headers)
        if refused is not None:
            return refused
    if context.stdio and not request.body.strip():
        raise Unclear("a blank line")
    if context.stdio and request.body.startswith(BOM):
        raise Unclear("a byte order mark on a stdio line")
    parsed, message = strict_json(request.body)
    if not parsed and lenient_json(request.body):
        # Not UTF-8, so not JSON (RFC 8259); but read with the bad bytes replaced it is, and RFC 8259
        # leaves what a receiver does with ill-formed text open: an id read that way is no fault.
        return Demand(faults=(advice("mcpwire.parse-error", -32700),),
                      why=("mcpwire: a body that is not UTF-8 is not JSON (RFC 8259), -32700",))
    if not parsed:
        return Demand(faults=(fault("jsonrpc.error-member", statuses=None,
                                     advice=advice("mcpwire.parse-error", -32700)),), id=NULL,
                      why=("JSON-RPC 2.0 section 5.1: not JSON is an error (-32700) with a null id",))
    if isinstance(message, list):  # a batch: JSON-RPC 2.0 has them, revision 2026-07-28 does not say
        return Demand(faults=(advice("mcpwire.no-batch", -32600),), why=("mcpwire: no batches",))
    if not isinstance(message, dict):
        return Demand(faults=(fault("jsonrpc.error-member", statuses=None,
                                     advice=advice("mcpwire.invalid-request", -32600)),), id=NULL,
                      why=("JSON-RPC 2.0 section 5: not a request object is an error (-32600) with a null id",))
    method = message.get("method")
    if "method" not in message:
        if ("result" in message) != ("error" in message) and valid_id(message.get("id")) \
                and message.get("jsonrpc") == "2.0" and _rightheader_values(headers, None, context):
            return Demand(silent=True, rule="mcpwire.posted-response",
                          why=("mcpwire: a posted response gets 202 and no body, or an HTTP error",))
        raise Unclear("a message without a method")
    if "id" not in message:
        if isinstance(method, str):
            if _rightheader_values(headers, method, context) and _version_agrees(message, headers, context):
                return Demand(silent=True, rule="jsonrpc.notification",
                              why=("JSON-RPC 2.0 section 4.1: a notification is never answered (HTTP: 202, or an "
                                   "error with no id)",))
            raise Unclear("a notification with headers the server may refuse")
        return Demand(faults=(fault("jsonrpc.error-member", statuses=None,
                                     advice=advice("mcpwire.invalid-request", -32600)),), id=NULL,
                      why=("JSON-RPC 2.0 section 4: method must be a string",))
    if set(message) - {"jsonrpc", "id", "method", "params"}:
        # JSON-RPC 2.0 defines no other member of a request and says nothing of one: a server may
        # ignore it or refuse the request as invalid.
        raise Unclear("a member of the request JSON-RPC does not define")
    rpc_id = message["id"]
    id_rule = NULL if not is_jsonrpc_id(rpc_id) else ECHO_OR_NULL
    envelope = []
    if message.get("jsonrpc") != "2.0":
        envelope.append(advice("mcpwire.invalid-request", -32600))
    if not isinstance(method, str):
        envelope.append(fault("jsonrpc.error-member", statuses=None, advice=advice("mcpwire.invalid-request", -32600)))
    if not valid_id(rpc_id):
        envelope.append(advice("mcpwire.invalid-request", -32600))
    params = message.get("params", {})
    if "params" in message and not isinstance(params, dict):
        # MCP params are an object (the required _meta is missing: -32602); JSON-RPC 2.0 section 4.2
        # lets params be an array, but a scalar or null makes the message an Invalid Request, and an
        # array is no valid MCP request either: -32600 is as right as -32602.
        envelope.append(fault("mcp.meta-required", -32602, -32600, statuses=None,
                               advice=advice("mcpwire.params-object", *((-32602,) if isinstance(params, list)
                                                                         else (-32602, -32600)))))
    if envelope:
        return Demand(faults=tuple(envelope), id=id_rule,
                      why=("JSON-RPC 2.0 section 4 and schema#requestid: the envelope",))
    assert isinstance(method, str) and isinstance(params, dict)
    faults = _header_faults(method, params, headers, context) + _meta_faults(params, context)
    if not within_bounds(rpc_id):
        faults.append(advice("mcpwire.id-bounds", -32600))
    if method in PAGINATED and "cursor" in params and not isinstance(params["cursor"], str):
        faults.append(fault("mcp.cursor", -32602, statuses=None, advice=advice("mcpwire.error-status", -32602,
                                                                                 statuses=(400, 200))))
    if method not in METHODS:
        if method in ("initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe",
                      "roots/list", "sampling/createMessage", "elicitation/create"):
            raise Unclear("a method of another revision")
        faults.append(fault("mcp.method-not-found", -32601, statuses=None if context.stdio else (404,)))
    elif context.capabilities is not None and METHODS[method] is not None \
            and METHODS[method] not in context.capabilities:
        faults.append(fault("mcp.method-not-found", -32601, statuses=None if context.stdio else (404,)))
    if faults and not context.stdio and method == "tools/call" \
            and isinstance(params.get("name"), str) and params["name"] in context.header_tools:
        faults.append(advice("mcpwire.param-headers", -32020))  # its Mcp-Param-* headers may disagree with the arguments
    if faults and method in NAMED:  # it may need a capability the request does not declare: -32021 reports that
        faults.append(advice("mcpwire.may-need-capability", -32021))
    if faults and valid_id(rpc_id) and isinstance(rpc_id, int) and abs(rpc_id) > 2**53 - 1:
        faults.append(advice("mcpwire.id-limit", -32600))  # an id it cannot hold exactly may be refused
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
            raise Unclear("no MCP-Protocol-Version to a server of earlier clients (it may take it for 2025-03-26)")
        faults.append(fault("mcp.version-header-missing", -32020))
    elif len(versions) != 1:
        faults.append(fault("mcp.header-mismatch", -32020))
    elif not isinstance(body_version, str):
        faults.append(fault("mcp.header-mismatch", -32602, -32020))
    elif versions[0] != body_version:
        faults.append(fault("mcp.version-mismatch", -32020))
        if body_version != VERSION and not body_version.startswith("20"):
            faults.append(fault("mcp.version-unsupported", -32022))
    elif versions[0] != VERSION:
        if versions[0].startswith("20"):
            raise Unclear("an initialize-era version names another dialect")
        faults.append(fault("mcp.version-unsupported", -32022))
    methods = headers.get("mcp-method", [])
    if len(methods) != 1 or methods[0] != method:
        faults.append(fault("mcp.header-mismatch", -32020))
    if method in NAMED:
        value = params.get(NAMED[method])
        names = headers.get("mcp-name", [])
        if not isinstance(value, str):  # a malformed request first: no Mcp-Name can match a name it lacks
            faults.append(fault("mcp.malformed-params", -32602, -32020, statuses=None,
                                 advice=advice("mcpwire.error-status", -32602, -32020, statuses=(400, 200))))
        elif any(n.startswith("=?base64?") for n in names):
            raise Unclear("a base64 Mcp-Name")
        elif len(names) != 1 or names[0] != value.strip():
            faults.append(fault("mcp.header-mismatch", -32020))
    return faults


def _meta_faults(params: dict[str, Any], context: Context) -> list[Fault]:
    """Schema $defs RequestMetaObject: a required field missing is -32602 and 400 (MUST; -32600
    too where _meta or clientCapabilities is not even an object, the request being no valid MCP
    request); an unknown log level -32602 (SHOULD); an unsupported version -32022 (MUST, stdio:
    on HTTP the header's check says it); the rest this project's -32602 (advice)."""
    meta = params.get("_meta", {})
    wrong_type = advice("mcpwire.meta-rules", -32602)
    if not isinstance(meta, dict):
        return [fault("mcp.meta-required", -32602, -32600, advice=wrong_type)]
    faults = []
    if any(not KEY.fullmatch(k) for k in meta):
        faults.append(wrong_type)
    if "progressToken" in meta and not valid_id(meta["progressToken"]):
        faults.append(wrong_type)
    if "io.modelcontextprotocol/logLevel" in meta and meta["io.modelcontextprotocol/logLevel"] not in LOG_LEVELS:
        faults.append(fault("mcp.log-level", -32602, statuses=None, advice=wrong_type))
    version = meta.get(PV_KEY)
    if not isinstance(version, str):
        faults.append(fault("mcp.meta-required", -32602, *(() if PV_KEY not in meta else (-32600,))))
    elif version != VERSION and context.stdio:
        if version.startswith("20"):
            raise Unclear("an initialize-era version names another dialect")
        faults.append(fault("mcp.version-unsupported", -32022, statuses=None))
    info = meta.get(INFO_KEY)
    if INFO_KEY in meta and not (isinstance(info, dict) and isinstance(info.get("name"), str)
                                 and isinstance(info.get("version"), str)):
        faults.append(wrong_type)
    if CAPS_KEY not in meta:
        faults.append(fault("mcp.meta-required", -32602))
    elif not isinstance(meta[CAPS_KEY], dict):
        faults.append(fault("mcp.meta-required", -32602, -32600, advice=wrong_type))
    return faults


def _rightheader_values(headers: dict[str, list[str]], method: str | None, context: Context) -> bool:
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


# -- judging ---------------------------------------------------------------------------------------------
def check(request: Request, reply: Reply, context: Context, expect: Demand | None = None) -> list[Problem]:
    """The problems with ``reply`` to ``request`` (empty: it conforms), judged by the one judge
    against what the request demands (``expect``, else :func:`expect_for`)."""
    return judge_answer(request, reply, expect or expect_for(request, context), stdio=context.stdio,
                        revision=context.revision)

