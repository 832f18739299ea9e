"""The request verbs of a client session: :class:`SessionVerbs`, and the :class:`Page` a list
method's page comes as.

Owns: one method per MCP request a host sends (``server/discover``, the four lists whole or a
page at a time, ``tools/call`` and following the task it may become, ``tasks/*``,
``resources/read``, ``prompts/get``, ``completion/complete``, ``logging/setLevel``,
``resources/subscribe``, ``ping``) and ``listen``, each built by the :class:`mcpwire.Client`
with the options every verb takes alike and sent through :meth:`Session.send
<mcpwire_adapters.client.session.Session.send>`, which follows it to a complete result (the
request loop: ``session.py``). :class:`~mcpwire_adapters.client.session.Session` inherits it;
these names are also importable from :mod:`mcpwire_adapters.client.session`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from mcpwire import Client, ErrorCode, OutgoingRequest, ResultReceived
from mcpwire.tasks import Task
from mcpwire.types import DiscoverResult, ServerCapabilities

from ..errors import InvalidResult, ServerError
from .port import InputHandler
from .subscription import Subscription
from .task_follower import TaskFollower, TaskHandler, caps_option

if TYPE_CHECKING:
    from .cache import ResponseCache

__all__ = ["EventHandler", "Page", "SessionVerbs"]

EventHandler = Callable[[Any], "None | Awaitable[None]"]
_LIST_KINDS = {"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources",
               "resources/templates/list": "resources"}  # what list_changed names each list


class Page(msgspec.Struct, frozen=True, kw_only=True):
    """One page of a list method (tools/list, resources/list, resources/templates/list,
    prompts/list) with the hints that came with it (specification: Server > Utilities >
    Pagination; caching, schema ``$defs.CacheableResult``), from :meth:`Session.list_tools_page`
    and the like.

    ``items`` are the page's typed items (tools with invalid ``x-mcp-header`` annotations are
    left out, as in :meth:`Session.list_tools`). ``next_cursor`` names the next page; ``None``:
    this is the last. ``ttl_ms`` (0: immediately stale; positive: fresh for that many
    milliseconds) and ``cache_scope`` (``"public"`` or ``"private"``) are ``None`` when the
    server sent none, as initialize-era servers do. ``result`` is the result the page was read
    from (``result.raw`` holds its exact bytes)."""

    method: str
    items: list[Any]
    next_cursor: str | None
    ttl_ms: int | None
    cache_scope: Literal["public", "private"] | None
    result: ResultReceived

    @classmethod
    def of(cls, client: Client, result: ResultReceived) -> Page:
        """The page ``result`` (a list method's) holds, its items read the way ``client`` reads them."""
        reader = client.paginate(result.method, max_pages=1)
        reader.add(result)
        cursor = result.data.get("nextCursor")
        return cls(method=result.method, items=reader.items, next_cursor=cursor if isinstance(cursor, str) else None,
                   ttl_ms=result.ttl_ms, cache_scope=result.cache_scope, result=result)


class SessionVerbs:
    """The request verbs of :class:`~mcpwire_adapters.client.session.Session` (see the module docstring)."""

    # What the verbs use of the session, set by Session.__init__.
    client: Client
    max_pages: int
    on_input: InputHandler | None
    discovered: ResultReceived | None
    task_inputs: dict[str, InputHandler | None]
    _era_known: bool
    _log_level: str | None
    _tokens: int

    if TYPE_CHECKING:
        @property
        def server_capabilities(self) -> ServerCapabilities | None: ...
        async def send(self, request: OutgoingRequest, *, on_input: InputHandler | None = None,
                       on_progress: EventHandler | None = None, on_log: EventHandler | None = None) -> ResultReceived: ...
        async def _ready(self) -> None: ...
        def _caching(self) -> ResponseCache | None: ...
        def _cache_where(self) -> tuple[str, str]: ...
        def _subscription(self, request: OutgoingRequest) -> Subscription: ...
        def _session_listen(self, notifications: Mapping[str, Any]) -> Subscription: ...

    async def discover(self) -> ResultReceived:
        """``server/discover`` as is (no fallback; :meth:`connect` falls back)."""
        self.discovered = await self.send(self.client.discover())
        if isinstance(self.discovered.value, DiscoverResult):
            self._era_known = True
        return self.discovered

    async def set_log_level(self, level: str) -> None:
        """The session's log level (``logging/setLevel``, initialize era). In 2026-07-28 the level
        travels with each request instead (``log_level=``)."""
        await self._ready()
        await self.send(self.client.set_log_level(level))
        self._log_level = level

    async def subscribe(self, uri: str) -> None:
        """``resources/subscribe`` (initialize era); updates arrive on :meth:`listen`."""
        await self._ready()
        await self.send(self.client.subscribe(uri))

    async def unsubscribe(self, uri: str) -> None:
        await self._ready()
        await self.send(self.client.unsubscribe(uri))

    async def ping(self) -> None:
        await self._ready()
        await self.send(self.client.ping())

    async def _era_log_level(self, log_level: str | None) -> str | None:
        # On a session the level is the session's: set it once, then build without it; a
        # server without the logging capability is not asked (it need not know the method).
        if log_level is None or not self.client.initialize_era:
            return log_level
        caps = self.server_capabilities
        if self._log_level != log_level and caps is not None and isinstance(caps.logging, dict):
            await self.set_log_level(log_level)
        return None

    async def _all(self, method: str) -> list[Any]:
        await self._ready()
        restarted = False
        while True:
            pages = self.client.paginate(method, max_pages=self.max_pages)
            try:
                while (request := pages.next_request()) is not None:
                    pages.add(await self.send(request))
                return pages.items
            except ServerError as exc:
                # A kept page's cursor may name a list the server has since changed (a page
                # after it was dropped, by expiry or eviction): -32602. Walk once more, afresh.
                cache = self._caching()
                if restarted or cache is None or exc.code != ErrorCode.INVALID_PARAMS or pages.pages == 0:
                    raise
                restarted = True
                await cache.list_changed(self._cache_where()[0], _LIST_KINDS[method])

    async def _page(self, method: str, cursor: str | None) -> Page:
        await self._ready()
        return Page.of(self.client, await self.send(self.client.request(method, None if cursor is None else {"cursor": cursor})))

    async def list_tools(self) -> list[Any]:
        """Every tool (all pages, at most ``max_pages``). Tools with invalid ``x-mcp-header`` are left out."""
        return await self._all("tools/list")

    async def list_resources(self) -> list[Any]:
        """Every resource (all pages, at most ``max_pages``)."""
        return await self._all("resources/list")

    async def list_resource_templates(self) -> list[Any]:
        """Every resource template (all pages, at most ``max_pages``)."""
        return await self._all("resources/templates/list")

    async def list_prompts(self) -> list[Any]:
        """Every prompt (all pages, at most ``max_pages``)."""
        return await self._all("prompts/list")

    async def list_tools_page(self, cursor: str | None = None) -> Page:
        """One page of ``tools/list``: the first, or the one ``cursor`` (a page's
        ``next_cursor``) names, with its ``ttl_ms`` and ``cache_scope``."""
        return await self._page("tools/list", cursor)

    async def list_resources_page(self, cursor: str | None = None) -> Page:
        """One page of ``resources/list`` (see :meth:`list_tools_page`)."""
        return await self._page("resources/list", cursor)

    async def list_resource_templates_page(self, cursor: str | None = None) -> Page:
        """One page of ``resources/templates/list`` (see :meth:`list_tools_page`)."""
        return await self._page("resources/templates/list", cursor)

    async def list_prompts_page(self, cursor: str | None = None) -> Page:
        """One page of ``prompts/list`` (see :meth:`list_tools_page`)."""
        return await self._page("prompts/list", cursor)

    async def _verb(self, build: Callable[..., OutgoingRequest], *args: Any, on_input: InputHandler | None = None,
                    on_progress: EventHandler | None = None, on_log: EventHandler | None = None,
                    progress_token: str | int | None = None, log_level: str | None = None,
                    capabilities: Mapping[str, Any] | None = None, meta: Mapping[str, Any] | None = None,
                    **params: Any) -> ResultReceived:
        """One request verb with the options every verb takes alike: ``on_input``, ``on_progress``
        (a ``progress_token`` is made up when none is given), ``on_log`` and ``log_level`` (a
        session's ``logging/setLevel``), ``capabilities`` for this request (2026-07-28) and
        ``meta``, keys of the host's own for ``_meta``. Cancel by cancelling the awaiting task."""
        await self._ready()
        if on_progress is not None and progress_token is None:
            self._tokens += 1
            progress_token = f"progress-{self._tokens}"
        log_level = await self._era_log_level(log_level)
        options = {k: v for k, v in (("progress_token", progress_token), ("log_level", log_level),
                                     ("capabilities", capabilities), ("meta", meta)) if v is not None}
        request = build(*args, **params, **options)
        return await self.send(request, on_input=on_input, on_progress=on_progress, on_log=on_log)

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, on_input: InputHandler | None = None, on_progress: EventHandler | None = None,
        on_log: EventHandler | None = None, progress_token: str | int | None = None, log_level: str | None = None,
        capabilities: Mapping[str, Any] | None = None, meta: Mapping[str, Any] | None = None,
        on_task: TaskHandler | None = None, task: Mapping[str, Any] | None = None,
    ) -> ResultReceived:
        """``tools/call``, with the options every verb takes (see :meth:`_verb`). ``task``
        (``{}``, or ``{"ttl": ms}``) asks a 2025-11-25 server for a task (its experimental
        tasks), followed as below: ``tasks/get`` polls, ``tasks/result`` brings the outcome.

        A client that declares the tasks extension (``{"extensions":
        {"io.modelcontextprotocol/tasks": {}}}`` in its capabilities, or in this call's) may get
        a task instead of the result: the call then follows it (ext-tasks: Task Polling) and
        returns the result it completes with. ``tasks/get`` every ``pollIntervalMs`` the server
        advises; each state of the task goes to ``on_task``; its input requests are answered by
        the handlers of input rounds, with ``tasks/update`` (each key once). A failed task
        raises :class:`ServerError` with its error, a cancelled one :class:`TaskCancelled`;
        cancelling the call sends ``tasks/cancel``."""
        result = await self._verb(self.client.call_tool, name, arguments, on_input=on_input, on_progress=on_progress,
                                  on_log=on_log, progress_token=progress_token, log_level=log_level,
                                  capabilities=capabilities, meta=meta, **({} if task is None else {"task": task}))
        if result.result_type == "task" and isinstance(result.value, Task):
            follow = TaskFollower(self, name, arguments, capabilities, on_input or self.on_input, on_task)
            return await follow.run(result.value)
        return result

    async def get_task(self, task_id: str, *, capabilities: Mapping[str, Any] | None = None) -> Task:
        """``tasks/get``: the task's current state."""
        result = await self.send(self.client.get_task(task_id, **caps_option(capabilities)))
        if not isinstance(result.value, Task):
            raise InvalidResult(result)
        return result.value

    async def update_task(self, task_id: str, input_responses: Mapping[str, Any], *,
                          capabilities: Mapping[str, Any] | None = None) -> None:
        """``tasks/update``: answers to the task's outstanding input requests."""
        await self.send(self.client.update_task(task_id, input_responses, **caps_option(capabilities)))

    async def cancel_task(self, task_id: str, *, capabilities: Mapping[str, Any] | None = None) -> None:
        """``tasks/cancel`` (cooperative: the task may still finish otherwise)."""
        await self.send(self.client.cancel_task(task_id, **caps_option(capabilities)))

    async def read_resource(
        self, uri: str, *, on_input: InputHandler | None = None, on_progress: EventHandler | None = None,
        on_log: EventHandler | None = None, progress_token: str | int | None = None, log_level: str | None = None,
        capabilities: Mapping[str, Any] | None = None, meta: Mapping[str, Any] | None = None,
    ) -> ResultReceived:
        return await self._verb(self.client.read_resource, uri, on_input=on_input, on_progress=on_progress, on_log=on_log,
                                progress_token=progress_token, log_level=log_level, capabilities=capabilities, meta=meta)

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, *, on_input: InputHandler | None = None, on_progress: EventHandler | None = None,
        on_log: EventHandler | None = None, progress_token: str | int | None = None, log_level: str | None = None,
        capabilities: Mapping[str, Any] | None = None, meta: Mapping[str, Any] | None = None,
    ) -> ResultReceived:
        return await self._verb(self.client.get_prompt, name, arguments, on_input=on_input, on_progress=on_progress, on_log=on_log,
                                progress_token=progress_token, log_level=log_level, capabilities=capabilities, meta=meta)

    async def complete(
        self, ref: Mapping[str, Any], argument_name: str, value: str, *, context: Mapping[str, str] | None = None,
        on_input: InputHandler | None = None, on_progress: EventHandler | None = None,
        on_log: EventHandler | None = None, progress_token: str | int | None = None, log_level: str | None = None,
        capabilities: Mapping[str, Any] | None = None, meta: Mapping[str, Any] | None = None,
    ) -> ResultReceived:
        """``completion/complete``: the values the server offers for ``argument_name`` of
        ``ref`` (``{"type": "ref/prompt", "name": ...}`` or ``{"type": "ref/resource", "uri":
        ...}``) starting with ``value``, given the arguments already chosen (``context``)."""
        return await self._verb(self.client.complete, ref, argument_name, value, context=context,
                                on_input=on_input, on_progress=on_progress, on_log=on_log,
                                progress_token=progress_token, log_level=log_level, capabilities=capabilities, meta=meta)

    def listen(self, notifications: Mapping[str, Any], **kw: Any) -> Subscription:
        """A ``subscriptions/listen`` stream for ``notifications`` (a SubscriptionFilter object,
        e.g. ``{"toolsListChanged": True}``); ``kw`` go to :meth:`Client.listen`. Nothing is
        sent until the :class:`Subscription` is entered with ``async with``.

        On an initialize-era session the same call listens to the session instead: the GET
        stream over HTTP, the server's notification lines over stdio; ``resourceSubscriptions``
        become ``resources/subscribe`` (and ``unsubscribe`` on leaving), and events carry
        ``subscription_id=None``."""
        if self.client.initialize_era:
            return self._session_listen(notifications)
        return self._subscription(self.client.listen(notifications, **kw))
