"""Request and notification ``_meta``: the per-request protocol metadata of 2026-07-28.

Owns (specification: Basic, ``_meta``: the key name format and the per-request protocol
fields; schema $defs RequestMetaObject, MetaObject, ClientCapabilities, Implementation, Icon,
LoggingLevel, ProgressToken):

- applying the ``_meta`` key syntax (``types.META_KEY_PATTERN``, the one home of the rule) and
  the reserved prefixes;
- validation of a request's ``_meta``, each failure with its code and message. The
  specification fixes -32602 for a missing required field or an unknown log level and -32022
  for an unsupported version; the order is mcpwire's, numbered here and in the code: (1) ``_meta``
  an object, absent meaning ``{}``; (2) every key follows the key syntax; (3)
  ``progressToken`` a request id within mcpwire's bounds; (4) ``logLevel`` a known level; (5)
  ``protocolVersion`` present and a string; (6) on HTTP, the MCP-Protocol-Version header equal
  to it, which is HTTP admission's, in ``server/engine.py``, run before the method lookup; (7)
  the version supported; (8) ``clientInfo``, if present, an Implementation; (9)
  ``clientCapabilities`` present and a valid ClientCapabilities object. This module runs 1-5
  and 7-9;
- the shape checks for a notification's optional ``_meta``;
- the log-level order used to gate ``notifications/message``.

Capabilities are per request: a :class:`RequestMeta` is built for each request and never
cached or merged with another (schema RequestMetaObject: servers MUST NOT infer capabilities
from prior requests).
"""

from __future__ import annotations

import re
from typing import Any, Final, Literal, Mapping

import msgspec
from msgspec import UNSET

from .envelope import check_request_id
from ..types._meta import (
    CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, LOG_LEVEL_META_KEY, META_KEY_PATTERN, PROGRESS_TOKEN_META_KEY,
    PROTOCOL_VERSION_META_KEY, SERVER_INFO_META_KEY, SUBSCRIPTION_ID_META_KEY,
)
from .capabilities import missing_capabilities
from .errors import ErrorCode, RemoteProtocolError
from .versions import PROTOCOL_VERSION

__all__ = [
    "PROTOCOL_VERSION",
    "PROTOCOL_VERSION_META_KEY",
    "CLIENT_CAPABILITIES_META_KEY",
    "CLIENT_INFO_META_KEY",
    "LOG_LEVEL_META_KEY",
    "PROGRESS_TOKEN_META_KEY",
    "SERVER_INFO_META_KEY",
    "SUBSCRIPTION_ID_META_KEY",
    "LOG_LEVELS",
    "LogLevel",
    "RequestMeta",
    "is_meta_key",
    "is_reserved_meta_key",
    "parse_request_meta",
    "check_notification_meta",
    "check_client_capabilities",
    "log_level_enabled",
]

LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
# RFC 5424 severities, least severe first: a request at level L receives messages >= L.
LOG_LEVELS: Final[tuple[str, ...]] = (
    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency",
)
_LEVEL_RANK: Final = {name: rank for rank, name in enumerate(LOG_LEVELS)}

_KEY_RE: Final = re.compile(META_KEY_PATTERN)  # the syntax is the wire types' (MetaObject)
_KNOWN_KEYS: Final = frozenset(
    {PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, LOG_LEVEL_META_KEY, PROGRESS_TOKEN_META_KEY}
)
_URI_RE: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S*")


class RequestMeta(msgspec.Struct, frozen=True, kw_only=True):
    """The validated ``_meta`` of one request.

    ``client_capabilities`` is the request's ClientCapabilities object as sent (validated);
    ``client_info`` the Implementation object or ``None``; ``raw`` the whole ``_meta`` object,
    including keys mcpwire does not interpret.
    """

    protocol_version: str
    client_capabilities: dict[str, Any]
    client_info: dict[str, Any] | None = None
    log_level: str | None = None
    progress_token: str | int | None = None
    raw: dict[str, Any] = msgspec.field(default_factory=dict)

    def missing_capabilities(self, requests: Mapping[str, Any]) -> dict[str, Any]:
        """The ClientCapabilities this request lacks for ``requests`` (ids to input requests,
        typed or plain), merged; ``{}`` when the client can answer them all (the schema's
        $defs.MissingRequiredClientCapabilityError ``requiredCapabilities``).

        Use it to ask only for what the client declared; an input_required answer that asks
        for more is refused by the engine with -32021 naming exactly this object.
        """
        plain = {k: msgspec.to_builtins(v) for k, v in requests.items()}
        return missing_capabilities(plain, self.client_capabilities)


def is_meta_key(key: str) -> bool:
    """Whether ``key`` follows the ``_meta`` key syntax (schema $defs.MetaObject)."""
    return key in _KNOWN_KEYS or _KEY_RE.fullmatch(key) is not None


def is_reserved_meta_key(key: str) -> bool:
    """Whether ``key`` has a prefix reserved for MCP (second label ``modelcontextprotocol`` or ``mcp``)."""
    prefix, slash, _ = key.partition("/")
    if not slash:
        return False
    labels = prefix.split(".")
    return len(labels) >= 2 and labels[1] in ("modelcontextprotocol", "mcp")


def log_level_enabled(threshold: str | None, level: str) -> bool:
    """Whether a message at ``level`` goes to a request that asked for ``threshold``."""
    return threshold is not None and _LEVEL_RANK[level] >= _LEVEL_RANK[threshold]


def _invalid_params(message: str, data: Any = UNSET) -> RemoteProtocolError:
    return RemoteProtocolError(message, code=ErrorCode.INVALID_PARAMS, data=data)


def _check_meta_object(meta: Any) -> dict[str, Any]:
    if meta is UNSET:  # absent is {}; null is not an object (step 1 of mcpwire's order)
        return {}
    if type(meta) is not dict:
        raise _invalid_params("_meta must be an object")
    if not meta.keys() <= _KNOWN_KEYS:  # only unfamiliar keys need the syntax check
        for key in meta:
            if key not in _KNOWN_KEYS and _KEY_RE.fullmatch(key) is None:
                raise _invalid_params("_meta contains an invalid key or non-JSON value")
    token = meta.get(PROGRESS_TOKEN_META_KEY, UNSET)
    if token is not UNSET and check_request_id(token) is None:
        raise _invalid_params("progressToken must be a string of at most 256 bytes or an int64 integer")
    level = meta.get(LOG_LEVEL_META_KEY, UNSET)
    if level is not UNSET and (type(level) is not str or level not in _LEVEL_RANK):
        raise _invalid_params("Invalid MCP request log level")
    return meta


def parse_request_meta(
    meta: Any,
    *,
    supported_versions: tuple[str, ...] = (PROTOCOL_VERSION,),
    offered_versions: tuple[str, ...] | None = None,
) -> RequestMeta:
    """Validate a request's ``_meta`` (already JSON-decoded) in mcpwire's order (the module
    docstring's steps 1-5 and 7-9). A -32022 names ``offered_versions`` (by default
    ``supported_versions``) as the supported ones.

    ``meta`` is ``UNSET`` when the request had none (``None``, a JSON ``null``, is
    -32602 like any other non-object, as a ``null`` clientCapabilities is). Raises
    :class:`RemoteProtocolError`: -32602 for shape errors, -32022 for an unsupported version.
    """
    meta = _check_meta_object(meta)  # steps 1-4
    version = meta.get(PROTOCOL_VERSION_META_KEY, UNSET)  # step 5
    if version is UNSET:
        raise _invalid_params("Missing required io.modelcontextprotocol/protocolVersion metadata")
    if type(version) is not str:
        raise _invalid_params("io.modelcontextprotocol/protocolVersion must be a string")
    # Step 6, the MCP-Protocol-Version header against this value, is HTTP admission's
    # (server/engine.py), which runs it before the method lookup.
    if version not in supported_versions:  # step 7
        raise RemoteProtocolError(
            "Unsupported protocol version",
            code=ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
            data={"requested": version, "supported": list(supported_versions if offered_versions is None
                                                          else offered_versions)},
        )
    info = meta.get(CLIENT_INFO_META_KEY, UNSET)  # step 8
    if info is not UNSET:
        _check_implementation(info)
    caps = meta.get(CLIENT_CAPABILITIES_META_KEY, UNSET)  # step 9
    if caps is UNSET:
        raise _invalid_params("Missing required client capabilities metadata")
    if type(caps) is not dict or caps:  # {} (no capabilities) is valid as it is
        check_client_capabilities(caps)
    return RequestMeta(
        protocol_version=version,
        client_capabilities=caps,
        client_info=None if info is UNSET else info,
        log_level=meta.get(LOG_LEVEL_META_KEY),
        progress_token=meta.get(PROGRESS_TOKEN_META_KEY),
        raw=meta,
    )


def check_notification_meta(meta: Any) -> dict[str, Any]:
    """Shape-check a notification's optional ``_meta`` (steps 1-4 only)."""
    return _check_meta_object(meta)


def _check_implementation(info: Any) -> None:
    if not _valid_implementation(info):
        raise _invalid_params("Client info must include string name and version")


def _valid_implementation(info: Any) -> bool:
    if type(info) is not dict or type(info.get("name")) is not str or type(info.get("version")) is not str:
        return False
    for key in ("title", "description"):
        if key in info and type(info[key]) is not str:
            return False
    site = info.get("websiteUrl", UNSET)
    if site is not UNSET and not _is_uri(site):
        return False
    icons = info.get("icons", UNSET)
    return icons is UNSET or _valid_icons(icons)


def _is_uri(value: Any) -> bool:
    return type(value) is str and _URI_RE.fullmatch(value) is not None


def _valid_icons(icons: Any) -> bool:
    if type(icons) is not list:
        return False
    for icon in icons:
        if type(icon) is not dict or not _is_uri(icon.get("src")):
            return False
        if "mimeType" in icon and type(icon["mimeType"]) is not str:
            return False
        sizes = icon.get("sizes", [])
        if type(sizes) is not list or any(type(s) is not str for s in sizes):
            return False
        if "theme" in icon and icon["theme"] not in ("light", "dark"):
            return False
    return True


def _is_object_map(value: Any, keys: tuple[str, ...]) -> bool:
    # A capability object whose listed sub-keys, when present, are objects.
    return type(value) is dict and all(type(value[k]) is dict for k in keys if k in value)


def _check_roots(value: Any) -> None:
    if type(value) is not dict:
        raise _invalid_params("Client capability roots must be an object")


def _check_sampling(value: Any) -> None:
    if not _is_object_map(value, ("context", "tools")):
        raise _invalid_params("Client capability sampling must be an object with object context and tools")


def _check_elicitation(value: Any) -> None:
    if not _is_object_map(value, ("form", "url")):
        raise _invalid_params("Client capability elicitation must be an object with object form and url")
    if value and "form" not in value and "url" not in value:
        raise _invalid_params("Client capability elicitation must declare form or url")


def _check_experimental(value: Any) -> None:
    if type(value) is not dict or any(type(v) is not dict for v in value.values()):
        raise _invalid_params("Client capability experimental must map names to objects")


def _check_extensions(value: Any) -> None:
    if type(value) is not dict or any(type(v) is not dict or "/" not in k or not is_meta_key(k) for k, v in value.items()):
        raise _invalid_params("Client capability extensions must map prefixed identifiers to objects")


# Only the capabilities present are checked: one dict lookup per key sent. Unknown keys are
# allowed (the schema leaves ClientCapabilities open).
_CAPABILITY_CHECKS: Final = {
    "roots": _check_roots,
    "sampling": _check_sampling,
    "elicitation": _check_elicitation,
    "experimental": _check_experimental,
    "extensions": _check_extensions,
}


def check_client_capabilities(caps: Any) -> None:
    """Validate a ClientCapabilities object (step 9 of mcpwire's order; schema $defs.ClientCapabilities)."""
    if type(caps) is not dict:
        raise _invalid_params("Client capabilities must be an object")
    for key, value in caps.items():
        check = _CAPABILITY_CHECKS.get(key)
        if check is not None:
            check(value)
