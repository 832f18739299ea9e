"""What the hostile server answers, as data: the :class:`Answer` rows a scenario is made of,
their JSON form (a replay file holds them exactly), and how a row's message templates become
the bytes sent (:func:`render`, :func:`frames`).

An :class:`Answer` answers the requests of one kind (``to``: a JSON-RPC method, or ``GET``,
``DELETE``, ``*notification``, ``*response``, ``*``) at one occurrence (``nth``, from 1) or at
every occurrence no other row claims (``nth`` 0). Its ``messages`` are JSON templates; these
markers are replaced when the answer is sent (a string that starts with ``$$`` stands for the
same string with one ``$`` less):

===================  =======================================================================
``"$id"``            the id of the request answered (for a GET: of the last request received)
``"$n"``             which occurrence of its kind the request is (1, 2, ...)
``"$k"``             which repetition of the messages this is (``repeat``), from 1
``"$state"``         a requestState new to this occurrence (``hostile-state-<n>``)
``"$ask"``           a new id for a request of the server's own (1001, 1002, ...)
``"$session"``       the initialize-era session the answer opens or serves
``"$inputs"``        inputRequests the client declared it can answer (an elicitation form, else
                     a sampling request, else roots/list); the member is left out when none
``{"$big": N}``      a string of N bytes (an oversized payload, without storing it)
===================  =======================================================================

At the top level of ``messages`` three more items: ``{"$raw": TEXT}`` is written as it is (a
malformed frame, a cut-short JSON body), ``{"$prime": true}`` is an SSE event with an id and
empty data (what a 2025-11-25 server sends so that the client can resume), and
``{"$await": true}`` waits until the client has answered every request of the server's own
sent so far (bounded by the run): those of a ``"$ask"`` id, and those whose id is written out
(a string or an integer; the fuzzer draws them).

Nothing here does I/O: :class:`mcpwire_adapters.testing.client_probe.hostile.HostileServer`
decides, the drivers write.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Final, Literal

__all__ = [
    "ENDS", "KINDS", "Answer", "Await", "Context", "Ending", "Kind", "answer_from_json", "answer_to_json",
    "frames", "render", "short", "split",
]

Kind = Literal["json", "sse", "empty"]
KINDS: tuple[Kind, ...] = ("json", "sse", "empty")
Ending = Literal["done", "cut", "hold"]
ENDS: tuple[Ending, ...] = ("done", "cut", "hold")
MAX_BIG: Final = 256 * 1024 * 1024  # the largest {"$big": N} a file may ask for
MAX_REPEAT: Final = 10_000
MAX_KEPT_ID: Final = 64 * 1024  # characters of a string id that a record keeps whole
_OMIT: Final = object()  # a member a marker leaves out ("$inputs" with nothing declared)


@dataclass(frozen=True)
class Await:
    """The point in an answer where the server waits until the client has answered its requests
    ``ids`` (those the answer sent before this point)."""

    ids: tuple[int | str, ...] = ()


@dataclass(frozen=True)
class Answer:
    """One row of a scenario: how the hostile server answers the requests it matches.

    ``status`` and ``headers`` are the HTTP response's (stdio ignores them); ``kind`` the body:
    ``json`` (the first message, ``application/json``), ``sse`` (``text/event-stream``, one
    event a message; ``event_ids`` gives each an ``id:``, ``retry_ms`` puts a ``retry:`` in
    the first), ``empty`` (no body). ``splits``: byte offsets where the body is cut into
    separate writes. ``end``: ``done`` (the body ends), ``cut`` (the connection drops at the end
    of what was written; a JSON body is cut at its last split, or in half), ``hold`` (nothing
    more is written and the stream stays open until the client leaves). ``repeat``: the
    messages are sent that many times over."""

    to: str
    nth: int = 0
    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    kind: Kind = "json"
    messages: tuple[Any, ...] = ()
    event_ids: bool = False
    retry_ms: int | None = None
    splits: tuple[int, ...] = ()
    end: Ending = "done"
    repeat: int = 1


def answer_to_json(answer: Answer) -> dict[str, Any]:
    """``answer`` as the JSON object a replay file holds (members at their default left out)."""
    default = Answer(to=answer.to)
    out: dict[str, Any] = {}
    for f in fields(Answer):
        value = getattr(answer, f.name)
        if f.name == "to" or value != getattr(default, f.name):
            out[f.name] = [list(h) for h in value] if f.name == "headers" else list(value) \
                if isinstance(value, tuple) else value
    return out


def answer_from_json(data: Mapping[str, Any]) -> Answer:
    """An :class:`Answer` from its JSON object; ValueError for one that is not."""
    known = {f.name for f in fields(Answer)}
    unknown = set(data) - known
    if unknown or not isinstance(data.get("to"), str):
        raise ValueError(f"not an answer: {sorted(unknown) or 'no to'}")
    try:
        headers = tuple((str(k), str(v)) for k, v in data.get("headers", ()))
    except (TypeError, ValueError):
        raise ValueError("an answer's headers are [name, value] pairs") from None
    answer = Answer(to=data["to"], nth=_int(data, "nth", 0), status=_int(data, "status", 200), headers=headers,
                    kind=data.get("kind", "json"), messages=tuple(data.get("messages", ())),
                    event_ids=bool(data.get("event_ids", False)), retry_ms=data.get("retry_ms"),
                    splits=tuple(int(s) for s in data.get("splits", ())), end=data.get("end", "done"),
                    repeat=_int(data, "repeat", 1))
    if answer.kind not in KINDS or answer.end not in ENDS or not 1 <= answer.repeat <= MAX_REPEAT \
            or not 100 <= answer.status <= 599 or (answer.retry_ms is not None and not isinstance(answer.retry_ms, int)):
        raise ValueError(f"not an answer: {dict(data)!r:.200}")
    return answer


def _int(data: Mapping[str, Any], key: str, default: int) -> int:
    value = data.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"an answer's {key} is an integer")
    return value


@dataclass
class Context:
    """What the markers of one answer stand for (see the module's table); ``ask`` hands out the
    ids of the server's own requests (``asked`` collects the ids of those sent), ``event`` the ids
    of SSE events; ``sent`` collects the messages rendered (their long strings shortened, a
    string id kept whole) and ``big`` the largest ``$big``."""

    id: Any = None
    n: int = 1
    session: str = ""
    capabilities: Mapping[str, Any] = field(default_factory=dict)
    ask: Callable[[], int] = lambda: 0
    event: Callable[[], str] = lambda: "ev"
    k: int = 1
    asked: list[int | str] = field(default_factory=list)
    sent: list[Any] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    big: int = 0


def render(template: Any, ctx: Context) -> Any:
    """``template`` with its markers replaced (ValueError for a marker that is not one)."""
    if isinstance(template, str):
        if template.startswith("$$"):
            return template[1:]
        if template.startswith("$"):
            return _marker(template, ctx)
        return template
    if isinstance(template, list):
        return [v for v in (render(t, ctx) for t in template) if v is not _OMIT]
    if isinstance(template, dict):
        if set(template) == {"$big"}:
            size = template["$big"]
            if not isinstance(size, int) or not 0 <= size <= MAX_BIG:
                raise ValueError(f"$big takes a size of 0 to {MAX_BIG} bytes")
            ctx.big = max(ctx.big, size)
            return "A" * size
        return {k: v for k, v in ((k, render(t, ctx)) for k, t in template.items()) if v is not _OMIT}
    return template


def _marker(name: str, ctx: Context) -> Any:
    if name == "$id":
        return ctx.id
    if name == "$n":
        return ctx.n
    if name == "$k":
        return ctx.k
    if name == "$state":
        return f"hostile-state-{ctx.n}"
    if name == "$ask":
        number = ctx.ask()
        ctx.asked.append(number)
        return number
    if name == "$session":
        return ctx.session
    if name == "$inputs":
        return _inputs(ctx) or _OMIT
    raise ValueError(f"unknown marker {name!r} (a literal $ is written $$)")


def _inputs(ctx: Context) -> dict[str, Any]:
    """Input requests of a kind the client declared (basic/patterns/mrtr: never one it did not)."""
    caps = ctx.capabilities
    if isinstance(caps.get("elicitation"), dict):
        schema = {"type": "object", "properties": {"ok": {"type": "boolean", "title": "Continue?"}}}
        return {f"confirm-{ctx.n}": {"method": "elicitation/create", "params": {
            "mode": "form", "message": f"Round {ctx.n}: continue?", "requestedSchema": schema}}}
    if isinstance(caps.get("sampling"), dict):
        return {f"sample-{ctx.n}": {"method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": f"Round {ctx.n}"}}], "maxTokens": 10}}}
    if isinstance(caps.get("roots"), dict):
        return {f"roots-{ctx.n}": {"method": "roots/list", "params": {}}}
    return {}


def frames(answer: Answer, ctx: Context, *, stdio: bool) -> list[bytes | Await]:
    """The body of ``answer`` as written: bytes and :class:`Await` points, before ``splits``;
    ``ctx.ends`` gets the offset in the body where each message of ``ctx.sent`` ends."""
    out: list[bytes | Await] = []
    if answer.kind == "empty":
        return out
    first = True
    size = 0

    def add(data: bytes, message: bool) -> None:
        nonlocal size
        out.append(data)
        size += len(data)
        if message:
            ctx.ends.append(size)

    for k in range(1, answer.repeat + 1):
        ctx.k = k
        for template in answer.messages:
            if isinstance(template, dict) and set(template) == {"$await"}:
                out.append(Await(tuple(ctx.asked)))
                continue
            if isinstance(template, dict) and set(template) == {"$prime"}:
                if not stdio and answer.kind == "sse":
                    retry = f"retry: {answer.retry_ms}\n" if first and answer.retry_ms is not None else ""
                    add(f"id: {ctx.event()}\n{retry}data: \n\n".encode(), False)
                    first = False
                continue
            raw = isinstance(template, dict) and set(template) == {"$raw"}
            if raw:
                text = template["$raw"]
                if not isinstance(text, str):
                    raise ValueError("$raw takes a string")
                data = text.encode("utf-8", "surrogatepass")
            else:
                message = render(template, ctx)
                ctx.sent.append(_kept(message))
                if isinstance(template, dict) and template.get("id") != "$ask" and _own_request(message):
                    ctx.asked.append(message["id"])  # "$ask" hands its ids out itself
                data = json.dumps(message, separators=(",", ":")).encode()
            if stdio:
                add(data if raw else data + b"\n", not raw)
            elif answer.kind == "json":
                add(data, not raw)
                return out  # one JSON value: the first message is the body
            elif answer.kind == "sse":
                if raw:
                    add(data, False)
                else:
                    head = f"id: {ctx.event()}\n" if answer.event_ids else ""
                    head += f"retry: {answer.retry_ms}\n" if first and answer.retry_ms is not None else ""
                    add(head.encode() + b"data: " + data + b"\n\n", True)
                first = False
    return out


def _kept(message: Any) -> Any:
    """``message`` as a record keeps it: long strings shortened (:func:`short`), but a string id
    whole up to :data:`MAX_KEPT_ID` characters (the judge matches the client's answer to it)."""
    kept = short(message)
    if isinstance(message, dict) and isinstance(message.get("id"), str) and len(message["id"]) <= MAX_KEPT_ID:
        kept["id"] = message["id"]
    return kept


def _own_request(message: Any) -> bool:
    """A request of the server's own with an id the client must echo (schema $defs.RequestId:
    a string or an integer; an invalid id is answered with id null, so never awaited)."""
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return False
    rpc_id = message.get("id")
    return isinstance(rpc_id, str) or (isinstance(rpc_id, int) and not isinstance(rpc_id, bool))


def split(parts: Sequence[bytes | Await], offsets: Sequence[int]) -> list[bytes | Await]:
    """``parts`` with their bytes cut at each of ``offsets`` (counted over the bytes alone)."""
    cuts = sorted({o for o in offsets if o > 0})
    out: list[bytes | Await] = []
    position = 0
    for part in parts:
        if isinstance(part, Await):
            out.append(part)
            continue
        start = 0
        for cut in cuts:
            if position < cut < position + len(part):
                out.append(part[start:cut - position])
                start = cut - position
        out.append(part[start:])
        position += len(part)
    return [p for p in out if isinstance(p, Await) or p]


def short(value: Any, limit: int = 200) -> Any:
    """``value`` with every string longer than ``limit`` replaced by its head and its size (what
    a record keeps of an oversized payload)."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:40]}... ({len(value)} characters)"
    if isinstance(value, list):
        return [short(v, limit) for v in value]
    if isinstance(value, dict):
        return {k: short(v, limit) for k, v in value.items()}
    return value

