"""What a client engine learns from results and keeps for later requests.

Owns, per :class:`~mcpwire.Client`: each listed tool's ``x-mcp-header`` annotations (learned at
tools/list, sent as ``Mcp-Param-*`` headers on tools/call; a tool whose annotations break the
rules is left out and named in ``rejected_tools``), and the last input_required round of each
request, bounded, for ``Client.retry``. The response readers (``stream.py``) write here and
the request builder (``engine.py``) reads here, so neither imports the other.
"""

from __future__ import annotations

from typing import Any, Final

from ..types import RequestId, Tool
from ..wire.headers import InvalidParamHeader, ParamHeader, param_headers
from ..wire.validators import SchemaCheck, ValidatorFactory
from .events import InputRequired

__all__ = ["Learned", "MAX_PENDING_ROUNDS"]

MAX_PENDING_ROUNDS: Final = 256


class Learned:
    """Tool header annotations and pending input rounds of one client engine."""

    __slots__ = ("tool_headers", "rejected_tools", "rounds", "output_checks")

    def __init__(self) -> None:
        self.tool_headers: dict[str, tuple[ParamHeader, ...]] = {}
        self.rejected_tools: dict[str, str] = {}
        """Tools left out of tools/list results, with the rule their annotation broke."""
        self.rounds: dict[RequestId, InputRequired] = {}
        self.output_checks: dict[str, SchemaCheck | str] = {}
        """Each listed tool's compiled outputSchema (a message when it does not compile)."""

    def record_round(self, event: InputRequired) -> None:
        self.rounds.pop(event.request.id, None)
        if len(self.rounds) >= MAX_PENDING_ROUNDS:
            del self.rounds[next(iter(self.rounds))]
        self.rounds[event.request.id] = event

    def learn_output_schemas(self, tools: list[Tool], validator: ValidatorFactory) -> None:
        """Compile each listed tool's outputSchema once, for the check of its results."""
        for tool in tools:
            if not isinstance(tool.output_schema, dict):
                self.output_checks.pop(tool.name, None)
                continue
            try:
                self.output_checks[tool.name] = validator(tool.output_schema)
            except ValueError as exc:
                self.output_checks[tool.name] = f"its outputSchema is not a valid JSON Schema: {exc}"

    def check_output(self, tool: str, result: dict[str, Any]) -> str | None:
        """Why a complete tools/call result breaks the tool's outputSchema, else ``None``
        (specification: Server > Tools, Output Schema: clients SHOULD validate)."""
        check = self.output_checks.get(tool)
        if check is None or result.get("isError") is True:
            return None
        if isinstance(check, str):
            return f"tool {tool!r}: {check}"
        if "structuredContent" not in result:
            return f"tool {tool!r} declares an outputSchema but its result has no structuredContent"
        why = check(result["structuredContent"])
        return None if why is None else f"structuredContent of tool {tool!r} does not match its outputSchema: {why}"

    def learn_tools(self, tools: list[Tool]) -> list[Tool]:
        """Record each listed tool's ``x-mcp-header`` annotations; return the callable ones."""
        kept: list[Tool] = []
        for tool in tools:
            try:
                headers = param_headers(tool.input_schema, tool=tool.name)
            except InvalidParamHeader as exc:
                self.rejected_tools[tool.name] = exc.message
                self.tool_headers.pop(tool.name, None)
                continue
            self.rejected_tools.pop(tool.name, None)
            self.tool_headers[tool.name] = headers
            kept.append(tool)
        return kept
