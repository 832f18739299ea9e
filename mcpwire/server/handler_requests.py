"""The requests the server engine hands to its host: ``tools/call``, ``resources/read``,
``prompts/get`` and ``completion/complete``, each checked and turned into a typed event.

Owns (specification: Server > Tools, Resources, Prompts, Utilities > Completion; Basic >
Patterns > Multi round-trip requests): the params each of these must have (-32602 otherwise),
a retry's ``inputResponses`` checked against what its signed ``requestState`` asked (the state
bound to the method, the params and the principal), a tool's arguments decoded and checked
against its input schema (a tool execution error otherwise, SEP-1303), and whether a call may
or must become a task. :class:`~mcpwire.Server` inherits it (as it does
``era_engine.EraEngine``); the annotations name what it uses of the engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import msgspec
from msgspec import UNSET

from ..types import CallToolResult, TextContent
from ..wire.capabilities import TASKS_EXTENSION, declares_extension, extension_required
from ..wire.envelope import Request, RequestId, encode_result
from ..wire.errors import MissingCapability
from ..wire.meta import SERVER_INFO_META_KEY, RequestMeta
from ..wire.params import bad_params, check_string_map, decode_params, is_absolute_uri, is_object
from ..wire.versions import INITIALIZE_ERA
from .admission import Admitted
from .catalog import Listing, PromptEntry, TemplateEntry, ToolEntry, match_template
from .events import CompletionRequest, PromptGet, ResourceRead, ToolCall
from .mrtr import check_answers, check_input_responses, check_request_state, open_round
from .tokens import RequestStateCodec, request_scope

__all__ = ["HandlerRequests", "may_be_task"]

_dict_decoder: Final = msgspec.json.Decoder(dict[str, Any])


def may_be_task(entry: ToolEntry, meta: RequestMeta) -> bool:
    """Whether a stateless call of ``entry`` may become a task (tasks extension): the tool
    supports tasks and the request declares the extension. Raises :class:`MissingCapability`
    (-32021) for a tool that is only served as a task (Capability Negotiation)."""
    allowed = entry.task_support != "forbidden" and declares_extension(meta.client_capabilities, TASKS_EXTENSION)
    if entry.task_support == "required" and not allowed:
        raise MissingCapability(extension_required(TASKS_EXTENSION))
    return allowed


class HandlerRequests:
    """The requests :class:`~mcpwire.Server` hands to its host (see the module docstring)."""

    # What this part uses of the engine, set by Server.__init__.
    _state_codec: RequestStateCodec
    _tools: Listing[ToolEntry]
    _resources: Listing[Any]
    _templates: Listing[TemplateEntry]
    _prompts: Listing[PromptEntry]
    _info_builtins: Any

    if TYPE_CHECKING:
        def _session_task_request(self, entry: ToolEntry, task: Any, revision: str) -> int | None: ...

    def _mrtr(
        self, message: Request, params: Any, now: float, principal: str | None,
    ) -> tuple[dict[str, Any] | None, Any]:
        """The answers and state a round brings (``None, None`` for a first round). The
        ``requestState`` must have been issued for this method, these params and this
        ``principal`` (another principal's is refused as a tampered one: -32602)."""
        if params.input_responses is UNSET and params.request_state is UNSET:
            return None, None  # a first round (the common case): nothing to verify
        responses = check_input_responses(params.input_responses)
        token = check_request_state(params.request_state)
        state: Any = None
        if token is not None:
            full = decode_params(_dict_decoder, message.params, message.id)
            kinds, state = open_round(self._state_codec.verify(
                token, method=message.method, scope=request_scope(message.method, full, principal), now=now
            ))
            if responses:
                check_answers(responses, kinds)
        return responses, state

    def _on_call_tool(self, message: Request, params: Any, meta: RequestMeta, now: float, principal: str | None) -> Admitted:
        name = params.name
        if type(name) is not str or not name:
            raise bad_params("tools/call requires a non-empty string name")
        if params.arguments is not UNSET and not is_object(params.arguments):
            raise bad_params("tools/call arguments must be an object")
        entry = self._tools.get(name)
        if entry is None:
            raise bad_params(f"Unknown tool: {name}")
        task_ttl: int | None = None
        if meta.protocol_version in INITIALIZE_ERA:
            # 2025-11-25's own tasks (an initialize-era session has no tasks extension to poll
            # one with, whatever its initialize declared); other revisions have none.
            task_ttl = self._session_task_request(entry, params.task, meta.protocol_version)
            task_allowed = task_requested = task_ttl is not None
            task_ttl = task_ttl or None
        else:
            task_requested = False
            task_allowed = may_be_task(entry, meta)
        responses, state = self._mrtr(message, params, now, principal)
        try:
            if entry.arguments_decoder is not None:
                arguments: Any = decode_params(entry.arguments_decoder, params.arguments, message.id, typed=True)
            else:
                # A number Python cannot hold is the arguments' problem: a tool execution error.
                arguments = decode_params(_dict_decoder, params.arguments, message.id, typed=True)
                problem = entry.input_check(arguments) if entry.input_check is not None else None
                if problem is not None:
                    return self._tool_error(message.id, f"Invalid arguments for tool {name}: {problem}")
        except msgspec.ValidationError as exc:
            return self._tool_error(message.id, f"Invalid arguments for tool {name}: {exc}")
        event = ToolCall(
            request_id=message.id, name=name, arguments=arguments, tool=entry.tool, meta=meta,
            input_responses=responses, state=state, task_allowed=task_allowed, task_requested=task_requested,
            task_ttl_ms=task_ttl, owner=principal if task_allowed else None,
        )
        return event, message.params

    def _tool_error(self, request_id: RequestId, text: str) -> bytes:
        # Schema violations are tool execution errors, not protocol errors (SEP-1303).
        result = CallToolResult(content=[TextContent(text=text)], is_error=True, meta={SERVER_INFO_META_KEY: self._info_builtins})
        return encode_result(request_id, result)

    def _on_read_resource(self, message: Request, params: Any, meta: RequestMeta, now: float, principal: str | None) -> Admitted:
        uri = params.uri
        if type(uri) is not str or not uri:
            raise bad_params("resources/read requires a non-empty string uri")
        if not is_absolute_uri(uri):
            raise bad_params("resources/read uri must be an absolute URI")
        responses, state = self._mrtr(message, params, now, principal)
        matched = match_template(self._templates.values(), uri)
        event = ResourceRead(
            request_id=message.id, uri=uri, meta=meta, resource=self._resources.get(uri),
            template=matched[0].template if matched else None,
            variables=matched[1] if matched else {},
            input_responses=responses, state=state,
        )
        return event, message.params

    def _on_get_prompt(self, message: Request, params: Any, meta: RequestMeta, now: float, principal: str | None) -> Admitted:
        name = params.name
        if type(name) is not str or not name:
            raise bad_params("prompts/get requires a non-empty string name")
        arguments = check_string_map(params.arguments, "prompts/get arguments must map strings to strings")
        entry = self._prompts.get(name)
        if entry is None:
            raise bad_params(f"Unknown prompt: {name}")
        missing = [a for a in entry.required_arguments if a not in arguments]
        if missing:
            raise bad_params("Missing required prompt arguments", {"missing": missing})
        responses, state = self._mrtr(message, params, now, principal)
        event = PromptGet(
            request_id=message.id, name=name, arguments=arguments, prompt=entry.prompt, meta=meta,
            input_responses=responses, state=state,
        )
        return event, message.params

    def _on_complete(self, message: Request, params: Any, meta: RequestMeta, now: float, principal: str | None) -> Admitted:
        ref = params.ref
        if type(ref) is not dict:
            raise bad_params("Completion requires a prompt or resource-template reference")
        ref_type = ref.get("type")
        if ref_type == "ref/prompt":
            ref_name = ref.get("name")
        elif ref_type == "ref/resource":
            ref_name = ref.get("uri")
        else:
            raise bad_params("Completion reference type is not supported")
        if type(ref_name) is not str:
            raise bad_params("Completion requires a prompt or resource-template reference")
        argument = params.argument
        if type(argument) is not dict or type(argument.get("name")) is not str or type(argument.get("value")) is not str:
            raise bad_params("Completion argument requires string name and value")
        context = params.context
        if context is not UNSET and type(context) is not dict:
            raise bad_params("Completion context must be an object")
        context_args = check_string_map(
            context.get("arguments", UNSET) if type(context) is dict else UNSET,
            "Completion context arguments must map strings to strings",
        )
        if ref_type == "ref/prompt" and ref_name not in self._prompts:
            raise bad_params(f"Unknown completion prompt: {ref_name}")
        if ref_type == "ref/resource" and ref_name not in self._templates:
            raise bad_params("Unknown completion resource template", {"uri": ref_name})
        event = CompletionRequest(
            request_id=message.id, ref_type=ref_type, ref_name=ref_name, argument_name=argument["name"],
            argument_value=argument["value"], context_arguments=context_args, meta=meta,
        )
        return event, message.params
