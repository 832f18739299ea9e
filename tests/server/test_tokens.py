"""Tests of mcpwire.server.tokens: the keyring, MRTR request-state tokens and pagination cursors."""

from __future__ import annotations

import base64
import hmac
import json
import re
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpwire.wire.errors import ErrorCode, LocalProtocolError, RemoteProtocolError
from mcpwire.server.tokens import (
    CursorCodec,
    ExpiredCursor,
    InvalidCursor,
    InvalidRequestState,
    Keyring,
    RequestStateCodec,
    _seal,
    request_scope,
)

K1 = b"\x01" * 32
K2 = b"\x02" * 48
NOW = 1_750_000_000.25
METHOD = "tools/call"
PARAMS: dict[str, Any] = {"name": "weather", "arguments": {"city": "Paris", "days": 3}}
SCOPE = request_scope(METHOD, PARAMS)


def codec(keyring: Keyring | None = None, **kw: Any) -> RequestStateCodec:
    return RequestStateCodec(keyring or Keyring.single(K1), **kw)


def issue(c: RequestStateCodec | None = None, data: Any = None, now: float = NOW) -> str:
    return (c or codec()).issue(method=METHOD, scope=SCOPE, data=data, now=now)


def reject(c: RequestStateCodec, token: object, *, method: str = METHOD,
           scope: bytes = SCOPE, now: float = NOW) -> InvalidRequestState:
    with pytest.raises(InvalidRequestState) as info:
        c.verify(token, method=method, scope=scope, now=now)
    return info.value


# --- round trip and token shape ---------------------------------------------------------

@pytest.mark.parametrize(
    "data",
    [None, 0, "step2", ["a", 1, 2.5, True], {"round": 2, "answers": {"name": "Ålice ✓"}}],
)
def test_round_trip(data: Any) -> None:
    c = codec()
    token = issue(c, data)
    assert c.verify(token, method=METHOD, scope=SCOPE, now=NOW + 1) == data


def test_token_is_opaque_json_safe_ascii_with_expected_layout() -> None:
    token = issue(data={"secret-arg": "x" * 10})
    assert re.fullmatch(r"mcpwire1\.k1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}", token)
    assert json.dumps(token) == f'"{token}"'
    payload = json.loads(base64.urlsafe_b64decode(token.split(".")[2] + "=="))
    iat, exp, scope_digest, data = payload
    assert (iat, exp) == (NOW, NOW + 300)
    assert data == {"secret-arg": "x" * 10}
    assert "Paris" not in scope_digest and "weather" not in token  # a digest, not the scope


def test_issuing_is_deterministic_and_tokens_differ_by_data_and_time() -> None:
    c = codec()
    assert issue(c, {"r": 1}) == issue(c, {"r": 1})
    assert issue(c, {"r": 1}) != issue(c, {"r": 2})
    assert issue(c, {"r": 1}, now=NOW) != issue(c, {"r": 1}, now=NOW + 0.5)


# --- tampering ----------------------------------------------------------------------------

TOKEN = issue(data={"step": 1})


@given(st.integers(0, len(TOKEN) - 1), st.characters())
def test_any_single_character_mutation_is_rejected(index: int, char: str) -> None:
    mutated = TOKEN[:index] + char + TOKEN[index + 1:]
    if mutated != TOKEN:
        reject(codec(), mutated)


def test_every_truncation_is_rejected() -> None:
    c = codec()
    for end in range(len(TOKEN)):
        reject(c, TOKEN[:end])


@pytest.mark.parametrize(
    ("suffix", "reason"),
    [("-TAMPERED", "bad mac"), ("A", "bad mac"), ("=", "bad mac"), (" ", "bad mac"), (".", "malformed"),
     (".AAAA", "malformed")],
)
def test_appended_data_is_rejected(suffix: str, reason: str) -> None:
    # Appended to the MAC it no longer verifies; a fifth dot-separated part is not a token.
    assert reject(codec(), TOKEN + suffix).reason == reason


@pytest.mark.parametrize(
    ("token", "reason"),
    [
        (None, "not a string"),
        (b"mcpwire1.k1.AA.AA", "not a string"),
        ("", "malformed"),
        ("mcpwire1.k1.Zm9v", "malformed"),
        ("mcpwire2" + TOKEN[8:], "malformed"),
        (TOKEN.replace(".k1.", ".k9."), "unknown key id"),
        (TOKEN.replace(".k1.", ".."), "unknown key id"),
        (TOKEN[:-1] + "é", "not ascii"),
    ],
)
def test_malformed_tokens(token: object, reason: str) -> None:
    assert reject(codec(), token).reason == reason


def test_mac_is_compared_on_its_canonical_spelling() -> None:
    # 43 base64 characters carry 258 bits for a 256-bit MAC: flipping the two spare bits of
    # the last character decodes to the same MAC, and must still be rejected.
    last = TOKEN[-1]
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    twin = alphabet[alphabet.index(last) ^ 1]
    assert base64.urlsafe_b64decode(TOKEN[-43:] + "=") == base64.urlsafe_b64decode(
        TOKEN[-43:-1] + twin + "="
    )
    assert reject(codec(), TOKEN[:-1] + twin).reason == "bad mac"


def test_authentic_but_undecodable_payload_is_rejected() -> None:
    keyring = Keyring.single(K1)
    label = b"mcpwire-request-state-v1\x00"
    for payload in (b"not json", b"[1, 2]", b'{"iat": 1}'):
        token = _seal(keyring, "mcpwire1", label, payload)
        assert reject(codec(keyring), token).reason == "undecodable payload"
    # Not even base64 (one character cannot be), yet correctly signed.
    mac = keyring._sign(label, "k1", "A")
    assert reject(codec(keyring), f"mcpwire1.k1.A.{mac}").reason == "undecodable payload"


def test_a_cursor_is_not_a_request_state() -> None:
    keyring = Keyring.single(K1)
    cursor = CursorCodec(keyring).issue(method=METHOD, offset=0, catalog_version="v")
    reject(codec(keyring), cursor)
    reject(codec(keyring), "mcpwire1" + cursor[len("mcpcur1"):])  # the label differs too


# --- scope --------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("prompts/get", PARAMS),
        (METHOD, {**PARAMS, "name": "other_tool"}),
        (METHOD, {**PARAMS, "arguments": {"city": "Paris", "days": 4}}),
        (METHOD, {**PARAMS, "arguments": {"city": "Paris"}}),
        (METHOD, {"name": "weather"}),
        (METHOD, {**PARAMS, "task": {}}),
    ],
)
def test_wrong_method_or_params_is_rejected(method: str, params: dict[str, Any]) -> None:
    e = reject(codec(), TOKEN, method=method, scope=request_scope(method, params))
    assert e.reason == "wrong scope"


def test_method_argument_is_bound_even_with_the_same_scope_bytes() -> None:
    assert reject(codec(), TOKEN, method="resources/read").reason == "wrong scope"


def test_argument_order_and_round_keys_do_not_change_the_scope() -> None:
    a = request_scope(METHOD, {"name": "t", "arguments": {"a": 1, "b": {"y": 2, "x": 3}}})
    b = request_scope(METHOD, {"arguments": {"b": {"x": 3, "y": 2}, "a": 1}, "name": "t"})
    assert a == b
    c = request_scope(METHOD, {
        "arguments": {"b": {"x": 3, "y": 2}, "a": 1}, "name": "t",
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
        "requestState": "mcpwire1.whatever", "inputResponses": {"q": {"action": "accept"}},
    })
    assert a == c
    rs = codec()
    token = rs.issue(method=METHOD, scope=a, data=1, now=NOW)
    assert rs.verify(token, method=METHOD, scope=c, now=NOW) == 1


def test_request_scope_rejects_unencodable_params() -> None:
    with pytest.raises(LocalProtocolError):
        request_scope(METHOD, {"arguments": object()})


# --- time ---------------------------------------------------------------------------------

def test_expiry_is_exclusive_at_expires_at() -> None:
    c = codec()
    now = 1000.1  # a float whose sum with the TTL is inexact, to exercise the round trip
    token = issue(c, "d", now=now)
    assert c.verify(token, method=METHOD, scope=SCOPE, now=now + 299.999) == "d"
    assert reject(c, token, now=now + 300).reason == "expired"
    assert reject(c, token, now=now + 10_000).reason == "expired"


def test_per_token_ttl() -> None:
    c = codec()
    token = c.issue(method=METHOD, scope=SCOPE, data=0, now=NOW, ttl_seconds=5)
    assert c.verify(token, method=METHOD, scope=SCOPE, now=NOW + 4.9) == 0
    assert reject(c, token, now=NOW + 5).reason == "expired"


def test_future_issued_token_beyond_clock_skew_is_rejected() -> None:
    c = codec(max_clock_skew_seconds=60)
    token = issue(c, now=NOW)
    assert c.verify(token, method=METHOD, scope=SCOPE, now=NOW - 60) is None
    assert reject(c, token, now=NOW - 60.5).reason == "issued in the future"
    assert reject(codec(max_clock_skew_seconds=0), token, now=NOW - 0.01).reason == (
        "issued in the future"
    )


def test_lifetime_over_the_verifiers_max_ttl_is_rejected() -> None:
    keyring = Keyring.single(K1)
    long_lived = codec(keyring, ttl_seconds=3600, max_ttl_seconds=3600)
    token = issue(long_lived)
    assert reject(codec(keyring), token).reason == "lifetime over max_ttl_seconds"


@pytest.mark.parametrize("now", [float("nan"), float("inf"), "1"])
def test_non_finite_now_is_a_local_error(now: Any) -> None:
    c = codec()
    with pytest.raises(LocalProtocolError):
        c.issue(method=METHOD, scope=SCOPE, data=None, now=now)
    with pytest.raises(LocalProtocolError):
        c.verify(TOKEN, method=METHOD, scope=SCOPE, now=now)


@pytest.mark.parametrize("ttl", [0, -1, 900.01, float("nan"), True])
def test_bad_ttl_is_a_local_error(ttl: Any) -> None:
    with pytest.raises(LocalProtocolError):
        codec().issue(method=METHOD, scope=SCOPE, data=None, now=NOW, ttl_seconds=ttl)
    with pytest.raises(LocalProtocolError):
        codec(ttl_seconds=ttl)


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        # Each refused for its own rule: a max_ttl of 0 must not pass as "ttl over max_ttl".
        ({"max_ttl_seconds": 0, "ttl_seconds": 1}, "max_ttl_seconds must be positive"),
        ({"max_ttl_seconds": -5, "ttl_seconds": -10}, "max_ttl_seconds must be positive"),
        ({"max_ttl_seconds": float("inf")}, "max_ttl_seconds must be a finite number, got inf"),
        ({"ttl_seconds": 600, "max_ttl_seconds": 300}, "ttl_seconds must be in (0, 300.0], got 600.0"),
        ({"max_token_bytes": 255}, "max_token_bytes must be an int of at least 256, got 255"),
        ({"max_token_bytes": 1024.0}, "max_token_bytes must be an int of at least 256, got 1024.0"),
        ({"max_clock_skew_seconds": -1}, "max_clock_skew_seconds must not be negative"),
    ],
)
def test_codec_configuration_errors(kw: dict[str, Any], message: str) -> None:
    with pytest.raises(LocalProtocolError, match=re.escape(message)):
        codec(**kw)


# --- keys and rotation --------------------------------------------------------------------

def test_key_rotation() -> None:
    old = Keyring({"k1": K1}, "k1")
    token = issue(codec(old), "in flight")
    both_old_current = Keyring({"k1": K1, "k2": K2}, "k1")
    assert issue(codec(both_old_current), "x").startswith("mcpwire1.k1.")
    both = Keyring({"k1": K1, "k2": K2}, "k2")
    fresh = issue(codec(both), "new")
    assert fresh.startswith("mcpwire1.k2.")
    assert codec(both).verify(token, method=METHOD, scope=SCOPE, now=NOW) == "in flight"
    assert codec(both_old_current).verify(fresh, method=METHOD, scope=SCOPE, now=NOW) == "new"
    new_only = Keyring({"k2": K2}, "k2")
    assert reject(codec(new_only), token).reason == "unknown key id"
    assert codec(new_only).verify(fresh, method=METHOD, scope=SCOPE, now=NOW) == "new"


def test_same_key_id_with_another_key_is_rejected() -> None:
    impostor = Keyring.single(b"\x03" * 32)
    assert reject(codec(impostor), TOKEN).reason == "bad mac"


@pytest.mark.parametrize(
    ("keys", "current", "fragment"),
    [
        ({"k1": b"short"}, "k1", "at least 32 bytes"),
        ({"k1": "a" * 40}, "k1", "must be bytes"),
        ({"k1": bytearray(K1)}, "k1", "must be bytes"),
        ({"": K1}, "", "must match"),
        ({"k.1": K1}, "k.1", "must match"),
        ({"k" * 33: K1}, "k" * 33, "must match"),
        ({"ключ": K1}, "ключ", "must match"),
        ({"k1": K1}, "k2", "not in the keyring"),
        ({}, "k1", "not in the keyring"),
    ],
)
def test_keyring_validation(keys: dict[str, Any], current: str, fragment: str) -> None:
    with pytest.raises(LocalProtocolError, match=fragment):
        Keyring(keys, current)


def test_keyring_accessors_and_repr_hides_keys() -> None:
    keyring = Keyring({"b": K1, "a": K2}, "b")
    assert keyring.current == "b"
    assert keyring.key_ids == ("a", "b")
    text = repr(keyring)
    assert text == "Keyring(key_ids=['a', 'b'], current='b')"
    assert K1.hex() not in text and repr(K1) not in text
    assert Keyring.single(K1).key_ids == ("k1",)


# --- bounds ---------------------------------------------------------------------------------

def test_oversize_token_is_rejected_before_any_decoding_or_hmac(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    c = codec(max_token_bytes=1024)
    token = c.issue(method=METHOD, scope=SCOPE, data="x" * 600, now=NOW)
    assert len(token) <= 1024
    oversize = token + "A" * (1025 - len(token))

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("work done on an oversize token")

    for name in ("digest", "new", "compare_digest"):
        monkeypatch.setattr(hmac, name, boom)
    for name in ("urlsafe_b64decode", "b64decode"):
        monkeypatch.setattr(base64, name, boom)
    assert reject(c, oversize).reason == "oversize"


def test_data_too_large_at_issue_is_a_local_error() -> None:
    c = codec()
    issue(c, "x" * 10_000)
    with pytest.raises(LocalProtocolError, match="over the 16384 limit"):
        issue(c, "x" * 16_000)


def test_unencodable_data_is_a_local_error() -> None:
    with pytest.raises(LocalProtocolError, match="not JSON-encodable"):
        issue(data={"f": object()})


def test_error_shape_leaks_nothing() -> None:
    e = reject(codec(), TOKEN + "x")
    assert isinstance(e, RemoteProtocolError)
    assert e.code == ErrorCode.INVALID_PARAMS
    assert e.code == -32602
    assert e.message == str(e) == "Invalid or expired request state"
    assert e.data is msgspec.UNSET
    assert e.http_status == 400
    assert e.reason == "bad mac" and "mac" not in repr(e)


# --- cursors --------------------------------------------------------------------------------

LIST = "tools/list"


def test_cursor_round_trip_and_shape() -> None:
    cc = CursorCodec(Keyring.single(K1))
    for offset in (0, 100, 2**63 - 1):
        cursor = cc.issue(method=LIST, offset=offset, catalog_version="v1")
        assert re.fullmatch(r"mcpcur1\.k1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}", cursor)
        assert cc.verify(cursor, method=LIST, catalog_version="v1") == offset
    assert cc.issue(method=LIST, offset=1, catalog_version="v") != cc.issue(
        method=LIST, offset=2, catalog_version="v")


CURSOR = CursorCodec(Keyring.single(K1)).issue(method=LIST, offset=100, catalog_version="v1")


@given(st.integers(0, len(CURSOR) - 1), st.characters())
def test_cursor_single_character_mutation_is_rejected(index: int, char: str) -> None:
    mutated = CURSOR[:index] + char + CURSOR[index + 1:]
    if mutated != CURSOR:
        with pytest.raises(InvalidCursor):
            CursorCodec(Keyring.single(K1)).verify(mutated, method=LIST, catalog_version="v1")


@pytest.mark.parametrize(
    ("cursor", "reason"),
    [
        (CURSOR + "-TAMPERED", "bad mac"),
        (CURSOR[:-5], "bad mac"),
        (CURSOR[:20], "malformed"),
        ("", "malformed"),
        (CURSOR + "A" * 2048, "oversize"),
        (42, "not a string"),
        (issue(), "malformed"),
    ],
)
def test_cursor_invalid(cursor: Any, reason: str) -> None:
    with pytest.raises(InvalidCursor) as info:
        CursorCodec(Keyring.single(K1)).verify(cursor, method=LIST, catalog_version="v1")
    e = info.value
    assert (e.reason, e.code, e.message, e.data) == (
        reason, -32602, "Invalid pagination cursor", msgspec.UNSET)


def test_cursor_wrong_method_and_other_key() -> None:
    with pytest.raises(InvalidCursor, match="Invalid pagination cursor") as info:
        CursorCodec(Keyring.single(K1)).verify(CURSOR, method="prompts/list", catalog_version="v1")
    assert info.value.reason == "wrong method"
    with pytest.raises(InvalidCursor):
        CursorCodec(Keyring.single(K2)).verify(CURSOR, method=LIST, catalog_version="v1")


def test_cursor_expires_when_the_catalog_changes() -> None:
    with pytest.raises(ExpiredCursor) as info:
        CursorCodec(Keyring.single(K1)).verify(CURSOR, method=LIST, catalog_version="v2")
    e = info.value
    assert (e.code, e.message, e.data) == (-32602, "Pagination cursor has expired", msgspec.UNSET)
    assert not isinstance(e, InvalidCursor)


def test_cursor_authentic_but_undecodable_or_negative() -> None:
    keyring = Keyring.single(K1)
    cc = CursorCodec(keyring)
    for payload in (b"[", b'["tools/list",-1,"x"]', b'["tools/list",1.5,"x"]'):
        cursor = _seal(keyring, "mcpcur1", b"mcpwire-cursor-v1\x00", payload)
        with pytest.raises(InvalidCursor) as info:
            cc.verify(cursor, method=LIST, catalog_version="v1")
        assert info.value.reason == "undecodable payload"


@pytest.mark.parametrize("offset", [-1, 2**63, True, 1.0])
def test_cursor_bad_offset_is_a_local_error(offset: Any) -> None:
    with pytest.raises(LocalProtocolError):
        CursorCodec(Keyring.single(K1)).issue(method=LIST, offset=offset, catalog_version="v")


def test_cursor_bounds() -> None:
    cc = CursorCodec(Keyring.single(K1), max_cursor_bytes=256)
    cc.issue(method=LIST, offset=0, catalog_version="v" * 10_000)  # the version is digested
    with pytest.raises(LocalProtocolError):
        cc.issue(method="x" * 200, offset=0, catalog_version="v")
    for bad in (255, 2048.0):
        with pytest.raises(LocalProtocolError):
            CursorCodec(Keyring.single(K1), max_cursor_bytes=bad)  # type: ignore[arg-type]
