"""Handlers written as plain typed functions: what :class:`~mcpwire_adapters.App` reads from a
handler's signature, once, at registration.

A tool written ``async def add(a: int, b: int = 2) -> int`` has its parameters made a msgspec
Struct (``msgspec.defstruct``): the core derives the listed inputSchema from it
(:meth:`mcpwire.Server.tool_schema`) and decodes every call's arguments into it, so msgspec
validates them; the App then calls the function with the Struct's fields as keyword arguments.
A parameter annotated :class:`~mcpwire_adapters.Context` (any name, any position) gets the
request's context instead. The return annotation gives the outputSchema.

The rule telling this form from the older ``handler(ctx, arguments)`` one is :func:`is_legacy`.
Shapes that cannot work (``*args``, ``**kwargs``, positional-only or unannotated parameters,
types msgspec has no JSON Schema for) raise ``TypeError`` here, naming the parameter and the fix.
Nothing in this module runs per request except the small callers it builds.
"""

from __future__ import annotations

import collections.abc
import copy
import inspect
import re
import sys
import types
import typing
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, Final, NamedTuple

import msgspec

from mcpwire import Server
from mcpwire.types import (
    AudioContent,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    PromptArgument,
    ResourceLink,
    TextContent,
)

from ..callbacks import as_async
from .context import Context
from .need_input import NeedInput

__all__ = [
    "MimeType", "OutputPlan", "PromptSignature", "ToolSignature", "caller_namespace", "described", "docstring_summary", "is_legacy", "output_plan", "prompt_signature", "resolve_hints", "resource_caller", "template_variables", "tool_signature",
]

Handler = Callable[..., Coroutine[Any, Any, Any]]
_EMPTY: Final = inspect.Parameter.empty
_POSITIONAL: Final = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_VARIADIC: Final = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
_MAPPINGS: Final = frozenset({dict, collections.abc.Mapping, collections.abc.MutableMapping})
_CONTENT: Final = (TextContent, ImageContent, AudioContent, EmbeddedResource, ResourceLink)
_SCALAR_TYPES: Final = frozenset({"string", "integer", "number", "boolean", "null"})


class MimeType(msgspec.Struct, frozen=True):
    """The MIME type of a tool's ``bytes`` result, as an annotation:
    ``-> Annotated[bytes, MimeType("image/png")]``. ``image/*`` bytes become an image content
    block, ``audio/*`` an audio block, any other an embedded blob resource of that type (bytes
    without one: ``application/octet-stream``)."""

    mime_type: str


class _Unresolved(NamedTuple):
    """An annotation that could not be evaluated (a name imported under ``TYPE_CHECKING``, say)."""

    text: str
    error: Exception


def caller_namespace(depth: int) -> dict[str, Any]:
    """The local names of the frame ``depth`` levels above the caller: where a decorator was
    written, so that types defined in a function resolve in string annotations too."""
    try:
        return dict(sys._getframe(depth + 1).f_locals)
    except ValueError:  # pragma: no cover - no such frame
        return {}


def resolve_hints(handler: Callable[..., Any], localns: Mapping[str, Any]) -> dict[str, Any]:
    """Every annotation of ``handler`` evaluated (``Annotated`` kept); one that cannot be is an
    :class:`_Unresolved` (refused later, only if it matters)."""
    try:
        return typing.get_type_hints(handler, localns=dict(localns), include_extras=True)
    except Exception:  # noqa: BLE001 - resolve one by one below, to name the culprit
        pass
    target = inspect.unwrap(handler)
    raw: dict[str, Any] = dict(getattr(target, "__annotations__", {}) or {})
    globalns = getattr(target, "__globals__", {})
    hints: dict[str, Any] = {}
    for key, annotation in raw.items():
        holder = _Holder({key: annotation})
        try:
            hints[key] = typing.get_type_hints(holder, globalns=globalns, localns=dict(localns), include_extras=True)[key]
        except Exception as exc:  # noqa: BLE001 - kept, refused where it matters
            hints[key] = _Unresolved(annotation if isinstance(annotation, str) else repr(annotation), exc)
    return hints


class _Holder:
    """Something with ``__annotations__`` for :func:`typing.get_type_hints`, one at a time."""

    def __init__(self, annotations: dict[str, Any]) -> None:
        self.__annotations__ = annotations


def docstring_summary(handler: Callable[..., Any]) -> str | None:
    """The first paragraph of the handler's docstring, its lines joined; ``None`` without one."""
    doc = inspect.getdoc(handler)
    if not doc:
        return None
    first = doc.strip().split("\n\n", 1)[0]
    return " ".join(first.split()) or None


def _strip(annotation: Any) -> Any:
    """``Annotated[T, ...]`` is ``T`` here."""
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def _is_context(annotation: Any) -> bool:
    annotation = _strip(annotation)
    if isinstance(annotation, _Unresolved):
        return annotation.text.rsplit(".", 1)[-1] == "Context"
    return isinstance(annotation, type) and issubclass(annotation, Context)


def _loose_context(annotation: Any) -> bool:
    """What the first parameter of a ``(ctx, arguments)`` handler may be annotated with."""
    if isinstance(annotation, _Unresolved):
        return annotation.text.rsplit(".", 1)[-1] in ("Context", "Any")
    return annotation is _EMPTY or annotation is Any or _is_context(annotation)


def _loose_arguments(annotation: Any) -> bool:
    """What the second parameter of a ``(ctx, arguments)`` handler may be annotated with: nothing,
    ``Any`` or a mapping (``dict``, ``dict[str, Any]``, ``Mapping[str, Any]``)."""
    if isinstance(annotation, _Unresolved):
        head = annotation.text.split("[", 1)[0].rsplit(".", 1)[-1]
        return head in ("Any", "dict", "Dict", "Mapping", "MutableMapping")
    annotation = _strip(annotation)
    if annotation is _EMPTY or annotation is Any:
        return True
    return (typing.get_origin(annotation) or annotation) in _MAPPINGS


def is_legacy(handler: Callable[..., Any], hints: Mapping[str, Any]) -> bool:
    """Whether ``handler`` is written ``handler(ctx, arguments)``, the App's first form: its first
    two parameters are positional (every later one has a default), the first unannotated,
    ``Any`` or :class:`Context`, and the second unannotated, ``Any`` or a mapping. Otherwise its
    parameters are the tool's (or prompt's) arguments. (Passing ``input_schema=``,
    ``arguments_type=`` or, for a prompt, ``arguments=`` also picks the first form.)"""
    try:
        parameters = list(inspect.signature(handler).parameters.values())
    except (TypeError, ValueError):  # pragma: no cover - a builtin without a signature
        return True
    if len(parameters) < 2:
        return False
    first, second = parameters[:2]
    if first.kind not in _POSITIONAL or second.kind not in _POSITIONAL:
        return False
    if any(p.default is _EMPTY and p.kind not in _VARIADIC for p in parameters[2:]):
        return False
    return _loose_context(hints.get(first.name, _EMPTY)) and _loose_arguments(hints.get(second.name, _EMPTY))


# -- the parameters ------------------------------------------------------------------------------------
class _Parameters(NamedTuple):
    fields: list[tuple[str, Any] | tuple[str, Any, Any]]
    names: tuple[str, ...]
    context: str | None


def _parameters(kind: str, name: str, handler: Callable[..., Any], hints: Mapping[str, Any]) -> _Parameters:
    """The handler's parameters as Struct fields, and the name of its Context parameter; every
    shape that cannot work is refused here."""
    where = f"{kind} {name!r}"
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    context: str | None = None
    for parameter in inspect.signature(handler).parameters.values():
        pname = parameter.name
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            raise TypeError(
                f"{where}: parameter *{pname}: arguments arrive by name, so *args cannot take any; "
                f"declare each argument as a named, annotated parameter"
            )
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            raise TypeError(
                f"{where}: parameter **{pname}: its arguments are listed in a schema, so **kwargs cannot take "
                f"them; declare each argument as a named, annotated parameter (or use the (ctx, arguments) "
                f"form with input_schema=...)"
            )
        if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
            raise TypeError(
                f"{where}: parameter {pname!r} is positional-only: arguments are passed by name; remove the '/'"
            )
        annotation = hints.get(pname, _EMPTY)
        if annotation is _EMPTY:
            raise TypeError(
                f"{where}: parameter {pname!r} has no annotation: annotate it with its type ({pname}: str, "
                f"{pname}: int, ...), or with Context to receive the request context (a handler of the "
                f"(ctx, arguments) form has just those two parameters first, untyped or loosely typed)"
            )
        if isinstance(annotation, _Unresolved):
            raise TypeError(
                f"{where}: the annotation {annotation.text!r} of parameter {pname!r} cannot be evaluated "
                f"({type(annotation.error).__name__}: {annotation.error}); import the type at module level "
                f"(not under TYPE_CHECKING)"
            ) from annotation.error
        if _is_context(annotation):
            if context is not None:
                raise TypeError(f"{where}: parameters {context!r} and {pname!r} both ask for the Context; keep one")
            context = pname
            continue
        if parameter.default is _EMPTY:
            fields.append((pname, annotation))
        else:
            fields.append(_defaulted(where, pname, annotation, parameter.default))
    return _Parameters(fields, tuple(f[0] for f in fields), context)


def _defaulted(where: str, pname: str, annotation: Any, value: Any) -> tuple[str, Any, Any]:
    """A parameter with a default as a Struct field. A non-empty list, dict or set is copied per
    call (a ``default_factory``), and since msgspec lists no default for a factory, the schema
    gets it from the annotation: a caller (and the model) sees ``"default": [1, 2]`` for
    ``x: list[int] = [1, 2]`` as for any other default."""
    if not (isinstance(value, (list, dict, set, bytearray)) and value):
        return (pname, annotation, value)
    try:
        listed = msgspec.to_builtins(value)
    except Exception as exc:  # noqa: BLE001 - msgspec's TypeError, re-raised naming the parameter
        raise _not_json_default(where, pname, value, exc) from exc
    annotation = typing.Annotated[annotation, msgspec.Meta(extra_json_schema={"default": listed})]
    return (pname, annotation, msgspec.field(default_factory=lambda: copy.deepcopy(value)))


def _not_json_default(where: str, pname: str, value: Any, exc: Exception) -> TypeError:
    return TypeError(
        f"{where}: parameter {pname!r}: its default {value!r} is not a JSON value ({_reason(exc)}); "
        f"use None, a number, a string, a bool or a JSON list/object as the default"
    )


def _schema_error(where: str, pname: str, annotation: Any, exc: Exception) -> TypeError:
    return TypeError(
        f"{where}: parameter {pname!r}: msgspec cannot make a JSON Schema of {_type_name(annotation)} "
        f"({_reason(exc)}); use a JSON type (str, int, float, bool, None, list, dict, Literal, an Enum, a "
        f"msgspec Struct, a dataclass or a TypedDict), Annotated with msgspec.Meta for constraints"
    )


def _reason(exc: Exception) -> str:
    """msgspec's message on one line (its last: "type <class 'X'> is not supported")."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[-1] if lines else type(exc).__name__


def _type_name(annotation: Any) -> str:
    """``Opaque`` for a class, ``list[Opaque]`` (its repr) for anything else."""
    if isinstance(annotation, type) and typing.get_origin(annotation) is None:
        return annotation.__name__
    return repr(annotation).replace("typing.", "")


def _arguments_struct(where: str, struct_name: str, parameters: _Parameters) -> type[msgspec.Struct]:
    """The Struct of the arguments, with its schema made once to refuse what has none."""
    for field in parameters.fields:
        pname, annotation = field[0], field[1]
        try:
            single = msgspec.defstruct("_Field", [(pname, annotation)], kw_only=True)
            msgspec.json.schema(single)
            msgspec.json.Decoder(single)
        except Exception as exc:  # noqa: BLE001 - msgspec's TypeError/ValueError, re-raised naming the parameter
            raise _schema_error(where, pname, annotation, exc) from exc
        if len(field) == 3:
            try:
                msgspec.json.schema(msgspec.defstruct("_Field", [field], kw_only=True))
            except Exception as exc:  # noqa: BLE001 - a default msgspec cannot encode
                raise _not_json_default(where, pname, field[2], exc) from exc
    struct = msgspec.defstruct(struct_name, parameters.fields, kw_only=True)
    Server.tool_schema(struct)  # the whole: a name clash between two nested types, say, fails here
    return struct


def _caller(handler: Callable[..., Any], names: tuple[str, ...], context: str | None) -> Handler:
    """``call(ctx, arguments)``: the handler called with the arguments Struct's fields by name
    (and ``ctx`` by its parameter's name), awaited; a plain function in a worker thread."""
    run = as_async(handler)
    asdict = msgspec.structs.asdict
    if not names:
        if context is None:
            async def call_bare(ctx: Context, arguments: Any) -> Any:
                return await run()

            return call_bare

        async def call_context(ctx: Context, arguments: Any) -> Any:
            return await run(**{context: ctx})

        return call_context
    if context is None:
        async def call(ctx: Context, arguments: Any) -> Any:
            return await run(**asdict(arguments))

        return call

    async def call_with_context(ctx: Context, arguments: Any) -> Any:
        kwargs = asdict(arguments)
        kwargs[context] = ctx
        return await run(**kwargs)

    return call_with_context


# -- the return annotation ------------------------------------------------------------------------
class OutputPlan(NamedTuple):
    """What a tool's return annotation says about its results: ``output_type`` (listed as the
    outputSchema, and structuredContent checked against it), whether values are wrapped as
    ``{"result": value}`` (a type that is not a JSON object), and the MIME type of bytes."""

    output_type: Any = None
    wrapped: bool = False
    mime_type: str | None = None


_NO_PLAN: Final = OutputPlan()


def output_plan(tool_name: str, annotation: Any) -> OutputPlan:
    """The :class:`OutputPlan` of a tool's return annotation: no outputSchema for none, ``Any``,
    ``None``, text (``str``, numbers, bools, enums and other scalars), ``bytes``, content blocks,
    ``CallToolResult`` and ``NeedInput``; a JSON object type (a Struct, a dataclass, a TypedDict,
    ``dict[str, T]``) is the outputSchema itself; any other type (a list, a union with ``None``...)
    is listed wrapped, ``{"result": T}``."""
    if isinstance(annotation, _Unresolved):
        raise TypeError(
            f"tool {tool_name!r}: the return annotation {annotation.text!r} cannot be evaluated "
            f"({type(annotation.error).__name__}: {annotation.error}); import the type at module level"
        ) from annotation.error
    mime = _mime_of(annotation)
    annotation = _without_answers(annotation)
    base = _strip(annotation)
    if base is _EMPTY or base is Any or base is None or base is type(None) or base is object:
        return OutputPlan(mime_type=mime)
    if isinstance(base, type) and issubclass(base, (bytes, bytearray, memoryview)):
        return OutputPlan(mime_type=mime)
    if _all_content(_union_members(base) or (base,)):
        return _NO_PLAN  # a content block: the content itself
    if typing.get_origin(base) in (list, tuple, collections.abc.Sequence):
        items = [m for a in typing.get_args(base) if a is not Ellipsis for m in (_union_members(_strip(a)) or (a,))]
        if _all_content(items):
            return _NO_PLAN  # content blocks: the content itself
    try:
        schema = Server.tool_schema(annotation)
    except Exception as exc:  # noqa: BLE001 - msgspec's TypeError, re-raised with the fix
        raise TypeError(
            f"tool {tool_name!r}: msgspec cannot make a JSON Schema of the return annotation "
            f"{_type_name(annotation)} ({_reason(exc)}); return a JSON type, a msgspec Struct, a dataclass or a "
            f"TypedDict, or annotate -> CallToolResult (or nothing) and build the result yourself"
        ) from exc
    if schema.get("type") == "object":
        return OutputPlan(output_type=annotation)
    if _scalar(schema, schema.get("$defs", {})):
        return _NO_PLAN
    wrapper = msgspec.defstruct(f"{tool_name}Output", [("result", annotation)], kw_only=True)
    return OutputPlan(output_type=wrapper, wrapped=True)


def _all_content(annotations: Any) -> bool:
    members = [_strip(a) for a in annotations]
    return bool(members) and all(isinstance(m, type) and issubclass(m, _CONTENT) for m in members)


def _mime_of(annotation: Any) -> str | None:
    for candidate in (annotation, *_union_members(annotation)):
        if typing.get_origin(candidate) is typing.Annotated:
            for extra in typing.get_args(candidate)[1:]:
                if isinstance(extra, MimeType):
                    return extra.mime_type
    return None


def _union_members(annotation: Any) -> tuple[Any, ...]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return typing.get_args(annotation)
    return ()


def _without_answers(annotation: Any) -> Any:
    """The annotation without ``NeedInput`` and ``CallToolResult`` in a union: they are answers the
    App takes as they are, not values of the declared type."""
    members = _union_members(annotation)
    if not members:
        return _EMPTY if _strip(annotation) in (NeedInput, CallToolResult) else annotation
    rest = [m for m in members if _strip(m) not in (NeedInput, CallToolResult)]
    if not rest:
        return _EMPTY
    if len(rest) == len(members):
        return annotation
    result = rest[0]
    for member in rest[1:]:
        result = result | member
    return result


def _scalar(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> bool:
    """Whether every value ``schema`` accepts is a JSON scalar (text, not structured output)."""
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = defs.get(ref.rsplit("/", 1)[-1])
        return isinstance(target, Mapping) and _scalar(target, defs)
    if "anyOf" in schema:
        return all(isinstance(s, Mapping) and _scalar(s, defs) for s in schema["anyOf"])
    if "enum" in schema:
        return all(not isinstance(v, (dict, list)) for v in schema["enum"])
    kind = schema.get("type")
    if isinstance(kind, str):
        return kind in _SCALAR_TYPES
    if isinstance(kind, list):
        return bool(kind) and all(k in _SCALAR_TYPES for k in kind)
    return False


# -- tools ----------------------------------------------------------------------------------------
class ToolSignature(NamedTuple):
    """A tool written as a typed function, prepared: the arguments Struct for the core, the
    caller the App awaits with ``(ctx, arguments)``, and its :class:`OutputPlan`."""

    arguments_type: type[msgspec.Struct]
    call: Handler
    plan: OutputPlan


def tool_signature(name: str, handler: Callable[..., Any], hints: Mapping[str, Any]) -> ToolSignature:
    """Prepare a typed tool function (see the module docstring); raises ``TypeError``."""
    parameters = _parameters("tool", name, handler, hints)
    struct = _arguments_struct(f"tool {name!r}", f"{name}Arguments", parameters)
    plan = output_plan(name, hints.get("return", _EMPTY))
    return ToolSignature(struct, _caller(handler, parameters.names, parameters.context), plan)


# -- prompts --------------------------------------------------------------------------------------
class PromptSignature(NamedTuple):
    """A prompt written as a typed function, prepared: its listed arguments and its caller."""

    arguments: list[PromptArgument]
    call: Handler


def prompt_signature(name: str, handler: Callable[..., Any], hints: Mapping[str, Any]) -> PromptSignature:
    """Prepare a typed prompt function: each parameter other than the Context is one prompt
    argument, a string (``str``, ``str | None``, ``Annotated[str, msgspec.Meta(description=...)]``),
    required unless it has a default. Raises ``TypeError``."""
    parameters = _parameters("prompt", name, handler, hints)
    arguments = []
    for field in parameters.fields:
        pname, annotation = field[0], field[1]
        base = _strip(annotation)
        members = _union_members(base) or (base,)
        if not all(_strip(m) in (str, type(None)) for m in members) or str not in [_strip(m) for m in members]:
            raise TypeError(
                f"prompt {name!r}: parameter {pname!r} is annotated {_type_name(annotation)}: prompt arguments "
                f"are strings on the wire; annotate it {pname}: str (or str | None with a default)"
            )
        description = _meta_description(annotation)
        arguments.append(PromptArgument(
            name=pname, required=len(field) == 2,
            **({"description": description} if description is not None else {}),
        ))
    run = as_async(handler)
    names = frozenset(parameters.names)
    context = parameters.context

    async def call(ctx: Context, given: Mapping[str, str] | None) -> Any:
        kwargs: dict[str, Any] = {k: v for k, v in (given or {}).items() if k in names}
        if context is not None:
            kwargs[context] = ctx
        return await run(**kwargs)

    return PromptSignature(arguments, call)


def _meta_description(annotation: Any) -> str | None:
    if typing.get_origin(annotation) is typing.Annotated:
        for extra in typing.get_args(annotation)[1:]:
            if isinstance(extra, msgspec.Meta) and extra.description is not None:
                return extra.description
    return None


# -- resources ------------------------------------------------------------------------------------
def resource_caller(handler: Callable[..., Any], hints: Mapping[str, Any], variables: tuple[str, ...] = ()) -> Handler:
    """``call(ctx, **variables)`` for a resource (or template) handler: ``ctx`` goes to the
    parameter annotated :class:`Context` by name; else, as before, positionally first, when the
    handler's first parameter is positional and not a template variable; else nowhere (a
    handler without parameters, or taking only the variables)."""
    run = as_async(handler)
    parameters = list(inspect.signature(handler).parameters.values())
    asking = next((p for p in parameters if _is_context(hints.get(p.name, _EMPTY))), None)
    if asking is not None and asking.kind is inspect.Parameter.POSITIONAL_ONLY and asking is parameters[0]:
        return run  # handler(ctx, /, ...): first, by position
    by_name = asking.name if asking is not None else None
    if by_name is not None:
        async def call_named(ctx: Context, **values: str) -> Any:
            return await run(**values, **{by_name: ctx})

        return call_named
    first = parameters[0] if parameters else None
    if first is not None and first.kind in _POSITIONAL and first.name not in variables:
        return run  # handler(ctx, **variables), the App's first form

    async def call_without(ctx: Context, **values: str) -> Any:
        return await run(**values)

    return call_without


_TEMPLATE_EXPRESSION: Final = re.compile(r"\{[+#]?([A-Za-z0-9_.,]+)\}")


def template_variables(uri_template: str) -> list[str]:
    """The variable names of a level 1/2 RFC 6570 template, as the core matches them."""
    return [name for match in _TEMPLATE_EXPRESSION.finditer(uri_template) for name in match.group(1).split(",")]


def described(fields: dict[str, Any], handler: Callable[..., Any]) -> dict[str, Any]:
    """``fields`` with ``description`` defaulting to the first paragraph of the handler's docstring."""
    if "description" in fields:
        return fields
    summary = docstring_summary(handler)
    return fields if summary is None else {**fields, "description": summary}
