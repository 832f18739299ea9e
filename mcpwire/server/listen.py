"""subscriptions/listen: the acknowledged filter and one open event stream.

Owns (specification: Basic > Patterns > Subscriptions; schema $defs SubscriptionFilter,
SubscriptionsAcknowledgedNotificationParams, NotificationMetaObject, SubscriptionsListenResult):

- validating the requested filter (-32602 for a bad shape) and cutting it to what the server
  honours: a list_changed flag only when that listChanged capability is advertised, resource
  URIs only when ``resources.subscribe`` is (unsupported types are omitted from the ack);
- one stream's output: the acknowledgement first, then events each stamped with
  ``_meta["io.modelcontextprotocol/subscriptionId"]`` (the listen request's id), then, on a
  graceful end, the listen result. Only requested and acknowledged types are ever sent.

The state machine is ``states.LISTEN``.
"""

from __future__ import annotations

from typing import Any, Callable, Generic, TypeVar

from ..wire.envelope import RequestId, encode_notification, encode_result
from ..wire.errors import ErrorCode, LocalProtocolError, RemoteProtocolError
from ..wire.meta import SERVER_INFO_META_KEY, SUBSCRIPTION_ID_META_KEY, RequestMeta
from ..wire.methods import LIST_CHANGED, ListKind
from ..wire.ndjson import encode_line
from ..wire.params import is_absolute_uri
from ..wire.sse import encode_event
from ..wire.versions import SSE_PRIMING
from .context import ServerContext
from .http import HttpOutput, ResponseBody, sse_head
from .states import LISTEN, ListenState
from .tasks import TaskRecord, Tasks

__all__ = [
    "ListenStream", "HttpListenStream", "StdioListenStream", "SessionStream", "StdioSessionStream", "ResumedStream", "parse_filter", "check_list_kind", "check_uri",
    "MAX_RESOURCE_SUBSCRIPTIONS",
]

MAX_RESOURCE_SUBSCRIPTIONS = 1000
LIST_FLAGS: dict[str, ListKind] = {spec.listen_flag: kind for kind, spec in LIST_CHANGED.items() if spec.listen_flag}
"""SubscriptionFilter flags that ask for a list's list_changed events, and the list each names."""
O = TypeVar("O")


def check_list_kind(kind: Any) -> None:
    """A host's list kind must be one of ``LIST_CHANGED`` ("tools", "prompts", "resources")."""
    if kind not in LIST_CHANGED:
        raise LocalProtocolError(f"Unknown list kind {kind!r}: expected one of {sorted(LIST_CHANGED)}")


def check_uri(uri: Any) -> None:
    """A host's resource URI must be a non-empty str."""
    if type(uri) is not str or not uri:
        raise LocalProtocolError(f"A resource URI must be a non-empty str, not {uri!r:.60}")


def _bad(message: str) -> RemoteProtocolError:
    return RemoteProtocolError(message, code=ErrorCode.INVALID_PARAMS)


def parse_filter(notifications: Any) -> dict[str, Any]:
    """Validate the ``notifications`` member of a listen request (SubscriptionFilter)."""
    if type(notifications) is not dict:
        raise _bad("subscriptions/listen requires a notifications object")
    for flag in LIST_FLAGS:
        if flag in notifications and type(notifications[flag]) is not bool:
            raise _bad(f"{flag} must be a boolean")
    uris = notifications.get("resourceSubscriptions", [])
    if type(uris) is not list or any(type(u) is not str or not is_absolute_uri(u) for u in uris):
        raise _bad("resourceSubscriptions must be a list of absolute URI strings")
    if len(uris) > MAX_RESOURCE_SUBSCRIPTIONS:
        raise _bad(f"resourceSubscriptions exceeds {MAX_RESOURCE_SUBSCRIPTIONS} URIs")
    task_ids = notifications.get("taskIds", [])  # the tasks extension: Task Status Notifications
    if type(task_ids) is not list or any(type(t) is not str or not t for t in task_ids):
        raise _bad("taskIds must be a list of non-empty strings")
    if len(task_ids) > MAX_RESOURCE_SUBSCRIPTIONS:
        raise _bad(f"taskIds exceeds {MAX_RESOURCE_SUBSCRIPTIONS} task ids")
    return notifications


class ListenStream(Generic[O]):
    """One open subscriptions/listen stream. Created by the engine; the host keeps it open,
    writes what :meth:`start` returns, then whatever deliveries the engine hands out for it,
    and calls :meth:`cancel` when the client goes away. Its moves are ``states.LISTEN``."""

    def __init__(self, context: ServerContext, request_id: RequestId, meta: RequestMeta, honoured: dict[str, Any]) -> None:
        self.request_id = request_id
        self.meta = meta
        self.filter = honoured
        self.state = LISTEN.initial
        self._context = context
        self._resources = tuple(honoured.get("resourceSubscriptions", ()))
        self._tasks = frozenset(honoured.get("taskIds", ()))
        self._sub_meta = {SUBSCRIPTION_ID_META_KEY: request_id}
        context.listeners.add(self)

    def _frame(self, message: bytes, first: bool = False, last: bool = False) -> O:
        raise NotImplementedError

    def _empty(self) -> O:
        raise NotImplementedError

    def _move(self, verb: str) -> bool:
        """Take ``verb`` through the table; False when the stream had ended (send nothing)."""
        before = self.state
        self.state = LISTEN.move(before, verb)
        return before is ListenState.PENDING or before is ListenState.OPEN

    def start(self) -> O:
        """The acknowledgement: always the first message of the stream. Call it once."""
        if not self._move("start"):
            return self._empty()
        params = {"notifications": self.filter, "_meta": self._sub_meta}
        return self._frame(encode_notification("notifications/subscriptions/acknowledged", params), first=True)

    def wants(self, kind: ListKind) -> bool:
        """Whether the stream is open and acknowledged ``kind``'s list_changed events."""
        return self.state is ListenState.OPEN and self.filter.get(str(LIST_CHANGED[kind].listen_flag)) is True

    def list_changed(self, kind: ListKind) -> O:
        """A list_changed event for ``kind`` ("tools", "prompts" or "resources"), if subscribed."""
        check_list_kind(kind)
        if not self._move("event") or not self.wants(kind):
            return self._empty()
        return self._frame(encode_notification(LIST_CHANGED[kind].name, {"_meta": self._sub_meta}))

    def covers(self, uri: str) -> bool:
        """Whether the stream is open and ``uri`` is (under) one of its resource subscriptions."""
        return self.state is ListenState.OPEN and any(
            uri == s or uri.startswith(s.rstrip("/") + "/") for s in self._resources
        )

    def resource_updated(self, uri: str) -> O:
        """A resources/updated event, if ``uri`` is (under) a subscribed resource."""
        check_uri(uri)
        if not self._move("event") or not self.covers(uri):
            return self._empty()
        return self._frame(encode_notification("notifications/resources/updated", {"uri": uri, "_meta": self._sub_meta}))

    def watches(self, task_id: str) -> bool:
        """Whether the stream is open and agreed to ``task_id``'s status notifications."""
        return self.state is ListenState.OPEN and task_id in self._tasks

    def watches_task(self, task: TaskRecord) -> bool:
        """Whether the stream is open and hears ``task``'s status notifications (the engine
        asks it of each stream when the task changed): :meth:`watches` its id."""
        return self.watches(task.task_id)

    def task_status(self, task: TaskRecord) -> O:
        """A ``notifications/tasks`` carrying the task's DetailedTask, if the stream watches it."""
        if not self._move("event") or not self.watches(task.task_id):
            return self._empty()
        detailed = Tasks.detailed(task)
        return self._frame(encode_notification("notifications/tasks", {**detailed, "_meta": self._sub_meta}))

    def close(self) -> O:
        """End the stream gracefully with the listen result (for example at shutdown)."""
        if not self._move("close"):
            return self._empty()
        self._context.listeners.discard(self)
        result = {
            "resultType": "complete",
            "_meta": {**self._sub_meta, SERVER_INFO_META_KEY: self._context.info},
        }
        return self._frame(encode_result(self.request_id, result), last=True)

    def _join(self, outputs: list[O]) -> O:
        raise NotImplementedError

    def cancel(self) -> None:
        """The client went away or cancelled: drop the stream, send nothing more."""
        self.state = LISTEN.move(self.state, "cancel")
        self._context.listeners.discard(self)


class HttpListenStream(ListenStream[HttpOutput]):
    """A listen stream on Streamable HTTP: always an SSE response (Basic > Patterns > Subscriptions)."""

    def _empty(self) -> HttpOutput:
        return []

    def _frame(self, message: bytes, first: bool = False, last: bool = False) -> HttpOutput:
        body = ResponseBody(data=encode_event(message), more=not last)
        return [sse_head(), body] if first else [body]

    def _join(self, outputs: list[HttpOutput]) -> HttpOutput:
        return [part for output in outputs for part in output]


class StdioListenStream(ListenStream[bytes]):
    """A listen stream on stdio: each message is one NDJSON line."""

    def _empty(self) -> bytes:
        return b""

    def _frame(self, message: bytes, first: bool = False, last: bool = False) -> bytes:
        return encode_line(message)

    def _join(self, outputs: list[bytes]) -> bytes:
        return b"".join(outputs)


class _SessionEvents(ListenStream[O]):
    """What an initialize-era session hears unasked: list_changed for every list whose
    ``listChanged`` the server advertises, and resources/updated for the session's
    subscriptions (``resources/subscribe``). No acknowledgement, no subscription id, no
    result. One per session (``session.stream``)."""

    def __init__(self, context: ServerContext, session: Any, kinds: frozenset[str]) -> None:
        super().__init__(context, 0, RequestMeta(protocol_version=session.revision, client_capabilities={}), {})
        self.session = session
        self._kinds = kinds
        session.stream = self

    def wants(self, kind: ListKind) -> bool:
        return self.state is ListenState.OPEN and kind in self._kinds

    def list_changed(self, kind: ListKind) -> O:
        check_list_kind(kind)
        if not self._move("event") or not self.wants(kind):
            return self._empty()
        return self._frame(encode_notification(LIST_CHANGED[kind].name))

    def covers(self, uri: str) -> bool:
        return self.state is ListenState.OPEN and bool(self.session.covers(uri))

    def watches(self, task_id: str) -> bool:
        """The session's own tasks (2025-11-25: those its ``tools/call`` requests created)
        that this process made."""
        return self.state is ListenState.OPEN and task_id in self.session.task_ids

    def watches_task(self, task: TaskRecord) -> bool:
        """The session's own tasks, wherever they were made: ``task.session`` names the session
        whose request made it (any process of a server that shares its stores)."""
        if self.state is not ListenState.OPEN:
            return False
        return task.task_id in self.session.task_ids or (task.session is not None and task.session == self.session.id)

    def relay(self, messages: list[bytes]) -> O:
        """A 2025-11-25 task's requests to its client (``Exchange.task_requests``) on this
        stream (Tasks: clients expect a task's messages on any stream, the GET stream too)."""
        if not messages or not self._move("event") or self.state is not ListenState.OPEN:
            return self._empty()
        return self._join([self._frame(m) for m in messages])

    def task_status(self, task: TaskRecord) -> O:
        """A ``notifications/tasks/status`` with the 2025-11-25 Task (Tasks: Task Status
        Notification; no related-task ``_meta``: the task id is in the params)."""
        if not self._move("event") or not self.watches_task(task):
            return self._empty()
        return self._frame(encode_notification("notifications/tasks/status", Tasks.session_task(task)))

    def resource_updated(self, uri: str) -> O:
        check_uri(uri)
        if not self._move("event") or not self.covers(uri):
            return self._empty()
        return self._frame(encode_notification("notifications/resources/updated", {"uri": uri}))

    def close(self) -> O:
        if not self._move("close"):
            return self._empty()
        self._release()
        return self._end()

    def _end(self) -> O:
        raise NotImplementedError

    def cancel(self) -> None:
        super().cancel()
        self._release()

    def _release(self) -> None:
        self._context.listeners.discard(self)
        if self.session.stream is self:
            self.session.stream = None
            self._released()

    def _released(self) -> None:
        """The stream gave the session back its place for a GET stream (once)."""


class SessionStream(_SessionEvents[HttpOutput], HttpListenStream):
    """The standalone SSE stream of an initialize-era session: the answer to a GET with the
    session's ``Mcp-Session-Id`` (Streamable HTTP, listening for messages from the server).
    :meth:`start` opens the SSE response and :meth:`close` ends it.

    Every event carries an id of the stream ``key`` (``session.events.new_stream(standalone=True)``)
    and is kept in the session's event store, so that a GET with ``Last-Event-ID`` replays
    what followed, then goes on as the session's GET stream (``replayed``: those frames, sent
    first). On 2025-11-25 the stream opens with a priming event (an id, empty data), after any
    replayed frames. ``release`` (the session store's ``release_stream``) is called once, when
    the stream ends however it ends: the session may then have another GET stream.
    """

    def __init__(
        self, context: ServerContext, session: Any, kinds: frozenset[str], key: str, *,
        replayed: list[bytes] | None = None, release: Callable[[Any], None] | None = None,
    ) -> None:
        super().__init__(context, session, kinds)
        self.key = key
        self._replayed = replayed or []
        self._release_to = release
        if session.id is not None:
            context.listeners.hold(session.id, self)

    def start(self) -> HttpOutput:
        if not self._move("start"):
            return []
        out: HttpOutput = [sse_head(), *(ResponseBody(data=frame, more=True) for frame in self._replayed)]
        self._replayed = []
        if self.session.revision in SSE_PRIMING:
            out.append(ResponseBody(data=encode_event(b"", id=f"{self.key}-0"), more=True))
        elif len(out) == 1:
            out.append(ResponseBody(data=b": stream open\n\n", more=True))
        return out

    def _frame(self, message: bytes, first: bool = False, last: bool = False) -> HttpOutput:
        events = self.session.events
        frame = encode_event(message, id=events.next_event_id(self.key))
        events.record(self.key, frame)
        return [ResponseBody(data=frame, more=True)]

    def _end(self) -> HttpOutput:
        return [ResponseBody(data=b"", more=False)]

    def _released(self) -> None:
        if self.session.id is not None:
            self._context.listeners.let_go(self.session.id, self)
        if self._release_to is not None:
            self._release_to(self.session)


class StdioSessionStream(_SessionEvents[bytes], StdioListenStream):
    """The notifications an initialize-era stdio connection hears unasked, as lines on
    stdout, from ``notifications/initialized`` on (stdio has one channel: this is its
    counterpart of the GET stream). :meth:`start` and :meth:`close` write nothing."""

    def start(self) -> bytes:
        self._move("start")
        return b""

    def _end(self) -> bytes:
        return b""


class ResumedStream(HttpListenStream):
    """A GET with ``Last-Event-ID`` resuming one of the session's POST streams (2025-11-25:
    a server may close a request's SSE stream mid-call, and the client resumes it).

    :meth:`start` replays the frames sent after that event; when the stream had not ended,
    the host forwards the rest of the request's output to it (the exchange's ``stream_key``
    names the stream) until the final response, which ends it. ``finished``: the replay
    already holds the final response. When the request runs in another process of the server
    (whose output this process never sees), the host calls :meth:`follow` each time that
    process says the stream grew: the stream reads what followed from the session's event store.
    """

    def __init__(
        self, context: ServerContext, session: Any, key: str, frames: list[bytes], finished: bool, *, position: int = 0,
    ) -> None:
        super().__init__(context, 0, RequestMeta(protocol_version=session.revision, client_capabilities={}), {})
        context.listeners.discard(self)  # not a subscriber of list_changed or resources/updated
        self.session = session
        self.key = key
        self.finished = finished
        self.position = position + len(frames)
        """The number of the last event of stream ``key`` this stream carried (0: none)."""
        self._frames = frames

    def start(self) -> HttpOutput:
        if not self._move("start"):
            return []
        out: HttpOutput = [sse_head()]
        out += [ResponseBody(data=frame, more=True) for frame in self._frames]
        if self.finished:
            out.append(ResponseBody(data=b"", more=False))
        return out

    def follow(self) -> HttpOutput:
        """What the request's stream got since this stream's last event, read from the
        session's event store (for a request running in another process), ending the stream
        after the final response. A stream the store no longer holds (the session ended) ends
        too: the client's next GET with ``Last-Event-ID`` finds what is left, if anything.
        Once ended (or not yet started) it returns nothing."""
        if self.state is not ListenState.OPEN:
            return []
        found = self.session.events.replay(f"{self.key}-{self.position}")
        if found is None:
            return self.close()
        _, frames, ended = found
        self.position += len(frames)
        out: HttpOutput = [ResponseBody(data=frame, more=True) for frame in frames]
        if ended:
            self.finished = True
            out += self.close()
        return out

    def wants(self, kind: ListKind) -> bool:
        return False

    def covers(self, uri: str) -> bool:
        return False

    def close(self) -> HttpOutput:
        if not self._move("close"):
            return []
        return [ResponseBody(data=b"", more=False)]
