"""The probe's checks of the initialize era's Streamable HTTP (:data:`ERA_HTTP_CHECKS`): the
Content-Type of an answer, sessions (the id's characters, a request without it, an unknown one,
one ended by DELETE), ``MCP-Protocol-Version`` (2025-06-18 on), the GET stream (SSE or 405, and
never a response on it), resumption with ``Last-Event-ID`` where the server gives event ids, no
event id given on two streams of one session, and the Origin. Each opens a session of its own in
the revision it runs in (specification of that revision: Basic > Transports, Streamable HTTP),
and cites that revision's sentence.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

import anyio

from mcpwire.framing import SSEReader

from ..era_rules import HEADER_REVISIONS, SESSION_REVISIONS
from ..era_wire import EraSession, request
from ..judge import problem, rule, status_rule
from ..rawwire import Exchange, Request, Send, media_type
from ..rawwire_sse import stream_exchange
from ..verdict import NOT_APPLICABLE, PASS, Outcome, Problem
from .checks import STREAMABLE_HTTP, Check, Target
from .era_channel import Channel
from .era_checks import with_channel

__all__ = ["ERA_HTTP_CHECKS"]

SESSIONS, SENDING = "basic/transports#session-management", "basic/transports#sending-messages-to-the-server"
LISTENING, RESUMING = "basic/transports#listening-for-messages-from-the-server", "basic/transports#resumability-and-redelivery"
VERSION_HEADER, SECURITY = "basic/transports#protocol-version-header", "basic/transports#security-warning"
LINGER = 0.5  # seconds a GET stream is read for what it sends at once
RETRIES = 5  # tries of a GET refused 409 (the session's one GET stream not yet seen closed)
Run = Callable[[Target, EraSession, Send, list[Exchange]], Awaitable[Outcome]]


def _on_session(run: Run, *, needs_id: bool = False) -> Callable[[Target, Channel, list[Exchange]], Awaitable[Outcome]]:
    async def steps(target: Target, opened: Channel, evidence: list[Exchange]) -> Outcome:
        assert opened.session is not None
        if needs_id and opened.session.session_id is None:
            return Outcome(NOT_APPLICABLE, "the server issues no Mcp-Session-Id: it keeps no sessions", evidence)
        return await run(target, opened.session, opened.send, evidence)
    return steps


def _status(target: Target, sent: Exchange, evidence: list[Exchange], allowed: tuple[int, ...], name: str) -> Outcome:
    evidence.append(sent)
    if sent[1] is None:
        return Outcome.broken(rule(target.rule(name)), f"no reply: {sent[2]}", evidence)
    return Outcome.judged(status_rule(sent[1].status, allowed, rule_id=target.rule(name)), evidence)


def _ping(rpc_id: object) -> dict[str, object]:
    return request("ping", rpc_id)


# -- answers and sessions ----------------------------------------------------------------------------------------
async def _content_type(target: Target, session: EraSession, send: Send, evidence: list[Exchange]) -> Outcome:
    sent = await send(session.post(_ping("type-1")))
    evidence.append(sent)
    if sent[1] is None:
        return Outcome.broken(rule("jsonrpc.reply"), f"no reply: {sent[2]}", evidence)
    kind = media_type(sent[1].header("content-type") or "")
    if sent[1].status < 300 and kind not in ("application/json", "text/event-stream"):
        return Outcome.broken(rule(target.rule("era.request-content-type")),
                              f"HTTP {sent[1].status} with Content-Type {kind or 'none'!r}", evidence)
    return Outcome(PASS, "", evidence)


async def _session_id(target: Target, session: EraSession, send: Send, evidence: list[Exchange]) -> Outcome:
    assert session.session_id is not None
    wrong = sorted({c for c in session.session_id if not 0x21 <= ord(c) <= 0x7E})
    if wrong or not session.session_id:
        return Outcome.broken(rule(target.rule("era.session-id-chars")),
                              f"Mcp-Session-Id {session.session_id!r} holds {wrong or 'nothing'}", evidence)
    return Outcome(PASS, "", evidence)


async def _no_session(target: Target, session: EraSession, send: Send, evidence: list[Exchange]) -> Outcome:
    sent = await send(session.post(_ping(2), headers=session.headers(drop=("Mcp-Session-Id",))))
    return _status(target, sent, evidence, (400,), "era.session-required")


async def _unknown_session(target: Target, session: EraSession, send: Send, evidence: list[Exchange]) -> Outcome:
    sent = await send(session.post(_ping(3), headers=session.headers(session_id="mcpwire-probe-no-such-session")))
    return _status(target, sent, evidence, (404,), "era.session-ended")


async def _deleted(target: Target, session: EraSession, send: Send, evidence: list[Exchange]) -> Outcome:
    gone = await send(Request("DELETE", session.headers()))
    evidence.append(gone)
    if gone[1] is not None and gone[1].status == 405:
        return Outcome(NOT_APPLICABLE, "the server does not let clients end sessions (405)", evidence)
    problems: list[Problem] = []
    if gone[1] is None or gone[1].status not in (200, 204):
        problems.append(problem("mcpwire.delete-status", f"DELETE answered {gone[1].status if gone[1] else gone[2]}, "
                                                         "expected 200 or 204"))
    after = await send(session.post(_ping(4)))
    evidence.append(after)
    if after[1] is None:
        return Outcome.broken(rule(target.rule("era.session-ended")), f"no reply: {after[2]}", evidence)
    return Outcome.judged(status_rule(after[1].status, (404,), rule_id=target.rule("era.session-ended"),
                                      why="the session was ended by DELETE") + problems, evidence)


async def _bad_version(target: Target, session: EraSession, send: Send, evidence: list[Exchange]) -> Outcome:
    sent = await send(session.post(_ping(5), headers=session.headers(version="1999-01-01")))
    return _status(target, sent, evidence, (400,), "era.version-header")


# -- the GET stream and resumption ----------------------------------------------------------------------------
def _get(target: Target, session: EraSession, last_event_id: str | None = None) -> Request:
    extra = (("Last-Event-ID", last_event_id),) if last_event_id is not None else ()
    return Request("GET", (("Accept", "text/event-stream"), *session.headers(), *extra, *target.auth_headers()))


def _stream_problems(target: Target, status: int, kind: str, messages: list[object]) -> list[Problem]:
    """A GET is answered with an event stream or 405, and carries no JSON-RPC response."""
    if status == 405:
        return []
    if status != 200 or kind != "text/event-stream":
        return [problem(target.rule("era.get-stream"), f"HTTP {status} with Content-Type {kind or 'none'!r}, expected "
                                                       "text/event-stream (or HTTP 405)")]
    responses = [m for m in messages if isinstance(m, dict) and ("result" in m or "error" in m)]
    return [problem(target.rule("era.get-no-response"), f"a response on the GET stream: {json.dumps(r)[:100]}")
            for r in responses[:1]]


async def _get_stream(target: Target, session: EraSession, send: Send, evidence: list[Exchange]) -> Outcome:
    stream = await stream_exchange(target.url, _get(target, session), timeout=target.timeout, linger=LINGER)
    evidence.append(stream.exchange())
    if stream.status == 0:
        return Outcome.broken(rule(target.rule("era.get-stream")), f"no response: {stream.error}", evidence)
    kind = media_type(stream.header("content-type") or "")
    return Outcome.judged(_stream_problems(target, stream.status, kind, stream.messages()), evidence)


async def _resume(target: Target, session: EraSession, send: Send, evidence: list[Exchange]) -> Outcome:
    """Where the GET stream's events carry ids: a ping on the session (its answer belongs to
    the POST), then a GET with ``Last-Event-ID``: the resumed stream is still an event stream
    (or 405), replays nothing of another stream (not the ping's answer) and carries no response."""
    first = await stream_exchange(target.url, _get(target, session), timeout=target.timeout, linger=LINGER, events=1)
    evidence.append(first.exchange())
    if first.status != 200 or not first.ids:
        return Outcome(NOT_APPLICABLE, f"the GET stream gave no event id within {LINGER:g} s (HTTP {first.status}): "
                                       "the server offers no resumption", evidence)
    ping = await send(session.post(_ping("resume-ping")))
    evidence.append(ping)
    await anyio.sleep(0.1)
    resumed = await stream_exchange(target.url, _get(target, session, first.ids[-1]), timeout=target.timeout, linger=LINGER)
    evidence.append(resumed.exchange())
    if resumed.status == 0:
        return Outcome.broken(rule(target.rule("era.get-stream")), f"no response: {resumed.error}", evidence)
    messages = resumed.messages()
    problems = _stream_problems(target, resumed.status, media_type(resumed.header("content-type") or ""), messages)
    if any(isinstance(m, dict) and m.get("id") == "resume-ping" for m in messages):
        problems.append(problem(target.rule("era.replay-same-stream"), "the answer to a POST's ping was replayed on the "
                                                                       "resumed GET stream"))
    return Outcome.judged(problems, evidence)


def _ids_of(body: bytes) -> list[str]:
    """The event ids an SSE body carried, in order (a block without data counts: a priming
    event's id is one a client may resume from)."""
    reader, ids = SSEReader(), []
    for line in body.splitlines(keepends=True):
        reader.feed(line)
        if reader.last_event_id and reader.last_event_id not in ids:
            ids.append(reader.last_event_id)
    return ids


async def _event_ids(target: Target, session: EraSession, send: Send, evidence: list[Exchange]) -> Outcome:
    """Two GET streams one after the other (a 409 to the second, the first not yet seen closed,
    is tried again a few times), and two pings posted (Accept lists text/event-stream): no
    event id that one stream carried comes again on another. Only ids present are judged;
    fewer than two streams with ids leave nothing to compare."""
    first: dict[str, str] = {}  # each id, and the stream that carried it first
    problems: list[Problem] = []
    carried = 0

    def note(stream: str, ids: list[str]) -> None:
        nonlocal carried
        carried += bool(ids)
        for event_id in ids:
            if first.setdefault(event_id, stream) != stream:
                problems.append(problem(target.rule("era.event-ids-unique"), f"event id {event_id[:80]!r} on "
                                        f"{first[event_id]} and again on {stream}"))

    for n in (1, 2):
        for _ in range(RETRIES):  # one GET stream at a time: the server may not have seen the first end yet
            stream = await stream_exchange(target.url, _get(target, session), timeout=target.timeout, linger=LINGER)
            evidence.append(stream.exchange())
            if stream.status != 409:
                break
            await anyio.sleep(LINGER / RETRIES)
        note(f"GET stream {n}", list(dict.fromkeys(stream.ids)) if stream.is_event_stream else [])
    for n in (1, 2):
        sent = await send(session.post(_ping(f"event-ids-{n}")))
        evidence.append(sent)
        if sent[1] is not None and media_type(sent[1].header("content-type") or "") == "text/event-stream":
            note(f"the POST stream of ping \"event-ids-{n}\"", _ids_of(sent[1].body))
    if carried < 2:
        return Outcome(NOT_APPLICABLE, f"event ids on {carried} of the session's streams (two GET, two POST): "
                                       "nothing to compare", evidence)
    return Outcome.judged(problems, evidence, f"{len(first)} event ids on {carried} streams")


async def _origin(target: Target, session: EraSession, send: Send, evidence: list[Exchange]) -> Outcome:
    if not target.loopback:
        return Outcome(NOT_APPLICABLE, "the target is not on a loopback address (which origins are valid is its own "
                                       "choice)", evidence)
    sent = await send(session.post(_ping(8), headers=session.headers() + (("Origin", "http://evil.example.com"),)))
    evidence.append(sent)
    if sent[1] is None:
        return Outcome.broken(rule(target.rule("era.origin")), f"no reply: {sent[2]}", evidence)
    allowed = frozenset({403}) if target.revision == "2025-11-25" else frozenset(range(400, 500))
    return Outcome.judged(status_rule(sent[1].status, allowed, rule_id=target.rule("era.origin"),
                                      why="a foreign Origin on a loopback server"), evidence)


def _http(cid: str, title: str, cites: str, sends: str, run: Run, enforces: tuple[str, ...], *,
          revisions: tuple[str, ...] = SESSION_REVISIONS, needs_id: bool = False) -> Check:
    return Check(f"era.{cid}", title, cites, sends, steps=with_channel(_on_session(run, needs_id=needs_id)),
                 enforces=enforces, revisions=revisions, transports=(STREAMABLE_HTTP,))


ERA_HTTP_CHECKS: tuple[Check, ...] = (
    _http("content-type", "a request is answered with application/json or text/event-stream", SENDING,
          "ping on a session", _content_type, ("era.request-content-type",)),
    _http("session-id-visible", "the Mcp-Session-Id holds visible ASCII only", SESSIONS,
          "initialize (the session id it issues)", _session_id, ("era.session-id-chars",), needs_id=True),
    _http("session-required", "a request without Mcp-Session-Id after initialize is 400", SESSIONS,
          "ping without the Mcp-Session-Id header", _no_session, ("era.session-required",), needs_id=True),
    _http("session-unknown", "a request naming an unknown session is 404", SESSIONS,
          "ping with an Mcp-Session-Id the server never issued", _unknown_session, ("era.session-ended",),
          needs_id=True),
    _http("session-deleted", "a session ended by DELETE is 404 afterwards (DELETE: 200 or 204, or 405)", SESSIONS,
          "DELETE with the session id, then ping on it", _deleted, ("era.session-ended", "mcpwire.delete-status"),
          needs_id=True),
    _http("version-header-unsupported", "an unsupported MCP-Protocol-Version on a session is 400", VERSION_HEADER,
          "ping with MCP-Protocol-Version: 1999-01-01", _bad_version, ("era.version-header",),
          revisions=HEADER_REVISIONS),
    _http("get-stream", "GET on a session opens an SSE stream or is 405, and carries no response", LISTENING,
          "GET with Accept: text/event-stream and the session's headers (read for 0.5 s)", _get_stream,
          ("era.get-stream", "era.get-no-response")),
    _http("resume", "resuming the GET stream with Last-Event-ID replays nothing of another stream", RESUMING,
          "GET (its first event id), ping, then GET with Last-Event-ID (when the stream gives ids)", _resume,
          ("era.get-stream", "era.get-no-response", "era.replay-same-stream")),
    _http("event-ids-unique", "no event id comes on two streams of one session", RESUMING,
          "GET twice (each read for 0.5 s), then two pings with Accept listing text/event-stream", _event_ids,
          ("era.event-ids-unique",)),
    _http("origin-foreign-refused", "a foreign Origin is refused (2025-11-25: 403)", SECURITY,
          "ping on a session with Origin: http://evil.example.com", _origin, ("era.origin",)),
)
