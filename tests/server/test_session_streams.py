"""An initialize-era session's streams at the engine, over HTTP, sans-IO, on the memory stores:
the GET stream's events carry ids and are kept; a GET with ``Last-Event-ID`` of the GET stream
replays what followed, then goes on as the session's GET stream; the session store decides
whether the session may open its one GET stream (409 otherwise) and hears when it ends; ids
never repeat however long a stream runs; a request's stream resumed where its request does not
run follows it through the event store; a 2025-11-25 task made by the session (wherever) reaches
its GET stream. Specification 2025-11-25: Basic > Transports > Streamable HTTP (Listening for
Messages from the Server, Multiple Connections, Resumability and Redelivery)."""

from __future__ import annotations

import itertools
from typing import Any

from test_session_admission import NOW, error, make_server, open_session, send

import mcpwire
from mcpwire import ResponseBody, ResponseHead
from mcpwire.server.session import MAX_EVENTS
from mcpwire.sessions import MemoryEventStore, MemorySessionStore, ResumedStream, Session, SessionStream
from mcpwire.tasks import MemoryTaskStore, Tasks

GET = [(b"accept", b"text/event-stream")]
CONFLICT = "Conflict: the session already has an open GET stream"


def get(server: mcpwire.Server, session: list[tuple[bytes, bytes]], last_event_id: str | None = None) -> Any:
    resume = [] if last_event_id is None else [(b"last-event-id", last_event_id.encode("latin-1"))]
    return send(server, None, session + GET + resume, "GET")


def frames(output: Any) -> list[bytes]:
    return [part.data for part in output if isinstance(part, ResponseBody) and part.data]


def event_id(frame: bytes) -> str:
    assert frame.startswith(b"id: "), frame
    return frame.split(b"\n")[0].removeprefix(b"id: ").decode()


def changed(server: mcpwire.Server, stream: SessionStream) -> bytes:
    """A tools list_changed delivered to ``stream``: its frame."""
    [(to, output)] = server.list_changed("tools")
    assert to is stream
    [frame] = frames(output)
    assert b"notifications/tools/list_changed" in frame
    return frame


def test_get_stream_events_carry_ids_and_the_stream_opens_with_a_priming_event() -> None:
    server = make_server()
    session = open_session(server)
    stream = get(server, session)
    assert isinstance(stream, SessionStream)
    opened = stream.start()
    assert isinstance(opened[0], ResponseHead) and opened[0].status == 200
    [priming] = frames(opened)
    assert priming == f"id: {stream.key}-0\ndata: \n\n".encode()  # 2025-11-25: an id, empty data
    ids = [event_id(changed(server, stream)) for _ in range(3)]
    assert ids == [f"{stream.key}-{n}" for n in (1, 2, 3)] and stream.key.startswith(mcpwire.sessions.STANDALONE)


def test_older_revisions_get_ids_without_a_priming_event() -> None:
    server = make_server()
    session = open_session(server, "2025-06-18")
    stream = get(server, session)
    assert isinstance(stream, SessionStream)
    assert frames(stream.start()) == [b": stream open\n\n"]
    assert event_id(changed(server, stream)) == f"{stream.key}-1"


def test_a_get_with_last_event_id_of_the_get_stream_replays_what_followed_and_goes_on() -> None:
    server = make_server()
    session = open_session(server)
    first = get(server, session)
    assert isinstance(first, SessionStream)
    first.start()
    sent = [changed(server, first) for _ in range(3)]
    error(get(server, session, event_id(sent[0])), 409, -32600, CONFLICT)  # the first is still open
    first.cancel()  # the client went away
    resumed = get(server, session, event_id(sent[0]))
    assert isinstance(resumed, SessionStream) and resumed.key != first.key
    replayed = frames(resumed.start())
    # What followed the id, as it was sent, then the new stream's priming event: a later
    # Last-Event-ID names the new stream.
    assert replayed == [*sent[1:], f"id: {resumed.key}-0\ndata: \n\n".encode()]
    assert event_id(changed(server, resumed)) == f"{resumed.key}-1"
    error(get(server, session), 409, -32600, CONFLICT)  # it is the session's one GET stream
    resumed.cancel()
    # An id not kept (or not of this session, or not an id at all) opens a fresh GET stream:
    # nothing to replay.
    for unknown in ("g99-1", f"{resumed.key}-²", f"{resumed.key}-", "-", "garbage"):
        fresh = get(server, session, unknown)
        assert isinstance(fresh, SessionStream) and [event_id(f) for f in frames(fresh.start())] == [f"{fresh.key}-0"]
        fresh.cancel()


class CountingStore(MemorySessionStore):
    """The memory store, with the GET streams another process would hold (``elsewhere``)."""

    def __init__(self) -> None:
        super().__init__()
        self.elsewhere: set[str] = set()
        self.claimed: list[str] = []
        self.released: list[str] = []

    def claim_stream(self, session: Session, now: float) -> bool:
        if session.id in self.elsewhere:
            return False
        self.claimed.append(str(session.id))
        return True

    def release_stream(self, session: Session) -> None:
        self.released.append(str(session.id))


def test_the_store_decides_the_one_get_stream_and_hears_its_end_once() -> None:
    store = CountingStore()
    server = make_server(sessions=store)
    session = open_session(server)
    sid = dict(session)[b"mcp-session-id"].decode()
    store.elsewhere.add(sid)
    error(get(server, session), 409, -32600, CONFLICT)  # held by a stream of another process
    store.elsewhere.clear()
    stream = get(server, session)
    assert isinstance(stream, SessionStream) and store.claimed == [sid]
    error(get(server, session), 409, -32600, CONFLICT)  # held here: the store is not asked
    assert store.claimed == [sid] and not store.released
    stream.start()
    stream.close()
    stream.cancel()  # ended gracefully, then dropped by the host: released once
    assert store.released == [sid]
    assert isinstance(get(server, session), SessionStream)


def test_event_ids_never_repeat_and_the_newest_events_are_kept() -> None:
    events = MemoryEventStore()
    key = events.new_stream()
    ids = []
    for n in range(MAX_EVENTS + 10):
        ids.append(events.next_event_id(key))
        events.record(key, b"frame %d" % n)
    assert len(set(ids)) == len(ids) and ids[-1] == f"{key}-{MAX_EVENTS + 10}"
    assert events.replay(f"{key}-1") is None  # its successors are no longer all kept
    assert events.replay(f"{key}-9") is None
    assert events.replay(f"{key}-10") == (key, [b"frame %d" % n for n in range(10, MAX_EVENTS + 10)], False)
    assert events.replay(f"{key}-{MAX_EVENTS + 9}") == (key, [b"frame %d" % (MAX_EVENTS + 9)], False)
    assert events.replay(f"{key}-{MAX_EVENTS + 10}") == (key, [], False)
    assert events.replay(f"{key}-{MAX_EVENTS + 11}") is None
    standalone = events.new_stream(standalone=True)
    assert standalone.startswith(mcpwire.sessions.STANDALONE) and not key.startswith(mcpwire.sessions.STANDALONE)


def test_a_request_stream_resumed_where_its_request_does_not_run_follows_the_event_store() -> None:
    server = make_server()
    session = open_session(server)
    sid = dict(session)[b"mcp-session-id"].decode()
    found = server.sessions.get(sid, NOW)
    assert found is not None
    events = found.events
    key = events.new_stream()
    sent = []
    for n in range(2):  # what the request's process records (another process, in a shared store)
        sent.append(b"id: %s-%d\ndata: {}\n\n" % (key.encode(), n + 1))
        events.record(key, sent[-1])
    resumed = get(server, session, f"{key}-1")
    assert isinstance(resumed, ResumedStream) and not resumed.finished
    assert frames(resumed.start()) == sent[1:]
    assert resumed.follow() == []  # nothing new
    events.record(key, b"more")
    events.record(key, b"answer", last=True)
    out = resumed.follow()
    assert frames(out) == [b"more", b"answer"] and out[-1] == ResponseBody(data=b"", more=False)
    assert resumed.finished and resumed.follow() == []
    gone = get(server, session, f"{key}-1")
    assert isinstance(gone, ResumedStream) and gone.finished  # the replay holds the final response
    # A stream the store no longer holds ends (the session ended, say).
    other = events.new_stream()
    events.record(other, b"one")
    left = get(server, session, f"{other}-1")
    assert isinstance(left, ResumedStream)
    left.start()
    for _ in range(40):
        events.new_stream()  # pushes the stream out of the store
    assert left.follow() == [ResponseBody(data=b"", more=False)] and left.follow() == []


def test_a_task_made_by_the_session_anywhere_reaches_its_get_stream() -> None:
    tasks = Tasks(MemoryTaskStore(), (f"task-{i}" for i in itertools.count(1)), ttl_ms=60_000)
    server = make_server(tasks=tasks)
    session, other = open_session(server), open_session(server)
    sid = dict(session)[b"mcp-session-id"].decode()
    stream = get(server, session)
    assert isinstance(stream, SessionStream)
    stream.start()
    # Made by a request of the session on another process of the server (a shared task store):
    # this process's copy of the session never saw it made.
    mine = tasks.create("t", NOW, session=sid)
    theirs = tasks.create("t", NOW, session=dict(other)[b"mcp-session-id"].decode())
    [(to, output)] = server.task_status(mine.task_id, now=NOW)
    assert isinstance(to, SessionStream)
    [frame] = frames(output)
    assert to is stream and b"notifications/tasks/status" in frame and mine.task_id.encode() in frame
    assert event_id(frame) == f"{stream.key}-1"
    assert server.task_status(theirs.task_id, now=NOW) == []


def test_session_ended_finds_this_processs_get_stream_of_the_session() -> None:
    server = make_server()
    session, other = open_session(server), open_session(server)
    sid = dict(session)[b"mcp-session-id"].decode()
    stream = get(server, session)
    assert isinstance(stream, SessionStream)
    ended = server.session_ended(sid)
    assert ended.session_id == sid and ended.stream is stream and ended.reply == []
    assert server.session_ended(dict(other)[b"mcp-session-id"].decode()).stream is None
