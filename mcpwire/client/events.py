"""Events the client engine hands to the host, and the result type of each method.

Owns, client side (specification: Basic, Responses and Error Codes; Basic > Patterns >
Progress, Multi Round-Trip Requests and Subscriptions; Server > Utilities > Logging): the
typed, frozen events a response stream (HTTP JSON or SSE body, or stdio lines) turns into.
Each is complete when built (STYLE 3). The host reacts: shows progress, answers
:class:`InputRequired` with ``Client.retry``, falls back on -32022 with ``Client.version_retry``.

Events of one request always end with exactly one final event (:class:`ResultReceived`,
:class:`ErrorResult` or :class:`InputRequired`); :class:`Progress` and :class:`LogMessage`
only precede it. Listen streams yield :class:`ListenAck` first, then :class:`ListChanged` /
:class:`ResourceUpdated`, and a :class:`ResultReceived` for ``subscriptions/listen`` on a graceful end.

On an initialize-era session (the client fell back to ``initialize``) the server may also send
requests of its own, on a response stream or the session's GET stream: each is a
:class:`ServerRequest`, which the host answers with ``Client.answer`` and sends as an
:class:`OutgoingMessage`; list_changed and resources/updated notifications then come from the
GET stream with ``subscription_id=None``. A message from such a server that JSON-RPC 2.0 answers
with an error (an invalid request, or text that is not a message) is an :class:`InvalidMessage`,
which the host answers with ``Client.reject``.
"""

from __future__ import annotations

from typing import Any, Literal, Union

import msgspec
from msgspec import UNSET, UnsetType

from ..wire.envelope import RequestId
from ..wire.ndjson import encode_line
from ..types import InputRequest, SubscriptionFilter
from ..wire.tasks import Task

__all__ = [
    "ClientEvent",
    "TaskNotification",
    "ErrorResult",
    "OutgoingMessage",
    "InputRequired",
    "ListChanged",
    "ListenAck",
    "LogMessage",
    "Progress",
    "ResourceUpdated",
    "ResultReceived",
    "ServerRequest",
    "InvalidMessage",
]

#: The Struct each method's complete result decodes into (schema $defs.*Result).
class OutgoingRequest(msgspec.Struct, frozen=True, kw_only=True):
    """One request ready to send.

    HTTP: POST ``body`` with ``headers`` (Content-Length and Host are the transport's).
    stdio: write ``line``. Then read the answer with
    ``HttpResponseParser(client, request, status=..., content_type=...)`` or a
    :class:`~mcpwire.ClientStdioConnection`. ``params`` is what was sent (do not mutate).
    """

    id: RequestId
    method: str
    params: dict[str, Any]
    body: bytes
    headers: tuple[tuple[bytes, bytes], ...]
    progress_token: str | int | None = None

    @property
    def line(self) -> bytes:
        """The request as one NDJSON line for stdio."""
        return encode_line(self.body)

    @property
    def header_dict(self) -> dict[str, str]:
        """``headers`` as the ``{name: value}`` strings HTTP libraries take (httpx, requests,
        aiohttp): ``httpx.post(url, content=req.body, headers=req.header_dict)``."""
        return _as_strings(self.headers)


class OutgoingMessage(msgspec.Struct, frozen=True, kw_only=True):
    """A notification or a response to a server request, ready to send (initialize era).

    HTTP: POST ``body`` with ``headers`` (the server answers 202 Accepted with no body).
    stdio: write ``line``.
    """

    body: bytes
    headers: tuple[tuple[bytes, bytes], ...]

    @property
    def line(self) -> bytes:
        """The message as one NDJSON line for stdio."""
        return encode_line(self.body)

    @property
    def header_dict(self) -> dict[str, str]:
        """``headers`` as the ``{name: value}`` strings HTTP libraries take."""
        return _as_strings(self.headers)


def _as_strings(headers: tuple[tuple[bytes, bytes], ...]) -> dict[str, str]:
    # Header values are latin-1 on the wire (RFC 9110 section 5.5); the engine never repeats a name.
    return {name.decode("latin-1"): value.decode("latin-1") for name, value in headers}


class ServerRequest(msgspec.Struct, frozen=True, kw_only=True):
    """A JSON-RPC request from the server on an initialize-era session (specification
    2025-11-25: Client > Elicitation, Sampling and Roots; Basic > Utilities > Ping).

    ``request`` is the typed input request (the same :class:`~mcpwire.types.ElicitRequest`,
    ``CreateMessageRequest`` or ``ListRootsRequest`` an ``input_required`` round carries in
    2026-07-28, so one set of handlers answers both), or ``None`` for ``ping`` and for methods the
    client does not know or whose params break the schema. Answer with
    ``client.answer(event, result)`` or ``client.answer_error(event, code, message)``.
    ``request_id`` is the server's id; ``for_request`` is our request whose response stream
    carried it (``None`` on the GET stream and on stdio).
    """

    request_id: RequestId
    method: str
    request: InputRequest | None
    params: dict[str, Any]
    for_request: RequestId | None = None


class InvalidMessage(msgspec.Struct, frozen=True, kw_only=True):
    """A message from an initialize-era server that is not a valid request, notification or
    response, and that JSON-RPC 2.0 answers (JSON-RPC 2.0 section 5: a call gets a Response; 5.1: -32600
    Invalid Request, -32700 Parse error): the same messages the server engine answers, with the
    same error. ``request_id`` is the message's id when it could be read, else ``None`` (the
    answer then carries ``"id": null``, as JSON-RPC says). Send ``client.reject(event)`` (POST
    it, or write its ``line``). ``for_request``: as for :class:`ServerRequest`, our one request
    in flight when there is exactly one (the call whose rounds it counts against), else
    ``None``. A malformed notification or response is never answered
    (JSON-RPC 2.0 section 4.1; a response answers nothing): it is reported as any other
    protocol error.
    """

    request_id: RequestId | None
    code: int
    message: str
    data: Any | UnsetType = UNSET
    for_request: RequestId | None = None


class Progress(msgspec.Struct, frozen=True, kw_only=True):
    """A ``notifications/progress`` for the request that sent ``progress_token``
    (<https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/progress>)."""

    request_id: RequestId
    progress_token: str | int
    progress: float
    total: float | None = None
    message: str | None = None


class LogMessage(msgspec.Struct, frozen=True, kw_only=True):
    """A ``notifications/message``
    (<https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/logging>).

    ``request_id`` is ``None`` on stdio when more than one request is in flight: log messages
    carry no id (schema $defs.LoggingMessageNotificationParams), and stdio has no stream per
    request to tell them apart."""

    request_id: RequestId | None
    level: str
    data: Any
    logger: str | None = None


class ResultReceived(msgspec.Struct, frozen=True, kw_only=True):
    """A complete result: ``resultType`` ``"complete"``, or absent, which a client treats as
    ``"complete"`` (<https://modelcontextprotocol.io/specification/2026-07-28/basic#responses>).

    ``value`` is the method's result Struct (the method table's result type; for ``tools/list``
    tools with invalid ``x-mcp-header`` annotations are left out), or ``None`` when the method
    is not in the table, the result type is an extension's (for example ``"task"``), or the
    result does not match the schema. ``data`` is always the decoded JSON object as received,
    and ``raw`` the result's exact bytes as received (tool schemas, for one, survive byte for
    byte there: nothing is normalised, and no ``$ref`` is ever resolved).
    """

    request_id: RequestId
    method: str
    value: Any
    data: dict[str, Any]
    result_type: str = "complete"
    raw: bytes = b""
    problem: str | None = None
    """Why the result is not what it should be, else ``None``: it does not match its type
    (``value`` is then ``None``), or, with a validator on the client, its ``structuredContent``
    does not match the tool's ``outputSchema`` (or is missing)."""

    @property
    def ttl_ms(self) -> int | None:
        """``ttlMs`` as the server sent it (specification: caching, schema ``$defs.CacheableResult``):
        how many milliseconds the result stays fresh, 0 for never reused; ``None`` when absent
        or not a non-negative integer (an initialize-era server sends none)."""
        value = self.data.get("ttlMs")
        return value if type(value) is int and value >= 0 else None

    @property
    def cache_scope(self) -> Literal["public", "private"] | None:
        """``cacheScope`` as the server sent it: ``"public"`` (may be shared across authorization
        contexts) or ``"private"`` (only within one); ``None`` when absent or anything else."""
        value = self.data.get("cacheScope")
        return "public" if value == "public" else "private" if value == "private" else None



class ErrorResult(msgspec.Struct, frozen=True, kw_only=True):
    """A JSON-RPC error response
    (<https://modelcontextprotocol.io/specification/2026-07-28/basic#error-codes>).

    For -32022 see ``Client.version_retry``."""

    request_id: RequestId | None
    code: int
    message: str
    data: Any | UnsetType = UNSET


class InputRequired(msgspec.Struct, frozen=True, kw_only=True):
    """``resultType: "input_required"``: one round of a multi round-trip request
    (<https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr#inputrequiredresult>).

    Answer each of ``input_requests`` (an ElicitRequest, CreateMessageRequest or
    ListRootsRequest, keyed by the server's ids), then send ``client.retry(event, answers)``.
    ``request_state`` is kept exactly as received and echoed by the retry.
    """

    request_id: RequestId
    method: str
    request: OutgoingRequest
    input_requests: dict[str, InputRequest]
    request_state: str | UnsetType = UNSET
    data: dict[str, Any] = msgspec.field(default_factory=dict)


class ListenAck(msgspec.Struct, frozen=True, kw_only=True):
    """``notifications/subscriptions/acknowledged``: the filter the server will honour
    (``task_ids``: the tasks it agreed to report on, tasks extension; ``None`` when absent)."""

    subscription_id: RequestId
    notifications: SubscriptionFilter
    task_ids: list[str] | None = None


class TaskNotification(msgspec.Struct, frozen=True, kw_only=True):
    """A ``notifications/tasks`` on a listen stream (tasks extension: Task Status
    Notifications): ``task`` is the task's whole state, as ``tasks/get`` would answer."""

    subscription_id: RequestId | None
    task: Task


class ListChanged(msgspec.Struct, frozen=True, kw_only=True):
    """A ``notifications/{tools,prompts,resources}/list_changed`` on a listen stream
    (``subscription_id=None``: on an initialize-era session's GET stream)."""

    subscription_id: RequestId | None
    kind: Literal["tools", "prompts", "resources"]


class ResourceUpdated(msgspec.Struct, frozen=True, kw_only=True):
    """A ``notifications/resources/updated`` on a listen stream (``subscription_id=None``: on an
    initialize-era session's GET stream, for a ``resources/subscribe``)."""

    subscription_id: RequestId | None
    uri: str


ClientEvent = Union[
    Progress, LogMessage, ResultReceived, ErrorResult, InputRequired, ListenAck, ListChanged, ResourceUpdated, ServerRequest,
    TaskNotification, InvalidMessage,
]
