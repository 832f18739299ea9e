"""The fuzzer's oracle for a target of the initialize era (2025-11-25, 2025-06-18, 2025-03-26,
and 2024-11-05 over stdio or its HTTP+SSE transport): :func:`expect_era`, what a conforming
server answers to one request sent on the session (Streamable HTTP), the initialized connection
(stdio) or the SSE stream's endpoint (HTTP+SSE) the run opened, read from the request as sent,
each fault naming the row of the revision fuzzed (``era.session-ended@2025-06-18``).

What the text of those revisions settles, and so is demanded: a foreign Origin refused (403 in
2025-11-25; refused in the older ones); a request naming a session the server does not hold is
404 (MUST), one without the session header 400 (SHOULD); from 2025-06-18, an invalid or
unsupported ``MCP-Protocol-Version`` is 400; a notification or a response is 202 with no body,
or an HTTP error (on stdio: nothing); a request is answered, with its id (a parse error or an
invalid request with a null one); in 2025-03-26 a batch of valid messages gets a response for
each of its requests. What it leaves open (another known revision in the header, a second
initialize, a batch after 2025-03-26, the code of an unknown method or of bad params) demands
nothing, or only this project's advice. Over HTTP+SSE only the Origin (refused) and the
Content-Type (this project's advice) of a POST are read, and a notification or a posted response
gets no answer on the stream (JSON-RPC 2.0's rule): how the POST itself is answered is
:func:`mcpwire_adapters.testing.fuzz.legacy.judge_legacy`'s to read.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..demand import Demand, Fault
from ..era_rules import HEADER_REVISIONS, LEGACY, SESSION_REVISIONS, era_rule
from ..judge import ECHO, ECHO_OR_NULL, NULL, valid_id, within_bounds
from ..rawwire import BOM, VERSION, Request
from .reading import (Context, Unclear, accepts_both, fault, header_values, is_jsonrpc_id, lenient_json,
                      loopback_origin, media_refusal, refusal, strict_json)

__all__ = ["ERA_METHODS", "expect_era"]

# The requests a client sends in the initialize era (the schemas' ClientRequest), and the
# capability each needs (None: none).
ERA_METHODS: dict[str, str | None] = {
    "ping": None, "initialize": None, "completion/complete": "completions", "logging/setLevel": "logging",
    "prompts/get": "prompts", "prompts/list": "prompts", "resources/list": "resources",
    "resources/templates/list": "resources", "resources/read": "resources", "resources/subscribe": "resources",
    "resources/unsubscribe": "resources", "tools/call": "tools", "tools/list": "tools", "tasks/get": "tasks",
    "tasks/result": "tasks", "tasks/list": "tasks", "tasks/cancel": "tasks",
}
_KNOWN = (VERSION, *SESSION_REVISIONS, LEGACY)


def _advice(rule_id: str, *codes: int) -> Fault:
    """This project's answer on an initialize-era session: the code, whatever the HTTP status
    (those revisions tie no status to an error)."""
    return Fault(rule_id, frozenset(codes))


def expect_era(request: Request, context: Context) -> Demand:
    """What a conforming server of ``context.revision`` answers to ``request`` (see the module
    docstring)."""
    try:
        demand = _expect(request, context)
    except Unclear as why:
        return Demand(why=(f"not settled by the specification: {why}",))
    if not context.stdio and not context.http_sse and demand.refusal is None and not accepts_both(request):
        return replace(demand, refusable=True)  # Accept is the client's rule: a server may refuse (4xx) or serve
    return demand


def _silent_rule(context: Context) -> str:
    """The rule a response to a notification (or to a posted response) breaks."""
    if context.http_sse:
        return "jsonrpc.notification"  # the POST's status is not the answer: the stream carries none
    if not context.stdio:
        return era_rule("era.notification-202", context.revision)
    if context.revision in SESSION_REVISIONS:
        return era_rule("era.notification-silent", context.revision)
    return "jsonrpc.notification"


def _headers(request: Request, context: Context) -> Demand | None:
    """A refusal the headers call for (Streamable HTTP of the revision), or None."""
    revision, headers = context.revision, header_values(request)
    if request.method != "POST":
        raise Unclear("an HTTP method other than POST")
    origins = headers.get("origin", [])
    if origins and context.loopback and not all(loopback_origin(o) for o in origins):
        statuses = frozenset({403}) if revision == "2025-11-25" else frozenset(range(400, 500))
        return refusal(era_rule("era.origin", revision), statuses, "transports: a foreign Origin is refused")
    refused = media_refusal(headers)
    if refused is not None:
        return refused
    sessions = headers.get("mcp-session-id", [])
    if context.session_id is not None:
        if not sessions:
            if not _is_request(request):  # the sentence names requests; a notification or a response may be taken
                raise Unclear("a notification or response without the session id")
            return refusal(era_rule("era.session-required", revision), 400,
                           "transports: a request without the session id is 400")
        if len(sessions) > 1:
            raise Unclear("a repeated Mcp-Session-Id")
        if sessions[0] != context.session_id:
            return refusal(era_rule("era.session-ended", revision), 404,
                           "transports: a session the server does not hold is 404")
    elif sessions:
        raise Unclear("a session id sent to a server that issued none")
    versions = headers.get("mcp-protocol-version", [])
    if revision in HEADER_REVISIONS:
        if len(versions) != 1:
            raise Unclear("no MCP-Protocol-Version, or several: the server may rely on the negotiated revision")
        if versions[0] != revision:
            if versions[0] in _KNOWN:
                raise Unclear("another revision the server may support in MCP-Protocol-Version")
            return refusal(era_rule("era.version-header", revision), 400,
                           "transports: an invalid or unsupported MCP-Protocol-Version is 400")
    elif versions:
        raise Unclear("MCP-Protocol-Version, which this revision does not define")
    return None


def _is_request(request: Request) -> bool:
    """Whether the body is one JSON-RPC request (an object with a method and an id)."""
    try:
        parsed, message = strict_json(request.body)
    except Unclear:
        return False
    return parsed and isinstance(message, dict) and "method" in message and "id" in message


def _batch(message: list[Any], context: Context) -> Demand:
    """2025-03-26: a batch of valid requests and notifications gets a response for each request
    (none when it holds only notifications); later revisions have no batch (advice: -32600)."""
    if not message:  # JSON-RPC 2.0: an empty array is one error response
        return Demand(faults=(fault("jsonrpc.error-member", statuses=None,
                                    advice=_advice("mcpwire.invalid-request", -32600)),), id=NULL,
                      why=("JSON-RPC 2.0 section 6: an empty batch is answered with one error",))
    if context.revision != "2025-03-26":
        return Demand(faults=(_advice("mcpwire.era-no-batch", -32600),),
                      why=("mcpwire: a batch, which this revision does not have, is refused",))
    ids = []
    for item in message:
        if not (isinstance(item, dict) and item.get("jsonrpc") == "2.0" and isinstance(item.get("method"), str)
                and set(item) <= {"jsonrpc", "id", "method", "params"} and isinstance(item.get("params", {}), dict)):
            raise Unclear("a batch holding something other than valid requests and notifications")
        if item["method"] == "initialize":
            raise Unclear("initialize in a batch")
        if "id" in item:
            if not valid_id(item["id"]) or not within_bounds(item["id"]):
                raise Unclear("a batch holding an id the server may refuse")
            ids.append(item["id"])
    if len({repr(i) for i in ids}) != len(ids):
        raise Unclear("a batch repeating an id")
    if not ids:
        return Demand(silent=True, rule=_silent_rule(context), why=("a batch of notifications gets no response",))
    return Demand(batch=tuple(ids), rule=era_rule("era.batch-receive", context.revision),
                  why=("basic#batching (2025-03-26): a batch is received, each request answered",))


def _expect(request: Request, context: Context) -> Demand:
    if not context.stdio:
        refused = _headers(request, context)
        if refused is not None:
            return refused
    if context.stdio and not request.body.strip():
        raise Unclear("a blank line")
    if request.body.startswith(BOM):
        raise Unclear("a byte order mark")
    parsed, message = strict_json(request.body)
    if not parsed and lenient_json(request.body):
        return Demand(faults=(_advice("mcpwire.parse-error", -32700),),
                      why=("mcpwire: a body that is not UTF-8 is not JSON (RFC 8259), -32700",))
    if not parsed:
        return Demand(faults=(fault("jsonrpc.error-member", statuses=None, advice=_advice("mcpwire.parse-error", -32700)),),
                      id=NULL, why=("JSON-RPC 2.0 section 5.1: not JSON is an error (-32700) with a null id",))
    if isinstance(message, list):
        return _batch(message, context)
    if not isinstance(message, dict):
        return Demand(faults=(fault("jsonrpc.error-member", statuses=None,
                                    advice=_advice("mcpwire.invalid-request", -32600)),), id=NULL,
                      why=("JSON-RPC 2.0 section 5: not a request object is an error (-32600) with a null id",))
    method = message.get("method")
    if "method" not in message:
        if ("result" in message) != ("error" in message) and valid_id(message.get("id")) \
                and message.get("jsonrpc") == "2.0":
            rule_id = "mcpwire.posted-response" if context.stdio or context.http_sse else _silent_rule(context)
            return Demand(silent=True, rule=rule_id, why=("a posted response gets no answer",))
        raise Unclear("a message without a method")
    if set(message) - {"jsonrpc", "id", "method", "params"}:
        raise Unclear("a member of the request JSON-RPC does not define")
    if "id" not in message:
        if isinstance(method, str) and message.get("jsonrpc") == "2.0":
            return Demand(silent=True, rule=_silent_rule(context),
                          why=("JSON-RPC 2.0 section 4.1 and basic#notifications: a notification gets no response",))
        raise Unclear("a notification that is not well formed")
    rpc_id = message["id"]
    id_rule = NULL if not is_jsonrpc_id(rpc_id) else ECHO_OR_NULL
    if message.get("jsonrpc") != "2.0" or not valid_id(rpc_id):
        return Demand(faults=(_advice("mcpwire.invalid-request", -32600),), id=id_rule,
                      why=("JSON-RPC 2.0 section 4 and the schema's RequestId: the envelope",))
    if not isinstance(method, str):
        return Demand(faults=(fault("jsonrpc.error-member", statuses=None,
                                    advice=_advice("mcpwire.invalid-request", -32600)),), id=id_rule,
                      why=("JSON-RPC 2.0 section 4: method must be a string",))
    if "params" in message and not isinstance(message["params"], dict):
        return Demand(faults=(_advice("mcpwire.params-object", -32602, -32600),), id=ECHO_OR_NULL,
                      why=("the schema: params are an object",))
    if method == "initialize":
        raise Unclear("initialize on a connection already initialized")
    faults = []
    if not within_bounds(rpc_id):
        faults.append(_advice("mcpwire.id-bounds", -32600))
    needs = ERA_METHODS.get(method, "unknown")
    if needs == "unknown" or (needs is not None and context.capabilities is not None
                              and needs not in context.capabilities):
        faults.append(_advice("mcpwire.era-method-not-found", -32601))
    if faults and isinstance(rpc_id, int) and abs(rpc_id) > 2**53 - 1:
        faults.append(_advice("mcpwire.id-limit", -32600))  # an id it cannot hold exactly may be refused
    if faults:
        return Demand(faults=tuple(faults), id=ECHO if within_bounds(rpc_id) and not any(
            f.rule == "mcpwire.id-limit" for f in faults) else ECHO_OR_NULL,
                      why=("JSON-RPC 2.0: a request is answered, with its id",))
    return Demand(id=ECHO, why=("a valid request: a result or an error, with its id",))
