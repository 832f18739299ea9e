"""The shape of a JSON Schema validator, shared by both sides: the server checks tool arguments
and results with one, the client checks ``structuredContent`` against a tool's
``outputSchema`` with one (``mcpwire.jsonschema_validator()`` makes one from ``jsonschema``)."""

from __future__ import annotations

from typing import Any, Callable, Mapping

__all__ = ["SchemaCheck", "ValidatorFactory"]

SchemaCheck = Callable[[Any], "str | None"]
"""A compiled JSON Schema check: returns ``None`` when the value is valid, else a message."""

ValidatorFactory = Callable[[Mapping[str, Any]], SchemaCheck]
"""Compiles a JSON Schema (2020-12) into a :data:`SchemaCheck`; called once per schema."""
