"""The client engine (not a public import path; use ``mcpwire``).

Building requests, reading response streams into events, and the request state table.
Imports ``mcpwire.wire`` and ``mcpwire.types``; never ``mcpwire.server``.
"""
