"""One admitted request and its answer, framed as each transport carries it: the exchanges the host drives.

Owns (specification: Basic > Transports > Streamable HTTP and stdio): the framing of what an
:class:`Exchange` sends — on HTTP a JSON response that becomes an SSE stream at the first
notification, on stdio one NDJSON line per message. On HTTP the framing follows what the
client takes (``accept.py``, decided at admission; :func:`http_exchange` picks the class once):
a client that takes only JSON gets no notification and a 406 where the answer must stream
(initialize era: requests to the client ride the request's stream); one that takes only
``text/event-stream`` gets a 200 answer as an event stream. On an initialize-era session every
SSE event carries an id and is kept for resumption.

The verbs and their state machine are :class:`Exchange`'s (``exchange_verbs.py``, with the
tasks extension's in ``exchange_tasks.py``); this module re-exports it, so that every exchange
name is importable from here.
"""

from __future__ import annotations

from ..wire.errors import LocalProtocolError
from ..wire.ndjson import encode_line
from ..wire.sse import encode_event
from ..wire.versions import SSE_PRIMING
from .accept import Accepts
from .exchange_tasks import MAX_SESSION_TASKS
from .exchange_verbs import MAX_PROGRESS_MESSAGE, MAX_PROGRESS_UPDATES, Exchange, resource_not_found
from .http import HttpOutput, ResponseBody, answer_reply, json_reply, sse_head
from .states import ExchangeState

__all__ = [
    "Exchange", "HttpExchange", "MAX_PROGRESS_MESSAGE", "MAX_PROGRESS_UPDATES", "MAX_SESSION_TASKS", "StdioExchange",
    "http_exchange", "resource_not_found",
]

# What the client takes, as module constants: an Enum member read through its class costs a lookup.
_BOTH, _JSON_ONLY, _SSE_ONLY = Accepts.BOTH, Accepts.JSON, Accepts.SSE
_OPEN = ExchangeState.OPEN


class HttpExchange(Exchange[HttpOutput]):
    """An exchange on Streamable HTTP: output is a list of ResponseHead/ResponseBody events.

    On an initialize-era session every SSE event carries an id (``<stream>-<n>``) and is kept
    for resumption; on 2025-11-25 the stream opens with a priming event (an id, empty data)
    and :meth:`close_stream` may end the HTTP response mid-call.
    """

    stream_key: str | None = None
    """The session's key for this request's SSE stream, once it has one."""
    detached = False
    """:meth:`close_stream` ended the HTTP response: later output belongs to the stream that
    resumes it (a GET with Last-Event-ID), whose :class:`ResumedStream` has the same ``key``."""

    def _empty(self) -> HttpOutput:
        return []

    def _key(self) -> str:
        if self.stream_key is None:
            assert self.session is not None
            self.stream_key = self.session.events.new_stream()
        return self.stream_key

    def _event(self, message: bytes, last: bool = False) -> ResponseBody:
        if self.session is None:
            return ResponseBody(data=encode_event(message), more=not last)
        key = self._key()
        frame = encode_event(message, id=self.session.events.next_event_id(key))
        self.session.events.record(key, frame, last=last)
        return ResponseBody(data=frame, more=not last)

    def _open(self) -> HttpOutput:
        out: HttpOutput = [sse_head()]
        if self.session is not None and self.revision in SSE_PRIMING:
            out.append(ResponseBody(data=encode_event(b"", id=f"{self._key()}-0"), more=True))
        return out

    def _notify_out(self, message: bytes, first: bool) -> HttpOutput:
        frame = self._event(message)
        return [*self._open(), frame] if first else [frame]

    def _requests_out(self, messages: list[bytes], first: bool) -> HttpOutput:
        frames: HttpOutput = [self._event(m) for m in messages]
        return [*self._open(), *frames] if first else frames

    def _final_out(self, message: bytes, status: int, streaming: bool) -> HttpOutput:
        if streaming:
            # Once SSE started the status is already 200: errors travel as events.
            return [self._event(message, last=True)]
        head, body = json_reply(status, message)
        return [head, body]

    def close_stream(self, retry_ms: int) -> HttpOutput:
        """2025-11-25 (SEP-1699): end this request's HTTP response now, telling the client to
        reconnect after ``retry_ms`` milliseconds with a GET carrying Last-Event-ID; the work
        goes on and its later output goes to that GET (:attr:`detached`). Only on a session
        of 2025-11-25, once (LocalProtocolError otherwise). For a client that takes only JSON
        (:attr:`accepts`) nothing happens: no output, not detached, the answer comes whole."""
        if self.session is None or self.revision not in SSE_PRIMING:
            raise LocalProtocolError("close_stream is for requests on a 2025-11-25 session")
        if self.detached:
            raise LocalProtocolError("The stream is already closed")
        if type(retry_ms) is not int or retry_ms < 0:
            raise LocalProtocolError("retry_ms must be a non-negative int")
        nxt = self._next("notify")
        if nxt is None or self.accepts is _JSON_ONLY:
            return []  # cancelled; or a client that takes no event stream: the answer stays JSON, whole
        out = self._open() if self.state is _OPEN else []
        self._key()
        self.state = nxt
        self.detached = True
        return [*out, ResponseBody(data=b"retry: %d\n\n" % retry_ms, more=True), ResponseBody(data=b"", more=False)]


class _JsonOnlyExchange(HttpExchange):
    """An exchange whose client takes only ``application/json``: its answer is one JSON
    response, so no notification is sent (nothing else changes state: the answer stays JSON)."""

    accepts = _JSON_ONLY

    def _notify(self, message: bytes, nxt: ExchangeState) -> HttpOutput:
        return []


class _StreamOnlyExchange(HttpExchange):
    """An exchange whose client takes only ``text/event-stream``: a 200 answer that would have
    been JSON is an event stream of that one event."""

    accepts = _SSE_ONLY

    def _final_out(self, message: bytes, status: int, streaming: bool) -> HttpOutput:
        if streaming:
            return [self._event(message, last=True)]
        head, body = answer_reply(status, message, _SSE_ONLY)
        return [head, body]


def http_exchange(accepts: Accepts) -> type[HttpExchange]:
    """The exchange for a client that takes ``accepts``: the framing is chosen once, with the
    class, so the common client's answer reads no decision on its way out."""
    if accepts is _BOTH:
        return HttpExchange
    return _JsonOnlyExchange if accepts is _JSON_ONLY else _StreamOnlyExchange


class StdioExchange(Exchange[bytes]):
    """An exchange on stdio: output is NDJSON bytes to write to stdout."""

    def _empty(self) -> bytes:
        return b""

    def _notify_out(self, message: bytes, first: bool) -> bytes:
        return encode_line(message)

    def _requests_out(self, messages: list[bytes], first: bool) -> bytes:
        return b"".join(encode_line(m) for m in messages)

    def _final_out(self, message: bytes, status: int, streaming: bool) -> bytes:
        return encode_line(message)
