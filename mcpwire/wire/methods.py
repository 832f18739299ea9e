"""The method table: every fact about a method, in one row, read by both engines.

Owns (specification pages "Server Features" and "Basic / Utilities"; schema $defs
ClientRequest, ServerNotification, ClientNotification): for each request method its params
decoder (stage two of decoding), its complete-result type, the server capability that gates
it, whether its result is cacheable (``ttlMs``/``cacheScope``), may answer
``input_required``, paginates (and under which key its items travel, of which type), which
params member the ``Mcp-Name`` header mirrors, which ``listChanged`` capability covers the
list, and which protocol revisions have it. The notifications each side may send are the
second table.

The server (admission, lists, result shaping), the client (requests, headers, decoding
results, pagination), the header rules, the docs and the tests read these rows; nothing else
restates them. A protocol revision is a set of rows, not a branch in an engine. Methods a
revision removed (``initialize``, ``ping``, ``logging/setLevel``, ``resources/subscribe``,
``resources/unsubscribe`` in 2026-07-28) are simply absent from its rows: unknown.
"""

from __future__ import annotations

from typing import Any, Final, Literal

import msgspec

from ..types import (
    CallToolResult, CompleteResult, CreateMessageResult, DiscoverResult, ElicitResult, InitializeResult, ListRootsResult,
    GetPromptResult, ListPromptsResult, ListResourcesResult, ListResourceTemplatesResult, ListToolsResult, Prompt, ReadResourceResult,
    Resource, ResourceTemplate, SubscriptionsListenResult, Tool,
)
from .params import (
    CallToolParams, CompleteParams, GenericParams, GetPromptParams, InitializeParams, ListenParams, PaginatedParams,
    ReadResourceParams, SetLevelParams, SubscribeParams, TaskParams, UpdateTaskParams,
)
from .capabilities import TASKS_EXTENSION
from .tasks import Task
from .versions import INITIALIZE_ERA, PROTOCOL_VERSION, REVISIONS

__all__ = [
    "ListKind", "MethodSpec", "METHODS", "GENERIC_DECODER", "NotificationSpec", "NOTIFICATIONS",
    "LIST_CHANGED", "MRTR_METHODS", "CACHEABLE_METHODS", "LIST_METHODS", "methods_of", "notifications_of",
    "ServerRequestSpec", "SERVER_REQUESTS", "SESSION_METHODS", "method_row",
]

ListKind = Literal["tools", "prompts", "resources"]
"""A list whose changes a server may announce (capability ``<kind>.listChanged``)."""

_ALL: Final = frozenset(REVISIONS)
_STATELESS: Final = frozenset({PROTOCOL_VERSION})
_SESSIONS: Final = frozenset(INITIALIZE_ERA)


class MethodSpec(msgspec.Struct, frozen=True, kw_only=True):
    """What the protocol says about one request method. One row of :data:`METHODS`."""

    name: str
    params: type[GenericParams] = GenericParams
    """The loose params Struct of stage two; :attr:`decoder` is built from it once."""
    result: type[msgspec.Struct] | None = None
    """The type of a complete result (``None``: the result is read as a plain object)."""
    capability: str | None = None
    """Server capability that must be advertised for the method to exist (else -32601)."""
    cacheable: bool = False
    """The result carries ttlMs and cacheScope (specification: caching, SEP-2549)."""
    input_required: bool = False
    """The method may answer ``resultType: "input_required"`` (multi round-trip requests)."""
    list_key: str | None = None
    """For a paginated list: the result member holding the items; the request takes a
    ``cursor`` and the result may carry ``nextCursor``."""
    item: type[msgspec.Struct] | None = None
    """For a paginated list: the type of one item."""
    list_changed: ListKind | None = None
    """For a list: which ``listChanged`` capability (and listen flag) announces its changes."""
    name_param: str | None = None
    """The params member mirrored into the ``Mcp-Name`` header (SEP-2243)."""
    revisions: frozenset[str] = _ALL
    """The protocol revisions that have this method."""
    extension: str | None = None
    """The extension the method belongs to: the server must enable it (else -32601) and the
    request must declare it in its client capabilities (else -32021)."""
    session: bool = False
    """A method of the initialize-era session itself (handshake, ping, logging level,
    subscriptions): the engine answers it from the session, never the host."""
    decoder: msgspec.json.Decoder[Any] = msgspec.field(default_factory=lambda: _GENERIC)

    @property
    def paginated(self) -> bool:
        return self.list_key is not None

    def __post_init__(self) -> None:
        if self.params is not GenericParams:
            msgspec.structs.force_setattr(self, "decoder", msgspec.json.Decoder(self.params))


_GENERIC: msgspec.json.Decoder[GenericParams] = msgspec.json.Decoder(GenericParams)
GENERIC_DECODER: Final = _GENERIC
"""Stage two for a method the table does not know: only the members every request shares."""


def _list(name: str, key: str, item: type[msgspec.Struct], result: type[msgspec.Struct], kind: ListKind,
          capability: str) -> MethodSpec:
    return MethodSpec(
        name=name, params=PaginatedParams, result=result, capability=capability, cacheable=True,
        list_key=key, item=item, list_changed=kind,
    )


METHODS: Final[dict[str, MethodSpec]] = {
    spec.name: spec
    for spec in (
        MethodSpec(name="server/discover", result=DiscoverResult, cacheable=True, revisions=_STATELESS),
        MethodSpec(
            name="initialize", params=InitializeParams, result=InitializeResult, revisions=_SESSIONS, session=True,
        ),
        MethodSpec(name="ping", revisions=_SESSIONS, session=True),
        MethodSpec(
            name="logging/setLevel", params=SetLevelParams, capability="logging", revisions=_SESSIONS, session=True,
        ),
        MethodSpec(
            name="resources/subscribe", params=SubscribeParams, capability="resources", revisions=_SESSIONS,
            session=True,
        ),
        MethodSpec(
            name="resources/unsubscribe", params=SubscribeParams, capability="resources", revisions=_SESSIONS,
            session=True,
        ),
        _list("tools/list", "tools", Tool, ListToolsResult, "tools", "tools"),
        MethodSpec(
            name="tools/call", params=CallToolParams, result=CallToolResult, capability="tools",
            input_required=True, name_param="name",
        ),
        _list("resources/list", "resources", Resource, ListResourcesResult, "resources", "resources"),
        _list(
            "resources/templates/list", "resourceTemplates", ResourceTemplate, ListResourceTemplatesResult,
            "resources", "resources",
        ),
        MethodSpec(
            name="resources/read", params=ReadResourceParams, result=ReadResourceResult, capability="resources",
            cacheable=True, input_required=True, name_param="uri",
        ),
        _list("prompts/list", "prompts", Prompt, ListPromptsResult, "prompts", "prompts"),
        MethodSpec(
            name="prompts/get", params=GetPromptParams, result=GetPromptResult, capability="prompts",
            input_required=True, name_param="name",
        ),
        MethodSpec(
            name="completion/complete", params=CompleteParams, result=CompleteResult, capability="completions",
        ),
        # Gated by the listChanged / subscribe flags rather than one capability key.
        MethodSpec(
            name="subscriptions/listen", params=ListenParams, result=SubscriptionsListenResult, revisions=_STATELESS,
        ),
        # The tasks extension (ext-tasks specification: Task Polling, Task Update Requests, Task
        # Cancellation); its tasks/result and tasks/list of 2025-11-25 are gone (-32601). The
        # 2025-11-25 methods of the same names are rows of SESSION_METHODS.
        MethodSpec(
            name="tasks/get", params=TaskParams, result=Task, name_param="taskId", revisions=_STATELESS,
            extension=TASKS_EXTENSION,
        ),
        MethodSpec(
            name="tasks/update", params=UpdateTaskParams, name_param="taskId", revisions=_STATELESS,
            extension=TASKS_EXTENSION,
        ),
        MethodSpec(
            name="tasks/cancel", params=TaskParams, name_param="taskId", revisions=_STATELESS,
            extension=TASKS_EXTENSION,
        ),
    )
}

_TASKS_2025: Final = frozenset({"2025-11-25"})

SESSION_METHODS: Final[dict[str, MethodSpec]] = {
    spec.name: spec
    for spec in (
        # 2025-11-25, Basic > Utilities > Tasks (experimental): the same names as the extension's
        # methods, other shapes (a Task without its outcome; tasks/result answers the outcome).
        # Gated by the server's tasks capability.
        MethodSpec(name="tasks/get", params=TaskParams, capability="tasks", revisions=_TASKS_2025),
        MethodSpec(name="tasks/result", params=TaskParams, capability="tasks", revisions=_TASKS_2025),
        MethodSpec(name="tasks/list", params=PaginatedParams, capability="tasks", revisions=_TASKS_2025),
        MethodSpec(name="tasks/cancel", params=TaskParams, capability="tasks", revisions=_TASKS_2025),
    )
}
"""Rows of the initialize-era revisions for methods whose name :data:`METHODS` gives another
dialect's row; :func:`method_row` picks the row of a revision."""


def method_row(name: str, revision: str) -> MethodSpec | None:
    """The row of ``name`` in ``revision`` (``None``: the revision has no such method)."""
    spec = SESSION_METHODS.get(name)
    if spec is None or revision not in spec.revisions:
        spec = METHODS.get(name)
    return spec if spec is not None and revision in spec.revisions else None


MRTR_METHODS: Final = frozenset(name for name, spec in METHODS.items() if spec.input_required)
CACHEABLE_METHODS: Final = frozenset(name for name, spec in METHODS.items() if spec.cacheable)
LIST_METHODS: Final = tuple(name for name, spec in METHODS.items() if spec.paginated)


def methods_of(revision: str) -> frozenset[str]:
    """The request methods a protocol revision has."""
    return frozenset(name for name in (*METHODS, *SESSION_METHODS) if method_row(name, revision) is not None)


def notifications_of(revision: str) -> frozenset[str]:
    """The notification methods a protocol revision has."""
    return frozenset(name for name, spec in NOTIFICATIONS.items() if revision in spec.revisions)


class ServerRequestSpec(msgspec.Struct, frozen=True, kw_only=True):
    """A request a server asks of its client. One row of :data:`SERVER_REQUESTS`.

    In 2026-07-28 it travels as an input request inside an ``input_required`` result (multi
    round-trip requests); in the initialize-era revisions as a JSON-RPC request from server
    to client on the session. Either way it is answered by a result of type :attr:`result`.
    """

    name: str
    result: type[msgspec.Struct]
    """The type of the client's answer."""
    capability: str
    """The client capability it needs (the finer needs are ``wire/capabilities.py``'s)."""
    revisions: frozenset[str] = _ALL


SERVER_REQUESTS: Final[dict[str, ServerRequestSpec]] = {
    spec.name: spec
    for spec in (
        ServerRequestSpec(
            name="elicitation/create", result=ElicitResult, capability="elicitation",
            revisions=frozenset({PROTOCOL_VERSION, "2025-11-25", "2025-06-18"}),
        ),
        ServerRequestSpec(name="sampling/createMessage", result=CreateMessageResult, capability="sampling"),
        ServerRequestSpec(name="roots/list", result=ListRootsResult, capability="roots"),
    )
}


class NotificationSpec(msgspec.Struct, frozen=True, kw_only=True):
    """What the protocol says about one notification method. One row of :data:`NOTIFICATIONS`."""

    name: str
    senders: frozenset[Literal["client", "server"]]
    """Who may send it (schema $defs ClientNotification, ServerNotification)."""
    list_changed: ListKind | None = None
    """For a list_changed notification: the list it announces."""
    listen_flag: str | None = None
    """The SubscriptionFilter member that asks for it on a listen stream, if any."""
    revisions: frozenset[str] = _ALL


_SERVER: Final[frozenset[Literal["client", "server"]]] = frozenset({"server"})
_CLIENT: Final[frozenset[Literal["client", "server"]]] = frozenset({"client"})
_BOTH: Final[frozenset[Literal["client", "server"]]] = frozenset({"client", "server"})

NOTIFICATIONS: Final[dict[str, NotificationSpec]] = {
    spec.name: spec
    for spec in (
        # Servers send it on stdio only to end a subscriptions/listen stream (schema ClientNotification).
        NotificationSpec(name="notifications/cancelled", senders=_BOTH),
        NotificationSpec(name="notifications/progress", senders=_SERVER),
        NotificationSpec(name="notifications/message", senders=_SERVER),
        NotificationSpec(
            name="notifications/tools/list_changed", senders=_SERVER, list_changed="tools",
            listen_flag="toolsListChanged",
        ),
        NotificationSpec(
            name="notifications/prompts/list_changed", senders=_SERVER, list_changed="prompts",
            listen_flag="promptsListChanged",
        ),
        NotificationSpec(
            name="notifications/resources/list_changed", senders=_SERVER, list_changed="resources",
            listen_flag="resourcesListChanged",
        ),
        NotificationSpec(
            name="notifications/resources/updated", senders=_SERVER, listen_flag="resourceSubscriptions"
        ),
        NotificationSpec(name="notifications/subscriptions/acknowledged", senders=_SERVER, revisions=_STATELESS),
        NotificationSpec(name="notifications/initialized", senders=_CLIENT, revisions=_SESSIONS),
        NotificationSpec(name="notifications/roots/list_changed", senders=_CLIENT, revisions=_SESSIONS),
        NotificationSpec(
            name="notifications/elicitation/complete", senders=_SERVER, revisions=frozenset({"2025-11-25"}),
        ),
        # The tasks extension: Task Status Notifications, on a listen stream that names taskIds.
        NotificationSpec(name="notifications/tasks", senders=_SERVER, revisions=_STATELESS, listen_flag="taskIds"),
        # 2025-11-25, Tasks: Task Status Notification (on the session's GET stream or stdio), sent
        # by a task's receiver: the server for tools/call, a client for the requests it runs as tasks.
        NotificationSpec(name="notifications/tasks/status", senders=_BOTH, revisions=frozenset({"2025-11-25"})),
    )
}

LIST_CHANGED: Final[dict[ListKind, NotificationSpec]] = {
    spec.list_changed: spec for spec in NOTIFICATIONS.values() if spec.list_changed is not None
}
"""Each list kind's list_changed notification (its method and listen flag)."""
