"""One conversation of the initialize era, whatever carries it: :func:`channel` opens it for a
check (a session of Streamable HTTP, opened by ``initialize``; the stdio process the runner
initialized for the revision; or an HTTP+SSE connection of 2024-11-05, its GET stream and its
POST endpoint), and :meth:`Channel.call` sends one message on it and gives back what answers it.

So a rule every initialize-era transport shares (ping, the ids, an unknown method, a parse
error, a notification, a batch) is written once (:mod:`mcpwire_adapters.testing.probe.era_checks`)
and judged on the reply that carries the answer: the HTTP response of a POST, the stdio lines up
to the sentinel, or the event on the SSE stream (HTTP+SSE answers on the stream, not on the POST).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio

from ..era_wire import EraSession, initialize, notification, open_session, response_of
from ..rawwire import NDJSON, Exchange, Reply, Request, Send
from ..rawwire_sse import LegacyLink, legacy_link
from .checks import HTTP_SSE, STDIO, Target

__all__ = ["Channel", "Call", "channel"]

SILENCE = 0.3  # seconds an unanswered message is given to show it is answered after all (HTTP+SSE)
GRACE = 0.3  # stdio: seconds an answer may come after the server answered the sentinel sent after it


@dataclass(frozen=True)
class Call:
    """One message sent on a channel: the ``exchanges`` it took (the evidence), the ``reply``
    that carries its answer (None: none came, ``error`` says why) and the HTTP ``status`` of
    the POST (0 on stdio)."""

    exchanges: tuple[Exchange, ...]
    reply: Reply | None
    error: str | None
    status: int = 0

    @property
    def request(self) -> Request:
        return self.exchanges[0][0]

    def answer(self) -> dict[str, Any] | None:
        return response_of(self.reply)


class Channel:
    """A conversation in ``revision`` on ``transport``: ``initialized`` is its InitializeResult;
    ``session`` the Streamable HTTP session (None elsewhere)."""

    def __init__(self, target: Target, send: Send, *, session: EraSession | None = None,
                 link: LegacyLink | None = None) -> None:
        self.target, self.send, self.session, self.link = target, send, session, link
        self.revision = target.revision
        self.initialized: dict[str, Any] = (session.result if session is not None else target.initialized) or {}

    @property
    def stdio(self) -> bool:
        return self.target.transport == STDIO

    async def call(self, message: Any = None, *, raw: bytes | None = None, answered: bool | None = True,
                   rpc_id: Any = None, settle: bool = True) -> Call:
        """Send ``message`` (``raw``: these bytes) and read what answers it; ``answered``:
        whether a response with the message's id is due (a request), a response with its id or
        a null one (None: an id the server may refuse to read), or none (a notification: on
        HTTP+SSE the stream is then watched for a short while, for a response that must not
        come; ``settle`` False: not watched, its answer not wanted); ``rpc_id``: the id of the
        response to wait for (default: the message's own)."""
        body = raw if raw is not None else json.dumps(message).encode()
        if rpc_id is None:
            rpc_id = message.get("id") if isinstance(message, dict) else None
        if self.link is not None:
            return await self._legacy(self.link, body, rpc_id, answered, settle)
        if self.session is not None:
            sent = await self.send(self.session.post(message, raw=body))
        else:
            sent = await self.send(Request("POST", (), body, rpc_id=rpc_id, answered=answered if raw is None else None,
                                           grace=GRACE))
        # (stdio: answered None waits for a response with the id, or a null one)
        return Call((sent,), sent[1], sent[2], sent[1].status if sent[1] is not None else 0)

    async def _legacy(self, link: LegacyLink, body: bytes, rpc_id: Any, answered: bool | None, settle: bool) -> Call:
        seen = len(link.stream.events)
        posted = await link.send(Request("POST", (("Content-Type", "application/json"),), body, rpc_id=rpc_id))
        status = posted[1].status if posted[1] is not None else 0
        if posted[1] is None:
            return Call((posted,), None, posted[2], status)
        if response_of(posted[1]) is not None:  # answered on the POST itself, not on the stream
            return Call((posted,), posted[1], None, status)
        if answered is not False and rpc_id is not None:
            answer = await link.answer(rpc_id, or_null=answered is None, start=seen)
            return Call((posted, answer), answer[1], answer[2], status)
        # No id to wait for (a notification, or bytes whose id cannot be read): whatever the stream
        # carries in a short while is the answer (nothing, for a notification).
        if settle:
            await link.stream.wait_for(lambda e: False, anyio.current_time() + SILENCE, start=seen)
        events = link.stream.events[seen:]
        block = "".join(f"event: {e.event}\n" + "".join(f"data: {d}\n" for d in e.data.split("\n")) + "\n"
                        for e in events)
        shown = Request("SSE", (("Accept", "text/event-stream"),), b"", rpc_id=rpc_id)
        stream = Reply(200, (("content-type", "text/event-stream"),), block.encode())
        return Call((posted, (shown, stream, None)), stream, None, status)


@asynccontextmanager
async def channel(target: Target, send: Send, evidence: list[Exchange]) -> AsyncIterator[Channel | str]:
    """A conversation for one check in ``target``'s revision and transport, or why there is
    none; its opening exchanges are added to ``evidence``."""
    if target.transport == STDIO:
        yield Channel(target, send) if target.initialized is not None else "no initialize-era connection"
        return
    if target.transport == HTTP_SSE:
        async with legacy_link(target.url, timeout=target.timeout, rate=target.rate,
                                   headers=target.auth_headers()) as link:
            evidence.append(link.stream.exchange())
            if link.endpoint is None:
                yield "the SSE stream's first event named no endpoint"
                return
            opened = Channel(target, send, link=link)
            first = await opened.call(initialize(target.revision, "init"))
            evidence.extend(first.exchanges)
            result = (first.answer() or {}).get("result")
            if not isinstance(result, dict):
                yield f"initialize over HTTP+SSE got no result ({first.error or 'an error'})"
                return
            opened.initialized = result
            evidence.extend((await opened.call(notification("notifications/initialized"), answered=False,
                                               settle=False)).exchanges)
            yield opened
        return
    session = await open_session(send, target.revision, evidence)
    yield session if isinstance(session, str) else Channel(target, send, session=session)


def lines_reply(lines: list[bytes]) -> Reply:
    """Lines a stdio server wrote, as a reply (for the evidence and the judge)."""
    return Reply(0, (("content-type", NDJSON),), b"\n".join(lines))
