"""Server-Sent Events framing: the encoder and an incremental, bounded reader.

Owns: the ``text/event-stream`` wire format (WHATWG HTML, "Server-sent events", the
"event stream interpretation" rules) that Streamable HTTP uses for progress and log
notifications, listen streams and keep-alives (specification: Basic > Transports > Streamable
HTTP, Receiving Messages). It knows nothing of JSON-RPC: ``data`` is opaque text to it.

Invariants:

* Chunking never changes the result: a stream fed whole, or split at any byte offsets, gives
  the same events, and breaks the size limit (if it does) after the same events.
* Memory is bounded: the bytes of the pending event (every line since the blank line that
  ended the previous one, plus the unfinished line) never exceed ``max_event_bytes``; one
  more byte is a :class:`RemoteProtocolError` (-32600) and the reader is dead from then on.
* The reader never drops a complete event: when one chunk completes events and then breaks
  the limit, ``feed()`` returns those events and the next ``feed()`` or ``close()`` raises.
* ``encode_event`` output read by :class:`SSEReader` gives back the data, with CR and CRLF in
  it read as LF (the format cannot carry a raw CR).

Lines are split on bytes before decoding. This is exactly the spec's decode-then-split:
UTF-8 never uses a byte below 0x80 inside a multibyte sequence, so CR, LF, ":" and " " are
found at the same places either way, and an invalid sequence cut short by one of them turns
into one U+FFFD in both. Field values are decoded after the chunks holding them were joined,
so a character split across chunks decodes whole.
"""

from __future__ import annotations

import msgspec

from .errors import LocalProtocolError, RemoteProtocolError

__all__ = ["SSEEvent", "SSEReader", "encode_comment", "encode_event"]

_BOM = b"\xef\xbb\xbf"
# int() of an unbounded digit string is slow (and refused past 4300 digits); 18 digits is
# already 30 million years in milliseconds, so a longer retry is ignored like a bad one.
_MAX_RETRY_DIGITS = 18


class SSEEvent(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One dispatched event.

    ``event`` is the event type ("message" when the event had no non-empty ``event`` field),
    ``data`` its data lines joined with LF. ``id`` is the stream's last event ID when the event
    was dispatched (it persists across events, per the spec; ``None`` while it is empty, that
    is while a reconnecting client would send no ``Last-Event-ID``). ``retry`` is the stream's
    reconnection time in milliseconds as last set by a ``retry`` field, ``None`` if never set.
    """

    event: str = "message"
    data: str
    id: str | None = None
    retry: int | None = None


def _split_lines(text: bytes) -> list[bytes]:
    # A reader ends a line at CRLF, LF or CR, so all three must split to stay lossless.
    if b"\r" in text:
        text = text.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return text.split(b"\n")


def _utf8(name: str, value: str) -> bytes:
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        raise LocalProtocolError(f"SSE {name} is not encodable as UTF-8") from None


def _field_value(name: str, value: str) -> bytes:
    if "\r" in value or "\n" in value or "\0" in value:
        raise LocalProtocolError(f"SSE {name} must not contain CR, LF or NUL")
    return _utf8(name, value)


def encode_event(data: bytes, *, event: str | None = None, id: str | None = None) -> bytes:
    """Frame one event: optional ``event:`` and ``id:`` lines, then ``data: <line>`` per line.

    ``data`` is normally one JSON text with no raw newline, giving ``data: <json>\\n\\n``; any
    CR, LF or CRLF in it starts a new ``data:`` line so the reader rebuilds it with LF. Raises
    :class:`LocalProtocolError` if ``event`` or ``id`` contains CR, LF or NUL. ``id=""`` is
    valid and resets the client's last event ID. Write the returned bytes to the stream.
    """
    head = b""
    if event is not None:
        head = b"event: " + _field_value("event", event) + b"\n"
    if id is not None:
        head += b"id: " + _field_value("id", id) + b"\n"
    if b"\n" not in data and b"\r" not in data:
        return head + b"data: " + data + b"\n\n"
    return head + b"".join([b"data: " + line + b"\n" for line in _split_lines(data)]) + b"\n"


def encode_comment(text: str = "") -> bytes:
    """Frame a comment, ignored by readers; ``encode_comment("keepalive")`` is a keep-alive.

    Each line of ``text`` becomes its own ``: `` line. The blank line after it dispatches
    nothing, so a comment is safe between any two events.
    """
    if not text:
        return b":\n\n"
    lines = _split_lines(_utf8("comment", text))
    return b"".join([b": " + line + b"\n" for line in lines]) + b"\n"


class SSEReader:
    """Incremental, bounded parser of one event stream (a response body, for example).

    Call :meth:`feed` with each chunk of the body as it arrives and handle the events it
    returns; call :meth:`close` at the end of the body. A :class:`RemoteProtocolError`
    (-32600) means an event broke ``max_event_bytes``: the framing is lost, so abandon the
    stream. Any later call raises :class:`LocalProtocolError`, as does ``feed()`` after
    ``close()``.
    """

    def __init__(self, max_event_bytes: int = 4 * 1024 * 1024) -> None:
        if max_event_bytes < 1:
            raise LocalProtocolError("max_event_bytes must be positive")
        self._max = max_event_bytes
        self._head: bytes | None = b""  # bytes that may be a BOM; None once decided
        self._skip_lf = False  # the last chunk ended in CR: a leading LF is its CRLF's end
        self._partial: list[bytes] = []  # the unfinished line, as chunks, joined once
        self._partial_len = 0
        self._pending = 0  # bytes (LF counted) of finished lines of the pending event
        self._data: list[bytes] = []
        self._event = b""
        self._id_buffer: str | None = None
        self._last_event_id: str | None = None
        self._retry: int | None = None
        self._closed = False
        self._broken = False
        self._error: RemoteProtocolError | None = None

    @property
    def last_event_id(self) -> str | None:
        """The ``Last-Event-ID`` to send when reconnecting, ``None`` when there is none.

        Set by the blank line ending an ``id``-bearing block even when that block carried no
        data, which is why it is here and not only on :class:`SSEEvent`.
        """
        return self._last_event_id

    @property
    def retry(self) -> int | None:
        """The reconnection time in milliseconds from the latest valid ``retry`` field."""
        return self._retry

    @property
    def buffered_bytes(self) -> int:
        """Bytes of the pending event counted against ``max_event_bytes``."""
        return self._pending + self._partial_len + len(self._head or b"")

    def feed(self, chunk: bytes | bytearray | memoryview) -> list[SSEEvent]:
        """Parse the next chunk of the stream; return the events it completed, in order."""
        self._check_usable()
        if self._closed:
            raise LocalProtocolError("SSEReader.feed() called after close()")
        data = chunk if type(chunk) is bytes else bytes(chunk)
        if self._head is not None:
            # The spec's UTF-8 decode strips one BOM at the very start, which may arrive
            # a byte at a time.
            data = self._head + data
            if len(data) < 3 and _BOM.startswith(data):
                self._head = data
                return []
            self._head = None
            if data.startswith(_BOM):
                data = data[3:]
        if not data:
            return []
        if self._skip_lf:
            self._skip_lf = False
            if data[0] == 0x0A:
                data = data[1:]
        if b"\r" in data:
            # A CR at the very end ends its line now, so the event is not held back waiting
            # for the next chunk; the LF that may follow it is dropped on arrival instead.
            self._skip_lf = data[-1] == 0x0D
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = data.split(b"\n")
        tail = lines.pop()
        out: list[SSEEvent] = []
        if lines and self._partial:
            # Checked before the join so a too-long line is never materialised.
            if self._pending + self._partial_len + len(lines[0]) + 1 > self._max:
                return self._fail(out)
            self._partial.append(lines[0])
            lines[0] = b"".join(self._partial)
            self._partial = []
            self._partial_len = 0
        for line in lines:
            if not line:
                self._dispatch(out)
                continue
            self._pending += len(line) + 1
            if self._pending > self._max:
                return self._fail(out)
            if line.startswith(b"data: "):  # the common line, short-cut past _field
                self._data.append(line[6:])
            else:
                self._field(line)
        if tail:
            if self._pending + self._partial_len + len(tail) > self._max:
                return self._fail(out)
            self._partial.append(tail)
            self._partial_len += len(tail)
        return out

    def close(self) -> list[SSEEvent]:
        """End of stream. Returns ``[]``: an event without its blank line is discarded."""
        self._check_usable()
        if not self._closed:
            self._closed = True
            self._partial = []
            self._partial_len = 0
            self._pending = 0
            self._data = []
        return []

    def _check_usable(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            self._broken = True
            raise error
        if self._broken:
            raise LocalProtocolError("SSEReader is unusable after a protocol error")

    def _fail(self, out: list[SSEEvent]) -> list[SSEEvent]:
        self._partial = []
        self._partial_len = 0
        self._pending = 0
        self._data = []
        error = RemoteProtocolError(f"SSE event exceeds {self._max} bytes")
        if out:
            self._error = error
            return out
        self._broken = True
        raise error

    def _field(self, line: bytes) -> None:
        colon = line.find(b":")
        if colon == 0:
            return  # a comment
        if colon < 0:
            name, value = line, b""
        else:
            name = line[:colon]
            start = colon + 2 if line[colon + 1 : colon + 2] == b" " else colon + 1
            value = line[start:]
        if name == b"data":
            self._data.append(value)
        elif name == b"event":
            self._event = value
        elif name == b"id":
            if b"\0" not in value:
                self._id_buffer = value.decode("utf-8", "replace") or None
        elif name == b"retry" and value.isdigit():  # bytes.isdigit() is ASCII digits only
            digits = value.lstrip(b"0") or b"0"
            if len(digits) <= _MAX_RETRY_DIGITS:
                self._retry = int(digits)

    def _dispatch(self, out: list[SSEEvent]) -> None:
        self._pending = 0
        self._last_event_id = self._id_buffer
        if self._data:
            out.append(
                SSEEvent(
                    event=self._event.decode("utf-8", "replace") if self._event else "message",
                    data=b"\n".join(self._data).decode("utf-8", "replace"),
                    id=self._id_buffer,
                    retry=self._retry,
                )
            )
            self._data = []
        self._event = b""
