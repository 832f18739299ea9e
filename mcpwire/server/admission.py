"""What admission hands back inside the server engine, shared by its two halves (engine.py, initialize_era.py).

Not a public import path: :data:`HttpAnswer` is documented on :meth:`mcpwire.Server.receive_http`.
"""

from __future__ import annotations

from typing import Any, Callable, Final, Union

import msgspec
from msgspec import UNSET

from ..wire.envelope import Request, RequestId
from ..wire.errors import ErrorCode, RemoteProtocolError
from ..wire.meta import PROTOCOL_VERSION_META_KEY, RequestMeta
from .events import Cancelled, HttpBatch, InputArrived, ServerEvent, SessionClosed, TaskChanged
from .exchange import HttpExchange
from .http import HttpReply, error_reply
from .listen import HttpListenStream

__all__ = ["Admitted", "Handler", "HttpAnswer", "Listen", "names_version", "refuse"]

_dict_decoder: Final = msgspec.json.Decoder(dict[str, Any])


class Listen(msgspec.Struct, frozen=True):
    """An admitted subscriptions/listen: the driver opens its stream."""

    request_id: RequestId
    meta: RequestMeta
    honoured: dict[str, Any]


Admitted = Union[bytes, tuple[ServerEvent, Any], Listen, TaskChanged]
"""An admitted request: a complete answer, an event for the host with its params, a listen stream,
or a task changed by the request (its acknowledgement, with what the host's work must do)."""

Handler = Callable[[Request, Any, RequestMeta, float, "str | None"], Admitted]
"""A method's admission after the common checks: ``(message, params, meta, now, principal)``,
``principal`` the authenticated caller (``HttpRequest.principal``; ``None`` on stdio)."""

HttpAnswer = Union[
    HttpReply, HttpExchange, HttpListenStream, InputArrived, SessionClosed, Cancelled, HttpBatch, TaskChanged,
]
"""What :meth:`Server.receive_http` returns."""


def refuse(status: int, message: str, request_id: Any = None, code: int = ErrorCode.INVALID_REQUEST) -> HttpReply:
    """An HTTP refusal with its JSON-RPC error body."""
    return error_reply(RemoteProtocolError(message, code=code, http_status=status), request_id)


def names_version(message: Request) -> bool:
    """Whether a request's ``_meta`` names a protocol version (a 2026-07-28 request)."""
    params = message.params
    if params is UNSET or PROTOCOL_VERSION_META_KEY.encode() not in bytes(params):
        return False
    try:
        decoded = _dict_decoder.decode(params)
    except (msgspec.DecodeError, RecursionError):
        return False
    meta = decoded.get("_meta")
    return type(meta) is dict and PROTOCOL_VERSION_META_KEY in meta
