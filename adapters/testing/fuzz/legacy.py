"""The fuzzer over the HTTP+SSE transport of revision 2024-11-05 (specification 2024-11-05: Basic >
Transports > HTTP with SSE): the client opens an SSE stream with a GET, the server's first event
(``endpoint``) names the URI each message is POSTed to, and the server's messages (the answers)
come back as ``message`` events on the stream, not on the POST.

- :class:`LegacyConnection`: the run's connection (the stream, initialized in 2024-11-05), whose
  :meth:`~LegacyConnection.send` posts one message and reads what answers it on the stream, as
  one exchange (:class:`StreamAnswer`); a stream the server ended (or one that has carried
  many events: a stream keeps a bounded number) is opened again, and initialized again, only at
  the start of a case (:meth:`~LegacyConnection.ensure`), so no case spans two streams and a
  stream that drops is the case's failure: "the SSE stream ended";
- :func:`judge_legacy`: one step judged by the initialize-era oracle and the one judge, as on
  the other transports, but for what this transport changes: the POST is the transport's and
  2024-11-05 names no status for it (202: this project's advice), the answer is the event on
  the stream.

Which answer a message waits for is read from the oracle's demand, as on stdio (the runner's
``_awaited``): its id, or null, each id of a batch, or none. Answers may come in any order on
the one stream, so an event is this message's when it carries its id (or null where that is
allowed), or carries an id no message of the connection had: a response with a wrong id can
only answer the message waiting. A response to an earlier message (one that was slow) is
skipped. A message that calls for no answer is followed, as on stdio, by a sentinel ``ping``:
once that is answered (or :data:`SILENCE` seconds passed), and :data:`GRACE` more, what came
is all the message got. No answer within the timeout is slow, as elsewhere: no rule is broken.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.abc

from mcpwire.framing import SSEEvent

from ...client.session import TransportError
from ..demand import Demand, judge_step
from ..era_rules import LEGACY, era_rule
from ..era_wire import initialize, notification, response_of
from ..era_wire import request as rpc_request
from ..judge import problem, same_id, status_rule
from ..rawwire import TIMED_OUT, Exchange, Reply, Request, timed_out
from .. import rawwire_sse
from ..rawwire_sse import LEGACY_HEADERS, LegacyLink, legacy_link
from ..verdict import Problem
from .reading import lenient_json

__all__ = ["GRACE", "SILENCE", "LegacyConnection", "StreamAnswer", "judge_legacy"]

SILENCE = 0.3  # seconds a message that calls for no answer is given to show none comes, at the most
GRACE = 0.05  # seconds past the sentinel's answer: the server has read the message, an answer would be out
MAX_IDS = 4096  # ids of the messages posted on a connection, kept to tell a wrong id from a late answer
_EVENT_TYPE = "message"  # the server's messages are SSE message events (the transport's sentence)


@dataclass(frozen=True)
class StreamAnswer(Reply):
    """What answers a message posted to the HTTP+SSE endpoint: the ``message`` events of the SSE
    stream that carry its answer (status and Content-Type are the stream's: 200,
    text/event-stream), and ``post``, the POST's own reply (its status, 202 usually)."""

    post: Reply | None = None


def _block(events: list[SSEEvent]) -> bytes:
    return "".join(f"event: {e.event}\n" + "".join(f"data: {line}\n" for line in e.data.split("\n")) + "\n"
                   for e in events).encode()


def _key(value: Any) -> str:
    return type(value).__name__ + json.dumps(value)


def _ids_of(body: bytes) -> list[Any]:
    """The ids of the requests in a message (a batch's, each)."""
    try:
        message = json.loads(body)
    except ValueError:
        return []
    items = message if isinstance(message, list) else [message]
    return [m["id"] for m in items if isinstance(m, dict) and "id" in m and m["id"] is not None]


class LegacyConnection:
    """The run's HTTP+SSE connection to ``url``: opened and initialized by :meth:`open`, its
    messages sent by :meth:`send`, opened again by :meth:`ensure` once the server ended its
    stream, closed by :meth:`close`. Its streams are held by tasks of ``group``."""

    def __init__(self, group: anyio.abc.TaskGroup, url: str, *, timeout: float, rate: float = 0.0) -> None:
        self.group, self.url, self.timeout, self.rate = group, url, timeout, rate
        self.link: LegacyLink | None = None
        self._close: anyio.Event | None = None
        self._ids: dict[str, None] = {}
        self._sentinels = 0

    async def _hold(self, *, task_status: anyio.abc.TaskStatus[tuple[LegacyLink, anyio.Event]]) -> None:
        closed = anyio.Event()
        async with legacy_link(self.url, timeout=self.timeout, rate=self.rate) as link:
            task_status.started((link, closed))
            await closed.wait()

    async def open(self) -> dict[str, Any]:
        """Open a stream (closing the one before), then ``initialize`` naming 2024-11-05 and
        ``notifications/initialized``: the InitializeResult. :class:`TransportError` when the
        stream names no endpoint, or initialize is not answered with 2024-11-05."""
        self.close()
        self.link, self._close = await self.group.start(self._hold)
        self._ids.clear()
        if self.link.endpoint is None:
            stream = self.link.stream
            raise TransportError(f"{self.url}: no SSE stream whose first event is endpoint (HTTP {stream.status}"
                                 + (f", {stream.error}" if stream.error else "") + ")")
        sent = await self.send(Request("POST", LEGACY_HEADERS, json.dumps(initialize(LEGACY, "fuzz-init")).encode(),
                                       rpc_id="fuzz-init", answered=True))
        result = (response_of(sent[1]) or {}).get("result")
        if not isinstance(result, dict) or result.get("protocolVersion") != LEGACY:
            raise TransportError(f"{self.url}: initialize naming {LEGACY} over HTTP+SSE was not answered with "
                                 f"{LEGACY} ({sent[2] or (result or {}).get('protocolVersion')!r})")
        await self.link.send(Request("POST", LEGACY_HEADERS,  # not answered: no need to watch the stream
                                     json.dumps(notification("notifications/initialized")).encode()))
        return result

    async def ensure(self) -> None:
        """Open the connection again if the server ended its stream, or the stream has held half
        the events a stream keeps (:data:`~mcpwire_adapters.testing.rawwire_sse.MAX_EVENTS`:
        past them no answer would be seen). Between cases only."""
        if self.link is None or self.link.stream.ended or len(self.link.stream.events) >= rawwire_sse.MAX_EVENTS // 2:
            await self.open()

    def close(self) -> None:
        if self._close is not None:
            self._close.set()
            self._close = None

    async def send(self, request: Request) -> Exchange:
        """POST ``request`` to the endpoint and read its answer on the stream: the POST's own
        exchange when it was refused (3xx and up: nothing goes to the stream) or failed, else a
        :class:`StreamAnswer`. ``request.answered`` and ``rpc_id`` say what to wait for (see
        the module docstring)."""
        link = self.link
        if link is None or link.stream.ended:
            why = f" ({link.stream.error})" if link is not None and link.stream.error else ""
            return request, None, f"the SSE stream ended{why}: the server closed it"
        seen = len(link.stream.events)
        own = _ids_of(request.body)
        for rpc_id in own:
            self._ids[_key(rpc_id)] = None
        while len(self._ids) > MAX_IDS:
            del self._ids[next(iter(self._ids))]
        posted = await link.send(request)
        reply = posted[1]
        if reply is None or reply.status >= 300:
            return posted
        if reply.body and any(isinstance(m, dict) and ("result" in m or "error" in m) for m in reply.messages()):
            return posted  # answered on the POST itself, not on the stream
        events, error = await self._answers(link, request, seen, own)
        return posted[0], StreamAnswer(200, (("content-type", "text/event-stream"),), _block(events), post=reply), error

    async def _answers(self, link: LegacyLink, request: Request, seen: int,
                       own: list[Any]) -> tuple[list[SSEEvent], str | None]:
        """The events from ``seen`` on that answer ``request`` (whose body carries the ids
        ``own``), and why they are incomplete (None: they are not)."""
        batch = isinstance(request.rpc_id, tuple)
        wanted: list[Any] = list(request.rpc_id) if batch else [request.rpc_id]
        silent = request.answered is False
        null_ok = request.answered is None or (request.answered is True and request.rpc_id is None)
        got: list[SSEEvent] = []

        def found(event: SSEEvent) -> bool:
            if event.event != _EVENT_TYPE:
                return False
            try:
                message = json.loads(event.data)
            except ValueError:
                got.append(event)  # not JSON: no message at all, whatever it answers
                return False
            if not isinstance(message, dict) or not ("result" in message or "error" in message):
                if not isinstance(message, dict) or "method" not in message:
                    got.append(event)  # not a JSON-RPC message
                return False
            rpc_id = message.get("id")
            if not silent:
                match = next((i for i, w in enumerate(wanted) if same_id(rpc_id, w)), None)
                if match is not None:
                    got.append(event)
                    del wanted[match]
                    return not wanted
                if rpc_id is None and null_ok:
                    got.append(event)
                    return True
            if any(same_id(rpc_id, o) for o in own) and not batch:
                got.append(event)  # its own id, where another (null) was due
                return not silent
            if rpc_id is None or _key(rpc_id) not in self._ids:
                got.append(event)  # an id no message had: the answer to this one, with a wrong id
                return not silent
            return False  # an earlier message's answer

        if silent:
            if await self._sentinel(link, seen):
                await anyio.sleep(GRACE)
            for event in link.stream.events[seen:]:
                found(event)
            return got, None
        done = await link.stream.wait_for(found, anyio.current_time() + self.timeout, start=seen)
        if done is not None:
            return got, None
        if link.stream.ended:
            why = f" ({link.stream.error})" if link.stream.error else ""
            return got, f"the SSE stream ended{why} before the answer came: the server closed it"
        return got, f"{TIMED_OUT} {self.timeout:g} s (on the SSE stream)"


    async def _sentinel(self, link: LegacyLink, seen: int) -> bool:
        """Post a ``ping`` of an id of its own and wait (:data:`SILENCE` at most) for its answer
        on the stream, from event ``seen`` on: whether it came."""
        self._sentinels += 1
        marker = f"fuzz-sentinel-{self._sentinels}"
        self._ids[_key(marker)] = None
        posted = await link.send(Request("POST", LEGACY_HEADERS, json.dumps(rpc_request("ping", marker)).encode(),
                                         rpc_id=marker))
        if posted[1] is None or posted[1].status >= 300:
            return False

        def answered(event: SSEEvent) -> bool:
            try:
                message = json.loads(event.data)
            except ValueError:
                return False
            return isinstance(message, dict) and message.get("id") == marker and "method" not in message

        return await link.stream.wait_for(answered, anyio.current_time() + SILENCE, start=seen) is not None


def judge_legacy(kind: str, request: Request, reply: Reply | None, error: str | None,
                 demand: Callable[[], Demand]) -> list[Problem]:
    """Every problem with what answered one step sent over HTTP+SSE (``reply``: a
    :class:`StreamAnswer`, or the POST's own reply when it was refused or answered itself),
    against ``demand()``, the initialize-era oracle's (see the module docstring)."""
    if timed_out(error):
        return []
    if reply is None:
        return [problem("jsonrpc.reply", f"no answer: {error}")]
    expected = demand()
    post = reply.post if isinstance(reply, StreamAnswer) and reply.post is not None else reply
    if expected.refusal is not None:  # refused (a foreign Origin), or this project's advice (Content-Type)
        statuses = expected.refusal.statuses
        return status_rule(post.status, statuses, rule_id=expected.refusal.rule, why=expected.reason) if statuses else []
    if isinstance(reply, StreamAnswer):
        shown = [] if post.status == 202 else [problem("mcpwire.legacy-post-status", f"the POST was answered HTTP "
                                                                                     f"{post.status}")]
        return shown + judge_step(kind, request, reply, error, lambda: expected, stdio=False, revision=LEGACY)
    if reply.status < 300:  # the answer in the POST's response
        return [problem(era_rule("legacy.message-events", LEGACY), "the answer came in the POST's response, not as an "
                                                                   "event on the SSE stream")] + judge_step(
            kind, request, reply, error, lambda: expected, stdio=True, revision=LEGACY)
    answered = any(isinstance(m, dict) and ("result" in m or "error" in m) for m in reply.messages())
    if expected.silent or not (answered or lenient_json(request.body)):
        # Refused at the POST: a notification may be; bytes that are not JSON never became a
        # JSON-RPC message, and 2024-11-05 says nothing of how a POST is answered (the probe's
        # parse-error check reads it so too).
        return [] if expected.silent else [problem("mcpwire.parse-error", f"refused with HTTP {reply.status} and no "
                                                                          "JSON-RPC error (-32700) on the stream")]
    return judge_step(kind, request, reply, error, lambda: expected, stdio=False, revision=LEGACY)
