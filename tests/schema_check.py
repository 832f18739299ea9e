"""Shared helpers of the server-engine tests: schema checks of everything the engine emits,
and byte-level drivers that apply them.

Every JSON-RPC message a test reads back from the engine goes through :func:`check_message`,
which validates it against the official schema (``schema-2026-07-28.json``, Draft 2020-12):
the generic envelope ($defs JSONRPCResultResponse / JSONRPCErrorResponse / JSONRPCNotification)
and the specific definition for the method, error code or notification.

One documented deviation is accepted: an error answering a message that could not be
attributed to a request carries ``"id": null`` (JSON-RPC 2.0 section 5), which the schema's
RequestId type does not allow. Exactly that case (an error response whose id is null) is
validated with the id member removed, which the schema's JSONRPCErrorResponse permits.

HTTP replies are checked too (:func:`check_http`): the status is one the wire reference
documents; every non-2xx answer is ``application/json`` with a JSON-RPC error whose code maps to
that status (section 12); 202 has an empty body; an SSE body is a sequence of valid messages
whose last one is the final response.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import msgspec
from jsonschema import Draft202012Validator

import mcpwire
from mcpwire.wire.headers import NAMED_METHODS, encode_param_value
from mcpwire import HttpExchange, HttpListenStream, HttpRequest, ResponseBody, ResponseHead
from mcpwire.framing import SSEReader


# As tests/wire/test_types_schema.py: the vendored copy (tests/data/schemas/provenance.json), only.
SCHEMA_PATH = Path(__file__).resolve().parent / "data" / "schemas" / "schema-2026-07-28.json"
SCHEMA: dict[str, Any] = json.loads(SCHEMA_PATH.read_text())
# The tasks extension's own schema (ext-tasks repository), for the messages it adds.
TASKS_SCHEMA: dict[str, Any] = json.loads((SCHEMA_PATH.parent / "ext-tasks-draft.json").read_text())
TASK_RESULT_DEFS = {"tasks/get": "GetTaskResult", "tasks/update": "UpdateTaskResult", "tasks/cancel": "CancelTaskResult"}
VERSION = "2026-07-28"
NOW = 1_800_000_000.0
SECRET = b"k" * 32
SERVER_INFO_META_KEY = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID_META_KEY = "io.modelcontextprotocol/subscriptionId"

# Section 12 and 13: every status the engine may answer with, and the codes behind each.
ADMISSION_STATUSES = {403, 404, 405, 406, 413, 415}  # transport refusals, all -32600 bodies
DOCUMENTED_STATUSES = {200, 202, 400, 500, 503} | ADMISSION_STATUSES
STATUS_OF_CODE = {-32700: 400, -32600: 400, -32602: 400, -32020: 400, -32021: 400, -32022: 400,
                  -32601: 404, -32603: 500}

RESULT_DEFS = {
    "server/discover": "DiscoverResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "completion/complete": "CompleteResult",
    "subscriptions/listen": "SubscriptionsListenResult",
}
CACHEABLE = {"server/discover", "tools/list", "resources/list", "resources/templates/list",
             "prompts/list", "resources/read"}
ERROR_DEFS = {  # code -> (definition, whether it describes the whole response or the error object)
    -32700: ("ParseError", False),
    -32600: ("InvalidRequestError", False),
    -32601: ("MethodNotFoundError", False),
    -32602: ("InvalidParamsError", False),
    -32603: ("InternalError", False),
    -32020: ("HeaderMismatchError", True),
    -32021: ("MissingRequiredClientCapabilityError", True),
    -32022: ("UnsupportedProtocolVersionError", True),
}
NOTIFICATION_DEFS = {
    "notifications/progress": "ProgressNotification",
    "notifications/message": "LoggingMessageNotification",
    "notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
    "notifications/tools/list_changed": "ToolListChangedNotification",
    "notifications/prompts/list_changed": "PromptListChangedNotification",
    "notifications/resources/list_changed": "ResourceListChangedNotification",
    "notifications/resources/updated": "ResourceUpdatedNotification",
}


# --- schema validation -------------------------------------------------------------------------


@cache
def _validator(definition: str, tasks: bool = False) -> Draft202012Validator:
    schema = TASKS_SCHEMA if tasks else SCHEMA
    assert definition in schema["$defs"], definition
    root = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"}
    return Draft202012Validator(root)


def validate(instance: Any, definition: str, *, tasks: bool = False) -> None:
    """Assert ``instance`` is valid against ``$defs[definition]`` (of the tasks extension's
    schema with ``tasks``)."""
    errors = sorted(_validator(definition, tasks).iter_errors(instance), key=lambda e: list(e.absolute_path))
    if errors:
        details = "; ".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])
        raise AssertionError(f"not a valid {definition}: {details}\n{json.dumps(instance)[:2000]}")


def check_message(message: Mapping[str, Any], method: str | None = None) -> Mapping[str, Any]:
    """Validate one message the engine emitted. ``method`` is the request's method, which
    selects the result definition. Returns ``message``."""
    assert message.get("jsonrpc") == "2.0", message
    if "error" in message:
        assert "result" not in message and "method" not in message, message
        assert "id" in message, "an error response always carries id (null when unattributable)"
        instance = dict(message)
        if instance["id"] is None:  # the one documented deviation (JSON-RPC 2.0 id null)
            del instance["id"]
        validate(instance, "JSONRPCErrorResponse")
        code = message["error"]["code"]
        if code in ERROR_DEFS:
            definition, whole = ERROR_DEFS[code]
            validate(instance if whole else instance["error"], definition)
        return message
    if "result" in message:
        validate(message, "JSONRPCResultResponse")
        result = message["result"]
        assert "resultType" in result, "every result has resultType (section 3)"
        meta = result.get("_meta", {})
        assert SERVER_INFO_META_KEY in meta, "every result carries _meta serverInfo (section 3)"
        validate(meta[SERVER_INFO_META_KEY], "Implementation")
        if result["resultType"] == "task":
            assert method == "tools/call", method
            validate(result, "CreateTaskResult", tasks=True)
            assert "requestState" not in result and "result" not in result and "inputRequests" not in result
        elif method in TASK_RESULT_DEFS:
            assert result["resultType"] == "complete", result
            validate(result, TASK_RESULT_DEFS[method], tasks=True)
            if method != "tasks/get":
                assert set(result) <= {"resultType", "_meta"}, result  # an empty acknowledgement
        elif result["resultType"] == "input_required":
            assert method in ("tools/call", "resources/read", "prompts/get"), method
            validate(result, "InputRequiredResult")
            assert "inputRequests" in result or "requestState" in result
        elif method is not None:
            validate(result, RESULT_DEFS[method])
            if method in CACHEABLE:
                assert type(result["ttlMs"]) is int and result["ttlMs"] >= 0
                assert result["cacheScope"] in ("public", "private")
            else:
                assert "ttlMs" not in result and "cacheScope" not in result, result
        return message
    assert "id" not in message, "the server never sends requests (section 1)"
    validate(message, "JSONRPCNotification")
    if message["method"] == "notifications/tasks":
        validate(message, "TaskStatusNotification", tasks=True)
        return message
    notification_def = NOTIFICATION_DEFS.get(message["method"])
    assert notification_def is not None, f"unexpected notification {message['method']}"
    validate(message, notification_def)
    return message


def check_error(message: Mapping[str, Any], code: int, request_id: Any, *, data: Any = ...,
                message_text: str | None = None) -> Mapping[str, Any]:
    """Assert ``message`` is a schema-valid error with ``code`` and ``request_id`` (and the
    given ``data`` / message when passed). Returns the error object."""
    check_message(message)
    assert "error" in message, message
    error: Mapping[str, Any] = message["error"]
    assert error["code"] == code, message
    assert message["id"] == request_id and type(message["id"]) is type(request_id), message
    if data is not ...:
        assert error.get("data", ...) == data, message
    if message_text is not None:
        assert error["message"] == message_text, message
    return error


# --- building requests ---------------------------------------------------------------------------


def meta(**extra: Any) -> dict[str, Any]:
    """A valid request ``_meta`` (protocol version and empty capabilities) plus ``extra``."""
    out: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    for key, value in extra.items():
        out[_META_ALIASES.get(key, key)] = value
    return out


_META_ALIASES = {
    "version": "io.modelcontextprotocol/protocolVersion",
    "caps": "io.modelcontextprotocol/clientCapabilities",
    "info": "io.modelcontextprotocol/clientInfo",
    "level": "io.modelcontextprotocol/logLevel",
    "token": "progressToken",
}


def request(method: str, params: Any = None, id: Any = 1, *, with_meta: bool = True) -> dict[str, Any]:
    """A request object; ``params`` gets a valid ``_meta`` unless it has one or ``with_meta`` is off."""
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is None:
        params = {}
    if isinstance(params, dict) and with_meta and "_meta" not in params:
        params = {**params, "_meta": meta()}
    msg["params"] = params
    return msg


def encode(obj: Any) -> bytes:
    return obj if isinstance(obj, bytes) else json.dumps(obj).encode()


def mcp_headers(body: Any) -> list[tuple[bytes, bytes]]:
    """The MCP headers a correct client sends for ``body`` (a request dict)."""
    out = [(b"MCP-Protocol-Version", VERSION.encode())]
    if not isinstance(body, dict) or not isinstance(body.get("method"), str):
        return out
    method = body["method"]
    out.append((b"Mcp-Method", method.encode("utf-8", "surrogatepass")))
    params = body.get("params")
    if isinstance(params, dict):
        field = NAMED_METHODS.get(method)
        if field is not None and isinstance(params.get(field), str):
            out.append((b"Mcp-Name", encode_param_value(params[field])))
        pmeta = params.get("_meta")
        if isinstance(pmeta, dict) and isinstance(pmeta.get("io.modelcontextprotocol/protocolVersion"), str):
            out[0] = (b"MCP-Protocol-Version", pmeta["io.modelcontextprotocol/protocolVersion"].encode())
    return out


BASE_HEADERS = [(b"Content-Type", b"application/json"), (b"Accept", b"application/json, text/event-stream")]


def http_request(body: Any, *, headers: Sequence[tuple[bytes, bytes]] | None = None,
                 extra: Sequence[tuple[bytes, bytes]] = (), drop: Iterable[bytes] = (),
                 method: str = "POST", target: str = "/mcp") -> HttpRequest:
    """An HttpRequest for ``body``. Without ``headers``, the headers a correct client sends,
    minus the names in ``drop`` (any case), plus ``extra``."""
    if headers is None:
        dropped = {d.lower() for d in drop}
        headers = [h for h in BASE_HEADERS + mcp_headers(body) if h[0].lower() not in dropped]
        headers = list(headers) + list(extra)
    return HttpRequest(method=method, target=target, headers=list(headers), body=encode(body))


# --- reading replies ------------------------------------------------------------------------------


class Reply(msgspec.Struct, kw_only=True):
    """A complete HTTP answer, decoded: status, headers (lowercase names), raw body, and the
    JSON-RPC messages in it (one for JSON, every event for SSE)."""

    status: int
    headers: dict[bytes, bytes]
    body: bytes
    messages: list[Any]
    sse: bool

    @property
    def message(self) -> Any:
        """The final message (the response)."""
        assert self.messages, "no message in the body"
        return self.messages[-1]

    @property
    def result(self) -> Any:
        assert "result" in self.message, self.message
        return self.message["result"]

    @property
    def error(self) -> Any:
        assert "error" in self.message, self.message
        return self.message["error"]


def parse_sse(data: bytes) -> list[Any]:
    reader = SSEReader()
    events = reader.feed(data) + reader.close()
    return [json.loads(e.data) for e in events]


def assemble(events: Sequence[Any], method: str | None = None, *, final: bool = True) -> Reply:
    """Join output events (ResponseHead first, then ResponseBody pieces) into a Reply, checking
    the event sequence and every message. ``final``: the last piece must end the response."""
    assert events and isinstance(events[0], ResponseHead), events
    head = events[0]
    pieces = list(events[1:])
    assert all(isinstance(p, ResponseBody) for p in pieces), events
    assert not any(isinstance(p, ResponseHead) for p in pieces)
    if final:
        assert pieces and pieces[-1].more is False, "the response must end"
        assert all(p.more for p in pieces[:-1]), "nothing after the end"
    body = b"".join(p.data for p in pieces)
    return check_http(head.status, head.headers, body, method)


def check_http(status: int, raw_headers: Sequence[tuple[bytes, bytes]], body: bytes,
               method: str | None = None) -> Reply:
    """Check one HTTP answer against sections 12-13 and the schema; return it decoded."""
    assert status in DOCUMENTED_STATUSES, status
    headers: dict[bytes, bytes] = {}
    for name, value in raw_headers:
        assert name.lower() not in headers, f"repeated response header {name!r}"
        headers[name.lower()] = value
    ctype: bytes | None = headers.get(b"content-type")
    if status == 202:
        assert body == b"" and ctype is None, (status, body)
        assert headers.get(b"content-length") == b"0"
        return Reply(status=status, headers=headers, body=body, messages=[], sse=False)
    if ctype == b"text/event-stream":
        assert status == 200, "an SSE response is always 200"
        assert headers.get(b"cache-control") == b"no-cache"
        messages = parse_sse(body)
        for m in messages:
            check_message(m, method)
        finals = [m for m in messages if "method" not in m]
        assert len(finals) <= 1, "at most one response per stream"
        if finals:
            assert messages[-1] is finals[0], "notifications precede the final response (8.2)"
        return Reply(status=status, headers=headers, body=body, messages=messages, sse=True)
    assert ctype == b"application/json", (status, headers)
    assert headers.get(b"content-length") == str(len(body)).encode()
    message = json.loads(body)
    check_message(message, method)
    if status != 200:
        assert "error" in message, "every non-2xx answer carries a JSON-RPC error"
        code = message["error"]["code"]
        if status in ADMISSION_STATUSES and code == -32600:
            assert message["id"] is None, "transport refusals are unattributable"
        elif status == 503:
            assert code == -32603, message  # too many listen streams (section 11)
        else:
            assert STATUS_OF_CODE.get(code) == status, (status, message)
    elif "error" in message:
        # Codes outside the section 12 table are application errors, sent with 200.
        assert message["error"]["code"] not in STATUS_OF_CODE, message
    if status == 405:
        assert headers.get(b"allow") == b"POST"
    return Reply(status=status, headers=headers, body=body, messages=[message], sse=False)


def reply_of(answer: Any, method: str | None = None) -> Reply:
    """Check a complete HttpReply (head, body) and decode it."""
    assert isinstance(answer, tuple) and len(answer) == 2, f"expected a complete reply, got {answer!r}"
    head, body = answer
    assert isinstance(head, ResponseHead) and isinstance(body, ResponseBody) and body.more is False
    return check_http(head.status, head.headers, body.data, method)


def post(server: mcpwire.Server, body: Any, *, now: float = NOW, **kw: Any) -> Any:
    """Feed one request to ``server.receive_http``: the raw answer (reply, exchange or stream)."""
    return server.receive_http(http_request(body, **kw), now=now)


def call(server: mcpwire.Server, body: Any, *, now: float = NOW, **kw: Any) -> Reply:
    """Post ``body`` and expect a complete reply; checked and decoded."""
    method = body.get("method") if isinstance(body, dict) else None
    return reply_of(post(server, body, now=now, **kw), method if isinstance(method, str) else None)


def exchange(server: mcpwire.Server, body: Any, *, now: float = NOW, **kw: Any) -> HttpExchange:
    """Post ``body`` and expect an exchange for the host."""
    answer = post(server, body, now=now, **kw)
    assert isinstance(answer, HttpExchange), f"expected an exchange, got {_describe(answer)}"
    return answer


def listen(server: mcpwire.Server, body: Any, *, now: float = NOW, **kw: Any) -> HttpListenStream:
    answer = post(server, body, now=now, **kw)
    assert isinstance(answer, HttpListenStream), f"expected a listen stream, got {_describe(answer)}"
    return answer


def _describe(answer: Any) -> str:
    if isinstance(answer, tuple):
        return f"{answer[0].status} {answer[1].data!r}"
    return repr(answer)


def error_of(reply: Reply, code: int, request_id: Any, *, status: int | None = None, **kw: Any) -> Any:
    """Assert ``reply`` is the error ``code`` for ``request_id`` with its section 12 status."""
    expected_status = status if status is not None else STATUS_OF_CODE[code]
    assert reply.status == expected_status, (reply.status, reply.body)
    return check_error(reply.message, code, request_id, **kw)


def ev(ex: mcpwire.Exchange[Any]) -> Any:
    """The event an exchange carries, untyped, for terse assertions on its members."""
    return ex.event


def make_server(**kw: Any) -> mcpwire.Server:
    """A server with the test secret; keyword arguments go to ``Server``."""
    info = kw.pop("info", mcpwire.types.Implementation(name="test-server", version="1.0.0"))
    kw.setdefault("keyring", mcpwire.Keyring.single(SECRET))
    return mcpwire.Server(info, **kw)


def lines_of(data: object, method: str | None = None) -> list[Any]:
    """Split NDJSON output (bytes) into checked messages."""
    assert isinstance(data, bytes), data
    assert data.endswith(b"\n") or data == b"", data
    out = [json.loads(line) for line in data.split(b"\n")[:-1]]
    for m in out:
        check_message(m, method)
    return out
