"""The invariants of mcpwire's own engines under fuzzing: every outcome is a documented one
(docs/errors.md: codes and HTTP statuses, Streamable HTTP and stdio).

These hold mcpwire's server and client engines to mcpwire's own documentation (a -32603 never
carries its cause, every result has ``resultType`` and ``serverInfo``, the exact codes of the
status table), which is stricter than the specification; they are not the judge of other
servers (that is ``mcpwire_adapters.testing.judge``, used by ``mcpwire probe`` and ``mcpwire fuzz``).

Cheap, with no JSON Schema validation, so the atheris harnesses can afford them on every input;
the hypothesis suites add schema validation on top (``tests/schema_check.py``). Each
``*_invariants`` function returns the messages it read and raises :class:`Undocumented` (an
AssertionError) naming what broke.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from mcpwire import ResponseBody, ResponseHead
from mcpwire.framing import SSEReader

__all__ = [
    "Undocumented", "DOCUMENTED_STATUSES", "ADMISSION_STATUSES", "STATUS_OF_CODE", "STDIO_CODES",
    "APP_CODES", "reply_invariants", "http_stream_invariants", "line_invariants", "lines_invariants", "message_invariants",
]

# docs/errors.md, "Codes and HTTP statuses": every status, and the status of each JSON-RPC code.
ADMISSION_STATUSES: Final = frozenset({403, 404, 405, 406, 413, 415})
DOCUMENTED_STATUSES: Final = frozenset({200, 202, 400, 500, 503}) | ADMISSION_STATUSES
STATUS_OF_CODE: Final[dict[int, int]] = {
    -32700: 400, -32600: 400, -32602: 400, -32020: 400, -32021: 400, -32022: 400, -32601: 404, -32603: 500,
}
# Codes the fuzz host itself uses for application errors (sent with HTTP 200).
APP_CODES: Final = frozenset({-32000, -32050, 1, 42})
# No headers on stdio, so never -32020 there (specification: Basic > Transports > stdio,
# Request Metadata).
STDIO_CODES: Final = frozenset(STATUS_OF_CODE) - {-32020}


class Undocumented(AssertionError):
    """The engine produced something docs/errors.md does not allow."""


def _require(condition: bool, what: str, detail: Any = None) -> None:
    if not condition:
        raise Undocumented(f"{what}: {detail!r}"[:2000])


def message_invariants(data: bytes | str) -> dict[str, Any]:
    """One JSON-RPC message the engine emitted, parsed and shape-checked."""
    try:
        message = json.loads(data)
    except ValueError as exc:
        raise Undocumented(f"emitted text is not JSON ({exc}): {data[:300]!r}") from None
    _require(type(message) is dict and message.get("jsonrpc") == "2.0", "not a JSON-RPC 2.0 object", message)
    assert isinstance(message, dict)
    if "error" in message:
        error = message["error"]
        _require("result" not in message and "method" not in message, "error mixed with result/method", message)
        _require("id" in message, "an error response always carries id", message)
        _require(type(error) is dict and type(error.get("code")) is int and type(error.get("message")) is str,
                 "malformed error object", message)
        rid = message["id"]
        _require(rid is None or type(rid) in (int, str), "bad id", message)
        if error["code"] == -32603:  # mcpwire's rule: the cause of an internal error is never sent
            _require(error == {"code": -32603, "message": "Internal error"}, "-32603 with a cause", message)
    elif "result" in message:
        _require(type(message.get("id")) in (int, str), "a result has an id", message)
        result = message["result"]
        _require(type(result) is dict and type(result.get("resultType")) is str, "result without resultType", message)
        meta = result.get("_meta")
        _require(type(meta) is dict and "io.modelcontextprotocol/serverInfo" in meta, "result without serverInfo", message)
    else:
        _require(type(message.get("method")) is str and "id" not in message, "the server sent a request", message)
    return message


def _error_code(message: dict[str, Any]) -> int | None:
    error = message.get("error")
    return int(error["code"]) if isinstance(error, dict) else None


def reply_invariants(head: ResponseHead, body: ResponseBody) -> dict[str, Any] | None:
    """A complete HTTP reply: documented status, JSON-RPC error body on every non-2xx answer
    with the code that status stands for, 202 empty. Returns the message (None for 202)."""
    _require(isinstance(head, ResponseHead) and isinstance(body, ResponseBody), "not a reply", (head, body))
    _require(body.more is False, "a complete reply ends its body", body)
    status = head.status
    _require(status in DOCUMENTED_STATUSES, "undocumented status", status)
    headers = {k.lower(): v for k, v in head.headers}
    _require(len(headers) == len(head.headers), "repeated response header", head.headers)
    if status == 202:
        _require(body.data == b"" and headers.get(b"content-length") == b"0", "202 has an empty body", body)
        return None
    _require(headers.get(b"content-type") == b"application/json", "reply is not JSON", head)
    _require(headers.get(b"content-length") == str(len(body.data)).encode(), "wrong content-length", head)
    message = message_invariants(body.data)
    code = _error_code(message)
    if status != 200:
        _require(code is not None, "a non-2xx answer carries a JSON-RPC error", message)
        if status in ADMISSION_STATUSES and not (status == 404 and code == -32601):
            _require(code == -32600 and message["id"] is None, "transport refusals are -32600, id null", message)
            if status == 405:
                _require(headers.get(b"allow") == b"POST", "405 carries Allow: POST", head)
        elif status == 503:
            _require(code == -32603, "503 is -32603", message)
        else:
            _require(code is not None and STATUS_OF_CODE.get(code) == status, "code does not match status",
                     (status, message))
    elif code is not None:
        _require(code not in STATUS_OF_CODE, "a code of the status table sent with 200", message)
    return message


def http_stream_invariants(events: Sequence[Any], *, final: bool = True) -> list[dict[str, Any]]:
    """The whole output of an exchange or listen stream (every verb's output, in order): a
    head, then body pieces; JSON (one message) or SSE (notifications, then at most one final
    response, last). Returns the messages."""
    _require(len(events) >= 1 and isinstance(events[0], ResponseHead), "output starts with a head", events)
    pieces = list(events[1:])
    _require(all(isinstance(p, ResponseBody) for p in pieces), "one head, then body pieces", events)
    if final:
        _require(bool(pieces) and pieces[-1].more is False, "the response ends", events)
    _require(all(p.more for p in pieces[:-1]), "nothing after the end", events)
    head = events[0]
    headers = {k.lower(): v for k, v in head.headers}
    if headers.get(b"content-type") == b"text/event-stream":
        _require(head.status == 200, "SSE responses are 200", head)
        reader = SSEReader()
        frames = reader.feed(b"".join(p.data for p in pieces)) + reader.close()
        messages = [message_invariants(f.data) for f in frames]
        finals = [m for m in messages if "method" not in m]
        _require(len(finals) <= 1, "at most one final response", messages)
        if finals:
            _require(messages[-1] is finals[0], "notifications precede the final response", messages)
        return messages
    _require(len(pieces) == 1, "a JSON answer is one piece", events)
    message = reply_invariants(head, pieces[0])
    return [] if message is None else [message]


def line_invariants(data: object, *, app_codes: frozenset[int] = APP_CODES) -> list[dict[str, Any]]:
    """Stdio output (bytes, typed loosely so any StdioOutput can be passed): whole NDJSON
    lines, each a documented message."""
    _require(isinstance(data, bytes) and data.endswith(b"\n"), "stdio output is whole lines", data)
    assert isinstance(data, bytes)
    out = []
    for line in data.split(b"\n")[:-1]:
        message = message_invariants(line)
        code = _error_code(message)
        if code is not None:
            _require(code in STDIO_CODES or code in app_codes, "undocumented code on stdio", message)
        out.append(message)
    return out


def lines_invariants(outputs: Sequence[object]) -> list[dict[str, Any]]:
    return [m for data in outputs for m in line_invariants(data)]
