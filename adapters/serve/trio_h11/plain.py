"""The trio/h11 server's fast path for a plain JSON answer: the request head walked once, and
a complete answer framed by its Content-Length written as the engine made it.

h11 frames every other response. For this one it would validate again, with regular
expressions, headers the engine built from constants and checked values, and run its state
machine three times (head, data, end): about half the driver's own cost of a small call. The
connection then starts its next cycle on a fresh ``h11.Connection`` fed the bytes the client
already sent (``connection.Connection._next_cycle``).
"""

from __future__ import annotations

import os
from http import HTTPStatus
from collections.abc import Sequence
from typing import Protocol

import h11

from mcpwire import ResponseBody, ResponseHead

__all__ = ["head_facts", "plain_answer", "write_now"]


class _FileLike(Protocol):
    def fileno(self) -> int: ...


def head_facts(http_version: bytes, headers: Sequence[tuple[bytes, bytes]]) -> tuple[int, bool]:
    """One walk over a request head's headers: their size as sent (name, value, ": " and CRLF
    each) and whether the connection stays open after the answer (HTTP/1.1 without a
    ``close`` token in ``Connection``, RFC 9112 9.3 and 9.6).

    The same walk refuses a head whose body two HTTP parsers could frame differently (request
    smuggling), raising :class:`h11.RemoteProtocolError` (400): the connection answers it and
    closes, and nothing after the head is read as a request. That is a ``Transfer-Encoding``
    together with a ``Content-Length`` (RFC 9112 6.3: the server MUST close the connection
    after responding; it rejects here, as h11 does not: it reads such a body as chunked and
    keeps the connection), a ``Transfer-Encoding`` other than exactly ``chunked``, or one in an
    HTTP/1.0 request (6.1: its framing is faulty), and two ``Content-Length`` fields. h11
    refuses the repeated or unknown codings and the Content-Length values that disagree before
    this walk (a 501 or 400 that the connection answers 400), and merges identical values into
    one field (RFC 9110 8.6 allows it: every reader frames the same body); they are checked
    again here so that no version of h11 decides alone."""
    size = 0
    keep_alive = http_version == b"1.1"
    lengths = 0
    coding: bytes | None = None
    for name, value in headers:
        size += len(name) + len(value) + 4
        count = len(name)
        if count == 10:
            if name.lower() == b"connection" and b"close" in _tokens(value):
                keep_alive = False
        elif count == 14:
            if name.lower() == b"content-length":
                lengths += 1
        elif count == 17 and name.lower() == b"transfer-encoding":
            if coding is not None:
                raise _bad_framing("Transfer-Encoding is repeated")
            coding = value
    if coding is not None:
        if lengths:
            raise _bad_framing("Transfer-Encoding and Content-Length together")
        if coding.strip(b" \t").lower() != b"chunked":
            raise _bad_framing("Transfer-Encoding other than chunked")
        if http_version != b"1.1":
            raise _bad_framing("Transfer-Encoding in an HTTP/1.0 request")
    elif lengths > 1:
        raise _bad_framing("Content-Length is repeated")
    return size, keep_alive


def _bad_framing(why: str) -> h11.RemoteProtocolError:
    return h11.RemoteProtocolError(f"ambiguous request framing: {why}", error_status_hint=400)


def plain_answer(head: object, body: object) -> bytes | None:
    """The bytes of a complete answer framed by its own Content-Length (head, CRLF, body), or
    None when h11 must frame it: a body still to come, no Content-Length or one that does not
    match the body, or a ``Connection``/``Transfer-Encoding`` header (h11 acts on those)."""
    if type(head) is not ResponseHead or type(body) is not ResponseBody or body.more:
        return None
    data = body.data
    parts = [_status_line(head.status)]
    framed = False
    for name, value in head.headers:
        if name == b"content-length":
            if value != b"%d" % len(data):
                return None
            framed = True
        elif name == b"connection" or name == b"transfer-encoding":
            return None
        parts.append(b"%s: %s\r\n" % (name, value))
    if not framed:
        return None
    parts.append(b"\r\n")
    parts.append(data)
    return b"".join(parts)


def write_now(sock: _FileLike | None, data: bytes) -> int:
    """Write what the socket takes at once, without blocking (its fd is non-blocking, as trio
    keeps it): the count written, 0 when it takes nothing now or ``sock`` is None. Raises
    :class:`OSError` when the connection is reset or closed (``fileno()`` is -1 once closed,
    so a number reused by another socket is never written to)."""
    if sock is None:
        return 0
    fd = sock.fileno()
    if fd < 0:
        raise OSError("socket closed")
    try:
        return os.write(fd, data)
    except BlockingIOError:
        return 0


_STATUS_LINES: dict[int, bytes] = {}


def _status_line(status: int) -> bytes:
    line = _STATUS_LINES.get(status)
    if line is None:
        line = _STATUS_LINES[status] = b"HTTP/1.1 %d %s\r\n" % (status, reason(status))
    return line


def _tokens(value: bytes) -> list[bytes]:
    """A comma-separated header value's tokens, lowercased."""
    return [token.strip(b" \t").lower() for token in value.split(b",")]


def reason(status: int) -> bytes:
    """The reason phrase of ``status`` (empty for a code without one)."""
    try:
        return HTTPStatus(status).phrase.encode("ascii")
    except ValueError:
        return b""
