"""What both of the fuzzer's oracles read from a request as sent, and the words they answer in:
:class:`Context` (what an oracle knows of the target), how the body is read (strict JSON, or
:class:`Unclear` where parsers may differ), the headers, and the builders of a
:class:`~mcpwire_adapters.testing.demand.Demand`'s parts (a refusal, a fault that names its
rule, this project's advice). The oracles are :mod:`mcpwire_adapters.testing.fuzz.oracle`
(2026-07-28) and :mod:`mcpwire_adapters.testing.fuzz.era_oracle` (the initialize era).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ...errors import McpwireAdapterError
from ..demand import Demand, Fault
from ..judge import valid_id
from ..rawwire import BOM, VERSION, Request, media_type

__all__ = ["Context", "Unclear", "accepts_both", "advice", "fault", "header_values", "is_jsonrpc_id",
           "lenient_json", "loopback_origin", "media_refusal", "refusal", "strict_json"]


@dataclass(frozen=True)
class Context:
    """What the oracle knows of the target: HTTP or stdio, a loopback URL (so a foreign Origin
    must be refused: DNS rebinding protection), its advertised capabilities (None: unknown), the tools
    whose arguments travel in ``Mcp-Param-*`` headers (server/tools#x-mcp-header) too, and
    whether it serves clients of revisions older than 2025-06-18 (which MAY take a request
    without MCP-Protocol-Version for 2025-03-26, and answer GET and DELETE by that era's rules);
    for an initialize-era target, the ``revision`` fuzzed and the session it opened; ``http_sse``:
    the HTTP+SSE transport of 2024-11-05 (a POST per message, the answers on the SSE stream)."""

    stdio: bool = False
    loopback: bool = True
    capabilities: frozenset[str] | None = None
    header_tools: frozenset[str] = frozenset()
    initialize_era: bool = False  # it serves clients older than 2025-06-18 too (an initialize naming 2025-03-26)
    revision: str = VERSION  # the revision fuzzed: 2026-07-28, or the initialize-era revision of the session
    session_id: str | None = None  # the initialize era on HTTP: the session's Mcp-Session-Id (None: none issued)
    http_sse: bool = False  # 2024-11-05's HTTP+SSE transport


class Unclear(McpwireAdapterError):
    """The request is one the specification does not settle: demand nothing past the rules every answer keeps."""


def strict_json(body: bytes) -> tuple[bool, Any]:
    """``(True, value)`` for strict JSON (a leading BOM skipped, as servers do), ``(False, None)``
    for bytes that are not JSON; :class:`Unclear` for JSON parsers may differ on (duplicate
    keys, lone surrogates, very deep nesting)."""
    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        if len({k for k, _ in items}) != len(items):
            raise Unclear("duplicate keys")
        return dict(items)

    def constant(name: str) -> Any:
        raise ValueError(name)

    try:
        text = body.removeprefix(BOM).decode("utf-8")
        value = json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    except RecursionError:
        raise Unclear("deep nesting") from None
    except ValueError:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return False, None
    if not _plain(value) or len(text) > 512 * 1024:
        raise Unclear("lone surrogates or a large body")
    return True, value


def lenient_json(body: bytes) -> bool:
    """Whether ``body``, its bytes that are not UTF-8 replaced, is JSON."""
    try:
        json.loads(body.removeprefix(BOM).decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return False
    return True


def _plain(value: Any, depth: int = 0) -> bool:
    if depth > 64:
        return False
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    if isinstance(value, dict):
        return all(_plain(k, depth) and _plain(v, depth + 1) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain(v, depth + 1) for v in value)
    return True


def header_values(request: Request) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, value in request.headers:
        out.setdefault(name.lower(), []).append(value.strip())
    return out


def accepts_both(request: Request) -> bool:
    accepts = {media_type(a) for value in header_values(request).get("accept", []) for a in value.split(",")}
    return {"application/json", "text/event-stream"} <= accepts


def refusal(rule_id: str, status: int | frozenset[int], why: str) -> Demand:
    statuses = frozenset({status}) if isinstance(status, int) else status
    return Demand(refusal=Fault(rule_id, statuses=statuses), why=(why,))


def media_refusal(headers: dict[str, list[str]]) -> Demand | None:
    """The refusal a POST's Content-Type and Accept call for (mcpwire's advice: 415, and 406 for
    an Accept of neither type), or None; Unclear for a repeated Content-Type or a wildcard Accept.
    No Accept (any type, RFC 9110), or one of the two: the rule is the client's; served or refused."""
    types = headers.get("content-type", [])
    if len(types) > 1:
        raise Unclear("a repeated Content-Type")
    if not types or media_type(types[0]) != "application/json":
        return refusal("mcpwire.content-type", 415, "mcpwire: Content-Type application/json, else 415")
    accepts = [media_type(a) for value in headers.get("accept", []) for a in value.split(",")]
    if any("*" in a for a in accepts):
        raise Unclear("a wildcard Accept")
    if accepts and "application/json" not in accepts and "text/event-stream" not in accepts:
        return refusal("mcpwire.accept", 406, "mcpwire: an Accept listing neither type is 406")
    return None


def fault(rule_id: str, *codes: int, statuses: Iterable[int] | None = (400,), advice: Fault | None = None) -> Fault:
    return Fault(rule_id, frozenset(codes) if codes else None, frozenset(statuses) if statuses is not None else None,
                 advice)


def advice(rule_id: str, *codes: int, statuses: Iterable[int] = (400,)) -> Fault:
    return Fault(rule_id, frozenset(codes), frozenset(statuses))


def is_jsonrpc_id(value: Any) -> bool:
    """JSON-RPC 2.0 section 4: an id is a String, Number or Null (else the answer's id is null)."""
    return value is None or isinstance(value, (str, float)) or valid_id(value)


def loopback_origin(origin: str) -> bool:
    return bool(re.fullmatch(r"https?://(localhost|127\.0\.0\.1|\[::1\])(:\d+)?", origin))
