"""Streamable HTTP on trio and h11: ``server`` (connections, the request loop), ``reader`` (a
request's head and body under time limits), ``plain`` (answers written without the engine),
``listeners`` (SO_REUSEPORT sockets for several worker processes)."""
