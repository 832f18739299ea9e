"""Notification fan-out between the processes of one server: the :class:`Broker` interface, the
notices it carries, and :class:`LocalBroker`, the one-process default.

An :class:`~mcpwire_adapters.App` delivers every change to its own listen streams (2026-07-28
``subscriptions/listen``) and initialize-era GET streams first, then hands a :data:`Notice` to
its broker, which tells the other processes of the same server; each of them delivers it to
its own streams (:meth:`App.receive_notice`). What travels is the fact, never the frames:
``list_changed`` of a kind, ``resources/updated`` of a URI, a task whose status changed (each
process reads the task from the shared store and builds its own ``notifications/tasks``), and
a task changed by ``tasks/update`` or ``tasks/cancel`` on a process that does not run its work
(the process that runs it resumes or stops it), a client's answer to an initialize-era
session's request that reached a process other than the one waiting for it, the end of an
initialize-era session (its DELETE: every process ends its streams and work), and more output
on the stream of a session's request whose response was closed mid-call (a process where a GET
resumes that stream reads it from the session's event store). A broker may also deliver a
notice of its own making to its process: a shared session store's periodic check finds a
session gone (:class:`SessionClosedNotice`) or its GET stream's hold lost (:class:`StreamLostNotice`).

A notice is encoded as msgspec JSON inside an :class:`Envelope` naming the process that sent
it (its ``origin``), so that a process skips its own notices (it delivered them already).
:func:`decode_envelope` is strict: anything else on a broker's channel (a foreign or poisoned
message) is ``None``, to be logged and dropped by the broker, never raised.
"""

from __future__ import annotations

from typing import Any, Callable, Coroutine, Final, Literal, Protocol, Union

import msgspec

__all__ = [
    "AnswerNotice", "Broker", "Envelope", "ListChangedNotice", "LocalBroker", "Notice", "ResourceUpdatedNotice",
    "SessionClosedNotice", "StreamGrewNotice", "StreamLostNotice", "TaskChangedNotice", "TaskStatusNotice",
    "decode_envelope", "encode_envelope",
]

ENVELOPE_VERSION: Final = 1
MAX_NOTICE_BYTES: Final = 4 * 1024 * 1024
"""A broker message longer than this is not one of ours: dropped unread (a client's answer,
an elicitation's content or a sampled message, is the longest notice)."""


class ListChangedNotice(msgspec.Struct, frozen=True, kw_only=True, tag="list_changed"):
    """The tools, prompts or resources list changed."""

    list: Literal["tools", "prompts", "resources"]


class ResourceUpdatedNotice(msgspec.Struct, frozen=True, kw_only=True, tag="resource_updated"):
    """The resource at ``uri`` changed."""

    uri: str


class TaskStatusNotice(msgspec.Struct, frozen=True, kw_only=True, tag="task_status"):
    """Task ``task_id`` changed: listeners watching it get its state, read from the task store."""

    task_id: str


class TaskChangedNotice(msgspec.Struct, frozen=True, kw_only=True, tag="task_changed"):
    """``tasks/update`` or ``tasks/cancel`` changed task ``task_id`` on a process that does not run
    its work: the process that runs it resumes it (every answer in) or stops it (cancelled)."""

    task_id: str


class AnswerNotice(msgspec.Struct, frozen=True, kw_only=True, tag="answer"):
    """A client's answer (``response``: the JSON-RPC response as received) to a request of
    initialize-era session ``session_id`` that no exchange of the receiving process waited for:
    the process whose exchange asked resumes it."""

    session_id: str
    response: msgspec.Raw


class SessionClosedNotice(msgspec.Struct, frozen=True, kw_only=True, tag="session_closed"):
    """Initialize-era session ``session_id`` ended (its DELETE on another process, or found
    gone): the receiving process ends the session's GET stream, the GET streams resuming its
    requests' streams, and its requests' work, as a DELETE there would."""

    session_id: str


class StreamLostNotice(msgspec.Struct, frozen=True, kw_only=True, tag="stream_lost"):
    """This process's GET stream of session ``session_id`` no longer holds the session's one
    GET stream (its lease lapsed while Redis could not be reached): it ends. Made by the broker
    for its own process, never published."""

    session_id: str


class StreamGrewNotice(msgspec.Struct, frozen=True, kw_only=True, tag="stream_grew"):
    """A request of session ``session_id`` whose response was closed mid-call
    (``close_sse_stream``) sent more on its stream ``key``, recorded in the session's event
    store: a GET resuming that stream in the receiving process reads it from there."""

    session_id: str
    key: str


Notice = Union[
    ListChangedNotice, ResourceUpdatedNotice, TaskStatusNotice, TaskChangedNotice, AnswerNotice, SessionClosedNotice,
    StreamLostNotice, StreamGrewNotice,
]


class Envelope(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One broker message: the format version, the sending process, the notice."""

    v: Literal[1]
    origin: str
    notice: Notice


_ENCODE = msgspec.json.Encoder().encode
_DECODE = msgspec.json.Decoder(Envelope).decode


def encode_envelope(origin: str, notice: Notice) -> bytes:
    return _ENCODE(Envelope(v=ENVELOPE_VERSION, origin=origin, notice=notice))


def decode_envelope(data: Any) -> Envelope | None:
    """The envelope in ``data`` (bytes), or ``None`` for anything that is not exactly one."""
    if not isinstance(data, (bytes, bytearray)) or len(data) > MAX_NOTICE_BYTES:
        return None
    try:
        envelope = _DECODE(data)
    except msgspec.ValidationError:
        return None
    except msgspec.DecodeError:
        return None
    if not envelope.origin or len(envelope.origin) > 64:
        return None
    return envelope


Deliver = Callable[[Notice], Coroutine[Any, Any, None]]


class Broker(Protocol):
    """How an App's notices reach the other processes of its server.

    ``shared`` says whether other processes exist to tell (a task changed on a process that
    does not run its work is then handed on instead of failed). :meth:`publish` is called from
    the event loop's thread after the local delivery; it must not raise when the other
    processes cannot be reached (log instead: the local streams have their notice already).
    :meth:`run` runs in the App's background task group (:meth:`App.running`) and awaits
    ``deliver(notice)`` for each notice of another process (and each of its own making for
    this process), until it is cancelled."""

    shared: bool

    def publish(self, notice: Notice) -> None: ...

    async def run(self, deliver: Deliver) -> None: ...


class LocalBroker:
    """One process: nothing to tell anyone (the App delivered to its own streams already)."""

    shared = False

    def publish(self, notice: Notice) -> None:
        pass

    async def run(self, deliver: Deliver) -> None:
        pass
