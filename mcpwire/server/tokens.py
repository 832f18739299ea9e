"""Signed opaque tokens: MRTR ``requestState`` and pagination cursors.

Owns: the :class:`Keyring` of HMAC keys, the request-state token of multi round-trip requests
(Basic > Patterns > Multi round-trip requests, schema ``$defs.InputRequiredResult.requestState``), the
pagination cursor (Server > Utilities > Pagination, ``$defs.PaginatedRequestParams.cursor``), and their errors.

Token layout, both kinds: ``<prefix>.<kid>.<b64url(payload JSON)>.<b64url(mac)>`` without
padding, ASCII only, where ``mac = HMAC-SHA256(key[kid], label + kid + "." + payload_b64)``.
The prefix is ``mcpwire1`` (request state) or ``mcpcur1`` (cursor); the label is
``b"mcpwire-request-state-v1\\x00"`` or ``b"mcpwire-cursor-v1\\x00"``. Payloads are JSON arrays:
``[issuedAt, expiresAt, b64url(SHA-256(method, scope)), data]`` (unix seconds) for a request
state (the scope is the request's params and, when it has one, the principal it was issued to:
:func:`request_scope`), ``[method, offset, b64url(SHA-256(catalog_version))]`` for a cursor.

Invariants:

* No clock, no randomness: ``now`` and the keys come in as arguments. Tokens are signed, not
  encrypted (clients can read the payload) and a request state is replayable until it expires.
* Length is checked before any decoding or HMAC work, and the MAC (compared in constant time,
  on its canonical base64 text so no two spellings of one MAC exist) is checked before the
  payload is base64- or JSON-decoded: attacker-controlled JSON is never parsed.
* Every verification failure of a request state raises the same :class:`InvalidRequestState`
  (-32602, no data); the failing check is only on its ``reason`` attribute, for the host's logs.
* Issuing is deterministic: same inputs, same token. Different data or ``now`` give different
  tokens.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import math
import re
from collections.abc import Mapping
from typing import Annotated, Any, Final, TypeVar

import msgspec

from ..wire.errors import ErrorCode, LocalProtocolError, RemoteProtocolError

__all__ = [
    "Keyring", "RequestStateCodec", "CursorCodec", "request_scope", "check_now",
    "InvalidRequestState", "InvalidCursor", "ExpiredCursor",
]

_KEY_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")
_STATE_PREFIX, _STATE_LABEL = "mcpwire1", b"mcpwire-request-state-v1\x00"
_CURSOR_PREFIX, _CURSOR_LABEL = "mcpcur1", b"mcpwire-cursor-v1\x00"
# Params keys that change between MRTR rounds of one logical request (multi round-trip requests), so they
# must not take part in the scope a request state is bound to.
_UNSCOPED_PARAMS = frozenset({"_meta", "requestState", "inputResponses"})
_P = TypeVar("_P")


class _TokenError(RemoteProtocolError):
    # One fixed message per class so the wire never tells which check failed; ``reason``
    # names it for the host's logs.
    default_code = ErrorCode.INVALID_PARAMS
    wire_message = ""

    def __init__(self, reason: str) -> None:
        super().__init__(self.wire_message)
        self.reason = reason


class InvalidRequestState(_TokenError):
    """A ``requestState`` failed verification (-32602). ``reason`` is for logs only."""

    wire_message = "Invalid or expired request state"


class InvalidCursor(_TokenError):
    """A pagination cursor is malformed, oversize, forged or for another method (-32602)."""

    wire_message = "Invalid pagination cursor"


class ExpiredCursor(_TokenError):
    """A genuine pagination cursor whose catalog has changed since it was issued (-32602)."""

    wire_message = "Pagination cursor has expired"


class Keyring:
    """HMAC-SHA256 keys by key id, shared by every server process that must accept a token.

    New tokens are signed with the ``current`` key; any key present verifies. Rotation across
    several processes, without rejecting tokens in flight:

    1. Add the new key (not yet current) to every process's keyring and deploy.
    2. Make the new key current everywhere; tokens now carry its id.
    3. After the longest request-state TTL (``max_ttl_seconds``) has passed, drop the old key.
       Cursors have no time expiry: one signed with a dropped key becomes ``InvalidCursor`` and
       the client restarts the listing.

    Keys are at least 32 bytes; ids match ``[A-Za-z0-9_-]{1,32}``. Keys never appear in repr.
    """

    __slots__ = ("_keys", "_current")

    def __init__(self, keys: Mapping[str, bytes], current: str) -> None:
        checked: dict[str, bytes] = {}
        for kid, key in keys.items():
            if not isinstance(kid, str) or not _KEY_ID.fullmatch(kid):
                raise LocalProtocolError(f"Keyring key id {kid!r} must match {_KEY_ID.pattern}")
            if not isinstance(key, bytes):  # immutable, so the keyring cannot change under us
                raise LocalProtocolError(f"Keyring key {kid!r} must be bytes")
            if len(key) < 32:
                raise LocalProtocolError(f"Keyring key {kid!r} must be at least 32 bytes")
            checked[kid] = key
        if not isinstance(current, str) or current not in checked:
            raise LocalProtocolError(f"Keyring current key id {current!r} is not in the keyring")
        self._keys = checked
        self._current = current

    @classmethod
    def single(cls, secret: bytes, key_id: str = "k1") -> Keyring:
        """A keyring of one key, current."""
        return cls({key_id: secret}, key_id)

    @classmethod
    def from_json(cls, document: str | bytes) -> Keyring:
        """A keyring from its configuration document, the same on every process:
        ``{"current": "k2", "keys": {"k1": "<base64url>", "k2": "<base64url>"}}`` (each key at
        least 32 bytes once decoded; ids as above). LocalProtocolError naming what is wrong,
        never the keys."""
        try:
            data = msgspec.json.decode(document, type=_KeyringDocument)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise LocalProtocolError(f"Keyring document: {exc}") from None
        keys: dict[str, bytes] = {}
        for kid, text in data.keys.items():
            try:
                keys[kid] = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
            except (ValueError, TypeError):
                raise LocalProtocolError(f"Keyring document: key {kid!r} is not base64url") from None
        return cls(keys, data.current)

    def to_json(self) -> bytes:
        """The configuration document of this keyring (it holds the keys: keep it secret)."""
        return msgspec.json.encode(_KeyringDocument(current=self._current, keys={k: _b64(v) for k, v in self._keys.items()}))

    @property
    def current(self) -> str:
        """The id of the key new tokens are signed with."""
        return self._current

    @property
    def key_ids(self) -> tuple[str, ...]:
        """Every id that verifies, sorted."""
        return tuple(sorted(self._keys))

    def __repr__(self) -> str:
        return f"Keyring(key_ids={list(self.key_ids)!r}, current={self._current!r})"

    def _sign(self, label: bytes, kid: str, payload_b64: str) -> str | None:
        key = self._keys.get(kid)
        if key is None:
            return None
        message = label + kid.encode("ascii") + b"." + payload_b64.encode("ascii")
        return _b64(hmac.digest(key, message, "sha256"))


class _KeyringDocument(msgspec.Struct, forbid_unknown_fields=True):
    current: str
    keys: dict[str, str]


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _seal(keyring: Keyring, prefix: str, label: bytes, payload: bytes) -> str:
    kid = keyring.current
    payload_b64 = _b64(payload)
    mac = keyring._sign(label, kid, payload_b64)
    assert mac is not None  # the current key is always present (checked in Keyring)
    return f"{prefix}.{kid}.{payload_b64}.{mac}"


def _open(
    keyring: Keyring, prefix: str, label: bytes, max_bytes: int, token: object,
    decoder: msgspec.json.Decoder[_P], error: type[_TokenError],
) -> _P:
    """The authenticated, decoded payload of ``token``, or ``error(reason)``."""
    if not isinstance(token, str):
        raise error("not a string")
    if len(token) > max_bytes:  # first, before any work; len(str) <= its UTF-8 length
        raise error("oversize")
    if not token.isascii():
        raise error("not ascii")
    parts = token.split(".", 4)  # at most 5 pieces, whatever the number of dots
    if len(parts) != 4 or parts[0] != prefix:
        raise error("malformed")
    _, kid, payload_b64, mac = parts
    expected = keyring._sign(label, kid, payload_b64)
    if expected is None:
        raise error("unknown key id")
    if not hmac.compare_digest(expected, mac):
        raise error("bad mac")
    try:
        return decoder.decode(_unb64(payload_b64))
    except (ValueError, msgspec.DecodeError):
        # Authentic but unreadable: another issuer sharing the key, or a format change.
        raise error("undecodable payload") from None


def _limit(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 256:
        raise LocalProtocolError(f"{name} must be an int of at least 256, got {value!r}")
    return value


def _sha(data: bytes) -> str:
    return _b64(hashlib.sha256(data).digest())


def _finite(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise LocalProtocolError(f"{name} must be a finite number, got {value!r}")
    return float(value)


_INF: Final = math.inf


def check_now(now: float) -> None:
    """``now`` must be a finite number of seconds, checked on every input verb: it is only
    read when a token is issued or verified, and a bad clock must not pass until a client
    happens to send one. The float case costs one type check and one comparison."""
    if type(now) is float and -_INF < now < _INF:
        return
    _finite("now", now)


def request_scope(method: str, params: Mapping[str, Any], principal: str | None = None) -> bytes:
    """Canonical bytes of ``[method, params]`` without ``_meta``, ``requestState`` and
    ``inputResponses``, or of ``[method, params, principal]`` for a request of an authenticated
    caller (``HttpRequest.principal``): the scope a request state is bound to. A state issued
    to one principal thus verifies under that principal only, and one issued without a
    principal only without one (its scope is what it was before principals were bound).

    Keys are sorted at every depth, so argument order does not matter. Pass plain decoded JSON
    values (not ``msgspec.Raw``, which would be copied verbatim and not canonicalised).
    """
    kept = {k: v for k, v in params.items() if k not in _UNSCOPED_PARAMS}
    if principal is not None and type(principal) is not str:
        raise LocalProtocolError(f"The principal must be a str or None, not {type(principal).__name__}")
    try:
        return msgspec.json.encode([method, kept] if principal is None else [method, kept, principal], order="sorted")
    except (TypeError, ValueError, msgspec.EncodeError) as exc:
        raise LocalProtocolError(f"request params are not JSON-encodable: {exc}") from exc


class _StatePayload(msgspec.Struct, array_like=True, frozen=True):
    iat: float
    exp: float
    scope: str  # b64url SHA-256 of the labelled method and scope, never the scope itself
    data: Any


class _CursorPayload(msgspec.Struct, array_like=True, frozen=True):
    method: str
    offset: Annotated[int, msgspec.Meta(ge=0)]
    catalog: str  # b64url SHA-256 of catalog_version: bounded size whatever the version


_STATE_DECODER = msgspec.json.Decoder(_StatePayload)
_CURSOR_DECODER = msgspec.json.Decoder(_CursorPayload)


def _scope_digest(method: str, scope: bytes) -> str:
    m = method.encode("utf-8")
    # The length prefix keeps (method, scope) pairs unambiguous whatever bytes they hold.
    return _sha(b"mcpwire-scope-v1\x00" + len(m).to_bytes(8, "big") + m + scope)


class RequestStateCodec:
    """Issues and verifies MRTR ``requestState`` tokens (opaque to the client, signed by the server).

    ``issue`` when a handler answers ``input_required``; ``verify`` on the retry, before the
    handler runs, with the retry's method and :func:`request_scope` of its params. A token is
    valid while ``issued_at - max_clock_skew_seconds <= now < expires_at``.
    """

    def __init__(
        self, keyring: Keyring, *, ttl_seconds: float = 300, max_ttl_seconds: float = 900,
        max_token_bytes: int = 16 * 1024, max_clock_skew_seconds: float = 60,
    ) -> None:
        self._keyring = keyring
        self._max_ttl = _finite("max_ttl_seconds", max_ttl_seconds)
        if self._max_ttl <= 0:
            raise LocalProtocolError("max_ttl_seconds must be positive")
        self._ttl = self._check_ttl(ttl_seconds)
        self._skew = _finite("max_clock_skew_seconds", max_clock_skew_seconds)
        if self._skew < 0:
            raise LocalProtocolError("max_clock_skew_seconds must not be negative")
        self._max_bytes = _limit("max_token_bytes", max_token_bytes)

    def _check_ttl(self, ttl: float) -> float:
        ttl = _finite("ttl_seconds", ttl)
        if not 0 < ttl <= self._max_ttl:
            raise LocalProtocolError(f"ttl_seconds must be in (0, {self._max_ttl}], got {ttl!r}")
        return ttl

    def issue(
        self, *, method: str, scope: bytes, data: Any, now: float, ttl_seconds: float | None = None
    ) -> str:
        """A token carrying ``data`` (any JSON-encodable value), valid for ``method`` and
        ``scope`` until ``now + ttl``. Raises :class:`LocalProtocolError` on a bad TTL or
        ``now``, unencodable data, or a token over ``max_token_bytes``. Put it in the
        ``input_required`` result's ``requestState``.
        """
        now = _finite("now", now)
        ttl = self._ttl if ttl_seconds is None else self._check_ttl(ttl_seconds)
        payload = _StatePayload(now, now + ttl, _scope_digest(method, scope), data)
        try:
            encoded = msgspec.json.encode(payload)
        except (TypeError, ValueError, msgspec.EncodeError) as exc:
            raise LocalProtocolError(f"requestState data is not JSON-encodable: {exc}") from exc
        token = _seal(self._keyring, _STATE_PREFIX, _STATE_LABEL, encoded)
        if len(token) > self._max_bytes:
            raise LocalProtocolError(f"requestState token is {len(token)} bytes, over the"
                                     f" {self._max_bytes} limit; carry less data")
        return token

    def verify(self, token: object, *, method: str, scope: bytes, now: float) -> Any:
        """The ``data`` of a token issued by this keyring for ``method`` and ``scope``, as
        decoded JSON (tuples come back as lists). Raises :class:`InvalidRequestState` on any
        failure; send it as the error answer.
        """
        now = _finite("now", now)  # a NaN clock would make every expiry check pass
        payload = _open(self._keyring, _STATE_PREFIX, _STATE_LABEL, self._max_bytes, token,
                        _STATE_DECODER, InvalidRequestState)
        if now >= payload.exp:
            raise InvalidRequestState("expired")
        if payload.iat > now + self._skew:
            raise InvalidRequestState("issued in the future")
        if payload.exp - payload.iat > self._max_ttl:
            raise InvalidRequestState("lifetime over max_ttl_seconds")
        expected = _scope_digest(method, scope).encode("ascii")
        if not hmac.compare_digest(payload.scope.encode("utf-8"), expected):
            raise InvalidRequestState("wrong scope")
        return payload.data


class CursorCodec:
    """Issues and verifies pagination cursors (opaque to the client, bound to their list).

    ``issue`` for a list result's ``nextCursor``; ``verify`` on the next list request's
    ``cursor`` (already checked to be a string). ``catalog_version`` is derived by the engine
    from the catalog content; when it differs, the cursor has expired. Cursors never expire
    by time.
    """

    def __init__(self, keyring: Keyring, *, max_cursor_bytes: int = 2048) -> None:
        self._keyring = keyring
        self._max_bytes = _limit("max_cursor_bytes", max_cursor_bytes)

    def issue(self, *, method: str, offset: int, catalog_version: str) -> str:
        """A cursor for ``offset`` into ``method``'s list at ``catalog_version``."""
        if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset < 2**63:
            raise LocalProtocolError(f"cursor offset must be an int in [0, 2**63), got {offset!r}")
        digest = _sha(catalog_version.encode("utf-8"))
        encoded = msgspec.json.encode(_CursorPayload(method, offset, digest))
        cursor = _seal(self._keyring, _CURSOR_PREFIX, _CURSOR_LABEL, encoded)
        if len(cursor) > self._max_bytes:
            raise LocalProtocolError(f"cursor is over the {self._max_bytes} byte limit")
        return cursor

    def verify(self, cursor: object, *, method: str, catalog_version: str) -> int:
        """The offset a cursor points at. Raises :class:`InvalidCursor` or
        :class:`ExpiredCursor`. Whether the offset is still inside the list is the caller's
        check (an offset past the end is best answered as :class:`ExpiredCursor`).
        """
        # A non-string cursor is answered by the engine first, with its own message.
        payload = _open(self._keyring, _CURSOR_PREFIX, _CURSOR_LABEL, self._max_bytes, cursor,
                        _CURSOR_DECODER, InvalidCursor)
        if payload.method != method:
            raise InvalidCursor("wrong method")
        digest = _sha(catalog_version.encode("utf-8")).encode("ascii")
        if not hmac.compare_digest(payload.catalog.encode("utf-8"), digest):
            raise ExpiredCursor("catalog changed")
        return payload.offset
