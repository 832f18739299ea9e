"""The authorization flow's state table.

Owns the states of one :class:`~mcpwire.auth.AuthorizationFlow` and every legal move between
them. The flow changes state only through this machine; ``python -m mcpwire._diagrams``
renders it into docs/state-machines.md. Moves are named after what caused them (a document
found, a candidate URL that failed, the host's stored credentials, the redirect), so one
input verb of the flow (``receive_response``) can lead to different moves.
"""

from __future__ import annotations

from enum import Enum
from typing import Final

from ..wire.statemachine import StateMachine

__all__ = ["FlowState", "FLOW"]


class FlowState(Enum):
    """Where an authorization flow is (``AuthorizationFlow.state``)."""

    __hash__ = object.__hash__

    START = "start"                # built; start() not called yet
    RESOURCE_METADATA = "resource_metadata"  # fetching the protected resource metadata (RFC 9728)
    SERVER_METADATA = "server_metadata"      # fetching the authorization server metadata (RFC 8414 / OIDC)
    CREDENTIALS = "credentials"    # asked the host for what it holds for (issuer, resource)
    REGISTER = "register"          # dynamic client registration (RFC 7591)
    EXCHANGE = "exchange"          # token exchange at the enterprise identity provider (RFC 8693)
    AUTHORIZE = "authorize"        # the user agent is at the authorization endpoint
    TOKEN = "token"                # a token request is out (any grant, or a refresh)
    DONE = "done"                  # authorized: the credentials were returned
    FAILED = "failed"              # refused; AuthError was raised


_F = FlowState
FLOW: Final = StateMachine[FlowState]("Authorization flow (client)", _F.START, {
    (_F.START, "start"): _F.RESOURCE_METADATA,
    (_F.RESOURCE_METADATA, "try_next"): _F.RESOURCE_METADATA,
    (_F.RESOURCE_METADATA, "found"): _F.SERVER_METADATA,
    (_F.SERVER_METADATA, "try_next"): _F.SERVER_METADATA,
    (_F.SERVER_METADATA, "found"): _F.CREDENTIALS,
    (_F.CREDENTIALS, "stored_token"): _F.DONE,
    (_F.CREDENTIALS, "refresh"): _F.TOKEN,
    (_F.CREDENTIALS, "register"): _F.REGISTER,
    (_F.CREDENTIALS, "authorize"): _F.AUTHORIZE,
    (_F.CREDENTIALS, "exchange"): _F.EXCHANGE,
    (_F.CREDENTIALS, "request_token"): _F.TOKEN,
    (_F.REGISTER, "authorize"): _F.AUTHORIZE,
    (_F.REGISTER, "request_token"): _F.TOKEN,
    (_F.EXCHANGE, "request_token"): _F.TOKEN,
    (_F.AUTHORIZE, "redirect"): _F.TOKEN,
    (_F.TOKEN, "retry_with_nonce"): _F.TOKEN,
    (_F.TOKEN, "refresh_refused"): _F.AUTHORIZE,
    (_F.TOKEN, "refresh_refused_grant"): _F.TOKEN,
    (_F.TOKEN, "tokens"): _F.DONE,
    **{(state, "fail"): _F.FAILED for state in _F if state not in (_F.DONE, _F.FAILED)},
})  # DONE and FAILED are final: any verb there is the host's mistake
