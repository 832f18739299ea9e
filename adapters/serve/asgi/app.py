"""Streamable HTTP as an ASGI 3 application: serve an :class:`App` under uvicorn, hypercorn or
any ASGI server, alone or mounted inside Starlette/FastAPI.

The engine (``app.server.receive_http``) decides every answer, exactly as under the trio/h11
driver (:mod:`mcpwire_adapters.serve.trio_h11.server`); this module only translates between ASGI
messages and engine events. It runs on asyncio and on trio (through anyio).

Per ``http`` request:

1. refuse what the head alone decides before waiting for the body (``Server.check_head``: 413
   as soon as ``Content-Length`` is over ``app.server.http.max_body_bytes``, 405, 404, 403, 415,
   406; on asyncio without a guard, where the body read begins to wait: a body already held
   goes to the engine with its head, which checks both in the same order), or 413 as soon as
   the body received so far passes the limit, without reading further; the whole body must
   arrive within ``body_timeout`` (408);
2. hand ``HttpRequest(method, target, headers, body)`` to the engine, where ``target`` is the
   request path relative to where this app is mounted (``scope["path"]`` without
   ``scope["root_path"]``, re-quoted) plus the query string; the engine's
   ``HttpPolicy(path=...)`` is compared with that path (see :func:`request_target`);
3. write what the engine returns: ``ResponseHead`` -> ``http.response.start``,
   ``ResponseBody`` -> ``http.response.body`` with ``more_body``. For an exchange, the handler
   runs while ``receive()`` is watched: ``http.disconnect`` cancels the handler and the
   exchange (on HTTP a disconnect is the cancellation; specification: Basic > Patterns >
   Cancellation, Transport-Specific Cancellation). A listen stream is forwarded as
   SSE with a ``: keepalive`` comment every ``sse_keepalive_interval`` until it ends, the
   client disconnects, or the app drops it (then the response is left unfinished, which makes
   the server close the connection: an abrupt end is never disguised as a complete stream).

``lifespan``: startup is acknowledged; shutdown ends every listen stream with its listen
result (``app.close_streams()``). ``websocket``: refused with the engine's own answer to a
non-POST request (405 with ``Allow: POST`` through the WebSocket denial-response extension
when the server offers it, otherwise a close before accept, which servers answer with 403).
Any other scope type raises, as the ASGI specification asks.

A send the server refuses (``OSError``: the client is gone) or that blocks for
``send_timeout`` ends the response like a disconnect.

On asyncio a request runs by hand up to its first wait (``on_asyncio.asgi_call``). One that never
waits (the usual case under uvicorn: the body is already held, the handler answers at once, the
transport takes the answer at once) arms no timer and starts no task. Where the first wait
begins, the step under way gets what it needs from then on: the body read its head check
(a refusal abandons that wait) and its timeout, a send its timeout (``LateTimeout``), and a
handler the ``receive()`` watcher, so that a client that leaves is noticed as soon as the
handler waits. Every later step arms its own (``asyncio.timeout``, only
if it waits). The handler's cancel scope is its task's own ``Task.cancel``. On trio every
request keeps anyio's task group and cancel scopes.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
from functools import lru_cache
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import anyio
import anyio.lowlevel
import msgspec

from mcpwire import ErrorCode, HttpExchange, HttpListenStream, HttpRequest, RemoteProtocolError, ResponseBody, ResponseHead, error_reply

from ...errors import McpwireAdapterError
from ..answers import deliver
from .on_asyncio import LateTimeout, TaskScope, asgi_call, bounded, on_trio, run_until_wait
from ...app.app import App, PeerGone
from ...app.context import ExchangeRun, principal_key

if TYPE_CHECKING:
    from ...oauth.resource_server import OAuthResource

__all__ = ["AsgiApp", "AsgiConfig", "asgi_app", "request_target"]

_log = logging.getLogger("mcpwire_adapters.asgi")
_MODULES = sys.modules

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Output = ResponseHead | ResponseBody

# Characters left as they are when the decoded ASGI path is quoted again for the engine:
# RFC 3986 pchar and "/". "?" and "#" (and "%") are escaped, so a decoded "%3F" cannot end the
# path early.
_PATH_SAFE = "/:@!$&'()*+,;=-._~"


class AsgiConfig(msgspec.Struct, frozen=True, kw_only=True):
    """Limits of :class:`AsgiApp` (the engine's own limits are ``app.server.http``; connection
    limits and header timeouts belong to the ASGI server).

    ``body_timeout``: seconds for the whole request body (408 after). ``send_timeout``: seconds
    one ``send()`` may block on a client that does not read before the response is abandoned.
    ``sse_keepalive_interval``: seconds between ``: keepalive`` comments on an idle listen stream.
    """

    body_timeout: float = 30.0
    send_timeout: float = 30.0
    sse_keepalive_interval: float = 15.0
    auth: OAuthResource | None = None
    """OAuth resource server guard (``mcpwire_adapters.oauth.resource_server``, docs/auth.md): runs before the engine."""


_DEFAULT_CONFIG = AsgiConfig()


class _PeerGone(PeerGone):
    """The client disconnected, or the server refused or stalled a send."""


class _HeadRefused(McpwireAdapterError):
    """The head of a request whose body read waits is refused (``Server.check_head``): thrown
    into that wait, which ends it, and answered with ``reply``."""

    def __init__(self, reply: Sequence[ResponseHead | ResponseBody]) -> None:
        super().__init__()
        self.reply = reply


def request_target(scope: Scope) -> str:
    """The request target handed to the engine: the path relative to the app's mount point
    (``path`` minus ``root_path``, as Starlette routes it; ``"/"`` when nothing is left),
    percent-encoded again, plus ``?query`` when there is one."""
    if scope.get("root_path") or scope.get("query_string"):
        return _mounted_target(scope.get("path") or "/", scope.get("root_path") or "", scope.get("query_string") or b"")
    path = scope.get("path") or "/"
    target = _PLAIN_TARGETS.get(path)
    if target is None:
        if len(_PLAIN_TARGETS) >= _TARGETS_KEPT:
            _PLAIN_TARGETS.clear()
        target = _PLAIN_TARGETS[path] = _target(path, "", b"")
    return target


# An endpoint sees few distinct targets: each computed once, not per request. The common one (no
# mount point, no query) is kept by its path alone, in a dict (a lookup, no cache bookkeeping).
_TARGETS_KEPT = 256
_PLAIN_TARGETS: dict[str, str] = {}


def _target(path: str, root: str, query: bytes) -> str:
    if root and path.startswith(root) and (len(path) == len(root) or path[len(root)] == "/"):
        path = path[len(root):] or "/"
    target = quote(path, safe=_PATH_SAFE)
    return f"{target}?{query.decode('latin-1')}" if query else target


_mounted_target = lru_cache(maxsize=_TARGETS_KEPT)(_target)


class _Request:
    """One ``http`` scope: read the body, ask the engine, write its answer (:meth:`serve`; on
    asyncio run by hand while :attr:`driving`, with :meth:`suspended` called where it first
    waits: ``on_asyncio.asgi_call``)."""

    __slots__ = (
        "app", "config", "scope", "receive", "_send", "started", "_asyncio", "_task", "driving", "_bound",
        "_timer", "_exchange", "_run", "_scope", "_watcher", "_head",
    )

    def __init__(self, owner: AsgiApp, scope: Scope, receive: Receive, send: Send) -> None:
        self.app = owner.app
        self.config = owner.config
        self.scope = scope
        self.receive = receive
        self._send = send
        self.started = False
        # On asyncio: its own timeouts, armed (and a watcher started) only on a wait; on trio anyio's.
        # Fast path of ``not on_trio()``: its first probe written out, no call without trio imported;
        # held equal by test_a_request_tells_asyncio_from_trio_as_on_trio_does.
        self._asyncio = "trio" not in _MODULES or not on_trio()
        self._task: asyncio.Task[Any] | None = None  # asyncio: the request's task, found where it first waits
        self.driving = self._asyncio  # asyncio: no wait yet (the steps arm nothing: suspended does)
        self._bound: float | None = None  # asyncio, driving: the timeout of the body read or send under way
        self._timer: LateTimeout | None = None  # ... armed when that step waited first
        self._exchange: HttpExchange | None = None  # asyncio: the exchange whose handler runs (a disconnect cancels it)
        self._run: ExchangeRun | None = None  # ... its run, made when first needed (_handler_run)
        self._scope: TaskScope | None = None  # ... its cancel scope, made when first needed (cancel())
        self._watcher: asyncio.Task[None] | None = None  # asyncio: the disconnect watcher, once started
        self._head: tuple[str, str, Sequence[tuple[bytes, bytes]]] | None = None  # asyncio: a head not yet checked

    def suspended(self) -> Exception | None:
        # the request's first wait began: in the body read or a send (its timeout starts now), and/or
        # in the handler (from now on a disconnect cancels it). A body read that waits checks the
        # head first: a refusal ends that wait (run_until_wait throws it in) and is answered.
        self.driving = False
        task = self._task = asyncio.current_task()
        assert task is not None  # only asyncio is driven, and this runs in its task
        head = self._head
        if head is not None:
            self._head = None
            method, target, headers = head
            try:
                early = self.app.server.check_head(method, target, headers)
            except Exception as bug:  # noqa: BLE001 - thrown in too: serve answers it as any bug (500)
                return bug
            if early is not None:
                return _HeadRefused(early)
        if self._bound is not None:
            self._timer = LateTimeout(task, self._bound)
        self._watch()
        return None

    # Fast path of ``bounded(step, seconds)`` (on trio ``anyio.fail_after`` / ``move_on_after``) for
    # the body read and the sends of a request not yet waited: the step is awaited as it is, and
    # its timer armed by suspended() only if it waits. Held equal by
    # test_a_body_whose_rest_is_the_first_wait_times_out_408 and test_a_send_that_is_the_first_wait_is_bounded
    # beside test_408_when_the_body_is_too_slow and test_a_stalled_send_is_abandoned (the general rule).
    def _end_step(self, cancelled: bool) -> bool:
        """The bounded step under way while driving (``_bound``) ended, by ``CancelledError`` when
        ``cancelled``: disarm its timer if its wait armed one; True when that timer cancelled it
        (the step timed out). Each step is ``self._bound = seconds``, then ``await`` it, and
        this, written in place (then a ``finally`` clears ``_bound``, and calls this when a timer
        is still armed), so that a step that never waits costs no coroutine or call of its own."""
        self._bound = None
        timer = self._timer
        if timer is None:
            return False
        self._timer = None
        return timer.end(cancelled)

    async def serve(self) -> None:
        # One frame for the common call (each coroutine frame costs as much as a header check):
        # the head, the body, and an exchange's handler are read and run here, in that order.
        try:
            # The request head read once: the target and the headers the engine takes (a list of
            # bytes pairs as servers give them, taken as it is).
            scope = self.scope
            method = scope["method"]
            # Fast path of request_target(scope) for its common case (no mount point, no query, a
            # path seen before): one lookup, no call. Held equal by
            # test_the_engine_gets_request_target_for_every_scope.
            try:
                target = request_target(scope) if scope["root_path"] or scope["query_string"] else _PLAIN_TARGETS[scope["path"]]
            except KeyError:  # a key the scope may leave out, or a new path
                target = request_target(scope)
            headers = scope.get("headers")
            if type(headers) is not list:
                headers = _headers(scope)
            server = self.app.server
            auth = self.config.auth  # OAuth (oauth_server.py): its metadata document, or a 401/403, or the principal set
            denial = auth.metadata_for(method, target) if auth else None
            body = b""
            if denial is None:
                # Refused on the head alone (413 on Content-Length, 405, 415, ...) before waiting
                # for the body. Fast path of that check on asyncio without a guard: it waits until
                # the body read waits (suspended), and a body the server already holds goes to
                # receive_http with the head, which runs the same checks in the same order, once.
                # Held equal by test_a_head_refused_with_its_body_held_gets_the_same_answer.
                if self.driving and auth is None:
                    self._head = (method, target, headers)
                else:
                    headers = tuple(headers)  # a tuple: receive_http reuses check_head's index of it
                    early = server.check_head(method, target, headers)
                    if early is not None:
                        await self._emit(early)
                        return
                # The whole body within body_timeout (408 after), stopped as soon as it passes
                # max_body_bytes (413).
                limit = server.http.max_body_bytes
                size: int | None = None  # None: the body timed out
                if self.driving:  # on asyncio the body is the request's first wait, if it waits
                    self._bound = self.config.body_timeout
                    try:
                        # Fast path of _receive_body(limit): the usual body, one message of bytes,
                        # taken here (no frame of its own). Held equal by
                        # test_the_usual_body_is_taken_as_a_body_in_pieces.
                        message = await self.receive()
                        body = message.get("body", b"")
                        if message["type"] == "http.request" and type(body) is bytes and not message.get("more_body", False):
                            size = len(body)
                        else:
                            size, body = await self._receive_body(limit, message)
                    except _HeadRefused as refused:  # thrown in where the body read began to wait
                        await self._emit(refused.reply)
                        return
                    except asyncio.CancelledError:
                        if not self._end_step(True):
                            raise
                    finally:
                        self._bound = self._head = None
                        if self._timer is not None:
                            self._end_step(False)
                else:
                    with anyio.move_on_after(self.config.body_timeout):
                        size, body = await self._receive_body(limit)
                if size is None:
                    late = f"Request body not received within {self.config.body_timeout} s"
                    await self._refuse(408, ErrorCode.INVALID_REQUEST, late)
                    return
                if size > limit:
                    await self._refuse(413, ErrorCode.INVALID_REQUEST, f"Request body exceeds {limit} bytes")
                    return
                if size < 0:
                    return  # the client left
                if auth is not None:
                    denial = await auth.check_http(method, target, headers, body)
            reply = denial or server.receive_http(
                HttpRequest(
                    method=method, target=target, headers=headers, body=body,
                    principal=principal_key() if auth is not None else None,
                ),
                now=time.time(),
            )
            if not isinstance(reply, HttpExchange):
                if isinstance(reply, HttpListenStream):
                    await self._run_listen(reply)
                else:
                    await deliver(self.app, reply, self._emit, self._watch_disconnect)
            elif not self._asyncio:
                await self.app.run_exchange(reply, self._emit, self._watch_disconnect)
            else:
                # Fast path of app.run_exchange (above: a task group and a cancel scope per
                # exchange). The handler runs in the request's task; a client that leaves cancels it
                # (its ExchangeRun: a disconnect seen by the watcher, or a refused send in _emit).
                # That run and its cancel scope are made only when needed: where the handler
                # first waits (_watch), or when its client leaves before any wait. Nothing else
                # runs before either, and a handler that answers at once makes neither. The with
                # of that scope is written out (it is entered where it is made). Held equal by
                # test_disconnect_cancels_the_handler and test_a_refused_send_cancels_the_handler.
                self._exchange = reply
                try:
                    try:
                        handler = self.app.dispatch(reply, self._emit, self)
                        if self.driving:  # a first wait in the handler is the request's: suspended calls _watch
                            await handler
                        else:
                            rest = run_until_wait(handler, self._watch)
                            if rest is not None:
                                await rest
                    finally:
                        self._exchange = self._run = None
                        if self._watcher is not None:
                            self._watcher.cancel()
                except BaseException as exc:
                    handler_scope = self._scope
                    if handler_scope is None or not handler_scope.__exit__(type(exc), exc, exc.__traceback__):
                        raise
                else:
                    handler_scope = self._scope
                    if handler_scope is not None and handler_scope.cancel_called:
                        handler_scope.__exit__(None, None, None)
        except _PeerGone:
            pass
        except Exception:  # noqa: BLE001 - a bug answers -32603 instead of the server's plain-text 500
            _log.exception("unexpected error while serving an MCP request")
            if not self.started:
                try:
                    await self._refuse(500, ErrorCode.INTERNAL_ERROR, "Internal error")
                except _PeerGone:
                    pass
            # A response already started is left unfinished: the server closes the connection.

    # -- reading --------------------------------------------------------------------------------
    async def _receive_body(self, limit: int, message: Message | None = None) -> tuple[int, bytes]:
        """Receive the body, from ``message`` on when one was received already: its size (over
        ``limit``: stopped there) and the bytes received; size -1 when the client disconnected."""
        size = 0
        chunks: list[bytes] = []
        while size <= limit:
            if message is None:
                message = await self.receive()
            if message["type"] == "http.disconnect":
                return -1, b""
            if message["type"] == "http.request":
                chunk = message.get("body", b"")
                if type(chunk) is not bytes:
                    chunk = bytes(chunk)
                size += len(chunk)
                chunks.append(chunk)
                if not message.get("more_body", False):
                    break
            message = None
        return size, chunks[0] if len(chunks) == 1 else b"".join(chunks)

    async def _watch_disconnect(self, gone: Callable[[], None]) -> None:
        """While a response is being produced: call ``gone()`` on ``http.disconnect``."""
        while True:
            message = await self.receive()
            if message["type"] == "http.disconnect":
                gone()
                return

    async def _watch_alone(self, gone: Callable[[], None]) -> None:
        """:meth:`_watch_disconnect` as a task of its own (asyncio, an exchange in :meth:`serve`): a
        ``receive()`` that fails means the client is gone too (nothing awaits this task)."""
        try:
            await self._watch_disconnect(gone)
        except Exception:  # noqa: BLE001 - the server's receive() broke: treat as a departure
            gone()

    # -- writing --------------------------------------------------------------------------------
    async def _emit(self, outputs: Sequence[Output]) -> None:
        """ResponseHead -> ``http.response.start``; ResponseBody -> ``http.response.body``, each
        sent as it is made. A send may block ``send_timeout`` seconds (before a request's first
        wait, on asyncio, the sends of one call share one bound, a timer made only if one waits)."""
        driving = self.driving
        if driving:
            self._bound = self.config.send_timeout
        try:
            try:
                for item in outputs:
                    message: Message
                    if isinstance(item, ResponseHead):
                        self.started = True
                        message = {"type": "http.response.start", "status": item.status, "headers": list(item.headers)}
                    elif item.data or not item.more:
                        message = {"type": "http.response.body", "body": item.data, "more_body": item.more}
                    else:
                        continue
                    if driving:
                        await self._send(message)
                    elif self._asyncio:
                        await bounded(self._sending(message), self.config.send_timeout)
                    else:
                        with anyio.fail_after(self.config.send_timeout):
                            await self._send(message)
            except asyncio.CancelledError:
                if driving and self._end_step(True):
                    raise TimeoutError from None
                raise
            finally:
                if driving:
                    self._bound = None
                    if self._timer is not None:
                        self._end_step(False)
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            # OSError includes TimeoutError (the timeouts) and servers' "client disconnected".
            if self._exchange is None:
                raise _PeerGone from exc
            await self._handler_run().lost()  # a handler's answer on asyncio: its client left (the handler is cancelled here)

    async def _sending(self, message: Message) -> None:
        # The server's send() as a coroutine of ours (bounded() steps it by hand; a server's send
        # may return any awaitable).
        await self._send(message)

    async def _refuse(self, status: int, code: int, message: str) -> None:
        head, body = error_reply(RemoteProtocolError(message, code=code, http_status=status))
        await self._emit([head, body])

    # -- the two long-lived shapes ----------------------------------------------------------------
    def cancel(self) -> None:
        """Cancel the running handler (the :class:`ExchangeRun`'s scope, on asyncio): its
        scope is made now if the handler has not waited yet (then this runs in its task)."""
        scope = self._scope
        if scope is None:
            task = self._task or asyncio.current_task()
            assert task is not None  # on asyncio, in the request's task
            scope = self._scope = TaskScope(task)
        scope.cancel()

    def _watch(self) -> None:
        # The handler began to wait: its cancel scope starts here, and from now on a disconnect cancels it.
        if self._exchange is not None:
            task = self._task
            assert task is not None  # only asyncio watches this way
            if self._scope is None:
                self._scope = TaskScope(task)
            self._watcher = task.get_loop().create_task(self._watch_alone(self._handler_run().gone))

    def _handler_run(self) -> ExchangeRun:
        """The :class:`ExchangeRun` of the handler running on asyncio, made when first needed."""
        run = self._run
        if run is None:
            exchange = self._exchange
            assert exchange is not None  # only while a handler runs
            run = self._run = ExchangeRun(exchange, self._emit, self)
        return run

    async def _run_listen(self, stream: HttpListenStream) -> None:
        """Forward a listen stream as SSE (``App.forward_listen``) until it ends, the app drops
        it, or the client leaves; an abrupt end leaves the response unfinished."""
        forwarder = self.app.forward_listen(stream)  # before the first await: no event can be missed
        await forwarder.run(
            self._emit, watch=self._watch_disconnect, keepalive_interval=self.config.sse_keepalive_interval
        )


class AsgiApp:
    """An ASGI 3 application serving ``app`` over Streamable HTTP.

    Use it as the app of an ASGI server (``uvicorn.run(AsgiApp(app))``) or mount it
    (``Mount("/mcp", app=AsgiApp(app))``). The endpoint path is the engine's
    ``HttpPolicy(path=...)`` (``"/mcp"`` by default), compared with the path relative to the
    mount point: mounted at ``/mcp`` under Starlette, build the App with
    ``http=HttpPolicy(path="/")``. See ``docs/asgi.md``.
    """

    def __init__(self, app: App, *, config: AsgiConfig = _DEFAULT_CONFIG) -> None:
        self.app = app
        self.config = config

    async def _other_scope(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
        elif kind == "websocket":
            await self._refuse_websocket(scope, receive, send)
        else:
            raise RuntimeError(f"mcpwire's ASGI app does not serve {kind!r} scopes")

    # ASGI 3, ``await asgi(scope, receive, send)``: an ``http`` scope is
    # ``await _Request(self, scope, receive, send).serve()``, any other ``_other_scope``. On
    # asyncio the request is run by hand up to its first wait (the module docstring), in
    # on_asyncio, the one module that steps coroutines by hand: there asgi_call holds
    # run_until_wait written out, held equal by test_asgi_call_steps_a_request_as_run_until_wait.
    __call__ = asgi_call(_Request, _other_scope)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        # Shared state first (MCPWIRE_REDIS: docs/deployment.md), so the App's broker is in
        # place before its background work starts; Redis down at startup fails the startup.
        shared: Any = None
        if os.environ.get("MCPWIRE_REDIS"):
            message = await receive()
            if message["type"] != "lifespan.startup":
                return
            from ..redis_state import RedisUnavailable, use_redis_from_env

            try:
                shared = use_redis_from_env(self.app)
            except RedisUnavailable as exc:
                await send({"type": "lifespan.startup.failed", "message": str(exc)})
                return
            await send({"type": "lifespan.startup.complete"})
        try:
            # The App's background work (tasks) runs for the server's lifetime.
            async with self.app.running():
                while True:
                    message = await receive()
                    if message["type"] == "lifespan.startup":
                        await send({"type": "lifespan.startup.complete"})
                    elif message["type"] == "lifespan.shutdown":
                        self.app.close_streams()
                        await send({"type": "lifespan.shutdown.complete"})
                        return
        finally:
            if shared is not None:
                shared.close()

    async def _refuse_websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = await receive()
        if message["type"] != "websocket.connect":
            return
        if "websocket.http.response" not in (scope.get("extensions") or {}):
            await send({"type": "websocket.close", "code": 1008})
            return
        # A WebSocket handshake is a GET: the engine answers it (405, Allow: POST).
        request = HttpRequest(method="GET", target=request_target(scope), headers=_headers(scope))
        reply = self.app.server.receive_http(request, now=time.time())
        assert isinstance(reply, tuple)  # only POST can open an exchange or a stream
        head, body = reply
        await send({"type": "websocket.http.response.start", "status": head.status, "headers": list(head.headers)})
        await send({"type": "websocket.http.response.body", "body": body.data})


def asgi_app(app: App, *, config: AsgiConfig = _DEFAULT_CONFIG) -> AsgiApp:
    """``AsgiApp(app, config=config)``: the ASGI 3 callable serving ``app``."""
    return AsgiApp(app, config=config)


def _headers(scope: Scope) -> tuple[tuple[bytes, bytes], ...]:
    """The request's headers as the engine takes them: a tuple (the engine checks that each name
    and value is ``bytes``), so that ``Server.check_head``'s index of them is reused by
    ``receive_http`` for the same tuple instead of walking the headers a second time."""
    headers = scope.get("headers") or ()
    if type(headers) is list or type(headers) is tuple:
        return tuple(headers)
    return tuple((bytes(name), bytes(value)) for name, value in headers)
