"""Reading what the server sends back: HTTP response bodies and stdio lines, as client events.

Owns, client side (specification: Basic, Messages and ResultType; Basic > Transports >
Streamable HTTP, Receiving Messages, and stdio; Basic > Patterns > Multi Round-Trip Requests,
Progress and Subscriptions; Server > Utilities > Logging):

- :class:`HttpResponseParser`, one per request: fed the HTTP status, content type and the
  body in chunks; a JSON body is buffered (bounded) and decoded at the end, an SSE body is
  read incrementally with :class:`~mcpwire.SSEReader`, each ``data`` one JSON-RPC message;
- the one-message reader both share with :class:`~mcpwire.ClientStdioConnection` (NDJSON lines
  from a server's stdout, ``mcpwire.client.stdio``): several requests in flight told apart by
  id (progress by its token, listen events by subscription id);
- turning one message into events: the final response into :class:`ResultReceived` (typed by
  method; no ``resultType`` means complete), :class:`ErrorResult` or :class:`InputRequired`;
  notifications into :class:`Progress`, :class:`LogMessage`, :class:`ListenAck`,
  :class:`ListChanged`, :class:`ResourceUpdated` (the subscription id must be one of ours).

A JSON-RPC request from the server (method and id) is a protocol violation in 2026-07-28
(the server MUST NOT send requests on a response stream or on stdout: Basic > Transports >
Streamable HTTP, Receiving Messages; stdio, Receiving Messages): over HTTP it raises
:class:`RemoteProtocolError` -32600 ("Server sent request '<m>' on response stream; ..."), the
official conformance runner's wording; on stdio, where the framing and the
other requests survive, the line becomes an :class:`ErrorResult` with ``request_id=None``.
Unknown notifications are ignored; malformed ones are dropped (notifications are never answered).
On an initialize-era session a message the server engine would answer with an error (the
envelope's rule: anything but a notification or a response) is an :class:`InvalidMessage`.
The ids a server's messages carry are taken as the schema's RequestId allows (any string, any
integer: the envelope's ``SCHEMA_IDS``), not within the bounds our server sets itself: a
server request's id is echoed in the answer as the same JSON token (``10**20`` as
``100000000000000000000``); a float, a boolean or null is still no id (-32600, id null).

On an initialize-era session (``client.initialize_era``) the same readers serve the older
revisions (specification 2025-11-25: Basic > Transports > Streamable HTTP and stdio): a server
request becomes a :class:`ServerRequest`; list_changed and resources/updated carry no
subscription; results without the 2026-07-28 caching fields read as not cacheable (ttlMs 0,
private) in their typed ``value``; and an SSE response that ends early after an event id is
resumable (:attr:`HttpResponseParser.resume`: GET with ``Last-Event-ID`` after ``retry``
milliseconds, and read the new response with ``HttpResponseParser(..., resumed=True)``).
:class:`SessionStreamParser` reads the session's standalone GET stream.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Protocol

import msgspec
from msgspec import UNSET

from .events import (
    ClientEvent, ErrorResult, InputRequired, InvalidMessage, ListChanged, ListenAck, LogMessage, OutgoingRequest,
    Progress, ResourceUpdated, ResultReceived, ServerRequest,
)
from ..wire.validators import ValidatorFactory
from ..wire.envelope import SCHEMA_IDS, Notification, Request, RequestId, Response, UnansweredMessage, decode_message
from ..wire.errors import ErrorCode, RemoteProtocolError
from ..wire.meta import SUBSCRIPTION_ID_META_KEY
from ..wire.tasks import Task
from .events import TaskNotification
from ..wire.methods import METHODS, MRTR_METHODS, NOTIFICATIONS, SERVER_REQUESTS
from ..wire.sse import SSEReader
from .learned import Learned
from .states import REQUEST, RequestState
from ..types import (
    InputRequest,
    InputRequiredResult,
    ListToolsResult,
    LoggingMessageNotificationParams,
    ProgressNotificationParams,
    ResourceUpdatedNotificationParams,
    SubscriptionsAcknowledgedNotificationParams,
    Tool,
)

__all__ = [
    "TRANSPORT_ERROR", "Engine", "HttpResponseParser", "MalformedResult", "Resume", "SessionStreamParser",
]

TRANSPORT_ERROR: Final = ErrorCode.TRANSPORT_ERROR
MAX_ENDED: Final = 256
"""Ended requests remembered per reader, with their final state: late messages for a cancelled
one are dropped, and ``state_of`` can still answer for recent ones."""
_SESSION_TASK_METHODS: Final = frozenset({"tasks/get", "tasks/cancel"})  # 2025-11-25: each answers a Task
_NOT_CACHED: Final = {"ttlMs": 0, "cacheScope": "private"}  # what an initialize-era result means
_IN_FLIGHT: Final = frozenset({RequestState.AWAITING, RequestState.RECEIVING})  # built once: Enum member reads cost calls


class Engine(Protocol):
    """What a response reader needs of the client engine (a :class:`~mcpwire.Client`)."""

    @property
    def learned(self) -> Learned: ...

    @property
    def initialize_era(self) -> bool: ...

    @property
    def validator(self) -> ValidatorFactory | None: ...

    def cancel(self, request: OutgoingRequest, reason: str | None = None) -> bytes: ...


def _key(request_id: RequestId) -> tuple[type, RequestId]:
    return (type(request_id), request_id)  # 1 and "1" are different ids


class _Tracker:
    """Requests awaiting their final response, each moved by ``states.REQUEST``, and the
    events each message gives."""

    def __init__(self, client: Engine, elsewhere: Mapping[str | int, RequestId] | None = None) -> None:
        self.client = client
        self.learned = client.learned
        self.requests: dict[tuple[type, RequestId], OutgoingRequest] = {}
        self.states: dict[tuple[type, RequestId], RequestState] = {}
        self.tokens: dict[tuple[type, RequestId], RequestId] = {}
        self.ended: dict[tuple[type, RequestId], RequestState] = {}
        # The progress tokens of requests read elsewhere (a session's GET stream: the host's
        # requests in flight, each on its own response), by token: read, never written.
        self.elsewhere = elsewhere

    def add(self, request: OutgoingRequest) -> None:
        key = _key(request.id)
        self.requests[key] = request
        self.states[key] = REQUEST.initial
        self.ended.pop(key, None)
        if request.progress_token is not None:
            self.tokens[_key(request.progress_token)] = request.id

    def state_of(self, request_id: RequestId) -> RequestState | None:
        key = _key(request_id)
        return self.states.get(key) or self.ended.get(key)

    def move(self, request: OutgoingRequest, verb: str) -> None:
        """Move ``request`` through the table; a final move takes it out of flight."""
        key = _key(request.id)
        state = REQUEST.move(self.states[key], verb)
        if state in _IN_FLIGHT:
            self.states[key] = state
            return
        self.requests.pop(key, None)
        self.states.pop(key, None)
        if request.progress_token is not None:
            self.tokens.pop(_key(request.progress_token), None)
        if len(self.ended) >= MAX_ENDED:
            del self.ended[next(iter(self.ended))]
        self.ended[key] = state

    def message(self, data: bytes | str) -> list[ClientEvent]:
        try:
            message = decode_message(data.encode("utf-8") if isinstance(data, str) else data, SCHEMA_IDS)
        except UnansweredMessage:
            raise
        except RemoteProtocolError as exc:
            if not self.client.initialize_era:
                raise  # 2026-07-28: the client sends no responses (stdio; HTTP carries requests only)
            # JSON-RPC 2.0 section 5: a call is answered, with id null when the id cannot be read.
            return [InvalidMessage(request_id=exc.request_id, code=exc.code, message=exc.message, data=exc.data,
                                   for_request=self._owner())]
        if isinstance(message, Request):
            if self.client.initialize_era:
                return [self._server_request(message)]
            raise RemoteProtocolError(
                f"Server sent request '{message.method}' on response stream; stateless lifecycle "
                "forbids this (use MRTR)",
                code=ErrorCode.INVALID_REQUEST,
                request_id=message.id,
            )
        if isinstance(message, Notification):
            return self._notification(message)
        return self._response(message)

    def _server_request(self, message: Request) -> ServerRequest:
        # An initialize-era server's own request: typed as the input request the same handlers
        # answer in 2026-07-28 (elicitation, sampling, roots); ping and unknown methods untyped.
        params: Any = {}
        if message.params is not UNSET:
            try:
                params = msgspec.json.decode(message.params)
            except msgspec.DecodeError:
                params = None
        request: InputRequest | None = None
        if message.method in SERVER_REQUESTS and type(params) is dict:
            try:
                request = msgspec.convert({"method": message.method, "params": params}, InputRequest)
            except msgspec.ValidationError:
                request = None
        return ServerRequest(
            request_id=message.id, method=message.method, request=request,
            params=params if type(params) is dict else {}, for_request=self._owner(),
        )

    def _owner(self) -> RequestId | None:
        # On an HTTP response stream exactly one of our requests is in flight: the one it serves.
        return next(iter(self.requests.values())).id if len(self.requests) == 1 else None

    # -- responses --------------------------------------------------------------------------------
    def _response(self, response: Response) -> list[ClientEvent]:
        if response.id is None:
            error = response.error
            if error is UNSET:  # a result names its request (schema: JSONRPCResultResponse.id is required)
                raise RemoteProtocolError("result with id null")
            if len(self.requests) != 1:
                return [ErrorResult(request_id=None, code=error.code, message=error.message, data=error.data)]
            request = next(iter(self.requests.values()))  # HTTP: the stream answers exactly one request
        else:
            found = self.requests.get(_key(response.id))
            if found is None:
                if self.ended.get(_key(response.id)) is RequestState.CANCELLED:
                    return []  # the answer crossed our cancellation on the wire: dropped
                raise RemoteProtocolError(f"response for unknown request id {response.id!r}")
            request = found
        if response.error is not UNSET:
            self.move(request, "error")
            e = response.error
            return [ErrorResult(request_id=request.id, code=e.code, message=e.message, data=e.data)]
        assert response.result is not UNSET
        try:
            event = self._result(request, response.result)
        except RemoteProtocolError as exc:
            self.move(request, "error")
            # The request is out of flight now: say which one the malformed result answered,
            # so a stdio host can end that request instead of waiting for it forever.
            raise MalformedResult(exc.message, code=exc.code, data=exc.data, request_id=request.id) from None
        self.move(request, "input" if isinstance(event, InputRequired) else "result")
        return [event]

    def _result(self, request: OutgoingRequest, raw: msgspec.Raw) -> ClientEvent:
        try:
            data = msgspec.json.decode(raw)
        except msgspec.DecodeError:  # JSON, but with a number Python cannot hold (1e400)
            raise RemoteProtocolError("result is not JSON") from None
        if type(data) is not dict:
            raise RemoteProtocolError("result must be an object", request_id=request.id)
        result_type = data.get("resultType", "complete")  # absent means complete (Basic, ResultType)
        if type(result_type) is not str:
            raise RemoteProtocolError("resultType must be a string", request_id=request.id)
        if self.client.initialize_era and (request.method in _SESSION_TASK_METHODS or (
                request.method == "tools/call" and "task" in request.params and "task" in data)):
            return self._session_task(request, data, raw)
        if result_type == "input_required":
            return self._input_required(request, data)
        value: Any = None
        problem: str | None = None
        if result_type == "task":
            # The tasks extension: a CreateTaskResult, for the methods that support tasks only
            # (ext-tasks: Supported Methods; anything else is an invalid response).
            if request.method != "tools/call":
                problem = f"a task (resultType \"task\") does not answer {request.method}"
            else:
                try:
                    value = msgspec.convert(data, Task)
                except msgspec.ValidationError as exc:
                    problem = f"the result does not match CreateTaskResult: {exc}"
        if result_type == "complete":
            spec = METHODS.get(request.method)
            typed = data
            if self.client.initialize_era and spec is not None and spec.cacheable:
                typed = {**_NOT_CACHED, **data}
            if request.method == "tools/list":
                value = self._tools(typed)
            elif spec is not None and spec.result is not None:
                try:
                    value = msgspec.convert(typed, spec.result)
                except msgspec.ValidationError as exc:
                    problem = f"the result does not match {spec.result.__name__}: {exc}"
            if problem is None and request.method == "tools/call" and type(request.params.get("name")) is str:
                problem = self.learned.check_output(request.params["name"], data)
        return ResultReceived(
            request_id=request.id, method=request.method, value=value, data=data, result_type=result_type,
            raw=bytes(raw), problem=problem,
        )

    def _session_task(self, request: OutgoingRequest, data: dict[str, Any], raw: msgspec.Raw) -> ResultReceived:
        """2025-11-25 tasks (Basic > Utilities > Tasks): a ``tools/call`` that asked for a task
        is answered ``{task}`` (``result_type`` "task"); ``tasks/get`` and ``tasks/cancel`` a
        ``Task``; both read into :class:`~mcpwire.tasks.Task`."""
        problem: str | None = None
        value: Any = None
        try:
            value = Task.from_session(data["task"] if request.method == "tools/call" else data)
        except (KeyError, msgspec.ValidationError) as exc:
            problem = f"the result is not a 2025-11-25 task: {exc}"
        return ResultReceived(
            request_id=request.id, method=request.method, value=value, data=data,
            result_type="task" if request.method == "tools/call" else "complete", raw=bytes(raw), problem=problem,
        )

    def _tools(self, data: dict[str, Any]) -> ListToolsResult | None:
        # Tools are decoded one by one so a malformed one cannot hide the rest; each valid one
        # teaches the engine its x-mcp-header annotations, and invalid ones are left out.
        raw_tools = data.get("tools")
        tools: list[Tool] = []
        for item in raw_tools if type(raw_tools) is list else []:
            try:
                tools.append(msgspec.convert(item, Tool))
            except msgspec.ValidationError:
                continue
        # x-mcp-header annotations are 2026-07-28's: an initialize-era session sends no Mcp-Param-*.
        kept = tools if self.client.initialize_era else self.learned.learn_tools(tools)
        if self.client.validator is not None:
            self.learned.learn_output_schemas(kept, self.client.validator)
        try:
            return msgspec.structs.replace(msgspec.convert({**data, "tools": []}, ListToolsResult), tools=kept)
        except msgspec.ValidationError:
            return None

    def _input_required(self, request: OutgoingRequest, data: dict[str, Any]) -> InputRequired:
        if request.method not in MRTR_METHODS:
            raise RemoteProtocolError(
                f"Input-required result is not permitted for {request.method}",
                code=ErrorCode.INTERNAL_ERROR, request_id=request.id,
            )
        try:
            parsed = msgspec.convert(data, InputRequiredResult)
        except msgspec.ValidationError as exc:
            raise RemoteProtocolError(f"Invalid input-required result: {exc}", request_id=request.id) from None
        if parsed.input_requests is UNSET and parsed.request_state is UNSET:
            raise RemoteProtocolError(
                "Invalid input-required result: neither inputRequests nor requestState", request_id=request.id
            )
        event = InputRequired(
            request_id=request.id,
            method=request.method,
            request=request,
            input_requests=dict(parsed.input_requests or {}),
            request_state=parsed.request_state,
            data=data,
        )
        self.learned.record_round(event)
        return event

    # -- notifications ----------------------------------------------------------------------------
    def _notification(self, note: Notification) -> list[ClientEvent]:
        method = note.method
        spec = NOTIFICATIONS.get(method)
        if spec is None or "server" not in spec.senders:
            return []
        if note.params is UNSET:
            # Only a session's list_changed goes without params (as most servers send it).
            if spec.list_changed is not None and self.client.initialize_era:
                return [ListChanged(subscription_id=None, kind=spec.list_changed)]
            return []
        try:
            if method == "notifications/progress":
                p = msgspec.json.decode(note.params, type=ProgressNotificationParams)
                owner = self.tokens.get(_key(p.progress_token))
                if owner is not None:
                    self.move(self.requests[_key(owner)], "notify")
                elif self.elsewhere is not None and p.progress_token in self.elsewhere:
                    owner = self.elsewhere[p.progress_token]  # its state is its own reader's
                else:
                    return []  # a stale or foreign token: nothing to attribute it to
                return [Progress(
                    request_id=owner, progress_token=p.progress_token, progress=p.progress,
                    total=None if p.total is UNSET else p.total,
                    message=None if p.message is UNSET else p.message,
                )]
            if method == "notifications/message":
                m = msgspec.json.decode(note.params, type=LoggingMessageNotificationParams)
                # Log messages carry no request id ($defs.LoggingMessageNotificationParams):
                # attribute one only when a single ordinary request is in flight (listen
                # streams never produce logs).
                calls = [r for r in self.requests.values() if r.method != "subscriptions/listen"]
                owner_id = calls[0].id if len(calls) == 1 else None
                if len(calls) == 1:
                    self.move(calls[0], "notify")
                return [LogMessage(request_id=owner_id, level=m.level, data=m.data,
                                   logger=None if m.logger is UNSET else m.logger)]
            if method == "notifications/subscriptions/acknowledged":
                a = msgspec.json.decode(note.params, type=SubscriptionsAcknowledgedNotificationParams)
                sid = self._subscription(a.meta)
                if sid is None:
                    return []
                raw_ids = msgspec.json.decode(note.params).get("notifications", {}).get("taskIds")
                task_ids = [t for t in raw_ids if type(t) is str] if type(raw_ids) is list else None
                return [ListenAck(subscription_id=sid, notifications=a.notifications, task_ids=task_ids)]
            if method == "notifications/tasks":
                params = msgspec.json.decode(note.params)
                task = msgspec.convert(params, Task)
                return [TaskNotification(subscription_id=self._subscription(params.get("_meta")), task=task)]
            kind = spec.list_changed if spec is not None else None
            if kind is not None:
                meta = msgspec.json.decode(note.params).get("_meta")
                return [ListChanged(subscription_id=self._subscription(meta), kind=kind)]
            if method == "notifications/resources/updated":
                u = msgspec.json.decode(note.params, type=ResourceUpdatedNotificationParams)
                return [ResourceUpdated(subscription_id=self._subscription(u.meta), uri=u.uri)]
        except (msgspec.ValidationError, msgspec.DecodeError, AttributeError):
            return []
        return []

    def _subscription(self, meta: Any) -> RequestId | None:
        if self.client.initialize_era:
            return None  # a session's GET stream: no subscription id, nothing to attribute
        sid = meta.get(SUBSCRIPTION_ID_META_KEY) if isinstance(meta, dict) else None
        listen = self.requests.get(_key(sid)) if isinstance(sid, (str, int)) else None
        if listen is None or listen.method != "subscriptions/listen":
            raise RemoteProtocolError(f"listen notification for unknown subscription {sid!r}")
        self.move(listen, "notify")
        return listen.id


class MalformedResult(RemoteProtocolError):
    """A response to one of our requests whose result breaks the protocol; ``request_id`` is
    that request (it is out of flight: this is its final word)."""


class HttpResponseParser:
    """The events of one HTTP response to ``request``, JSON or SSE
    (<https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http>).

    Create it when the response head arrives: ``HttpResponseParser(client, request,
    status=..., content_type=...)``. Call :meth:`feed` with each body chunk and :meth:`close`
    at the end of the body; handle the events each returns. :attr:`done` turns True with the
    final event; the host may then close the stream. To cancel, close the stream
    (<https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/cancellation#transport-specific-cancellation>).

    Raises :class:`RemoteProtocolError` when the server broke the protocol: a request on the
    stream, a body over ``max_body_bytes``, a non-JSON error body, a stream that ended
    without the final response (a listen stream may end so: it then yields nothing), or an
    ``initialize`` result that came with a status other than 2xx (no session was opened;
    ``data`` holds the ``status``).
    """

    def __init__(
        self,
        client: Engine,
        request: OutgoingRequest,
        *,
        status: int,
        content_type: bytes | str | None,
        max_body_bytes: int = 4 * 1024 * 1024,
        max_event_bytes: int = 4 * 1024 * 1024,
        resumed: bool = False,
    ) -> None:
        ctype = content_type.decode("latin-1") if isinstance(content_type, bytes) else (content_type or "")
        media = ctype.split(";", 1)[0].strip().lower()
        self.status = status
        self.request = request
        self.resumed = resumed
        """Whether this response is a GET resuming an earlier response to ``request``."""
        self.done = False
        self.resume: Resume | None = None
        """Set by :meth:`close` when an initialize-era SSE response ended before its final
        message after an event id: how to resume it (2025-11-25: Streamable HTTP, Resumability)."""
        self._tracker = _Tracker(client)
        self._tracker.add(request)
        self._max = max_body_bytes
        self._body: list[bytes] = []
        self._size = 0
        self._sse = SSEReader(max_event_bytes) if media == "text/event-stream" else None
        self._json = media == "application/json" or media.endswith("+json")
        self._pending: RemoteProtocolError | None = None

    @property
    def state(self) -> RequestState:
        """Where the request stands: AWAITING, RECEIVING, then its final state."""
        found = self._tracker.state_of(self.request.id)
        assert found is not None  # tracked from construction; one request never leaves `ended`
        return found

    def feed(self, chunk: bytes) -> list[ClientEvent]:
        self._raise_pending()
        if self._sse is not None:
            return self._events(self._sse.feed(chunk))
        self._size += len(chunk)
        if self._size > self._max:
            raise RemoteProtocolError(f"response body exceeds {self._max} bytes", code=TRANSPORT_ERROR)
        self._body.append(chunk)
        return []

    def close(self) -> list[ClientEvent]:
        self._raise_pending()
        if self._sse is not None:
            out = self._events(self._sse.close())
            self._raise_pending()
            last = self._sse.last_event_id
            if not self.done and self._tracker.client.initialize_era and last is not None:
                self.resume = Resume(last_event_id=last, retry_ms=self._sse.retry)
                return out
        else:
            body = b"".join(self._body)
            self._body = []
            no_body = RemoteProtocolError(
                f"HTTP {self.status} response to {self.request.method} has no JSON-RPC body",
                code=TRANSPORT_ERROR, data={"status": self.status, "body": body[:512].decode("utf-8", "replace")},
            )
            if not self._json or not body.strip():
                raise no_body
            try:
                out = self._events_json(body)
            except RemoteProtocolError:
                if 200 <= self.status < 300:
                    raise
                raise no_body from None  # an error status with some other JSON (an OAuth error, say)
            self._refuse_failed_initialize(out)
        if not self.done and self.request.method != "subscriptions/listen":
            raise RemoteProtocolError(f"response stream for {self.request.method} ended without a response",
                                      code=TRANSPORT_ERROR)
        return out

    def interrupted(self) -> Resume | None:
        """When the connection broke mid-body: how to resume, as for a stream the server ended
        (an initialize-era SSE response without its final message, after an event id), else
        ``None`` (the request failed)."""
        last = self.last_event_id
        if self.done or not self._tracker.client.initialize_era or last is None:
            return None
        return Resume(last_event_id=last, retry_ms=self.retry_ms)

    @property
    def last_event_id(self) -> str | None:
        """The id of the last SSE event read (``None`` for JSON or an SSE stream without ids)."""
        return self._sse.last_event_id if self._sse is not None else None

    @property
    def retry_ms(self) -> int | None:
        """The stream's latest ``retry`` field, in milliseconds."""
        return self._sse.retry if self._sse is not None else None

    def _raise_pending(self) -> None:
        if self._pending is not None:
            error, self._pending = self._pending, None
            raise error

    def _events(self, frames: list[Any]) -> list[ClientEvent]:
        # Events decoded before a protocol error in the same chunk are returned first and the
        # error raised by the next call, so chunking never changes what the host sees.
        out: list[ClientEvent] = []
        for frame in frames:
            if not frame.data.strip() or self.done:
                continue  # an empty priming event, or anything after the response
            try:
                events = self._events_json(frame.data)
                self._refuse_failed_initialize(events)
                out.extend(events)
            except RemoteProtocolError as exc:
                if not out:
                    raise
                self._pending = exc
                break
        return out

    def _events_json(self, data: bytes | str) -> list[ClientEvent]:
        events = self._tracker.message(data)
        if any(isinstance(e, (ResultReceived, ErrorResult, InputRequired)) for e in events):
            self.done = True
        return events

    def _refuse_failed_initialize(self, events: list[ClientEvent]) -> None:
        # The handshake opens a session only when it succeeds: an error status says it did not,
        # whatever the body holds, so neither the result nor the Mcp-Session-Id of this response
        # is taken. (A 404 here is no lost session: initialize names none.)
        if self.request.method == "initialize" and not 200 <= self.status < 300 \
                and any(isinstance(e, ResultReceived) for e in events):
            raise RemoteProtocolError(
                f"HTTP {self.status} response to initialize: the initialization did not succeed, "
                "and the session it names is not used", code=TRANSPORT_ERROR, data={"status": self.status})


class Resume(msgspec.Struct, frozen=True, kw_only=True):
    """How to resume an initialize-era SSE response that ended early: after ``retry_ms``
    milliseconds (the host's own delay when ``None``), GET the endpoint with the session
    headers and ``Last-Event-ID: last_event_id`` (``client.stream_headers(last_event_id)``)."""

    last_event_id: str
    retry_ms: int | None = None


class SessionStreamParser:
    """The events of an initialize-era session's standalone GET stream (specification
    2025-11-25: Basic > Transports > Streamable HTTP, Listening for Messages from the Server).

    Create it when the response head arrives (200 with ``text/event-stream``; a 405 means the
    server offers no such stream). Feed it the body; it yields :class:`ServerRequest` (answer
    each with ``client.answer``), :class:`LogMessage`, :class:`ListChanged` and
    :class:`ResourceUpdated` (``subscription_id=None``), and :class:`Progress` for a token of
    ``progress_tokens``: the host's own mapping of the progress tokens of its requests in flight
    on the session to their ids, read as each notification arrives (a server may report a
    call's progress here rather than on its response). A response on this stream, which the
    server must not send there, is dropped and counted in :attr:`dropped`. When the stream ends,
    reconnect after :attr:`retry_ms` with ``client.stream_headers(parser.last_event_id)``.
    """

    def __init__(self, client: Engine, *, status: int, content_type: bytes | str | None,
                 max_event_bytes: int = 4 * 1024 * 1024,
                 progress_tokens: Mapping[str | int, RequestId] | None = None) -> None:
        ctype = content_type.decode("latin-1") if isinstance(content_type, bytes) else (content_type or "")
        if status != 200 or ctype.split(";", 1)[0].strip().lower() != "text/event-stream":
            raise RemoteProtocolError(f"HTTP {status} ({ctype or 'no content type'}) instead of an event stream",
                                      code=TRANSPORT_ERROR, data={"status": status})
        self._tracker = _Tracker(client, progress_tokens)
        self._sse = SSEReader(max_event_bytes)
        self.dropped = 0

    @property
    def last_event_id(self) -> str | None:
        return self._sse.last_event_id

    @property
    def retry_ms(self) -> int | None:
        return self._sse.retry

    def feed(self, chunk: bytes) -> list[ClientEvent]:
        return self._events(self._sse.feed(chunk))

    def close(self) -> list[ClientEvent]:
        return self._events(self._sse.close())

    def _events(self, frames: list[Any]) -> list[ClientEvent]:
        out: list[ClientEvent] = []
        for frame in frames:
            if not frame.data.strip():
                continue  # a priming event
            try:
                out.extend(self._tracker.message(frame.data))
            except RemoteProtocolError:
                self.dropped += 1
        return out
