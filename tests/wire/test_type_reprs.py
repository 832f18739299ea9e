"""The wire types' reprs show what a value holds: the fields that differ from their defaults, never
a row of ``UNSET`` (``repr_omit_defaults`` on ``WireType``, inherited by every type of
``mcpwire.types``), and nothing else about the types changes with it."""

from __future__ import annotations

import inspect

import msgspec
import pytest

import mcpwire.types as types
from mcpwire.types import CallToolResult, Implementation, TextContent, Tool, WireType

WIRE_TYPES = sorted(
    (obj for name in types.__all__ if inspect.isclass(obj := getattr(types, name)) and issubclass(obj, WireType)),
    key=lambda t: t.__name__,
)


def test_a_built_value_reads_as_it_was_built() -> None:
    tool = Tool(name="add", input_schema={"type": "object"})
    assert repr(tool) == "Tool(name='add', input_schema={'type': 'object'})"
    result = CallToolResult(content=[TextContent(text="42")], is_error=False)
    assert repr(result) == "CallToolResult(content=[TextContent(text='42')], is_error=False)"


def test_a_decoded_value_shows_what_came() -> None:
    raw = b'{"content": [{"type": "text", "text": "42"}], "isError": false}'
    assert repr(msgspec.json.decode(raw, type=CallToolResult)) == (
        "CallToolResult(content=[TextContent(text='42')], is_error=False)")
    decoded = msgspec.json.decode(b'{"name": "demo", "version": "1.0", "title": "Demo"}', type=Implementation)
    assert repr(decoded) == "Implementation(name='demo', version='1.0', title='Demo')"
    assert "UNSET" not in repr(msgspec.json.decode(b'{"name": "t", "inputSchema": {}}', type=Tool))


@pytest.mark.parametrize("wire_type", WIRE_TYPES, ids=lambda t: t.__name__)
def test_every_wire_type_omits_defaults_from_its_repr_only(wire_type: type[WireType]) -> None:
    config = wire_type.__struct_config__
    assert config.repr_omit_defaults
    assert not config.omit_defaults  # encoding keeps every field that is set (UNSET is never encoded)


def test_encoding_and_equality_are_unchanged() -> None:
    tool = Tool(name="add", input_schema={"type": "object"}, description="Add")
    assert msgspec.json.encode(tool) == b'{"name":"add","description":"Add","inputSchema":{"type":"object"}}'
    assert tool == Tool(name="add", input_schema={"type": "object"}, description="Add")
    assert tool != Tool(name="add", input_schema={"type": "object"})
