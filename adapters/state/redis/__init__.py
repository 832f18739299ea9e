"""Redis stores (the ``redis`` extra): ``sessions`` (with ``events``, a session's SSE events, and
``stream_lease``, its one GET stream across processes), ``tasks``, ``broker``."""
