"""The rules of the initialize-era revisions (2025-11-25, 2025-06-18, 2025-03-26 and 2024-11-05)
the probe and the fuzzer hold a server to: rows of the one table,
:data:`mcpwire_adapters.testing.judge.RULES`, which merges :data:`ERA_RULES` in.

A rule that several revisions state is one row per revision, its id the rule's name and the
revision (``era.session-ended@2025-03-26``), its sentence quoted from that revision's page
(the wording moves: ``Mcp-Session-Id`` became ``MCP-Session-Id`` in 2025-11-25) and its link to
that page, so a finding cites the text of the revision the server negotiated. :func:`era_rule`
names the row of a rule for a revision. The strength is the keyword of the sentence, as in the
rest of the table; a parenthesis after a sentence is our note, not the text.

The pages: Basic (messages, batching), Lifecycle, Ping, Transports (stdio, Streamable HTTP, and
2024-11-05's HTTP with SSE) and Authorization of each revision. Authorization is the one page
2026-07-28 states in the same words (and the probe checks the same way), so its rows here
include 2026-07-28 (:data:`AUTH_REVISIONS`); that revision moved the discovery sections to a
page of their own, which :func:`spec_page` knows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from .verdict import ADVICE, MUST, SHOULD, Rule, Strength

__all__ = ["AUTH_REVISIONS", "DISCOVERY_REVISIONS", "ERA_RULES", "ERA_REVISIONS", "LEGACY", "METADATA_REVISIONS", "SESSION_REVISIONS",
           "era_rule", "spec_page"]

LEGACY: Final = "2024-11-05"
"""The revision of the HTTP+SSE transport (an SSE stream and a separate POST endpoint)."""
SESSION_REVISIONS: Final[tuple[str, ...]] = ("2025-11-25", "2025-06-18", "2025-03-26")
"""The revisions of Streamable HTTP with initialize-era sessions, newest first."""
ERA_REVISIONS: Final[tuple[str, ...]] = (*SESSION_REVISIONS, LEGACY)
"""Every revision negotiated by ``initialize``, newest first."""
HEADER_REVISIONS: Final[tuple[str, ...]] = ("2025-11-25", "2025-06-18")  # MCP-Protocol-Version is defined
_NEWEST: Final = "2026-07-28"
METADATA_REVISIONS: Final[tuple[str, ...]] = (_NEWEST, *HEADER_REVISIONS)
"""The revisions whose Authorization page has servers publish protected resource metadata (RFC 9728)."""
AUTH_REVISIONS: Final[tuple[str, ...]] = (_NEWEST, *SESSION_REVISIONS)
"""The revisions with an Authorization page (2024-11-05 has none), newest first."""
DISCOVERY_REVISIONS: Final[tuple[str, ...]] = (_NEWEST, "2025-11-25")
"""The revisions where a server may publish its metadata at a well-known URI instead of naming it
in the challenge, and is asked for a scope in the challenge (SHOULD)."""

_SPEC = "https://modelcontextprotocol.io" + "/specification/"
# 2026-07-28 split Authorization: its discovery sections moved to a page of their own.
_MOVED: Final[dict[tuple[str, str], str]] = {
    (_NEWEST, f"basic/authorization#{anchor}"): f"basic/authorization/authorization-server-discovery#{anchor}"
    for anchor in ("authorization-server-location", "protected-resource-metadata-discovery-requirements")}


def spec_page(revision: str, page: str) -> str:
    """The URL of ``page`` (``basic/transports#stdio``) of ``revision``'s specification (where
    that revision moved the section, its page there)."""
    return f"{_SPEC}{revision}/{_MOVED.get((revision, page), page)}"


def era_rule(name: str, revision: str) -> str:
    """The id of rule ``name`` (``era.ping``) as ``revision`` states it (``era.ping@2025-06-18``)."""
    return f"{name}@{revision}"


def _rows(name: str, strength: Strength, revisions: Iterable[str], page: str | Mapping[str, str],
          quote: str | Mapping[str, str]) -> list[Rule]:
    """One row per revision: ``page`` and ``quote`` the same in each, or given per revision."""
    return [Rule(era_rule(name, r), strength, f"MCP {r}", quote if isinstance(quote, str) else quote[r],
                 spec_page(r, page if isinstance(page, str) else page[r])) for r in revisions]


def _same(value: str, revisions: Iterable[str], **other: str) -> dict[str, str]:
    """``value`` for each of ``revisions``, but where ``other`` (keyed ``r2024_11_05``) says otherwise."""
    return {r: other.get("r" + r.replace("-", "_"), value) for r in revisions}


_SESSION = "basic/transports#session-management"
_SENDING = "basic/transports#sending-messages-to-the-server"
_LISTENING = "basic/transports#listening-for-messages-from-the-server"
_RESUMING = "basic/transports#resumability-and-redelivery"
_AS_LOCATION = "basic/authorization#authorization-server-location"
_DISCOVERY = "basic/authorization#protected-resource-metadata-discovery-requirements"
_RESPONSES = _same("basic#responses", ERA_REVISIONS, r2024_11_05="basic/messages#responses")
_RESPONSE_ID = "Responses MUST include the same ID as the request they correspond to."

ERA_RULES: Final[tuple[Rule, ...]] = (
    # -- messages and lifecycle, every initialize-era revision -------------------------------------------
    *_rows("era.jsonrpc", MUST, ERA_REVISIONS, _same("basic#messages", ERA_REVISIONS, r2024_11_05="basic/messages"),
           _same("All messages between MCP clients and servers MUST follow the JSON-RPC 2.0 specification.",
                 ERA_REVISIONS, r2024_11_05="All messages in MCP MUST follow the JSON-RPC 2.0 specification.")),
    *_rows("era.result-id", MUST, ERA_REVISIONS, _same("basic#result-responses", ERA_REVISIONS, **{
        "r2025_06_18": "basic#responses", "r2025_03_26": "basic#responses", "r2024_11_05": "basic/messages#responses"}),
           _same(_RESPONSE_ID, ERA_REVISIONS, r2025_11_25="Result responses MUST include the same ID as the request "
                 "they correspond to.")),
    *_rows("era.error-id", MUST, ERA_REVISIONS, _same("basic#error-responses", ERA_REVISIONS, **{
        "r2025_06_18": "basic#responses", "r2025_03_26": "basic#responses", "r2024_11_05": "basic/messages#responses"}),
           _same(_RESPONSE_ID + " (JSON-RPC 2.0: null where the id of a malformed request could not be read.)",
                 ERA_REVISIONS, r2025_11_25="Error responses MUST include the same ID as the request they correspond "
                 "to (except in error cases where the ID could not be read due a malformed request).")),
    *_rows("era.notification-silent", MUST, SESSION_REVISIONS, "basic#notifications",
           "Notifications are sent from the client to the server or vice versa, as a one-way message. The receiver "
           "MUST NOT send a response."),
    *_rows("era.version-negotiation", MUST, ERA_REVISIONS, "basic/lifecycle#version-negotiation",
           "If the server supports the requested protocol version, it MUST respond with the same version. Otherwise, "
           "the server MUST respond with another protocol version it supports."),
    *_rows("era.initialize-result", MUST, ERA_REVISIONS, "basic/lifecycle#initialization",
           "The server MUST respond with its own capabilities and information (the schema's InitializeResult: "
           "protocolVersion, capabilities and serverInfo, with a name and a version, are required)."),
    *_rows("era.ping", MUST, ERA_REVISIONS, "basic/utilities/ping#behavior-requirements",
           "The receiver MUST respond promptly with an empty response"),
    *_rows("era.batch-receive", MUST, ("2025-03-26",), "basic#batching",
           "MCP implementations MAY support sending JSON-RPC batches, but MUST support receiving JSON-RPC batches. "
           "(JSON-RPC 2.0: a Response for each Request of the batch, none for its notifications.)"),
    # -- stdio, every initialize-era revision ---------------------------------------------------------------
    *_rows("era.stdio-newlines", MUST, ERA_REVISIONS, "basic/transports#stdio",
           "Messages are delimited by newlines, and MUST NOT contain embedded newlines."),
    *_rows("era.stdio-only-messages", MUST, ERA_REVISIONS, "basic/transports#stdio",
           "The server MUST NOT write anything to its stdout that is not a valid MCP message."),
    # -- Streamable HTTP: the origin, sending, listening, resuming, sessions, the version header ----------
    *_rows("era.origin", MUST, ERA_REVISIONS, "basic/transports#security-warning", _same(
        "Servers MUST validate the Origin header on all incoming connections to prevent DNS rebinding attacks "
        "(a foreign Origin on a loopback server is not served).", ERA_REVISIONS,
        r2025_11_25="If the Origin header is present and invalid, servers MUST respond with HTTP 403 Forbidden.")),
    *_rows("era.notification-202", MUST, SESSION_REVISIONS, _SENDING, _same(
        "If the input is a JSON-RPC response or notification: If the server accepts the input, the server MUST "
        "return HTTP status code 202 Accepted with no body. If the server cannot accept the input, it MUST return "
        "an HTTP error status code (e.g., 400 Bad Request).", SESSION_REVISIONS,
        r2025_03_26="If the input consists solely of (any number of) JSON-RPC responses or notifications: If the "
        "server accepts the input, the server MUST return HTTP status code 202 Accepted with no body. If the server "
        "cannot accept the input, it MUST return an HTTP error status code (e.g., 400 Bad Request).")),
    *_rows("era.request-content-type", MUST, SESSION_REVISIONS, _SENDING, _same(
        "If the input is a JSON-RPC request, the server MUST either return Content-Type: text/event-stream, to "
        "initiate an SSE stream, or Content-Type: application/json, to return one JSON object.", SESSION_REVISIONS,
        r2025_03_26="If the input contains any number of JSON-RPC requests, the server MUST either return "
        "Content-Type: text/event-stream, to initiate an SSE stream, or Content-Type: application/json, to return "
        "one JSON object.")),
    *_rows("era.get-stream", MUST, SESSION_REVISIONS, _LISTENING,
           "The server MUST either return Content-Type: text/event-stream in response to this HTTP GET, or else "
           "return HTTP 405 Method Not Allowed, indicating that the server does not offer an SSE stream at this "
           "endpoint."),
    *_rows("era.get-no-response", MUST, SESSION_REVISIONS, _LISTENING,
           "The server MUST NOT send a JSON-RPC response on the stream unless resuming a stream associated with a "
           "previous client request."),
    *_rows("era.replay-same-stream", MUST, SESSION_REVISIONS, _RESUMING,
           "The server MUST NOT replay messages that would have been delivered on a different stream."),
    *_rows("era.event-ids-unique", MUST, SESSION_REVISIONS, _RESUMING,
           "Servers MAY attach an id field to their SSE events [...] If present, the ID MUST be globally unique "
           "across all streams within that session—or all streams with that specific client, if session management "
           "is not in use."),
    *_rows("era.session-id-chars", MUST, SESSION_REVISIONS, _SESSION,
           "The session ID MUST only contain visible ASCII characters (ranging from 0x21 to 0x7E)."),
    *_rows("era.session-required", SHOULD, SESSION_REVISIONS, _SESSION, _same(
        "Servers that require a session ID SHOULD respond to requests without an Mcp-Session-Id header (other than "
        "initialization) with HTTP 400 Bad Request.", SESSION_REVISIONS,
        r2025_11_25="Servers that require a session ID SHOULD respond to requests without an MCP-Session-Id header "
        "(other than initialization) with HTTP 400 Bad Request.")),
    *_rows("era.session-ended", MUST, SESSION_REVISIONS, _SESSION,
           "The server MAY terminate the session at any time, after which it MUST respond to requests containing "
           "that session ID with HTTP 404 Not Found. (A session it does not hold, it cannot tell from one it ended.)"),
    *_rows("era.version-header", MUST, HEADER_REVISIONS, "basic/transports#protocol-version-header",
           "If the server receives a request with an invalid or unsupported MCP-Protocol-Version, it MUST respond "
           "with 400 Bad Request."),
    *_rows("era.tasks-unknown", MUST, ("2025-11-25",), "basic/utilities/tasks#protocol-errors",
           "Receivers MUST return standard JSON-RPC errors for the following protocol error cases: Invalid or "
           "nonexistent taskId in tasks/get, tasks/result, or tasks/cancel: -32602 (Invalid params)"),
    # -- the HTTP+SSE transport of 2024-11-05 -----------------------------------------------------------------
    *_rows("legacy.two-endpoints", MUST, (LEGACY,), "basic/transports#http-with-sse",
           "The server MUST provide two endpoints: An SSE endpoint, for clients to establish a connection and receive "
           "messages from the server; A regular HTTP POST endpoint for clients to send messages to the server"),
    *_rows("legacy.endpoint-event", MUST, (LEGACY,), "basic/transports#http-with-sse",
           "When a client connects, the server MUST send an endpoint event containing a URI for the client to use "
           "for sending messages."),
    *_rows("legacy.message-events", ADVICE, (LEGACY,), "basic/transports#http-with-sse",
           "Server messages are sent as SSE message events, with the message content encoded as JSON in the event "
           "data. (No requirement keyword.)"),
    # -- authorization, when the server asks for it -----------------------------------------------------------
    *_rows("auth.invalid-token", MUST, AUTH_REVISIONS, "basic/authorization#token-handling",
           "Invalid or expired tokens MUST receive a HTTP 401 response."),
    *_rows("auth.error-status", MUST, AUTH_REVISIONS, "basic/authorization#error-handling",
           "Servers MUST return appropriate HTTP status codes for authorization errors: 401 Unauthorized: "
           "Authorization required or token invalid; 403 Forbidden: Invalid scopes or insufficient permissions"),
    *_rows("auth.audience", MUST, METADATA_REVISIONS, "basic/authorization#token-handling",
           "MCP servers MUST validate that access tokens were issued specifically for them as the intended audience, "
           "according to RFC 8707 Section 2. [...] Invalid or expired tokens MUST receive a HTTP 401 response."),
    *_rows("auth.resource-metadata", MUST, METADATA_REVISIONS, _AS_LOCATION,
           "MCP servers MUST implement the OAuth 2.0 Protected Resource Metadata (RFC9728) specification to indicate "
           "the locations of authorization servers. The Protected Resource Metadata document returned by the MCP "
           "server MUST include the authorization_servers field containing at least one authorization server. "
           "(RFC 9728 section 2: its resource member is REQUIRED.)"),
    *_rows("auth.resource-identical", MUST, METADATA_REVISIONS, _AS_LOCATION,
           "MCP servers MUST implement the OAuth 2.0 Protected Resource Metadata (RFC9728) specification [...] "
           "(RFC 9728 section 3.3: The resource value returned MUST be identical to the protected resource's resource "
           "identifier value into which the well-known URI path suffix was inserted to create the URL used to "
           "retrieve the metadata. [...] If the protected resource metadata was retrieved from a URL returned by the "
           "protected resource via the WWW-Authenticate resource_metadata parameter, then the resource value "
           "returned MUST be identical to the URL that the client used to make the request to the resource server.)"),
    *_rows("auth.www-authenticate", MUST, ("2025-06-18",), _AS_LOCATION,
           "MCP servers MUST use the HTTP header WWW-Authenticate when returning a 401 Unauthorized to indicate the "
           "location of the resource server metadata URL [...] (RFC 9728 section 5.1, WWW-Authenticate Response)."),
    *_rows("auth.www-authenticate", MUST, DISCOVERY_REVISIONS, _DISCOVERY,
           "MCP servers MUST implement one of the following discovery mechanisms to provide authorization server "
           "location information to MCP clients: WWW-Authenticate Header: Include the resource metadata URL in the "
           "WWW-Authenticate HTTP header under resource_metadata when returning 401 Unauthorized responses [...] "
           "Well-Known URI: Serve metadata at a well-known URI as specified in RFC9728."),
    *_rows("auth.scope-parameter", SHOULD, DISCOVERY_REVISIONS, _same(_DISCOVERY, DISCOVERY_REVISIONS,
                                                                       r2026_07_28="basic/authorization#scope-selection-strategy"),
           "MCP servers SHOULD include a scope parameter in the WWW-Authenticate header as defined in "
           "RFC 6750 Section 3 to indicate the scopes required for accessing the resource."),
    *_rows("auth.scope-challenge", SHOULD, DISCOVERY_REVISIONS, "basic/authorization#runtime-insufficient-scope-errors",
           "When a client makes a request with an access token with insufficient scope during runtime operations, "
           "the server SHOULD respond with: HTTP 403 Forbidden status code [...] WWW-Authenticate header with the "
           "Bearer scheme and additional parameters: error=\"insufficient_scope\" [...] scope=\"required_scope1 "
           "required_scope2\" [...] resource_metadata"),
    # -- this project's conventions on the same traffic: advice -----------------------------------------------
    Rule("mcpwire.era-no-batch", ADVICE, "mcpwire", "A JSON-RPC batch (an array) on a session of 2025-06-18 or "
         "2025-11-25 is refused with -32600 and a null id: those revisions carry a single message a POST body or a "
         "stdio line (the client's rule; nothing says what a server does with a batch)."),
    Rule("mcpwire.era-method-not-found", ADVICE, "mcpwire", "An unknown method on an initialize-era session is "
         "answered -32601 (the code JSON-RPC 2.0 names Method not found; those revisions name no code for it)."),
    Rule("mcpwire.delete-status", ADVICE, "mcpwire", "A DELETE ending a session is answered 200 or 204 (the "
         "transport names only 405, for a server that does not let clients end sessions)."),
    Rule("mcpwire.resource-exact", ADVICE, "mcpwire", "The resource of the protected resource metadata is the very "
         "string a client reached the server by, not only an equivalent URI (another case of the scheme or host, a "
         "default port written out or left out); the Canonical Server URI section of Authorization asks "
         "implementations to accept an uppercase scheme and host, and RFC 3986 compares those without case."),
    Rule("mcpwire.legacy-post-status", ADVICE, "mcpwire", "A message posted to the HTTP+SSE transport's endpoint "
         "is accepted with 202 and answered on the SSE stream (2024-11-05 names no status)."),
)
