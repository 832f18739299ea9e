"""The catalog half of the server engine: what the server declares, and the answers the engine
gives from it by itself.

Owns (specification: Server > Tools, Resources, Prompts; Server > Utilities > Pagination and
Caching; Basic > Lifecycle, ``server/discover``): declaring tools (their schemas derived from
or checked against ``arguments_type`` and ``output_type``), resources, templates and prompts;
the capabilities advertised; answering ``server/discover`` and the four list methods (the page
a signed cursor names, with the cache fields), or handing a list to the host with the page the
engine would have sent (``hand_over_lists``). :class:`~mcpwire.Server` inherits it; the lists
themselves are ``catalog.py``'s, admission before these answers is ``engine.py``'s.
"""

from __future__ import annotations

from typing import Any, Collection, Final

import msgspec
from msgspec import UNSET, Raw

from ..types import Prompt, Resource, ResourceTemplate, Tool
from ..wire.capabilities import TASKS_EXTENSION
from ..wire.envelope import Request, encode_result
from ..wire.errors import LocalProtocolError
from ..wire.meta import SERVER_INFO_META_KEY, RequestMeta
from ..wire.methods import LIST_METHODS, METHODS
from ..wire.params import check_cursor
from .admission import Handler
from .catalog import (
    Listing, PromptEntry, TaskSupport, TemplateEntry, ToolEntry, ValidatorFactory, prepare_prompt, prepare_template,
    prepare_tool, struct_schema,
)
from .context import CachePolicy, ServerContext
from .events import ListRequest
from .tasks import Tasks
from .tokens import CursorCodec, ExpiredCursor
from .validation import MISSING_VALIDATOR, UNCHECKED, jsonschema_validator

__all__ = ["CatalogEngine"]

_encoder: Final = msgspec.json.Encoder()
# A list's page as a ListRequest carries it (Server.hand_over_lists): its result type, by method.
_page_decoders: Final = {method: msgspec.json.Decoder(METHODS[method].result) for method in LIST_METHODS}


def _disagree(tool: str, member: str, derive: str, option: str, given: type[Any]) -> str:
    type_name = getattr(given, "__name__", repr(given))
    return (
        f"Tool {tool!r}: the {member} given disagrees with {option}={type_name}, so every correct call would"
        f" fail. Pass {derive} to derive it from the type, or exactly Server.tool_schema({type_name})"
    )


class CatalogEngine:
    """The declaration and list methods of :class:`~mcpwire.Server` (see the module docstring)."""

    # What this half uses of the engine, set by Server.__init__.
    instructions: str | None
    page_size: int
    tasks: Tasks | None
    _validator: ValidatorFactory | None
    _enabled: dict[str, bool]
    _logging: bool
    _list_changed: frozenset[str]
    _subscribe: bool
    _stateless_versions: tuple[str, ...]
    _info_builtins: Any
    _meta_json: bytes
    _context: ServerContext
    _cursor_codec: CursorCodec
    _tools: Listing[ToolEntry]
    _resources: Listing[Resource]
    _templates: Listing[TemplateEntry]
    _prompts: Listing[PromptEntry]
    _lists: dict[str, Listing[Any]]
    _handlers: dict[str, Handler]
    _discover: bytes | None
    _handed: frozenset[str]

    # -- declaration ------------------------------------------------------------------------------
    def add_tool(
        self,
        tool: Tool,
        *,
        arguments_type: type[msgspec.Struct] | None = None,
        output_type: type[Any] | None = None,
        task_support: TaskSupport = "forbidden",
    ) -> None:
        """Register (or replace) a tool.

        With ``arguments_type`` the arguments are decoded into that Struct, and the listed
        inputSchema is derived from it: give the tool ``input_schema={}`` (or exactly
        ``Server.tool_schema(arguments_type)``); any other inputSchema disagrees with the
        Struct and is refused. With ``output_type`` structuredContent is checked against it,
        and the outputSchema is derived from it the same way (leave it unset, or give exactly
        ``Server.tool_schema(output_type)``).

        Without them the schemas are raw JSON Schema, checked by the server's ``validator``.
        One that accepts every object (``"type": "object"``, at most an empty ``"properties"``,
        otherwise only annotations such as ``title``/``description``) needs no validator.
        The inputSchema must be an object schema.

        ``task_support`` (tasks extension; needs ``Server(tasks=...)``): ``"optional"`` lets the
        host turn a call into a task when the request declares the extension
        (``ToolCall.task_allowed``), ``"required"`` also refuses a request that does not with
        -32021. Raises :class:`LocalProtocolError`.
        """
        name = tool.name
        if task_support not in ("forbidden", "optional", "required"):
            raise LocalProtocolError(f"Tool {name!r}: task_support is 'forbidden', 'optional' or 'required'")
        if task_support != "forbidden" and self.tasks is None:
            raise LocalProtocolError(f"Tool {name!r}: task_support needs a server with tasks (Server(tasks=...))")
        changes: dict[str, Any] = {}
        if arguments_type is not None:
            derived = struct_schema(arguments_type)
            if not tool.input_schema:
                changes["input_schema"] = derived
            elif tool.input_schema != derived:
                raise LocalProtocolError(_disagree(name, "inputSchema", "input_schema={}", "arguments_type", arguments_type))
        if output_type is not None:
            derived = struct_schema(output_type)
            if tool.output_schema is UNSET:
                changes["output_schema"] = derived
            elif tool.output_schema != derived:
                raise LocalProtocolError(_disagree(name, "outputSchema", "no output_schema", "output_type", output_type))
        if changes:
            tool = msgspec.structs.replace(tool, **changes)
        schema = tool.input_schema
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise LocalProtocolError(f"Tool {name!r}: inputSchema must be a JSON Schema with \"type\": \"object\"")
        entry = prepare_tool(
            tool, arguments_type=arguments_type, output_type=output_type, validator=lambda: self._schema_validator(name),
            task_support=task_support,
        )
        # 2025-11-25 lists a tool's task support (Tasks: Tool-Level Negotiation); the other
        # revisions' shapes have no such member and drop it.
        era_item = None if task_support == "forbidden" else {
            **msgspec.to_builtins(tool), "execution": {"taskSupport": task_support}}
        self._tools.put(entry, tool, era_item)

    def _schema_validator(self, tool_name: str) -> ValidatorFactory | None:
        """The factory for raw JSON Schemas (``None`` when the host chose UNCHECKED); the
        default is resolved, and jsonschema imported, on first need."""
        factory = self._validator
        if factory is None:
            factory = jsonschema_validator()
            if factory is None:
                raise LocalProtocolError(f"Tool {tool_name!r} {MISSING_VALIDATOR}")
            self._validator = factory
        return None if factory is UNCHECKED else factory

    def remove_tool(self, name: str) -> None:
        self._tools.remove(name)

    def add_resource(self, resource: Resource) -> None:
        self._resources.put(resource, resource)

    def remove_resource(self, uri: str) -> None:
        self._resources.remove(uri)

    def add_template(self, template: ResourceTemplate) -> None:
        self._templates.put(prepare_template(template), template)

    def remove_template(self, uri_template: str) -> None:
        self._templates.remove(uri_template)

    def add_prompt(self, prompt: Prompt) -> None:
        self._prompts.put(prepare_prompt(prompt), prompt)

    def remove_prompt(self, name: str) -> None:
        self._prompts.remove(name)

    # -- what is registered, in list order -------------------------------------------------------
    def tools(self) -> list[Tool]:
        """The registered tools as tools/list gives them (sorted by name; derived schemas in)."""
        return [entry.tool for entry in self._tools.values()]

    def resources(self) -> list[Resource]:
        """The registered resources as resources/list gives them (sorted by URI)."""
        return self._resources.values()

    def templates(self) -> list[ResourceTemplate]:
        """The registered resource templates as resources/templates/list gives them (sorted by
        template; resources/read matches a URI against them in this order)."""
        return [entry.template for entry in self._templates.values()]

    def prompts(self) -> list[Prompt]:
        """The registered prompts as prompts/list gives them (sorted by name)."""
        return [entry.prompt for entry in self._prompts.values()]

    @staticmethod
    def tool_schema(arguments_type: type[msgspec.Struct]) -> dict[str, Any]:
        """The inputSchema for a Struct-typed tool (``"type": "object"`` at the top)."""
        return struct_schema(arguments_type)

    def capabilities(self) -> dict[str, Any]:
        """The ServerCapabilities object advertised by server/discover."""
        caps: dict[str, Any] = {}
        def changed(kind: str) -> dict[str, Any]:
            return {"listChanged": True} if kind in self._list_changed else {}

        if self._enabled["tools"]:
            caps["tools"] = changed("tools")
        if self._enabled["resources"]:
            caps["resources"] = {**changed("resources"), **({"subscribe": True} if self._subscribe else {})}
        if self._enabled["prompts"]:
            caps["prompts"] = changed("prompts")
        if self._enabled["completions"]:
            caps["completions"] = {}
        if self._logging:
            caps["logging"] = {}
        if self.tasks is not None:
            caps["extensions"] = {TASKS_EXTENSION: {}}
        return caps

    # -- answers the engine gives itself ------------------------------------------------------------
    def hand_over_lists(self, methods: Collection[str]) -> None:
        """From now on hand the list requests of ``methods`` (``tools/list``, ``resources/list``,
        ``resources/templates/list``, ``prompts/list``) to the host as exchanges instead of
        answering them: each comes as a :class:`~mcpwire.ListRequest` carrying the page the
        engine would have sent, on every revision, for the host to complete with that page or
        one that lists less. ``methods`` replaces the previous choice; empty: the engine answers
        every list again. Raises :class:`LocalProtocolError` for any other method."""
        chosen = frozenset(methods)
        if isinstance(methods, str) or not chosen <= set(LIST_METHODS):
            raise LocalProtocolError(f"hand_over_lists takes a collection of {', '.join(LIST_METHODS)}")
        self._handed = chosen
        for method in LIST_METHODS:
            self._handlers[method] = self._on_list_handed if method in chosen else self._on_list

    def _policy(self, method: str) -> CachePolicy:
        return self._context.policy(method)

    def _on_discover(self, message: Request, params: Any, meta: RequestMeta, now: float, principal: str | None) -> bytes:
        if self._discover is None:
            policy = self._policy("server/discover")
            result: dict[str, Any] = {
                "resultType": "complete",
                "supportedVersions": list(self._stateless_versions),
                "capabilities": self.capabilities(),
                "ttlMs": policy.ttl_ms,
                "cacheScope": policy.scope,
            }
            if self.instructions is not None:
                result["instructions"] = self.instructions
            result["_meta"] = {SERVER_INFO_META_KEY: self._info_builtins}
            self._discover = _encoder.encode(result)
        return encode_result(message.id, Raw(self._discover))

    def _on_list(self, message: Request, params: Any, meta: RequestMeta, now: float, principal: str | None) -> bytes:
        return encode_result(message.id, Raw(self._list_page(message.method, params)))

    def _on_list_handed(
        self, message: Request, params: Any, meta: RequestMeta, now: float, principal: str | None,
    ) -> tuple[ListRequest, Any]:
        return self._list_request(message, params, meta, self._list_page(message.method, params)), message.params

    def _list_request(self, message: Request, params: Any, meta: RequestMeta, page: bytes) -> ListRequest:
        """The :class:`ListRequest` of a list handed to the host, ``page`` its result object as
        the engine would have sent it (JSON)."""
        method = message.method
        cursor = params.cursor
        return ListRequest(method=method, request_id=message.id, cursor=cursor if type(cursor) is str else None,
                           meta=meta, page=_page_decoders[method].decode(page))

    def _list_page(self, method: str, params: Any) -> bytes:
        """The result object of a stateless list request: the page its cursor names."""
        key = METHODS[method].list_key
        listing = self._lists[method]
        cursor = check_cursor(params.cursor)
        version = listing.version
        offset = 0
        if cursor is not None:
            offset = self._cursor_codec.verify(cursor, method=method, catalog_version=version)
            if offset > len(listing):
                raise ExpiredCursor("offset past end")
        items, nxt = listing.page(offset, self.page_size)
        policy = self._policy(method)
        parts = [b'{"resultType":"complete","', str(key).encode(), b'":', bytes(items)]
        parts.append(b',"ttlMs":%d,"cacheScope":"%s"' % (policy.ttl_ms, policy.scope.encode()))
        if nxt is not None:
            token = self._cursor_codec.issue(method=method, offset=nxt, catalog_version=version)
            parts.append(b',"nextCursor":"' + token.encode() + b'"')
        parts.append(b',"_meta":' + self._meta_json + b"}")
        return b"".join(parts)
