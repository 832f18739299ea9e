"""Typed views of the reserved ``_meta`` keys.

Owns: the ``_meta`` key syntax (:data:`META_KEY_PATTERN`), the reserved meta key names and
$defs RequestMetaObject, ResultMetaObject,
NotificationMetaObject and SubscriptionsListenResultMetaObject (specification: Basic, ``_meta``;
Basic > Patterns > Subscriptions).

Wire types keep ``_meta`` as ``dict[str, Any]`` so keys this package does not know survive. The
Structs here are views over the reserved keys: read one with ``msgspec.convert(params.meta,
RequestMetaObject)`` (unknown keys are ignored; a missing required key or a wrong shape raises
``msgspec.ValidationError``), and build one with ``msgspec.to_builtins(RequestMetaObject(...))``,
merging any other keys into the resulting dict.
"""

from __future__ import annotations

from typing import Final

import msgspec
from msgspec import UNSET, UnsetType

from ._base import Implementation, LoggingLevel, ProgressToken, RequestId, WireType
from ._capabilities import ClientCapabilities

__all__ = [
    "CLIENT_CAPABILITIES_META_KEY",
    "CLIENT_INFO_META_KEY",
    "LOG_LEVEL_META_KEY",
    "META_KEY_PATTERN",
    "PROGRESS_TOKEN_META_KEY",
    "PROTOCOL_VERSION_META_KEY",
    "SERVER_INFO_META_KEY",
    "SUBSCRIPTION_ID_META_KEY",
    "NotificationMetaObject",
    "RequestMetaObject",
    "ResultMetaObject",
    "SubscriptionsListenResultMetaObject",
]

_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
META_KEY_PATTERN: Final[str] = (
    rf"(?:{_LABEL}(?:\.{_LABEL})*/)?(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?"
)
"""The syntax of a ``_meta`` key ($defs.MetaObject; the key name format of ``_meta`` in
<https://modelcontextprotocol.io/specification/2026-07-28/basic>), as a regular
expression to ``re.fullmatch``: an optional prefix of dot-separated labels (each starting with
a letter, ending with a letter or digit, hyphens inside) followed by ``/``, then a name that is
empty or starts and ends with a letter or digit (``-``, ``_`` and ``.`` inside). Servers refuse
a request ``_meta`` with any other key (-32602)."""

PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_META_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_META_KEY = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_META_KEY = "io.modelcontextprotocol/logLevel"
# The one reserved key without a prefix ($defs.RequestMetaObject).
PROGRESS_TOKEN_META_KEY = "progressToken"
SERVER_INFO_META_KEY = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID_META_KEY = "io.modelcontextprotocol/subscriptionId"


class RequestMetaObject(WireType, frozen=True, kw_only=True):
    """$defs.RequestMetaObject: the ``_meta`` every request carries (the per-request protocol
    fields of ``_meta``: <https://modelcontextprotocol.io/specification/2026-07-28/basic>)."""

    protocol_version: str = msgspec.field(name=PROTOCOL_VERSION_META_KEY)
    client_capabilities: ClientCapabilities = msgspec.field(name=CLIENT_CAPABILITIES_META_KEY)
    client_info: Implementation | UnsetType = msgspec.field(default=UNSET, name=CLIENT_INFO_META_KEY)
    log_level: LoggingLevel | UnsetType = msgspec.field(default=UNSET, name=LOG_LEVEL_META_KEY)
    progress_token: ProgressToken | UnsetType = UNSET


class ResultMetaObject(WireType, frozen=True, kw_only=True):
    """$defs.ResultMetaObject: the reserved ``_meta`` keys of a result (the per-response
    protocol fields of ``_meta``: <https://modelcontextprotocol.io/specification/2026-07-28/basic>)."""

    server_info: Implementation | UnsetType = msgspec.field(default=UNSET, name=SERVER_INFO_META_KEY)


class NotificationMetaObject(WireType, frozen=True, kw_only=True):
    """$defs.NotificationMetaObject: ties a notification to its subscriptions/listen stream."""

    subscription_id: RequestId | UnsetType = msgspec.field(default=UNSET, name=SUBSCRIPTION_ID_META_KEY)


class SubscriptionsListenResultMetaObject(WireType, frozen=True, kw_only=True):
    """$defs.SubscriptionsListenResultMetaObject: ``_meta`` of the listen stream's final result."""

    subscription_id: RequestId = msgspec.field(name=SUBSCRIPTION_ID_META_KEY)
    server_info: Implementation | UnsetType = msgspec.field(default=UNSET, name=SERVER_INFO_META_KEY)
