"""State that outlives a request or a process: ``keys`` (the signing keyring), ``broker`` (notification
fan-out between processes), ``sqlite_tasks`` (a durable task store), ``redis/`` (sessions, tasks and the
broker on Redis). Imports only the core."""
