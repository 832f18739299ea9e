"""Server drivers: bytes in, bytes out. ``trio_h11`` (Streamable HTTP on trio and h11), ``asgi``
(any ASGI 3 server), ``stdio`` (NDJSON over stdin/stdout); ``answers`` is the one place where a
driver turns the engine's kinds of answer into what it sends; ``redis_state`` puts an App's shared
state on Redis. Imports ``app``, ``oauth`` and ``state``; never ``client`` or ``testing``."""
