"""Streamable HTTP as a WSGI application: serve an :class:`App` from gunicorn, waitress, uWSGI or
any WSGI server, alone or mounted inside Flask or Django (docs/wsgi.md).

The engine (``app.server.receive_http``) decides every answer, as under the trio/h11 and ASGI
drivers; this module translates between a WSGI call and the engine's events. The App's
handlers are its ordinary (async) handlers: they run on one event loop in a thread of the
process (:class:`~mcpwire_adapters.serve.wsgi.loop.LoopThread`), where the engine also lives,
so the engine is only ever called from that thread, whatever number of WSGI threads call in.

Per request, on the WSGI thread, with two hops to the loop (a body is read only once the head
passed, so a POST cannot take fewer):

1. read the head from the environ (:func:`~mcpwire_adapters.serve.wsgi.environ.request_head`;
   the target is the path below the mount point) and hand it to the loop (:meth:`WsgiApp._check`),
   which asks the engine whether the head alone refuses it (``Server.check_head``: 405, 404,
   403, 413 on ``Content-Length``, 415, 406; with OAuth, the protected resource metadata
   first): if so, the refusal is answered without reading the body;
2. read the body from ``wsgi.input``, never past ``max_body_bytes + 1`` bytes
   (:func:`~mcpwire_adapters.serve.wsgi.environ.read_body`: 413, 411, 400);
3. hand it to the loop, which starts the request's task (:meth:`WsgiApp._serve`: OAuth's token
   check, then ``receive_http``, then the exchange's handler, the listen stream or the complete
   reply), and wait for its output. Both hops answer through the request's one
   :class:`~mcpwire_adapters.serve.wsgi.pipe.Pipe` (bounded): the head goes to
   ``start_response``, the body is returned whole (``[bytes]``) when it is complete at once,
   otherwise as an iterable that yields each piece (each SSE event) as it comes, so that the
   server writes it at once.

What a request makes on the loop is its task alone: the handler's cancel scope is that task's
own (:func:`~mcpwire_adapters.serve.wsgi.loop.handler_scope`), and the client's departure is
told by the pipe (``App.run_exchange_armed``), with no watcher task per request.

A client that leaves cancels the handler and the exchange (on HTTP a disconnect is the
cancellation; specification: Basic > Patterns > Cancellation, Transport-Specific
Cancellation): the server closes the response iterable early (a write failed), or, while the
handler is silent, the departure probe says so (waitress, gunicorn:
:func:`~mcpwire_adapters.serve.wsgi.environ.departure_probe`, every ``departure_interval``).

Long-lived streams (a ``subscriptions/listen`` stream; an initialize-era session's GET
stream) hold a WSGI thread for as long as they are open. They are served where the server
runs requests on threads or green threads (``wsgi.multithread``: gunicorn's gthread, gevent
and eventlet workers, waitress, uWSGI with ``--threads``), at most ``max_streams`` at once;
under one request at a time per process (gunicorn's sync worker, uWSGI without threads)
they are refused: a GET stream with 405 (the specification's answer of a server that offers
none), a listen stream with 503 (-32603), as the engine refuses one over its own limit.
``WsgiConfig.streams`` overrides the choice. A resumed response stream (a GET with
``Last-Event-ID``) ends with its request, and is always served.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any
from wsgiref.types import StartResponse, WSGIEnvironment

import msgspec

from mcpwire import (
    ErrorCode, HttpExchange, HttpListenStream, HttpRequest, ProtocolError, RemoteProtocolError, ResponseBody, ResponseHead,
    error_reply,
)
from mcpwire.sessions import ResumedStream, SessionStream

from ...app.app import App
from ...app.context import principal_key
from ...errors import McpwireAdapterError, PeerGone
from ..answers import deliver
from .environ import Head, Reply, departure_probe, read_body, request_head, response_start
from .loop import LoopClosed, LoopThread, handler_scope
from .pipe import ABANDONED, ADMITTED, END, Batch, Marker, Pipe

if TYPE_CHECKING:
    from collections.abc import Callable

    from ...oauth.resource_server import OAuthResource

__all__ = ["ResponseAbandoned", "WsgiApp", "WsgiConfig", "wsgi_app"]

_log = logging.getLogger("mcpwire_adapters.wsgi")

# Where nothing else tells that the client left, the WSGI thread still wakes this often, to see
# that the loop thread is alive.
_IDLE_WAIT = 5.0


class WsgiConfig(msgspec.Struct, frozen=True, kw_only=True):
    """Limits and choices of :class:`WsgiApp` (the engine's own limits are ``app.server.http``;
    connections, header and body timeouts and the number of threads belong to the WSGI server).

    ``streams``: serve long-lived streams (listen streams, initialize-era GET streams): ``None``
    (the default) where the server runs requests on threads (``wsgi.multithread``), ``True``
    always, ``False`` never (module docstring). ``max_streams``: how many such streams may be
    open at once in this process; keep it below the server's threads, or the streams take
    every thread. ``send_timeout``: seconds an output may wait for the WSGI thread (a client
    that does not read) before the response is abandoned. ``sse_keepalive_interval``: seconds
    between ``: keepalive`` comments on an idle listen stream. ``departure_interval``: how often
    a WSGI thread waiting on a silent handler checks that its client is still there (where the
    server can tell). ``buffer``: output batches that may wait between the loop and the WSGI thread.
    """

    streams: bool | None = None
    max_streams: int = 2
    send_timeout: float = 30.0
    sse_keepalive_interval: float = 15.0
    departure_interval: float = 0.5
    buffer: int = 16
    auth: OAuthResource | None = None
    """OAuth resource server guard (``mcpwire_adapters.oauth.resource_server``, docs/auth.md): runs before the engine."""


_DEFAULT_CONFIG = WsgiConfig()


class ResponseAbandoned(McpwireAdapterError):
    """Raised from a response's iterable when the response must stay unfinished (the app dropped
    a listen stream, or a bug after the head was sent): WSGI servers then close the connection,
    so that an abrupt end is never taken for a complete stream."""


class WsgiApp:
    """A WSGI application serving ``app`` over Streamable HTTP (module docstring, docs/wsgi.md).

    Use it as the application of a WSGI server (``gunicorn mymodule:wsgi``) or mount it
    (``DispatcherMiddleware(site, {"/mcp": WsgiApp(mcp)})``; in Django, as a view:
    :func:`~mcpwire_adapters.serve.wsgi.django_view.django_view`). The endpoint path is the
    engine's ``HttpPolicy(path=...)`` (``"/mcp"`` by default), compared with ``PATH_INFO``, the
    path below the mount point. The App's event loop starts with the first request, in each
    process; :meth:`close` stops it.
    """

    def __init__(self, app: App, *, config: WsgiConfig = _DEFAULT_CONFIG) -> None:
        self.app = app
        self.config = config
        self.loop = LoopThread(app)
        self._held = 0  # long-lived streams open now (touched on the loop thread only)

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        """Serve one request (PEP 3333)."""
        pipe = Pipe(self.loop.wake, self.config.buffer)
        try:
            head = request_head(environ)
            self.loop.submit(self._check, pipe, head)
        except LoopClosed:
            return _whole(start_response, _SHUTTING_DOWN)
        except Exception:  # noqa: BLE001 - a bug answers -32603 instead of the server's own 500 page
            _log.exception("unexpected error while serving an MCP request")
            return _whole(start_response, _INTERNAL_ERROR)
        probe = departure_probe(environ)
        wait = self.config.departure_interval if probe is not None else _IDLE_WAIT
        try:
            first = self._first(pipe, probe, wait)
            if first is ADMITTED:
                body = read_body(environ, self.app.server.http.max_body_bytes)  # its errors are the server's
                if not isinstance(body, bytes):
                    return _whole(start_response, body)
                self.loop.submit(self._start, pipe, head, body, self._holds(environ))
                first = self._first(pipe, probe, wait)
        except LoopClosed:
            return _whole(start_response, _SHUTTING_DOWN)
        if first is None:  # the client left before the answer began: the handler and the exchange are cancelled
            pipe.depart()
            start_response("499 Client Closed Request", [("Content-Length", "0")])
            return []
        return _respond(start_response, pipe, first, probe, wait)

    def close_streams(self) -> None:
        """End every listen stream with its listen result (and every GET stream), from any
        thread, without waiting: what a server's shutdown signal should do first, since an open
        stream otherwise holds its thread until the server's graceful timeout (docs/wsgi.md)."""
        self.loop.wake(self.app.close_streams)

    def close(self, grace: float = 5.0) -> None:
        """Stop serving: end the streams, give the requests in flight ``grace`` seconds, cancel
        the rest, stop the App's background work and the loop thread. Later requests get 503.
        Runs by itself at interpreter exit."""
        self.loop.close(grace)

    def _first(self, pipe: Pipe, probe: Callable[[], bool] | None, wait: float) -> Batch | Marker | None:
        """The pipe's next item, waited for in slices of ``wait`` seconds; ``None`` when the client
        left first (where the server can tell), :class:`LoopClosed` when the loop thread died."""
        while True:
            item = pipe.get(wait)
            if item is not None:
                return item
            if probe is not None and probe():
                return None
            if not self.loop.alive:
                raise LoopClosed("the event loop stopped")

    # -- on the loop thread ---------------------------------------------------------------------
    def _check(self, pipe: Pipe, head: Head) -> None:
        """A request's first hop: its head admitted (:data:`ADMITTED`) or refused, told to ``pipe``."""
        try:
            refusal = self._check_head(*head)
        except Exception:  # noqa: BLE001 - a bug answers -32603
            _log.exception("unexpected error while serving an MCP request")
            refusal = _INTERNAL_ERROR
        if refusal is None:
            pipe.offer(ADMITTED)
        else:
            pipe.offer(refusal)
            pipe.end(True)

    def _start(self, pipe: Pipe, head: Head, body: bytes, hold: bool) -> None:
        """A request's second hop: its body came; its task starts."""
        self.loop.spawn(self._serve(head, body, pipe, hold))

    def _check_head(self, method: str, target: str, headers: tuple[tuple[bytes, bytes], ...]) -> Reply | None:
        auth = self.config.auth  # OAuth (docs/auth.md): its metadata document, before anything else
        if auth is not None:
            metadata = auth.metadata_for(method, target)
            if metadata is not None:
                return metadata
        return self.app.server.check_head(method, target, headers)

    def _holds(self, environ: WSGIEnvironment) -> bool:
        streams = self.config.streams
        return bool(environ.get("wsgi.multithread")) if streams is None else streams

    async def _serve(self, head: Head, body: bytes, pipe: Pipe, hold: bool) -> None:
        """One request's task: the engine's answer, written to ``pipe`` until it ends."""
        method, target, headers = head
        send_timeout = self.config.send_timeout

        async def emit(outputs: Batch) -> None:
            if outputs:
                await pipe.put(outputs, send_timeout)

        complete = True
        try:
            auth = self.config.auth
            denial = await auth.check_http(method, target, headers, body) if auth is not None else None
            reply = denial or self.app.server.receive_http(
                HttpRequest(
                    method=method, target=target, headers=headers, body=body,
                    principal=principal_key() if auth is not None else None,
                ),
                now=time.time(),
            )
            if isinstance(reply, HttpExchange):
                await self.app.run_exchange_armed(reply, emit, pipe.arm, handler_scope())
            elif isinstance(reply, HttpListenStream):
                complete = await self._listen(reply, emit, pipe, hold)
            else:
                await deliver(self.app, reply, emit, pipe.watch)
        except PeerGone:
            pass
        except Exception:  # noqa: BLE001 - a bug: answered -32603, or the response left unfinished
            _log.exception("unexpected error while serving an MCP request")
            if pipe.started:
                complete = False
            else:
                try:
                    await emit(_INTERNAL_ERROR)
                except PeerGone:
                    pass
        except BaseException:  # cancelled (the WSGI app closed): never a complete-looking response
            complete = False
            raise
        finally:
            pipe.end(complete)

    async def _listen(
        self, stream: HttpListenStream, emit: Callable[[Batch], Any], pipe: Pipe, hold: bool,
    ) -> bool:
        """Forward a listen stream (module docstring: which ones are served). True when it ended
        with its listen result (or was refused), False when it must be left unfinished."""
        lasting = not isinstance(stream, ResumedStream)  # a resumed stream ends with its request
        if lasting and (not hold or self._held >= self.config.max_streams):
            stream.cancel()
            await emit(_refusal(stream, hold, self.config.max_streams))
            return True
        forwarder = self.app.forward_listen(stream)  # no await since receive_http: nothing missed
        if lasting:
            self._held += 1
        try:
            return await forwarder.run(emit, watch=pipe.watch, keepalive_interval=self.config.sse_keepalive_interval)
        finally:
            if lasting:
                self._held -= 1


def wsgi_app(app: App, *, config: WsgiConfig = _DEFAULT_CONFIG) -> WsgiApp:
    """``WsgiApp(app, config=config)``: the WSGI callable serving ``app``."""
    return WsgiApp(app, config=config)


# -- answers of the adapter's own ---------------------------------------------------------------------
_SHUTTING_DOWN = error_reply(ProtocolError("The MCP endpoint is shutting down", code=ErrorCode.INTERNAL_ERROR, http_status=503))
_INTERNAL_ERROR = error_reply(ProtocolError("Internal error", code=ErrorCode.INTERNAL_ERROR, http_status=500))
_NO_GET_STREAM = "This server offers no GET stream: {why}"


def _refusal(stream: HttpListenStream, hold: bool, limit: int) -> Reply:
    if isinstance(stream, SessionStream):
        # Streamable HTTP (initialize era), listening for messages from the server: a server
        # that offers no SSE stream at the endpoint answers the GET with 405.
        why = f"{limit} are open (WsgiConfig.max_streams)" if hold else "its WSGI server serves one request at a time"
        error = RemoteProtocolError(_NO_GET_STREAM.format(why=why), code=ErrorCode.INVALID_REQUEST, http_status=405)
        return error_reply(error, extra=((b"allow", b"POST, DELETE"),))
    # As the engine refuses a stream over its own limit (the message of a -32603 never reaches the wire).
    why = "Too many open subscription streams" if hold else "This WSGI server serves one request at a time"
    return error_reply(ProtocolError(why, code=ErrorCode.INTERNAL_ERROR, http_status=503), stream.request_id)


# -- the WSGI thread's side of a response ---------------------------------------------------------------
def _whole(start_response: StartResponse, reply: Reply) -> list[bytes]:
    head, body = reply
    start_response(*response_start(head))
    return [body.data] if body.data else []


def _respond(
    start_response: StartResponse, pipe: Pipe, first: Batch | Marker, probe: Callable[[], bool] | None, wait: float,
) -> Iterable[bytes]:
    """Start the response with ``first``, the pipe's first output, and return its body: whole when
    it is complete already, else a :class:`_Stream`."""
    if isinstance(first, Marker) or not first or not isinstance(first[0], ResponseHead):  # a bug: the task logged it
        raise ResponseAbandoned("the request ended without a response head")
    start_response(*response_start(first[0]))
    data, more = _bodies(first[1:])
    if not more:
        return [data] if data else []
    return _Stream(pipe, data, probe, wait)


def _bodies(batch: Sequence[Any]) -> tuple[bytes, bool]:
    """The bytes of the ``ResponseBody`` pieces of ``batch`` and whether more follow."""
    pieces = [item for item in batch if isinstance(item, ResponseBody)]
    if not pieces:
        return b"", True
    data = pieces[0].data if len(pieces) == 1 else b"".join(piece.data for piece in pieces)
    return data, pieces[-1].more


class _Stream:
    """A response body that is still coming (SSE): an iterable yielding each piece as the loop
    hands it over. ``close()`` before the end (the server stopped writing: the client left)
    cancels the request's work."""

    __slots__ = ("_pipe", "_first", "_probe", "_wait", "_done")

    def __init__(self, pipe: Pipe, first: bytes, probe: Callable[[], bool] | None, wait: float) -> None:
        self._pipe = pipe
        self._first = first
        self._probe = probe
        self._wait = wait
        self._done = False

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        if self._first:
            data, self._first = self._first, b""
            return data
        while not self._done:
            item = self._pipe.get(self._wait)
            if item is None:
                if self._probe is not None and self._probe():
                    self.close()
                continue
            if item is END:
                self._done = True
            elif item is ABANDONED:
                self._done = True
                raise ResponseAbandoned("the response was abandoned before its end")
            else:
                assert not isinstance(item, Marker)
                data, more = _bodies(item)
                self._done = not more
                if data:
                    return data
        raise StopIteration

    def close(self) -> None:
        """PEP 3333: called by the server when it is done with the response, at its end or not."""
        if not self._done:
            self._done = True
            self._pipe.depart()
