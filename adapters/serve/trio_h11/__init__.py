"""Streamable HTTP on trio and h11: ``server`` (serving: the listeners, accepting, the deadline
timer, stopping), ``connection`` (one connection, the request loop), ``config`` (the limits),
``reader`` (who reads a connection's socket, and when), ``plain`` (the fast path of a complete
JSON answer, written without h11), ``listeners`` (SO_REUSEPORT sockets for several worker
processes)."""
