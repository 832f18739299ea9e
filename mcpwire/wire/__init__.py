"""The wire: facts both engines share (not a public import path; use ``mcpwire``).

Envelope, errors, HTTP header rules, the method table, params decoding, request ``_meta``,
SSE and NDJSON framing, and the per-revision facts. Imports only ``mcpwire.types``, msgspec
and the standard library; never ``mcpwire.server`` or ``mcpwire.client``.
"""
