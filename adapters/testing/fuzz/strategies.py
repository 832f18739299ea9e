"""Hypothesis strategies for MCP 2026-07-28 traffic, for ``mcpwire fuzz`` and for your own tests.

    from hypothesis import given
    from mcpwire_adapters.testing.fuzz import strategies as mst

    @given(mst.requests())
    def test_my_server_answers(message): ...

Valid messages first (:func:`requests`: a JSON-RPC request of a method of the revision, with a
valid ``_meta`` as the schema's ``RequestMetaObject`` says, and params the method needs), then
mutations, one layer at a time (:func:`mutated`): the envelope (``jsonrpc``, ``id``, ``method``,
``params``), the request ``_meta``, the params, the bytes of the body, the HTTP headers, and the
stdio framing. :func:`from_schema` draws values for a JSON Schema (a tool's ``inputSchema``):
the common keywords only; anything it does not know is drawn as any JSON value.

Every mutation is labelled (``"envelope.id-invalid"``, ``"meta.version-other"``...) so a report
says how the case was made; which answer a mutation calls for is not decided here but by the
fuzzer's oracle, from the request as sent (:mod:`mcpwire_adapters.testing.fuzz.oracle`), so that a
replayed case is judged the same way. Needs ``hypothesis`` (the ``probe`` extra).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

try:
    from hypothesis import strategies as st
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("mcpwire_adapters.testing.fuzz.strategies needs hypothesis: pip install 'mcpwire[probe]'") from exc

from ..rawwire import CAPS_KEY, INFO_KEY, PV_KEY, VERSION

__all__ = [
    "LIST_METHODS", "LOG_LEVELS", "Message", "bad_request_ids", "client_meta", "from_schema", "header_mutations",
    "json_values", "mutated", "mutated_bytes", "mutated_envelope", "mutated_framing", "mutated_meta",
    "mutated_params", "request_ids", "requests",
]

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
LIST_METHODS = ("tools/list", "prompts/list", "resources/list", "resources/templates/list")
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
LEVEL_KEY, PROGRESS_KEY = "io.modelcontextprotocol/logLevel", "progressToken"
BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Message:
    """A JSON-RPC message to send: ``value`` (any JSON, or None with ``body`` set: bytes that
    may not be JSON at all) and ``label``: how it was made, e.g. ``valid`` or ``meta.drop-version``."""

    value: Any
    label: str = "valid"
    body: bytes | None = None

    def encode(self) -> bytes:
        return self.body if self.body is not None else json.dumps(self.value, ensure_ascii=False).encode()


# -- JSON ---------------------------------------------------------------------------------------------
def json_values(max_leaves: int = 8) -> st.SearchStrategy[Any]:
    """Any JSON value (no NaN or infinities; text of any code point but lone surrogates)."""
    scalars = (st.none() | st.booleans() | st.integers(INT64_MIN, INT64_MAX)
               | st.floats(allow_nan=False, allow_infinity=False) | st.text(st.characters(exclude_categories=["Cs"]),
                                                                           max_size=12))
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                        | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=max_leaves)


def request_ids() -> st.SearchStrategy[str | int]:
    """Valid JSON-RPC ids of this revision: a string of at most 256 bytes or an int64 (schema RequestId)."""
    return st.text(max_size=16) | st.integers(INT64_MIN, INT64_MAX) | st.just("x" * 256)


def bad_request_ids() -> st.SearchStrategy[Any]:
    """Ids the revision refuses (schema#requestid): null, booleans, fractions, objects, arrays, 257-byte
    strings, integers past int64."""
    return st.sampled_from([None, True, False, 1.5, {}, [], [1], "x" * 257, "é" * 129, INT64_MAX + 1,
                            INT64_MIN - 1])


def client_meta() -> st.SearchStrategy[dict[str, Any]]:
    """A valid request ``_meta``: the version and capabilities, and maybe clientInfo, a log level
    and a progress token."""
    return st.fixed_dictionaries(
        {PV_KEY: st.just(VERSION), CAPS_KEY: st.sampled_from([{}, {"elicitation": {"form": {}}}, {"roots": {}}])},
        optional={INFO_KEY: st.just({"name": "mcpwire-fuzz", "version": "1"}),
                  LEVEL_KEY: st.sampled_from(LOG_LEVELS), PROGRESS_KEY: request_ids()})


# -- JSON Schema ----------------------------------------------------------------------------------------
def from_schema(schema: Any, *, depth: int = 0) -> st.SearchStrategy[Any]:
    """Values for the JSON Schema ``schema`` (type, properties, required, items, enum, const,
    min/max length and value); other keywords are not looked at, so a value may still be
    refused by the tool: the fuzzer then expects an error, not a crash."""
    if not isinstance(schema, Mapping) or depth > 4:
        return json_values(4)
    if "const" in schema:
        return st.just(schema["const"])
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return st.sampled_from(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return st.one_of([from_schema(s, depth=depth + 1) for s in schema[key]])
    kind = schema.get("type")
    if isinstance(kind, list) and kind:
        return st.one_of([from_schema({**schema, "type": k}, depth=depth) for k in kind])
    if kind == "object" or (kind is None and isinstance(schema.get("properties"), Mapping)):
        properties = _dict(schema.get("properties"))
        required = [k for k in _list(schema.get("required")) if isinstance(k, str)]
        return st.fixed_dictionaries(
            {k: from_schema(properties.get(k), depth=depth + 1) for k in required},
            optional={k: from_schema(v, depth=depth + 1) for k, v in properties.items() if k not in required})
    if kind == "array":
        low, high = schema.get("minItems", 0), schema.get("maxItems", 3)
        return st.lists(from_schema(schema.get("items"), depth=depth + 1), min_size=low if isinstance(low, int) else 0,
                        max_size=max(high if isinstance(high, int) else 3, low if isinstance(low, int) else 0))
    if kind == "string":
        low, high = schema.get("minLength", 0), schema.get("maxLength", 24)
        low = low if isinstance(low, int) else 0
        return st.text(st.characters(exclude_categories=["Cs"]), min_size=low,
                       max_size=max(low, high if isinstance(high, int) else 24))
    if kind in ("integer", "number"):
        low, high = schema.get("minimum"), schema.get("maximum")
        ints = st.integers(int(low) if isinstance(low, (int, float)) else None,
                           int(high) if isinstance(high, (int, float)) else None)
        if kind == "integer":
            return ints
        return ints | st.floats(low if isinstance(low, (int, float)) else None,
                                high if isinstance(high, (int, float)) else None, allow_nan=False, allow_infinity=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    return json_values(4)


# -- valid requests ---------------------------------------------------------------------------------------
def _request(method: str, params: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[Message]:
    return st.builds(lambda rpc_id, p, m: Message({"jsonrpc": "2.0", "id": rpc_id, "method": method,
                                                   "params": {**p, "_meta": m}}),
                     request_ids(), params, client_meta())


def requests(*, capabilities: Mapping[str, Any] | None = None, tools: Sequence[Mapping[str, Any]] = (),
             resources: Sequence[str] = (), prompts: Sequence[Mapping[str, Any]] = ()) -> st.SearchStrategy[Message]:
    """Valid requests of the methods the server offers (``capabilities``: its discover result's;
    None: all of them), reading the given ``resources`` (URIs), getting the given ``prompts``
    (as prompts/list gives them) and calling only the given ``tools`` (as tools/list gives them)
    with arguments drawn from their ``inputSchema``. Never subscriptions/listen (it does not
    end by itself) nor a tool not given."""
    caps = capabilities if capabilities is not None else {"tools": {}, "prompts": {}, "resources": {},
                                                          "completions": {}}
    options = [_request("server/discover", st.just({}))]
    for method in LIST_METHODS:
        if method.split("/")[0] in caps:
            options.append(_request(method, st.just({})))
    for tool in tools:
        name = tool.get("name")
        if isinstance(name, str):
            options.append(_request("tools/call", st.builds(lambda a, n=name: {"name": n, "arguments": a},
                                                            from_schema(tool.get("inputSchema")))))
    if "resources" in caps and resources:
        options.append(_request("resources/read", st.builds(lambda u: {"uri": u}, st.sampled_from(list(resources)))))
    for prompt in prompts:
        name = prompt.get("name")
        if not isinstance(name, str) or "prompts" not in caps:
            continue
        declared = _list(prompt.get("arguments"))
        names = [a["name"] for a in declared if isinstance(a, dict) and isinstance(a.get("name"), str)]
        required = [a["name"] for a in declared if isinstance(a, dict) and a.get("required") is True
                    and isinstance(a.get("name"), str)]
        arguments = st.fixed_dictionaries({k: st.text(max_size=8) for k in required},
                                          optional={k: st.text(max_size=8) for k in names if k not in required})
        options.append(_request("prompts/get", st.builds(lambda a, n=name: {"name": n, "arguments": a}, arguments)))
    return st.one_of(options)


# -- mutations ------------------------------------------------------------------------------------------
def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _with(message: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = dict(message)
    for key, value in changes.items():
        if value is _DROP:
            out.pop(key, None)
        else:
            out[key] = value
    return out


_DROP = object()
_UNKNOWN_METHODS = st.text("abcdefghijklmnopqrstuvwxyz_-/", min_size=1, max_size=12).map(lambda s: "fuzz/" + s)


def mutated_envelope(message: dict[str, Any]) -> st.SearchStrategy[Message]:
    """The JSON-RPC envelope changed: jsonrpc, id, method, params, a whole other JSON value."""
    return st.one_of(
        st.sampled_from([_DROP, "1.0", 2.0, None, "2.0 "]).map(
            lambda v: Message(_with(message, jsonrpc=v), "envelope.jsonrpc")),
        bad_request_ids().map(lambda v: Message(_with(message, id=v), "envelope.id-invalid")),
        st.just(Message(_with(message, id=_DROP), "envelope.no-id")),
        _UNKNOWN_METHODS.map(lambda v: Message(_with(message, method=v), "envelope.method-unknown")),
        st.sampled_from([None, 1, [], {}, True]).map(lambda v: Message(_with(message, method=v), "envelope.method-type")),
        st.just(Message(_with(message, method=_DROP), "envelope.no-method")),
        st.sampled_from([None, 1, "x", [], [message.get("params")]]).map(
            lambda v: Message(_with(message, params=v), "envelope.params-type")),
        st.just(Message(_with(message, params=_DROP), "envelope.no-params")),
        st.tuples(st.text("abcdefgh", min_size=1, max_size=6), json_values(3)).map(
            lambda kv: Message({**message, "x" + kv[0]: kv[1]}, "envelope.extra-member")),
        st.sampled_from([[message], [], [message, message], 1, "x", None, True]).map(
            lambda v: Message(v, "envelope.not-an-object")),
        st.builds(lambda key, value: Message(_with(message, method=_DROP, params=_DROP, **{key: value}),
                                             "envelope.response"),
                  st.sampled_from(["result", "error"]), st.sampled_from([{}, {"code": 1, "message": "x"}])),
    )


def mutated_meta(message: dict[str, Any]) -> st.SearchStrategy[Message]:
    """The request ``_meta`` changed (schema#requestmetaobject): a required key dropped or retyped, a bad log
    level, progress token, clientInfo or key, another version, ``_meta`` itself retyped."""
    params = _dict(message.get("params"))
    meta = _dict(params.get("_meta"))

    def put(label: str, new_meta: Any) -> Message:
        new_params = dict(params)
        if new_meta is _DROP:
            new_params.pop("_meta", None)
        else:
            new_params["_meta"] = new_meta
        return Message({**message, "params": new_params}, label)

    return st.one_of(
        st.just(put("meta.dropped", _DROP)),
        st.sampled_from([None, 1, "x", [], True]).map(lambda v: put("meta.not-an-object", v)),
        st.sampled_from([PV_KEY, CAPS_KEY, INFO_KEY]).map(lambda k: put(f"meta.drop-{k.rsplit('/', 1)[-1]}",
                                                                        _with(meta, **{k: _DROP}))),
        st.sampled_from([None, 20260728, [], {}, True]).map(lambda v: put("meta.version-type", {**meta, PV_KEY: v})),
        st.text("0123456789.v-", min_size=1, max_size=10).map(
            lambda v: put("meta.version-other", {**meta, PV_KEY: "v9" + v})),
        st.sampled_from([None, 1, "x", [], True]).map(lambda v: put("meta.capabilities-type", {**meta, CAPS_KEY: v})),
        st.sampled_from([None, 1, "x", {}, {"name": "x"}, {"name": 1, "version": "1"}]).map(
            lambda v: put("meta.client-info", {**meta, INFO_KEY: v})),
        st.sampled_from(["verbose", "INFO", "", 3, None]).map(lambda v: put("meta.log-level", {**meta, LEVEL_KEY: v})),
        st.sampled_from([None, True, 1.5, {}, "x" * 257]).map(lambda v: put("meta.progress-token",
                                                                             {**meta, PROGRESS_KEY: v})),
        st.sampled_from(["bad key", "-x/y", "a..b/c", "x/", "/x", "é"]).map(
            lambda k: put("meta.bad-key", {**meta, k: 1})),
        st.tuples(st.sampled_from(["fuzz", "com.example/fuzz", "a-b.c_d"]), json_values(3)).map(
            lambda kv: put("meta.extra-key", {**meta, kv[0]: kv[1]})),
    )


def mutated_params(message: dict[str, Any]) -> st.SearchStrategy[Message]:
    """A member of ``params`` other than ``_meta`` dropped, retyped or added."""
    params = _dict(message.get("params"))
    keys = sorted(k for k in params if k != "_meta")
    options = [st.tuples(st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8), json_values(4)).map(
        lambda kv: Message({**message, "params": {**params, kv[0]: kv[1]}}, "params.extra"))]
    if keys:
        options.append(st.sampled_from(keys).map(
            lambda k: Message({**message, "params": _with(params, **{k: _DROP})}, "params.drop")))
        options.append(st.tuples(st.sampled_from(keys), json_values(4)).map(
            lambda kv: Message({**message, "params": {**params, kv[0]: kv[1]}}, "params.retype")))
    if message.get("method") in LIST_METHODS:
        options.append(st.one_of(st.text(max_size=12), st.sampled_from([1, None, {}, []])).map(
            lambda c: Message({**message, "params": {**params, "cursor": c}}, "params.cursor")))
    return st.one_of(options)


def mutated_bytes(body: bytes, *, allow_newline: bool = True) -> st.SearchStrategy[Message]:
    """The body's bytes changed: cut short, a byte replaced, inserted or dropped, a BOM, trailing
    data, invalid UTF-8 (``allow_newline`` False: never a line break, for stdio)."""
    size = len(body)
    byte = st.integers(0, 255).filter(lambda b: allow_newline or b != 10).map(lambda b: bytes([b]))

    def made(label: str, data: bytes) -> Message:
        return Message(None, f"bytes.{label}", data if allow_newline else data.replace(b"\n", b" "))

    return st.one_of(
        st.integers(0, max(0, size - 1)).map(lambda i: made("cut", body[:i])),
        st.tuples(st.integers(0, max(0, size - 1)), byte).map(lambda t: made("replace", body[:t[0]] + t[1] + body[t[0] + 1:])),
        st.tuples(st.integers(0, size), byte).map(lambda t: made("insert", body[:t[0]] + t[1] + body[t[0]:])),
        st.integers(0, max(0, size - 1)).map(lambda i: made("drop", body[:i] + body[i + 1:])),
        st.just(made("bom", BOM + body)),
        st.sampled_from([b" ", b"x", b"{}", b"\xff", b"\x00", b" \t"]).map(lambda t: made("trailing", body + t)),
        st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xc0\xaf"]).map(
            lambda t: made("bad-utf8", body[:-2] + t + body[-2:])),
    )


def mutated_framing(body: bytes) -> st.SearchStrategy[Message]:
    """stdio framing (basic/transports/stdio): empty lines, a CR before the line feed, a message cut across
    two lines, two messages on one line. The body returned is everything before the final line feed."""
    half = max(1, len(body) // 2)
    return st.sampled_from([
        Message(None, "framing.blank-lines-before", b"\n\n" + body),
        Message(None, "framing.crlf", body + b"\r"),
        Message(None, "framing.split", body[:half] + b"\n" + body[half:]),
        Message(None, "framing.two-on-a-line", body + body),
        Message(None, "framing.whitespace-line", b" \t\n" + body),
    ])


def header_mutations() -> st.SearchStrategy[tuple[str, Any]]:
    """One change to a request's HTTP headers, as ``(label, argument)`` for
    :func:`mcpwire_adapters.testing.fuzz.cases.apply_header_mutation`."""
    names = st.sampled_from(["Content-Type", "Accept", "MCP-Protocol-Version", "Mcp-Method", "Mcp-Name"])
    return st.one_of(
        st.tuples(st.just("headers.drop"), names),
        st.tuples(st.just("headers.repeat"), names),
        st.tuples(st.just("headers.lowercase-name"), names),
        st.tuples(st.just("headers.content-type"), st.sampled_from(["text/plain", "application/json; charset=utf-8",
                                                                  "application/jsonx", "APPLICATION/JSON", ""])),
        st.tuples(st.just("headers.accept"), st.sampled_from(["application/json", "text/event-stream",
                                                            "text/html", "text/event-stream, application/json",
                                                            "application/json;q=1, text/event-stream;q=0.5"])),
        st.tuples(st.just("headers.version"), st.sampled_from(["2026-07-27", "v999.0.0", "", "2026-07-28x"])),
        st.tuples(st.just("headers.mcp-method"), st.sampled_from(["TOOLS/LIST", "fuzz/other", "Server/discover"])),
        st.tuples(st.just("headers.mcp-name"), st.sampled_from(["fuzz-no-such-name", "x y"])),
        st.tuples(st.just("headers.origin"), st.sampled_from(["http://evil.example", "null", "https://evil.example:8443"])),
        st.tuples(st.just("headers.http-method"), st.sampled_from(["GET", "DELETE", "PUT", "PATCH"])),
    )


def mutated(message: dict[str, Any]) -> st.SearchStrategy[Message]:
    """One mutation of ``message`` at one layer of the JSON (envelope, ``_meta``, params) or of its bytes."""
    return st.one_of(mutated_envelope(message), mutated_meta(message), mutated_params(message),
                     mutated_bytes(json.dumps(message).encode()))
