"""The probe's checks: one row per rule of MCP 2026-07-28 (issue 15).

Each :class:`Check` cites the public page that states its rule (``cites``), builds the raw HTTP request it sends
from what the target said about itself (:class:`Target`: its discover result and tool list),
and states what a conforming server answers as an :class:`Expect` (HTTP status, JSON-RPC
code, the id echoed or null, an empty body, an ``Allow`` header, extra shape rules). A check
whose precondition does not hold (no ``tools`` capability, a non-loopback URL) says why it is
not applicable instead of guessing. Multi-step checks (a multi round-trip round, a listen
stream) carry a ``steps`` coroutine instead of a single request.

Codes and statuses are those of the specification's error codes (and, for the HTTP statuses and
which failure wins, the admission order docs/errors.md describes); where the specification says
SHOULD, or leaves something to the implementation, there is no check (a report we cannot defend
would be a bug in the tool).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

VERSION = "2026-07-28"
PV_KEY = "io.modelcontextprotocol/protocolVersion"
CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"
INFO_KEY = "io.modelcontextprotocol/clientInfo"
SUB_KEY = "io.modelcontextprotocol/subscriptionId"
UNKNOWN_TOOL = "mcpwire-probe-no-such-tool"
UNKNOWN_URI = "mcpwire-probe://no-such-resource"
ECHO, NULL = "echo", "null"  # what Expect.id asks for
NDJSON = "application/x-ndjson"  # the content type a stdio Reply carries: its body is the lines read
SPEC_URL = "https://modelcontextprotocol.io" + f"/specification/{VERSION}/"  # + a page#anchor


def cite_url(cites: str) -> str | None:
    """The link for a check's ``cites`` (None for JSON-RPC 2.0, which has no anchors to link; a
    full URL as it is: another revision's page)."""
    if cites.startswith("JSON-RPC"):
        return None
    return cites if cites.startswith("https://") else SPEC_URL + cites


@dataclass(frozen=True)
class Request:
    """One raw HTTP request; ``rpc_id`` is the JSON-RPC id the body carries (for the id oracle)."""

    method: str
    headers: tuple[tuple[str, str], ...]
    body: bytes = b""
    rpc_id: Any = None
    first_event_only: bool = False  # an SSE stream: stop after its first event (subscriptions/listen)
    head_only: bool = False  # stop at the response head (a stream that may stay silent)
    answered: bool | None = None  # stdio: whether the server answers it (None: read from the body)


@dataclass(frozen=True)
class Reply:
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    def messages(self, *, whole_events_only: bool = False) -> list[Any]:
        """The JSON-RPC messages in the body: one JSON value, each NDJSON line, or each SSE
        ``data:`` event (``whole_events_only``: only SSE events already ended, for a stream
        still being read; nothing for other types)."""
        kind = (self.header("content-type") or "").split(";")[0].strip().lower()
        if whole_events_only and kind != "text/event-stream":
            return []
        if kind == NDJSON:
            return [_loads(line.decode("utf-8", "replace")) for line in self.body.splitlines() if line.strip()]
        if kind == "text/event-stream":
            out, data = [], list[str]()
            for line in self.body.decode("utf-8", "replace").replace("\r\n", "\n").split("\n"):
                if line.startswith("data:"):
                    data.append(line[5:].removeprefix(" "))
                elif not line and data:
                    out.append(_loads("\n".join(data)))
                    data = []
            if data and not whole_events_only:
                out.append(_loads("\n".join(data)))
            return out
        return [_loads(self.body.decode("utf-8", "replace"))] if self.body else []


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return {"mcpwire-probe": "not JSON", "text": text[:200]}


@dataclass
class Target:
    """What the runner learned about the target before the checks (a discover and a tools/list
    sent with every header and ``_meta`` right), and the options the user gave."""

    url: str
    host: str
    loopback: bool
    discover: dict[str, Any] | None = None
    tools: list[dict[str, Any]] | None = None
    call_tools: bool = False
    stdio: bool = False  # a subprocess speaking NDJSON: no HTTP status, no headers

    def capability(self, name: str) -> Any:
        caps = (self.discover or {}).get("capabilities")
        return caps.get(name) if isinstance(caps, dict) else None


@dataclass(frozen=True)
class Expect:
    """What a conforming server answers: ``status`` (one or several), the JSON-RPC error ``code``
    (None: a result), the ``id`` (ECHO the request's, NULL, or None: not looked at), ``empty``
    (no body), the ``allow`` header, and ``more``: extra rules on the message (a list of problems)."""

    status: int | tuple[int, ...]
    code: int | None = None
    id: str | None = ECHO
    empty: bool = False
    allow: str | None = None
    more: Callable[[Any, Target], list[str]] | None = None
    refusable: bool = False  # with empty: on HTTP a 4xx whose body holds no response with an id also conforms
    any_error: bool = False  # an error of any code conforms (the specification only says which SHOULD be used)


Exchange = tuple[Request, "Reply | None", "str | None"]  # request, reply, transport error
Send = Callable[[Request], Awaitable[Exchange]]


@dataclass(frozen=True)
class Check:
    """One rule: ``build`` gives the request (or a string: why the check is not applicable) and
    ``expect`` judges the reply; or ``steps`` runs a short exchange and returns its verdict."""

    id: str
    title: str
    cites: str  # a page#anchor of the 2026-07-28 specification (see SPEC_URL), another page's URL, or "JSON-RPC 2.0 ..."
    sends: str
    build: Callable[[Target], Request | str] | None = None
    expect: Expect | None = None
    steps: Callable[[Target, Send], Awaitable[tuple[str, str, list[Exchange]]]] | None = None
    needs_tool_calls: bool = False
    http_only: bool = False  # a rule of HTTP (statuses, headers): not applicable to stdio


@dataclass(frozen=True)
class Finding:
    check: Check
    status: str  # "pass", "fail", "n/a"
    detail: str
    evidence: Sequence[Exchange] = field(default_factory=tuple)


# -- building requests ------------------------------------------------------------------------------
def meta(**extra: Any) -> dict[str, Any]:
    return {PV_KEY: VERSION, CAPS_KEY: {}, INFO_KEY: {"name": "mcpwire-probe", "version": "1"}, **extra}


def headers(method: str | None, name: str | None = None, *, version: str | None = VERSION,
            content_type: str | None = "application/json",
            accept: str | None = "application/json, text/event-stream",
            extra: Sequence[tuple[str, str]] = ()) -> tuple[tuple[str, str], ...]:
    out = [("Content-Type", content_type), ("Accept", accept), ("MCP-Protocol-Version", version),
           ("Mcp-Method", method), ("Mcp-Name", name)]
    return tuple((k, v) for k, v in out if v is not None) + tuple(extra)


def rpc(method: str, params: Any = None, *, rpc_id: Any = 1, name: str | None = None,
        hdrs: tuple[tuple[str, str], ...] | None = None, raw: Any = None, **kw: Any) -> Request:
    """A POST of one JSON-RPC request (``raw``: this JSON value instead); ``params`` default to
    just a valid ``_meta``; headers are right unless ``hdrs`` replaces them."""
    body = raw if raw is not None else {"jsonrpc": "2.0", "id": rpc_id, "method": method,
                                        "params": {"_meta": meta()} if params is None else params}
    return Request("POST", hdrs if hdrs is not None else headers(method, name), json.dumps(body).encode(),
                   rpc_id=rpc_id, **kw)


def needs(capability: str, build: Callable[[Target], Request]) -> Callable[[Target], Request | str]:
    def guarded(target: Target) -> Request | str:
        if target.discover is None:
            return "server/discover failed, so the capabilities are unknown"
        if target.capability(capability) is None:
            return f"the server does not advertise {capability}"
        return build(target)
    return guarded


# -- judging replies --------------------------------------------------------------------------------
def judge(expect: Expect, request: Request, reply: Reply, target: Target) -> list[str]:
    """The problems with ``reply`` (empty: it conforms)."""
    problems = []
    allowed = expect.status if isinstance(expect.status, tuple) else (expect.status,)
    if expect.refusable and not target.stdio and 400 <= reply.status < 500:
        # A notification or response the server cannot accept is an HTTP error whose body MAY be a
        # JSON-RPC error that has no id (streamable-http, sending messages to the server).
        answered = [m for m in reply.messages() if isinstance(m, dict) and m.get("id") is not None]
        return [f"{len(answered)} response(s) with an id, expected none"] if answered else []
    if not target.stdio and reply.status not in allowed:
        problems.append(f"HTTP status {reply.status}, expected {' or '.join(map(str, allowed))}")
    if expect.allow is not None and not target.stdio:
        allow = reply.header("allow")
        if allow is None or [m.strip().upper() for m in allow.split(",")] != [expect.allow]:
            problems.append(f"Allow header {allow!r}, expected {expect.allow!r}")
    if expect.empty:
        if reply.body:
            problems.append(f"{len(reply.body.splitlines())} lines in reply, expected none" if target.stdio
                            else f"a body of {len(reply.body)} bytes, expected none")
        return problems
    if expect.code is None and expect.id is None and expect.more is None:
        return problems
    answers = [m for m in reply.messages() if isinstance(m, dict) and ("result" in m or "error" in m)]
    if len(answers) != 1:
        return [*problems, f"{len(answers)} JSON-RPC responses in the body, expected 1"]
    answer = answers[0]
    kind_ok = True  # a result where one is expected, the expected error code where one is
    if expect.any_error:
        if "error" not in answer:
            kind_ok = False
            problems.append("a result, expected an error")
    elif expect.code is None:
        if "result" not in answer:
            kind_ok = False
            problems.append(f"an error {_short(answer.get('error'))}, expected a result")
    else:
        error = answer.get("error")
        code = error.get("code") if isinstance(error, dict) else None
        if code != expect.code:
            kind_ok = False
            problems.append(f"error code {code!r}, expected {expect.code}" if error is not None
                            else f"a result, expected error {expect.code}")
    if expect.id == ECHO and answer.get("id") != request.rpc_id:
        problems.append(f"id {answer.get('id')!r}, expected the request's id {request.rpc_id!r}")
    elif expect.id == NULL and answer.get("id", "absent") is not None:
        problems.append(f"id {answer.get('id', 'absent')!r}, expected null")
    if expect.more is not None and kind_ok:
        problems += expect.more(answer, target)
    return problems


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) < 120 else text[:117] + "..."


def cacheable(key: str) -> Callable[[Any, Target], list[str]]:
    """specification: Server > Utilities > Caching: the six cacheable results carry ttlMs (integer >= 0) and cacheScope."""
    def rule(answer: Any, target: Target) -> list[str]:
        result = answer.get("result")
        if not isinstance(result, dict):
            return ["the result is not an object"]
        problems = []
        if not isinstance(result.get(key), list):
            problems.append(f"no {key} array")
        ttl = result.get("ttlMs")
        if not isinstance(ttl, int) or isinstance(ttl, bool) or ttl < 0:
            problems.append(f"ttlMs {ttl!r}, expected an integer >= 0")
        if result.get("cacheScope") not in ("public", "private"):
            problems.append(f"cacheScope {result.get('cacheScope')!r}, expected public or private")
        if result.get("resultType", "complete") != "complete":
            problems.append(f"resultType {result.get('resultType')!r}, expected complete")
        return problems
    return rule


def discover_shape(answer: Any, target: Target) -> list[str]:
    """specification: Server > Discovery: resultType, supportedVersions (with this revision), capabilities, ttlMs, cacheScope."""
    problems = cacheable("supportedVersions")(answer, target)
    result = answer.get("result")
    if isinstance(result, dict):
        if "resultType" not in result:
            problems.append("no resultType")
        versions = result.get("supportedVersions")
        if isinstance(versions, list) and VERSION not in versions:
            problems.append(f"supportedVersions {versions!r} lacks {VERSION}")
        if not isinstance(result.get("capabilities"), dict):
            problems.append("capabilities is not an object")
    return problems


def error_data(*keys: str) -> Callable[[Any, Target], list[str]]:
    def rule(answer: Any, target: Target) -> list[str]:
        data = answer["error"].get("data")
        return [f"error.data {_short(data)} lacks {k}" for k in keys if not isinstance(data, dict) or k not in data]
    return rule


def unsupported_version(answer: Any, target: Target) -> list[str]:
    """$defs.UnsupportedProtocolVersionError: data.requested is what was sent, data.supported a non-empty subset
    of discover's supportedVersions."""
    data = answer["error"].get("data")
    if not isinstance(data, dict):
        return [f"error.data {_short(data)}, expected requested and supported"]
    problems = []
    if data.get("requested") != "v999.0.0":
        problems.append(f"data.requested {data.get('requested')!r}, expected 'v999.0.0'")
    supported = data.get("supported")
    offered = (target.discover or {}).get("supportedVersions")
    if not isinstance(supported, list) or not supported:
        problems.append(f"data.supported {supported!r}, expected a non-empty list")
    elif isinstance(offered, list) and not set(map(str, supported)) <= set(map(str, offered)):
        problems.append(f"data.supported {supported!r} is not a subset of supportedVersions {offered!r}")
    return problems


