"""The one error hierarchy of mcpwire, and the code-to-HTTP-status table.

Owns: JSON-RPC error codes (JSON-RPC 2.0's and the three of the specification: Basic, Error
Codes), the HTTP status each code maps to on Streamable HTTP, and the exception classes the
engines raise or turn into answers.

Two sides, as in h11: a :class:`RemoteProtocolError` means the peer broke the protocol and
becomes an error response for the host to send; a :class:`LocalProtocolError` means the host
misused the API and is raised to the host. Both carry the JSON-RPC code, the HTTP status hint
and optional ``data``. Engines never choose a code by reading an exception's text.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from msgspec import UNSET, UnsetType

__all__ = [
    "ErrorCode",
    "ProtocolError",
    "RemoteProtocolError",
    "LocalProtocolError",
    "http_status_for",
    "MissingCapability",
]


class ErrorCode(IntEnum):
    """JSON-RPC error codes used by MCP 2026-07-28: the standard codes of JSON-RPC 2.0
    (<https://www.jsonrpc.org/specification#error_object>) and the MCP codes -32020 to -32022
    (<https://modelcontextprotocol.io/specification/2026-07-28/basic#error-codes>)."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    HEADER_MISMATCH = -32020
    MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
    UNSUPPORTED_PROTOCOL_VERSION = -32022
    TRANSPORT_ERROR = -32000
    """Client side only: the transport failed before a JSON-RPC answer came (never sent on the wire)."""


# The specification fixes 400 for the three MCP codes (-32021 and a missing required _meta
# field's -32602: Basic, _meta; -32020 and -32022: Basic > Transports > Streamable HTTP) and 404
# for -32601 (Streamable HTTP, Protocol Version Header). The other statuses are mcpwire's
# choice: 400 for the rest of -32700 to -32602, 500 for -32603, and HTTP 200, with the error
# object in the body, for codes outside this table (application errors).
_HTTP_STATUS: dict[int, int] = {
    ErrorCode.PARSE_ERROR: 400,
    ErrorCode.INVALID_REQUEST: 400,
    ErrorCode.METHOD_NOT_FOUND: 404,
    ErrorCode.INVALID_PARAMS: 400,
    ErrorCode.INTERNAL_ERROR: 500,
    ErrorCode.HEADER_MISMATCH: 400,
    ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    ErrorCode.UNSUPPORTED_PROTOCOL_VERSION: 400,
}


def http_status_for(code: int) -> int:
    """The HTTP status a JSON-RPC error with ``code`` is sent with on Streamable HTTP.

    400 for -32020, -32021 and -32022, for the -32602 of a request missing a required
    ``_meta`` field, and 404 for -32601 are the specification's; the rest is mcpwire's choice:
    400 for -32700, -32600 and any other -32602, 500 for -32603, 200 for any other code
    (docs/errors.md, "Codes and HTTP statuses")."""
    return _HTTP_STATUS.get(code, 200)


class ProtocolError(Exception):
    """Base of every error mcpwire raises about the protocol.

    ``code`` is the JSON-RPC error code, ``message`` the error message sent on the wire,
    ``data`` the optional error data (``UNSET`` when absent) and ``http_status`` the status
    an HTTP transport answers with. ``request_id`` is the id of the request the error
    answers when it is known (engines fill it in), else ``None``.
    """

    default_code: int = ErrorCode.INTERNAL_ERROR

    def __init__(
        self,
        message: str,
        *,
        code: int | None = None,
        data: Any | UnsetType = UNSET,
        http_status: int | None = None,
        request_id: str | int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code: int = self.default_code if code is None else code
        self.data = data
        self.http_status: int = http_status_for(self.code) if http_status is None else http_status
        # The id of the request the error answers, when it could be read; None otherwise.
        self.request_id = request_id

    def __repr__(self) -> str:
        extra = "" if self.data is UNSET else f", data={self.data!r}"
        return f"{type(self).__name__}({self.message!r}, code={self.code}{extra})"


class RemoteProtocolError(ProtocolError):
    """The peer broke the protocol. Engines turn it into an error answer for the host to send."""

    default_code = ErrorCode.INVALID_REQUEST


class LocalProtocolError(ProtocolError):
    """The host misused the API (for example answered a request twice). Raised to the host."""

    default_code = ErrorCode.INTERNAL_ERROR


class MissingCapability(RemoteProtocolError):
    """-32021: an input request needs a capability the request did not declare (HTTP 400)."""

    default_code = ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY

    def __init__(self, required: dict[str, Any]) -> None:
        super().__init__("Missing required client capability", data={"requiredCapabilities": required})
