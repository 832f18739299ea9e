"""A session's one GET stream across processes on Redis (``mcpwire_adapters.state.redis.stream_lease``,
through ``RedisSessionStore``), and its GET stream's events (``events.py``), against a real
redis-server: two engines, each with its own store as two processes would have, one Redis.
The lease is taken by the first GET stream and refused to every other; it goes when the stream
ends, lapses when its process dies, and the periodic check (renewal) finds a session gone or a
lease lost; the broker runs that check and delivers what it finds; Redis down is -32603 on a GET
and ends the streams before their leases can lapse. Events of a stream are numbered for as long
as it lasts and the newest are kept; a GET stream's key is told apart from a request's."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest
import redis
from _redis import RedisServer
from mcpwire_adapters import App
from mcpwire_adapters.state.broker import Notice, SessionClosedNotice, StreamLostNotice
from mcpwire_adapters.state.redis.broker import RedisBroker
from mcpwire_adapters.state.redis.events import MAX_EVENTS, RedisEventStore
from mcpwire_adapters.state.redis.sessions import RedisSessionStore

from mcpwire import HttpRequest, Keyring, ProtocolError, ResponseBody
from mcpwire.sessions import STANDALONE, SessionStream

from test_redis_sessions import NOW, VERSION, answer, initialize

CONFLICT = "Conflict: the session already has an open GET stream"
DEADLINE = 10.0


def make_app(server: RedisServer, lease: float = 10.0) -> App:
    app = App("sessions", "1.0", keyring=Keyring.single(b"k" * 32))
    app.server.sessions = RedisSessionStore(redis.Redis.from_url(server.url, socket_timeout=1.0), prefix="s:",
                                            stream_lease=lease)
    return app


def store(app: App) -> RedisSessionStore:
    sessions = app.server.sessions
    assert isinstance(sessions, RedisSessionStore)
    return sessions


def get(app: App, session: str, last_event_id: str | None = None) -> Any:
    headers = [(b"accept", b"text/event-stream"), (b"mcp-session-id", session.encode()),
               (b"mcp-protocol-version", VERSION.encode())]
    if last_event_id is not None:
        headers.append((b"last-event-id", last_event_id.encode()))
    return app.server.receive_http(HttpRequest(method="GET", target="/mcp", headers=headers), now=NOW)


def until(check: Any) -> Any:
    deadline = time.monotonic() + DEADLINE
    while not (found := check()):
        assert time.monotonic() < deadline, "never happened"
        time.sleep(0.02)
    return found


def test_one_get_stream_per_session_across_processes(redis_server: RedisServer) -> None:
    one, two = make_app(redis_server), make_app(redis_server)
    sid = initialize(one)
    stream = get(two, sid)
    assert isinstance(stream, SessionStream)
    for app in (one, two):
        status, body = answer(get(app, sid))
        assert status == 409 and body is not None and body["error"] == {"code": -32600, "message": CONFLICT}, body
    raw = redis.Redis.from_url(redis_server.url)
    assert 0 < raw.pttl(f"s:stream:{sid}") <= 10_000
    stream.start()
    stream.cancel()  # the client left: the lease goes at once
    assert not raw.exists(f"s:stream:{sid}")
    taken = get(one, sid)
    assert isinstance(taken, SessionStream)
    store(two).release_stream(taken.session)  # not two's stream: its lease stays
    assert raw.exists(f"s:stream:{sid}")
    for app in (one, two):
        store(app).close()


def test_the_lease_of_a_process_that_died_lapses(redis_server: RedisServer) -> None:
    dead, alive = make_app(redis_server, lease=0.3), make_app(redis_server)
    sid = initialize(dead)
    assert isinstance(get(dead, sid), SessionStream)  # and then the process dies: nothing renews it
    assert answer(get(alive, sid))[0] == 409

    def opened() -> SessionStream | None:
        found = get(alive, sid)
        return found if isinstance(found, SessionStream) else None

    assert until(opened).session.id == sid
    for app in (dead, alive):
        store(app).close()


def test_the_check_renews_leases_and_finds_sessions_gone_and_leases_lost(redis_server: RedisServer) -> None:
    app = make_app(redis_server, lease=1.0)
    sessions = store(app)
    kept, deleted, taken = initialize(app), initialize(app), initialize(app)
    for sid in (kept, deleted, taken):
        assert isinstance(get(app, sid), SessionStream)
    raw = redis.Redis.from_url(redis_server.url)
    raw.pexpire(f"s:stream:{kept}", 100)
    raw.delete(f"s:session:{deleted}")  # a DELETE on another process whose notice was missed
    raw.set(f"s:stream:{taken}", "another stream")  # lapsed, and another stream took it
    assert sessions.check_streams() == ([deleted], [taken])
    assert raw.pttl(f"s:stream:{kept}") > 100  # renewed
    assert raw.get(f"s:stream:{taken}") == b"another stream"
    assert sessions.check_streams() == ([], [])  # forgotten: reported once
    assert sessions.check_interval == pytest.approx(0.2)
    sessions.close()


def test_redis_down_refuses_get_streams_and_ends_those_open_before_their_leases_lapse(
    redis_server: RedisServer, caplog: pytest.LogCaptureFixture,
) -> None:
    app = make_app(redis_server, lease=0.5)
    sessions = store(app)
    sid, other = initialize(app), initialize(app)
    assert isinstance(get(app, sid), SessionStream)
    redis_server.stop()
    status, body = answer(get(app, other))
    assert status == 500 and body is not None and body["error"] == {"code": -32603, "message": "Internal error"}
    assert until(lambda: sessions.check_streams()[1]) == [sid]  # no renewal for lease - 2 intervals: it ends
    assert "GET stream leases not renewed" in caplog.text
    sessions.close()


def test_the_broker_ends_the_streams_its_check_finds_gone(redis_server: RedisServer) -> None:
    app = make_app(redis_server, lease=0.5)
    sessions = store(app)
    gone, lost = initialize(app), initialize(app)
    for sid in (gone, lost):
        assert isinstance(get(app, sid), SessionStream)
    raw = redis.Redis.from_url(redis_server.url)
    raw.delete(f"s:session:{gone}")
    raw.set(f"s:stream:{lost}", "another stream")
    broker = RedisBroker(redis.Redis.from_url(redis_server.url), prefix="s:", sessions=sessions)
    delivered: list[Notice] = []

    async def main() -> None:
        async def deliver(notice: Notice) -> None:
            delivered.append(notice)

        with anyio.fail_after(DEADLINE):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(broker.run, deliver)
                while len(delivered) < 2:
                    await anyio.sleep(0.02)
                tasks.cancel_scope.cancel()

    anyio.run(main)
    assert delivered == [SessionClosedNotice(session_id=gone), StreamLostNotice(session_id=lost)]
    sessions.close()


def test_stream_events_are_numbered_for_as_long_as_the_stream_lasts(redis_server: RedisServer) -> None:
    one, two = make_app(redis_server), make_app(redis_server)
    sid = initialize(one)
    mine, theirs = store(one).get(sid, NOW), store(two).get(sid, NOW)
    assert mine is not None and theirs is not None and isinstance(mine.events, RedisEventStore)
    key = mine.events.new_stream(standalone=True)
    assert key.startswith(STANDALONE) and not mine.events.new_stream().startswith(STANDALONE)
    ids = []
    for n in range(MAX_EVENTS + 5):
        ids.append(mine.events.next_event_id(key))
        mine.events.record(key, b"frame %d" % n)
    assert len(set(ids)) == len(ids) and ids[-1] == f"{key}-{MAX_EVENTS + 5}"
    assert theirs.events.next_event_id(key) == f"{key}-{MAX_EVENTS + 6}"  # read from Redis
    assert theirs.events.replay(f"{key}-4") is None  # what followed is no longer all kept
    assert theirs.events.replay(f"{key}-5") == (key, [b"frame %d" % n for n in range(5, MAX_EVENTS + 5)], False)
    assert theirs.events.replay(f"{key}-{MAX_EVENTS + 5}") == (key, [], False)
    assert theirs.events.replay(f"{key}-{MAX_EVENTS + 6}") is None
    for foreign in (f"{key}-²", "g²-1", f"{key}-", "g-1", f"{key}x-1"):  # the client's header, not an id of ours
        assert theirs.events.replay(foreign) is None
    raw = redis.Redis.from_url(redis_server.url)
    assert raw.llen(mine.events.base + key) == MAX_EVENTS
    for app in (one, two):
        store(app).close()


def test_a_get_stream_resumed_on_another_process_replays_what_followed(redis_server: RedisServer) -> None:
    one, two = make_app(redis_server), make_app(redis_server)
    sid = initialize(one)
    first = get(one, sid)
    assert isinstance(first, SessionStream)
    first.start()
    sent = [b"".join(p.data for p in first.list_changed("tools") if isinstance(p, ResponseBody)) for _ in range(2)]
    first.cancel()
    resumed = get(two, sid, f"{first.key}-1")
    assert isinstance(resumed, SessionStream) and resumed.key != first.key
    out = [p.data for p in resumed.start() if isinstance(p, ResponseBody) and p.data]
    assert out == [sent[1], f"id: {resumed.key}-0\ndata: \n\n".encode()]
    for app in (one, two):
        store(app).close()


def test_a_claim_refused_by_redis_is_not_a_lease(redis_server: RedisServer) -> None:
    app = make_app(redis_server)
    sessions = store(app)
    sid = initialize(app)
    session = sessions.get(sid, NOW)
    assert session is not None
    redis_server.stop()
    with pytest.raises(ProtocolError):
        sessions.claim_stream(session, NOW)
    assert len(sessions.leases) == 0
    sessions.close()
