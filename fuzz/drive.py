"""Driving the server engine end to end for one input: admit, then play the host.

:func:`serve_http` feeds one HttpRequest to ``Server.receive_http`` and, when the answer is an
exchange or a listen stream, plays a host plan (or the stream's events) to the end, returning
every output event with the method it answers. :func:`serve_stdio` does the same for a byte
stream on a StdioConnection, cut at given points. Both leave no listen stream open on the
shared server.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

import mcpwire
from mcpwire import (
    CompletionRequest,
    HttpExchange,
    HttpListenStream,
    PromptGet,
    ResourceRead,
    StdioConnection,
    StdioExchange,
    StdioListenStream,
    ToolCall,
)

from . import host
from .targets import NOW

__all__ = ["Outcome", "serve_http", "serve_stdio", "METHOD_OF_EVENT", "body_method"]

METHOD_OF_EVENT = {ToolCall: "tools/call", ResourceRead: "resources/read", PromptGet: "prompts/get",
                   CompletionRequest: "completion/complete"}


class Outcome(msgspec.Struct, kw_only=True):
    """What one input produced: ``kind`` (reply, exchange, listen), the output events (HTTP) or
    bytes (stdio), whether the response ended, the method it answers, and the host's own
    documented error (LocalProtocolError), if its plan misused the API."""

    kind: str
    output: list[Any]
    final: bool
    method: str | None
    host_error: Exception | None = None


def body_method(body: bytes) -> str | None:
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return None
    method = message.get("method") if isinstance(message, dict) else None
    return method if isinstance(method, str) else None


def _listen_events(server: mcpwire.Server, stream: Any, close: bool) -> list[Any]:
    out = [stream.start()]
    deliveries = (server.list_changed("tools"), server.list_changed("prompts"), server.list_changed("resources"),
                  server.resource_updated("test://static-text"), server.resource_updated("https://example.com/r?id=1/x"))
    for delivery in deliveries:
        out += [o for s, o in delivery if s is stream]
    if close:
        out += [o for s, o in server.close_listeners() if s is stream]
    stream.cancel()
    return out


def serve_http(server: mcpwire.Server, request: mcpwire.HttpRequest, plan: host.Plan, *, now: float = NOW) -> Outcome:
    answer = server.receive_http(request, now=now)
    if isinstance(answer, tuple):
        return Outcome(kind="reply", output=list(answer), final=True, method=body_method(request.body))
    if isinstance(answer, HttpExchange):
        out, error = host.drive(answer, plan)
        final = answer.state is mcpwire.ExchangeState.DONE
        answer.cancel()
        return Outcome(kind="exchange", output=out, final=final, method=METHOD_OF_EVENT[type(answer.event)],
                       host_error=error)
    if isinstance(answer, HttpListenStream):
        close = not plan or plan[-1][0] != "cancel"
        events = [e for part in _listen_events(server, answer, close) for e in part]
        return Outcome(kind="listen", output=events, final=close, method="subscriptions/listen")
    raise AssertionError(f"receive_http returned {answer!r}")


def serve_stdio(server: mcpwire.Server, stream: bytes, cuts: list[int], plans: list[host.Plan], *,
                max_line_bytes: int = 4 * 1024 * 1024, now: float = NOW) -> tuple[list[Any], list[Outcome]]:
    """Feed ``stream`` cut at ``cuts``. Returns the connection's outputs (bytes, exchanges,
    streams, Cancelled) and, for each exchange and stream in order, what the host's plan (the
    plans taken in turn) made it emit."""
    conn = StdioConnection(server, max_line_bytes=max_line_bytes)
    bounds = [0, *cuts, len(stream)]
    outputs: list[Any] = []
    for start, end in zip(bounds, bounds[1:]):
        outputs += conn.receive_data(stream[start:end], now=now)
    outputs += conn.receive_eof(now=now)
    played: list[Outcome] = []
    for item in outputs:
        plan = plans[len(played) % len(plans)] if plans else [("leave",)]
        if isinstance(item, StdioExchange):
            out, error = host.drive(item, plan)
            played.append(Outcome(kind="exchange", output=out, final=item.state is mcpwire.ExchangeState.DONE,
                                  method=METHOD_OF_EVENT[type(item.event)], host_error=error))
            item.cancel()
        elif isinstance(item, StdioListenStream):
            close = not plan or plan[-1][0] != "cancel"
            out = [o for o in _listen_events(server, item, close) if o]
            played.append(Outcome(kind="listen", output=out, final=close, method="subscriptions/listen"))
    return outputs, played
