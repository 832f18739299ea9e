"""One admitted request and its answer: the exchange the host drives.

Owns (wire reference sections 3, 8, 9, 10.1-10.2): turning the host's answer into bytes — the
final result with ``resultType`` and ``_meta.serverInfo`` stamped, cache fields filled in,
progress and log notifications gated and ordered before the final response, input_required
results checked for capabilities and sealed with a signed ``requestState`` — and the framing:
on HTTP a JSON response that becomes an SSE stream at the first notification (8.3), on stdio
one NDJSON line per message (14).

Invariants: at most one final response per exchange; nothing after it; nothing at all once
cancelled (every verb then returns empty output); notifications precede the final response.
The state machine is ``_states.EXCHANGE_TRANSITIONS``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Generic, Mapping, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from ._envelope import encode_error, encode_notification, encode_result
from ._errors import ErrorCode, LocalProtocolError, ProtocolError, RemoteProtocolError
from ._events import PromptGet, ResourceRead, ServerEvent, ToolCall
from ._http import HttpOutput, ResponseBody, json_reply, sse_head
from ._meta import SERVER_INFO_KEY, log_level_enabled, LOG_LEVELS
from ._mrtr import MissingCapability, missing_capabilities
from ._ndjson import encode_line
from ._params import decode_params
from ._sse import encode_event
from ._states import EXCHANGE_TRANSITIONS, ExchangeState, transition
from ._tokens import request_scope
from .types import InputRequiredResult

if TYPE_CHECKING:
    from ._server import Server

__all__ = ["Exchange", "HttpExchange", "StdioExchange", "resource_not_found"]

O = TypeVar("O")
_params_dict: msgspec.json.Decoder[dict[str, Any]] = msgspec.json.Decoder(dict[str, Any])

MAX_PROGRESS_UPDATES = 1000
MAX_PROGRESS_MESSAGE = 4096


def resource_not_found(uri: str) -> RemoteProtocolError:
    """The SEP-2164 resource-not-found error: -32602 with ``data.uri`` (section 5.4)."""
    return RemoteProtocolError("Resource not found", code=ErrorCode.INVALID_PARAMS, data={"uri": uri})


def _encode(encoder: Any, *args: Any) -> bytes:
    try:
        return encoder(*args)  # type: ignore[no-any-return]
    except (TypeError, ValueError, msgspec.EncodeError) as exc:
        raise LocalProtocolError(f"The answer cannot be encoded as JSON: {exc}") from exc


class Exchange(Generic[O]):
    """One request the host must answer. ``event`` says what was asked.

    Call :meth:`progress` and :meth:`log` any number of times, then exactly one of
    :meth:`complete`, :meth:`input_required` or :meth:`fail`. Each returns the output to send
    now (HTTP: a list of ResponseHead/ResponseBody events; stdio: bytes). Call :meth:`cancel`
    when the peer went away or cancelled; every later verb returns empty output.

    ``internal_error`` is the exception behind a -32603 answer (passed to :meth:`fail`, or
    raised by the engine's own check of a :meth:`complete` result), kept for the host to log:
    the wire carries only ``Internal error``. ``None`` otherwise.
    """

    internal_error: BaseException | None = None

    def __init__(self, server: Server, event: ServerEvent, params: Any, now: float) -> None:
        self.event = event
        self.state = ExchangeState.OPEN
        self._server = server
        self._params = params  # the request's params (Raw), for the requestState scope
        self._now = now
        self._progress_count = 0
        self._last_progress: float | None = None

    @property
    def request_id(self) -> str | int:
        return self.event.request_id

    # -- framing, per transport ----------------------------------------------------------------
    def _empty(self) -> O:
        raise NotImplementedError

    def _notify_out(self, message: bytes) -> O:
        raise NotImplementedError

    def _final_out(self, message: bytes, status: int) -> O:
        raise NotImplementedError

    # -- verbs ------------------------------------------------------------------------------------
    def _next(self, verb: str) -> ExchangeState | None:
        """The state ``verb`` leads to (LocalProtocolError if not allowed); None once cancelled.

        Verbs check first, encode next, and only then move to the new state, so an answer that
        fails to encode leaves the exchange answerable.
        """
        if self.state is ExchangeState.CANCELLED:
            return None
        return transition(EXCHANGE_TRANSITIONS, self.state, verb)  # type: ignore[arg-type,return-value]

    def _notify(self, method: str, params: dict[str, Any]) -> O:
        nxt = self._next("notify")
        if nxt is None:
            return self._empty()
        message = _encode(encode_notification, method, params)
        self.state = nxt
        return self._notify_out(message)

    def _finish(self, message: bytes, status: int, nxt: ExchangeState) -> O:
        self.state = nxt
        return self._final_out(message, status)

    def progress(self, progress: float, *, total: float | None = None, message: str | None = None) -> O:
        """A ``notifications/progress`` for this request (section 8.2).

        Sent only when the request carried a progressToken; values must strictly increase
        (LocalProtocolError otherwise). Updates past 1000 per request are dropped.
        """
        token = self.event.meta.progress_token
        if token is None or self.state is ExchangeState.CANCELLED:
            return self._empty()
        self._next("notify")  # a finished exchange sends no more progress (LocalProtocolError)
        if not math.isfinite(progress) or (total is not None and not math.isfinite(total)):
            raise LocalProtocolError("Progress values must be finite numbers")
        if self._last_progress is not None and progress <= self._last_progress:
            raise LocalProtocolError("Progress values must strictly increase")
        if message is not None and len(message) > MAX_PROGRESS_MESSAGE:
            raise LocalProtocolError(f"Progress message exceeds {MAX_PROGRESS_MESSAGE} characters")
        self._last_progress = progress
        self._progress_count += 1
        if self._progress_count > MAX_PROGRESS_UPDATES:
            return self._empty()
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        return self._notify("notifications/progress", params)

    def log(self, level: str, data: Any, *, logger: str | None = None) -> O:
        """A ``notifications/message``, sent only if the request asked for ``level`` or lower (8.1)."""
        if level not in LOG_LEVELS:
            raise LocalProtocolError(f"Unknown log level {level!r}")
        if self.state is ExchangeState.CANCELLED or not log_level_enabled(self.event.meta.log_level, level):
            return self._empty()
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        return self._notify("notifications/message", params)

    def complete(self, result: Any) -> O:
        """Send the final result: a CallToolResult, ReadResourceResult, GetPromptResult or
        CompleteResult matching the event (a str is shorthand for one text block of a tool)."""
        nxt = self._next("finish")
        if nxt is None:
            return self._empty()
        try:
            result = self._server._shape_result(self.event, result, self._params)
        except RemoteProtocolError as exc:  # e.g. output failed the tool's outputSchema
            return self.fail(exc)
        return self._finish(_encode(encode_result, self.request_id, result), 200, nxt)

    def input_required(
        self,
        requests: Mapping[str, Any] | None = None,
        *,
        state: Any = UNSET,
        ttl_seconds: float | None = None,
    ) -> O:
        """Answer ``resultType: "input_required"`` (section 10.1).

        ``requests`` maps ids of your choice to bare input requests (ElicitRequest,
        CreateMessageRequest, ListRootsRequest, or dicts of that shape). ``state`` is any
        JSON-encodable value; it comes back verified as ``event.state`` on the retry. If a
        request needs a capability this request did not declare, the answer is -32021 with
        the merged ``requiredCapabilities`` instead (10.2).
        """
        if not isinstance(self.event, (ToolCall, ResourceRead, PromptGet)):
            raise LocalProtocolError("Only tools/call, resources/read and prompts/get may need input")
        if not requests and state is UNSET:
            raise LocalProtocolError("An input_required result needs input requests or a state")
        nxt = self._next("finish")
        if nxt is None:
            return self._empty()
        plain = {k: msgspec.to_builtins(v) for k, v in (requests or {}).items()}
        missing = missing_capabilities(plain, self.event.meta.client_capabilities)
        if missing:
            return self.fail(MissingCapability(missing))
        token: str | UnsetType = UNSET
        if state is not UNSET:
            method = self._server._method_of(self.event)
            try:
                scope = request_scope(method, self._scope_params())
            except RemoteProtocolError as exc:
                return self.fail(exc)
            token = self._server._state_codec.issue(
                method=method, scope=scope, data=state, now=self._now, ttl_seconds=ttl_seconds,
            )
        result = InputRequiredResult(
            input_requests=plain if plain else UNSET,
            request_state=token,
            meta={SERVER_INFO_KEY: self._server._info_builtins},
        )
        return self._finish(_encode(encode_result, self.request_id, result), 200, nxt)

    def _scope_params(self) -> dict[str, Any]:
        # The whole params, members admission skipped included (a number out of range there
        # is -32602 now, answered by input_required).
        return decode_params(_params_dict, self._params, self.request_id)  # type: ignore[no-any-return]

    def fail(self, error: BaseException) -> O:
        """Send an error response. A ProtocolError keeps its code and data; anything else is
        -32603. A -32603 is sent as ``Internal error`` with no data, whatever its message and
        data were (section 12); the exception is kept as :attr:`internal_error`."""
        nxt = self._next("finish")
        if not isinstance(error, ProtocolError) or error.code == ErrorCode.INTERNAL_ERROR:
            self.internal_error = error
        if nxt is None:
            return self._empty()
        if not isinstance(error, ProtocolError):
            error = ProtocolError("Internal error", code=ErrorCode.INTERNAL_ERROR)
        try:
            message = encode_error(self.request_id, error)
        except (TypeError, ValueError, msgspec.EncodeError):
            # The error's data does not encode: send the error without it rather than nothing.
            error = ProtocolError(error.message, code=error.code, http_status=error.http_status)
            message = encode_error(self.request_id, error)
        return self._finish(message, error.http_status, nxt)

    def cancel(self) -> None:
        """The peer cancelled or went away: nothing more is sent for this request."""
        if self.state is not ExchangeState.DONE:
            self.state = ExchangeState.CANCELLED


class HttpExchange(Exchange[HttpOutput]):
    """An exchange on Streamable HTTP: output is a list of ResponseHead/ResponseBody events."""

    def _empty(self) -> HttpOutput:
        return []

    def _notify_out(self, message: bytes) -> HttpOutput:
        frame = ResponseBody(data=encode_event(message), more=True)
        if self._streaming:
            return [frame]
        self._streaming = True
        return [sse_head(), frame]

    def _final_out(self, message: bytes, status: int) -> HttpOutput:
        if self._streaming:
            # Once SSE started the status is already 200: errors travel as events (8.3).
            return [ResponseBody(data=encode_event(message), more=False)]
        head, body = json_reply(status, message)
        return [head, body]

    _streaming = False


class StdioExchange(Exchange[bytes]):
    """An exchange on stdio: output is NDJSON bytes to write to stdout."""

    def _empty(self) -> bytes:
        return b""

    def _notify_out(self, message: bytes) -> bytes:
        return encode_line(message)

    def _final_out(self, message: bytes, status: int) -> bytes:
        return encode_line(message)

