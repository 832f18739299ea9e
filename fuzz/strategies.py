"""Hypothesis strategies for MCP 2026-07-28 traffic, valid first, then mutated.

Built from the wire types and the official schema (``schema-2026-07-28.json``): the request
methods are the schema's ``ClientRequest`` members, log levels its ``LoggingLevel`` enum, the
keys a mutation drops first each params definition's ``required`` list, and tool arguments
follow the fuzz server's declared input schemas (``fuzz.targets``), so that valid requests get
past admission into exchanges, MRTR rounds (with genuine ``requestState`` tokens issued for
exactly those params) and paginated lists (with genuine cursors).

Only the public API is used (tests/integration/test_import_hygiene.py), and no rule the core owns is
restated here: tokens and cursors are issued by the fuzz server itself (its answer to the first
round, or to a list request), the ``Mcp-Method``/``Mcp-Name``/``Mcp-Param-*`` headers are those
the fuzz client computes (after learning the tools' annotations from the server's tools/list),
and ``_meta`` keys follow :data:`mcpwire.types.META_KEY_PATTERN`.

Then mutations, so invalid traffic reaches deep paths too: on the JSON tree (drop, duplicate,
retype, replace keys; raw literals such as ``1e400`` or lone surrogates), on the bytes
(truncate, extend, splice, BOM, bad UTF-8), and on the headers (drop, repeat, change case,
wrong values). Every generated HTTP request is labelled with how it was made.
"""

from __future__ import annotations

import json
from functools import cache, lru_cache
from pathlib import Path
from typing import Any, Final

from hypothesis import strategies as st

import mcpwire
from mcpwire import HttpRequest, LocalProtocolError
from mcpwire.types import META_KEY_PATTERN

from .jsontext import RAW_LITERALS, Dup, RawJSON, dumps
from .targets import CATALOG, NOW, Catalog, make_client, make_server

__all__ = [
    "SCHEMA", "REQUEST_METHODS", "LOG_LEVELS", "REQUIRED_PARAMS", "PAGINATED_METHODS", "MRTR_METHODS",
    "json_values", "request_ids", "request_meta", "client_capabilities", "params_for", "valid_requests",
    "headers_for", "mutated_json", "mutated_bytes", "mutated_headers", "http_traffic", "stdio_messages",
    "stdio_streams", "host_plans", "server_messages", "sse_bodies", "cut_points", "body_bytes", "real_cursors", "unanswered_notifications",
    "unanswered_responses", "unanswered_headers",
]


# The official schema as vendored in the repository (tests/data/schemas/provenance.json).
_SCHEMA_PATH: Final = Path(__file__).resolve().parents[1] / "tests" / "data" / "schemas" / "schema-2026-07-28.json"
SCHEMA: Final[dict[str, Any]] = json.loads(_SCHEMA_PATH.read_text())
_DEFS: Final = SCHEMA["$defs"]


def _method_of(definition: str) -> str:
    return str(_DEFS[definition]["properties"]["method"]["const"])


def _params_def(definition: str) -> dict[str, Any]:
    ref = _DEFS[definition]["properties"].get("params", {}).get("$ref", "")
    found: dict[str, Any] = _DEFS.get(ref.rsplit("/", 1)[-1], {})
    return found


_REQUEST_DEFS: Final = [ref["$ref"].rsplit("/", 1)[-1] for ref in _DEFS["ClientRequest"]["anyOf"]]
REQUEST_METHODS: Final[tuple[str, ...]] = tuple(_method_of(d) for d in _REQUEST_DEFS)
REQUIRED_PARAMS: Final[dict[str, tuple[str, ...]]] = {
    _method_of(d): tuple(_params_def(d).get("required", ())) for d in _REQUEST_DEFS
}
LOG_LEVELS: Final[tuple[str, ...]] = tuple(_DEFS["LoggingLevel"]["enum"])
# The paginated lists (params with a cursor) and the methods with MRTR rounds (params with a
# requestState), as the schema says.
PAGINATED_METHODS: Final[tuple[str, ...]] = tuple(
    _method_of(d) for d in _REQUEST_DEFS if "cursor" in _params_def(d).get("properties", {}))
MRTR_METHODS: Final[tuple[str, ...]] = tuple(
    _method_of(d) for d in _REQUEST_DEFS if "requestState" in _params_def(d).get("properties", {}))
VERSION: Final = mcpwire.PROTOCOL_VERSION
INT64: Final = st.integers(-(2**63), 2**63 - 1)

# --- JSON values ------------------------------------------------------------------------------------

json_scalars = st.none() | st.booleans() | INT64 | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12)


def json_values(max_leaves: int = 8) -> st.SearchStrategy[Any]:
    return st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=3)
                        | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=max_leaves)


json_objects = st.dictionaries(st.text(max_size=6), json_values(6), max_size=4)
# A string id is at most 256 UTF-8 bytes: 64 characters are at most 256 bytes.
request_ids = INT64 | st.text(max_size=64)
meta_keys = st.from_regex(META_KEY_PATTERN, fullmatch=True).filter(
    lambda k: len(k) < 60 and not k.startswith(("io.modelcontextprotocol/", "progressToken")))

# --- _meta ------------------------------------------------------------------------------------------

implementations = st.fixed_dictionaries(
    {"name": st.text(max_size=10), "version": st.text(max_size=6)},
    optional={"title": st.text(max_size=10), "description": st.text(max_size=10),
              "websiteUrl": st.just("https://example.com/x"),
              "icons": st.just([{"src": "https://example.com/i.png", "mimeType": "image/png", "sizes": ["48x48"]}])},
)
client_capabilities: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries({}, optional={
    "roots": st.just({}) | st.just({"listChanged": True}),
    "sampling": st.fixed_dictionaries({}, optional={"context": st.just({}), "tools": st.just({})}),
    "elicitation": st.sampled_from([{}, {"form": {}}, {"url": {}}, {"form": {}, "url": {}}]),
    "experimental": st.dictionaries(st.text(max_size=5), st.just({}), max_size=2),
    "extensions": st.dictionaries(st.sampled_from(["com.example/x", "io.modelcontextprotocol/tasks"]), st.just({}),
                                  max_size=2),
})


@st.composite
def request_meta(draw: st.DrawFn, caps: dict[str, Any] | None = None) -> dict[str, Any]:
    """A valid request ``_meta`` (schema $defs.RequestMetaObject): the required keys and a few
    optional ones."""
    meta: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": draw(client_capabilities) if caps is None else caps,
    }
    if draw(st.booleans()):
        meta["io.modelcontextprotocol/clientInfo"] = draw(implementations)
    if draw(st.booleans()):
        meta["io.modelcontextprotocol/logLevel"] = draw(st.sampled_from(LOG_LEVELS))
    if draw(st.booleans()):
        meta["progressToken"] = draw(request_ids)
    for key in draw(st.lists(meta_keys, max_size=2)):
        meta[key] = draw(json_values(4))
    return meta


# --- params of each method --------------------------------------------------------------------------

_INPUT_RESPONSES: Final = st.dictionaries(
    st.sampled_from(["name", "sample", "roots", "extra"]),
    st.sampled_from([
        {"action": "accept", "content": {"name": "Alice"}},
        {"action": "decline"},
        {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m", "stopReason": "endTurn"},
        {"roots": [{"uri": "file:///tmp", "name": "tmp"}]},
    ]),
    max_size=3,
)
absolute_uris = st.from_regex(r"[a-z][a-z0-9+.-]{0,6}:[!-~]{0,20}", fullmatch=True)


def _arguments(name: str) -> st.SearchStrategy[dict[str, Any]]:
    if name == "add":
        number = INT64 | st.floats(allow_nan=False, allow_infinity=False)
        return st.fixed_dictionaries({"a": number, "b": number})
    if name == "typed":
        return st.fixed_dictionaries({"a": INT64}, optional={"b": st.text(max_size=8)})
    if name == "region":
        return st.fixed_dictionaries({}, optional={
            "region": st.text(max_size=12), "n": INT64, "flag": st.booleans()})
    if name == "structured":
        return st.fixed_dictionaries({}, optional={"answer": INT64})
    return json_objects


@st.composite
def params_for(draw: st.DrawFn, method: str, catalog: Catalog = CATALOG, *, mrtr: bool = True,
               retry: bool = False) -> dict[str, Any]:
    """Valid params (with ``_meta``) for ``method`` against the fuzz server's catalog.

    For the methods with MRTR rounds, ``mrtr`` makes some of them a retry (``inputResponses``,
    half of the time a ``requestState`` too); ``retry`` makes every one a retry with both."""
    params: dict[str, Any] = {}
    if method in PAGINATED_METHODS:
        cursors = real_cursors().get(method, [])
        use_cursor = draw(st.booleans())
        if cursors and use_cursor:
            params["cursor"] = draw(st.sampled_from(cursors))
    elif method == "tools/call":
        name = draw(st.sampled_from(sorted(catalog.tools) + [catalog.typed_tool]))
        params["name"] = name
        if name == catalog.typed_tool or draw(st.booleans()):
            params["arguments"] = draw(_arguments(name))
    elif method == "resources/read":
        template = st.from_regex(r"[A-Za-z0-9]{1,8}", fullmatch=True).map(lambda v: f"test://template/{v}/data")
        params["uri"] = draw(st.sampled_from(catalog.resources) | template | absolute_uris)
    elif method == "prompts/get":
        name = draw(st.sampled_from(sorted(catalog.prompts)))
        params["name"] = name
        required = {a: draw(st.text(max_size=6)) for a in catalog.prompts[name]}
        extra = draw(st.dictionaries(st.text(max_size=4), st.text(max_size=4), max_size=2))
        send_empty = draw(st.booleans())  # an empty map, or none at all
        if required or extra or send_empty:
            params["arguments"] = {**extra, **required}
    elif method == "completion/complete":
        if draw(st.booleans()):
            params["ref"] = {"type": "ref/prompt", "name": draw(st.sampled_from(sorted(catalog.prompts)))}
        else:
            params["ref"] = {"type": "ref/resource", "uri": catalog.template}
        params["argument"] = {"name": draw(st.text(max_size=5)), "value": draw(st.text(max_size=5))}
        if draw(st.booleans()):
            params["context"] = {"arguments": draw(st.dictionaries(st.text(max_size=4), st.text(max_size=4), max_size=2))}
    elif method == "subscriptions/listen":
        params["notifications"] = draw(st.fixed_dictionaries({}, optional={
            "toolsListChanged": st.booleans(), "promptsListChanged": st.booleans(),
            "resourcesListChanged": st.booleans(),
            "resourceSubscriptions": st.lists(st.sampled_from(catalog.resources) | absolute_uris, max_size=3),
        }))
    meta = draw(request_meta())
    if method in MRTR_METHODS and (retry or mrtr and draw(st.integers(0, 3)) == 0):
        # An MRTR retry: answers, and a requestState the fuzz server issued for exactly these
        # params, up to 200 s before NOW (so still valid at NOW).
        answers = draw(_INPUT_RESPONSES)
        if retry or draw(st.booleans()):
            state = json.dumps(draw(json_values(4).filter(lambda v: v is not None)))  # None seals no state
            issued = NOW - draw(st.integers(0, 200))
            params["requestState"] = issued_request_state(method, json.dumps({**params, "_meta": meta}), state, issued)
        params["inputResponses"] = answers
    params["_meta"] = meta
    return params


@cache
def fuzz_server() -> mcpwire.Server:
    """One fuzz server (``targets.make_server``: the catalog, the fixed keyring) for listing
    tools and lists. Nothing it does here leaves state behind: every request stands alone."""
    return make_server()


@cache
def _issuer() -> mcpwire.Server:
    """The fuzz server (same catalog, same keyring) without argument validation, so that it
    admits the first round of every call the strategies make, including the valid requests
    whose arguments break a tool's schema (``add`` without arguments): their retries then carry
    a genuine state too, verified before the arguments are checked (a tool execution error)."""
    return make_server(validator=mcpwire.UNCHECKED)


@lru_cache(maxsize=4096)
def issued_request_state(method: str, first_params: str, state: str, issued: float) -> str:
    """The ``requestState`` the fuzz server's keyring issues when the host answers the first
    round of ``method`` with ``first_params`` (JSON text, without ``inputResponses`` and
    ``requestState``) by ``input_required(state=<state, JSON text>)`` at time ``issued``.

    The server binds the token to the scope it verifies on the retry, so a retry with the same
    params plus this round's ``inputResponses``, this token and any ``_meta`` gets past it.
    """
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": json.loads(first_params)}
    connection = mcpwire.StdioConnection(_issuer())
    (exchange,) = connection.receive_data(json.dumps(message).encode() + b"\n", now=issued)
    assert isinstance(exchange, mcpwire.StdioExchange), f"the first round was not admitted: {exchange!r}"
    answer = json.loads(exchange.input_required(state=json.loads(state)))
    token = answer["result"]["requestState"]
    assert isinstance(token, str), answer
    return token


@cache
def real_cursors() -> dict[str, list[str]]:
    """Genuine nextCursor values of the fuzz server's lists (deterministic: same keys, same
    catalog), so list requests reach the cursor-verifying path."""
    server, out = fuzz_server(), {}
    for method in PAGINATED_METHODS:
        cursors, cursor = [], None
        for _ in range(10):
            params: dict[str, Any] = {"_meta": {"io.modelcontextprotocol/protocolVersion": VERSION,
                                                "io.modelcontextprotocol/clientCapabilities": {}}}
            if cursor is not None:
                params["cursor"] = cursor
            line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
            (data,) = mcpwire.StdioConnection(server).receive_data(line + b"\n", now=NOW)
            assert isinstance(data, bytes)
            cursor = json.loads(data)["result"].get("nextCursor")
            if cursor is None:
                break
            cursors.append(cursor)
        out[method] = cursors
    return out


@st.composite
def valid_requests(draw: st.DrawFn, catalog: Catalog = CATALOG, methods: tuple[str, ...] = REQUEST_METHODS,
                   *, retry: bool = False) -> dict[str, Any]:
    """A valid JSON-RPC request of one of ``methods`` (every ClientRequest of the schema);
    ``retry``: MRTR retries with a genuine requestState (see :func:`params_for`)."""
    method = draw(st.sampled_from(methods))
    params = draw(params_for(method, catalog, retry=retry))
    return {"jsonrpc": "2.0", "id": draw(request_ids), "method": method, "params": params}


# --- headers ----------------------------------------------------------------------------------------

# Headers the strategy varies itself (Content-Type and Accept spellings; a version agreeing with
# the body's, even a mutated one); the client's own are left out.
_OWN_HEADERS: Final = frozenset({b"content-type", b"accept", b"mcp-protocol-version"})


@cache
def header_client() -> mcpwire.Client:
    """A fuzz client that has listed the fuzz server's tools (real traffic over stdio, every
    page), so it knows their ``x-mcp-header`` annotations and sends ``Mcp-Param-*``."""
    client = make_client()
    connection, server = mcpwire.ClientStdioConnection(client), mcpwire.StdioConnection(fuzz_server())
    pages = client.paginate("tools/list")
    while (request := pages.next_request()) is not None:
        (answer,) = server.receive_data(connection.send(request), now=NOW)
        assert isinstance(answer, bytes), answer
        (result,) = connection.receive_data(answer)
        assert isinstance(result, mcpwire.ResultReceived), result
        pages.add(result)
    assert not pages.truncated and not client.rejected_tools, (pages.truncated, client.rejected_tools)
    assert {tool.name for tool in pages.items} == {*CATALOG.tools, CATALOG.typed_tool}, pages.items
    return client


def _mirrorable(value: Any) -> Any:
    """``value`` with :class:`Dup` and :class:`RawJSON` (no value a client holds) as null."""
    if isinstance(value, (Dup, RawJSON)):
        return None
    if isinstance(value, dict):
        return {k: _mirrorable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mirrorable(v) for v in value]
    return value


def _client_headers(method: str, params: dict[str, Any]) -> list[tuple[bytes, bytes]] | None:
    """The MCP headers the fuzz client sends with ``method`` and ``params`` (none of
    :data:`_OWN_HEADERS`), or None when it refuses to send such a request."""
    try:
        request = header_client().request(method, params, request_id=1)
    except LocalProtocolError:
        return None
    return [(name, value) for name, value in request.headers if name.lower() not in _OWN_HEADERS]


def _mcp_headers(method: Any, params: dict[str, Any]) -> list[tuple[bytes, bytes]]:
    """``Mcp-Method``, ``Mcp-Name`` and ``Mcp-Param-*`` agreeing with a (possibly mutated) body."""
    if not isinstance(method, str):
        return []
    call = {k: _mirrorable(v) for k, v in params.items() if k != "_meta"}
    headers = _client_headers(method, call)
    arguments = call.get("arguments")
    if headers is None and isinstance(arguments, dict):
        # An argument whose JSON type is not its annotation's (a mutated body): the client
        # refuses the call. Mirror the arguments it accepts, one by one.
        kept = {k: v for k, v in arguments.items()
                if _client_headers(method, {**call, "arguments": {k: v}}) is not None}
        headers = _client_headers(method, {**call, "arguments": kept})
    if headers is None:
        # A method no client sends (empty, control characters, surrounding spaces): echo it
        # anyway when it is ASCII, so the body still reaches method lookup.
        return [(b"Mcp-Method", method.encode())] if method.isascii() else []
    return headers


@st.composite
def headers_for(draw: st.DrawFn, message: Any) -> list[tuple[bytes, bytes]]:
    """The headers a correct client sends with ``message``, in valid variations (name case,
    optional whitespace, Content-Type parameters, Accept spellings, a loopback Origin)."""
    accept = draw(st.sampled_from([b"application/json, text/event-stream", b"text/event-stream, application/json",
                                   b"*/*", b"application/*, text/*;q=0.5", b"application/json;q=1, text/event-stream"]))
    ctype = draw(st.sampled_from([b"application/json", b"application/json; charset=utf-8", b"Application/JSON"]))
    out = [(b"Content-Type", ctype), (b"Accept", accept)]
    method = message.get("method") if isinstance(message, dict) else None
    raw_params = message.get("params") if isinstance(message, dict) else None
    params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
    meta: dict[str, Any] = params["_meta"] if isinstance(params.get("_meta"), dict) else {}
    version = meta.get("io.modelcontextprotocol/protocolVersion", VERSION)
    out.append((b"MCP-Protocol-Version", version.encode() if isinstance(version, str) and version.isascii() else b"x"))
    out += _mcp_headers(method, params)
    if draw(st.booleans()):
        out.append((b"Origin", draw(st.sampled_from([b"http://localhost:8000", b"https://127.0.0.1", b"http://[::1]:1"]))))
    if draw(st.booleans()):  # header names are case-insensitive; values may carry OWS
        out = [(n.lower() if draw(st.booleans()) else n.upper(), b" " + v + b"\t") if n.lower() != b"mcp-method"
               else (n.lower(), v) for n, v in out]
    return draw(st.permutations(out))


# --- mutations --------------------------------------------------------------------------------------


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*path, i))
    return out


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def _set(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _set(value[head], rest, new)}
    copy = list(value)
    copy[head] = _set(value[head], rest, new)
    return copy


def _retype(value: Any) -> st.SearchStrategy[Any]:
    others: list[st.SearchStrategy[Any]] = [s for t, s in ((str, st.text(max_size=4)), (int, INT64), (bool, st.booleans()), (list, st.just([])),
                             (dict, st.just({})), (type(None), st.none())) if type(value) is not t]
    return st.one_of(others)


_MUTATIONS: Final = ("drop", "drop_required", "retype", "replace", "add", "duplicate", "raw", "null", "wrap")


@st.composite
def mutated_json(draw: st.DrawFn, value: Any) -> Any:
    """``value`` with one to three mutations; may contain :class:`Dup` and :class:`RawJSON`."""
    for _ in range(draw(st.integers(1, 3))):
        if isinstance(value, (Dup, RawJSON)):
            break
        op = draw(st.sampled_from(_MUTATIONS))
        if op == "drop_required" and isinstance(value, dict) and isinstance(value.get("params"), dict):
            required = REQUIRED_PARAMS.get(str(value.get("method")), ())
            present = [k for k in required if k in value["params"]]
            if present:
                key = draw(st.sampled_from(present))
                value = {**value, "params": {k: v for k, v in value["params"].items() if k != key}}
                continue
            op = "drop"
        path = draw(st.sampled_from(_paths(value)))
        target = _get(value, path)
        if op == "drop" and path:
            parent = _get(value, path[:-1])
            if isinstance(parent, dict):
                value = _set(value, path[:-1], {k: v for k, v in parent.items() if k != path[-1]})
            else:
                value = _set(value, path[:-1], [v for i, v in enumerate(parent) if i != path[-1]])
        elif op == "retype":
            value = _set(value, path, draw(_retype(target)))
        elif op == "replace":
            value = _set(value, path, draw(json_values(4)))
        elif op == "add" and isinstance(target, dict):
            value = _set(value, path, {**target, draw(st.text(max_size=8)): draw(json_values(4))})
        elif op == "duplicate" and isinstance(target, dict) and target:
            key = draw(st.sampled_from(sorted(target)))
            pairs = list(target.items())
            pairs.insert(draw(st.integers(0, len(pairs))), (key, draw(json_values(3))))
            return _set(value, path, Dup(pairs))  # a Dup is a leaf: no further tree mutations
        elif op == "raw":
            return _set(value, path, RawJSON(draw(st.sampled_from(RAW_LITERALS))))
        elif op == "null":
            value = _set(value, path, None)
        elif op == "wrap":
            value = _set(value, path, [target])
    return value


@st.composite
def mutated_bytes(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` truncated, extended, spliced, bit-flipped, BOM-prefixed or made invalid UTF-8."""
    op = draw(st.sampled_from(["truncate", "extend", "splice", "delete", "flip", "bom", "badutf8", "double"]))
    i = draw(st.integers(0, len(data)))
    if op == "truncate":
        return data[:i]
    if op == "extend":
        return data + draw(st.binary(max_size=16) | st.sampled_from([b"\n", b"}", b" ", data]))
    if op == "splice":
        j = draw(st.integers(i, min(len(data), i + 8)))
        return data[:i] + draw(st.binary(max_size=8)) + data[j:]
    if op == "delete":
        return data[:i] + data[i + 1:]
    if op == "flip" and data:
        k = min(i, len(data) - 1)
        return data[:k] + bytes([data[k] ^ (1 << draw(st.integers(0, 7)))]) + data[k + 1:]
    if op == "bom":
        return b"\xef\xbb\xbf" + data
    if op == "badutf8":
        return data[:i] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"])) + data[i:]
    return data + data


@st.composite
def mutated_headers(draw: st.DrawFn, headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    headers = list(headers)
    op = draw(st.sampled_from(["drop", "repeat", "value", "junk", "evil_origin", "accept", "ctype", "method_case",
                               "param"]))
    i = draw(st.integers(0, max(len(headers) - 1, 0)))
    if op == "drop" and headers:
        del headers[i]
    elif op == "repeat" and headers:
        headers.append((headers[i][0], draw(st.sampled_from([headers[i][1], b"other"]))))
    elif op == "value" and headers:
        headers[i] = (headers[i][0], draw(st.binary(max_size=12)))
    elif op == "junk":
        headers.append((draw(st.binary(min_size=1, max_size=10)), draw(st.binary(max_size=10))))
    elif op == "evil_origin":
        headers.append((b"Origin", draw(st.sampled_from([b"http://evil.example", b"null", b"http://u@localhost",
                                                         b"ftp://localhost", b"\xff"]))))
    elif op == "accept":
        headers = [h for h in headers if h[0].lower() != b"accept"] + [(b"Accept", b"application/json")]
    elif op == "ctype":
        headers = [h for h in headers if h[0].lower() != b"content-type"] + [(b"Content-Type", b"text/plain")]
    elif op == "method_case":
        headers = [(n, v.upper()) if n.lower() == b"mcp-method" else (n, v) for n, v in headers]
    else:
        headers.append((b"Mcp-Param-" + draw(st.sampled_from([b"Region", b"N", b"Flag", b"X"])),
                        draw(st.sampled_from([b"=?base64?!!?=", b"=?base64?w6k=?=", b"1.0", b"TRUE", b"\x80"]))))
    return headers


def body_bytes(value: Any) -> bytes:
    return dumps(value).encode("utf-8", "surrogatepass")


@st.composite
def http_traffic(draw: st.DrawFn, catalog: Catalog = CATALOG) -> tuple[str, HttpRequest]:
    """One labelled HTTP request: ``valid``, or mutated (``json``, ``bytes``, ``headers``,
    ``transport``), or ``random`` bytes and headers."""
    kind = draw(st.sampled_from(["valid", "valid", "json", "json", "bytes", "headers", "transport", "random",
                                 "notification"]))
    if kind == "random":
        headers = draw(st.lists(st.tuples(st.binary(max_size=12), st.binary(max_size=24)), max_size=6))
        body = draw(st.binary(max_size=200))
        return kind, HttpRequest(method="POST", target="/mcp", headers=headers, body=body)
    message: Any = draw(valid_requests(catalog))
    if kind == "notification":
        message = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": draw(st.fixed_dictionaries({"requestId": request_ids}, optional={"reason": st.text(max_size=5)}))}
    headers = draw(headers_for(message))
    body = body_bytes(message)
    method, target = "POST", "/mcp"
    if kind == "json":
        mutated = draw(mutated_json(message))
        body = body_bytes(mutated)
        if draw(st.booleans()) and isinstance(mutated, dict):
            headers = draw(headers_for(mutated))  # headers agreeing with the mutated body
    elif kind == "bytes":
        body = draw(mutated_bytes(body))
    elif kind == "headers":
        headers = draw(mutated_headers(headers))
    elif kind == "transport":
        method = draw(st.sampled_from(["GET", "DELETE", "post", "PUT", "POST"]))
        target = draw(st.sampled_from(["/mcp", "/mcp?x=1", "/", "/mcp/", "", "/MCP"]))
    return kind, HttpRequest(method=method, target=target, headers=headers, body=body)


# --- stdio ------------------------------------------------------------------------------------------


@st.composite
def stdio_messages(draw: st.DrawFn, catalog: Catalog = CATALOG) -> bytes:
    """One line's content (no newline): a valid request, a cancellation, a posted response, a
    mutated message, or junk."""
    kind = draw(st.sampled_from(["valid", "valid", "valid", "cancel", "response", "json", "bytes", "junk"]))
    if kind == "junk":
        return draw(st.binary(max_size=40)).replace(b"\n", b"")
    if kind == "cancel":
        return body_bytes({"jsonrpc": "2.0", "method": "notifications/cancelled",
                           "params": {"requestId": draw(st.integers(0, 5) | request_ids), "reason": "r"}})
    if kind == "response":
        return body_bytes({"jsonrpc": "2.0", "id": draw(request_ids), "result": {}})
    message = draw(valid_requests(catalog))
    if draw(st.booleans()):
        message["id"] = draw(st.integers(0, 5))  # small ids, so cancellations and repeats hit them
    if kind == "json":
        return body_bytes(draw(mutated_json(message))).replace(b"\n", b"")
    if kind == "bytes":
        return draw(mutated_bytes(body_bytes(message))).replace(b"\n", b"")
    return body_bytes(message)


@st.composite
def stdio_streams(draw: st.DrawFn, catalog: Catalog = CATALOG, max_lines: int = 6) -> bytes:
    lines = draw(st.lists(stdio_messages(catalog), min_size=1, max_size=max_lines))
    ends = st.sampled_from([b"\n", b"\n", b"\r\n", b"\n\n", b" \n"])
    stream = b"".join(line + draw(ends) for line in lines)
    return stream[:-1] if draw(st.booleans()) else stream  # the last line may lack its newline


def cut_points(data: bytes, max_cuts: int = 12) -> st.SearchStrategy[list[int]]:
    return st.lists(st.integers(0, len(data)), max_size=max_cuts).map(sorted)


# --- the host's answers -----------------------------------------------------------------------------

_progress_values = st.floats(min_value=0, max_value=1e6, allow_nan=False)


@st.composite
def host_plans(draw: st.DrawFn) -> list[tuple[Any, ...]]:
    """Steps for ``fuzz.host.drive``: notifications with increasing progress, then a final
    answer (or a cancellation, or nothing). Misuse is rare but present (documented errors)."""
    steps: list[tuple[Any, ...]] = []
    values = sorted(set(draw(st.lists(_progress_values, max_size=3))))
    for value in values:
        steps.append(("progress", value, draw(st.none() | st.just(value * 2 + 1)), draw(st.none() | st.text(max_size=8))))
        if draw(st.booleans()):
            steps.append(("log", draw(st.sampled_from(LOG_LEVELS)), draw(json_values(4))))
    final = draw(st.sampled_from(["complete", "complete", "input_required", "fail", "cancel", "leave"]))
    if final == "complete":
        steps.append(("complete", draw(st.integers(0, 11)), draw(st.text(max_size=10))))
    elif final == "input_required":
        keys = draw(st.lists(st.sampled_from(["name", "url", "sample", "roots"]), unique=True, max_size=3))
        steps.append(("input_required", keys, draw(st.none() | json_values(4)) if keys else {"s": 1}))
    elif final == "fail":
        steps.append(("fail", draw(st.integers(0, 4))))
    elif final == "cancel":
        steps.append(("cancel",))
    if draw(st.integers(0, 9)) == 0:
        steps.append(("complete", 0))  # answering twice: LocalProtocolError
    return steps


# --- what a server may send back (for the client engine) --------------------------------------------


@st.composite
def server_messages(draw: st.DrawFn, request: mcpwire.OutgoingRequest) -> Any:
    """A message on the response stream of ``request``: its result or error (of any shape),
    a notification for it or for something else, a forbidden server request, or junk."""
    kind = draw(st.sampled_from(["result", "result", "error", "progress", "log", "listen", "request", "junk", "other_id"]))
    rid = request.id
    meta = {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}
    if kind == "result":
        result = draw(st.fixed_dictionaries({}, optional={
            "resultType": st.sampled_from(["complete", "input_required", "task"]) | json_scalars,
            "content": st.just([{"type": "text", "text": "x"}]),
            "tools": st.just([{"name": "t", "inputSchema": {"type": "object"}},
                              {"name": "h", "inputSchema": {"type": "object", "properties": {
                                  "v": {"type": "number", "x-mcp-header": "V"}}}}]),
            "inputRequests": st.just({"a": {"method": "roots/list", "params": {}}}) | json_values(3),
            "requestState": st.text(max_size=8) | json_scalars,
            "nextCursor": st.text(max_size=6), "ttlMs": st.integers(-1, 5), "cacheScope": st.just("private"),
            "_meta": st.just(meta),
        }) | json_values(4))
        return {"jsonrpc": "2.0", "id": rid, "result": result}
    if kind == "error":
        error = draw(st.fixed_dictionaries({"code": st.sampled_from([-32700, -32600, -32601, -32602, -32603, -32022, 7]),
                                            "message": st.text(max_size=6)}, optional={"data": json_values(3)})
                     | json_values(3))
        return {"jsonrpc": "2.0", "id": draw(st.sampled_from([rid, None])), "error": error}
    if kind == "progress":
        token = draw(st.sampled_from([request.progress_token, "other", 5]))
        return {"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": token, "progress": draw(st.integers(0, 9) | st.text(max_size=2))}}
    if kind == "log":
        return {"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": draw(st.sampled_from(LOG_LEVELS + ("loud",))), "data": draw(json_values(3))}}
    if kind == "listen":
        method = draw(st.sampled_from(["notifications/subscriptions/acknowledged", "notifications/tools/list_changed",
                                       "notifications/resources/updated"]))
        sid = draw(st.sampled_from([rid, "nope"]))
        return {"jsonrpc": "2.0", "method": method, "params": {
            "notifications": {"toolsListChanged": True}, "uri": "test://static-text",
            "_meta": {"io.modelcontextprotocol/subscriptionId": sid}}}
    if kind == "request":
        return {"jsonrpc": "2.0", "id": 99, "method": "sampling/createMessage", "params": {}}
    if kind == "other_id":  # a result for another request, or for none (id null: on stdio, unattributable)
        return {"jsonrpc": "2.0", "id": draw(st.sampled_from(["someone-else", None])), "result": {"resultType": "complete"}}
    return RawJSON(draw(st.sampled_from(["{oops", "[]", "null", '{"jsonrpc":"2.0"}', "1e400"])))


@st.composite
def sse_bodies(draw: st.DrawFn, messages: list[Any]) -> bytes:
    """``messages`` framed as an SSE body, with comments, ids, retry fields, event types,
    priming events, CRLF or CR line ends, a BOM, and split data lines."""
    eol = draw(st.sampled_from([b"\n", b"\r\n", b"\r"]))
    out = b"\xef\xbb\xbf" if draw(st.booleans()) else b""
    for message in messages:
        text = body_bytes(message)
        extra = draw(st.lists(st.sampled_from([b": keepalive", b"id: 7", b"retry: 100", b"event: message", b"id",
                                               b"data:"]), max_size=2))
        out += b"".join(e + eol for e in extra)
        if draw(st.booleans()) and len(text) > 2:
            cut = draw(st.integers(1, len(text) - 1))  # one JSON text over two data lines (joined with LF)
            out += b"data: " + text[:cut] + eol + b"data: " + text[cut:] + eol + eol
        else:
            out += b"data: " + text + eol + eol
    return out


# --- what is never answered (docs/errors.md, "What is never answered") ----------------------------

# Readable JSON, numbers Python cannot hold included: anywhere but in the method, such a value
# does not stop a message from being recognized as a notification or a response.
_READABLE_RAW: Final = ("1e400", "-1e400", "1E+999", "-0", "0.0e0", "9" * 5000, "18446744073709551616",
                        "-9223372036854775809", '"\\ud83d\\ude00"', '"\\u0000"')


def _anything(max_leaves: int = 4) -> st.SearchStrategy[Any]:
    return json_values(max_leaves) | st.sampled_from(_READABLE_RAW).map(RawJSON)


def _extra_members(draw: st.DrawFn, message: dict[str, Any], reserved: tuple[str, ...]) -> dict[str, Any]:
    """``message`` plus random members (never one named in ``reserved``), in a random order."""
    for key in draw(st.lists(st.text(max_size=8), max_size=3)):
        if key not in reserved and key not in message:
            message[key] = draw(_anything(3))
    order = draw(st.permutations(list(message)))
    return {key: message[key] for key in order}


_NOTIFICATION_METHODS: Final = st.sampled_from(
    [*REQUEST_METHODS, "notifications/cancelled", "notifications/initialized", "notifications/progress",
     "initialize", "ping", ""]) | st.text(max_size=16)


@st.composite
def unanswered_notifications(draw: st.DrawFn) -> dict[str, Any]:
    """A notification: a string ``method`` and no ``id`` member; everything else is random
    (``jsonrpc``, ``params`` with or without a valid ``_meta``, ``result``, ``error``, extra
    members, unrepresentable numbers)."""
    message: dict[str, Any] = {"method": draw(_NOTIFICATION_METHODS)}
    if draw(st.integers(0, 3)):
        message["jsonrpc"] = draw(st.just("2.0") | _anything(2))
    if draw(st.booleans()):
        message["params"] = draw(_anything(6) | st.fixed_dictionaries({}, optional={
            "_meta": request_meta() | _anything(3), "requestId": request_ids | _anything(2),
            "name": st.just("add") | _anything(1), "arguments": _anything(3), "reason": _anything(1)}))
    for member in ("result", "error"):
        if draw(st.integers(0, 5)) == 0:
            message[member] = draw(_anything(2))
    return _extra_members(draw, message, ("id", "method"))


@st.composite
def unanswered_responses(draw: st.DrawFn) -> dict[str, Any]:
    """A posted response: no ``method`` member, a ``result`` or an ``error`` member (or both);
    everything else is random (a missing, null or invalid id, ``jsonrpc``, error objects of
    any shape, extra members, unrepresentable numbers)."""
    message: dict[str, Any] = {}
    if draw(st.integers(0, 3)):
        message["id"] = draw(request_ids | _anything(2))
    if draw(st.integers(0, 3)):
        message["jsonrpc"] = draw(st.just("2.0") | _anything(2))
    members = draw(st.sampled_from([("result",), ("error",), ("result", "error")]))
    if "result" in members:
        message["result"] = draw(json_objects | _anything(4))
    if "error" in members:
        message["error"] = draw(st.fixed_dictionaries(
            {"code": INT64 | _anything(1), "message": st.text(max_size=8) | _anything(1)},
            optional={"data": _anything(3)}) | _anything(3))
    return _extra_members(draw, message, ("method",))


@st.composite
def unanswered_headers(draw: st.DrawFn, message: Any) -> list[tuple[bytes, bytes]]:
    """Headers that pass the transport checks made before the body is read (valid
    Content-Type and Accept, no Origin; mcpwire's admission order is in docs/server.md) with
    any MCP headers: those a correct client would send for ``message``, mutated ones, random
    ones, or none."""
    transport = [(b"Content-Type", b"application/json"), (b"Accept", b"application/json, text/event-stream")]
    kind = draw(st.sampled_from(["correct", "random", "none"]))
    if kind == "none":
        return transport
    if kind == "random":
        names = st.sampled_from([b"MCP-Protocol-Version", b"mcp-method", b"Mcp-Name", b"Mcp-Param-Region",
                                 b"Mcp-Param-N", b"X-Other"])
        values = st.binary(max_size=20) | st.sampled_from([VERSION.encode(), b"2025-11-25", b"tools/call",
                                                            b"=?base64?!!?=", b""])
        return transport + draw(st.lists(st.tuples(names, values), max_size=6))
    headers = [h for h in draw(headers_for(message)) if h[0].lower() not in (b"content-type", b"accept")]
    if draw(st.booleans()):
        headers = [h for h in draw(mutated_headers(headers)) if h[0].lower() not in (b"content-type", b"accept",
                                                                                      b"origin")]
    return transport + headers
