"""Client and server capabilities.

Owns: $defs ClientCapabilities and ServerCapabilities, with their sub-objects, which the schema
writes inline and this module names (RootsCapability, SamplingCapability,
ElicitationCapability; ToolsCapability, ResourcesCapability, PromptsCapability).

Capabilities are per request in 2026-07-28: the client sends ClientCapabilities in every
request's ``_meta`` (specification: Basic, ``_meta``) and the server returns ServerCapabilities
from server/discover (specification: Server > Discovery). A present empty object means
"supported with no options", so the sub-objects are Structs whose fields all default to
``UNSET``: ``RootsCapability()`` encodes as ``{}``. JSON-object-valued entries the schema leaves open (``completions``,
``logging``, ``experimental``, ``extensions`` and the options inside ``sampling`` and
``elicitation``) stay ``dict[str, Any]``.
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET, UnsetType

from ._base import WireType

__all__ = [
    "ClientCapabilities",
    "ElicitationCapability",
    "PromptsCapability",
    "ResourcesCapability",
    "RootsCapability",
    "SamplingCapability",
    "ServerCapabilities",
    "ToolsCapability",
]


class RootsCapability(WireType, frozen=True, kw_only=True):
    """ClientCapabilities.roots: the client answers roots/list input requests.

    The 2026-07-28 schema gives it no properties (``listChanged`` is gone with server-to-client
    notifications); a ``listChanged`` sent by an older client is ignored on decode.
    """


class SamplingCapability(WireType, frozen=True, kw_only=True):
    """ClientCapabilities.sampling: the client answers sampling/createMessage input requests.

    ``context`` is needed for ``include_context`` other than ``"none"``, ``tools`` for
    ``tools``/``tool_choice`` (schema $defs.ClientCapabilities, ``sampling``).
    """

    context: dict[str, Any] | UnsetType = UNSET
    tools: dict[str, Any] | UnsetType = UNSET


class ElicitationCapability(WireType, frozen=True, kw_only=True):
    """ClientCapabilities.elicitation: the client answers elicitation/create input requests.

    An empty object counts as form support; URL mode needs ``url``
    (<https://modelcontextprotocol.io/specification/2026-07-28/client/elicitation>, Capabilities).
    """

    form: dict[str, Any] | UnsetType = UNSET
    url: dict[str, Any] | UnsetType = UNSET


class ClientCapabilities(WireType, frozen=True, kw_only=True):
    """$defs.ClientCapabilities: sent in every request's ``_meta``; ``{}`` means none."""

    roots: RootsCapability | UnsetType = UNSET
    sampling: SamplingCapability | UnsetType = UNSET
    elicitation: ElicitationCapability | UnsetType = UNSET
    experimental: dict[str, dict[str, Any]] | UnsetType = UNSET
    # Keys are extension ids, following the _meta key syntax with a mandatory prefix (schema
    # $defs.ClientCapabilities, extensions); values are their settings objects.
    extensions: dict[str, dict[str, Any]] | UnsetType = UNSET


class ToolsCapability(WireType, frozen=True, kw_only=True):
    """ServerCapabilities.tools: the server lists and calls tools."""

    list_changed: bool | UnsetType = UNSET


class ResourcesCapability(WireType, frozen=True, kw_only=True):
    """ServerCapabilities.resources: the server lists and reads resources.

    ``subscribe`` means subscriptions/listen honours ``resourceSubscriptions``.
    """

    subscribe: bool | UnsetType = UNSET
    list_changed: bool | UnsetType = UNSET


class PromptsCapability(WireType, frozen=True, kw_only=True):
    """ServerCapabilities.prompts: the server lists and gets prompts."""

    list_changed: bool | UnsetType = UNSET


class ServerCapabilities(WireType, frozen=True, kw_only=True):
    """$defs.ServerCapabilities: what server/discover advertises.

    There is no subscriptions key; listen support is implied by a ``list_changed`` or
    ``subscribe`` flag (schema $defs.ServerCapabilities; specification: Basic > Patterns >
    Subscriptions).
    """

    tools: ToolsCapability | UnsetType = UNSET
    resources: ResourcesCapability | UnsetType = UNSET
    prompts: PromptsCapability | UnsetType = UNSET
    completions: dict[str, Any] | UnsetType = UNSET
    logging: dict[str, Any] | UnsetType = UNSET
    experimental: dict[str, dict[str, Any]] | UnsetType = UNSET
    extensions: dict[str, dict[str, Any]] | UnsetType = UNSET
