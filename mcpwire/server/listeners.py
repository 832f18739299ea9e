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
    """Open listen streams, in the order they were admitted; and the GET stream of each
    initialize-era session that has one open here, by session id (:meth:`session_stream`)."""

    __slots__ = ("_streams", "_sessions")

    def __init__(self) -> None:
        self._streams: dict[int, Any] = {}
        self._sessions: dict[str, Any] = {}

    def session_stream(self, session_id: str) -> Any:
        """The open GET stream of session ``session_id`` here, or ``None``."""
        return self._sessions.get(session_id)

    def hold(self, session_id: str, stream: Any) -> None:
        """``stream`` is the GET stream of session ``session_id`` here."""
        self._sessions[session_id] = stream

    def let_go(self, session_id: str, stream: Any) -> None:
        """``stream`` ended: it is no longer the GET stream of session ``session_id`` here."""
        if self._sessions.get(session_id) is stream:
            del self._sessions[session_id]

    def add(self, stream: Any) -> None:
        self._streams[id(stream)] = stream

    def discard(self, stream: Any) -> None:
        self._streams.pop(id(stream), None)

    def __len__(self) -> int:
        return len(self._streams)

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._streams.values()))  # a snapshot: delivering may close a stream
