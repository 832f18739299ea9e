"""The method table (``mcpwire/wire/methods.py``) held against the official schema, and read
by every place that needs one of its facts.

Each column is checked against the vendored schema of its revision, so a row cannot claim
what the schema does not say: the methods of ClientRequest, the result type of each, which
results are cacheable (``ttlMs``), which requests take ``inputResponses``, which lists have
which item key and item type, which params member ``Mcp-Name`` mirrors, which notifications
each side sends.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import msgspec
import pytest

from mcpwire.wire.headers import NAMED_METHODS
from mcpwire.wire.methods import (
    CACHEABLE_METHODS, LIST_CHANGED, LIST_METHODS, METHODS, MRTR_METHODS, NOTIFICATIONS, SERVER_REQUESTS, methods_of,
    notifications_of,
)
from mcpwire.wire.versions import REVISIONS

SCHEMAS = Path(__file__).resolve().parents[1] / "data" / "schemas"


@cache
def defs(revision: str) -> dict[str, Any]:
    schema: dict[str, dict[str, Any]] = json.loads((SCHEMAS / f"schema-{revision}.json").read_text())
    return schema.get("$defs") or schema["definitions"]  # older schemas say "definitions"


def _ref(node: Any) -> str:
    return str(node["$ref"]).rsplit("/", 1)[-1]


def _union(revision: str, name: str) -> dict[str, dict[str, Any]]:
    """The members of a union $def, by method name."""
    d = defs(revision)
    node: dict[str, Any] = d[name]
    members = [_ref(m) for m in node["anyOf"]] if "anyOf" in node else [name]
    return {str(d[m]["properties"]["method"]["const"]): d[m] for m in members}


def _params_def(revision: str, request: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = defs(revision)[_ref(request["properties"]["params"])]
    return found


# 2025-11-25's schema has the experimental tasks methods of that revision in its core unions: the
# table has them as that revision's rows (SESSION_METHODS). 2026-07-28 has the tasks extension's
# instead (io.modelcontextprotocol/tasks), held against the extension's own schema.
TASKS_EXTENSION = {"tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "notifications/tasks/status"}


@cache
def _extension_requests() -> dict[str, dict[str, Any]]:
    """The tasks extension's request definitions by method (its vendored schema)."""
    d: dict[str, Any] = json.loads((SCHEMAS / "ext-tasks-draft.json").read_text())["$defs"]
    out: dict[str, dict[str, Any]] = {}
    for name in ("GetTaskRequest", "UpdateTaskRequest", "CancelTaskRequest"):
        own = d[name]["allOf"][1]  # allOf: [JSONRPCRequest, the method's own members]
        out[str(own["properties"]["method"]["const"])] = own
    return out


def _extension_params(request: dict[str, Any]) -> dict[str, Any]:
    params: dict[str, Any] = request["properties"]["params"]
    return params
# The columns below the row set (result types, ttlMs, inputResponses, list shapes, Mcp-Name)
# are facts of the 2026-07-28 schema; initialize-era results are shaped from them on the way out.
STATELESS = ("2026-07-28",)


@pytest.mark.parametrize("revision", REVISIONS)
def test_rows_are_exactly_the_client_requests_of_the_schema(revision: str) -> None:
    extension = set(_extension_requests()) if revision in STATELESS else set()
    assert methods_of(revision) == set(_union(revision, "ClientRequest")) | extension
    for name in extension:
        assert METHODS[name].extension == "io.modelcontextprotocol/tasks" and METHODS[name].revisions == {revision}


@pytest.mark.parametrize("revision", STATELESS)
def test_result_types_are_the_schemas_results(revision: str) -> None:
    results = {_ref(m) for m in defs(revision)["ServerResult"]["anyOf"]}
    for name in methods_of(revision) - set(_extension_requests()):  # the extension's: tests/schema_check.py
        result = METHODS[name].result
        assert result is not None and result.__name__ in results, name


@pytest.mark.parametrize("revision", STATELESS)
def test_cacheable_is_what_carries_ttl(revision: str) -> None:
    d = defs(revision)
    for name in methods_of(revision) - set(_extension_requests()):
        result_def = d[METHODS[name].result.__name__]  # type: ignore[union-attr]
        assert ("ttlMs" in result_def.get("properties", {})) == (name in CACHEABLE_METHODS), name


@pytest.mark.parametrize("revision", STATELESS)
def test_input_required_is_what_takes_input_responses(revision: str) -> None:
    for name, request in _union(revision, "ClientRequest").items():
        takes = "inputResponses" in _params_def(revision, request).get("properties", {})
        assert takes == (name in MRTR_METHODS), name


@pytest.mark.parametrize("revision", STATELESS)
def test_lists_key_and_item_type(revision: str) -> None:
    d = defs(revision)
    for name, request in _union(revision, "ClientRequest").items():
        spec = METHODS[name]
        paginated = "cursor" in _params_def(revision, request).get("properties", {})
        assert paginated == spec.paginated == (name in LIST_METHODS), name
        if not paginated:
            continue
        result_def = d[spec.result.__name__]  # type: ignore[union-attr]
        assert spec.list_key in result_def["required"], name
        assert spec.item is not None and _ref(result_def["properties"][spec.list_key]["items"]) == spec.item.__name__
        assert spec.list_changed is not None and spec.capability == spec.list_changed


@pytest.mark.parametrize("revision", STATELESS)
def test_name_param_is_a_string_member_of_the_params(revision: str) -> None:
    for name, request in _union(revision, "ClientRequest").items():
        spec = METHODS[name]
        if spec.name_param is not None:
            member = _params_def(revision, request)["properties"][spec.name_param]
            assert member["type"] == "string", name
    for name, request in _extension_requests().items():
        assert METHODS[name].name_param == "taskId"
        assert _extension_params(request)["properties"]["taskId"]["type"] == "string", name
    assert NAMED_METHODS == {"tools/call": "name", "prompts/get": "name", "resources/read": "uri", "tasks/get": "taskId",
                             "tasks/update": "taskId", "tasks/cancel": "taskId"}


@pytest.mark.parametrize("revision", REVISIONS)
def test_notifications_and_who_sends_them(revision: str) -> None:
    client = set(_union(revision, "ClientNotification"))
    server = set(_union(revision, "ServerNotification"))
    if revision in STATELESS:
        server.add("notifications/tasks")  # the tasks extension's (its schema's TaskStatusNotification)
    assert notifications_of(revision) == client | server
    for name, spec in NOTIFICATIONS.items():
        if revision not in spec.revisions:
            continue
        if revision not in STATELESS and name == "notifications/progress":
            # Initialize-era clients may report progress too (of a server-to-client request);
            # mcpwire's clients never do, so the row keeps the 2026-07-28 sender.
            assert name in client and name in server
            continue
        assert ("client" in spec.senders) == (name in client), name
        assert ("server" in spec.senders) == (name in server), name


def test_listen_flags_are_members_of_the_subscription_filter() -> None:
    members = set(defs("2026-07-28")["SubscriptionFilter"]["properties"])
    extension: dict[str, Any] = json.loads((SCHEMAS / "ext-tasks-draft.json").read_text())["$defs"]
    members |= set(extension["TaskSubscriptionNotifications"]["properties"])  # taskIds, the tasks extension's
    flags = {spec.listen_flag for spec in NOTIFICATIONS.values() if spec.listen_flag}
    assert flags == members
    assert {spec.list_changed for spec in LIST_CHANGED.values()} == {"tools", "prompts", "resources"}


def test_params_decoders_are_built_once_per_row() -> None:
    decoders = [spec.decoder for spec in METHODS.values()]
    assert all(isinstance(d, msgspec.json.Decoder) for d in decoders)
    assert METHODS["tools/call"].decoder is METHODS["tools/call"].decoder
    generic = METHODS["server/discover"].decoder
    assert METHODS["tools/list"].decoder is not generic


@pytest.mark.parametrize("revision", REVISIONS)
def test_server_requests_are_the_schemas(revision: str) -> None:
    if revision in STATELESS:
        return  # 2026-07-28 sends them only inside input_required results (InputRequest)
    asked = set(_union(revision, "ServerRequest")) - {"ping"} - TASKS_EXTENSION
    assert {name for name, spec in SERVER_REQUESTS.items() if revision in spec.revisions} == asked
