"""The subscriptions half of the server engine: ``subscriptions/listen`` admission and the
deliveries of list changes and resource updates to the open streams.

Owns (specification: Basic > Patterns > Subscriptions; tasks extension: Task Status
Notifications for ``taskIds``): which listen kinds the server serves, the filter a listen
request is honoured with, and the ``list_changed`` / ``resource_updated`` / ``close_listeners``
deliveries the host writes. :class:`~mcpwire.Server` inherits it; the streams themselves are
``listen.py``'s, their registry ``listeners.py``'s.
"""

from __future__ import annotations

from typing import Any, Literal

from ..wire.capabilities import TASKS_EXTENSION, declares_extension, extension_required
from ..wire.envelope import Request
from ..wire.errors import ErrorCode, MissingCapability, ProtocolError
from ..wire.meta import RequestMeta
from .admission import Admitted, Listen
from .listen import LIST_FLAGS, ListenStream, check_list_kind, check_uri, parse_filter
from .listeners import Listeners
from .states import ListenState
from .tasks import Tasks

__all__ = ["ListenEngine"]


class ListenEngine:
    """The subscriptions methods of :class:`~mcpwire.Server` (see the module docstring)."""

    # What this half uses of the engine, set by Server.__init__.
    tasks: Tasks | None
    max_listen_streams: int
    _listeners: Listeners
    _list_changed: frozenset[str]
    _enabled: dict[str, bool]
    _subscribe: bool

    def list_changed(self, kind: Literal["tools", "prompts", "resources"]) -> list[tuple[ListenStream[Any], Any]]:
        """Deliveries of a list_changed event to every open stream that asked for it (none
        when ``list_changed`` does not advertise ``kind``). An unknown ``kind`` raises
        :class:`LocalProtocolError`, whether or not a stream is open."""
        check_list_kind(kind)
        return [(s, s.list_changed(kind)) for s in self._listeners if s.wants(kind)]

    def resource_updated(self, uri: str) -> list[tuple[ListenStream[Any], Any]]:
        """Deliveries of a resources/updated event to every stream subscribed to ``uri`` (a
        str; anything else raises :class:`LocalProtocolError`, whether or not a stream is open)."""
        check_uri(uri)
        return [(s, s.resource_updated(uri)) for s in self._listeners if s.covers(uri)]

    def close_listeners(self) -> list[tuple[ListenStream[Any], Any]]:
        """End every open stream gracefully (at shutdown): the listen result for each."""
        return [(s, s.close()) for s in self._listeners if s.state is ListenState.OPEN]

    @property
    def open_listeners(self) -> int:
        return len(self._listeners)

    def _listen_kinds(self) -> set[str]:
        kinds = {k for k in self._list_changed if self._enabled[k]}
        if self._subscribe and self._enabled["resources"]:
            kinds.add("subscribe")
        if self.tasks is not None:
            kinds.add("tasks")
        return kinds

    def _on_listen(self, message: Request, params: Any, meta: RequestMeta, now: float, principal: str | None) -> Admitted:
        requested = parse_filter(params.notifications)
        kinds = self._listen_kinds()
        honoured: dict[str, Any] = {}
        for flag, kind in LIST_FLAGS.items():
            if requested.get(flag) is True and kind in kinds:
                honoured[flag] = True
        if "subscribe" in kinds and requested.get("resourceSubscriptions"):
            honoured["resourceSubscriptions"] = list(requested["resourceSubscriptions"])
        task_ids = requested.get("taskIds")
        if task_ids and self.tasks is not None:
            # Tasks extension, Task Status Notifications: only a client that declares the
            # extension; the acknowledgement names the tasks agreed to (those that exist now).
            if not declares_extension(meta.client_capabilities, TASKS_EXTENSION):
                raise MissingCapability(extension_required(TASKS_EXTENSION))
            honoured["taskIds"] = [t for t in dict.fromkeys(task_ids) if self.tasks.owned(t, now, principal)]
        if len(self._listeners) >= self.max_listen_streams:
            raise ProtocolError("Too many open subscription streams", code=ErrorCode.INTERNAL_ERROR, http_status=503)
        return Listen(message.id, meta, honoured)
