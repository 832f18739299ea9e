"""Client capabilities as the protocol reads them: which capability each input request needs.

Owns (specification: Basic, ``_meta``, and Basic > Patterns > Multi Round-Trip Requests;
Client > Elicitation, Sampling and Roots, Capabilities; schema $defs ClientCapabilities,
InputRequest, MissingRequiredClientCapabilityError):
whether a ClientCapabilities object has a given member, which members an elicitation,
sampling or roots request needs, and the merged ``requiredCapabilities`` object of a -32021
error. Shared by the server (refusing an input_required answer the client cannot take) and
by hosts asking ``RequestMeta.missing_capabilities`` first.
"""

from __future__ import annotations

from typing import Any, Final, Mapping

from .errors import LocalProtocolError

__all__ = ["TASKS_EXTENSION", "client_supports", "declares_extension", "extension_required", "missing_capabilities"]

TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"
"""The tasks extension's identifier (ext-tasks specification: Extension Identifier)."""


def client_supports(caps: Mapping[str, Any], path: tuple[str, ...]) -> bool:
    """Whether ``caps`` has an object at ``path`` (for example ``("sampling", "tools")``)."""
    node: Any = caps
    for key in path:
        if type(node) is not dict or key not in node:
            return False
        node = node[key]
    return type(node) is dict


def declares_extension(caps: Mapping[str, Any], extension: str) -> bool:
    """Whether ``caps`` declares ``extension`` (an object under ``extensions``; schema
    $defs.ClientCapabilities ``extensions``)."""
    return client_supports(caps, ("extensions", extension))


def extension_required(extension: str) -> dict[str, Any]:
    """The ``requiredCapabilities`` of a -32021 for an extension the request did not declare."""
    return {"extensions": {extension: {}}}


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
        # An empty elicitation object means form support (specification: Client > Elicitation,
        # Capabilities).
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
