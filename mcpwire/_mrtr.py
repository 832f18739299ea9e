"""Multi round-trip requests (SEP-2322): the protocol rules, without the token format.

Owns (wire reference section 10): which client capability each input request needs and the
merged ``requiredCapabilities`` of the -32021 error (10.2); the structural checks of
``inputResponses`` and ``requestState`` at admission (10.3); the shape rule of an
input_required result (10.1). Token signing lives in ``_tokens``.
"""

from __future__ import annotations

from typing import Any, Mapping

from msgspec import UNSET

from ._errors import ErrorCode, LocalProtocolError, RemoteProtocolError
from ._meta import client_supports

__all__ = ["missing_capabilities", "check_input_responses", "check_request_state", "MissingCapability"]


class MissingCapability(RemoteProtocolError):
    """-32021: an input request needs a capability the request did not declare (HTTP 400)."""

    default_code = ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY

    def __init__(self, required: dict[str, Any]) -> None:
        super().__init__("Missing required client capability", data={"requiredCapabilities": required})


def _needs(request: Mapping[str, Any]) -> list[tuple[str, ...]]:
    method = request.get("method")
    params = request.get("params") or {}
    if method == "elicitation/create":
        if params.get("mode") == "url":
            return [("elicitation", "url")]
        return [("elicitation", "form")]
    if method == "sampling/createMessage":
        needs: list[tuple[str, ...]] = [("sampling",)]
        if "tools" in params or "toolChoice" in params:
            needs.append(("sampling", "tools"))
        if params.get("includeContext", "none") != "none":
            needs.append(("sampling", "context"))
        return needs
    if method == "roots/list":
        return [("roots",)]
    raise LocalProtocolError(f"Unknown input request method {method!r}")


def _supported(caps: Mapping[str, Any], path: tuple[str, ...]) -> bool:
    if path == ("elicitation", "form"):
        # An empty elicitation object means form support (section 10.2).
        elicitation = caps.get("elicitation")
        return type(elicitation) is dict and (not elicitation or "form" in elicitation)
    return client_supports(caps, path)


def missing_capabilities(requests: Mapping[str, Mapping[str, Any]], caps: Mapping[str, Any]) -> dict[str, Any]:
    """The ClientCapabilities object the requests need and ``caps`` lacks ({} when none)."""
    missing: dict[str, Any] = {}
    for request in requests.values():
        for path in _needs(request):
            if not _supported(caps, path):
                node = missing
                for key in path:
                    node = node.setdefault(key, {})
    return missing


def check_input_responses(value: Any) -> dict[str, dict[str, Any]] | None:
    """Admission check of ``inputResponses`` (section 10.3); ``None`` when absent."""
    if value is UNSET:
        return None
    if type(value) is not dict:
        raise RemoteProtocolError("inputResponses must be an object", code=ErrorCode.INVALID_PARAMS)
    for response in value.values():
        if type(response) is not dict:
            raise RemoteProtocolError(
                "inputResponses must map string IDs to bare result objects", code=ErrorCode.INVALID_PARAMS
            )
    return value


def check_request_state(value: Any) -> str | None:
    """Admission check of ``requestState``; ``None`` when absent."""
    if value is UNSET:
        return None
    if type(value) is not str:
        raise RemoteProtocolError("requestState must be a string", code=ErrorCode.INVALID_PARAMS)
    return value
