"""The rules on what a client sends, judged from the hostile server's records: every message
JSON-RPC (one a POST, or one a stdio line), the headers of each POST, request ids, the
initialize handshake and its session, answers to the server's own requests, and the retries of
multi round-trip requests. Each request is judged by the revision it speaks
(:attr:`~.hostile.Record.era`); each problem names its row of :data:`~.rules.CLIENT_RULES`.

    problems = traffic_problems(records, stdio=False, ended_at=outcome_end)

A server request the client got within :data:`ANSWER_GRACE` seconds of its end is not
counted as unanswered (it had no time to answer).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator, Sequence
from typing import Any, Final

from ..verdict import Problem
from .hostile import PV_KEY, Record, classify
from .rules import problem
from .scenarios import ERA, MODERN

__all__ = ["ANSWER_GRACE", "MRTR_METHODS", "lifecycle_problems", "mcp_records", "same_id", "traffic_problems"]

ANSWER_GRACE: Final = 1.0
CAPS_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
INFO_KEY: Final = "io.modelcontextprotocol/clientInfo"
MRTR_METHODS: Final = ("tools/call", "prompts/get", "resources/read")
_NAMED: Final = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def same_id(a: Any, b: Any) -> bool:
    """Two JSON-RPC ids are the same: equal values of the same JSON type."""
    return type(a) is type(b) and a == b


def mcp_records(records: Sequence[Record], *, stdio: bool) -> list[Record]:
    """The records of the MCP endpoint (an OAuth endpoint's are not MCP traffic)."""
    return [r for r in records if r.era and (stdio or r.target.split("?")[0] == "/mcp")]


def traffic_problems(records: Sequence[Record], *, stdio: bool, ended_at: float) -> list[Problem]:
    """Every problem with what the client sent."""
    mcp = mcp_records(records, stdio=stdio)
    problems: list[Problem] = []
    for record in mcp:
        problems += _message_problems(record, stdio=stdio)
        if not stdio:
            problems += _header_problems(record)
    for connection in _connections(mcp, stdio=stdio):
        problems += _id_problems(connection, stdio=stdio)
        problems += lifecycle_problems(connection, stdio=stdio)
        problems += _answer_problems(connection, ended_at=ended_at)
        problems += _round_problems(connection)
    return problems


def _connections(records: Sequence[Record], *, stdio: bool) -> list[list[Record]]:
    """The records by connection: over HTTP all of them (sessions are told apart by their
    headers); on stdio each server process the client started is a connection of its own, with
    its own handshake, ids and requests (a client may start one only to learn the server's
    revision, then another)."""
    if not stdio:
        return [list(records)]
    out: dict[int, list[Record]] = {}
    for record in records:
        out.setdefault(record.connection, []).append(record)
    return list(out.values())


# -- one message -------------------------------------------------------------------------------------
def _message_problems(record: Record, *, stdio: bool) -> list[Problem]:
    if record.method not in ("POST", "LINE"):
        return []
    era, where = record.era, f"request {record.index + 1}"
    message = record.message()
    if message is None or isinstance(message, list) or classify(message) == "invalid":
        what = "not JSON" if message is None else "a batch (a JSON array)" if isinstance(message, list) \
            else "not a JSON-RPC request, notification or response"
        if stdio:
            return [problem(f"line {record.index + 1} is {what}: {_head(record.body)}", "stdio-valid", era)]
        return [problem(f"the body of POST {record.index + 1} is {what}: {_head(record.body)}", "single-message", era)]
    out = []
    if message.get("jsonrpc") != "2.0":
        out.append(problem(f"{where} has jsonrpc {message.get('jsonrpc')!r}, not \"2.0\"", "jsonrpc", era))
    kind = classify(message)
    if kind == "request" and not _valid_id(message.get("id")):
        out.append(problem(f"{where} ({message.get('method')}) has id {message.get('id')!r}", "request-id", era))
    if kind == "response":
        if ("result" in message) == ("error" in message):
            out.append(problem(f"response {record.index + 1} has both or neither of result and error", "jsonrpc", era))
        if era == MODERN:
            rule = "stdio-no-responses" if stdio else "single-message"
            out.append(problem(f"a JSON-RPC response sent in 2026-07-28 (id {message.get('id')!r})", rule, era))
    if kind == "request" and era == MODERN:
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        meta = meta if isinstance(meta, dict) else {}
        missing = [k for k in (PV_KEY, CAPS_KEY) if k not in meta]
        if missing:
            out.append(problem(f"{message.get('method')} without {' and '.join(missing)} in _meta", "meta", era))
        if INFO_KEY not in meta:
            out.append(problem(f"{message.get('method')} without {INFO_KEY} in _meta", "client-info", era))
    return out


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _head(body: bytes, width: int = 80) -> str:
    text = body[:width].decode("utf-8", "replace")
    return repr(text) + ("..." if len(body) > width else "")


# -- the headers of a POST -----------------------------------------------------------------------------
def _media_types(value: str | None) -> set[str]:
    return {part.split(";")[0].strip().lower() for part in (value or "").split(",")}


def _header_problems(record: Record) -> list[Problem]:
    era = record.era
    if record.method == "GET":
        if era == ERA and "text/event-stream" not in _media_types(record.header("accept")):
            return [problem(f"GET {record.index + 1} with Accept {record.header('accept')!r}", "get-accept", ERA)]
        return []
    if record.method != "POST":
        return []
    out = []
    accept = _media_types(record.header("accept"))
    if not {"application/json", "text/event-stream"} <= accept:
        out.append(problem(f"POST {record.index + 1} with Accept {record.header('accept')!r}", "accept", era))
    message = record.message()
    if era != MODERN or classify(message) != "request":
        return out  # 2026-07-28 defines no header rules for a notification POST
    method = message["method"]
    version = record.header("mcp-protocol-version")
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    body_version = meta.get(PV_KEY) if isinstance(meta, dict) else None
    if version is None:
        out.append(problem(f"{method} without MCP-Protocol-Version", "version-header", era))
    elif body_version is not None and version.strip() != body_version:
        out.append(problem(f"{method}: MCP-Protocol-Version {version!r}, _meta says {body_version!r}", "version-match", era))
    sent_method = record.header("mcp-method")
    if sent_method is None or sent_method.strip() != method:
        out.append(problem(f"{method} with Mcp-Method {sent_method!r}", "request-headers", era))
    if method in _NAMED:
        named = params.get(_NAMED[method]) if isinstance(params, dict) else None
        sent_name = record.header("mcp-name")
        if sent_name is None or (isinstance(named, str) and _decoded(sent_name.strip()) != named):
            out.append(problem(f"{method} of {named!r} with Mcp-Name {sent_name!r}", "request-headers", era))
    return out


def _decoded(value: str) -> str | None:
    """A header value in the specification's Base64 sentinel form decoded (else as it is)."""
    if value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
    return value


# -- request ids -------------------------------------------------------------------------------------
def _requests(records: Sequence[Record]) -> Iterator[tuple[Record, dict[str, Any]]]:
    for record in records:
        message: Any = record.message() if record.method in ("POST", "LINE") else None
        if classify(message) == "request":
            yield record, message


def _id_problems(records: Sequence[Record], *, stdio: bool) -> list[Problem]:
    out: list[Problem] = []
    by_session: dict[str, list[Any]] = {}
    earlier: list[tuple[Record, Any]] = []
    for record, message in _requests(records):
        rpc_id = message.get("id")
        if record.era == ERA:
            session = "stdio" if stdio else record.session or record.header("mcp-session-id") or ""
            if session:
                seen = by_session.setdefault(session, [])
                if any(same_id(rpc_id, i) for i in seen):
                    out.append(problem(f"{message['method']} reuses id {rpc_id!r} in its session", "id-unique", ERA))
                seen.append(rpc_id)
        else:
            for other, other_id in earlier:
                open_then = other.ended in ("open", "hold", "") or other.ended_at > record.at
                if open_then and same_id(rpc_id, other_id):
                    out.append(problem(f"{message['method']} has id {rpc_id!r}, the id of a request still awaiting "
                                       "its answer", "id-in-flight", MODERN))
                    break
            earlier.append((record, rpc_id))
    return out


# -- the initialize handshake and its session -----------------------------------------------------------
def _initialized(record: Record, *, stdio: bool) -> dict[str, Any] | None:
    """The result of a successful initialize, if ``record`` is one that delivered it: a valid
    JSON-RPC response (``jsonrpc`` "2.0", a result and no error) with the request's id, whose
    result names a protocol version, and over HTTP with a 2xx status. Anything else is no
    initialization, and the rules that follow one (notifications/initialized, the session's
    headers) do not bind."""
    message = record.message()
    if not (isinstance(message, dict) and message.get("method") == "initialize" and record.readable()):
        return None
    if not stdio and not 200 <= record.status < 300:
        return None
    for sent in record.sent[:len(record.readable())]:
        if isinstance(sent, dict) and same_id(sent.get("id"), message.get("id")) and isinstance(sent.get("result"), dict):
            result: dict[str, Any] = sent["result"]
            valid = sent.get("jsonrpc") == "2.0" and "error" not in sent
            return result if valid and isinstance(result.get("protocolVersion"), str) else None
    return None


def lifecycle_problems(records: Sequence[Record], *, stdio: bool) -> list[Problem]:
    """The initialize handshake (first, then notifications/initialized; never cancelled), and on
    HTTP what every request of an open session carries (its id and the negotiated version) and
    what follows a 404 on it: a new initialize without a session id, if anything. A client that
    stops after a 404 on a session that itself replaced one lost to a 404 is not failed: it kept
    the rule once, and nothing asks it to start sessions for ever."""
    era_records = [r for r in records if r.era == ERA]
    if not era_records:
        return []
    out: list[Problem] = []
    first = era_records[0].message()
    if not (isinstance(first, dict) and first.get("method") == "initialize"):
        what = first.get("method", "a response") if isinstance(first, dict) else era_records[0].method
        out.append(problem(f"the first message of the session is {what!r}, not initialize", "initialize-first", ERA))
    session: str | None = None
    negotiated = ""
    opened_at = 0.0
    told = True
    later = False
    lost: Record | None = None
    renewing = replacement = lost_replacement = False  # a session started because the last one got 404
    for record in era_records:
        message = record.message()
        if lost is not None and record.method == "POST":
            if not (isinstance(message, dict) and message.get("method") == "initialize") or record.header("mcp-session-id"):
                out.append(problem(f"after a 404 on session {lost.header('mcp-session-id')!r}, the next POST is "
                                   f"{_what(record)} {'with' if record.header('mcp-session-id') else 'without'} a "
                                   "session id, not a new initialize without one", "session-404", ERA))
            else:
                renewing = True
            lost = None
        result = _initialized(record, stdio=stdio)
        if result is not None:
            if not told and later:
                out.append(problem("no notifications/initialized after the initialize result", "initialized", ERA))
            session, negotiated, opened_at, told, later = record.session or None, result["protocolVersion"], \
                record.ended_at, False, False
            replacement, renewing = renewing, False
            continue
        if isinstance(message, dict) and message.get("method") == "notifications/initialized":
            told = True
        elif record.at >= opened_at and (session is not None or stdio):
            later = True
        if not stdio and session is not None and record.at >= opened_at:
            out += _session_headers(record, session, negotiated)
        if not stdio and record.status == 404 and record.header("mcp-session-id"):
            lost, session, lost_replacement = record, None, replacement
    if lost is not None and not lost_replacement:
        out.append(problem(f"after a 404 on session {lost.header('mcp-session-id')!r} the client sent nothing more: no "
                           "new session", "session-404", ERA))
    if not told and later:
        out.append(problem("no notifications/initialized after the initialize result", "initialized", ERA))
    return out + _cancel_problems(era_records)


def _cancel_problems(records: Sequence[Record]) -> list[Problem]:
    """A notifications/cancelled whose requestId is that of an initialize: the latest request the
    client sent before it with that id (over HTTP a new session may use the id again)."""
    out: list[Problem] = []
    sent: list[tuple[Any, str]] = []
    for record in records:
        message: Any = record.message() if record.method in ("POST", "LINE") else None
        kind = classify(message)
        if kind == "request":
            sent.append((message["id"], message["method"]))
        elif kind == "notification" and message["method"] == "notifications/cancelled":
            params = message.get("params")
            named = params.get("requestId") if isinstance(params, dict) else None
            method = next((m for i, m in reversed(sent) if same_id(i, named)), None)
            if method == "initialize":
                out.append(problem(f"notifications/cancelled names the initialize request (id {named!r})",
                                   "initialize-cancel", ERA))
    return out


def _what(record: Record) -> str:
    message = record.message()
    return repr(message.get("method", "a response")) if isinstance(message, dict) else record.method


def _session_headers(record: Record, session: str, negotiated: str) -> list[Problem]:
    out = []
    sent = record.header("mcp-session-id")
    if sent != session:
        out.append(problem(f"{record.method} {_what(record)} with Mcp-Session-Id {sent!r}, the session is {session!r}",
                           "session-id", ERA))
    version = record.header("mcp-protocol-version")
    if version is None:
        out.append(problem(f"{record.method} {_what(record)} without MCP-Protocol-Version", "version-header", ERA))
    elif version.strip() != negotiated:
        out.append(problem(f"{record.method} {_what(record)} with MCP-Protocol-Version {version!r}, negotiated "
                           f"{negotiated!r}", "version-negotiated", ERA))
    return out


# -- answers to the server's own requests (2025-11-25) ---------------------------------------------------
def _answer_problems(records: Sequence[Record], *, ended_at: float) -> list[Problem]:
    asked: list[tuple[Record, dict[str, Any], float]] = []
    for record in records:
        if record.era != ERA:
            continue
        for message, at in zip(record.sent, record.readable(), strict=False):
            if classify(message) == "request" and _valid_id(message.get("id")):
                asked.append((record, message, at))
    responses = [(r, m) for r in records if r.method in ("POST", "LINE")
                 for m in [r.message()] if classify(m) == "response"]
    out: list[Problem] = []
    used: list[int] = []
    for _, message, at in asked:
        answer = next(((i, m) for i, (r, m) in enumerate(responses)
                       if i not in used and r.at >= at and same_id(m.get("id"), message["id"])), None)
        # A call that is not a valid Request object (JSON-RPC 2.0 section 4: "jsonrpc" MUST be
        # exactly "2.0"; MCP: params an object) is still answered, by JSON-RPC 2.0 section 5, but
        # with an error (5.1: -32600 Invalid Request): the MCP rules of its method do not apply to it.
        ping = message["method"] == "ping" and _valid_request(message)
        if answer is None:
            if ended_at - at >= ANSWER_GRACE:
                rule = "ping" if ping else "jsonrpc.reply"
                out.append(problem(f"no response to the server's {message['method']} (id {message['id']!r})", rule,
                                   ERA if rule == "ping" else None))
            continue
        used.append(answer[0])
        if ping and answer[1].get("result") != {}:
            out.append(problem(f"the answer to ping (id {message['id']!r}) is {_short(answer[1])}, not an empty "
                               "result", "ping", ERA))
    known = [m["id"] for r in records if r.era == ERA for m in r.sent[:len(r.readable())]
             if isinstance(m, dict) and "method" in m and "id" in m]  # an invalid id echoed is no mismatch
    # JSON-RPC 2.0 section 5: a message that is not a valid Request object (no "method", ...) is
    # answered with an error (5.1: -32600 Invalid Request) whose id is the message's, when it
    # could be read; such a message is neither a request nor a response of the server's.
    refused = [(m["id"], at) for r in records if r.era == ERA for m, at in zip(r.sent, r.readable(), strict=False)
               if _refusable(m)]
    for index, (record, message) in enumerate(responses):
        # JSON-RPC 2.0 section 5, id: "If there was an error in detecting the id in the Request
        # object (e.g. Parse error/Invalid Request), it MUST be Null." An error with id null is
        # such an answer (to a message that was no request with an id), not a stray response.
        error = isinstance(message.get("error"), dict)
        unattributed = message.get("id") is None and error
        answers_refused = error and any(same_id(message.get("id"), i) and record.at >= at for i, at in refused)
        if index not in used and record.era == ERA and not unattributed and not answers_refused \
                and not any(same_id(message.get("id"), k) for k in known):
            out.append(problem(f"a response with id {message.get('id')!r}, which no request of the server's had",
                               "jsonrpc.response-id"))
    return out


def _refusable(message: Any) -> bool:
    """A message with an id that is no request (it has no method) nor a valid response
    (JSON-RPC 2.0 section 5: "jsonrpc" exactly "2.0", and either result or error): a client may
    answer it with an Invalid Request error carrying its id."""
    if not isinstance(message, dict) or "id" not in message or "method" in message:
        return False
    return message.get("jsonrpc") != "2.0" or ("result" in message) == ("error" in message)


def _valid_request(message: dict[str, Any]) -> bool:
    """A request whose envelope JSON-RPC 2.0 and MCP accept: ``jsonrpc`` "2.0" and ``params``, if
    present, an object (its id is checked by the caller)."""
    return message.get("jsonrpc") == "2.0" and isinstance(message.get("params", {}), dict)


def _short(value: Any, width: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= width else text[:width - 3] + "..."


# -- multi round-trip requests (2026-07-28) -------------------------------------------------------------
def _round_problems(records: Sequence[Record]) -> list[Problem]:
    out: list[Problem] = []
    calls = [(r, m) for r, m in _requests(records) if r.era == MODERN and m["method"] in MRTR_METHODS]
    issued: set[str] = set()
    for index, (record, message) in enumerate(calls):
        params = _params(message)
        result = _input_required(record, message)
        if result is None:
            continue
        if isinstance(result.get("requestState"), str):
            issued.add(result["requestState"])
        key = (message["method"], params.get(_NAMED[message["method"]]))
        retry = next(((r, m) for r, m in calls[index + 1:] if r.at >= record.at and (m["method"], _params(m).get(
            _NAMED[m["method"]])) == key), None)
        if retry is None:
            continue
        retry_params = _params(retry[1])
        if "requestState" not in retry_params and "inputResponses" not in retry_params:
            continue  # a new call of the same tool, not a retry
        if same_id(retry[1].get("id"), message.get("id")):
            out.append(problem(f"the retry of {key[0]} {key[1]!r} has the id of the request it retries "
                               f"({message.get('id')!r})", "retry-id", MODERN))
        sent_state = result.get("requestState")
        if isinstance(sent_state, str) and retry_params.get("requestState") != sent_state:
            out.append(problem(f"the retry of {key[0]} {key[1]!r} carries requestState "
                               f"{_short(retry_params.get('requestState'), 60)}, not the {_short(sent_state, 60)} sent",
                               "request-state", MODERN))
        if "requestState" not in result and "requestState" in retry_params:
            out.append(problem(f"the retry of {key[0]} {key[1]!r} carries a requestState none was sent",
                               "no-request-state", MODERN))
        asked = result.get("inputRequests")
        answers = retry_params.get("inputResponses")
        if isinstance(asked, dict) and asked and not (isinstance(answers, dict) and set(asked) & set(answers)):
            out.append(problem(f"the retry of {key[0]} {key[1]!r} answers none of the inputRequests "
                               f"{sorted(asked)[:5]}", "inputs", MODERN))
    for record, message in calls:
        state = _params(message).get("requestState")
        if isinstance(state, str) and state in issued and not _retries_own(calls, record, state):
            out.append(problem(f"{message['method']} {_params(message).get(_NAMED[message['method']])!r} carries "
                               f"requestState {_short(state, 60)}, issued for another request", "state-elsewhere",
                               MODERN))
    return out


def _params(message: dict[str, Any]) -> dict[str, Any]:
    params = message.get("params")
    return params if isinstance(params, dict) else {}


def _retries_own(calls: Sequence[tuple[Record, dict[str, Any]]], record: Record, state: str) -> bool:
    """Whether ``record`` carries ``state`` back to the method and name it was issued for."""
    message = next(m for r, m in calls if r is record)
    key = (message["method"], _params(message).get(_NAMED[message["method"]]))
    for other, other_message in calls:
        result = _input_required(other, other_message)
        if result is not None and result.get("requestState") == state:
            return (other_message["method"], _params(other_message).get(_NAMED[other_message["method"]])) == key
    return True


def _input_required(record: Record, message: dict[str, Any]) -> dict[str, Any] | None:
    """The input_required result delivered to ``record``'s request (well-formed: an object whose
    requestState, if any, is a string and inputRequests, if any, an object), or None."""
    for sent in record.sent[:len(record.readable())]:
        if isinstance(sent, dict) and same_id(sent.get("id"), message.get("id")):
            result = sent.get("result")
            if isinstance(result, dict) and result.get("resultType") == "input_required" \
                    and isinstance(result.get("requestState", ""), str) and isinstance(result.get("inputRequests", {}), dict):
                return result
    return None
