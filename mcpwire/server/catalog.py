"""The server's declared catalog: tools, resources, resource templates and prompts.

Owns (specification: Server > Tools, Resources, Prompts; Server > Utilities > Pagination): the four paginated lists, each kept
sorted (tools and prompts by name, resources by URI, templates by template string) so that
listing is deterministic; every item encoded to JSON once, when it is registered; a catalog
version per list (a digest of its encoded items) that signed cursors are bound to, so a
cursor expires when its list changes; URI-template matching for resources/read.

Each list also keeps, per initialize-era revision, every item shaped for that revision
(mcpwire/server/initialize_era_results.py) and encoded once at registration; an item a revision cannot take (a
tool whose schemas are not object schemas) is absent from that revision's list.

Invariants: nothing here is per request except slicing a page out of pre-encoded items.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Callable, Final, Generic, Literal, Mapping, TypeVar

import msgspec

from ..wire.errors import LocalProtocolError
from ..wire.headers import ParamHeader, param_headers
from ..wire.validators import SchemaCheck, ValidatorFactory
from ..types import Prompt, Resource, ResourceTemplate, Tool

__all__ = [
    "TaskSupport",
    "SchemaCheck", "ValidatorFactory", "ToolEntry", "PromptEntry", "TemplateEntry", "Listing", "struct_schema",
    "is_trivial_object_schema", "Shapes",
]

TaskSupport = Literal["forbidden", "optional", "required"]
"""Whether a tool's calls may become tasks (tasks extension): never, when the client declares
the extension, or only so (a client without it gets -32021)."""


_item_encoder: Final = msgspec.json.Encoder()
T = TypeVar("T")


def struct_schema(struct_type: type[Any]) -> dict[str, Any]:
    """The JSON Schema of a type; for a Struct, with the object at the top (``"type": "object"``)."""
    schema = msgspec.json.schema(struct_type)
    ref = schema.get("$ref")
    if ref is None:
        return schema
    defs: dict[str, Any] = schema.get("$defs", {})
    name = ref.rsplit("/", 1)[-1]
    top = dict(defs[name])
    if len(defs) > 1 or _mentions(top, ref):
        top["$defs"] = defs
    return top


# Keywords that annotate a schema without constraining what it accepts (JSON Schema 2020-12,
# the core, meta-data and content vocabularies' annotations).
_ANNOTATIONS: Final = frozenset({
    "$schema", "$id", "$comment", "title", "description", "default", "examples", "deprecated", "readOnly",
    "writeOnly",
})


def is_trivial_object_schema(schema: Any) -> bool:
    """Whether ``schema`` accepts every JSON object: ``"type": "object"``, at most an empty
    ``"properties"``, and otherwise only annotation keywords (title, description, ...).

    Such a schema needs no validator: admission already refuses arguments that are not an
    object, and a structuredContent check is only "is an object".
    """
    if type(schema) is not dict or schema.get("type") != "object":
        return False
    return all(
        key == "type" or key in _ANNOTATIONS or (key == "properties" and value == {}) for key, value in schema.items()
    )


def _object_check(value: Any) -> str | None:
    return None if type(value) is dict else "structuredContent must be an object"


def _mentions(node: Any, ref: str) -> bool:
    if isinstance(node, dict):
        return node.get("$ref") == ref or any(_mentions(v, ref) for v in node.values())
    if isinstance(node, list):
        return any(_mentions(v, ref) for v in node)
    return False


class ToolEntry(msgspec.Struct, frozen=True, kw_only=True):
    """A registered tool and what was prepared for it at registration."""

    tool: Tool
    param_headers: tuple[ParamHeader, ...]
    arguments_decoder: msgspec.json.Decoder[Any] | None = None
    input_check: SchemaCheck | None = None
    output_check: SchemaCheck | None = None
    task_support: TaskSupport = "forbidden"


class PromptEntry(msgspec.Struct, frozen=True, kw_only=True):
    """A registered prompt, with its argument names prepared."""

    prompt: Prompt
    argument_names: frozenset[str]
    required_arguments: tuple[str, ...]


class TemplateEntry(msgspec.Struct, frozen=True, kw_only=True):
    """A registered resource template and its compiled matcher."""

    template: ResourceTemplate
    pattern: re.Pattern[str]
    variables: tuple[str, ...]


_EXPR = re.compile(r"\{([+#]?)([A-Za-z0-9_.,]+)\}")


def compile_template(uri_template: str) -> tuple[re.Pattern[str], tuple[str, ...]]:
    """Compile a level 1/2 RFC 6570 URI template into a full-match regex and its variable names."""
    parts: list[str] = []
    names: list[str] = []
    pos = 0
    for match in _EXPR.finditer(uri_template):
        parts.append(re.escape(uri_template[pos : match.start()]))
        operator, varnames = match.groups()
        for i, name in enumerate(varnames.split(",")):
            if i:
                parts.append(",")
            # Simple expansion stops at reserved characters; + and # allow them (RFC 6570 3.2.3).
            parts.append(f"(?P<v{len(names)}>{'.+?' if operator else '[^/?#,]+'})")
            names.append(name)
        pos = match.end()
    parts.append(re.escape(uri_template[pos:]))
    return re.compile("".join(parts)), tuple(names)


# How an item is listed in each initialize-era revision: its wire object (JSON builtins) as that
# revision has it, or None when the revision cannot take it.
Shapes = Mapping[str, Callable[[Any], Any]]


class Listing(Generic[T]):
    """One paginated list: items keyed and sorted, encoded once (per revision too), versioned by digest."""

    def __init__(self, key: Callable[[T], str], shapes: Shapes | None = None) -> None:
        self._key = key
        self._items: dict[str, T] = {}
        # get(name): the item, or None; the dict's own get, no Python frame per lookup (the dict is never replaced)
        self.get: Callable[[str], T | None] = self._items.get
        self._encoded: dict[str, bytes] = {}
        self._order: list[str] | None = []
        self._pieces: list[bytes] = []
        self._version = ""
        self._shapes: Shapes = shapes or {}
        # revision -> name -> the item as that revision lists it (absent: hidden there)
        self._era_encoded: dict[str, dict[str, bytes]] = {revision: {} for revision in self._shapes}
        self._era_pieces: dict[str, list[bytes]] = {revision: [] for revision in self._shapes}

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, name: str) -> bool:
        return name in self._items

    def values(self) -> list[T]:
        self._prepare()
        return [self._items[k] for k in self._order or ()]

    def put(self, item: T, encoded_item: Any, era_item: Any = None) -> None:
        """Add or replace ``item``; ``encoded_item`` is the wire object listed for it, and
        ``era_item`` (default: the same) what the initialize-era shapes start from."""
        name = self._key(item)
        self._items[name] = item
        self._encoded[name] = _item_encoder.encode(encoded_item)
        if self._shapes:
            plain = msgspec.to_builtins(encoded_item if era_item is None else era_item)
            for revision, shape in self._shapes.items():
                shaped = shape(plain)
                if shaped is None:
                    self._era_encoded[revision].pop(name, None)
                else:
                    self._era_encoded[revision][name] = _item_encoder.encode(shaped)
        self._order = None

    def remove(self, name: str) -> None:
        if name not in self._items:
            raise LocalProtocolError(f"Nothing named {name!r} is registered")
        del self._items[name]
        del self._encoded[name]
        for encoded in self._era_encoded.values():
            encoded.pop(name, None)
        self._order = None

    def listed_in(self, revision: str, name: str) -> bool:
        """Whether ``name`` is in ``revision``'s list (a revision without shapes lists all)."""
        encoded = self._era_encoded.get(revision)
        return name in self._items if encoded is None else name in encoded

    def _prepare(self) -> None:
        if self._order is None:
            self._order = sorted(self._items)
            self._pieces = [self._encoded[k] for k in self._order]
            for revision, encoded in self._era_encoded.items():
                self._era_pieces[revision] = [encoded[k] for k in self._order if k in encoded]
            digest = hashlib.sha256(b"\x00".join(self._pieces)).hexdigest()[:32]
            self._version = f"{len(self._pieces)}-{digest}"

    @property
    def version(self) -> str:
        """Changes whenever the list's content changes; cursors are bound to it."""
        self._prepare()
        return self._version

    def size(self, revision: str | None = None) -> int:
        """How many items the list (or ``revision``'s list) holds."""
        self._prepare()
        return len(self._pieces if revision is None else self._era_pieces.get(revision, self._pieces))

    def page(self, offset: int, size: int, revision: str | None = None) -> tuple[msgspec.Raw, int | None]:
        """The JSON array of items ``offset .. offset+size`` and the next offset (or ``None``);
        with ``revision``, of that initialize-era revision's list, its items shaped for it."""
        self._prepare()
        pieces = self._pieces if revision is None else self._era_pieces.get(revision, self._pieces)
        end = offset + size
        chunk = pieces[offset:end]
        nxt = end if end < len(pieces) else None
        return msgspec.Raw(b"[" + b",".join(chunk) + b"]"), nxt


def prepare_tool(
    tool: Tool,
    *,
    arguments_type: type[msgspec.Struct] | None,
    output_type: type[Any] | None,
    validator: Callable[[], ValidatorFactory | None],
    task_support: TaskSupport = "forbidden",
) -> ToolEntry:
    """Everything done once per tool at registration: schemas, checks, header annotations.

    ``validator()`` gives the factory that compiles a raw JSON Schema (``None``: the host
    chose unchecked); it is called only when a schema needs one, so a server whose tools are
    all Struct-typed or trivially open never loads a JSON Schema library.
    """
    try:
        headers = param_headers(tool.input_schema)
    except Exception as exc:  # an invalid x-mcp-header annotation is a host error
        raise LocalProtocolError(f"Tool {tool.name!r}: {exc}") from exc
    decoder = msgspec.json.Decoder(arguments_type) if arguments_type is not None else None
    input_check = None
    if decoder is None and not is_trivial_object_schema(tool.input_schema):
        factory = validator()
        input_check = factory(tool.input_schema) if factory is not None else None
    output_check: SchemaCheck | None = None
    if output_type is not None:
        output_check = _struct_check(output_type)
    elif is_trivial_object_schema(tool.output_schema):
        output_check = _object_check
    elif not isinstance(tool.output_schema, msgspec.UnsetType):
        factory = validator()
        output_check = factory(tool.output_schema) if factory is not None else None
    return ToolEntry(
        tool=tool,
        param_headers=headers,
        arguments_decoder=decoder,
        input_check=input_check,
        output_check=output_check,
        task_support=task_support,
    )


def _struct_check(output_type: type[Any]) -> SchemaCheck:
    def check(value: Any) -> str | None:
        try:
            msgspec.convert(value, output_type)
        except msgspec.ValidationError as exc:
            return str(exc)
        return None

    return check


def prepare_prompt(prompt: Prompt) -> PromptEntry:
    arguments = [] if isinstance(prompt.arguments, msgspec.UnsetType) else list(prompt.arguments)
    return PromptEntry(
        prompt=prompt,
        argument_names=frozenset(a.name for a in arguments),
        required_arguments=tuple(a.name for a in arguments if a.required is True),
    )


def prepare_template(template: ResourceTemplate) -> TemplateEntry:
    pattern, names = compile_template(template.uri_template)
    return TemplateEntry(template=template, pattern=pattern, variables=names)


def match_template(entries: list[TemplateEntry], uri: str) -> tuple[TemplateEntry, dict[str, str]] | None:
    """The first template (in listing order) that matches ``uri``, with its variables."""
    for entry in entries:
        m = entry.pattern.fullmatch(uri)
        if m is not None:
            return entry, {name: m.group(f"v{i}") for i, name in enumerate(entry.variables)}
    return None


def resource_key(resource: Resource) -> str:
    return resource.uri
