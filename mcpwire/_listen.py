"""subscriptions/listen: the acknowledged filter and one open event stream.

Owns (wire reference section 11; schema $defs SubscriptionFilter,
SubscriptionsAcknowledgedNotificationParams, NotificationMetaObject, SubscriptionsListenResult):

- validating the requested filter (-32602 for a bad shape) and cutting it to what the server
  honours: a list_changed flag only when that listChanged capability is advertised, resource
  URIs only when ``resources.subscribe`` is (unsupported types are omitted from the ack);
- one stream's output: the acknowledgement first, then events each stamped with
  ``_meta["io.modelcontextprotocol/subscriptionId"]`` (the listen request's id), then, on a
  graceful end, the listen result. Only requested and acknowledged types are ever sent.

The state machine is ``_states.LISTEN_TRANSITIONS``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ._envelope import RequestId, encode_notification, encode_result
from ._errors import ErrorCode, LocalProtocolError, RemoteProtocolError
from ._http import HttpOutput, ResponseBody, sse_head
from ._meta import RequestMeta, SERVER_INFO_KEY, SUBSCRIPTION_ID_KEY
from ._ndjson import encode_line
from ._sse import encode_event
from ._states import LISTEN_TRANSITIONS, ListenState, transition

if TYPE_CHECKING:
    from ._server import Server

__all__ = ["ListenStream", "HttpListenStream", "StdioListenStream", "parse_filter", "MAX_RESOURCE_SUBSCRIPTIONS"]

MAX_RESOURCE_SUBSCRIPTIONS = 1000
_FLAGS = {
    "toolsListChanged": ("tools", "notifications/tools/list_changed"),
    "promptsListChanged": ("prompts", "notifications/prompts/list_changed"),
    "resourcesListChanged": ("resources", "notifications/resources/list_changed"),
}
KIND_FLAG = {kind: flag for flag, (kind, _) in _FLAGS.items()}
# An absolute URI starts with its scheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"
# (RFC 3986 section 3.1), the rule resources/read applies too.
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
O = TypeVar("O")


def _bad(message: str) -> RemoteProtocolError:
    return RemoteProtocolError(message, code=ErrorCode.INVALID_PARAMS)


def parse_filter(notifications: Any) -> dict[str, Any]:
    """Validate the ``notifications`` member of a listen request (SubscriptionFilter)."""
    if type(notifications) is not dict:
        raise _bad("subscriptions/listen requires a notifications object")
    for flag in _FLAGS:
        if flag in notifications and type(notifications[flag]) is not bool:
            raise _bad(f"{flag} must be a boolean")
    uris = notifications.get("resourceSubscriptions", [])
    if type(uris) is not list or any(type(u) is not str or _SCHEME.match(u) is None for u in uris):
        raise _bad("resourceSubscriptions must be a list of absolute URI strings")
    if len(uris) > MAX_RESOURCE_SUBSCRIPTIONS:
        raise _bad(f"resourceSubscriptions exceeds {MAX_RESOURCE_SUBSCRIPTIONS} URIs")
    return notifications


class ListenStream(Generic[O]):
    """One open subscriptions/listen stream. Created by the engine; the host keeps it open,
    writes what :meth:`start` returns, then whatever deliveries the engine hands out for it,
    and calls :meth:`cancel` when the client goes away."""

    def __init__(self, server: Server, request_id: RequestId, meta: RequestMeta, honoured: dict[str, Any]) -> None:
        self.request_id = request_id
        self.meta = meta
        self.filter = honoured
        self.state = ListenState.OPEN
        self._server = server
        self._resources = tuple(honoured.get("resourceSubscriptions", ()))
        self._sub_meta = {SUBSCRIPTION_ID_KEY: request_id}
        self._started = False  # the acknowledgement goes first: no event before start()

    def _frame(self, message: bytes, first: bool = False, last: bool = False) -> O:
        raise NotImplementedError

    def _empty(self) -> O:
        raise NotImplementedError

    def start(self) -> O:
        """The acknowledgement: always the first message of the stream. Call it once."""
        if self.state is not ListenState.OPEN:
            return self._empty()
        if self._started:
            raise LocalProtocolError("The listen stream was already started")
        self._started = True
        params = {"notifications": self.filter, "_meta": self._sub_meta}
        return self._frame(encode_notification("notifications/subscriptions/acknowledged", params), first=True)

    def wants(self, kind: str) -> bool:
        return self._started and self.state is ListenState.OPEN and self.filter.get(KIND_FLAG[kind]) is True

    def list_changed(self, kind: str) -> O:
        """A list_changed event for ``kind`` ("tools", "prompts" or "resources"), if subscribed."""
        if not self.wants(kind):
            return self._empty()
        method = _FLAGS[KIND_FLAG[kind]][1]
        return self._frame(encode_notification(method, {"_meta": self._sub_meta}))

    def covers(self, uri: str) -> bool:
        return self._started and self.state is ListenState.OPEN and any(
            uri == s or uri.startswith(s.rstrip("/") + "/") for s in self._resources
        )

    def resource_updated(self, uri: str) -> O:
        """A resources/updated event, if ``uri`` is (under) a subscribed resource."""
        if not self.covers(uri):
            return self._empty()
        return self._frame(encode_notification("notifications/resources/updated", {"uri": uri, "_meta": self._sub_meta}))

    def close(self) -> O:
        """End the stream gracefully with the listen result (for example at shutdown)."""
        if self.state is not ListenState.OPEN:
            return self._empty()
        self.state = transition(LISTEN_TRANSITIONS, self.state, "close")  # type: ignore[arg-type,assignment]
        self._server._forget_listener(self)
        result = {
            "resultType": "complete",
            "_meta": {**self._sub_meta, SERVER_INFO_KEY: self._server._info_builtins},
        }
        return self._frame(encode_result(self.request_id, result), last=True)

    def cancel(self) -> None:
        """The client went away or cancelled: drop the stream, send nothing more."""
        if self.state is ListenState.OPEN:
            self.state = ListenState.CANCELLED
        self._server._forget_listener(self)


class HttpListenStream(ListenStream[HttpOutput]):
    """A listen stream on Streamable HTTP: always an SSE response (section 11)."""

    def _empty(self) -> HttpOutput:
        return []

    def _frame(self, message: bytes, first: bool = False, last: bool = False) -> HttpOutput:
        body = ResponseBody(data=encode_event(message), more=not last)
        return [sse_head(), body] if first else [body]


class StdioListenStream(ListenStream[bytes]):
    """A listen stream on stdio: each message is one NDJSON line."""

    def _empty(self) -> bytes:
        return b""

    def _frame(self, message: bytes, first: bool = False, last: bool = False) -> bytes:
        return encode_line(message)
