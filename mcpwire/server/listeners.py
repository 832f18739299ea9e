"""The registry of open subscriptions/listen streams of one server engine.

Owns which streams are open, bounded by ``max_listen_streams``: a stream is added when the
engine admits it and leaves when it closes or is cancelled. The engine fans list_changed and
resources/updated events out over it. Typed loosely (any object) so that this module needs
nothing from ``listen.py``, which uses it.
"""

from __future__ import annotations

from typing import Any, Iterator

__all__ = ["Listeners"]


class Listeners:
    """Open listen streams, in the order they were admitted."""

    __slots__ = ("_streams",)

    def __init__(self) -> None:
        self._streams: dict[int, Any] = {}

    def add(self, stream: Any) -> None:
        self._streams[id(stream)] = stream

    def discard(self, stream: Any) -> None:
        self._streams.pop(id(stream), None)

    def __len__(self) -> int:
        return len(self._streams)

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._streams.values()))  # a snapshot: delivering may close a stream
