"""A synchronous MCP client for scripts and notebooks: :class:`BlockingClient`.

The same client as :class:`~mcpwire_adapters.client.http.HttpClient` and
:class:`~mcpwire_adapters.client.stdio.StdioClient`, with no event loop to manage::

    with BlockingClient.http("http://127.0.0.1:8000/mcp") as c:
        c.discover()
        tools = c.list_tools()
        result = c.call_tool("echo", {"text": "hi"}, on_progress=print)
        with c.listen({"toolsListChanged": True}, timeout=1.0) as events:
            for event in events:     # ListenAck, then ListChanged / ResourceUpdated
                ...

How it works: the async client runs on an event loop in a thread of its own, started by
:func:`anyio.from_thread.start_blocking_portal`: on trio when trio is installed, else on
asyncio (``pip install 'mcpwire[client]'`` brings no trio; the drivers are anyio code and run
the same on both). ``backend="trio"`` or ``backend="asyncio"`` picks one; naming trio where it
is not installed is a :class:`~mcpwire_adapters.errors.UsageError` saying what to install.
Each method sends its coroutine to that thread and waits for the outcome, so it
returns what the async verb returns and raises what it raises (:class:`ServerError`,
:class:`TransportError`, :class:`InvalidResult`, ``ProtocolError``), in the caller's thread.
The caller's thread needs no event loop, and one running there does no harm: in Jupyter, whose
cell code runs in a thread with a running asyncio loop, the calls simply wait for the
client's own thread.

Callbacks (``on_input``, ``on_progress``, ``on_log``, and the ``elicitation`` / ``sampling``
/ ``roots`` handlers) run **in the client's thread**, on its event loop: a plain function is
called there (keep it short: the client waits for it), and an ``async def`` one is awaited
there, so it must use the client's backend (that loop's own API, or anyio's portable one). A
callback must not call back into its own :class:`BlockingClient` (that would wait for the
thread it runs on): it raises ``RuntimeError``.

Interrupting a call (Ctrl-C, a notebook's "interrupt kernel") cancels its request the way the
async client does (HTTP closes its connection, stdio writes ``notifications/cancelled``)
before the ``KeyboardInterrupt`` reaches the caller.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from typing import Any, Self, TypeVar

import anyio
from anyio.from_thread import BlockingPortal, start_blocking_portal

from mcpwire import Client, OutgoingRequest, ResultReceived
from mcpwire.types import Implementation, RequestId, ServerCapabilities, SubscriptionFilter

from ..errors import TransportError, UsageError
from .session import EventHandler, InputHandler, ListenEvent, Session, Subscription

__all__ = ["BlockingClient", "BlockingListen"]

T = TypeVar("T")

_BACKENDS = ("asyncio", "trio")


def _pick_backend(backend: str | None) -> str:
    """The event loop a :class:`BlockingClient` runs on: ``backend`` when given (``"asyncio"`` or
    ``"trio"``; trio must be installed), else trio when it can be imported, else asyncio."""
    if backend is None:
        return "trio" if _trio_importable() else "asyncio"
    if backend not in _BACKENDS:
        raise UsageError(f"backend must be 'asyncio' or 'trio', not {backend!r}")
    if backend == "trio" and not _trio_importable():
        raise UsageError("backend='trio' needs trio, which is not installed: pip install 'mcpwire[trio]' "
                         "(or leave backend out to run on asyncio)")
    return backend


def _trio_importable() -> bool:
    try:
        import trio  # noqa: F401 - only whether it imports
    except ImportError:
        return False
    return True


class BlockingClient:
    """A synchronous client over an async :class:`~mcpwire_adapters.client.session.Session`.

    Build one with :meth:`http` (a URL) or :meth:`stdio` (a command); both take the options
    of the async client they wrap. It connects when built (the stdio process starts, the HTTP
    client opens its background tasks) and is closed by :meth:`close` or by leaving ``with``.
    Every verb of :class:`Session` is here with the same name, arguments, result and errors.
    Calls from several threads at once run concurrently, as tasks on the client's loop.
    """

    def __init__(self, make: Callable[[], Session], *, backend: str | None = None,
                 backend_options: dict[str, Any] | None = None) -> None:
        """Start the event loop thread, build the session there with ``make()`` (the drivers'
        locks belong to the loop that uses them) and enter it (``async with``). ``backend``:
        ``"trio"`` or ``"asyncio"``; ``None`` (the default) picks trio when it is installed, else
        asyncio (trio: ``pip install 'mcpwire[trio]'``)."""
        backend = _pick_backend(backend)
        self._lock = threading.Lock()
        self._closed = False
        self._stack = contextlib.ExitStack()
        try:
            # A daemon thread: a client never closed does not hold up the interpreter's exit.
            portal = start_blocking_portal(backend, backend_options, name="mcpwire-blocking-client")
            self._portal: BlockingPortal = self._stack.enter_context(portal)
            self.session: Session = self._portal.call(make)
            """The async client underneath (``connections_opened``, ``returncode``...)."""
            self._stack.enter_context(self._portal.wrap_async_context_manager(_Entered(self.session)))
        except BaseException:
            self._stack.close()
            raise
        # A client never closed is closed when it is collected, or at exit (atexit runs while
        # the loop's daemon thread still does; later, closing would wait for it forever).
        self._finalizer = weakref.finalize(self, self._stack.close)

    @classmethod
    def http(cls, url: str, client: Client | None = None, *, backend: str | None = None,
             backend_options: dict[str, Any] | None = None, **options: Any) -> BlockingClient:
        """A blocking :class:`~mcpwire_adapters.client.http.HttpClient` for ``url``; ``options``
        are its keyword options (``connect_timeout``, ``read_timeout``, ``extra_headers``,
        ``on_input``, ``elicitation``, ``max_connections``, ``auth``...)."""
        def make() -> Session:
            from .http import HttpClient

            return HttpClient(url, client, **options)

        return cls(make, backend=backend, backend_options=backend_options)

    @classmethod
    def stdio(cls, command: Sequence[str], client: Client | None = None, *, backend: str | None = None,
              backend_options: dict[str, Any] | None = None, **options: Any) -> BlockingClient:
        """A blocking :class:`~mcpwire_adapters.client.stdio.StdioClient` running ``command``;
        ``options`` are its keyword options (``env``, ``cwd``, ``inherit_env``, ``stderr``,
        ``exit_timeout``, ``on_input``, ``elicitation``, ``probe_timeout``...). Closing stops
        the process as leaving its ``async with`` does."""
        def make() -> Session:
            from .stdio import StdioClient

            return StdioClient(command, client, **options)

        return cls(make, backend=backend, backend_options=backend_options)

    # -- lifetime ---------------------------------------------------------------------------------
    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Leave the session's ``async with`` (HTTP: ``DELETE`` for an initialize-era session;
        stdio: stop the process) and stop the event loop thread. Closing again does nothing."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._finalizer()

    def run(self, func: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any) -> T:
        """``await func(*args, **kwargs)`` on the client's event loop, its outcome returned (or
        raised) here: what every verb does, and :class:`BlockingListen` to wait for an event.
        An interrupt while waiting cancels the call first."""
        if self._closed:
            raise TransportError("the blocking client is closed")
        started, finished = threading.Event(), threading.Event()

        async def call() -> T:
            started.set()
            try:
                return await func(*args, **kwargs)
            finally:
                finished.set()

        future: Future[T] = self._portal.start_task_soon(call)
        try:
            return future.result()
        except BaseException:
            # Interrupted while waiting (KeyboardInterrupt): cancel the call, and let its
            # cancellation (a closed connection, notifications/cancelled) finish first.
            if future.cancel() and started.is_set():
                finished.wait()
            raise

    # -- what the server said about itself ------------------------------------------------------
    @property
    def client(self) -> Client:
        """The sans-IO engine the session drives (to build requests for :meth:`send`)."""
        return self.session.client

    @property
    def protocol_version(self) -> str:
        return self.session.protocol_version

    @property
    def server_capabilities(self) -> ServerCapabilities | None:
        return self.session.server_capabilities

    @property
    def server_info(self) -> Implementation | None:
        return self.session.server_info

    @property
    def instructions(self) -> str | None:
        return self.session.instructions

    # -- verbs ------------------------------------------------------------------------------------
    def connect(self) -> ResultReceived:
        """:meth:`Session.connect`: ``server/discover``, or ``initialize`` on an older server."""
        return self.run(self.session.connect)

    def discover(self) -> ResultReceived:
        return self.run(self.session.discover)

    def send(self, request: OutgoingRequest, *, on_input: InputHandler | None = None,
             on_progress: EventHandler | None = None, on_log: EventHandler | None = None) -> ResultReceived:
        """:meth:`Session.send`: any request built with :attr:`client`, followed to its result."""
        return self.run(self.session.send, request, on_input=on_input, on_progress=on_progress, on_log=on_log)

    def list_tools(self) -> list[Any]:
        return self.run(self.session.list_tools)

    def list_resources(self) -> list[Any]:
        return self.run(self.session.list_resources)

    def list_resource_templates(self) -> list[Any]:
        return self.run(self.session.list_resource_templates)

    def list_prompts(self) -> list[Any]:
        return self.run(self.session.list_prompts)

    def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, on_input: InputHandler | None = None,
        on_progress: EventHandler | None = None, on_log: EventHandler | None = None,
        progress_token: str | int | None = None, log_level: str | None = None,
        capabilities: Mapping[str, Any] | None = None, meta: Mapping[str, Any] | None = None,
    ) -> ResultReceived:
        """``tools/call`` (:meth:`Session.call_tool`)."""
        return self.run(self.session.call_tool, name, arguments, on_input=on_input, on_progress=on_progress,
                        on_log=on_log, progress_token=progress_token, log_level=log_level,
                        capabilities=capabilities, meta=meta)

    def read_resource(
        self, uri: str, *, on_input: InputHandler | None = None, on_progress: EventHandler | None = None,
        on_log: EventHandler | None = None, progress_token: str | int | None = None, log_level: str | None = None,
        capabilities: Mapping[str, Any] | None = None, meta: Mapping[str, Any] | None = None,
    ) -> ResultReceived:
        return self.run(self.session.read_resource, uri, on_input=on_input, on_progress=on_progress,
                        on_log=on_log, progress_token=progress_token, log_level=log_level,
                        capabilities=capabilities, meta=meta)

    def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, *, on_input: InputHandler | None = None,
        on_progress: EventHandler | None = None, on_log: EventHandler | None = None,
        progress_token: str | int | None = None, log_level: str | None = None,
        capabilities: Mapping[str, Any] | None = None, meta: Mapping[str, Any] | None = None,
    ) -> ResultReceived:
        return self.run(self.session.get_prompt, name, arguments, on_input=on_input, on_progress=on_progress,
                        on_log=on_log, progress_token=progress_token, log_level=log_level,
                        capabilities=capabilities, meta=meta)

    def complete(
        self, ref: Mapping[str, Any], argument_name: str, value: str, *, context: Mapping[str, str] | None = None,
        on_input: InputHandler | None = None, on_progress: EventHandler | None = None,
        on_log: EventHandler | None = None, progress_token: str | int | None = None, log_level: str | None = None,
        capabilities: Mapping[str, Any] | None = None, meta: Mapping[str, Any] | None = None,
    ) -> ResultReceived:
        """``completion/complete`` (:meth:`Session.complete`)."""
        return self.run(self.session.complete, ref, argument_name, value, context=context, on_input=on_input,
                        on_progress=on_progress, on_log=on_log, progress_token=progress_token,
                        log_level=log_level, capabilities=capabilities, meta=meta)

    def ping(self) -> None:
        self.run(self.session.ping)

    def set_log_level(self, level: str) -> None:
        """``logging/setLevel`` (initialize era; in 2026-07-28 pass ``log_level=`` to a verb)."""
        self.run(self.session.set_log_level, level)

    def subscribe(self, uri: str) -> None:
        self.run(self.session.subscribe, uri)

    def unsubscribe(self, uri: str) -> None:
        self.run(self.session.unsubscribe, uri)

    @contextlib.contextmanager
    def listen(self, notifications: Mapping[str, Any], *, timeout: float | None = None,
               **kw: Any) -> Iterator[BlockingListen]:
        """:meth:`Session.listen` as a ``with`` block: entering waits for the server's
        acknowledgement (so a change made inside the block is delivered), leaving cancels the
        subscription. It yields a :class:`BlockingListen`, a plain iterator of
        :class:`ListenAck`, :class:`ListChanged` and :class:`ResourceUpdated` events that stops
        when the stream ends, or when no event came for ``timeout`` seconds (``None``: wait as
        long as it takes). ``kw`` go to :meth:`Client.listen`."""
        if self._closed:
            raise TransportError("the blocking client is closed")
        subscription = self.session.listen(notifications, **kw)
        with self._portal.wrap_async_context_manager(subscription):
            yield BlockingListen(self, subscription, timeout)


class BlockingListen:
    """The events of one open listen (from :meth:`BlockingClient.listen`): iterate it, or ask
    for one event with :meth:`next` and a timeout of its own. The subscription's
    :attr:`acknowledged` filter, :attr:`subscription_id` and final :attr:`result` are here too."""

    def __init__(self, owner: BlockingClient, subscription: Subscription, timeout: float | None) -> None:
        self._owner = owner
        self.subscription = subscription
        self.timeout = timeout

    @property
    def acknowledged(self) -> SubscriptionFilter | None:
        return self.subscription.acknowledged

    @property
    def subscription_id(self) -> RequestId | None:
        return self.subscription.subscription_id

    @property
    def result(self) -> ResultReceived | None:
        """The listen result, once the server ended the stream (``None`` before, or without one)."""
        return self.subscription.result

    def __iter__(self) -> Self:
        return self

    def __next__(self) -> ListenEvent:
        event = self.next(self.timeout)
        if event is None:
            raise StopIteration
        return event

    def next(self, timeout: float | None = None) -> ListenEvent | None:
        """The next event; ``None`` when the stream has ended or ``timeout`` seconds passed
        without one (the subscription stays open: ask again to keep listening)."""
        return self._owner.run(_next_event, self.subscription, timeout)


async def _next_event(subscription: Subscription, timeout: float | None) -> ListenEvent | None:
    with anyio.move_on_after(timeout):
        try:
            return await subscription.__anext__()
        except StopAsyncIteration:
            return None
    return None


class _Entered:
    """``async with session`` as an async context manager of exactly that type (``Session``
    itself declares no ``__aenter__``: each transport does)."""

    def __init__(self, session: Session) -> None:
        self._session: Any = session

    async def __aenter__(self) -> None:
        await self._session.__aenter__()

    async def __aexit__(self, *exc: object) -> None:
        await self._session.__aexit__(*exc)

