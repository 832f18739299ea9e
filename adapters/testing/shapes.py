"""The shapes of particular answers the probe's checks look into (each problem naming its rule
of :data:`mcpwire_adapters.testing.judge.RULES`): the cacheable results (:func:`cacheable`),
server/discover's (:func:`discover_shape`), an -32022 error's data (:func:`unsupported_version`)
and a listen stream's first message (:func:`acknowledged_rule`). Each is given to a check's
:class:`~mcpwire_adapters.testing.judge.Expect` as ``more``, or called from its steps."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from .judge import TargetFacts, rule
from .rawwire import SUB_KEY, VERSION
from .verdict import Problem

__all__ = ["acknowledged_rule", "cacheable", "discover_shape", "unsupported_version"]


def _p(rule_id: str, text: str) -> Problem:
    return Problem(text, rule(rule_id))


def cacheable(key: str) -> Callable[[Any, TargetFacts], list[Problem]]:
    """Server > Utilities > Caching: the cacheable results carry ttlMs (an integer >= 0) and
    cacheScope; and ``key``, the list the schema requires."""
    def shape(answer: Any, target: TargetFacts) -> list[Problem]:
        result = answer.get("result")
        if not isinstance(result, dict):
            return [_p("jsonrpc.result-by-method", "the result is not an object")]
        problems = []
        if not isinstance(result.get(key), list):
            problems.append(_p("jsonrpc.result-by-method", f"no {key} array"))
        ttl = result.get("ttlMs")
        if not isinstance(ttl, int) or isinstance(ttl, bool) or ttl < 0:
            problems.append(_p("mcp.ttl" if "ttlMs" in result else "mcp.caching", f"ttlMs {ttl!r}, expected an integer >= 0"))
        if result.get("cacheScope") not in ("public", "private"):
            problems.append(_p("mcp.caching", f"cacheScope {result.get('cacheScope')!r}, expected public or private"))
        if result.get("resultType", "complete") != "complete":
            problems.append(_p("mcp.input-required-methods", f"resultType {result.get('resultType')!r}, expected complete"))
        return problems
    return shape


def discover_shape(answer: Any, target: TargetFacts) -> list[Problem]:
    """Server > Discovery: resultType, supportedVersions (with this revision), capabilities, ttlMs, cacheScope."""
    problems = cacheable("supportedVersions")(answer, target)
    result = answer.get("result")
    if isinstance(result, dict):
        if "resultType" not in result:
            problems.append(_p("mcp.result-type", "no resultType"))
        versions = result.get("supportedVersions")
        if isinstance(versions, list) and VERSION not in versions:
            problems.append(_p("mcpwire.discover-versions", f"supportedVersions {versions!r} lacks {VERSION}"))
        if not isinstance(result.get("capabilities"), dict):
            problems.append(_p("jsonrpc.result-by-method", "capabilities is not an object"))
    return problems


def unsupported_version(answer: Any, target: TargetFacts) -> list[Problem]:
    """$defs.UnsupportedProtocolVersionError: data.requested is what was sent, data.supported a
    non-empty list (MUST: the error lists the supported versions); a subset of discover's
    supportedVersions (advice)."""
    data = answer["error"].get("data")
    if not isinstance(data, dict):
        return [_p("mcp.version-unsupported", f"error.data {_short(data)}, expected requested and supported")]
    problems = []
    if data.get("requested") != "v999.0.0":
        problems.append(_p("mcp.version-unsupported", f"data.requested {data.get('requested')!r}, expected 'v999.0.0'"))
    supported = data.get("supported")
    offered = (target.discover or {}).get("supportedVersions")
    if not isinstance(supported, list) or not supported:
        problems.append(_p("mcp.version-unsupported", f"data.supported {supported!r}, expected a non-empty list"))
    elif isinstance(offered, list) and not set(map(str, supported)) <= set(map(str, offered)):
        problems.append(_p("mcpwire.discover-versions",
                           f"data.supported {supported!r} is not a subset of supportedVersions {offered!r}"))
    return problems


def acknowledged_rule(messages: Sequence[Any], listen_id: Any) -> list[Problem]:
    """A listen stream the server can serve (a well-formed subscriptions/listen for list changes
    it advertises) starts with notifications/subscriptions/acknowledged, carrying the listen
    request's id as its subscriptionId and a notifications object (basic/patterns/subscriptions).
    A fuzz case's listen may be mutated, so :func:`mcpwire_adapters.testing.demand.sequence_rules`
    holds it to less."""
    first = messages[0] if messages else None
    if not isinstance(first, dict) or first.get("method") != "notifications/subscriptions/acknowledged":
        return [_p("mcp.listen-ack", f"first message {json.dumps(first)[:120]}, expected "
                                     "notifications/subscriptions/acknowledged")]
    problems = []
    params: dict[str, Any] = first["params"] if isinstance(first.get("params"), dict) else {}
    sub = params["_meta"].get(SUB_KEY) if isinstance(params.get("_meta"), dict) else None
    if sub != listen_id:
        problems.append(_p("mcp.listen-ack", f"subscriptionId {sub!r}, expected the listen request's id {listen_id!r}"))
    if not isinstance(params.get("notifications"), dict):
        problems.append(_p("mcp.listen-ack", "the acknowledgement has no notifications object"))
    return problems


def _short(value: Any, width: int = 120) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) < width else text[:width - 3] + "..."
