"""The server engine (not a public import path; use ``mcpwire``).

Admission, exchanges, listen streams, the catalog, HTTP and stdio transport rules, signed
tokens and the state tables. Imports ``mcpwire.wire`` and ``mcpwire.types``; never
``mcpwire.client``.
"""
