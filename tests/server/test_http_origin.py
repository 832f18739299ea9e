"""Origin and Host parsing in ``Server.receive_http`` and ``Server.check_head`` (mcpwire/server/http.py).

An ``Origin`` is parsed strictly as ``scheme://host[:port]`` (RFC 6454 section 7) before it is
compared: a value whose host merely begins with an allowed host (``127.0.0.1:PORT.evil.example``)
or is not a valid ``host[:port]`` at all is refused with 403, under the default policy (loopback
only) and under an allow-list alike; ``null`` is refused unless the list is ``{"*"}``. The same
strict reading applies to ``Host`` when ``allowed_hosts`` is set.
"""

from __future__ import annotations

import pytest
from schema_check import VERSION, error_of, make_server, post, reply_of, request

import mcpwire

DISCOVER = request("server/discover", {}, id=1)
DEFAULT = make_server()
LISTED = make_server(http=mcpwire.HttpPolicy(allowed_origins=frozenset({"https://app.example.com", "http://127.0.0.1:8000"})))
ANYONE = make_server(http=mcpwire.HttpPolicy(allowed_origins=frozenset({"*"})))
HOSTED = make_server(http=mcpwire.HttpPolicy(allowed_hosts=frozenset({"localhost", "127.0.0.1", "::1"})))

# Not one origin, or a look-alike of an allowed one: refused by every policy but {"*"}.
MALFORMED = [
    b"http://127.0.0.1:8000.evil.example", b"http://127.0.0.1:8000.evil.example:8000", b"http://localhost:1.2",
    b"http://127.0.0.1.evil.example", b"http://127.0.0.1:", b"http://127.0.0.1:+80", b"http://127.0.0.1:-1",
    b"http://127.0.0.1:65536", b"http://127.0.0.1:123456", b"http://127.0.0.1: 80", b"http://127.0.0.1:80:80",
    b"http://[::1]evil", b"http://[::1]:8000.evil", b"http://[::1", b"http://[evil]", b"http://[::1%25eth0]",
    b"http://127.0.0.1:8000@evil.example", b"http://user@127.0.0.1", b"http://127.0.0.1:8000/", b"http://127.0.0.1?x",
    b"http://127.0.0.1#x", b"http://127.0.0.1\\evil", b"http://local host", b"http://", b"http:///", b"://127.0.0.1",
    b"127.0.0.1", b"http:127.0.0.1", b"http//127.0.0.1", b"1http://127.0.0.1", b"http://127.0.0.1 http://127.0.0.1",
    b"http://localhost.", b"http://.localhost", b"http://local..host", b"null", b"", b"\xff\xfe",
]


def status(server: mcpwire.Server, origin: bytes) -> int:
    return reply_of(post(server, DISCOVER, extra=[(b"Origin", origin)])).status


def head_status(server: mcpwire.Server, origin: bytes) -> int | None:
    """What ``check_head`` answers (the trio driver's check before the body): None = passes."""
    early = server.check_head(b"POST", b"/mcp", (
        (b"host", b"127.0.0.1"), (b"content-type", b"application/json"), (b"content-length", b"10"),
        (b"accept", b"application/json, text/event-stream"), (b"mcp-protocol-version", VERSION.encode()),
        (b"origin", origin),
    ))
    return None if early is None else early[0].status


@pytest.mark.parametrize("origin", MALFORMED)
def test_a_malformed_or_look_alike_origin_is_403_by_default(origin: bytes) -> None:
    reply = reply_of(post(DEFAULT, DISCOVER, extra=[(b"Origin", origin)]))
    error_of(reply, -32600, None, status=403, message_text="Origin is not allowed")
    assert head_status(DEFAULT, origin) == 403


@pytest.mark.parametrize("origin", MALFORMED)
def test_a_malformed_or_look_alike_origin_is_403_under_an_allow_list(origin: bytes) -> None:
    assert status(LISTED, origin) == 403
    assert head_status(LISTED, origin) == 403


@pytest.mark.parametrize("origin", [
    b"http://localhost", b"http://localhost:3000", b"https://127.0.0.1:8443", b"http://[::1]:8080", b"http://[0:0::1]",
    b"HTTP://LocalHost:80", b"http://127.0.0.1:0", b"http://127.0.0.1:08000",
])
def test_a_loopback_origin_is_admitted_by_default(origin: bytes) -> None:
    assert status(DEFAULT, origin) == 200
    assert head_status(DEFAULT, origin) is None


@pytest.mark.parametrize("origin", [
    b"ws://localhost", b"file://localhost", b"chrome-extension://localhost", b"http://127.0.0.2", b"http://0.0.0.0",
    b"http://127.1", b"http://2130706433", b"http://[::2]", b"http://localhost6", b"http://evil.example",
])
def test_the_default_policy_admits_only_http_and_https_on_the_three_loopback_names(origin: bytes) -> None:
    assert status(DEFAULT, origin) == 403


@pytest.mark.parametrize("origin, admitted", [
    (b"https://app.example.com", True), (b"HTTPS://App.Example.COM", True), (b"https://app.example.com:443", True),
    (b"http://127.0.0.1:8000", True), (b"http://127.0.0.1:08000", True),
    (b"https://app.example.com:8443", False), (b"http://app.example.com", False), (b"https://app.example.com.", False),
    (b"https://evil.app.example.com", False), (b"https://app.example.co", False), (b"http://127.0.0.1", False),
    (b"http://localhost:8000", False), (b"http://127.0.0.1:80", False),
])
def test_an_allow_list_compares_serialized_origins_exactly(origin: bytes, admitted: bool) -> None:
    assert status(LISTED, origin) == (200 if admitted else 403)


def test_null_is_refused_by_an_allow_list_even_when_listed() -> None:
    """``null`` is the origin of every sandboxed frame and local file: listing it would admit
    them all, so it is never admitted by a list (``{"*"}`` turns the check off instead)."""
    server = make_server(http=mcpwire.HttpPolicy(allowed_origins=frozenset({"null", "https://app.example.com"})))
    assert status(server, b"null") == 403
    assert status(server, b"https://app.example.com") == 200


def test_listed_entries_are_serialized_like_the_request_and_a_malformed_entry_matches_nothing() -> None:
    server = make_server(http=mcpwire.HttpPolicy(allowed_origins=frozenset({
        "HTTPS://App.Example.com:443", "https://other.example/", "http://127.0.0.1:8000.evil.example",
    })))
    assert status(server, b"https://app.example.com") == 200
    assert status(server, b"https://other.example") == 403
    assert status(server, b"https://other.example/") == 403
    assert status(server, b"http://127.0.0.1:8000.evil.example") == 403


@pytest.mark.parametrize("origin", [b"null", b"http://127.0.0.1:8000.evil.example", b"https://evil.example"])
def test_a_star_admits_any_origin(origin: bytes) -> None:
    assert status(ANYONE, origin) == 200


def test_a_repeated_origin_is_403() -> None:
    reply = reply_of(post(DEFAULT, DISCOVER, extra=[(b"Origin", b"http://localhost"), (b"origin", b"http://localhost")]))
    assert reply.status == 403


# -- Host, when allowed_hosts is set ------------------------------------------------------------------
def host_status(host: bytes) -> int:
    return reply_of(post(HOSTED, DISCOVER, extra=[(b"Host", host)])).status


@pytest.mark.parametrize("host", [
    b"127.0.0.1:8000.evil.example", b"localhost:1.2", b"localhost:", b"localhost:80:80", b"localhost:+1",
    b"localhost:65536", b"user@localhost", b"localhost/", b"[::1]evil", b"[::1", b"localhost.", b"local host", b"",
])
def test_a_malformed_or_look_alike_host_is_403(host: bytes) -> None:
    assert host_status(host) == 403


@pytest.mark.parametrize("host", [b"localhost", b"LocalHost:8000", b"127.0.0.1:1", b"[::1]", b"[0::1]:8000"])
def test_an_allowed_host_on_any_port_is_admitted(host: bytes) -> None:
    assert host_status(host) == 200

