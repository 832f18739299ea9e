"""Initialize-era sessions, for hosts that keep or inspect them: the session, where sessions
live (the store interface and its bounded in-memory default), and the session's GET stream.

A :class:`~mcpwire.Server` given ``session_ids`` keeps its sessions in
``sessions=MemorySessionStore()`` unless another store is passed, and each session's SSE
events (for resumption with ``Last-Event-ID``) in what ``event_store=MemoryEventStore`` makes
(a callable returning an :class:`EventStore`; a GET stream's key begins with :data:`STANDALONE`).

:data:`INITIALIZE_ERA` names the revisions served on sessions; :class:`Response` is a client's
answer as ``receive_answer`` takes it (a host of several processes passes one on). Client side: :class:`Resume`, how a client resumes a response stream that ended early
(``HttpResponseParser.resume`` and ``.interrupted()``), and :class:`InvalidMessage`, a message
of the server's that the client answers with an error (``Client.reject``).
"""

from .client.events import InvalidMessage
from .client.stream import Resume
from .server.events import HttpBatch
from .server.listen import ResumedStream, SessionStream, StdioSessionStream
from .server.session import STANDALONE, EventStore, MemoryEventStore, MemorySessionStore, Session, SessionStore
from .wire.envelope import Response
from .wire.versions import INITIALIZE_ERA

__all__ = [
    "Session", "SessionStore", "MemorySessionStore", "EventStore", "MemoryEventStore", "SessionStream",
    "StdioSessionStream", "ResumedStream", "HttpBatch", "Resume", "InvalidMessage", "INITIALIZE_ERA", "Response", "STANDALONE",
]
