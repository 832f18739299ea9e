"""Multi round-trip requests (SEP-2322), server admission: the structural checks of
``inputResponses`` and ``requestState`` (Basic > Patterns > Multi round-trip requests), and what a round
records in its requestState so the next one can check the answers.

The server is stateless: it knows what it asked only because the signed requestState says
so. Every input_required answer carries one, whose data is ``[kinds]`` or
``[kinds, state]``: ``kinds`` maps each input request id to its method
(``"elicitation/create"``, ``"sampling/createMessage"``, ``"roots/list"``), ``state`` is the
host's own data. On the retry each answer to a recorded id must convert to the matching
result type (ElicitResult, CreateMessageResult, ListRootsResult), else -32602 naming the id;
answers to ids that were not asked are left alone (the specification: extra answers are ignored). A retry without requestState can
only be checked for shape (an object of objects).

Which client capability each input request needs is a wire fact (``wire/capabilities.py``);
token signing lives in ``tokens.py``.
"""

from __future__ import annotations

from typing import Any, Final, Mapping

import msgspec
from msgspec import UNSET

from ..wire.errors import ErrorCode, LocalProtocolError, RemoteProtocolError
from ..wire.methods import SERVER_REQUESTS
from .tokens import InvalidRequestState

__all__ = ["check_input_responses", "check_request_state", "round_data", "open_round", "check_answers"]

ANSWER_TYPES: Final[dict[str, type[Any]]] = {name: spec.result for name, spec in SERVER_REQUESTS.items()}
"""The result type that answers each input request method."""


def round_data(requests: Mapping[str, Mapping[str, Any]], state: Any) -> list[Any]:
    """The requestState data of an input_required round: the kind of each input request
    (``requests`` as plain JSON) and the host's ``state`` (left out when ``None``)."""
    kinds: dict[str, str] = {}
    for key, request in requests.items():
        method = request.get("method") if type(request) is dict else None
        if method not in ANSWER_TYPES:
            raise LocalProtocolError(f"Input request {key!r} is not an elicitation, sampling or roots request")
        kinds[key] = method
    return [kinds] if state is None else [kinds, state]


def open_round(data: Any) -> tuple[dict[str, str], Any]:
    """``(kinds, state)`` out of a verified requestState's data (state ``None`` when none)."""
    if type(data) is not list or not 1 <= len(data) <= 2 or type(data[0]) is not dict:
        raise InvalidRequestState("not a round's data")  # authentic, but not ours: another issuer
    return data[0], data[1] if len(data) == 2 else None


def check_answers(responses: Mapping[str, Any], kinds: Mapping[str, str]) -> None:
    """-32602 naming the first answer that is not a valid result for what its id asked."""
    for key, response in responses.items():
        method = kinds.get(key)
        if method is None:
            continue  # not asked in the previous round: ignored, as the specification says
        answer_type = ANSWER_TYPES.get(method)
        if answer_type is None:
            raise InvalidRequestState("unknown input request kind")
        try:
            msgspec.convert(response, answer_type)
        except msgspec.ValidationError as exc:
            raise RemoteProtocolError(
                f"inputResponses.{key} is not a valid {answer_type.__name__}: {exc}", code=ErrorCode.INVALID_PARAMS
            ) from None


def check_input_responses(value: Any) -> dict[str, dict[str, Any]] | None:
    """Admission check of ``inputResponses`` (schema $defs InputResponses); ``None`` when absent."""
    if value is UNSET:
        return None
    if type(value) is not dict:
        raise RemoteProtocolError("inputResponses must be an object", code=ErrorCode.INVALID_PARAMS)
    for response in value.values():
        if type(response) is not dict:
            raise RemoteProtocolError(
                "inputResponses must map string IDs to bare result objects", code=ErrorCode.INVALID_PARAMS
            )
    return value


def check_request_state(value: Any) -> str | None:
    """Admission check of ``requestState``; ``None`` when absent."""
    if value is UNSET:
        return None
    if type(value) is not str:
        raise RemoteProtocolError("requestState must be a string", code=ErrorCode.INVALID_PARAMS)
    return value
