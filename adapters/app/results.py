"""A handler's answer as the result the engine takes, the way users write it.

Each tool gets its converter at registration (:func:`tool_converter`), chosen by what it declared
(an ``output_type``, or what its return annotation says: :class:`~.signature.OutputPlan`); the
App calls it for every answer that is not already a ``CallToolResult``. Prompts' answers go
through :func:`prompt_result`.

What a tool may answer (either form of handler):

- a ``CallToolResult`` or a :class:`NeedInput`: taken as they are;
- a ``str``: one text block;
- ``None``: no content; a number or a bool: one text block of its JSON (``42``, ``true``);
- ``bytes``: an embedded blob resource, or an image or audio block when the return annotation
  says so (``Annotated[bytes, MimeType("image/png")]``);
- a content block, or a list of them: that content;
- anything else msgspec encodes (a dict, a list, a Struct, a dataclass...): ``structuredContent``
  plus one text block holding the same JSON (the specification's advice, for clients that read
  only the content); a value that is not a JSON object is ``{"result": value}`` there.

With an output type, the value must be an instance of it or plain JSON data (the core checks
the structuredContent against the type).
"""

from __future__ import annotations

import base64
import typing
import urllib.parse
from collections.abc import Callable
from typing import Any, Final

import msgspec

import mcpwire
from mcpwire.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    GetPromptResult,
    ImageContent,
    PromptMessage,
    ReadResourceResult,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from msgspec import UNSET, UnsetType

from .need_input import NeedInput

__all__ = ["Converter", "prompt_result", "resource_result", "tool_converter"]

Converter = Callable[[Any], Any]
_CONTENT: Final = (TextContent, ImageContent, AudioContent, EmbeddedResource, ResourceLink)
_ROLES: Final = frozenset({"user", "assistant"})
_encode = msgspec.json.encode


def _to_builtins(name: str, answer: Any, expected: str) -> Any:
    try:
        return msgspec.to_builtins(answer, str_keys=True)
    except (TypeError, ValueError) as exc:
        raise mcpwire.LocalProtocolError(
            f"Tool {name!r} answered with {type(answer).__name__}, which is not JSON ({exc}); expected {expected}"
        ) from None


def _json_result(data: Any, structured: Any) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=_encode(data).decode())], structured_content=structured)


def _bytes_content(answer: bytes | bytearray | memoryview, mime_type: str | None, uri: str) -> Any:
    data = base64.b64encode(answer).decode()
    if mime_type is not None and mime_type.startswith("image/"):
        return ImageContent(data=data, mime_type=mime_type)
    if mime_type is not None and mime_type.startswith("audio/"):
        return AudioContent(data=data, mime_type=mime_type)
    return EmbeddedResource(resource=BlobResourceContents(
        uri=uri, blob=data, mime_type=mime_type or "application/octet-stream",
    ))


def result_uri(name: str) -> str:
    """The URI of a tool's bytes answered as an embedded resource: ``tool://<name>/result``."""
    return f"tool://{urllib.parse.quote(name, safe='')}/result"


_PLAIN_EXPECTED: Final = "a CallToolResult, a str, a NeedInput, None, bytes, content blocks or a JSON value"


def tool_converter(
    name: str, *, output_type: Any = None, wrapped: bool = False, mime_type: str | None = None, derived: bool = False,
) -> Converter:
    """The converter of tool ``name``'s answers (``str``, ``CallToolResult`` and ``NeedInput``
    never reach it: the App passes them on first). ``output_type``: the declared output type
    (``wrapped``: the ``{"result": T}`` Struct a non-object return annotation was listed as;
    ``derived``: it came from the return annotation, not ``output_type=``)."""
    uri = result_uri(name)
    if output_type is None:

        def plain(answer: Any) -> Any:
            if answer is None:
                return CallToolResult(content=[])
            if isinstance(answer, (bool, int, float)):
                return CallToolResult(content=[TextContent(text=_encode(answer).decode())])
            if isinstance(answer, (bytes, bytearray, memoryview)):
                return CallToolResult(content=[_bytes_content(answer, mime_type, uri)])
            if isinstance(answer, _CONTENT):
                return CallToolResult(content=[answer])
            if type(answer) is list and answer and all(isinstance(item, _CONTENT) for item in answer):
                return CallToolResult(content=list(answer))
            data = _to_builtins(name, answer, _PLAIN_EXPECTED)
            if type(data) is dict:
                return _json_result(data, data)
            if type(data) is list:
                return _json_result(data, {"result": data})
            return CallToolResult(content=[TextContent(text=data if type(data) is str else _encode(data).decode())])

        return plain
    if wrapped:

        def wrap(answer: Any) -> Any:
            data = _to_builtins(name, answer, "a value of its return annotation")
            return _json_result(data, {"result": data})

        return wrap
    type_name = getattr(output_type, "__name__", None) or str(output_type)
    expected = (
        f"a CallToolResult, a str, a NeedInput or an instance of its "
        f"{'return annotation' if derived else 'output_type'} {type_name}"
    )

    def structured(answer: Any) -> Any:
        if isinstance(answer, msgspec.Struct) and not _is_instance(answer, output_type):
            raise mcpwire.LocalProtocolError(f"Tool {name!r} answered with {type(answer).__name__}; expected {expected}")
        data = _to_builtins(name, answer, expected)
        if type(data) is not dict:
            raise mcpwire.LocalProtocolError(f"Tool {name!r} answered with {type(answer).__name__}; expected {expected}")
        return _json_result(data, data)

    return structured


def _is_instance(value: Any, declared: Any) -> bool:
    """``isinstance`` for a declared output type, generic aliases included (``dict[str, int]``
    checks ``dict``; the core's output check then checks the rest)."""
    for candidate in (declared, typing.get_origin(declared)):
        if candidate is None:
            continue
        try:
            return isinstance(value, candidate)
        except TypeError:  # not a runtime-checkable type (a TypedDict, a Literal...)
            continue
    return False


# -- prompts --------------------------------------------------------------------------------------
def prompt_result(name: str, answer: Any, description: str | None) -> Any:
    """A prompt handler's answer as a ``GetPromptResult``: a ``str`` is one user message; a list
    holds messages, each a ``PromptMessage``, a ``(role, text)`` pair (``role`` ``"user"`` or
    ``"assistant"``; the text may be a content block), or a ``str`` (a user message). A
    ``GetPromptResult`` or a ``NeedInput`` is taken as it is."""
    if isinstance(answer, (GetPromptResult, NeedInput)):
        return answer
    if isinstance(answer, str):
        messages = [PromptMessage(role="user", content=TextContent(text=answer))]
    elif isinstance(answer, PromptMessage):
        messages = [answer]
    elif type(answer) is list:
        messages = [_message(name, item) for item in answer]
    else:
        raise mcpwire.LocalProtocolError(
            f"Prompt {name!r} answered with {type(answer).__name__}; expected a GetPromptResult, a str, "
            f"a list of messages or a NeedInput"
        )
    return GetPromptResult(messages=messages, description=UNSET if description is None else description)


def _message(name: str, item: Any) -> PromptMessage:
    if isinstance(item, PromptMessage):
        return item
    if isinstance(item, str):
        return PromptMessage(role="user", content=TextContent(text=item))
    if isinstance(item, tuple) and len(item) == 2 and item[0] in _ROLES:
        role, content = item
        if isinstance(content, str):
            return PromptMessage(role=role, content=TextContent(text=content))
        if isinstance(content, _CONTENT):
            return PromptMessage(role=role, content=content)
    raise mcpwire.LocalProtocolError(
        f"Prompt {name!r} answered with a message {type(item).__name__}; expected a PromptMessage, a str "
        f"or a (role, text) pair with role 'user' or 'assistant'"
    )


def resource_result(uri: str, answer: Any, mime_type: str | UnsetType = UNSET) -> Any:
    """A resource handler's answer as a ReadResourceResult: a ``str`` as text, ``bytes`` as a
    base64 blob, both with the ``mimeType`` the resource (or template) declared; anything else
    as it is."""
    if isinstance(answer, str):
        return ReadResourceResult(contents=[TextResourceContents(uri=uri, text=answer, mime_type=mime_type)])
    if isinstance(answer, bytes):
        blob = base64.b64encode(answer).decode()
        return ReadResourceResult(contents=[BlobResourceContents(uri=uri, blob=blob, mime_type=mime_type)])
    return answer
