"""The fuzzer's oracle: what a conforming server must answer to one request, read from the
request as sent (so a replayed case is judged exactly as the run that found it). This module
owns :func:`expect_for` (the :class:`~mcpwire_adapters.testing.judge.Demand` of a request) and
:class:`Context` (what the oracle knows of the target); the answer is then judged against it by
the one judge, :mod:`mcpwire_adapters.testing.judge` (:func:`check` here;
:func:`~mcpwire_adapters.testing.judge.judge_step` for a step of a case), with the rules every
answer keeps whatever was sent.

Where the specification leaves no doubt, the demand names the error itself: the order in which a
Streamable HTTP server refuses a request (405, a foreign Origin a 4xx, 415, 406, then -32700 with
a null id: streamable-http#server-validation, docs/errors.md) and the envelope rules of JSON-RPC
2.0 and schema#requestid (-32600 with a null id for an id that is not one; -32602 for params
that are not an object). Past the envelope a request can break several rules at once (a missing
header, a bad ``_meta``, an unknown method) and the specification does not say which one a
server reports first, so the oracle collects every rule the request breaks and accepts any of
their codes: it never says a server is wrong for naming a different one of the request's real
faults. A rule the oracle cannot tell (a repeated Content-Type, a wildcard Accept, an
initialize-era version in the header, duplicate JSON keys) makes it demand nothing past the
rules every answer keeps.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from mcpwire.types import META_KEY_PATTERN

from ...errors import McpwireAdapterError
from ..judge import ECHO, ECHO_OR_NULL, NULL, STATUS_OF, Demand, judge_answer, valid_id
from ..rawwire import BOM, CAPS_KEY, INFO_KEY, PV_KEY, VERSION, Reply, Request, media_type

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
# A notification or a posted response: 202 with no body when the server accepts it, an HTTP error
# when it cannot (streamable-http#sending-messages-to-the-server), never an answer with an id.
ACCEPTED_OR_REFUSED = frozenset({202, *range(400, 500)})


@dataclass(frozen=True)
class Context:
    """What the oracle knows of the target: HTTP or stdio, a loopback URL (so a foreign Origin
    must be refused: DNS rebinding protection), its advertised capabilities (None: unknown), and the tools
    whose arguments travel in ``Mcp-Param-*`` headers (server/tools#x-mcp-header) too."""

    stdio: bool = False
    loopback: bool = True
    capabilities: frozenset[str] | None = None
    header_tools: frozenset[str] = frozenset()


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
        return _expect(request, context)
    except _Unclear as why:
        return Demand(why=(f"not settled by the specification: {why}",))


def _expect(request: Request, context: Context) -> Demand:
    headers = _headers(request)
    if not context.stdio:
        if request.method != "POST":
            return Demand(statuses=frozenset({405}), why=("streamable-http#message-flow: POST only, else 405",))
        origins = headers.get("origin", [])
        if origins and context.loopback and not all(_loopback_origin(o) for o in origins):
            return Demand(statuses=frozenset(range(400, 500)), why=("streamable-http#server-validation: a foreign Origin is refused",))
        types = headers.get("content-type", [])
        if len(types) != 1 and types:
            raise _Unclear("a repeated Content-Type")
        if not types or media_type(types[0]) != "application/json":
            return Demand(statuses=frozenset({415}), codes=None, why=("streamable-http#server-validation: Content-Type application/json, else 415",))
        accepts = [media_type(a) for value in headers.get("accept", []) for a in value.split(",")]
        if any("*" in a for a in accepts):
            raise _Unclear("a wildcard Accept")
        if "application/json" not in accepts or "text/event-stream" not in accepts:
            return Demand(statuses=frozenset({406}), why=("streamable-http#server-validation: Accept lists both types, else 406",))
    if context.stdio and not request.body.strip():
        raise _Unclear("a blank line")
    if context.stdio and request.body.startswith(BOM):
        raise _Unclear("a byte order mark on a stdio line")
    parsed, message = _strict_json(request.body)
    if not parsed:
        return Demand(codes=frozenset({-32700}), statuses=frozenset({400}), id=NULL,
                      why=("JSON-RPC 2.0 section 5.1: not JSON is -32700 with a null id",))
    if not isinstance(message, dict):
        return Demand(codes=frozenset({-32600}), statuses=frozenset({400}), id=NULL,
                      why=("basic#messages: a message is one object, no batch: -32600",))
    method = message.get("method")
    if "method" not in message:
        if ("result" in message) != ("error" in message) and valid_id(message.get("id")) \
                and message.get("jsonrpc") == "2.0" and _right_headers(headers, None, context):
            return Demand(silent=True, statuses=ACCEPTED_OR_REFUSED,
                          why=("streamable-http#message-flow: a posted response gets 202 and no body, or an HTTP error",))
        raise _Unclear("a message without a method")
    if "id" not in message:
        if isinstance(method, str):
            if _right_headers(headers, method, context) and _version_agrees(message, headers, context):
                return Demand(silent=True, statuses=ACCEPTED_OR_REFUSED,
                              why=("JSON-RPC 2.0 section 4.1: a notification is never answered (HTTP: 202, or an error with no id)",))
            raise _Unclear("a notification with headers the server may refuse")
        return Demand(codes=frozenset({-32600}), statuses=frozenset({400}), id=NULL,
                      why=("JSON-RPC 2.0 section 4: method must be a string",))
    if set(message) - {"jsonrpc", "id", "method", "params"}:
        # JSON-RPC 2.0 defines no other member of a request and says nothing of one: a server may
        # ignore it or refuse the request as invalid.
        raise _Unclear("a member of the request JSON-RPC does not define")
    id_rule = ECHO_OR_NULL if valid_id(message["id"]) else NULL
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
        return _error(faults, ECHO, "schema#requestmetaobject, streamable-http#server-validation, basic#error-codes: the request breaks these rules")
    return Demand(id=ECHO, why=("a valid request: a result or an error, with its id",))


def _error(codes: set[int], id_rule: str, why: str) -> Demand:
    statuses = frozenset(s for c in codes for s in STATUS_OF.get(c, ()))
    return Demand(codes=frozenset(codes), statuses=statuses or None, id=id_rule,
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


# -- judging ---------------------------------------------------------------------------------------------
def check(request: Request, reply: Reply, context: Context, expect: Demand | None = None) -> list[str]:
    """The problems with ``reply`` to ``request`` (empty: it conforms), judged by the one judge
    against what the request demands (``expect``, else :func:`expect_for`)."""
    return judge_answer(request, reply, expect or expect_for(request, context), stdio=context.stdio)

