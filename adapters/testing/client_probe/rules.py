"""Every rule ``mcpwire probe --client`` holds a client to, one row each, in the shape of the
server probe's table (:data:`mcpwire_adapters.testing.judge.RULES`): a
:class:`~mcpwire_adapters.testing.verdict.Rule` with its strength, read from the official
sentence it quotes (MUST, MUST NOT, REQUIRED: a failure; SHOULD: a warning; anything else, this
project's own robustness conventions among them: advice, shown with ``--strict``), and the page
of the revision it belongs to.

A rule the two revisions both state is two rows, ``2026.<name>`` and ``2025.<name>``, each with
its own sentence and page: :func:`rule_for` picks the row of the revision the client spoke (a
client is judged by the revision of each request it sent). OAuth rows follow the same pattern;
the robustness rows (``robust.*``) are advice, because no MUST covers them (docs/probing-clients.md
says why each one is advice).
"""

from __future__ import annotations

from typing import Final

from ..verdict import ADVICE, MUST, SHOULD, Problem, Rule
from .scenarios import MODERN

__all__ = ["CLIENT_RULES", "client_rule", "problem", "rule_for"]

_SPEC = "https://modelcontextprotocol.io" + "/specification/"  # pages joined below, as in judge.py
_M26, _M25 = _SPEC + "2026-07-28/", _SPEC + "2025-11-25/"
_HTTP26, _HTTP25 = _M26 + "basic/transports/streamable-http", _M25 + "basic/transports"
_STDIO26, _MRTR = _M26 + "basic/transports/stdio", _M26 + "basic/patterns/mrtr"
_AUTH26, _AUTH25 = _M26 + "basic/authorization", _M25 + "basic/authorization"
_SEC26 = _AUTH26 + "/security-considerations"
_S26, _S25, _J, _US = "MCP 2026-07-28", "MCP 2025-11-25", "JSON-RPC 2.0", "mcpwire"
_RPC = "https://www.jsonrpc.org/specification"
_TIMEOUTS = ("(The specification's Timeouts section, for both revisions: \"Implementations SHOULD establish timeouts for "
             "all sent requests, to prevent hung connections and resource exhaustion.\" The probe's deadline may be "
             "shorter than a client's own timeout, so a run past it proves nothing: advice.)")

CLIENT_RULES: Final[dict[str, Rule]] = {r.id: r for r in (
    # Streamable HTTP: what every POST carries
    Rule("2026.accept", MUST, _S26, "The client MUST include an `Accept` header listing both `application/json` and "
         "`text/event-stream` as supported content types.", _HTTP26 + "#sending-messages"),
    Rule("2025.accept", MUST, _S25, "The client MUST include an `Accept` header, listing both `application/json` and "
         "`text/event-stream` as supported content types.", _HTTP25 + "#sending-messages-to-the-server"),
    Rule("2025.get-accept", MUST, _S25, "The client MUST include an `Accept` header, listing `text/event-stream` as a "
         "supported content type.", _HTTP25 + "#listening-for-messages-from-the-server"),
    Rule("2026.single-message", MUST, _S26, "The body of the HTTP POST MUST be a single JSON-RPC _request_ or "
         "_notification_. The client MUST NOT send JSON-RPC _responses_.", _HTTP26 + "#sending-messages"),
    Rule("2025.single-message", MUST, _S25, "The body of the POST request MUST be a single JSON-RPC _request_, "
         "_notification_, or _response_.", _HTTP25 + "#sending-messages-to-the-server"),
    Rule("2026.version-header", MUST, _S26, "Every POST request to the MCP endpoint MUST include an "
         "`MCP-Protocol-Version` header.", _HTTP26 + "#protocol-version-header"),
    Rule("2026.version-match", MUST, _S26, "The header value MUST match the `io.modelcontextprotocol/protocolVersion` "
         "field carried in the request body's `_meta`.", _HTTP26 + "#protocol-version-header"),
    Rule("2025.version-header", MUST, _S25, "If using HTTP, the client MUST include the `MCP-Protocol-Version: "
         "<protocol-version>` HTTP header on all subsequent requests to the MCP server, allowing the MCP server to "
         "respond based on the MCP protocol version.", _HTTP25 + "#protocol-version-header"),
    Rule("2025.version-negotiated", SHOULD, _S25, "The protocol version sent by the client SHOULD be the one negotiated "
         "during initialization.", _HTTP25 + "#protocol-version-header"),
    Rule("2026.request-headers", MUST, _S26, "The client MUST include the request metadata headers on each POST "
         "request. (Standard Request Headers: `Mcp-Method` from `method`, all requests; `Mcp-Name` from `params.name` "
         "or `params.uri`, `tools/call`, `resources/read`, `prompts/get` requests. These headers are REQUIRED for "
         "compliance.)", _HTTP26 + "#standard-request-headers"),
    Rule("2025.session-id", MUST, _S25, "If an `MCP-Session-Id` is returned by the server during initialization, "
         "clients using the Streamable HTTP transport MUST include it in the `MCP-Session-Id` header on all of their "
         "subsequent HTTP requests.", _HTTP25 + "#session-management"),
    Rule("2025.session-404", MUST, _S25, "When a client receives HTTP 404 in response to a request containing an "
         "`MCP-Session-Id`, it MUST start a new session by sending a new `InitializeRequest` without a session ID "
         "attached.", _HTTP25 + "#session-management"),
    Rule("2025.poll", SHOULD, _S25, "After the server has sent an SSE event with an event ID to the client, the server "
         "MAY close the _connection_ (without terminating the _SSE stream_) at any time in order to avoid holding a "
         "long-lived connection. The client SHOULD then \"poll\" the SSE stream by attempting to reconnect.",
         _HTTP25 + "#sending-messages-to-the-server"),
    Rule("2025.last-event-id", SHOULD, _S25, "If the client wishes to resume after a disconnection (whether due to "
         "network failure or server-initiated closure), it SHOULD issue an HTTP GET to the MCP endpoint, and include "
         "the `Last-Event-ID` header to indicate the last event ID it received.", _HTTP25 + "#resumability-and-redelivery"),
    Rule("2025.retry", MUST, _S25, "The client MUST respect the `retry` field, waiting the given number of milliseconds "
         "before attempting to reconnect.", _HTTP25 + "#sending-messages-to-the-server"),
    # every message, both transports
    Rule("2026.jsonrpc", MUST, _S26, "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0 "
         "specification.", _M26 + "basic#messages"),
    Rule("2025.jsonrpc", MUST, _S25, "All messages between MCP clients and servers MUST follow the JSON-RPC 2.0 "
         "specification.", _M25 + "basic#messages"),
    Rule("2026.request-id", MUST, _S26, "Requests MUST include a string or integer ID. Unlike base JSON-RPC, the ID "
         "MUST NOT be `null`.", _M26 + "basic#requests"),
    Rule("2025.request-id", MUST, _S25, "Requests MUST include a string or integer ID. Unlike base JSON-RPC, the ID "
         "MUST NOT be `null`.", _M25 + "basic#requests"),
    Rule("2026.id-in-flight", MUST, _S26, "The request ID MUST NOT match the ID of any other request the sender has "
         "issued and not yet received a response for.", _M26 + "basic#requests"),
    Rule("2025.id-unique", MUST, _S25, "The request ID MUST NOT have been previously used by the requestor within the "
         "same session.", _M25 + "basic#requests"),
    Rule("2026.meta", MUST, _S26, "Client requests carry the following `io.modelcontextprotocol/*` fields in `_meta`; "
         "fields marked as required MUST be included on every request. (Required: "
         "`io.modelcontextprotocol/protocolVersion`, `io.modelcontextprotocol/clientCapabilities`.)", _M26 + "basic#meta"),
    Rule("2026.client-info", SHOULD, _S26, "Clients SHOULD include `io.modelcontextprotocol/clientInfo` on every request "
         "unless specifically configured not to do so.", _M26 + "basic#meta"),
    Rule("2026.stdio-valid", MUST, _S26, "The client MUST NOT write anything to the server's `stdin` that is not a "
         "valid MCP message.", _STDIO26),
    Rule("2025.stdio-valid", MUST, _S25, "The client MUST NOT write anything to the server's `stdin` that is not a "
         "valid MCP message.", _M25 + "basic/transports#stdio"),
    Rule("2026.stdio-no-responses", MUST, _S26, "The client sends messages by writing JSON-RPC _requests_ and "
         "_notifications_ to the server's `stdin`, one message per line. The client MUST NOT write JSON-RPC "
         "_responses_.", _STDIO26 + "#sending-messages"),
    # the answers a client owes the server (2025-11-25: the server's own requests)
    Rule("jsonrpc.reply", MUST, _J, "When a rpc call is made, the Server MUST reply with a Response, except for in the "
         "case of Notifications. (JSON-RPC names the Server the handler of Request objects: here, the client "
         "answering the server's request.)", _RPC + "#response_object"),
    Rule("jsonrpc.response-id", MUST, _J, "id: This member is REQUIRED. It MUST be the same as the value of the id "
         "member in the Request Object.", _RPC + "#response_object"),
    Rule("2025.ping", MUST, _S25, "The receiver MUST respond promptly with an empty response",
         _M25 + "basic/utilities/ping#behavior-requirements"),
    # the initialize handshake
    Rule("2025.initialize-first", MUST, _S25, "The initialization phase MUST be the first interaction between client "
         "and server.", _M25 + "basic/lifecycle#initialization"),
    Rule("2025.initialized", MUST, _S25, "After successful initialization, the client MUST send an `initialized` "
         "notification to indicate it is ready to begin normal operations", _M25 + "basic/lifecycle#initialization"),
    Rule("2025.initialize-cancel", MUST, _S25, "The `initialize` request MUST NOT be cancelled by clients",
         _M25 + "basic/utilities/cancellation#behavior-requirements"),
    # multi round-trip requests (2026-07-28)
    Rule("2026.retry-id", MUST, _S26, "The JSON-RPC `id` MUST be different between the initial request and the retry, "
         "as they are independent requests.", _MRTR + "#client-requirements-basic-workflow"),
    Rule("2026.request-state", MUST, _S26, "If an `InputRequiredResult` contains the `requestState` field, the client "
         "MUST echo back the exact value of that field when retrying the original request.",
         _MRTR + "#client-requirements-basic-workflow"),
    Rule("2026.no-request-state", MUST, _S26, "If the `InputRequiredResult` does not contain a `requestState` field, "
         "the client MUST NOT include one in the retry.", _MRTR + "#client-requirements-basic-workflow"),
    Rule("2026.inputs", MUST, _S26, "If a client receives an `InputRequiredResult` that contains the `inputRequests` "
         "field, the client MUST construct the requested inputs before retrying the original request.",
         _MRTR + "#client-requirements-basic-workflow"),
    Rule("2026.state-elsewhere", MUST, _S26, "Both the `inputRequests` and `requestState` fields affect only the "
         "client's retry of the original request. They MUST NOT be used for any other request that the client may be "
         "sending in parallel.", _MRTR + "#client-requirements-basic-workflow"),
    # OAuth
    Rule("2026.oauth-issuer", MUST, _S26, "After retrieving a metadata document, MCP clients MUST validate it as "
         "required by RFC8414 Section 3.3 or OpenID Connect Discovery Section 4.3: the `issuer` value in the document "
         "MUST be identical to the issuer identifier used to construct the well-known URL. If they differ, the client "
         "MUST NOT use the metadata.", _AUTH26 + "/authorization-server-discovery#authorization-server-metadata-discovery"),
    Rule("2025.oauth-issuer", MUST, "RFC 8414", "The \"issuer\" value returned MUST be identical to the authorization "
         "server's issuer identifier value into which the well-known URI string was inserted to create the URL used to "
         "retrieve the metadata. If these values are not identical, the data contained in the response MUST NOT be "
         "used.", "https://www.rfc-editor.org/rfc/rfc8414#section-3.3"),
    Rule("2026.oauth-pkce", MUST, _S26, "MCP clients MUST implement PKCE according to OAuth 2.1 Section 7.5.2 and MUST "
         "verify PKCE support before proceeding with authorization. MCP clients MUST use the `S256` code challenge "
         "method when technically capable", _SEC26 + "#authorization-code-protection"),
    Rule("2025.oauth-pkce", MUST, _S25, "MCP clients MUST implement PKCE according to OAuth 2.1 Section 7.5.2 and MUST "
         "verify PKCE support before proceeding with authorization. MCP clients MUST use the `S256` code challenge "
         "method when technically capable", _AUTH25 + "#authorization-code-protection"),
    Rule("2026.oauth-no-pkce", MUST, _S26, "OAuth 2.0 Authorization Server Metadata: If `code_challenge_methods_supported` "
         "is absent, the authorization server does not support PKCE and MCP clients MUST refuse to proceed.",
         _SEC26 + "#authorization-code-protection"),
    Rule("2025.oauth-no-pkce", MUST, _S25, "OAuth 2.0 Authorization Server Metadata: If `code_challenge_methods_supported` "
         "is absent, the authorization server does not support PKCE and MCP clients MUST refuse to proceed.",
         _AUTH25 + "#authorization-code-protection"),
    Rule("2026.oauth-resource", MUST, _S26, "The `resource` parameter: MUST be included in both authorization requests "
         "and token requests. MUST identify the MCP server that the client intends to use the token with.",
         _AUTH26 + "#resource-parameter-implementation"),
    Rule("2025.oauth-resource", MUST, _S25, "The `resource` parameter: MUST be included in both authorization requests "
         "and token requests. MUST identify the MCP server that the client intends to use the token with.",
         _AUTH25 + "#resource-parameter-implementation"),
    Rule("2026.oauth-state", SHOULD, _S26, "MCP clients SHOULD use and verify state parameters in the authorization "
         "code flow and discard any results that do not include or have a mismatch with the original state.",
         _SEC26 + "#open-redirection"),
    Rule("2025.oauth-state", SHOULD, _S25, "MCP clients SHOULD use and verify state parameters in the authorization "
         "code flow and discard any results that do not include or have a mismatch with the original state.",
         _AUTH25 + "#open-redirection"),
    Rule("2026.oauth-bearer", MUST, _S26, "MCP client MUST use the Authorization request header field defined in "
         "OAuth 2.1 Section 5.1.1 [...] Note that authorization MUST be included in every HTTP request from client to server.",
         _AUTH26 + "#token-requirements"),
    Rule("2025.oauth-bearer", MUST, _S25, "MCP client MUST use the Authorization request header field defined in "
         "OAuth 2.1 Section 5.1.1 [...] Note that authorization MUST be included in every HTTP request from client to server, "
         "even if they are part of the same logical session.", _AUTH25 + "#token-requirements"),
    # robustness: this project's conventions, advice (no MUST covers them)
    Rule("robust.hang", ADVICE, _US, "A client gives up on a server that never finishes answering (a timeout of its "
         "own, a bound on what it reads) and exits within the probe's deadline. " + _TIMEOUTS),
    Rule("robust.crash", ADVICE, _US, "A client meets a malformed or hostile answer with an error, not a crash (a stack "
         "trace, death by a signal). No sentence of the specification says how a client fails."),
    Rule("robust.memory", ADVICE, _US, "A client bounds the answers it reads (refusing one past a documented size) "
         "instead of holding an oversized payload whole in memory. No sentence of the specification bounds a result."),
    Rule("robust.wrong-id", ADVICE, _US, "A client never takes a response whose id is not its request's as that "
         "request's answer. (The id rules of JSON-RPC 2.0 and the specification bind the server that answers: they "
         "say nothing of what a client does with a stray response.)"),
    Rule("robust.rounds", ADVICE, _US, "A client bounds the input_required rounds of one request (mcpwire's clients stop "
         "after 8). basic/patterns/mrtr lets a server ask again on every attempt and sets no bound."),
)}


def client_rule(rule_id: str) -> Rule:
    """The row named ``rule_id`` (KeyError for a name not in the table)."""
    return CLIENT_RULES[rule_id]


def rule_for(name: str, era: str) -> Rule:
    """The row of ``name`` for the revision ``era`` (``2026.<name>`` or ``2025.<name>``)."""
    return CLIENT_RULES[("2026." if era == MODERN else "2025.") + name]


def problem(text: str, rule: Rule | str, era: str | None = None) -> Problem:
    """A :class:`Problem` breaking ``rule`` (a row, a table id, or with ``era`` a name :func:`rule_for` picks)."""
    if isinstance(rule, str):
        rule = rule_for(rule, era) if era is not None else CLIENT_RULES[rule]
    return Problem(text, rule)
