"""The client sessions: ``session`` (the transport-independent :class:`~mcpwire_adapters.client.session.Session`),
its transports ``http`` and ``stdio``, ``blocking`` (the same as plain methods), and what a session
drives: ``subscription``, ``task_follower`` (both typed against ``port``), ``session_feed``, ``cache``,
``session_stream`` (an initialize-era session's GET stream over HTTP). Imports ``oauth``; never ``app``."""
