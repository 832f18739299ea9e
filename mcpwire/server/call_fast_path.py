"""The call fast path: calls whose head was admitted before go straight to their body.

Owns: the memo of admitted ``tools/call`` heads (a "fast call" each), and each tool's typed
decoder of the whole message.

Why it is exact. Before the body, a stateless POST is admitted on its method, its target, the
values of :data:`FAST_PATH_HEADS` and the server's configuration: transport admission (405, 404,
403, 415, 406), era routing, and the header checks. Three checks compare a header with
the body: Mcp-Method with its method, Mcp-Name with its name, MCP-Protocol-Version with the
version its ``_meta`` names; each is an equality. When no header repeats, every one of these
checks is a function of those inputs, so a head equal to one whose call was admitted passes
again, and the body must only say the same three things. The fast path keeps what they were (the
tool, the version) and reads the whole message in one typed decode, the tool's arguments
inside, with the envelope's rules (``decode_request_as``).
Mcp-Param-* headers are checked against the body too: a tool that has any gets no fast path.
What the client takes (``accept.py``, read from its Accept at admission) is a function of the
head too: the fast call keeps the decision the head was admitted with, so its answers are framed
exactly as the full way frames them.

What the fast path does not take exactly goes the full way, which answers it as ever: another body
(a retry with ``inputResponses`` or ``requestState``, a wrong name or version, arguments its
type refuses), any error, a head that repeats a header, a tool that was replaced since, another
:class:`~mcpwire.HttpPolicy`. The fast path itself only ever admits.

Bounded: at most ``bound`` heads (``Server(call_memo=...)``), each keeping at most
:data:`MAX_KEY_BYTES` of method, target and header values (a longer head is not remembered);
a full memo starts again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

import msgspec

from ..wire.envelope import request_fields
from ..wire.headers import MCP_METHOD, MCP_NAME, MCP_PROTOCOL_VERSION, MCP_SESSION_ID
from ..wire.params import CallToolParams
from .accept import Accepts
from .catalog import ToolEntry
from .exchange import HttpExchange, http_exchange
from .http import HttpPolicy

__all__ = ["FAST_PATH_HEADS", "MAX_KEY_BYTES", "CallFastPath", "Key", "FastCall"]

FAST_PATH_HEADS: Final = (
    b"host", b"origin", b"content-type", b"accept", MCP_PROTOCOL_VERSION, MCP_METHOD, MCP_NAME, MCP_SESSION_ID,
)
"""Every header whose value a stateless POST's admission reads, up to its Mcp-Param-* headers
(Content-Length aside: the body's own size is checked on every request). A key holds each
one's value (Mcp-Method's is always tools/call)."""

MAX_KEY_BYTES: Final = 2048
"""The most a remembered head keeps: ``call_memo`` heads hold at most that many times this."""

_CALL: Final = b"tools/call"

Key = tuple[Any, ...]


class FastCall(msgspec.Struct, frozen=True):
    """What an admitted call's head was admitted for."""

    entry: ToolEntry
    version: str
    """The protocol version the header and ``_meta`` named."""
    policy: HttpPolicy
    decoder: msgspec.json.Decoder[Any]
    """The whole message, for :func:`~mcpwire.wire.envelope.decode_request_as`: its params a
    :class:`CallToolParams` with the tool's arguments type."""
    digits: int
    """A ``Content-Length`` of bare digits, fewer than these, is within ``policy.max_body_bytes``
    (the digits of that limit): the head check's common case, without parsing the number."""
    accepts: Accepts
    """What the client takes, as admission read the head's Accept."""
    exchange: type[HttpExchange]
    """The exchange that frames its answers so (``http_exchange(accepts)``)."""


class CallFastPath:
    """The memo: a request head (its method, target and :data:`FAST_PATH_HEADS` values) to its fast call."""

    __slots__ = ("_bound", "_decoders", "_fast_calls", "find")

    def __init__(self, bound: int) -> None:
        self._bound = bound
        self._fast_calls: dict[Key, FastCall] = {}
        self.find: Callable[[Key], FastCall | None] = self._fast_calls.get
        """``find(key)``: the key's fast call, or ``None``."""
        self._decoders: dict[str, tuple[ToolEntry, msgspec.json.Decoder[Any]]] = {}

    def key(self, method: Any, target: Any, index: Mapping[bytes, bytes]) -> Key | None:
        """The head's key when it may have a fast path: a tools/call (by its Mcp-Method), and a memo
        that keeps any; else ``None``. ``index``: its headers, each name once (:func:`index_headers`)."""
        get = index.get
        if get(MCP_METHOD) != _CALL or not self._bound:
            return None
        # FAST_PATH_HEADS, written out: a tuple of calls is a third cheaper than map() over them.
        return (method, target, get(b"host"), get(b"origin"), get(b"content-type"), get(b"accept"),
                get(MCP_PROTOCOL_VERSION), get(MCP_NAME), get(MCP_SESSION_ID))

    def learn(self, key: Key, entry: ToolEntry, version: str, policy: HttpPolicy, accepts: Accepts) -> None:
        """Remember that a call on this head was admitted for ``entry`` and ``version``, its
        client taking ``accepts``. Tools whose arguments are not a Struct, or that have
        Mcp-Param-* headers, get no fast path."""
        arguments = entry.arguments_decoder
        if arguments is None or entry.param_headers:
            return
        if sum(len(part) for part in key if part is not None) > MAX_KEY_BYTES:
            return
        fast = self._fast_calls.get(key)
        if fast is not None and fast.entry is entry and fast.policy is policy and fast.version == version:
            return  # the body did not fit the fast call, the head did
        name = entry.tool.name
        known = self._decoders.get(name)
        if known is None or known[0] is not entry:
            params = msgspec.defstruct(
                f"{name}CallParams", [("arguments", arguments.type)], bases=(CallToolParams,), kw_only=True,
                gc=False)
            message = msgspec.defstruct(
                f"{name}Call", [*request_fields("tools/call"), ("params", params)], kw_only=True, gc=False)
            known = self._decoders[name] = (entry, msgspec.json.Decoder(message))
        if len(self._fast_calls) >= self._bound:
            self._fast_calls.clear()
            self._decoders = {name: known}
        self._fast_calls[key] = FastCall(
            entry, version, policy, known[1], len(str(policy.max_body_bytes)), accepts, http_exchange(accepts))
