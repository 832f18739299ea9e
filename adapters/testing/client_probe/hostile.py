"""The hostile server's decisions, sans-IO: a request in (:class:`Seen`), a :class:`Plan` out
(status, headers, the body's parts, how it ends), and a :class:`Record` of both for the judge.
The drivers (:mod:`.http_listener`, :mod:`.stdio_server`) read and write; they tell the server
how each answer ended (:meth:`HostileServer.finished`) and wait at :data:`~.script.AWAIT`
points until :meth:`HostileServer.all_answered`.

How a request is answered, in order:

1. HTTP: a path of the OAuth scenario's authorization server or resource metadata is answered
   by :class:`~.oauth.AuthorizationServer`; another path than ``/mcp`` gets 404; without a
   token it issued, the MCP endpoint gets 401 with its challenge.
2. A body that is not one JSON object gets a JSON-RPC error (-32700 or -32600, id null).
3. A client's response is noted (the server's own request it answers); on stdio neither it nor
   a notification gets anything back.
4. 2025-11-25 over HTTP (the specification's session management): ``initialize`` opens a new
   session (``$session``); another request without ``Mcp-Session-Id`` gets 400, with a session
   the server does not hold (or ended: a 404 or a DELETE ends one) 404.
5. Otherwise the first row of the script (:mod:`.script`) for the request's kind and occurrence
   answers, its markers rendered.

Each request is classified as modern (2026-07-28: its ``_meta`` names a protocol version, or it
is ``server/discover``) or initialize-era; a scenario of revision ``any`` keeps the rows of each
era apart by a prefix of their ``to``.
"""

from __future__ import annotations

import base64
import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit

from .oauth import MCP_PATH, AuthorizationServer
from .scenarios import ERA, MODERN, Scenario
from .script import Answer, Await, Context, Ending, frames, render, split

__all__ = ["KEEP_BYTES", "KEEP_TOTAL", "PV_KEY", "HostileServer", "Plan", "Record", "Seen", "classify", "era_of"]

PV_KEY: Final = "io.modelcontextprotocol/protocolVersion"
CAPS_KEY: Final = "io.modelcontextprotocol/clientCapabilities"
KEEP_BYTES: Final = 1024 * 1024  # of each request's body, what a record keeps
KEEP_TOTAL: Final = 64 * 1024 * 1024  # of all bodies of a run: past it, a record keeps only SHORT_KEEP bytes
SHORT_KEEP: Final = 4096
KEEP_WRITTEN: Final = 16 * 1024  # of each answer's body, what a record keeps
_NO_SESSION: Final = {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "Bad Request: No valid session ID provided"}}
_NO_SUCH_SESSION: Final = {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "Session not found"}}


@dataclass(frozen=True)
class Seen:
    """One request as received: the HTTP ``method`` (``LINE`` for a stdio line), ``target``,
    ``headers`` (names in lower case), ``body`` and ``at`` (``time.monotonic()`` on arrival)."""

    method: str
    target: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    at: float

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k == name), None)


@dataclass(frozen=True)
class Plan:
    """What a driver writes: ``status`` and ``headers`` (HTTP), ``parts`` (bytes, and the
    points where it awaits the client's answers), how the body ``end`` s, ``length`` (the
    Content-Length of a body that ends, else None: chunked) and ``record`` (its index)."""

    status: int
    headers: tuple[tuple[str, str], ...]
    parts: tuple[bytes | Await, ...]
    end: Ending
    length: int | None
    record: int


@dataclass
class Record:
    """One request and what answered it, for the judge. ``era``: ``2026-07-28``,
    ``2025-11-25`` or ``""`` (not MCP: an OAuth endpoint); ``row``: the script's row that
    answered (-1: the server itself); ``sent``: the JSON-RPC messages written (long strings
    shortened), of which those written whole so far were written at ``delivered`` (times;
    ``ends``: where each message ends in the body); ``asked``: the ids of the server's own requests among them; ``events``: SSE
    event ids; ``big``: the size of an oversized payload in it; ``ended``: ``done``, ``cut``,
    ``hold``, ``gone`` (the client left first) or ``open`` (the run ended first), at
    ``ended_at``; ``written``: the start of the body written; ``connection``: on stdio, which
    of the server processes the client started received it (1, 2, ...; 0 over HTTP)."""

    index: int
    at: float
    method: str
    target: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    size: int
    era: str = ""
    row: int = -1
    status: int = 0
    reply_headers: tuple[tuple[str, str], ...] = ()
    sent: list[Any] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    delivered: list[float] = field(default_factory=list)
    asked: list[int | str] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    session: str = ""
    big: int = 0
    ended: str = ""
    ended_at: float = 0.0
    written: bytes = b""
    connection: int = 0

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k == name), None)

    def readable(self) -> list[float]:
        """When the client could read each of the first messages of ``sent``: on an SSE stream
        or a stdio line each message once written whole (``delivered``), but an
        ``application/json`` body only once it ended: a client reads such a body to its end, so
        one held open or cut short delivers nothing."""
        json_body = next((v for k, v in self.reply_headers if k == "content-type"), None) == "application/json"
        return [] if json_body and self.ended != "done" else self.delivered

    def message(self) -> Any:
        """The body as JSON (None when it is not JSON)."""
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["body"], out["written"] = _b64(self.body), _b64(self.written)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Record:
        values = dict(data)
        values["headers"] = tuple(tuple(h) for h in values["headers"])
        values["reply_headers"] = tuple(tuple(h) for h in values["reply_headers"])
        values["body"], values["written"] = base64.b64decode(values["body"]), base64.b64decode(values["written"])
        return cls(**values)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def classify(message: Any) -> str:
    """``request``, ``notification``, ``response`` or ``invalid`` (not one JSON-RPC object)."""
    if not isinstance(message, dict):
        return "invalid"
    if isinstance(message.get("method"), str):
        return "request" if "id" in message else "notification"
    if "id" in message and ("result" in message or "error" in message):
        return "response"
    return "invalid"


def era_of(message: Any) -> str | None:
    """The era a message names by itself: modern when its ``_meta`` names a protocol version (or
    it is ``server/discover``), initialize-era for ``initialize``; None when it does not say."""
    if not isinstance(message, dict):
        return None
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if (isinstance(meta, dict) and PV_KEY in meta) or message.get("method") == "server/discover":
        return MODERN
    if message.get("method") == "initialize":
        return ERA
    return None


class HostileServer:
    """The decisions of one run of ``scenario``: ``script`` (default: the scenario's) with its
    first ``own`` rows the scenario's own; ``stdio`` or HTTP at ``base`` (its origin)."""

    def __init__(self, scenario: Scenario, script: Sequence[Answer] | None = None, *, own: int | None = None,
                 stdio: bool = False, base: str = "") -> None:
        self.scenario = scenario
        self.script = tuple(script if script is not None else scenario.script())
        self.own = len(scenario.answers) if own is None else own
        self.stdio = stdio
        self.records: list[Record] = []
        self.auth = AuthorizationServer(scenario.oauth, base) if scenario.oauth and not stdio else None
        self._counts: dict[str, int] = {}
        self._asks = itertools.count(1001)
        self._events = itertools.count(1)
        self._event_request: dict[str, Any] = {}
        self._sessions: dict[str, dict[str, Any]] = {}  # alive sessions: their initialize capabilities
        self._session_numbers = itertools.count(1)
        self._answered: list[Any] = []
        self._last_id: Any = None
        self._last_era = MODERN if scenario.revision == MODERN else ERA
        self._era_caps: dict[str, Any] = {}  # stdio: the initialize capabilities
        self._kept = 0

    # -- what a driver calls ---------------------------------------------------------------------
    def receive(self, seen: Seen) -> Plan:
        """Decide the answer to ``seen`` (and record both)."""
        keep = KEEP_BYTES if self._kept < KEEP_TOTAL else SHORT_KEEP  # a client that floods the server: bounded
        record = Record(len(self.records), seen.at, seen.method, seen.target, seen.headers, seen.body[:keep],
                        len(seen.body))
        self._kept += len(record.body)
        self.records.append(record)
        path = urlsplit(seen.target).path
        if self.auth is not None and self.auth.handles(path):
            return self._fixed(record, *self.auth.answer(seen.method, seen.target, seen.body))
        if not self.stdio and path != MCP_PATH:
            return self._fixed(record, 404, (("content-type", "text/plain"),), b"not found\n")
        if self.auth is not None and not self.auth.authorized(dict(seen.headers)):
            record.era = self._era(seen, None)
            return self._fixed(record, *self.auth.challenge())
        message: Any = record.message() if seen.method in ("POST", "LINE") else None
        kind = classify(message) if seen.method in ("POST", "LINE") else seen.method
        record.era = self._era(seen, message)
        if kind == "invalid":
            code, text = (-32700, "Parse error") if message is None else (-32600, "Invalid Request")
            return self._error(record, 400, {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": text}})
        if kind == "response":
            self._answered.append(message.get("id"))
        if self.stdio and kind in ("response", "notification"):
            return self._plan(record, 0, (), [], "done")
        ctx = Context(ask=self._ask, capabilities=self._capabilities(record.era, message, seen))
        if kind == "request":
            self._last_id = ctx.id = message.get("id")
        elif kind == "response":
            ctx.id = message.get("id")
        else:
            last = seen.header("last-event-id")
            ctx.id = self._event_request.get(last, self._last_id) if last else self._last_id

        def event() -> str:
            number = self._event(ctx.id)
            record.events.append(number)
            return number

        ctx.event = event
        gated = self.scenario.revision == ERA or (self.scenario.revision != MODERN and record.era == ERA)
        if not self.stdio and gated:  # a 2025-11-25 server knows nothing of modern requests
            refused = self._session_gate(record, seen, message, ctx)
            if refused is not None:
                return refused
        key, fallback = self._keys(kind, message, seen)
        ctx.n = self._counts[key] = self._counts.get(key, 0) + 1
        row = self._row(key, fallback, record.era, ctx.n)
        if row is None:
            return self._error(record, 200 if record.era == ERA else 404, {
                "jsonrpc": "2.0", "id": ctx.id, "error": {"code": -32601, "message": "Method not found"}})
        return self._answer(record, row, ctx)

    def wrote(self, record: int, count: int, at: float) -> None:
        """The driver has written ``count`` bytes of answer ``record``'s body, the last of them
        from ``at`` on (the time it began to write them)."""
        rec = self.records[record]
        while len(rec.delivered) < len(rec.ends) and rec.ends[len(rec.delivered)] <= count:
            rec.delivered.append(at)

    def finished(self, record: int, ended: str, at: float, written: bytes = b"") -> None:
        """The driver's word on how answer ``record`` ended (``done``, ``cut``, ``hold``,
        ``gone``, ``open``), when, and the start of what it wrote."""
        rec = self.records[record]
        rec.ended, rec.ended_at, rec.written = ended, at, written[:KEEP_WRITTEN]
        if not rec.ends and ended == "done":  # the server's own answer (not a row): one message, whole
            rec.delivered = [at] * len(rec.sent)

    def all_answered(self, ids: Sequence[int | str]) -> bool:
        """Whether the client has answered every one of the server's requests ``ids`` (what an
        await point waits for)."""
        return all(any(a == asked and type(a) is type(asked) for a in self._answered) for asked in ids)

    # -- the steps -------------------------------------------------------------------------------------
    def _era(self, seen: Seen, message: Any) -> str:
        named = era_of(message)
        if named is None:
            if seen.header("mcp-session-id"):
                named = ERA
            elif seen.header("mcp-protocol-version") == MODERN:
                named = MODERN
            elif seen.method in ("GET", "DELETE"):
                named = ERA
            else:
                named = self._last_era
        if classify(message) == "request":
            self._last_era = named
        return named

    def _capabilities(self, era: str, message: Any, seen: Seen) -> Mapping[str, Any]:
        params = message.get("params") if isinstance(message, dict) else None
        if era == MODERN:
            meta = params.get("_meta") if isinstance(params, dict) else None
            caps = meta.get(CAPS_KEY) if isinstance(meta, dict) else None
            return caps if isinstance(caps, dict) else {}
        if isinstance(message, dict) and message.get("method") == "initialize":
            caps = params.get("capabilities") if isinstance(params, dict) else None
            self._era_caps = caps if isinstance(caps, dict) else {}
            return self._era_caps
        if self.stdio:
            return self._era_caps
        return self._sessions.get(seen.header("mcp-session-id") or "", {})

    def _session_gate(self, record: Record, seen: Seen, message: Any, ctx: Context) -> Plan | None:
        """2025-11-25 session management: ``initialize`` opens one; the rest must name one held."""
        if isinstance(message, dict) and message.get("method") == "initialize":
            ctx.session = f"hostile-session-{next(self._session_numbers)}"
            params = message.get("params")
            caps = params.get("capabilities") if isinstance(params, dict) else None
            self._sessions[ctx.session] = caps if isinstance(caps, dict) else {}
            record.session = ctx.session
            return None
        session = seen.header("mcp-session-id")
        if not session:
            return self._error(record, 400, _NO_SESSION)
        record.session = session
        if session not in self._sessions:
            return self._error(record, 404, _NO_SUCH_SESSION)
        ctx.session = session
        return None

    def _keys(self, kind: str, message: Any, seen: Seen) -> tuple[str, str | None]:
        if kind == "request":
            return str(message["method"]), "*"
        if kind == "notification":
            return str(message["method"]), "*notification"
        if kind == "response":
            return "*response", None
        if kind == "GET" and seen.header("last-event-id"):
            return "GET last-event-id", "GET"
        return kind, None

    def _row(self, key: str, fallback: str | None, era: str, n: int) -> int | None:
        for names in ((key, f"{era} {key}"), (fallback, f"{era} {fallback}") if fallback else ()):
            for exact in (True, False):
                for index, row in enumerate(self.script):
                    if row.to in names and (row.nth == n if exact else row.nth == 0):
                        return index
        return None

    def _answer(self, record: Record, index: int, ctx: Context) -> Plan:
        row = self.script[index]
        record.row = index
        parts = split(frames(row, ctx, stdio=self.stdio), row.splits)
        if row.end == "cut" and row.kind == "json" and not self.stdio:  # the body stops at its last split, or in half
            data = b"".join(p for p in parts if isinstance(p, bytes))
            stop = max(row.splits) if row.splits and 0 < max(row.splits) < len(data) else len(data) // 2
            parts = split([data[:stop]], row.splits)
        record.sent, record.ends, record.asked, record.big = ctx.sent, ctx.ends, list(ctx.asked), ctx.big
        headers = tuple((k.lower(), str(render(v, ctx))) for k, v in row.headers)
        if not self.stdio and row.kind != "empty":
            kind = "application/json" if row.kind == "json" else "text/event-stream"
            headers = (("content-type", kind),) + (() if row.kind == "json" else (("cache-control", "no-cache"),)) + headers
        session = record.session
        if session and (row.status == 404 or (record.method == "DELETE" and row.status < 300)):
            self._sessions.pop(session, None)  # a 404 or a DELETE ends the session
        return self._plan(record, row.status, headers, parts, row.end, chunked=row.kind == "sse")

    def _fixed(self, record: Record, status: int, headers: tuple[tuple[str, str], ...], body: bytes) -> Plan:
        return self._plan(record, status, headers, [body] if body else [], "done")

    def _error(self, record: Record, status: int, message: dict[str, Any]) -> Plan:
        record.sent = [message]
        if self.stdio:
            return self._plan(record, 0, (), [json.dumps(message).encode() + b"\n"], "done")
        return self._fixed(record, status, (("content-type", "application/json"),), json.dumps(message).encode())

    def _plan(self, record: Record, status: int, headers: tuple[tuple[str, str], ...], parts: Sequence[bytes | Await],
              end: Ending, *, chunked: bool = False) -> Plan:
        record.status, record.reply_headers = status, headers
        whole = end == "done" and not chunked and all(isinstance(p, bytes) for p in parts)
        length = sum(len(p) for p in parts if isinstance(p, bytes)) if whole else None
        return Plan(status, headers, tuple(parts), end, length, record.index)

    def _ask(self) -> int:
        return next(self._asks)

    def _event(self, request_id: Any) -> str:
        event = f"ev-{next(self._events)}"
        self._event_request[event] = request_id
        return event
