"""The one error of the authorization layer: :class:`AuthError`, with a reason code.

Owns the reasons an authorization attempt is refused (client side) and the reasons a token is
refused (resource server side). A reason is a short stable string the host can branch on; the
message is for people. Misusing a flow (a verb its state table does not allow) raises
``LocalProtocolError`` instead, as everywhere in mcpwire.
"""

from __future__ import annotations

__all__ = ["AuthError"]


class AuthError(Exception):
    """An authorization step was refused; ``reason`` says which rule (see docs/auth.md).

    Client-side reasons: ``malformed_challenge``, ``malformed_metadata``, ``resource_mismatch``,
    ``no_metadata``, ``issuer_mismatch``, ``insecure_endpoint``, ``pkce_unsupported``,
    ``no_client``, ``registration_failed``, ``state_mismatch``, ``iss_missing``, ``iss_mismatch``,
    ``authorization_denied``, ``token_error``, ``malformed_token``, ``too_many_attempts``.
    Resource-server reasons: ``invalid_token``, ``expired``, ``wrong_audience``, ``wrong_issuer``,
    ``insufficient_scope``, ``invalid_dpop_proof``, ``use_dpop_nonce``.
    """

    def __init__(self, reason: str, message: str, *, status: int | None = None, oauth_error: str | None = None) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message
        #: The HTTP status of the response that caused it, when one did.
        self.status = status
        #: The OAuth ``error`` code the peer sent (RFC 6749 section 5.2), when it sent one.
        self.oauth_error = oauth_error
