"""The client sessions: ``session`` (the transport-independent :class:`~mcpwire_adapters.client.session.Session`),
its transports ``http`` and ``stdio``, ``blocking`` (the same as plain methods), and what a session
drives: ``subscription``, ``task_follower``, ``session_feed``, ``cache``. Imports ``oauth``; never ``app``."""
