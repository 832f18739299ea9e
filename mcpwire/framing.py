"""Framing for people who build their own drivers: Server-Sent Events and NDJSON, both ways.

The engines use these themselves; a driver needs them only to read or write a stream the
engine does not (for example an SSE keep-alive comment, or splitting a stdio pipe into lines
before deciding what to do with them). Readers are incremental and bounded: feed bytes in any
chunking and get whole events or lines; an oversize one is a defined error, never unbounded
memory.
"""

from .wire.ndjson import LineReader, OversizeLine, encode_line
from .wire.sse import SSEEvent, SSEReader, encode_comment, encode_event

__all__ = ["SSEReader", "SSEEvent", "encode_event", "encode_comment", "LineReader", "OversizeLine", "encode_line"]
