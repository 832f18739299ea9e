"""The client's state table: one request, from sent to its final event.

Owns the states and every legal move of a request the client engine tracks (on an HTTP
response stream, or among several in flight on stdio): progress, log and listen events keep
it RECEIVING; exactly one final event (a result, an input_required round, an error) ends it;
the host may cancel it first, after which late messages for it are dropped. The request
trackers in ``stream.py`` change state only through this machine.
"""

from __future__ import annotations

from enum import Enum
from typing import Final

from ..wire.statemachine import StateMachine

__all__ = ["RequestState", "REQUEST"]


class RequestState(Enum):
    """The state of one tracked request (``HttpResponseParser.state``, ``ClientStdioConnection.state_of``)."""

    __hash__ = object.__hash__

    AWAITING = "awaiting"              # sent; nothing has come back yet
    RECEIVING = "receiving"            # notifications for it arrived (HTTP: an SSE stream)
    COMPLETE = "complete"              # its result arrived
    INPUT_REQUIRED = "input_required"  # the round ended asking for input; a retry is a new request
    FAILED = "failed"                  # an error response, or the transport lost it
    CANCELLED = "cancelled"            # the host cancelled it; late messages are dropped


_R = RequestState
REQUEST: Final = StateMachine("Client request", _R.AWAITING, {
    (_R.AWAITING, "notify"): _R.RECEIVING,
    (_R.RECEIVING, "notify"): _R.RECEIVING,
    (_R.AWAITING, "result"): _R.COMPLETE,
    (_R.RECEIVING, "result"): _R.COMPLETE,
    (_R.AWAITING, "input"): _R.INPUT_REQUIRED,
    (_R.RECEIVING, "input"): _R.INPUT_REQUIRED,
    (_R.AWAITING, "error"): _R.FAILED,
    (_R.RECEIVING, "error"): _R.FAILED,
    (_R.AWAITING, "cancel"): _R.CANCELLED,
    (_R.RECEIVING, "cancel"): _R.CANCELLED,
}, absorbing=(_R.CANCELLED,))  # what was already on the wire for it is dropped
