"""What a WSGI environ says about a request, as the engine takes it, and the engine's response
head as WSGI's ``start_response`` takes it (PEP 3333).

- :func:`request_head`: the method, the target (the path relative to where the app is
  mounted, ``PATH_INFO`` without ``SCRIPT_NAME``, percent-encoded again, plus ``?QUERY_STRING``)
  and the headers as ``bytes`` pairs (``CONTENT_TYPE``, ``CONTENT_LENGTH`` and every
  ``HTTP_*`` variable). WSGI servers join a repeated header into one value with commas, so
  the engine sees ``a, b``: for Origin, Host, Content-Type and Accept that is refused as any
  malformed value is.
- :func:`read_body`: the body, read only after ``Server.check_head`` admitted the head, and
  never past ``max_body_bytes + 1`` bytes (PEP 3333 and the ``wsgi.input_terminated``
  convention decide where a body ends).
- :func:`response_start`: the status line and ``str`` headers, without the hop-by-hop headers
  (``Connection``, ``Transfer-Encoding``, ...) that PEP 3333 forbids an application to send
  (wsgiref and waitress refuse them); framing and connection handling are the server's.
- :func:`departure_probe`: how to tell, while a handler runs silently, that the client left,
  where the server offers a way (waitress's ``waitress.client_disconnected``, gunicorn's
  ``gunicorn.socket``); elsewhere a departure is seen at the next write.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Callable, Mapping
from functools import lru_cache
from http import HTTPStatus
from typing import Any, Final
from urllib.parse import quote

from mcpwire import ErrorCode, RemoteProtocolError, ResponseBody, ResponseHead, error_reply

__all__ = [
    "HOP_BY_HOP", "Head", "Reply", "departure_probe", "read_body", "request_head", "request_target", "response_start",
    "status_line",
]

Head = tuple[str, str, tuple[tuple[bytes, bytes], ...]]
"""``(method, target, headers)`` as ``Server.check_head`` and ``HttpRequest`` take them."""
Reply = tuple[ResponseHead, ResponseBody]
"""A complete answer: its head and whole body."""

HOP_BY_HOP: Final = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "trailers",
    "transfer-encoding", "upgrade",
})
"""Response headers an application must not send (PEP 3333, "Other HTTP Features"; RFC 9110
section 7.6.1): left out of what the engine's head says."""

# RFC 3986 pchar and "/": left as they are when the decoded PATH_INFO is quoted again, so that a
# decoded "%3F" cannot end the path early (as the ASGI driver does).
_PATH_SAFE: Final = "/:@!$&'()*+,;=-._~"
_READ_CHUNK: Final = 65536


def request_head(environ: Mapping[str, Any]) -> Head:
    """The request's method, target and headers (module docstring)."""
    headers: list[tuple[bytes, bytes]] = []
    for key, value in environ.items():
        if key.startswith("HTTP_"):
            name = key[5:]
            if name in ("CONTENT_TYPE", "CONTENT_LENGTH"):  # some servers copy them: the plain ones win
                continue
        elif key == "CONTENT_TYPE" or key == "CONTENT_LENGTH":
            if not value:  # wsgiref gives an empty CONTENT_LENGTH for no body, and a default CONTENT_TYPE
                continue
            name = key
        else:
            continue
        headers.append((_header_name(name), str(value).encode("latin-1")))
    method = str(environ.get("REQUEST_METHOD") or "GET")
    return method, request_target(environ), tuple(headers)


@lru_cache(maxsize=256)
def _header_name(key: str) -> bytes:
    return key.replace("_", "-").lower().encode("latin-1")


def request_target(environ: Mapping[str, Any]) -> str:
    """The target handed to the engine: ``PATH_INFO`` (the path below the mount point,
    ``SCRIPT_NAME``; ``"/"`` when empty) percent-encoded again, plus ``?QUERY_STRING`` when
    there is one. The engine compares its path with ``HttpPolicy.path``."""
    return _target(str(environ.get("PATH_INFO") or "/"), str(environ.get("QUERY_STRING") or ""))


@lru_cache(maxsize=256)
def _target(path: str, query: str) -> str:
    # PATH_INFO is "bytes as Latin-1" (PEP 3333, Unicode Issues): back to the bytes, then quoted.
    quoted = quote(path.encode("latin-1"), safe=_PATH_SAFE)
    return f"{quoted}?{query}" if query else quoted


def read_body(environ: Mapping[str, Any], limit: int) -> bytes | Reply:
    """The request body, or the reply refusing it, never reading more than ``limit + 1`` bytes.

    With ``CONTENT_LENGTH``: exactly that many bytes (a longer one was refused on the head by
    ``Server.check_head``: 413; one that ends early is 400). Without it, where the server marks
    its input as ending with the body (``wsgi.input_terminated``: gunicorn, waitress, uWSGI
    with chunked input, Werkzeug): read to its end, refused 413 as soon as it passes ``limit``.
    Without either, a ``Transfer-Encoding`` body cannot be read safely (PEP 3333 forbids reading
    past ``CONTENT_LENGTH``): 411 Length Required; no ``Transfer-Encoding``: no body.
    An exception of ``wsgi.input`` (a client that left, a malformed chunk) passes to the server,
    which knows what it means."""
    stream = environ.get("wsgi.input")
    declared = environ.get("CONTENT_LENGTH")
    if declared:
        text = str(declared).strip(" \t")
        if not (text.isascii() and text.isdigit()):  # the server should have refused it: never guess a length
            return _refuse(400, "Content-Length is not a number")
        size = int(text) if len(text) <= 19 else limit + 1  # past int64 is past any limit
        if size > limit:
            return _too_large(limit)
        body = _read(stream, size)
        if len(body) < size:
            return _refuse(400, f"Request body ended after {len(body)} of its {size} bytes")
        return body
    if environ.get("wsgi.input_terminated"):
        body = _read(stream, limit + 1)
        return _too_large(limit) if len(body) > limit else body
    if environ.get("HTTP_TRANSFER_ENCODING"):
        return _refuse(411, "Length Required: this WSGI server does not tell where a body without Content-Length ends")
    return b""


def _read(stream: Any, most: int) -> bytes:
    """Up to ``most`` bytes of ``stream``, fewer only when it ends first."""
    if stream is None or most <= 0:
        return b""
    chunks: list[bytes] = []
    got = 0
    while got < most:
        chunk = stream.read(min(_READ_CHUNK, most - got))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _refuse(status: int, message: str) -> Reply:
    return error_reply(RemoteProtocolError(message, code=ErrorCode.INVALID_REQUEST, http_status=status))


def _too_large(limit: int) -> Reply:
    return _refuse(413, f"Request body exceeds {limit} bytes")


@lru_cache(maxsize=64)
def status_line(status: int) -> str:
    """``"200 OK"``: the status as ``start_response`` takes it."""
    try:
        return f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        return f"{status} Unknown"


def response_start(head: ResponseHead) -> tuple[str, list[tuple[str, str]]]:
    """The status line and headers of ``head`` for ``start_response``, hop-by-hop headers left out."""
    headers = [
        (name.decode("latin-1"), value.decode("latin-1"))
        for name, value in head.headers
        if name.lower().decode("latin-1") not in HOP_BY_HOP
    ]
    return status_line(head.status), headers


def departure_probe(environ: Mapping[str, Any]) -> Callable[[], bool] | None:
    """A check that answers True once the client has gone, for a WSGI thread waiting on a silent
    handler; ``None`` where the server offers no way to tell (then a departure is seen at the
    next write, and the handler runs on until it writes or ends).

    waitress: its own ``waitress.client_disconnected`` (it sees a departure only with
    ``channel_request_lookahead`` set above 0). gunicorn: a peek at ``gunicorn.socket`` (the
    connection, plain TCP only): an orderly close or a reset is a departure; bytes of a next
    request are not."""
    check = environ.get("waitress.client_disconnected")
    if callable(check):
        return lambda: bool(check())
    sock = environ.get("gunicorn.socket")
    if isinstance(sock, socket.socket) and not isinstance(sock, ssl.SSLSocket):
        return lambda: _closed(sock)
    return None


def _closed(sock: socket.socket) -> bool:
    try:
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except (BlockingIOError, InterruptedError):
        return False  # nothing to read: the client is there, waiting for the answer
    except OSError:
        return True  # reset, or the socket is already closed
