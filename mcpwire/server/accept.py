"""The ``Accept`` header: which of the two media types of Streamable HTTP a client takes.

Owns (RFC 9110 section 12.5.1; specification: Basic > Transports > Streamable HTTP, sending
messages and listening for messages): reading an ``Accept`` value into :class:`Accepts`, the
one decision every framing of an answer follows. A server answers a request with either
``application/json`` or ``text/event-stream``; the specification asks clients to list both,
and widely used clients list one (``application/json``, ``text/event-stream``) or ``*/*``. So
the decision is what the client can take, read the way RFC 9110 reads the header:

- no ``Accept`` header (or one naming no media range mcpwire can read): any media type;
- media ranges compare without case; a type's weight is the one of the most specific range
  that matches it (``application/json`` over ``application/*`` over ``*/*``), the highest when
  that range is listed more than once; ``q=0`` means "not acceptable";
- media type parameters other than ``q`` (``charset=utf-8``) do not narrow a range, and an
  element that is not a media range, or whose weight is not a qvalue, is left out;
- repeated ``Accept`` headers are one list (RFC 9110 section 5.3): the caller joins them.

Invariant: every answer is framed as the :class:`Accepts` decided at admission (``http.admit``,
or the call fast path's memo of the same head) says; nothing else reads the header.
Bounded: the header's size is the driver's; decisions are cached for 256 distinct values.
"""

from __future__ import annotations

import enum
import re
from functools import lru_cache
from typing import Final

__all__ = ["Accepts", "read_accept"]


class Accepts(enum.Enum):
    """What a client takes, decided once at admission and carried to every framing of its answers."""

    BOTH = "both"
    """``application/json`` and ``text/event-stream``: the server chooses per answer."""
    JSON = "json"
    """``application/json`` only: answers are JSON, notifications that would ride an event
    stream (progress, log messages) are not sent, and an answer that must stream is 406."""
    SSE = "sse"
    """``text/event-stream`` only: every 200 answer is an event stream (a single event where
    JSON would have been sent)."""

    @property
    def streams(self) -> bool:
        """Whether the client takes an event stream."""
        return self is not Accepts.JSON


_JSON: Final = ("application", "json")
_SSE: Final = ("text", "event-stream")
# An element of the list, or a parameter of an element: commas (semicolons) inside a
# quoted-string do not split (RFC 9110 section 5.6.4).
_ELEMENT: Final = re.compile(r'(?:[^,"]|"(?:[^"\\]|\\.)*"?)+')
_PARAMETER: Final = re.compile(r'(?:[^;"]|"(?:[^"\\]|\\.)*"?)+')
_TOKEN: Final = re.compile(r"[!#$%&'*+.^_`|~0-9a-z-]+")
_QVALUE: Final = re.compile(r"0(?:\.[0-9]*)?|1(?:\.0*)?")  # RFC 9110 section 12.4.2, any number of decimals


@lru_cache(maxsize=256)
def read_accept(value: bytes | None) -> Accepts | None:
    """What a client whose ``Accept`` is ``value`` takes (``None``: no such header; repeated
    headers joined with ``,``), or ``None`` when it takes neither media type (406)."""
    ranges = _media_ranges(value) if value else []
    if not ranges:
        return Accepts.BOTH  # RFC 9110 section 12.5.1: without a preference, any media type
    json = _weight(ranges, _JSON) > 0
    sse = _weight(ranges, _SSE) > 0
    if json and sse:
        return Accepts.BOTH
    if json:
        return Accepts.JSON
    return Accepts.SSE if sse else None


def _media_ranges(value: bytes) -> list[tuple[str, str, float]]:
    """The readable media ranges of an Accept value: ``(type, subtype, weight)``, lowercase."""
    out = []
    for element in _ELEMENT.findall(value.decode("latin-1").lower()):
        parameters = _PARAMETER.findall(element)
        if not parameters:
            continue
        kind, slash, subtype = parameters[0].strip(" \t").partition("/")
        if not slash or _TOKEN.fullmatch(kind) is None or _TOKEN.fullmatch(subtype) is None:
            continue  # not a media range
        if kind == "*" and subtype != "*":
            continue
        weight: float | None = 1.0
        for parameter in parameters[1:]:
            name, _, text = parameter.partition("=")
            if name.strip(" \t") == "q":
                text = text.strip(" \t")
                weight = float(text) if _QVALUE.fullmatch(text) else None
                break  # the weight ends the media type's parameters (RFC 9110 section 12.4.2)
        if weight is not None:
            out.append((kind, subtype, weight))
    return out


def _weight(ranges: list[tuple[str, str, float]], media: tuple[str, str]) -> float:
    """The weight of ``media``: that of the most specific matching range, the highest of
    equally specific ones; 0 when none matches."""
    best, specificity = 0.0, -1
    kind, subtype = media
    for range_kind, range_subtype, weight in ranges:
        if range_kind == kind and range_subtype == subtype:
            level = 2
        elif range_kind == kind and range_subtype == "*":
            level = 1
        elif range_kind == "*":
            level = 0
        else:
            continue
        if level > specificity:
            best, specificity = weight, level
        elif level == specificity:
            best = max(best, weight)
    return best
