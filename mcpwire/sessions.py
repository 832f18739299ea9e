"""Initialize-era sessions, for hosts that keep or inspect them: the session, where sessions
live (the store interface and its bounded in-memory default), and the session's GET stream.

A :class:`~mcpwire.Server` given ``session_ids`` keeps its sessions in
``sessions=MemorySessionStore()`` unless another store is passed.
"""

from .server.listen import ResumedStream, SessionStream
from .server.session import MemorySessionStore, Session, SessionStore

__all__ = ["Session", "SessionStore", "MemorySessionStore", "SessionStream", "ResumedStream"]
