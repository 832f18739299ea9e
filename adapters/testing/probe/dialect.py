"""What a server speaks, asked before the checks: :func:`negotiate_http` finds the revisions and
the transport a target negotiates, as a :class:`Negotiated` the reports show with links to each
revision's pages.

Over HTTP: a well-formed ``server/discover`` (2026-07-28), then an ``initialize`` naming each
initialize-era revision of Streamable HTTP (2025-11-25, 2025-06-18, 2025-03-26; a revision is
served when the server answers with that same version, as the lifecycle's version negotiation
requires); when every POST fails with 400, 404 or 405 and nothing was negotiated, the target
may be a server of the older HTTP+SSE transport, which the backwards compatibility section of
2025-03-26's transports describes the clients' way of detecting: a GET of the URL, whose first
SSE event is ``endpoint`` (then an ``initialize`` naming 2024-11-05, posted there). A 401 is kept:
the server asks for authorization (the auth checks read it).

Over stdio each revision needs a process of its own (an ``initialize`` turns a connection into a
session of one revision): the runner starts one per revision and negotiates there, then runs
that revision's checks on the same process.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ...client.session import TransportError
from ..era_rules import LEGACY, SESSION_REVISIONS, spec_page
from ..era_wire import ERA_BASE, initialize, response_of
from ..rawwire import VERSION, Exchange, Request, Send, first_result, rpc
from ..rawwire_sse import legacy_link
from .checks import HTTP_SSE, STDIO, STREAMABLE_HTTP

__all__ = ["Negotiated", "negotiate_http", "pages_of"]

_TRANSPORT_PAGE = {STREAMABLE_HTTP: "basic/transports#streamable-http", HTTP_SSE: "basic/transports#http-with-sse",
                   STDIO: "basic/transports#stdio"}
_TRANSPORT_PAGE_2026 = {STREAMABLE_HTTP: "basic/transports/streamable-http", STDIO: "basic/transports/stdio"}
_COMPAT_STATUSES = (400, 404, 405)  # a POST failing so: maybe a server of the HTTP+SSE transport


@dataclass
class Negotiated:
    """What the target speaks: its ``transport``, the ``revisions`` it negotiated (newest first),
    its discover result (2026-07-28), the InitializeResult of each initialize-era revision
    (``initialized``), the ``challenge`` (a 401 it answered, if it asks for authorization), the
    HTTP+SSE ``endpoint`` it named, and ``notes``: what else was seen on the way."""

    transport: str
    revisions: list[str] = field(default_factory=list)
    discover: dict[str, Any] | None = None
    initialized: dict[str, dict[str, Any]] = field(default_factory=dict)
    challenge: Exchange | None = None
    endpoint: str | None = None
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"transport": self.transport, "revisions": self.revisions, "endpoint": self.endpoint,
                "authorization": self.challenge is not None, "notes": self.notes,
                "pages": [{"revision": r, "url": u} for r, u in pages_of(self.transport, self.revisions)]}


def pages_of(transport: str, revisions: Sequence[str]) -> list[tuple[str, str]]:
    """For each revision, the page of its specification that defines ``transport``."""
    out = []
    for revision in revisions:
        if revision == VERSION:
            out.append((revision, spec_page(revision, _TRANSPORT_PAGE_2026.get(transport, "basic"))))
        else:
            out.append((revision, spec_page(revision, _TRANSPORT_PAGE[HTTP_SSE if revision == LEGACY
                                                                      and transport != STDIO else transport])))
    return out


def _version_of(exchange: Exchange) -> Any:
    result = (response_of(exchange[1]) or {}).get("result")
    return result.get("protocolVersion") if isinstance(result, dict) else None


async def negotiate_http(send: Send, url: str, *, timeout: float, rate: float,
                         headers: tuple[tuple[str, str], ...] = ()) -> Negotiated:
    """What the server at ``url`` speaks over HTTP (see the module docstring; ``headers`` go
    with the HTTP+SSE transport's requests, which do not go through ``send``).
    :class:`TransportError` when the first server/discover gets no reply at all."""
    found = Negotiated(STREAMABLE_HTTP)
    first = await send(rpc("server/discover", rpc_id="probe-discover"))
    if first[1] is None:
        raise TransportError(f"cannot reach {url}: {first[2]}")
    found.discover = first_result(first[1])
    if found.discover is not None:
        found.revisions.append(VERSION)
    refused = [first[1].status]
    if first[1].status == 401:
        found.challenge = first
    for revision in SESSION_REVISIONS:
        sent = await send(Request("POST", ERA_BASE, json.dumps(initialize(revision, f"probe-{revision}")).encode(),
                                  rpc_id=f"probe-{revision}"))
        reply = sent[1]
        if reply is None:
            found.notes.append(f"initialize naming {revision}: no reply ({sent[2]})")
            continue
        refused.append(reply.status)
        if reply.status == 401 and found.challenge is None:
            found.challenge = sent
        version = _version_of(sent)
        if version == revision:
            found.revisions.append(revision)
            found.initialized[revision] = (response_of(reply) or {}).get("result") or {}
            session = reply.header("mcp-session-id")
            if session:  # end it: the probe opens a session of its own for each check
                await send(Request("DELETE", (("Mcp-Session-Id", session), ("MCP-Protocol-Version", revision))))
        elif version is not None:
            found.notes.append(f"initialize naming {revision} was answered with {version}")
    if not found.revisions and all(s in _COMPAT_STATUSES for s in refused):
        await _legacy(found, url, timeout=timeout, rate=rate, headers=headers)
    return found


async def _legacy(found: Negotiated, url: str, *, timeout: float, rate: float,
                  headers: tuple[tuple[str, str], ...]) -> None:
    """A GET of ``url``: an HTTP+SSE server's first event names its POST endpoint."""
    async with legacy_link(url, timeout=timeout, rate=rate, headers=headers) as link:
        if link.endpoint is None:
            found.notes.append("every POST was refused (400, 404 or 405), and a GET opened no SSE stream whose first "
                               f"event is endpoint (HTTP {link.stream.status})")
            return
        found.transport, found.endpoint = HTTP_SSE, link.endpoint
        await link.post(initialize(LEGACY, "probe-legacy"))
        answer = await link.answer("probe-legacy")
        version = _version_of(answer)
        found.revisions.append(LEGACY)
        found.initialized[LEGACY] = (response_of(answer[1]) or {}).get("result") or {}
        if version != LEGACY:
            found.notes.append(f"initialize naming {LEGACY} over HTTP+SSE was answered with {version!r}")
