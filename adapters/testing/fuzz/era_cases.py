"""The fuzzer's cases for a target of the initialize era: requests of that era's methods (no
``_meta`` needed: the version and capabilities were negotiated by ``initialize``), sent on the
session the run opened (HTTP: its ``Mcp-Session-Id`` and, from 2025-06-18, its
``MCP-Protocol-Version`` on every request), on the initialized stdio connection, or to the
endpoint of the HTTP+SSE connection (2024-11-05: its ``Content-Type``); valid, or
mutated at one layer (the envelope, the params, the bytes, the session's headers, stdio's
framing), or batched (2025-03-26 receives batches; the later revisions have none); and a short
stateful sequence (a list walked by its cursors, a tool call, a cancellation). What each calls
for is :func:`mcpwire_adapters.testing.fuzz.era_oracle.expect_era`'s to say.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from ..era_rules import SESSION_REVISIONS
from ..era_wire import ERA_BASE
from ..rawwire import Request
from ..rawwire_sse import LEGACY_HEADERS
from . import strategies as mst
from .cases import Info, Step

__all__ = ["era_single_steps", "run_era_sequence"]

LIST_METHODS = ("tools/list", "prompts/list", "resources/list", "resources/templates/list")
_IDS = mst.request_ids()


def _request(method: str, params: st.SearchStrategy[dict[str, Any]] | None = None) -> st.SearchStrategy[mst.Message]:
    if params is None:
        return st.builds(lambda i: mst.Message({"jsonrpc": "2.0", "id": i, "method": method}), _IDS)
    return st.builds(lambda i, p: mst.Message({"jsonrpc": "2.0", "id": i, "method": method, "params": p}), _IDS, params)


def era_requests(info: Info) -> st.SearchStrategy[mst.Message]:
    """Valid requests of the methods the server declared (its InitializeResult's capabilities),
    calling only the allowed tools, reading the listed resources, getting the listed prompts."""
    caps = info.capabilities
    options = [_request("ping")]
    for method in LIST_METHODS:
        if method.split("/")[0] in caps:
            options.append(_request(method, st.just({})))
    for tool in info.allowed_tools:
        name = tool.get("name")
        if isinstance(name, str):
            options.append(_request("tools/call", st.builds(lambda a, n=name: {"name": n, "arguments": a},
                                                            mst.from_schema(tool.get("inputSchema")))))
    if "resources" in caps and info.resources:
        options.append(_request("resources/read", st.builds(lambda u: {"uri": u}, st.sampled_from(info.resources))))
    for prompt in info.prompts:
        name = prompt.get("name")
        if isinstance(name, str) and "prompts" in caps:
            options.append(_request("prompts/get", st.just({"name": name, "arguments": {}})))
    if "logging" in caps:
        options.append(_request("logging/setLevel", st.builds(lambda level: {"level": level},
                                                              st.sampled_from(mst.LOG_LEVELS))))
    return st.one_of(options)


def _notifications() -> st.SearchStrategy[mst.Message]:
    return st.one_of(
        st.builds(lambda i: mst.Message({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                         "params": {"requestId": i, "reason": "fuzz"}}, "notification.cancelled"), _IDS),
        st.just(mst.Message({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
                            "notification.roots-changed")),
        st.builds(lambda p: mst.Message({"jsonrpc": "2.0", "method": "notifications/fuzz", "params": p},
                                        "notification.unknown"), st.dictionaries(st.text(max_size=4),
                                                                                 mst.json_values(3), max_size=2)),
    )


def _session_headers(info: Info) -> list[tuple[str, str]]:
    if info.http_sse:
        return list(LEGACY_HEADERS)
    if info.stdio or info.session is None:
        return []
    return [*ERA_BASE, *info.session.headers()]


def _header_mutations(info: Info) -> st.SearchStrategy[list[tuple[str, str]]]:
    """One change to the session's headers: the session id dropped or another, the version
    header dropped or another, Content-Type, Accept, a foreign Origin (HTTP+SSE: Content-Type
    dropped or another, a foreign Origin)."""
    base = _session_headers(info)

    def without(name: str) -> list[tuple[str, str]]:
        return [(k, v) for k, v in base if k.lower() != name.lower()]

    def set_(name: str, value: str) -> list[tuple[str, str]]:
        return [*without(name), (name, value)]

    content_types = st.sampled_from(["text/plain", "application/json; charset=utf-8", ""])
    origins = st.sampled_from(["http://evil.example", "null"]).map(lambda v: [*base, ("Origin", v)])
    if info.http_sse:
        return st.one_of(content_types.map(lambda v: set_("Content-Type", v)), st.just(without("Content-Type")), origins)
    options: list[st.SearchStrategy[list[tuple[str, str]]]] = [
        content_types.map(lambda v: set_("Content-Type", v)),
        st.sampled_from(["application/json", "text/event-stream", "text/html"]).map(lambda v: set_("Accept", v)),
        origins,
        st.just(without("Mcp-Session-Id")),
        st.sampled_from(["fuzz-no-such-session", "x"]).map(lambda v: set_("Mcp-Session-Id", v)),
    ]
    if info.revision in SESSION_REVISIONS[:2]:
        options += [st.just(without("MCP-Protocol-Version")),
                    st.sampled_from(["1999-01-01", "v9", "", *SESSION_REVISIONS]).map(
                        lambda v: set_("MCP-Protocol-Version", v))]
    return st.one_of(options)


def _step(message: mst.Message, info: Info, headers: list[tuple[str, str]] | None = None, *,
          judge: str = "oracle", answered: bool | None = None) -> Step:
    value = message.value
    rpc_id = value.get("id") if isinstance(value, dict) else None
    return Step(Request("POST", tuple(_session_headers(info) if headers is None else headers), message.encode(),
                        rpc_id=rpc_id, answered=answered), judge, message.label)


@st.composite
def era_single_steps(draw: st.DrawFn, info: Info) -> Step:
    """One message on the session: valid, or mutated at one layer, or a batch of valid ones."""
    base = draw(era_requests(info) | _notifications())
    value = base.value
    layers = ["valid", "envelope", "params", "bytes", "batch", "framing" if info.stdio else "headers"]
    layer = draw(st.sampled_from(layers))
    if layer == "valid":
        return _step(base, info)
    if layer == "envelope":
        return _step(draw(mst.mutated_envelope(value)), info)
    if layer == "params":
        return _step(draw(mst.mutated_params(value)), info)
    if layer == "batch":
        more = draw(st.lists(era_requests(info) | _notifications(), min_size=1, max_size=2))
        return _step(mst.Message([value, *(m.value for m in more)], "batch"), info)
    body = base.encode()
    if layer == "bytes":
        return _step(draw(mst.mutated_bytes(body, allow_newline=not info.stdio)), info)
    if layer == "framing":
        return _step(draw(mst.mutated_framing(body)), info, judge="lines", answered=False)
    return _step(mst.Message(value, "headers.session"), info, draw(_header_mutations(info)))


Call = Callable[[Step], Any]


def run_era_sequence(data: Any, info: Info, call: Call) -> None:
    """A short stateful sequence on the session: ping, then a few of: walk a list by its cursors,
    call an allowed tool, cancel a request that does not exist."""
    count = 0

    def message(method: str, params: dict[str, Any] | None = None) -> mst.Message:
        nonlocal count
        count += 1
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": f"seq-{count}", "method": method}
        if params is not None:
            body["params"] = params
        return mst.Message(body, f"sequence.{method}")

    call(_step(message("ping"), info))
    methods = [m for m in LIST_METHODS if m.split("/")[0] in info.capabilities]
    actions = ["cancel"] + (["list"] if methods else []) + (["call"] if info.allowed_tools else [])
    for _ in range(data.draw(st.integers(1, 3), label="actions")):
        action = data.draw(st.sampled_from(actions), label="action")
        if action == "list":
            method, cursor = data.draw(st.sampled_from(methods), label="list"), None
            for _page in range(4):
                messages = call(_step(message(method, {} if cursor is None else {"cursor": cursor}), info))
                result = next((m.get("result") for m in messages if isinstance(m, dict) and "result" in m), None)
                cursor = result.get("nextCursor") if isinstance(result, dict) else None
                if not isinstance(cursor, str):
                    break
        elif action == "call":
            tool = data.draw(st.sampled_from(info.allowed_tools), label="tool")
            arguments = data.draw(mst.from_schema(tool.get("inputSchema")), label="arguments")
            call(_step(message("tools/call", {"name": tool.get("name"), "arguments": arguments}), info))
        else:
            target = data.draw(_IDS, label="cancelled id")
            call(_step(mst.Message({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                    "params": {"requestId": target}}, "sequence.cancel"), info))
