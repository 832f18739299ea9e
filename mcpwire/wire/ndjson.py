"""Newline-delimited JSON framing for the stdio transport.

Owns: cutting a byte stream into message lines and terminating outgoing lines (specification:
Basic > Transports > stdio: one JSON-RPC message per line, no embedded newline; answering an
oversize line with -32600 and ``id: null`` is mcpwire's choice). It knows nothing of JSON: a
line is opaque bytes, decoded by the engine.

Invariants:

* A line is the bytes before a b"\\n", with one trailing b"\\r" removed. Lines that are empty
  or only JSON whitespace (space, tab, CR) are skipped: they carry no message.
* Memory is bounded by ``max_line_bytes``: a line longer than that (counted before its
  b"\\n", a CR included) becomes one :class:`OversizeLine` marker the moment the limit is
  crossed, and its remaining bytes are discarded as they arrive, unbuffered, up to the next
  b"\\n". The framing survives: the lines after it are read normally.
* Chunking never changes which lines come out, nor where a marker sits among them; only
  ``OversizeLine.size_seen`` depends on where the chunks were cut.
* Returned lines are owned, immutable ``bytes``; no scanned byte is scanned twice.
"""

from __future__ import annotations

import msgspec

from .errors import LocalProtocolError

__all__ = ["LineReader", "OversizeLine", "encode_line"]

# JSON's insignificant whitespace (RFC 8259); a line of other control bytes is left for the
# JSON decoder to reject with -32700, rather than silently dropped.
_JSON_WS = b" \t\r"


class OversizeLine(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """Stands for one line longer than ``max_line_bytes``; answer it with -32600, ``id: null``.

    ``size_seen`` is how many bytes of the line had arrived when the limit was crossed
    (always more than the limit; it depends on chunking, so it is for diagnostics only).
    """

    size_seen: int


def encode_line(message: bytes) -> bytes:
    """Frame one message (a JSON text) as a line; write the returned bytes to the stream.

    Raises :class:`LocalProtocolError` if ``message`` contains b"\\n", which would split it.
    (msgspec never emits a raw newline in compact JSON.)
    """
    if b"\n" in message:
        raise LocalProtocolError("an NDJSON message must not contain a newline")
    return message + b"\n"


class LineReader:
    """Incremental, bounded splitter of a newline-delimited byte stream (stdin or stdout).

    Call :meth:`feed` with each chunk read and handle the items it returns in order: a
    ``bytes`` is one message line, an :class:`OversizeLine` one line too long to keep. Call
    :meth:`close` at end of file: it returns a last line that had no b"\\n". ``feed()`` after
    ``close()`` raises :class:`LocalProtocolError`; ``close()`` again returns ``[]``.
    """

    def __init__(self, max_line_bytes: int = 4 * 1024 * 1024) -> None:
        if max_line_bytes < 1:
            raise LocalProtocolError("max_line_bytes must be positive")
        self._max = max_line_bytes
        # The unfinished line as the chunk pieces it came in, joined once when it ends: a
        # long line arriving in small chunks costs linear time, not quadratic.
        self._parts: list[bytes] = []
        self._size = 0
        self._discarding = False  # inside an oversize line, until its b"\n"
        self._closed = False

    @property
    def buffered_bytes(self) -> int:
        """Bytes of the unfinished line held; never more than ``max_line_bytes``."""
        return self._size

    def feed(self, chunk: bytes | bytearray | memoryview) -> list[bytes | OversizeLine]:
        """Split the next chunk; return the lines (and oversize markers) it completed."""
        if self._closed:
            raise LocalProtocolError("LineReader.feed() called after close()")
        # bytes() of a bytearray or memoryview copies, so no line aliases a caller's buffer.
        data = chunk if type(chunk) is bytes else bytes(chunk)
        out: list[bytes | OversizeLine] = []
        pieces = data.split(b"\n")
        tail = pieces.pop()
        if pieces:
            first = pieces[0]
            if self._discarding:
                self._discarding = False
            elif self._parts:
                size = self._size + len(first)
                if size > self._max:
                    out.append(OversizeLine(size_seen=size))
                else:
                    self._parts.append(first)
                    self._emit(b"".join(self._parts), out)
                self._parts = []
                self._size = 0
            else:
                self._emit(first, out)
            for line in pieces[1:]:
                self._emit(line, out)
        if tail and not self._discarding:
            size = self._size + len(tail)
            if size > self._max:
                out.append(OversizeLine(size_seen=size))
                self._parts = []
                self._size = 0
                self._discarding = True
            else:
                self._parts.append(tail)
                self._size = size
        return out

    def close(self) -> list[bytes | OversizeLine]:
        """End of file: return the last line if it had no b"\\n" (a sender may omit it)."""
        out: list[bytes | OversizeLine] = []
        if not self._closed:
            self._closed = True
            if self._parts:
                self._emit(b"".join(self._parts), out)
            self._parts = []
            self._size = 0
        return out

    def _emit(self, line: bytes, out: list[bytes | OversizeLine]) -> None:
        if len(line) > self._max:
            out.append(OversizeLine(size_seen=len(line)))
            return
        if line.endswith(b"\r"):
            line = line[:-1]
        # strip() returns the line itself when there is nothing to strip: no copy.
        if line.strip(_JSON_WS):
            out.append(line)
