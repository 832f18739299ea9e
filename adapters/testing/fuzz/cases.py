"""The fuzzer's cases: what is sent. One request, valid or mutated at one layer, or a stateful
sequence, built from what the target says about itself (its discover result, tools, resources
and prompts); and the replay file's form of each step.

A :class:`Step` is one request as sent (method, headers, body: a
:class:`~mcpwire_adapters.testing.rawwire.Request`) and how it is judged (``judge``, one of
:data:`~mcpwire_adapters.testing.demand.STEP_KINDS`: by the oracle from the request alone, or,
where the sequence knows more than the request shows, "error" for a round whose
``requestState`` was tampered with, "listen" for a subscription's first event, "lines" for
stdio framing where only the validity of each line is certain). The judging itself is
:func:`mcpwire_adapters.testing.demand.judge_step`. A replay file holds the steps, so a replay
judges alike.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from ..demand import STEP_KINDS
from ..era_wire import EraSession
from ..rawwire import CAPS_KEY, VERSION, Request, meta
from . import strategies as mst

__all__ = ["Info", "Step", "apply_header_mutation", "headers_for", "run_sequence", "single_steps", "step_of"]

@dataclass(frozen=True)
class Step:
    request: Request
    judge: str = "oracle"  # one of STEP_KINDS
    label: str = "valid"


@dataclass
class Info:
    """What the target said about itself before the run, and what the user allows."""

    stdio: bool
    discover: dict[str, Any] | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)  # every listed tool
    allowed_tools: list[dict[str, Any]] = field(default_factory=list)  # the ones we may call
    resources: list[str] = field(default_factory=list)
    prompts: list[dict[str, Any]] = field(default_factory=list)
    initialize_era: bool = False  # it also serves clients older than 2025-06-18 (HTTP: an initialize naming 2025-03-26)
    revision: str = VERSION  # the revision fuzzed
    session: EraSession | None = None  # the initialize era on HTTP: the session the run opened
    initialized: dict[str, Any] | None = None  # the initialize era: the InitializeResult
    http_sse: bool = False  # 2024-11-05's HTTP+SSE transport: a POST per message, the answers on the SSE stream

    @property
    def capabilities(self) -> dict[str, Any]:
        source = self.initialized if self.revision != VERSION else self.discover
        caps = (source or {}).get("capabilities")
        return caps if isinstance(caps, dict) else {}

    def header_tools(self) -> frozenset[str]:
        return frozenset(str(t.get("name")) for t in self.tools if _param_headers(t))


def _sendable(value: str) -> bool:
    return value == value.strip() and all(0x20 <= ord(c) < 0x7F for c in value)


def _wrapped(value: str) -> str:
    """Streamable HTTP, value encoding: a value that is not plain printable ASCII, or has surrounding whitespace, as base64."""
    return value if _sendable(value) else "=?base64?" + base64.b64encode(value.encode("utf-8", "replace")).decode() + "?="


def _param_headers(tool: Mapping[str, Any]) -> dict[str, str]:
    """server/tools#x-mcp-header: ``{argument: header name}`` for the tool's ``x-mcp-header`` properties."""
    schema = tool.get("inputSchema")
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return {}
    return {k: v["x-mcp-header"] for k, v in props.items()
            if isinstance(v, dict) and isinstance(v.get("x-mcp-header"), str)}


def headers_for(value: Any, info: Info | None = None) -> list[tuple[str, str]]:
    """The headers a correct client sends with the JSON message ``value`` (Streamable HTTP: server validation, custom headers): a header
    whose value cannot travel in HTTP/1.1 is left out (the oracle then expects -32020)."""
    out = [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream"),
           ("MCP-Protocol-Version", VERSION)]
    if not isinstance(value, dict):
        return out
    method, params = value.get("method"), value.get("params")
    if isinstance(method, str) and _sendable(method):
        out.append(("Mcp-Method", method))
    key = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}.get(method if isinstance(method, str) else "")
    if key and isinstance(params, dict) and isinstance(params.get(key), str):
        out.append(("Mcp-Name", _wrapped(params[key])))
    if method == "tools/call" and info is not None and isinstance(params, dict):
        tool = next((t for t in info.tools if t.get("name") == params.get("name")), None)
        arguments = params["arguments"] if isinstance(params.get("arguments"), dict) else {}
        for argument, header in (_param_headers(tool) if tool else {}).items():
            got = arguments.get(argument)
            if isinstance(got, bool):
                out.append((f"Mcp-Param-{header}", "true" if got else "false"))
            elif isinstance(got, (int, str)) and _sendable(f"x{header}"):
                out.append((f"Mcp-Param-{header}", _wrapped(str(got))))
    return out


def apply_header_mutation(headers: list[tuple[str, str]], how: str, arg: Any) -> tuple[str, list[tuple[str, str]]]:
    """``(HTTP method, headers)`` after the change :func:`strategies.header_mutations` drew."""
    canonical = {"headers.content-type": "Content-Type", "headers.accept": "Accept",
                 "headers.version": "MCP-Protocol-Version", "headers.mcp-method": "Mcp-Method",
                 "headers.mcp-name": "Mcp-Name", "headers.origin": "Origin"}
    if how == "headers.http-method":
        return str(arg), headers
    if how == "headers.drop":
        return "POST", [(k, v) for k, v in headers if k.lower() != str(arg).lower()]
    if how == "headers.repeat":
        return "POST", headers + [(k, v) for k, v in headers if k.lower() == str(arg).lower()]
    if how == "headers.lowercase-name":
        return "POST", [(k.lower() if k.lower() == str(arg).lower() else k, v) for k, v in headers]
    name = canonical[how]
    return "POST", [(k, v) for k, v in headers if k.lower() != name.lower()] + [(name, str(arg))]


def step_of(message: mst.Message, info: Info, *, http_method: str = "POST",
            headers: list[tuple[str, str]] | None = None, judge: str = "oracle", answered: bool | None = None) -> Step:
    value = message.value
    rpc_id = value.get("id") if isinstance(value, dict) else None
    first_only = isinstance(value, dict) and value.get("method") == "subscriptions/listen" and "id" in value
    return Step(Request(http_method, tuple(headers if headers is not None else headers_for(value, info)),
                        message.encode(), rpc_id=rpc_id, first_event_only=first_only, answered=answered),
                judge, message.label)


def _notifications() -> st.SearchStrategy[mst.Message]:
    """Notifications a client may send, and one no revision has: never answered (JSON-RPC 2.0 section 4.1)."""
    return st.one_of(
        st.builds(lambda i, r: mst.Message({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                            "params": {"requestId": i, **r}}, "notification.cancelled"),
                  mst.request_ids(), st.sampled_from([{}, {"reason": "fuzz"}])),
        st.builds(lambda p: mst.Message({"jsonrpc": "2.0", "method": "notifications/fuzz", "params": p},
                                        "notification.unknown"), st.dictionaries(st.text(max_size=4), mst.json_values(3),
                                                                                  max_size=2)),
    )


@st.composite
def single_steps(draw: st.DrawFn, info: Info) -> Step:
    """One request: valid, or mutated at one layer (envelope, ``_meta``, params, bytes, headers
    on HTTP, framing on stdio)."""
    base = draw(mst.requests(capabilities=info.capabilities, tools=info.allowed_tools, resources=info.resources,
                             prompts=info.prompts) | _notifications())
    value = base.value
    layers = ["valid", "envelope", "meta", "params", "bytes", "framing" if info.stdio else "headers"]
    layer = draw(st.sampled_from(layers))
    if layer == "valid":
        return step_of(base, info)
    if layer == "envelope":
        return step_of(draw(mst.mutated_envelope(value)), info)
    if layer == "meta":
        return step_of(draw(mst.mutated_meta(value)), info)
    if layer == "params":
        return step_of(draw(mst.mutated_params(value)), info)
    body = base.encode()
    if layer == "bytes":
        return step_of(draw(mst.mutated_bytes(body, allow_newline=not info.stdio)), info, headers=headers_for(value, info))
    if layer == "framing":
        return step_of(draw(mst.mutated_framing(body)), info, judge="lines", answered=False)
    how, arg = draw(mst.header_mutations())
    method, headers = apply_header_mutation(headers_for(value, info), how, arg)
    return step_of(mst.Message(value, how), info, http_method=method, headers=headers)


# -- stateful sequences -------------------------------------------------------------------------------------
Call = Callable[[Step], Any]  # send a step, judge it, return the reply's messages (raises on a failure)


def _rpc(method: str, params: dict[str, Any], rpc_id: Any, caps: dict[str, Any] | None = None) -> mst.Message:
    return mst.Message({"jsonrpc": "2.0", "id": rpc_id, "method": method,
                        "params": {**params, "_meta": meta(**({CAPS_KEY: caps} if caps is not None else {}))}},
                       f"sequence.{method}")


def _result(messages: Sequence[Any]) -> dict[str, Any] | None:
    found = next((m.get("result") for m in messages if isinstance(m, dict) and "result" in m), None)
    return found if isinstance(found, dict) else None


def _answer(request: Any) -> Any:
    """A plausible client answer to one input request (basic/patterns/mrtr)."""
    method = request.get("method") if isinstance(request, dict) else None
    if method == "elicitation/create":
        return {"action": "decline"}
    if method == "roots/list":
        return {"roots": []}
    if method == "sampling/createMessage":
        return {"role": "assistant", "content": {"type": "text", "text": "fuzz"}, "model": "fuzz"}
    return {}


def run_sequence(data: Any, info: Info, call: Call) -> None:
    """A stateful sequence, drawn step by step from ``data`` (hypothesis' ``st.data()``):
    discover, then a few of: walk a list by its cursors, call an allowed tool through its
    multi round-trip rounds (maybe tampering with the ``requestState``), listen for list changes
    and cancel, cancel a request that does not exist."""
    caps = info.capabilities
    count = 0

    def next_id() -> str:
        nonlocal count
        count += 1
        return f"seq-{count}"

    call(step_of(_rpc("server/discover", {}, next_id()), info))
    actions = ["list", "cancel"] + (["call"] if info.allowed_tools else []) + (["listen"] if caps else [])
    for _ in range(data.draw(st.integers(1, 4), label="actions")):
        action = data.draw(st.sampled_from(actions), label="action")
        if action == "list":
            methods = [m for m in mst.LIST_METHODS if m.split("/")[0] in caps]
            if not methods:
                continue
            method = data.draw(st.sampled_from(methods), label="list")
            cursor: Any = None
            for _page in range(4):
                params = {} if cursor is None else {"cursor": cursor}
                result = _result(call(step_of(_rpc(method, params, next_id()), info)))
                cursor = result.get("nextCursor") if result else None
                if not isinstance(cursor, str):
                    break
                if data.draw(st.booleans(), label="mangle cursor"):  # non-string: -32602 (schema)
                    call(step_of(_rpc(method, {"cursor": data.draw(st.sampled_from([1, None, {}]))}, next_id()), info))
        elif action == "call":
            tool = data.draw(st.sampled_from(info.allowed_tools), label="tool")
            arguments = data.draw(mst.from_schema(tool.get("inputSchema")), label="arguments")
            everything: dict[str, Any] = {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}
            round_params: dict[str, Any] = {"name": tool.get("name"), "arguments": arguments}
            for _round in range(3):
                result = _result(call(step_of(_rpc("tools/call", round_params, next_id(), everything), info)))
                if not (result and result.get("resultType") == "input_required"):
                    break
                asked = result["inputRequests"] if isinstance(result.get("inputRequests"), dict) else {}
                round_params = {"name": tool.get("name"), "arguments": arguments,
                                "inputResponses": {k: _answer(v) for k, v in asked.items()}}
                state = result.get("requestState")
                if isinstance(state, str):
                    if data.draw(st.booleans(), label="tamper"):
                        mid = len(state) // 2  # not the last character: its low bits may be padding
                        swapped = state[:mid] + ("A" if state[mid:mid + 1] != "A" else "B") + state[mid + 1:]
                        bad = {**round_params, "requestState": swapped}
                        call(step_of(_rpc("tools/call", bad, next_id(), everything), info, judge="error"))
                    round_params["requestState"] = state
        elif action == "listen":
            wanted = {k: True for k, key in (("toolsListChanged", "tools"), ("promptsListChanged", "prompts"),
                                             ("resourcesListChanged", "resources")) if key in caps}
            call(step_of(_rpc("subscriptions/listen", {"notifications": wanted}, next_id()), info, judge="listen"))
        else:
            target = data.draw(mst.request_ids(), label="cancelled id")
            call(step_of(mst.Message({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                      "params": {"requestId": target}}, "sequence.cancel"), info))


def encode_step(step: Step) -> dict[str, Any]:
    """A step for a replay file: the request as sent (body as text, or base64 when not UTF-8)."""
    request = step.request
    out: dict[str, Any] = {"method": request.method, "headers": [list(h) for h in request.headers],
                           "judge": step.judge, "label": step.label}
    try:
        out["body"] = request.body.decode("utf-8")
    except UnicodeDecodeError:
        out["bodyBase64"] = base64.b64encode(request.body).decode()
    if request.rpc_id is not None:
        out["id"] = list(request.rpc_id) if isinstance(request.rpc_id, tuple) else request.rpc_id  # a batch's ids
    if request.first_event_only:
        out["firstEventOnly"] = True
    if request.answered is not None:
        out["answered"] = request.answered
    return out


def decode_step(data: Mapping[str, Any]) -> Step:
    body = base64.b64decode(data["bodyBase64"]) if "bodyBase64" in data else str(data.get("body", "")).encode()
    judge = str(data.get("judge", "oracle"))
    if judge not in STEP_KINDS:
        raise ValueError(f"unknown judge {judge!r}")
    return Step(Request(str(data.get("method", "POST")), tuple((str(k), str(v)) for k, v in data.get("headers", [])),
                        body, rpc_id=tuple(data["id"]) if isinstance(data.get("id"), list) else data.get("id"),
                        first_event_only=bool(data.get("firstEventOnly")),
                        answered=data.get("answered")), judge, str(data.get("label", "replayed")))


def dumps_compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))
