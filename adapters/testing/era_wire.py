"""Initialize-era requests for the tools that test other servers: what a correct client of
revisions 2025-11-25, 2025-06-18, 2025-03-26 and 2024-11-05 sends, byte for byte, and nothing
about whether the answer conforms (that is :mod:`mcpwire_adapters.testing.judge`'s).

- :func:`initialize`, :func:`request`, :func:`notification`: the messages (no ``_meta`` needed:
  those revisions carry the version and capabilities once, in ``initialize``);
- :class:`EraSession`: a session of Streamable HTTP, its ``Mcp-Session-Id`` (if the server
  issued one) and the headers every later request carries (``MCP-Protocol-Version`` from
  2025-06-18 on: Basic > Transports, Protocol Version Header); :meth:`EraSession.post` builds a
  request on it;
- :func:`open_session`: ``initialize`` naming a revision, then ``notifications/initialized``
  (Basic > Lifecycle, Initialization): the session, or why there is none;
- :func:`response_of`: the one JSON-RPC response in a reply.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .rawwire import Exchange, Reply, Request, Send

__all__ = ["ERA_BASE", "EraSession", "initialize", "notification", "open_session", "request", "response_of",
           "sends_version_header"]

ERA_BASE: tuple[tuple[str, str], ...] = (("Content-Type", "application/json"),
                                         ("Accept", "application/json, text/event-stream"))
"""The headers of every POST of Streamable HTTP: a JSON body, and an Accept naming both answers."""

_NO_HEADER = frozenset({"2025-03-26", "2024-11-05"})  # revisions that define no MCP-Protocol-Version header


def sends_version_header(revision: str) -> bool:
    """Whether a client of ``revision`` sends ``MCP-Protocol-Version`` after initialize (2025-06-18 on)."""
    return revision not in _NO_HEADER


def initialize(version: str, rpc_id: Any = "init", *, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    """An ``initialize`` request naming ``version``."""
    return {"jsonrpc": "2.0", "id": rpc_id, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": capabilities or {},
        "clientInfo": {"name": "mcpwire-probe", "version": "1"}}}


def request(method: str, rpc_id: Any, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """A request of ``method`` (no params when None)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rpc_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def response_of(reply: Reply | None) -> dict[str, Any] | None:
    """The one JSON-RPC response (a result or an error) in ``reply``, or None."""
    found = [m for m in (reply.messages() if reply is not None and reply.body else [])
             if isinstance(m, dict) and ("result" in m or "error" in m)]
    return found[0] if len(found) == 1 else None


@dataclass(frozen=True)
class EraSession:
    """A session of Streamable HTTP in ``revision``: ``session_id`` (None: the server issued
    none, a stateless server) and the ``result`` of its initialize."""

    revision: str
    session_id: str | None
    result: dict[str, Any]

    def headers(self, *, session_id: str | None = None, version: str | None = None,
                drop: Sequence[str] = ()) -> tuple[tuple[str, str], ...]:
        """The headers after initialize: ``Mcp-Session-Id`` (``session_id`` instead, if given)
        and, from 2025-06-18, ``MCP-Protocol-Version`` (``version`` instead, if given); the
        names in ``drop`` left out."""
        out: list[tuple[str, str]] = []
        sid = session_id if session_id is not None else self.session_id
        if sid is not None:
            out.append(("Mcp-Session-Id", sid))
        if version is not None or sends_version_header(self.revision):
            out.append(("MCP-Protocol-Version", version or self.revision))
        dropped = {d.lower() for d in drop}
        return tuple((k, v) for k, v in out if k.lower() not in dropped)

    def post(self, message: Any, *, raw: bytes | None = None, headers: tuple[tuple[str, str], ...] | None = None,
             **kw: Any) -> Request:
        """A POST of ``message`` (``raw``: these bytes) on the session (``headers``: the session
        headers to send instead of :meth:`headers`)."""
        body = raw if raw is not None else json.dumps(message).encode()
        rpc_id = message.get("id") if isinstance(message, dict) else None
        return Request("POST", ERA_BASE + (self.headers() if headers is None else headers), body, rpc_id=rpc_id, **kw)


async def open_session(send: Send, revision: str, evidence: list[Exchange], *, rpc_id: Any = "init",
                       extra: tuple[tuple[str, str], ...] = ()) -> EraSession | str:
    """``initialize`` naming ``revision``, then ``notifications/initialized`` on the session it
    opened (when the server issued an ``Mcp-Session-Id``: a stateless server keeps nothing to
    initialize): the session, or why there is none (no reply, an error, another revision). The
    exchanges are added to ``evidence``."""
    sent = await send(Request("POST", ERA_BASE + extra, json.dumps(initialize(revision, rpc_id)).encode(),
                              rpc_id=rpc_id))
    evidence.append(sent)
    if sent[1] is None:
        return f"no reply to initialize: {sent[2]}"
    answer = response_of(sent[1])
    result = answer.get("result") if answer is not None else None
    if not isinstance(result, dict):
        return f"initialize naming {revision} was not answered with a result (HTTP {sent[1].status})"
    if result.get("protocolVersion") != revision:
        return f"initialize naming {revision} was answered with {result.get('protocolVersion')!r}"
    session = EraSession(revision, sent[1].header("mcp-session-id"), result)
    if session.session_id is not None:
        evidence.append(await send(session.post(notification("notifications/initialized"))))
    return session
