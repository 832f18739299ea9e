"""The server's state tables: one request exchange, one subscriptions/listen stream.

Owns the states and every legal move of :class:`~mcpwire.Exchange` (a JSON answer, or an SSE
stream once a notification went out: specification "Transports", Streamable HTTP) and of
:class:`~mcpwire.ListenStream` (acknowledgement first, then events, then the listen result:
schema $defs SubscriptionsAcknowledgedNotification, SubscriptionsListenResult). The objects
change state only through these machines (``wire/statemachine.py``).
"""

from __future__ import annotations

from enum import Enum
from typing import Final

from ..wire.statemachine import StateMachine

__all__ = ["ExchangeState", "ListenState", "SessionState", "TaskStatus", "EXCHANGE", "LISTEN", "SENDING", "SESSION", "TASK"]


class ExchangeState(Enum):
    """The state of one request exchange: ``Exchange.state``."""

    # Identity hashing keeps the table lookups on the request path cheap (Enum's default
    # hashes the name in Python code).
    __hash__ = object.__hash__

    OPEN = "open"            # admitted; nothing sent yet
    STREAMING = "streaming"  # a notification went out (HTTP: the response is now SSE)
    AWAITING = "awaiting"    # initialize era: requests went to the client; waiting for its answers
    DONE = "done"            # the final response went out
    CANCELLED = "cancelled"  # the peer went away or cancelled; nothing more is sent
    TASK = "task"            # the call became a task (its CreateTaskResult went out): the outcome goes to the task


class ListenState(Enum):
    """The state of one subscriptions/listen stream: ``ListenStream.state``."""

    __hash__ = object.__hash__

    PENDING = "pending"      # admitted; the acknowledgement is not out yet
    OPEN = "open"            # acknowledged; events flow
    CLOSED = "closed"        # ended gracefully with the listen result
    CANCELLED = "cancelled"  # the client went away; nothing more is sent


_E = ExchangeState
EXCHANGE: Final = StateMachine("Request exchange", _E.OPEN, {
    (_E.OPEN, "notify"): _E.STREAMING,
    (_E.STREAMING, "notify"): _E.STREAMING,
    (_E.OPEN, "finish"): _E.DONE,
    (_E.STREAMING, "finish"): _E.DONE,
    (_E.OPEN, "ask"): _E.AWAITING,           # server-to-client requests out (an SSE stream)
    (_E.STREAMING, "ask"): _E.AWAITING,
    (_E.AWAITING, "resume"): _E.STREAMING,   # every answer in: the host runs its handler again
    (_E.AWAITING, "finish"): _E.DONE,        # the client answered with an error, or too late
    (_E.OPEN, "cancel"): _E.CANCELLED,
    (_E.STREAMING, "cancel"): _E.CANCELLED,
    (_E.AWAITING, "cancel"): _E.CANCELLED,
    (_E.DONE, "cancel"): _E.DONE,             # the answer is out; a late cancel changes nothing
    (_E.OPEN, "task"): _E.TASK,               # tasks extension: a CreateTaskResult answers the call
    (_E.STREAMING, "task"): _E.TASK,
    # Cancelled: the host may still be finishing, its output is dropped. Task: the response is
    # out and the work goes on, its outcome recorded in the task (a disconnect stops nothing).
}, absorbing=(_E.CANCELLED, _E.TASK))
# The moves of the verbs that send, read from EXCHANGE once (Exchange reads them on every answer):
# for each state the table allows the verb in, the state it leads to, or None when nothing is to
# be sent (cancelled, or a task's outcome). A state the table forbids the verb in is absent.
SENDING: Final = {
    verb: {src: None if dst in (_E.CANCELLED, _E.TASK) else dst for (src, name), dst in EXCHANGE.table.items() if name == verb}
    for verb in ("notify", "finish")
}

class SessionState(Enum):
    """The state of one initialize-era session: ``Session.state``."""

    __hash__ = object.__hash__

    INITIALIZING = "initializing"  # initialize answered; notifications/initialized not yet seen
    READY = "ready"                # the client sent notifications/initialized
    CLOSED = "closed"              # ended (DELETE, expiry, end of stdio); nothing more is served


_S = SessionState
SESSION: Final = StateMachine("Initialize-era session", _S.INITIALIZING, {
    (_S.INITIALIZING, "initialized"): _S.READY,
    (_S.READY, "initialized"): _S.READY,      # a repeated notification changes nothing
    (_S.INITIALIZING, "close"): _S.CLOSED,
    (_S.READY, "close"): _S.CLOSED,
}, absorbing=(_S.CLOSED,))

_L = ListenState
LISTEN: Final = StateMachine("subscriptions/listen stream", _L.PENDING, {
    (_L.PENDING, "start"): _L.OPEN,
    (_L.OPEN, "event"): _L.OPEN,
    (_L.OPEN, "close"): _L.CLOSED,
    (_L.PENDING, "cancel"): _L.CANCELLED,
    (_L.OPEN, "cancel"): _L.CANCELLED,
}, absorbing=(_L.CLOSED, _L.CANCELLED))  # ended: the host's late calls send nothing


class TaskStatus(Enum):
    """The status of one task of the tasks extension (ext-tasks specification: Task Status);
    the values are the wire's."""

    __hash__ = object.__hash__

    WORKING = "working"                # the work runs
    INPUT_REQUIRED = "input_required"  # the work waits for the answers to its inputRequests
    COMPLETED = "completed"            # the work answered a result (a tool error included)
    FAILED = "failed"                  # the work ended with a JSON-RPC error
    CANCELLED = "cancelled"            # tasks/cancel arrived before the work ended


_T = TaskStatus
TASK: Final = StateMachine("Task (tasks extension)", _T.WORKING, {
    (_T.WORKING, "status"): _T.WORKING,              # a new statusMessage
    (_T.WORKING, "ask"): _T.INPUT_REQUIRED,          # inputRequests out, surfaced by tasks/get
    (_T.INPUT_REQUIRED, "answer"): _T.INPUT_REQUIRED,  # tasks/update with some of the answers
    (_T.INPUT_REQUIRED, "resume"): _T.WORKING,       # every answer in: the work runs again
    (_T.WORKING, "complete"): _T.COMPLETED,
    (_T.WORKING, "fail"): _T.FAILED,
    (_T.INPUT_REQUIRED, "fail"): _T.FAILED,           # the work gave up waiting, or was lost
    (_T.WORKING, "cancel"): _T.CANCELLED,
    (_T.INPUT_REQUIRED, "cancel"): _T.CANCELLED,
}, absorbing=(_T.COMPLETED, _T.FAILED, _T.CANCELLED))  # terminal: late work changes nothing
