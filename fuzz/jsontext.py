"""JSON text the standard encoders will not write: duplicate keys and raw literals.

:class:`Dup` is an object whose members are an ordered list of pairs, so a key may repeat;
:class:`RawJSON` is text inserted verbatim (``1e400``, ``NaN``, a 5000-digit integer, a lone
surrogate escape...). :func:`dumps` writes any mix of those and plain JSON values.
"""

from __future__ import annotations

import json
from typing import Any, Final

__all__ = ["Dup", "RawJSON", "dumps", "RAW_LITERALS"]


class Dup:
    """A JSON object written member by member, in order, duplicates and all."""

    __slots__ = ("pairs",)

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        self.pairs = pairs

    def __repr__(self) -> str:
        return f"Dup({self.pairs!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Dup) and other.pairs == self.pairs


class RawJSON:
    """Text written as is where a JSON value goes."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"RawJSON({self.text[:40]!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RawJSON) and other.text == self.text


# Values that are not JSON, or JSON that Python or msgspec cannot hold.
RAW_LITERALS: Final = (
    "NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1E+999", "-0", "0.0e0",
    "9" * 5000, "-" + "9" * 4301, "18446744073709551616", "9223372036854775808", "-9223372036854775809",
    '"\\ud800"', '"\\udc00x"', '"a\\ud83d"', '"\\u0000"', '"\\ud83d\\ude00"',
    "[" * 1200 + "]" * 1200, '{"a":' * 600 + "1" + "}" * 600,
    "01", "+1", ".5", "0x10", "True", "undefined", "'x'",
)


def dumps(value: Any) -> str:
    """``value`` as JSON text, with :class:`Dup` and :class:`RawJSON` written as they say."""
    if isinstance(value, RawJSON):
        return value.text
    if isinstance(value, Dup):
        return "{" + ",".join(json.dumps(k) + ":" + dumps(v) for k, v in value.pairs) + "}"
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(k) + ":" + dumps(v) for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(dumps(v) for v in value) + "]"
    return json.dumps(value)
