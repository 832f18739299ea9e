"""The registration half of :class:`~mcpwire_adapters.app.app.App`: :class:`Registration`.

Owns: the decorators that declare tools, resources, resource templates, prompts and the
completion handler to the App's :class:`mcpwire.Server`, what each registration decides once
(a typed function's arguments Struct and calling convention, read by :mod:`.signature`; a
tool's derived schemas, through the core's :meth:`mcpwire.Server.tool_schema`; its converter
of answers, :mod:`.results`), and the tables the App dispatches from: each name's handler,
converter and declaration. Nothing here runs per request; answering is ``app.py``'s.
"""

from __future__ import annotations

import warnings
from types import MappingProxyType
from typing import Any, Callable, Mapping, TypeVar

import msgspec
from msgspec import UNSET

from mcpwire import Server
from mcpwire.tasks import TaskSupport
from mcpwire.types import Prompt, PromptArgument, Resource, ResourceTemplate, Tool

from ..callbacks import as_async
from .results import Converter, tool_converter
from .signature import caller_namespace, described, docstring_summary, is_legacy, prompt_signature, resolve_hints
from .signature import resource_caller, template_variables, tool_signature

__all__ = ["Registration"]

F = TypeVar("F", bound=Callable[..., Any])


class Registration:
    """What an App declares and the handlers it keeps (see the module docstring); :class:`App`
    inherits it."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self._tools: dict[str, Callable[..., Any]] = {}
        # Each tool's converter of answers other than str, CallToolResult and NeedInput (results.py).
        self._results: dict[str, Converter] = {}
        self._resources: dict[str, Callable[..., Any]] = {}
        self._templates: dict[str, Callable[..., Any]] = {}
        self._prompts: dict[str, Callable[..., Any]] = {}
        self._prompt_descriptions: dict[str, str | None] = {}
        self._completion: Callable[..., Any] | None = None
        # What was declared, for the read-only views (tools, resources, ...).
        self._tool_defs: dict[str, Tool] = {}
        self._resource_defs: dict[str, Resource] = {}
        self._template_defs: dict[str, ResourceTemplate] = {}
        self._prompt_defs: dict[str, Prompt] = {}

    # -- what is registered -----------------------------------------------------------------------
    @property
    def tools(self) -> Mapping[str, Tool]:
        """The registered tools by name, as declared to the server (derived schemas filled in).
        A read-only view that follows later registrations and removals."""
        return MappingProxyType(self._tool_defs)

    @property
    def resources(self) -> Mapping[str, Resource]:
        """The registered resources by URI (read-only view)."""
        return MappingProxyType(self._resource_defs)

    @property
    def resource_templates(self) -> Mapping[str, ResourceTemplate]:
        """The registered resource templates by URI template (read-only view)."""
        return MappingProxyType(self._template_defs)

    @property
    def prompts(self) -> Mapping[str, Prompt]:
        """The registered prompts by name (read-only view)."""
        return MappingProxyType(self._prompt_defs)

    # -- declaration ----------------------------------------------------------------------------
    def tool(
        self,
        name: str | None = None,
        *,
        description: str | None = None,
        input_schema: dict[str, Any] | None = None,
        arguments_type: type[msgspec.Struct] | None = None,
        output_schema: dict[str, Any] | None = None,
        output_type: type[Any] | None = None,
        arguments: type[msgspec.Struct] | None = None,
        task_support: TaskSupport = "forbidden",
        **fields: Any,
    ) -> Callable[[F], F]:
        """Register a tool: a typed function whose parameters are the tool's arguments
        (``async def add(a: int, b: int = 2) -> int``), or ``handler(ctx, arguments)``.

        A typed function's parameters become a msgspec Struct (``msgspec.defstruct``, named
        ``<name>Arguments``) once, here: the listed inputSchema is the core's
        :meth:`mcpwire.Server.tool_schema` of it and every call's arguments are decoded into it
        (msgspec validates them; bad arguments are a tool execution error). The function is
        called with them by name; a parameter annotated :class:`Context` (any name, any
        position) gets the context. Its return annotation gives the outputSchema: none for
        text (``str``, numbers, bools), ``bytes``, content, ``None`` or no annotation; the type
        itself for a JSON object type (a Struct, a dataclass, a TypedDict, ``dict[str, T]``); and
        ``{"result": T}`` (a Struct named ``<name>Output``) for any other (``list[int]``...).
        ``output_type=``/``output_schema=`` take precedence over the annotation. Shapes that
        cannot work raise ``TypeError`` here (:mod:`mcpwire_adapters.app.signature`).

        ``handler(ctx, arguments)`` is meant when ``input_schema=`` or ``arguments_type=`` is
        given, or when its first two parameters are ``ctx`` and ``arguments`` loosely typed
        (unannotated, ``Any`` or ``Context``; unannotated, ``Any`` or a ``dict``/``Mapping``; see
        :func:`~mcpwire_adapters.app.signature.is_legacy`). Its listed inputSchema is
        ``input_schema``, or derived from the ``arguments_type`` Struct (which the arguments are
        then decoded into), or ``{"type": "object"}``; its outputSchema is ``output_schema`` or
        derived from ``output_type``; both derivations are the core's
        :meth:`mcpwire.Server.tool_schema` (the object at the top, ``"type": "object"``, with
        ``$defs`` beside it when needed). ``arguments=`` is the deprecated old name of
        ``arguments_type=`` (a DeprecationWarning).

        ``description`` defaults to the first paragraph of the function's docstring; the name
        to the function's. ``task_support`` (``App(tasks=...)``): the handler may turn a call
        into a task with ``await ctx.start_task()`` (:mod:`mcpwire_adapters.app.tasks`). What a
        handler may return: :mod:`mcpwire_adapters.app.results`."""
        if name is not None and not isinstance(name, str):
            raise TypeError("App.tool: write @app.tool() (with parentheses), or @app.tool(\"name\")")
        if arguments is not None:
            if arguments_type is not None:
                raise TypeError("App.tool: pass arguments_type= only (arguments= is its deprecated old name)")
            warnings.warn(
                "App.tool(arguments=...) is deprecated; use arguments_type=..., as Server.add_tool does",
                DeprecationWarning, stacklevel=2,
            )
            arguments_type = arguments
        localns = caller_namespace(1)

        def register(handler: F) -> F:
            tool_name = name or handler.__name__
            hints = resolve_hints(handler, localns)
            call: Callable[..., Any]
            args_type = arguments_type
            out_type: Any = output_type
            plan_wrapped, plan_mime, derived = False, None, False
            if input_schema is None and arguments_type is None and not is_legacy(handler, hints):
                typed = tool_signature(tool_name, handler, hints)
                args_type, call = typed.arguments_type, typed.call
                plan_mime = typed.plan.mime_type
                if output_type is None and output_schema is None and typed.plan.output_type is not None:
                    out_type, plan_wrapped, derived = typed.plan.output_type, typed.plan.wrapped, True
            else:
                call = as_async(handler)
            schema = input_schema
            if schema is None:
                schema = Server.tool_schema(args_type) if args_type is not None else {"type": "object"}
            out_schema: Any = output_schema
            if out_schema is None and out_type is not None:
                # The core's derivation, as for the inputSchema: the object at the top
                # ("type": "object"), not msgspec's top-level "$ref".
                out_schema = Server.tool_schema(out_type)
            summary = description if description is not None else docstring_summary(handler)
            tool = Tool(
                name=tool_name, description=UNSET if summary is None else summary, input_schema=schema,
                output_schema=UNSET if out_schema is None else out_schema, **fields,
            )
            self.server.add_tool(tool, arguments_type=args_type, output_type=out_type, task_support=task_support)
            self._tools[tool_name] = call
            self._tool_defs[tool_name] = tool
            self._results[tool_name] = tool_converter(
                tool_name, output_type=out_type, wrapped=plan_wrapped, mime_type=plan_mime, derived=derived,
            )
            return handler

        return register

    def remove_tool(self, name: str) -> None:
        self.server.remove_tool(name)
        del self._tools[name]
        del self._tool_defs[name]
        self._results.pop(name, None)

    def resource(self, uri: str, *, name: str | None = None, **fields: Any) -> Callable[[F], F]:
        """Register a handler for one listed resource: ``handler()``, ``handler(ctx)``, or with
        a parameter annotated :class:`Context` anywhere. It may return a ReadResourceResult, a
        str (text contents) or bytes (blob contents). ``name`` defaults to the function's name,
        ``description`` (in ``fields``) to its docstring's first paragraph."""
        localns = caller_namespace(1)

        def register(handler: F) -> F:
            resource = Resource(uri=uri, name=name or handler.__name__, **described(fields, handler))
            self.server.add_resource(resource)
            self._resources[uri] = resource_caller(handler, resolve_hints(handler, localns))
            self._resource_defs[uri] = resource
            return handler

        return register

    def resource_template(self, uri_template: str, *, name: str | None = None, **fields: Any) -> Callable[[F], F]:
        """Register ``handler(ctx, **variables)`` for URIs matching an RFC 6570 template (the
        variables as str keyword arguments; ``ctx`` as for :meth:`resource`: by a Context
        annotation, else first unless the first parameter is a variable)."""
        localns = caller_namespace(1)

        def register(handler: F) -> F:
            template = ResourceTemplate(uri_template=uri_template, name=name or handler.__name__, **described(fields, handler))
            self.server.add_template(template)
            variables = tuple(template_variables(uri_template))
            self._templates[uri_template] = resource_caller(handler, resolve_hints(handler, localns), variables)
            self._template_defs[uri_template] = template
            return handler

        return register

    def prompt(
        self, name: str | None = None, *, description: str | None = None, arguments: list[PromptArgument] | None = None,
        **fields: Any,
    ) -> Callable[[F], F]:
        """Register a prompt: a typed function whose ``str`` parameters are its arguments
        (required unless defaulted; a :class:`Context` parameter by annotation), or
        ``handler(ctx, arguments)`` (when ``arguments=`` is given, or by the tools' rule:
        :func:`~mcpwire_adapters.app.signature.is_legacy`). It returns a GetPromptResult, a str
        (one user message) or a list of messages (``PromptMessage``, ``(role, text)`` pairs,
        str). ``description`` defaults to the docstring's first paragraph."""
        if name is not None and not isinstance(name, str):
            raise TypeError("App.prompt: write @app.prompt() (with parentheses), or @app.prompt(\"name\")")
        localns = caller_namespace(1)

        def register(handler: F) -> F:
            prompt_name = name or handler.__name__
            hints = resolve_hints(handler, localns)
            listed = arguments
            call: Callable[..., Any]
            if arguments is None and not is_legacy(handler, hints):
                typed = prompt_signature(prompt_name, handler, hints)
                listed, call = typed.arguments or None, typed.call
            else:
                call = as_async(handler)
            summary = description if description is not None else docstring_summary(handler)
            prompt = Prompt(
                name=prompt_name, description=UNSET if summary is None else summary, arguments=listed or UNSET, **fields,
            )
            self.server.add_prompt(prompt)
            self._prompts[prompt_name] = call
            self._prompt_descriptions[prompt_name] = summary
            self._prompt_defs[prompt_name] = prompt
            return handler

        return register

    def completion(self, handler: F) -> F:
        """Register ``handler(ctx)`` answering completion/complete with a list of values or a
        CompleteResult."""
        self._completion = as_async(handler)
        return handler
