"""Playing the host: answering the exchanges and listen streams the server engine hands out.

A :data:`Plan` is a list of steps a host may take on one exchange, in order: progress and
log notifications, then one final answer (complete, input_required, fail), a cancellation, or
nothing (left open). :func:`drive` runs a plan and returns everything the exchange emitted;
:func:`result_for` builds a result of the type the event needs from a variant number, so the
hypothesis suites and the atheris harnesses can share one vocabulary of host answers.

Documented host-side outcomes: a :class:`~mcpwire.LocalProtocolError` (the host misused the
API: a completion with more than 100 values, progress that does not increase...). Any other
exception escaping an exchange is a bug.
"""

from __future__ import annotations

from typing import Any, Final

from msgspec import UNSET

from mcpwire import (
    CompletionRequest,
    Exchange,
    HttpExchange,
    LocalProtocolError,
    PromptGet,
    ProtocolError,
    ResourceRead,
    ServerEvent,
    ToolCall,
    resource_not_found,
)
from mcpwire.types import (
    BlobResourceContents,
    CallToolResult,
    CompleteResult,
    Completion,
    EmbeddedResource,
    GetPromptResult,
    ImageContent,
    PromptMessage,
    ReadResourceResult,
    TextContent,
    TextResourceContents,
)

__all__ = ["Step", "Plan", "PLANS", "INPUT_REQUESTS", "result_for", "error_for", "drive"]

Step = tuple[Any, ...]
Plan = list[Step]

# Bare input requests of each kind (schema $defs.InputRequest), as plain dicts.
INPUT_REQUESTS: Final[dict[str, dict[str, Any]]] = {
    "name": {"method": "elicitation/create", "params": {
        "mode": "form", "message": "Your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}},
    "url": {"method": "elicitation/create", "params": {
        "mode": "url", "message": "Open this", "url": "https://example.com/auth", "elicitationId": "e1"}},
    "sample": {"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 10}},
    "roots": {"method": "roots/list", "params": {}},
}


def result_for(event: ServerEvent, variant: int = 0, text: str = "ok") -> Any:
    """A result answering ``event``; ``variant`` picks among a few shapes of that type."""
    if isinstance(event, ToolCall):
        if event.name == "structured":
            # variant 1: structuredContent that breaks the outputSchema (the engine answers -32603)
            return CallToolResult(content=[TextContent(text=text)],
                                  structured_content={"answer": "no"} if variant % 3 == 1 else {"answer": variant})
        if variant % 4 == 1:
            return text  # the str shorthand
        if variant % 4 == 2:
            return CallToolResult(content=[TextContent(text=text), ImageContent(data="AAAA", mime_type="image/png"),
                                           EmbeddedResource(resource=TextResourceContents(uri="test://e", text=text))],
                                  is_error=variant % 8 == 6)
        return CallToolResult(content=[TextContent(text=text)], structured_content={"text": text})
    if isinstance(event, ResourceRead):
        if variant % 2:
            return ReadResourceResult(contents=[BlobResourceContents(uri=event.uri, blob="AAECAw==", mime_type="x/y")])
        return ReadResourceResult(contents=[TextResourceContents(uri=event.uri, text=text, mime_type="text/plain")],
                                  ttl_ms=variant, cache_scope="public" if variant % 3 else UNSET)
    if isinstance(event, PromptGet):
        return GetPromptResult(description=text, messages=[PromptMessage(role="user", content=TextContent(text=text))])
    if isinstance(event, CompletionRequest):
        count = (0, 1, 100, 101)[variant % 4]  # 101: LocalProtocolError, documented
        values = [f"{text}{i}" for i in range(count)]
        return CompleteResult(completion=Completion(values=values, total=count + variant % 2, has_more=bool(variant % 2)))
    raise AssertionError(f"unknown event {event!r}")


def error_for(event: ServerEvent, variant: int = 0) -> BaseException:
    """An error a handler may fail with: a protocol error, an application code, or a crash."""
    choice = variant % 5
    if choice == 0:
        return RuntimeError("handler crashed")  # -32603, no detail on the wire
    if choice == 1:
        return ProtocolError("application error", code=-32050, data={"why": "fuzz"})
    if choice == 2:
        return ProtocolError("unencodable data", code=42, data={1j})  # data dropped, error still sent
    if choice == 3 and isinstance(event, ResourceRead):
        return resource_not_found(event.uri)
    if choice == 4:
        return ProtocolError("host detail", code=-32603, data={"why": "fuzz"})  # sent as Internal error, no data
    return ProtocolError("bad params", code=-32602)


# A few fixed plans for harnesses that pick one by number.
PLANS: Final[list[Plan]] = [
    [("complete", 0)],
    [("progress", 1.0, 10.0, "one"), ("log", "error", {"x": 1}), ("complete", 1)],
    [("input_required", ["name", "sample", "roots"], {"round": 1})],
    [("fail", 0)],
    [("progress", 1.0, None, None), ("fail", 1)],
    [("cancel",)],
    [("log", "debug", "d"), ("input_required", [], {"s": [1, 2]})],
    [("complete", 2), ("complete", 0)],  # answering twice: LocalProtocolError, documented
    [("leave",)],
    [("input_required", ["url"], None)],
    [("progress", 2.0, None, None), ("progress", 1.0, None, None)],  # not increasing: LocalProtocolError
    [("complete", 3)],
]


def drive(exchange: Exchange[Any], plan: Plan) -> tuple[list[Any], LocalProtocolError | None]:
    """Run ``plan`` on ``exchange``. Returns what it emitted (HTTP: events; stdio: bytes) and
    the LocalProtocolError that stopped the plan, if one did (a documented host error)."""
    out: list[Any] = []

    def emit(value: Any) -> None:
        if isinstance(exchange, HttpExchange):
            out.extend(value)
        elif value:
            out.append(value)

    event = exchange.event
    try:
        for step in plan:
            kind = step[0]
            if kind == "progress":
                emit(exchange.progress(step[1], total=step[2], message=step[3]))
            elif kind == "log":
                emit(exchange.log(step[1], step[2]))
            elif kind == "complete":
                emit(exchange.complete(result_for(event, step[1], *step[2:])))
            elif kind == "input_required":
                requests = {key: INPUT_REQUESTS[key] for key in step[1]}
                state = UNSET if step[2] is None else step[2]
                emit(exchange.input_required(requests, state=state))
            elif kind == "fail":
                emit(exchange.fail(error_for(event, step[1])))
            elif kind == "cancel":
                exchange.cancel()
    except LocalProtocolError as exc:
        return out, exc
    return out, None

