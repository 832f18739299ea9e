"""The one judge of the tools that test other servers: whether a server's answer conforms, and
how much each rule weighs.

:data:`RULES` is the table of every rule the probe and the fuzzer hold a server to, each row a
:class:`~mcpwire_adapters.testing.verdict.Rule`: its strength, read from the official text it
quotes (MUST, MUST NOT, REQUIRED, SHALL: a failure; SHOULD, RECOMMENDED: a warning; anything
else, this project's own stricter conventions among them: advice, shown with ``--strict``), the
sentence and the page. A check never fails a server for behaviour the official text allows:
where a rule is this project's choice, its row is advice.

The rows of the initialize-era revisions (2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05) are
:data:`mcpwire_adapters.testing.era_rules.ERA_RULES`, one per revision that states the rule, merged
in here. The rules a conforming answer keeps are written here, each once, as a function returning the
problems it finds (none: the answer keeps it), each a
:class:`~mcpwire_adapters.testing.verdict.Problem` naming its rule: the HTTP status
(:func:`status_rule`), the ``Allow`` header of a 405, no body at all or no response (a
notification is never answered), a response's kind (a result, one of the expected error codes,
any error), its id (:func:`id_rule`: the request's, exactly, as a JSON token of the same type and
value, or null where it may be), every message JSON-RPC 2.0 a server may send
(:func:`jsonrpc_fault`), the HTTP status each error code goes with (:data:`STATUS_OF`), a result
of its method's schema type (:func:`schema_rule`), and what a fuzz sequence knows beyond its
request (:func:`sequence_rules`). The shapes of particular results the probe looks into are in
:mod:`mcpwire_adapters.testing.shapes`.

Two expectations say which rules apply:

- :class:`Expect`, declared by a row of the probe's table, judged by :func:`judge`; a row may
  give several, strongest first (what the official text demands, then this project's stricter
  convention), each naming its rule.
- :class:`~mcpwire_adapters.testing.demand.Demand`, read from a request as sent by the fuzzer's
  oracle: the faults the request has, each with its rule and the answers that report it, judged
  in :mod:`mcpwire_adapters.testing.demand` (the fuzzer's half of the judge) with these rules.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

import msgspec

from mcpwire.types import (
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

from .era_rules import ERA_RULES, era_rule
from .rawwire import BOM, NOT_JSON, VERSION, Reply, Request
from .verdict import ADVICE, MUST, SHOULD, STRENGTHS, Problem, Rule

__all__ = [
    "ECHO", "ECHO_OR_NULL", "ECHO_RULES", "NULL", "RULES", "STATUS_OF", "Expect", "TargetFacts", "allow_rule", "cited",
    "code_rule", "empty_rule", "error_rule", "id_rule", "id_rules", "jsonrpc_fault", "judge", "listed", "problem", "refusal_rule",
    "result_rule", "rule", "same_id", "schema_rule", "status_of_code_rule", "status_rule", "unanswered_rule",
    "valid_id", "validity", "within_bounds",
]

# -- the rules: strength, source, the sentence, the page ----------------------------------------------
# Each page below is one of SPEC_ANCHORS' (tests/integration/test_docs.py): docs/probing.md lists these
# rules, links and all, and is held to that list.
_SPEC = "https://modelcontextprotocol.io" + "/specification/"
_MCP = _SPEC + "2026-07-28/"
_HTTP = _MCP + "basic/transports/streamable-http"
_RPC, _RFC9110 = "https://www.jsonrpc.org/specification", "https://www.rfc-editor.org/rfc/rfc9110"
_M26, _J, _US = "MCP 2026-07-28", "JSON-RPC 2.0", "mcpwire"
RULES: Final[dict[str, Rule]] = {r.id: r for r in (
    # JSON-RPC 2.0, which every MCP message follows
    Rule("jsonrpc.reply", MUST, _J, "When a rpc call is made, the Server MUST reply with a Response, except for in "
         "the case of Notifications.", _RPC + "#response_object"),
    Rule("jsonrpc.response-id", MUST, _J, "id: It MUST be the same as the value of the id member in the Request "
         "Object. If there was an error in detecting the id in the Request object (e.g. Parse error/Invalid "
         "Request), it MUST be Null.", _RPC + "#response_object"),
    Rule("jsonrpc.response-members", MUST, _J, "Either the result member or error member MUST be included, but both "
         "members MUST NOT be included.", _RPC + "#response_object"),
    Rule("jsonrpc.version", MUST, _J, 'jsonrpc: A String specifying the version of the JSON-RPC protocol. MUST be '
         'exactly "2.0".', _RPC + "#response_object"),
    Rule("jsonrpc.error-member", MUST, _J, "error: This member is REQUIRED on error. This member MUST NOT exist if "
         "there was no error triggered during invocation.", _RPC + "#response_object"),
    Rule("jsonrpc.error-object", MUST, _J, "code: A Number that indicates the error type that occurred. This MUST be "
         "an integer.", _RPC + "#error_object"),
    Rule("jsonrpc.notification", MUST, _J, "The Server MUST NOT reply to a Notification, including those that are "
         "within a batch request.", _RPC + "#notification"),
    Rule("jsonrpc.result-by-method", MUST, _J, "result: This member is REQUIRED on success. The value of this member "
         "is determined by the method invoked on the Server. (The MCP schema gives each method's result type.)",
         _RPC + "#response_object"),
    # MCP 2026-07-28
    Rule("mcp.jsonrpc", MUST, _M26, "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0 "
         "specification.", _MCP + "basic#messages"),
    Rule("mcp.result-id", MUST, _M26, "Result responses MUST include the same ID as the request they correspond to.",
         _MCP + "basic#responses"),
    Rule("mcp.error-id", MUST, _M26, "Error responses MUST include the same ID as the request they correspond to "
         "(except in error cases where the ID could not be read due a malformed request).", _MCP + "basic#responses"),
    Rule("mcp.result-type", MUST, _M26, "The result MUST include a resultType field to indicate the type of the "
         "result.", _MCP + "basic#responses"),
    Rule("mcp.notification-silent", MUST, _M26, "The receiver MUST NOT send a response.", _MCP + "basic#messages"),
    Rule("mcp.notification-202", MUST, _M26, "If the server accepts it, the server MUST return HTTP status code 202 "
         "Accepted with no body.", _HTTP),
    Rule("mcp.notification-refused", MUST, _M26, "If the server cannot accept it, it MUST return an HTTP error status "
         "code (e.g., 400 Bad Request). The HTTP response body MAY comprise a JSON-RPC error response that has no "
         "id.", _HTTP),
    Rule("mcp.request-content-type", MUST, _M26, "If the body is a JSON-RPC request, the server MUST return either "
         "Content-Type: application/json (a single JSON object) or Content-Type: text/event-stream (an SSE response "
         "stream).", _HTTP),
    Rule("mcp.no-server-requests", MUST, _M26, "The server MUST NOT send independent JSON-RPC requests on this "
         "stream. (stdio: The server MUST NOT write JSON-RPC requests to stdout.)", _HTTP),
    Rule("mcp.meta-required", MUST, _M26, "A request missing any required field is malformed; the server MUST reject "
         "it with JSON-RPC error code -32602 (Invalid params). On HTTP, the response status MUST be 400 Bad "
         "Request.", _MCP + "schema#requestmetaobject"),
    Rule("mcp.missing-capability", MUST, _M26, "If processing a request requires a capability the client did not "
         "include in io.modelcontextprotocol/clientCapabilities, the server MUST return a "
         "MissingRequiredClientCapabilityError (-32021) whose data.requiredCapabilities lists the missing "
         "capabilities. On HTTP, the response status MUST be 400 Bad Request.",
         _MCP + "schema#missingrequiredclientcapabilityerror"),
    Rule("mcp.log-level", SHOULD, _M26, "If the io.modelcontextprotocol/logLevel value carried in a request's _meta "
         "is not a recognized log level, the server SHOULD reject that request with a standard JSON-RPC error: "
         "Invalid log level: -32602 (Invalid params)", _MCP + "server/utilities/logging"),
    Rule("mcp.version-header-missing", MUST, _M26, "A server that does not support such clients MUST reject a request "
         "without the header per Server Validation. (Such clients: those of revisions earlier than 2025-06-18, "
         "whose requests a server that supports them MAY treat as 2025-03-26.)", _HTTP + "#protocol-version-header"),
    Rule("mcp.version-mismatch", MUST, _M26, "If the values do not match, the server MUST reject the request with 400 "
         "Bad Request and a HeaderMismatch JSON-RPC error (see Server Validation).", _HTTP + "#protocol-version-header"),
    Rule("mcp.version-unsupported", MUST, _M26, "If the server does not implement the requested protocol version "
         "(whether the version is unknown to the server, or is a known version the server has chosen not to "
         "support), it MUST respond with 400 Bad Request and an UnsupportedProtocolVersionError listing its "
         "supported versions.", _HTTP + "#protocol-version-header"),
    Rule("mcp.method-not-found", MUST, _M26, "If the server does not implement the requested RPC method, it MUST "
         "respond with 404 Not Found and a JSON-RPC error with code -32601 (Method not found).",
         _HTTP + "#protocol-version-header"),
    Rule("mcp.header-mismatch", MUST, _M26, "When rejecting a request due to header validation failure, servers MUST "
         "return HTTP status 400 Bad Request and MUST include a JSON-RPC error response using the following error "
         "code: -32020 HeaderMismatch. (Validation failure conditions include: a required standard header "
         "(MCP-Protocol-Version, Mcp-Method, Mcp-Name) is missing; a header value does not match the corresponding "
         "request body value.)", _HTTP + "#server-validation"),
    Rule("mcp.param-header", MUST, _M26, "Servers MUST reject requests with a 400 Bad Request HTTP status and JSON-RPC "
         "error code -32020 (HeaderMismatch) if any validation fails.", _HTTP + "#server-behavior-for-custom-headers"),
    Rule("mcp.origin", MUST, _M26, "If the Origin header is present and invalid, servers MUST respond with HTTP 403 "
         "Forbidden.", _HTTP),
    Rule("mcp.get-delete-405", SHOULD, _M26, "A server that supports only this revision and receives such traffic "
         "from an older client SHOULD respond as follows: HTTP GET or DELETE to the MCP endpoint: respond with 405 "
         "Method Not Allowed.", _HTTP + "#backward-compatibility"),
    Rule("mcp.discover", MUST, _M26, "server/discover lets a client query a server's supported protocol versions, "
         "capabilities, and identity before sending any other requests. Servers MUST implement it.",
         _MCP + "server/discover"),
    Rule("mcp.caching", MUST, _M26, 'Servers MUST include caching hints on results with resultType: "complete" '
         "returned by the following operations: server/discover, tools/list, prompts/list, resources/list, "
         "resources/templates/list", _MCP + "server/utilities/caching"),
    Rule("mcp.ttl", MUST, _M26, "Servers MUST provide a ttlMs value that is >= 0.", _MCP + "server/utilities/caching"),
    Rule("mcp.resource-not-found", MUST, _M26, "If the requested resource does not exist, servers MUST return a "
         "JSON-RPC error with code -32602 (Invalid Params).", _MCP + "server/resources#error-handling"),
    Rule("mcp.cursor", SHOULD, _M26, "Invalid cursors SHOULD result in an error with code -32602 (Invalid params).",
         _MCP + "server/utilities/pagination"),
    Rule("mcp.unknown-tool", ADVICE, _M26, "Protocol Errors indicate issues with the request structure itself that "
         "models are less likely to be able to fix: Unknown tool [...] They are returned as standard JSON-RPC "
         "errors (no requirement keyword: a tool result with isError is not a failure)", _MCP + "server/tools#error-handling"),
    Rule("mcp.malformed-params", ADVICE, _M26, "Protocol Errors indicate issues with the request structure itself "
         "[...]: Malformed requests (requests that fail to satisfy CallToolRequest schema) [...] They are returned as "
         "standard JSON-RPC errors (no requirement keyword, and no code named)", _MCP + "server/tools#error-handling"),
    Rule("mcp.input-required-methods", MUST, _M26, "Servers MUST NOT send InputRequiredResult responses on any other "
         "client requests. (Those that may: tools/call, prompts/get, resources/read.)",
         _MCP + "basic/patterns/mrtr#multi-round-trip-requests"),
    Rule("mcp.listen-ack", MUST, _M26, "The server MUST send notifications/subscriptions/acknowledged as the first "
         "message carrying the subscription's ID in _meta under io.modelcontextprotocol/subscriptionId, and MUST NOT "
         "send any notification on the subscription before it.", _MCP + "basic/patterns/subscriptions"),
    Rule("mcp.cancelled-silent", MUST, _M26, "Servers SHOULD stop work on a cancelled request as soon as practical "
         "and MUST NOT send any further messages for it.", _MCP + "basic/transports/stdio"),
    # RFC 9110
    Rule("http.allow-on-405", MUST, "RFC 9110", "The origin server MUST generate an Allow header field in a 405 "
         "response containing a list of the target resource's currently supported methods.",
         _RFC9110 + "#section-15.5.6"),
    # This project's own conventions, stricter than the official text: advice (--strict)
    Rule("mcpwire.parse-error", ADVICE, _US, "A body that is not JSON is answered -32700 (JSON-RPC 2.0 names it Parse "
         "error) with HTTP 400."),
    Rule("mcpwire.invalid-request", ADVICE, _US, "A message that is not a valid request object (not an object, "
         "jsonrpc not \"2.0\", a method or an id of the wrong type) is answered -32600 (JSON-RPC 2.0 names it "
         "Invalid Request) with HTTP 400 and a null id."),
    Rule("mcpwire.no-batch", ADVICE, _US, "A batch (a JSON array) is refused with -32600: revision 2026-07-28 carries "
         "one message a body or line (the specification says nothing of a batch a server receives)."),
    Rule("mcpwire.id-bounds", ADVICE, _US, "A string id over 256 bytes or an integer outside int64 is refused with "
         "-32600 and a null id. The schema's RequestId is any string or integer: a server serving them, the id "
         "echoed exactly, is right."),
    Rule("mcpwire.params-object", ADVICE, _US, "Params that are not an object are -32602 (Invalid params) with the id "
         "echoed; -32600 (the message is not a valid MCP request either) and a null id are allowed."),
    Rule("mcpwire.meta-rules", ADVICE, _US, "A _meta of the wrong shape (a key outside the key syntax, a "
         "progressToken, clientInfo or clientCapabilities of the wrong type) is -32602 with HTTP 400; the "
         "specification does not say what a server does with one."),
    Rule("mcpwire.client-info-optional", ADVICE, _US, "A request without clientInfo is served: only protocolVersion "
         "and clientCapabilities are required (no text says a server must not refuse it)."),
    Rule("mcpwire.error-status", ADVICE, _US, "The HTTP status of an error sent as JSON: -32700 and -32600 400, -32602 "
         "400 (or 200 once executing), -32603 500 (docs/errors.md); a result 200."),
    Rule("mcpwire.posted-response", ADVICE, _US, "A JSON-RPC response posted to the server is not answered: 202, or an "
         "HTTP error with no response that has an id (a client must not send one; nothing says what a server does)."),
    Rule("mcpwire.content-type", ADVICE, _US, "A Content-Type other than application/json is refused with 415 (RFC "
         "9110's Unsupported Media Type); the specification names no status."),
    Rule("mcpwire.accept", ADVICE, _US, "An Accept that lists neither application/json nor text/event-stream is "
         "refused with 406 (RFC 9110's Not Acceptable); without Accept (any type, by RFC 9110), or with only one of "
         "the two, a request may be served or refused with a 4xx. The specification puts the Accept rule on the "
         "client."),
    Rule("mcpwire.post-only", ADVICE, _US, "An HTTP method other than POST is 405 (2026-07-28 recommends it only to a "
         "server that supports that revision alone, and only for GET and DELETE)."),
    Rule("mcpwire.listen-filter", ADVICE, _US, "subscriptions/listen without the notifications filter the schema's "
         "SubscriptionFilter requires is -32602."),
    Rule("mcpwire.request-state", ADVICE, _US, "A requestState that fails verification is refused with -32602. The "
         "specification requires a refusal only where the state influences authorization, resource access or "
         "business logic, which cannot be seen from outside.", _MCP + "basic/patterns/mrtr#multi-round-trip-requests"),
    Rule("mcpwire.discover-versions", ADVICE, _US, "server/discover's supportedVersions names the revision it was "
         "asked in, and the versions of a -32022 are among them."),
    Rule("mcpwire.id-limit", ADVICE, _US, "A server may refuse, as an invalid request (-32600), an integer id its "
         "numbers cannot hold safely (past 2^53-1, where doubles start to lose integers); whatever it answers carries "
         "the request's id exactly, or null."),
    Rule("mcpwire.may-need-capability", ADVICE, _US, "A tools/call, prompts/get or resources/read may need a client "
         "capability its request does not declare: -32021 reports that, whatever else the request breaks."),
    Rule("mcpwire.param-headers", ADVICE, _US, "A tools/call whose arguments were mutated may have Mcp-Param-* "
         "headers that no longer match them: -32020 reports that."),
    # The initialize-era revisions, one row per revision (era_rules)
    *ERA_RULES,
)}


def rule(rule_id: str) -> Rule:
    """The row of :data:`RULES` named ``rule_id`` (KeyError for a name not in the table)."""
    return RULES[rule_id]


class TargetFacts(Protocol):
    """What the judge reads of a probe's target (a
    :class:`mcpwire_adapters.testing.probe.checks.Target`): stdio or HTTP, its discover result,
    and the revision the check runs in (which rules an id, or a request from the server, breaks)."""

    @property
    def stdio(self) -> bool: ...

    @property
    def discover(self) -> dict[str, Any] | None: ...

    @property
    def revision(self) -> str: ...


ECHO: Final = "echo"  # the response carries the request's id
NULL: Final = "null"  # the response's id is null
ECHO_OR_NULL: Final = "echo-or-null"
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
MAX_ID_BYTES = 256  # this project's bound on a string id (the schema sets none)
# The HTTP status each error code sent as JSON goes with, and the rule that says so: the three MCP
# errors 400 (their schema definitions: MUST), -32601 404 (streamable-http: MUST); the others are
# this project's mapping (docs/errors.md), advice: the specification fixes no status for them (a
# -32602 or -32603 met while executing may come with 200; -32603 may be 503 when overloaded).
STATUS_OF: dict[int, tuple[frozenset[int], str]] = {
    -32700: (frozenset({400}), "mcpwire.error-status"),
    -32600: (frozenset({400, 403, 405, 406, 413, 415}), "mcpwire.error-status"),
    -32601: (frozenset({404}), "mcp.method-not-found"),
    -32602: (frozenset({400, 200}), "mcpwire.error-status"),
    -32020: (frozenset({400}), "mcp.header-mismatch"),
    -32021: (frozenset({400}), "mcp.missing-capability"),
    -32022: (frozenset({400}), "mcp.version-unsupported"),
    -32603: (frozenset({500, 503, 200}), "mcpwire.error-status"),
}
# The typed result of each method (mcpwire.types mirrors the official schema, unknown members
# allowed): a result that does not decode as its type is not schema-valid.
RESULT_TYPES: dict[str, Any] = {
    "server/discover": DiscoverResult, "tools/list": ListToolsResult, "prompts/list": ListPromptsResult,
    "resources/list": ListResourcesResult, "resources/templates/list": ListResourceTemplatesResult,
    "resources/read": ReadResourceResult, "prompts/get": GetPromptResult, "tools/call": CallToolResult,
    "completion/complete": CompleteResult}
MRTR_METHODS = ("tools/call", "prompts/get", "resources/read")
_RANK = {s: i for i, s in enumerate(STRENGTHS)}


def problem(rule_id: str, text: str) -> Problem:
    """A :class:`~mcpwire_adapters.testing.verdict.Problem` worded ``text``, breaking the rule ``rule_id``."""
    return Problem(text, rule(rule_id))


@dataclass(frozen=True)
class Expect:
    """What a probe check expects of the answer, and the ``rule`` (a :data:`RULES` key) each of
    its problems breaks: ``status`` (one or several; None: not looked at), the JSON-RPC error
    ``code`` (one or several; None: a result), ``any_error`` (an error of any code),
    ``any_answer`` (a result or any error), the ``id`` (ECHO the request's, ECHO_OR_NULL, NULL,
    or None: not looked at; a wrong echo always breaks the MUST of the basic page; a NULL
    expectation breaks ``id_rule``, JSON-RPC's by default), ``empty`` (no body), the ``allow``
    header, ``refusable`` (with empty: on HTTP a 4xx whose body holds no response with an id
    also conforms) and ``more``: extra rules on the message (problems with rules of their own)."""

    status: int | tuple[int, ...] | None
    code: int | tuple[int, ...] | None = None
    id: str | None = ECHO
    empty: bool = False
    allow: str | None = None
    more: Callable[[Any, TargetFacts], list[Problem]] | None = None
    refusable: bool = False
    any_error: bool = False
    any_answer: bool = False
    rule: str = "jsonrpc.reply"
    id_rule: str = "jsonrpc.response-id"

    def __post_init__(self) -> None:
        rule(self.rule), rule(self.id_rule)  # noqa: B018 - a row naming no rule of the table is a bug


# -- the rules ------------------------------------------------------------------------------------------
def valid_id(value: Any) -> bool:
    """Schema $defs RequestId: a string or an integer (the schema bounds neither)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def within_bounds(value: Any) -> bool:
    """A request id this project serves: a string of at most 256 bytes or an int64 (mcpwire
    refuses others with -32600; the schema allows them: a server serving them is right)."""
    if isinstance(value, str):
        return len(value.encode("utf-8", "surrogatepass")) <= MAX_ID_BYTES
    return valid_id(value) and INT64_MIN <= value <= INT64_MAX


def _jsonrpc_id(value: Any) -> bool:
    """JSON-RPC 2.0 section 4: an id is a String, Number or Null."""
    return value is None or isinstance(value, (str, float)) or valid_id(value)


def same_id(got: Any, sent: Any) -> bool:
    """Whether the response id ``got`` is the request id ``sent``: the same JSON token type and
    value (2**63 echoed as 9223372036854776000, or as 9.223372036854776e18, or 1 as 1.0 or
    true, is another id). Integers parse exactly, so comparing the parsed values and their types
    compares the tokens."""
    return type(got) is type(sent) and got == sent


def status_rule(status: int, allowed: Collection[int], *, rule_id: str, why: str | None = None) -> list[Problem]:
    """The HTTP status is one of ``allowed``."""
    if status in allowed:
        return []
    return [problem(rule_id, f"HTTP status {status}, expected {listed(allowed)}" + cited(why))]


def allow_rule(reply: Reply, methods: str) -> list[Problem]:
    """A 405 carries an ``Allow`` header naming exactly ``methods`` (RFC 9110: MUST)."""
    if reply.status != 405:
        return []
    allow = reply.header("allow")
    if allow is None or [m.strip().upper() for m in allow.split(",")] != [methods]:
        return [problem("http.allow-on-405", f"Allow header {allow!r}, expected {methods!r}")]
    return []


def empty_rule(reply: Reply, *, stdio: bool, rule_id: str) -> list[Problem]:
    """No body at all (on stdio: no line but the sentinel's answer)."""
    if not reply.body:
        return []
    return [problem(rule_id, f"{len(reply.body.splitlines())} lines in reply, expected none" if stdio
                    else f"a body of {len(reply.body)} bytes, expected none")]


def refusal_rule(reply: Reply, *, rule_id: str = "mcp.notification-refused") -> list[Problem]:
    """A notification or response the server cannot accept is an HTTP error whose body MAY be a
    JSON-RPC error that has no id (streamable-http, sending messages): no message in it with an id."""
    answered = [m for m in reply.messages() if isinstance(m, dict) and m.get("id") is not None]
    return [problem(rule_id, f"{len(answered)} response(s) with an id, expected none")] if answered else []


def unanswered_rule(responses: Sequence[dict[str, Any]], *, refused: bool, rule_id: str,
                    why: str | None) -> list[Problem]:
    """A notification or a posted response gets no response (``refused``: an HTTP error, whose
    body may hold an error without id)."""
    if refused:
        responses = [r for r in responses if r.get("id") is not None or "result" in r]
    return [problem(rule_id, f"{len(responses)} response(s) to a message that gets none" + cited(why))] if responses else []


def result_rule(answer: dict[str, Any], *, rule_id: str) -> list[Problem]:
    """The response is a result."""
    return [] if "result" in answer else [problem(rule_id, f"an error {_short(answer.get('error'))}, expected a result")]


def error_rule(answer: dict[str, Any], *, rule_id: str) -> list[Problem]:
    """The response is an error (of any code)."""
    return [] if "error" in answer else [problem(rule_id, "a result, expected an error")]


def code_rule(answer: dict[str, Any], codes: Collection[int], *, rule_id: str, why: str | None = None) -> list[Problem]:
    """The response is an error with one of ``codes``."""
    error = answer.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    if any(code == c for c in codes):
        return []
    if error is None:
        return [problem(rule_id, f"a result, expected error {listed(codes)}" + cited(why))]
    return [problem(rule_id, f"error code {code!r}, expected {listed(codes)}" + cited(why))]


ECHO_RULES: Final = ("mcp.result-id", "mcp.error-id")  # what a wrong echo breaks in 2026-07-28


def id_rules(revision: str) -> tuple[str, str]:
    """The rules a wrong echo of the request's id breaks (a result's, an error's) in ``revision``."""
    return ECHO_RULES if revision == VERSION else (era_rule("era.result-id", revision), era_rule("era.error-id", revision))


def id_rule(answer: dict[str, Any], expected: str | None, sent: Any, *, null_rule: str = "jsonrpc.response-id",
            why: str | None = None, echo: tuple[str, str] = ECHO_RULES) -> list[Problem]:
    """The response's id. ECHO: exactly ``sent`` (:func:`same_id`); ECHO_OR_NULL: a result
    carries exactly ``sent``, an error ``sent`` or null (the basic page lets an error carry null
    when the id could not be read from a malformed request); NULL: null (breaking
    ``null_rule``); None: not looked at. Whatever is expected, a request id of a type JSON-RPC
    does not allow is answered with null (JSON-RPC 2.0 section 5)."""
    if expected is None:
        return []
    got = answer.get("id", "absent")
    if expected != NULL and not _jsonrpc_id(sent):
        expected, null_rule = NULL, "jsonrpc.response-id"
    if expected == NULL:
        return [] if got is None else [problem(null_rule, f"id {_shown(got)}, expected null" + cited(why))]
    if same_id(got, sent):
        return []
    if "result" not in answer and expected == ECHO_OR_NULL:
        if got is None:
            return []
        return [problem(echo[1], f"id {_shown(got)}, expected the request's id {_shown(sent)} or null")]
    return [problem(echo[0] if "result" in answer else echo[1], f"id {_shown(got)}, expected the request's id {_shown(sent)}")]


def jsonrpc_fault(message: Any, *, server_requests: bool = False, jsonrpc_rule: str = "mcp.jsonrpc") -> Problem | None:
    """Why ``message`` is not a JSON-RPC 2.0 message a server may send (None: it is). A batch
    (an array of responses) is one, as JSON-RPC 2.0 allows. ``server_requests``: the server may
    send requests of its own (the initialize era: sampling, roots, elicitation); 2026-07-28 has
    none (basic/patterns/mrtr). ``jsonrpc_rule``: the revision's rule that every message follows
    JSON-RPC 2.0."""
    if isinstance(message, list) and message:
        return next((f for f in (jsonrpc_fault(m, server_requests=server_requests, jsonrpc_rule=jsonrpc_rule)
                                 for m in message) if f), None)
    if not isinstance(message, dict):
        return problem(jsonrpc_rule, f"not a JSON-RPC message: {_short(message, 160)}")
    if message.get(NOT_JSON) == "not JSON":
        return problem(jsonrpc_rule, f"not JSON: {message.get('text', '')[:160]!r}")
    if message.get("jsonrpc") != "2.0":
        return problem("jsonrpc.version", f"jsonrpc {message.get('jsonrpc')!r}, expected '2.0': {_short(message, 160)}")
    if "method" in message:
        if not isinstance(message["method"], str):
            return problem(jsonrpc_rule, f"a method that is not a string: {_short(message, 160)}")
        if "id" in message and not server_requests:
            return problem("mcp.no-server-requests", f"a request to the client (none in this revision: basic/patterns/mrtr): "
                                                f"{_short(message, 160)}")
        return None
    if ("result" in message) == ("error" in message):
        return problem("jsonrpc.response-members", f"a response needs exactly one of result and error: {_short(message, 160)}")
    if "id" not in message or not _jsonrpc_id(message["id"]):
        return problem("jsonrpc.response-id", f"a response id must be a string, a number or null: {_short(message, 160)}")
    if "error" in message:
        error = message["error"]
        if not isinstance(error, dict) or not isinstance(error.get("code"), int) or isinstance(error.get("code"), bool) \
                or not isinstance(error.get("message"), str):
            return problem("jsonrpc.error-object",
                           f"an error needs an integer code and a string message: {_short(message, 160)}")
    elif not isinstance(message["result"], dict):
        return problem("jsonrpc.result-by-method", f"a result must be an object: {_short(message, 160)}")
    return None


def validity(reply: Reply, *, revision: str = VERSION) -> list[Problem]:
    """Only the rule every message keeps: it is JSON-RPC a server of ``revision`` may send."""
    era = revision != VERSION
    jsonrpc_rule = era_rule("era.jsonrpc", revision) if era else "mcp.jsonrpc"
    return [p for p in (jsonrpc_fault(m, server_requests=era, jsonrpc_rule=jsonrpc_rule)
                        for m in (reply.messages() if reply.body else [])) if p]


def status_of_code_rule(code: Any, status: int) -> list[Problem]:
    """An error sent as JSON comes with the HTTP status its code goes with (:data:`STATUS_OF`)."""
    if isinstance(code, int) and code in STATUS_OF and status not in STATUS_OF[code][0]:
        statuses, rule_id = STATUS_OF[code]
        return [problem(rule_id, f"error {code} with HTTP {status}, expected {listed(statuses)}")]
    return []


def schema_rule(request: Request, result: Any) -> list[Problem]:
    """The result decodes as the schema type of the request's method (only a method this
    revision has, and a complete or input_required result: a task is another shape), and
    carries a resultType."""
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
            return [problem("mcp.input-required-methods", f"an input_required result to {method} "
                            "(basic/patterns/mrtr: only tools/call, prompts/get, resources/read)")]
        target = InputRequiredResult
    elif kind == "complete":
        target = RESULT_TYPES[method]
    else:
        return []
    problems = [] if "resultType" in result else [problem("mcp.result-type", "the result has no resultType")]
    try:
        msgspec.convert(result, type=target, strict=True)
    except msgspec.ValidationError as exc:
        problems.append(problem("jsonrpc.result-by-method", f"the result is not a valid {target.__name__} (schema): {exc}"))
    return problems


# -- a probe check: what its row expects ---------------------------------------------------------------
def judge(expect: Expect | Sequence[Expect], request: Request, reply: Reply, target: TargetFacts) -> list[Problem]:
    """The problems with ``reply`` to a probe check's ``request`` (empty: it conforms), judged
    against each of the check's expectations in turn (a problem found twice is listed once,
    with the first, stronger, rule)."""
    problems: list[Problem] = []
    for tier in (expect,) if isinstance(expect, Expect) else expect:
        problems += [p for p in _judge_tier(tier, request, reply, target) if p not in problems]
    return problems


def _judge_tier(expect: Expect, request: Request, reply: Reply, target: TargetFacts) -> list[Problem]:
    problems: list[Problem] = []
    allowed = expect.status if isinstance(expect.status, tuple) else () if expect.status is None else (expect.status,)
    if expect.refusable and not target.stdio and 400 <= reply.status < 500:
        return refusal_rule(reply, rule_id="mcp.notification-refused" if rule(expect.rule).strength != "advice"
                            else expect.rule)
    if not target.stdio and expect.status is not None:
        problems += status_rule(reply.status, allowed, rule_id=expect.rule)
    if expect.allow is not None and not target.stdio:
        problems += allow_rule(reply, expect.allow)
    if expect.empty:
        return problems + empty_rule(reply, stdio=target.stdio, rule_id=expect.rule)
    if expect.code is None and expect.id is None and expect.more is None and not expect.any_answer:
        return problems
    answers = [m for m in reply.messages() if isinstance(m, dict) and ("result" in m or "error" in m)]
    if len(answers) != 1:
        return [*problems, problem(expect.rule, f"{len(answers)} JSON-RPC responses in the body, expected 1")]
    answer = answers[0]
    kind: list[Problem] = []
    if expect.any_error:
        kind = error_rule(answer, rule_id=expect.rule)
    elif expect.code is not None:
        kind = code_rule(answer, expect.code if isinstance(expect.code, tuple) else (expect.code,), rule_id=expect.rule)
    elif not expect.any_answer:
        kind = result_rule(answer, rule_id=expect.rule)
    problems += kind
    problems += id_rule(answer, expect.id, request.rpc_id, null_rule=expect.id_rule, echo=id_rules(target.revision))
    if expect.more is not None and not kind:  # the shape of a result or error of the kind expected
        problems += expect.more(answer, target)
    return problems


# -- wording ---------------------------------------------------------------------------------------------
def listed(values: Collection[int]) -> str:
    """Alternatives as the reports list them: a sequence in its order; a set sorted, and as a
    range when it holds more than 20."""
    if isinstance(values, (set, frozenset)):
        if len(values) > 20:
            return f"{min(values)}-{max(values)}"
        values = sorted(values)
    return " or ".join(map(str, values))


def cited(why: str | None) -> str:
    return f" ({why})" if why else ""


def _shown(value: Any) -> str:
    """An id as a report shows it: its repr, a long string cut with its length."""
    if isinstance(value, str) and len(value) > 40:
        return repr(value[:24] + "...") + f" ({len(value.encode('utf-8', 'surrogatepass'))} bytes)"
    return repr(value)


def _short(value: Any, width: int = 120) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) < width else text[:width - 3] + "..."
