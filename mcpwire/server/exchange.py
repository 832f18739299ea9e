"""One admitted request and its answer: the exchange the host drives.

Owns (specification: Basic; Basic > Patterns > Progress and Multi round-trip requests;
Server > Utilities > Logging): turning the host's answer into bytes — the
final result with ``resultType`` and ``_meta.serverInfo`` stamped, cache fields filled in,
progress and log notifications gated and ordered before the final response, input_required
results checked for capabilities and sealed with a signed ``requestState`` — and the framing:
on HTTP a JSON response that becomes an SSE stream at the first notification (Streamable HTTP), on stdio
one NDJSON line per message (14). On HTTP the framing follows what the client takes
(``accept.py``, decided at admission): a client that takes only JSON gets no notification and a
406 where the answer must stream (initialize era: requests to the client ride the request's
stream); one that takes only ``text/event-stream`` gets a 200 answer as an event stream.

Invariants: at most one final response per exchange; nothing after it; nothing at all once
cancelled (every verb then returns empty output); notifications precede the final response.
The state machine is ``states.EXCHANGE``.
"""

from __future__ import annotations

import math
from types import MappingProxyType
from typing import Any, Final, Generic, Mapping, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from ..types import InputRequiredResult
from ..wire.capabilities import missing_capabilities
from ..wire.envelope import (
    Response, encode_error, encode_notification, encode_request, encode_result,
)
from ..wire.errors import ErrorCode, LocalProtocolError, MissingCapability, ProtocolError, RemoteProtocolError
from ..wire.meta import LOG_LEVELS, log_level_enabled
from ..wire.methods import METHODS
from ..wire.ndjson import encode_line
from ..wire.params import decode_params
from ..wire.sse import encode_event
from .context import ServerContext
from .events import ServerEvent, TaskResultWanted
from ..wire.versions import SSE_PRIMING
from .accept import Accepts
from .http import HttpOutput, ResponseBody, answer_reply, json_reply, sse_head
from .states import EXCHANGE, SENDING, ExchangeState
from .initialize_era_results import session_result, shape_request
from .mrtr import ANSWER_TYPES, round_data
from .session import Session
from .results import error_object, shape_result
from .tasks import RELATED_TASK_META_KEY, TaskRecord, Tasks
from .tokens import check_now, request_scope

__all__ = ["Exchange", "HttpExchange", "StdioExchange", "http_exchange", "resource_not_found"]

O = TypeVar("O")
_params_dict: msgspec.json.Decoder[dict[str, Any]] = msgspec.json.Decoder(dict[str, Any])
_members: Final = msgspec.json.Decoder(dict[str, msgspec.Raw])  # a message's members, undecoded

MAX_PROGRESS_UPDATES = 1000
MAX_PROGRESS_MESSAGE = 4096
MAX_SESSION_TASKS = 10_000


def resource_not_found(uri: str) -> RemoteProtocolError:
    """The SEP-2164 resource-not-found error: -32602 with ``data.uri`` (Server > Resources, error handling)."""
    return RemoteProtocolError("Resource not found", code=ErrorCode.INVALID_PARAMS, data={"uri": uri})


# The states as module constants: an Enum member read through its class costs a lookup in Python code.
_OPEN, _STREAMING, _AWAITING, _DONE, _CANCELLED, _TASK = (
    ExchangeState.OPEN, ExchangeState.STREAMING, ExchangeState.AWAITING, ExchangeState.DONE, ExchangeState.CANCELLED,
    ExchangeState.TASK,
)
_NOT_JSON: Final = (TypeError, ValueError, msgspec.EncodeError)  # what msgspec raises for a value it cannot encode
_BOTH, _JSON_ONLY, _SSE_ONLY = Accepts.BOTH, Accepts.JSON, Accepts.SSE


def _not_json(exc: Exception) -> LocalProtocolError:
    return LocalProtocolError(f"The answer cannot be encoded as JSON: {exc}")


def _encode(encoder: Any, *args: Any) -> bytes:
    try:
        return encoder(*args)  # type: ignore[no-any-return]
    except _NOT_JSON as exc:
        raise _not_json(exc) from exc


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

    accepts: Accepts = _BOTH
    """What the client takes (HTTP: read from its Accept at admission, see :func:`http_exchange`;
    stdio takes every line). :attr:`Accepts.JSON`: :meth:`progress` and :meth:`log` send
    nothing, and an answer that can only stream is refused with 406."""

    principal: str | None = None
    """Who sent the request (``HttpRequest.principal``; ``None`` without auth and on stdio): the
    ``requestState`` of an :meth:`input_required` answer is bound to it, and a retry under any
    other principal is refused as a tampered one is (-32602)."""

    # Progress so far: the class's until the first update (most exchanges send none).
    _progress_count = 0
    _last_progress: float | None = None

    # Initialize era: the server-to-client requests out (id -> kind, id -> input key), their
    # answers, and the state the handler gave with them. Until a round is sent these are the
    # class's (the empty mappings are never written: _send_round gives each exchange its own).
    _asked: dict[int, str] = MappingProxyType({})  # type: ignore[assignment]
    _answer_keys: dict[int, str] = MappingProxyType({})  # type: ignore[assignment]
    _answers: dict[str, dict[str, Any]] = MappingProxyType({})  # type: ignore[assignment]
    _input_error: ProtocolError | None = None
    _input_state: Any = None

    def __init__(
        self, context: ServerContext, event: ServerEvent, params: Any, now: float, session: Session | None = None,
        revision: str | None = None, principal: str | None = None,
    ) -> None:
        self.event = event
        self.state = EXCHANGE.initial
        self.session = session
        """The initialize-era session the request came on (``None``: a stateless request)."""
        self.revision = revision if revision is not None else event.meta.protocol_version
        """The protocol revision the answer is shaped for."""
        self._context = context
        self._params = params  # the request's params (Raw) or its whole bytes, for the requestState scope
        self._now = now
        if principal is not None:  # else the class's None: nothing to store for a request without auth
            self.principal = principal

    @property
    def request_id(self) -> str | int:
        return self.event.request_id

    # -- framing, per transport ----------------------------------------------------------------
    def _empty(self) -> O:
        raise NotImplementedError

    def _notify_out(self, message: bytes, first: bool) -> O:
        raise NotImplementedError

    def _final_out(self, message: bytes, status: int, streaming: bool) -> O:
        raise NotImplementedError

    # -- verbs ------------------------------------------------------------------------------------
    def _next(self, verb: str) -> ExchangeState | None:
        """The state ``verb`` leads to (LocalProtocolError when the table forbids it), or None
        when the exchange was cancelled and nothing is to be sent.

        Verbs check first, encode next, and only then move to the new state, so an answer that
        fails to encode leaves the exchange answerable. Misuse is misuse whatever the client
        sent: every check of the host's values runs whether or not the answer is then sent
        (a cancelled exchange, a log level or progress the client did not ask for, a missing
        capability), so a bug shows in every test, not only with some clients.
        """
        row = SENDING[verb]
        if self.state not in row:
            EXCHANGE.move(self.state, verb)  # raises the table's refusal
        return row[self.state]

    def _notify(self, message: bytes, nxt: ExchangeState) -> O:
        first = self.state is _OPEN
        self.state = nxt
        return self._notify_out(message, first)

    def _finish(self, message: bytes, status: int, nxt: ExchangeState) -> O:
        streaming = self.state is _STREAMING or self.state is _AWAITING
        self.state = nxt
        if self.session is not None:
            # Initialize era: an answered request is HTTP 200 whatever the JSON-RPC outcome
            # (those clients read any other status as a failed transport, 404 as a lost session).
            status = 200
            self._release()
        return self._final_out(message, status, streaming)

    def _release(self) -> None:
        if self._asked and self.session is not None:
            self.session.forget(list(self._asked))
        self._asked = {}

    def progress(self, progress: float, *, total: float | None = None, message: str | None = None) -> O:
        """A ``notifications/progress`` for this request (Basic > Patterns > Progress).

        Sent only when the request carried a progressToken; values must strictly increase
        (LocalProtocolError otherwise). Updates past 1000 per request are dropped.
        """
        # Misuse is misuse whatever the client sent: a finished exchange takes no progress,
        # and the values are checked even when nothing is sent (cancelled, no progressToken).
        nxt = self._next("notify")
        if not math.isfinite(progress) or (total is not None and not math.isfinite(total)):
            raise LocalProtocolError("Progress values must be finite numbers")
        if self._last_progress is not None and progress <= self._last_progress:
            raise LocalProtocolError("Progress values must strictly increase")
        if message is not None and (type(message) is not str or len(message) > MAX_PROGRESS_MESSAGE):
            raise LocalProtocolError(f"Progress message must be a str of at most {MAX_PROGRESS_MESSAGE} characters")
        self._last_progress = progress
        token = self.event.meta.progress_token
        if nxt is None or token is None:  # cancelled, or the client asked for no progress
            return self._empty()
        self._progress_count += 1
        if self._progress_count > MAX_PROGRESS_UPDATES:
            return self._empty()
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        return self._notify(_encode(encode_notification, "notifications/progress", params), nxt)

    def log(self, level: str, data: Any, *, logger: str | None = None) -> O:
        """A ``notifications/message``, sent only if the request asked for ``level`` or lower
        (Server > Utilities > Logging). ``data`` is encoded either way, so data that is not JSON raises
        :class:`LocalProtocolError` whatever level the client asked for."""
        if level not in LOG_LEVELS:
            raise LocalProtocolError(f"Unknown log level {level!r}")
        if logger is not None and type(logger) is not str:
            raise LocalProtocolError("The logger name must be a str")
        nxt = self._next("notify")
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        message = _encode(encode_notification, "notifications/message", params)
        # A session's level is its last logging/setLevel (until then every level is sent); a
        # stateless request's is the one it carries.
        threshold = self.event.meta.log_level if self.session is None else (self.session.log_level or "debug")
        if nxt is None or not log_level_enabled(threshold, level):
            return self._empty()
        return self._notify(message, nxt)

    def complete(self, result: Any, *, now: float | None = None) -> O:
        """Send the final result: a CallToolResult, ReadResourceResult, GetPromptResult or
        CompleteResult matching the event (a str is shorthand for one text block of a tool).
        The result is checked and encoded even on a cancelled exchange (then nothing is sent).
        After :meth:`create_task` the result completes the task instead (``now`` required)."""
        nxt = self._next("finish")
        try:
            result = shape_result(self._context, self.event, result)
        except RemoteProtocolError as exc:  # e.g. output failed the tool's outputSchema
            return self.fail(exc, now=now)
        if self.state is _TASK:
            tasks, task_id, at = self._task(now)
            plain = msgspec.to_builtins(result)
            plain.pop("_meta", None)  # the task's result is the call's, without the server's identity again
            tasks.complete(task_id, plain, at)
            self._release()
            return self._empty()
        if self.session is not None:
            result = session_result(self.revision, self.event.method, result)
        try:
            message = encode_result(self.event.request_id, result)
        except _NOT_JSON as exc:
            raise _not_json(exc) from exc
        if nxt is None:
            return self._empty()
        return self._finish(message, 200, nxt)

    def input_required(
        self,
        requests: Mapping[str, Any] | None = None,
        *,
        state: Any = None,
        ttl_seconds: float | None = None,
        now: float | None = None,
    ) -> O:
        """Answer ``resultType: "input_required"`` (Basic > Patterns > Multi round-trip requests).

        ``requests`` maps ids of your choice to bare input requests (ElicitRequest,
        CreateMessageRequest, ListRootsRequest, or dicts of that shape). ``state`` is any
        JSON-encodable value but ``None`` (no state; ``msgspec.UNSET`` is taken as ``None``
        too); it comes back verified as ``event.state`` on the retry. If a
        request needs a capability this request did not declare, the answer is -32021 with
        the merged ``requiredCapabilities`` instead (schema $defs MissingRequiredClientCapabilityError). Every argument is checked (and the
        state sealed) before that choice, and on a cancelled exchange too.

        After :meth:`create_task` the task asks instead: ``input_required`` with these
        ``inputRequests`` (keys used once per task) until ``tasks/update`` answers them all,
        then the host runs the work again on :meth:`resume_task`'s event (``now`` required).
        """
        if not METHODS[self.event.method].input_required:
            raise LocalProtocolError(f"{self.event.method} may not answer input_required")
        if state is UNSET:
            state = None
        if self.session is not None and self.state is _TASK:
            return self._session_task_ask(requests or {}, state, now)
        if self.session is not None:
            return self._ask(requests or {}, state)
        if self.state is _TASK:
            return self._task_ask(requests or {}, state, now)
        if not requests and state is None:
            raise LocalProtocolError("An input_required result needs input requests or a state")
        nxt = self._next("finish")
        try:
            plain = {k: msgspec.to_builtins(v) for k, v in (requests or {}).items()}
        except (TypeError, ValueError, msgspec.EncodeError) as exc:
            raise LocalProtocolError(f"Input requests cannot be encoded as JSON: {exc}") from exc
        data = round_data(plain, state)
        missing = missing_capabilities(plain, self.event.meta.client_capabilities)
        # Always a requestState: it records what each id asked, so the retry's answers can be
        # checked (mrtr.py), and carries the host's state when there is one. Sealed before the
        # answer is chosen, so a bad TTL or state fails whatever the client declared.
        method = self.event.method
        scope_error: RemoteProtocolError | None = None
        try:
            scope = request_scope(method, self._scope_params(), self.principal)
        except RemoteProtocolError as exc:
            scope_error, scope = exc, b""
        token = self._context.state_codec.issue(
            method=method, scope=scope, data=data, now=self._now, ttl_seconds=ttl_seconds,
        )
        if nxt is None:
            return self._empty()
        if missing:
            return self.fail(MissingCapability(missing))
        if scope_error is not None:
            return self.fail(scope_error)
        result = InputRequiredResult(
            input_requests=plain if plain else UNSET,
            request_state=token,
            meta=dict(self._context.result_meta),
        )
        return self._finish(_encode(encode_result, self.request_id, result), 200, nxt)

    def _ask(self, requests: Mapping[str, Any], state: Any) -> O:
        """Initialize era: the input requests go to the client as server-to-client requests
        on this request's stream; the exchange then waits (``AWAITING``) until the engine has
        every answer and the host calls :meth:`resume`."""
        plain, missing = self._session_round(requests, state)
        nxt = EXCHANGE.move(self.state, "ask")
        if nxt is _CANCELLED:
            return self._empty()
        if missing:
            return self.fail(MissingCapability(missing))
        if self.accepts is _JSON_ONLY:
            return self._must_stream("the server asks the client for input on this request's event stream")
        frames = list(self._send_round(plain, state, {}).values())
        first = self.state is _OPEN
        self.state = nxt
        return self._requests_out(frames, first)

    def _session_round(self, requests: Mapping[str, Any], state: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """A session's round of input requests, checked: the requests as plain JSON, and the
        client capabilities they need that the session did not declare."""
        session = self.session
        assert session is not None
        if not requests:
            raise LocalProtocolError("Input requests are needed to ask the client for input")
        try:
            plain = {k: msgspec.to_builtins(v) for k, v in requests.items()}
            msgspec.json.encode(state)
        except (TypeError, ValueError, msgspec.EncodeError) as exc:
            raise LocalProtocolError(f"Input requests or state cannot be encoded as JSON: {exc}") from exc
        round_data(plain, None)  # every request is of a kind the protocol has
        return plain, missing_capabilities(plain, session.client_capabilities)

    def _send_round(self, plain: dict[str, Any], state: Any, meta: dict[str, Any]) -> dict[int, bytes]:
        """Each request of the round as a server-to-client request of the session (an id the
        session routes the answer back by, ``meta`` added to its ``_meta``), shaped for the
        revision; the exchange now waits for their answers."""
        session = self.session
        assert session is not None
        kinds = round_data(plain, None)[0]
        messages: dict[int, bytes] = {}
        if not self._asked:
            self._asked, self._answer_keys = {}, {}
        for key, request in plain.items():
            rid = session.ask(self, key)
            self._asked[rid] = kinds[key]
            self._answer_keys[rid] = key
            params = shape_request(self.revision, request)
            if meta:
                own = params.get("_meta") if type(params) is dict else None
                params = {**params, "_meta": {**(own if type(own) is dict else {}), **meta}}
            messages[rid] = _encode(encode_request, rid, request["method"], params)
        self._answers = {}
        self._input_error = None
        self._input_state = state
        return messages

    def _requests_out(self, messages: list[bytes], first: bool) -> O:
        raise NotImplementedError

    def _session_task_ask(self, requests: Mapping[str, Any], state: Any, now: float | None) -> O:
        """2025-11-25: a task asks its client (Tasks: Input Required Status): the task is
        ``input_required`` and the requests, each with the related-task ``_meta``, wait in
        :attr:`task_requests` for the host to send on a stream of the session (a ``tasks/result``
        waiting on the task: :meth:`relay`; or the session's GET or stdio stream). The exchange
        then waits for the answers as any session request does (:meth:`resume`)."""
        tasks, task_id, at = self._task(now)
        plain, missing = self._session_round(requests, state)
        if missing:
            return self.fail(MissingCapability(missing), now=now)
        tasks.ask(task_id, plain, state, at)
        self._task_messages = self._send_round(plain, state, {RELATED_TASK_META_KEY: {"taskId": task_id}})
        self._task_asking = True
        return self._empty()

    _task_asking = False
    _task_messages: dict[int, bytes] = {}

    @property
    def task_requests(self) -> list[bytes]:
        """2025-11-25: the requests of a task's :meth:`input_required` its client has not
        answered yet, to send on a stream of the session (JSON-RPC messages, unframed; each
        once: a stream that ends unread is the host's to make up for)."""
        return list(self._task_messages.values()) if self._task_asking else []

    @property
    def awaiting_input(self) -> bool:
        """Initialize era: requests went to the client and not every answer is in yet."""
        waiting = self.state is _AWAITING or (self._task_asking and self.state is _TASK)
        return waiting and bool(self._asked) and self._input_error is None

    def relay(self, messages: list[bytes]) -> O:
        """Send a 2025-11-25 task's :attr:`task_requests` on the stream of this ``tasks/result``
        (a :class:`TaskResultWanted` exchange), before its answer (Tasks: Input Required Status)."""
        if not isinstance(self.event, TaskResultWanted):
            raise LocalProtocolError("relay is for a tasks/result waiting on its task")
        nxt = self._next("notify")
        if nxt is None or not messages:
            return self._empty()
        if self.accepts is _JSON_ONLY:  # the requests stay the task's, for a stream that can carry them
            return self._must_stream("the task's requests to the client ride this request's event stream")
        first = self.state is _OPEN
        self.state = nxt
        return self._requests_out(messages, first)

    def _must_stream(self, why: str) -> O:
        """The answer can only be an event stream and the client takes only JSON: 406 (Streamable
        HTTP sends a session's requests to the client on the request's stream, 2025-11-25 and
        earlier). Nothing was sent before (notifications were not), so this is the whole answer."""
        nxt = self._next("finish")
        assert nxt is not None  # the callers return first on a cancelled exchange
        self.state = nxt
        self._release()
        error = RemoteProtocolError(f"Not Acceptable: {why}, and Accept does not list text/event-stream",
                                    code=ErrorCode.INVALID_REQUEST, http_status=406)
        return self._final_out(encode_error(self.request_id, error), 406, False)

    def receive_answer(self, response: Response) -> bool:
        """The engine hands in the client's response to one of this exchange's requests.
        Returns True when the exchange can :meth:`resume` (every answer in, or an error)."""
        rid = response.id
        if self._task_asking and type(rid) is int:
            self._task_messages.pop(rid, None)
        kind = self._asked.pop(rid, None) if type(rid) is int else None
        key = self._answer_keys.pop(rid, None) if type(rid) is int else None
        if kind is None or key is None or not (self.state is _AWAITING or self._task_asking):
            return False
        if not isinstance(response.error, msgspec.UnsetType):
            error = response.error
            self._input_error = RemoteProtocolError(
                f"The client answered {kind} with an error: {error.message}", code=error.code,
            )
        else:
            try:
                answer = None if isinstance(response.result, msgspec.UnsetType) else msgspec.json.decode(response.result)
                msgspec.convert(answer, ANSWER_TYPES[kind])
            except (msgspec.ValidationError, msgspec.DecodeError) as exc:
                self._input_error = RemoteProtocolError(
                    f"The client's answer to {kind} is not a valid {ANSWER_TYPES[kind].__name__}: {exc}",
                    code=ErrorCode.INVALID_PARAMS,
                )
            else:
                self._answers[key] = answer if type(answer) is dict else {}
        return self._input_error is not None or not self._asked

    def resume(self, *, now: float | None = None) -> ServerEvent:
        """Every answer is in: the event to run the handler on again, with ``input_responses``
        (each answer checked against what its request asked) and the ``state`` given with the
        requests. Raises the :class:`ProtocolError` to :meth:`fail` with when the client
        answered with an error or an invalid result. A 2025-11-25 task is ``working`` again
        (``now`` required)."""
        if self._input_error is not None:
            raise self._input_error
        if self._task_asking:
            tasks, task_id, at = self._task(now)
            record = tasks.get(task_id, at)
            if record is not None:
                tasks.answer(record, self._answers, at)
            self._task_asking = False
        else:
            self.state = EXCHANGE.move(self.state, "resume")
        answers = dict(self.event.input_responses or {}) if hasattr(self.event, "input_responses") else {}
        answers.update(self._answers)
        self.event = msgspec.structs.replace(self.event, input_responses=answers, state=self._input_state)
        self._answers = {}
        return self.event

    def input_timed_out(self, seconds: float, *, now: float | None = None) -> O:
        """The host waited ``seconds`` for the client's answers in vain: the request (or the
        task: ``now`` required) fails with -32603 (late answers are dropped)."""
        error = ProtocolError(f"No answer from the client within {seconds:g} s", code=ErrorCode.INTERNAL_ERROR)
        return self.fail(error, now=now)

    def _scope_params(self) -> dict[str, Any]:
        # The whole params, members admission skipped included (a number out of range there
        # is -32602 now, answered by input_required).
        params = self._params
        if type(params) is bytes:  # the whole message (a call admitted by its lane): its params member
            params = _members.decode(params).get("params", UNSET)
        return decode_params(_params_dict, params, self.request_id)  # type: ignore[no-any-return]

    def fail(self, error: BaseException, *, now: float | None = None) -> O:
        """Send an error response. A ProtocolError keeps its code and data; anything else is
        -32603. A -32603 is sent as ``Internal error`` with no data, whatever its message and
        data were (mcpwire's rule: the cause is never sent); the exception is kept as :attr:`internal_error`.
        After :meth:`create_task` the error fails the task instead (``now`` required)."""
        nxt = self._next("finish")
        if not isinstance(error, ProtocolError) or error.code == ErrorCode.INTERNAL_ERROR:
            self.internal_error = error
        if self.state is _TASK:
            tasks, task_id, at = self._task(now)
            if not isinstance(error, ProtocolError) or error.code == ErrorCode.INTERNAL_ERROR:
                error = ProtocolError("Internal error", code=ErrorCode.INTERNAL_ERROR)  # the cause is never sent
            tasks.fail(task_id, error_object(error), at, message=error.message)
            self._task_asking = False
            self._release()
            return self._empty()
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
        """The peer cancelled or went away: nothing more is sent for this request. After
        :meth:`create_task` the task goes on (only ``tasks/cancel`` stops it): a 2025-11-25 task
        still waits for its client's answers, until the task has ended."""
        self.state = EXCHANGE.move(self.state, "cancel")
        if self.state is _TASK:
            if not self._task_asking:
                return  # nothing waits for the client: no store read for a request that merely ended
            tasks = self._context.tasks
            record = tasks.get(self.task_id, self._now) if tasks is not None and self.task_id is not None else None
            if record is not None and not record.terminal:
                return
            self._task_asking = False
        self._release()

    # -- the tasks extension ----------------------------------------------------------------------
    task_id: str | None = None
    """The task this call became (:meth:`create_task`), else ``None``."""

    def create_task(
        self, *, now: float, ttl_ms: int | None | UnsetType = UNSET, poll_interval_ms: int | None | UnsetType = UNSET,
        status_message: str | None = None,
    ) -> O:
        """Answer the call with a task (tasks extension: Task Creation): the task is stored,
        ``working``, and its ``CreateTaskResult`` is the output. The work then goes on: finish
        it with :meth:`complete`, :meth:`fail` or :meth:`input_required` (each with ``now``),
        which change the task instead of sending anything, as :meth:`progress` and :meth:`log`
        send nothing any more. Only for an event with ``task_allowed``; ``ttl_ms`` and
        ``poll_interval_ms`` default to the server's (``Tasks``). On an exchange the client
        already left, no task is made and nothing is sent."""
        tasks = self._context.tasks
        event = self.event
        if tasks is None or not getattr(event, "task_allowed", False):
            raise LocalProtocolError("Only a tools/call with task_allowed may become a task")
        nxt = EXCHANGE.move(self.state, "task")
        if self.state is _CANCELLED:
            return self._empty()
        record = tasks.create(
            event.name, now, ttl_ms=ttl_ms, poll_interval_ms=poll_interval_ms,  # type: ignore[union-attr]
            status_message=status_message, owner=event.owner,  # type: ignore[union-attr]
            session=self.session.id if self.session is not None else None,
        )
        self.task_id = record.task_id
        self.event = msgspec.structs.replace(event, task_id=record.task_id)
        if self.session is not None:
            # 2025-11-25 (Tasks: Creating Tasks): CreateTaskResult is {task}; the session hears
            # the task's status changes (bounded: a session keeps at most MAX_SESSION_TASKS).
            if len(self.session.task_ids) < MAX_SESSION_TASKS:
                self.session.task_ids.add(record.task_id)
            return self._finish(_encode(encode_result, self.request_id, {"task": tasks.session_task(record)}), 200, nxt)
        result = {"resultType": "task", **tasks.task_object(record), "_meta": self._context.result_meta}
        return self._finish(_encode(encode_result, self.request_id, result), 200, nxt)

    def task_result(self, record: TaskRecord) -> O:
        """Answer a 2025-11-25 ``tasks/result`` (a :class:`TaskResultWanted` event) once its task
        is finished: the call's result with the related-task ``_meta``, or its JSON-RPC error
        (Tasks: Result Retrieval)."""
        event = self.event
        if not isinstance(event, TaskResultWanted) or record.task_id != event.task_id or not record.terminal:
            raise LocalProtocolError("task_result takes the finished task a tasks/result asked for")
        nxt = self._next("finish")
        message = Tasks.session_answer(record, self.revision, self.request_id)
        return self._empty() if nxt is None else self._finish(message, 200, nxt)

    def _task(self, now: float | None) -> tuple[Tasks, str, float]:
        if now is None:
            raise LocalProtocolError("A task's outcome needs now= (seconds since the epoch)")
        check_now(now)
        tasks = self._context.tasks
        assert tasks is not None and self.task_id is not None
        return tasks, self.task_id, now

    def _task_ask(self, requests: Mapping[str, Any], state: Any, now: float | None) -> O:
        tasks, task_id, at = self._task(now)
        try:
            plain = {k: msgspec.to_builtins(v) for k, v in requests.items()}
            msgspec.json.encode(state)
        except (TypeError, ValueError, msgspec.EncodeError) as exc:
            raise LocalProtocolError(f"Input requests or state cannot be encoded as JSON: {exc}") from exc
        round_data(plain, None)  # every request is of a kind the protocol has
        missing = missing_capabilities(plain, self.event.meta.client_capabilities)
        if missing:
            return self.fail(MissingCapability(missing), now=now)
        tasks.ask(task_id, plain, state, at)
        return self._empty()

    def set_task_status(self, message: str | None, *, now: float) -> None:
        """A new ``statusMessage`` for this call's task, while it works."""
        tasks, task_id, at = self._task(now)
        tasks.set_status(task_id, message, at)

    def resume_task(self, task: TaskRecord) -> ServerEvent:
        """``tasks/update`` answered every input request of this call's task
        (:class:`TaskChanged` with a working ``task``): the event to run the work again on, with
        ``input_responses`` (every answer the task got so far, each checked against what its key
        asked) and the ``state`` given with the latest requests."""
        if self.state is not _TASK or task.task_id != self.task_id:
            raise LocalProtocolError("resume_task takes the task this exchange created")
        # Every answer of the task so far, as a session's rounds give them (keys are never reused).
        answers = dict(getattr(self.event, "input_responses", None) or {})
        answers.update(task.answers)
        self.event = msgspec.structs.replace(self.event, input_responses=answers, state=task.state)
        return self.event


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
