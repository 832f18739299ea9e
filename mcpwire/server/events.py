"""Events the server engine hands to the host: requests that need application logic.

Owns the typed, frozen events of tools/call, resources/read, prompts/get, completion/complete
and notifications/cancelled (schema $defs CallToolRequest, ReadResourceRequest,
GetPromptRequest, CompleteRequest, CancelledNotification), and of the four lists when the host
asked to answer them (:class:`ListRequest`, ``Server.hand_over_lists``). Each is
complete when built (STYLE 3): arguments already validated against the declared schema,
``_meta`` validated, ``requestState`` verified and decoded. The host answers through the
:class:`~mcpwire.Exchange` that carries the event.

One convention for "absent" on every event (and on :class:`~mcpwire.RequestMeta`): ``None``.
Events are Python objects for the host, not wire messages, so they need no absent/null split
(the wire types of ``mcpwire.types`` keep ``UNSET`` for that). The one member where it could
matter, ``state``, is the host's own value: a state of ``None`` is no state
(``input_required(state=None)`` seals none).
"""

from __future__ import annotations

from typing import Any, ClassVar, Union

import msgspec

from ..wire.envelope import Notification, RequestId, check_request_id
from .http import ResponseBody, ResponseHead, batch_frames, sse_head
from ..wire.meta import RequestMeta
from ..types import (
    ListPromptsResult, ListResourcesResult, ListResourceTemplatesResult, ListToolsResult, Prompt, Resource,
    ResourceTemplate, Tool,
)

__all__ = [
    "ToolCall", "ResourceRead", "PromptGet", "CompletionRequest", "ListRequest", "Cancelled", "ServerEvent",
    "InputArrived", "SessionClosed", "TaskChanged", "TaskResultWanted",
]


class ToolCall(msgspec.Struct, frozen=True, kw_only=True):
    """A ``tools/call`` for a registered tool, arguments already valid for its input schema.

    ``arguments`` is a dict, or an instance of the tool's ``arguments_type`` when it has one.
    On a multi round-trip retry, ``input_responses`` maps the ids the client answered to
    their bare results (``None`` on a first round), each already checked against the result
    type its id asked for, and ``state`` is the application data the previous round put in its
    ``requestState`` (``None`` when it carried none).

    ``task_allowed``: the call may become a task (tasks extension): the tool supports tasks
    and the request declared the extension; the host then may answer with
    ``exchange.create_task(...)`` instead of a result. ``task_id``: the task this event runs
    for (a task's work run again after ``tasks/update`` answered its input requests).
    """

    method: ClassVar[str] = "tools/call"

    request_id: RequestId
    name: str
    arguments: Any
    tool: Tool
    meta: RequestMeta
    input_responses: dict[str, dict[str, Any]] | None = None
    state: Any = None
    task_allowed: bool = False
    task_id: str | None = None
    task_requested: bool = False
    """2025-11-25 (Tasks: Creating Tasks): the request asked to be a task (``params.task``) and
    the tool supports tasks: answer with ``exchange.create_task(...)`` before anything else
    (``ttl_ms`` the request's ``ttl``, in :attr:`task_ttl_ms`), then run the work."""
    task_ttl_ms: int | None = None
    """With :attr:`task_requested`: the ``ttl`` the request asked for, if any."""
    owner: str | None = None
    """With ``task_allowed``: the authenticated caller (``HttpRequest.principal``) a task made
    from this call belongs to: only requests of the same principal see it."""


class ResourceRead(msgspec.Struct, frozen=True, kw_only=True):
    """A ``resources/read``. ``resource`` is the listed resource with this URI, if any;
    ``template`` and ``variables`` the first listed template matching it, if any. Whether the
    resource exists is the host's to decide (answer not found with :func:`resource_not_found`).
    """

    method: ClassVar[str] = "resources/read"

    request_id: RequestId
    uri: str
    meta: RequestMeta
    resource: Resource | None = None
    template: ResourceTemplate | None = None
    variables: dict[str, str] = msgspec.field(default_factory=dict)
    input_responses: dict[str, dict[str, Any]] | None = None
    state: Any = None


class PromptGet(msgspec.Struct, frozen=True, kw_only=True):
    """A ``prompts/get`` for a registered prompt, with every required argument present."""

    method: ClassVar[str] = "prompts/get"

    request_id: RequestId
    name: str
    arguments: dict[str, str]
    prompt: Prompt
    meta: RequestMeta
    input_responses: dict[str, dict[str, Any]] | None = None
    state: Any = None


class CompletionRequest(msgspec.Struct, frozen=True, kw_only=True):
    """A ``completion/complete`` whose reference names a registered prompt or template.

    ``ref_type`` is ``"ref/prompt"`` (``ref_name`` the prompt name) or ``"ref/resource"``
    (``ref_name`` the URI template).
    """

    method: ClassVar[str] = "completion/complete"

    request_id: RequestId
    ref_type: str
    ref_name: str
    argument_name: str
    argument_value: str
    context_arguments: dict[str, str]
    meta: RequestMeta


class ListRequest(msgspec.Struct, frozen=True, kw_only=True):
    """A ``tools/list``, ``resources/list``, ``resources/templates/list`` or ``prompts/list`` the
    host asked to answer itself (:meth:`~mcpwire.Server.hand_over_lists`; by default the engine
    answers the lists alone). ``page`` is the engine's own answer, the page ``cursor`` names
    (the first when ``None``), shaped for the request's revision: complete the exchange with it,
    or with a copy (``msgspec.structs.replace(event.page, tools=[...])``) that lists less, say
    for the caller (``HttpRequest.principal``). Its ``nextCursor`` is the engine's, signed for
    the same list: keep it as it is."""

    method: str
    """``tools/list``, ``resources/list``, ``resources/templates/list`` or ``prompts/list``."""
    request_id: RequestId
    cursor: str | None
    meta: RequestMeta
    page: ListToolsResult | ListResourcesResult | ListResourceTemplatesResult | ListPromptsResult


class Cancelled(msgspec.Struct, frozen=True, kw_only=True):
    """A ``notifications/cancelled`` for a request in flight: on this stdio connection, or
    (HTTP, initialize era) on session ``session_id``, where the host sends ``reply`` (202) and
    cancels that request's work, which then sends no response (specification 2025-11-25:
    Basic > Utilities > Cancellation)."""

    request_id: RequestId
    reason: str | None = None
    session_id: str | None = None
    reply: Any = None

    @classmethod
    def parse(cls, message: Notification) -> Cancelled | None:
        """The cancellation ``message`` asks for, or ``None`` when it is not a valid
        ``notifications/cancelled`` (ignored: notifications are never answered)."""
        if message.method != "notifications/cancelled" or message.params is msgspec.UNSET:
            return None
        try:
            params = msgspec.json.decode(message.params)
        except (msgspec.DecodeError, RecursionError):
            return None
        request_id = check_request_id(params.get("requestId")) if type(params) is dict else None
        reason = params.get("reason") if type(params) is dict else None
        if request_id is None or (reason is not None and type(reason) is not str):
            return None
        return cls(request_id=request_id, reason=reason)


class TaskResultWanted(msgspec.Struct, frozen=True, kw_only=True):
    """A 2025-11-25 ``tasks/result`` for a task of ``owner`` still running (Tasks: Result
    Retrieval: the answer waits until the task finishes). The host waits for the task's change
    (its own work's, or a poll of the store) and answers with ``exchange.task_result(record)``;
    a finished task's ``tasks/result`` is answered by the engine at once."""

    method: ClassVar[str] = "tasks/result"

    request_id: RequestId
    task_id: str
    meta: RequestMeta
    owner: str | None = None


ServerEvent = Union[ToolCall, ResourceRead, PromptGet, CompletionRequest, ListRequest, TaskResultWanted]


class InputArrived(msgspec.Struct, frozen=True, kw_only=True):
    """Initialize era: a client's answer to a server-to-client request arrived.

    ``exchange`` is the exchange that asked; when ``ready`` every answer it waits for is in (or
    the client answered with an error) and the host calls ``exchange.resume()`` and runs its
    handler again. ``reply`` is what the HTTP request that carried the answer gets (202; ``None``
    on stdio, where nothing is written back).

    ``exchange`` is ``None`` when no request of this engine waits for that id but the session
    store is shared (``SessionStore.shared``): the request that asked may wait in another
    process of the server. ``answer`` (the :class:`~mcpwire.Response`) and ``session_id`` are
    then what that process hands to its ``receive_answer``.
    """

    exchange: Any
    ready: bool
    reply: Any = None
    session_id: str | None = None
    answer: Any = None


class TaskChanged(msgspec.Struct, frozen=True, kw_only=True):
    """A ``tasks/update`` or ``tasks/cancel`` changed a task whose work the host runs (tasks
    extension). Send ``reply`` (the acknowledgement: an HTTP reply, or the stdio line); then, when
    ``task.status`` is ``working``, every input request is answered: run the work again with
    ``task.answers`` and ``task.state`` (``exchange.resume_task(task)``); when it is
    ``cancelled``, stop the work (what it answers later is dropped)."""

    task: Any
    reply: Any = None


class SessionClosed(msgspec.Struct, frozen=True, kw_only=True):
    """Initialize era: the client ended its session (HTTP ``DELETE``). Send ``reply``; cancel
    the work of the session's requests still running (``waiting`` lists those waiting for
    input, already cancelled here); end ``stream``, the session's GET stream, if one is open."""

    session_id: str
    reply: Any
    waiting: list[Any] = msgspec.field(default_factory=list)
    stream: Any = None


class HttpBatch(msgspec.Struct, frozen=True, kw_only=True):
    """A JSON-RPC batch posted on a 2025-03-26 session (specification 2025-03-26: Basic >
    Transports > Streamable HTTP, Sending Messages to the Server: a server MUST support
    receiving batches). ``answers`` holds what :meth:`Server.receive_http` answers for each
    message, in order. Handle each as usual (run the exchanges; hand in the arrived answers and
    cancellations) but send one response: when :attr:`has_requests`, an event stream:
    :meth:`head`, then :meth:`frames` of each answer's outputs as they come (a request's
    progress, the server's own requests, its response), then ``ResponseBody(b"", more=False)``
    once every answer is complete; else :attr:`no_requests` (202, no body)."""

    answers: list[Any]
    has_requests: bool
    no_requests: Any

    @staticmethod
    def head() -> ResponseHead:
        return sse_head()

    @staticmethod
    def frames(outputs: Any) -> list[ResponseBody]:
        """One answer's outputs (a reply, or what an exchange sends) as events of the stream."""
        return batch_frames(outputs)
