"""One admitted request and the host's verbs on it, whatever the transport: :class:`Exchange`.

Owns (specification: Basic; Basic > Patterns > Progress and Multi round-trip requests;
Server > Utilities > Logging): turning the host's answer into messages — the final result
with ``resultType`` and ``_meta.serverInfo`` stamped, cache fields filled in, progress and log
notifications gated and ordered before the final response, input_required results checked
for capabilities and sealed with a signed ``requestState``; on an initialize-era session the
rounds of server-to-client requests and their answers. How each message is framed (JSON or
SSE on HTTP, as the client's Accept allows; NDJSON lines on stdio) is the subclasses' in
``exchange.py``; a call that becomes a task is ``exchange_tasks.py``'s.

Invariants: at most one final response per exchange; nothing after it; nothing at all once
cancelled (every verb then returns empty output); notifications precede the final response.
The state machine is ``states.EXCHANGE``.
"""

from __future__ import annotations

import math
from types import MappingProxyType
from typing import Any, Final, Mapping, TypeVar

import msgspec
from msgspec import UNSET

from ..types import InputRequiredResult
from ..wire.capabilities import missing_capabilities
from ..wire.envelope import (
    Response, encode_error, encode_notification, encode_request, encode_result,
)
from ..wire.errors import ErrorCode, LocalProtocolError, MissingCapability, ProtocolError, RemoteProtocolError
from ..wire.meta import LOG_LEVELS, log_level_enabled
from ..wire.methods import METHODS
from ..wire.params import decode_params
from .context import ServerContext
from .events import ServerEvent, TaskResultWanted
from .accept import Accepts
from .states import EXCHANGE, SENDING, ExchangeState
from .initialize_era_results import session_result, shape_request
from .mrtr import ANSWER_TYPES, round_data
from .session import Session
from .results import error_object, shape_result
from .exchange_tasks import ExchangeTasks, plain_round
from .tokens import request_scope

__all__ = ["Exchange", "MAX_PROGRESS_MESSAGE", "MAX_PROGRESS_UPDATES", "resource_not_found"]

O = TypeVar("O")  # the TypeVar of an exchange's output (bytes or HttpOutput)
_params_dict: msgspec.json.Decoder[dict[str, Any]] = msgspec.json.Decoder(dict[str, Any])
_members: Final = msgspec.json.Decoder(dict[str, msgspec.Raw])  # a message's members, undecoded

MAX_PROGRESS_UPDATES = 1000
MAX_PROGRESS_MESSAGE = 4096


def resource_not_found(uri: str) -> RemoteProtocolError:
    """The SEP-2164 resource-not-found error: -32602 with ``data.uri`` (Server > Resources, error handling)."""
    return RemoteProtocolError("Resource not found", code=ErrorCode.INVALID_PARAMS, data={"uri": uri})


# The states as module constants: an Enum member read through its class costs a lookup in Python code.
_OPEN, _STREAMING, _AWAITING, _DONE, _CANCELLED, _TASK = (
    ExchangeState.OPEN, ExchangeState.STREAMING, ExchangeState.AWAITING, ExchangeState.DONE, ExchangeState.CANCELLED,
    ExchangeState.TASK,
)
_NOT_JSON: Final = (TypeError, ValueError, msgspec.EncodeError)  # what msgspec raises for a value it cannot encode
_BOTH, _JSON_ONLY = Accepts.BOTH, Accepts.JSON


def _not_json(exc: Exception) -> LocalProtocolError:
    return LocalProtocolError(f"The answer cannot be encoded as JSON: {exc}")


def _encode(encoder: Any, *args: Any) -> bytes:
    try:
        return encoder(*args)  # type: ignore[no-any-return]
    except _NOT_JSON as exc:
        raise _not_json(exc) from exc


class Exchange(ExchangeTasks[O]):
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

    def _requests_out(self, messages: list[bytes], first: bool) -> O:
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

    def _finish_result(self, result: Any, nxt: ExchangeState) -> O:
        """:meth:`_finish` with ``result``, this request's result, encoded (HTTP 200)."""
        return self._finish(_encode(encode_result, self.request_id, result), 200, nxt)

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
        return self._finish_result(result, nxt)

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
        plain = plain_round(requests, state)
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
