"""Multi round-trip requests (SEP-2322), server admission: the structural checks of
``inputResponses`` and ``requestState`` (wire reference section 10.3).

Which client capability each input request needs is a wire fact (``wire/capabilities.py``);
token signing lives in ``tokens.py``.
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET

from ..wire.errors import ErrorCode, RemoteProtocolError

__all__ = ["check_input_responses", "check_request_state"]


def check_input_responses(value: Any) -> dict[str, dict[str, Any]] | None:
    """Admission check of ``inputResponses`` (section 10.3); ``None`` when absent."""
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
