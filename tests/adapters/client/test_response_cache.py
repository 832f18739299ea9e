"""Pages with their hints and the response cache (``adapters/client/cache.py``), against our server.

HTTP: ``_cache_app`` served by ``serve_http`` on 127.0.0.1 port 0 in a thread of its own;
stdio: the same app as a subprocess. The client side of each test runs on trio and on asyncio
(``tests/_backends.py``). Time is a clock the test moves (``MemoryStore(clock=)``):
nothing here waits for a ttl to pass. Whether a result came from the server or the cache is
told by what the server does between two asks: ``touch`` adds a tool silently, and
``test://note`` counts its reads in its text.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import msgspec
import pytest
from mcpwire_adapters.app.app import App
from mcpwire_adapters.client.cache import CACHEABLE_METHODS, MemoryStore, ResponseCache
from mcpwire_adapters.client.http import HttpClient
from mcpwire_adapters.client.session import Page, Session
from mcpwire_adapters.client.stdio import StdioClient

from mcpwire import Client, ListChanged, OutgoingRequest, ResourceUpdated, ResultReceived
from mcpwire.types import Implementation, InputRequest
from mcpwire.wire.methods import CACHEABLE_METHODS as WIRE_CACHEABLE

import _backends
from _backends import both
from _cache_app import build_app

APP = str(Path(__file__).resolve().parent / "_cache_app.py")


class Clock:
    """Seconds, moved by the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make_client(era: bool = False) -> Client:
    return Client(Implementation(name="cache-test", version="1"), capabilities={"elicitation": {"form": {}}},
                  protocol_version="2025-11-25" if era else "2026-07-28")


@asynccontextmanager
async def served(app: App) -> AsyncIterator[str]:
    async with _backends.served(app) as server:
        yield server.url


def names(items: list[Any]) -> list[str]:
    return [item.name for item in items]


def text(result: ResultReceived) -> str:
    return str(result.data["contents"][0]["text"])


async def answer_word(requests: dict[str, InputRequest]) -> dict[str, Any]:
    return {key: {"action": "accept", "content": {"word": "pear"}} for key in requests}


# -- pages ------------------------------------------------------------------------------------------


async def walk_pages(c: Session) -> None:
    first = await c.list_tools_page()
    assert isinstance(first, Page) and first.method == "tools/list"
    assert names(first.items) == ["alpha", "beta"]
    assert (first.ttl_ms, first.cache_scope) == (60_000, "public")
    assert first.next_cursor is not None
    second = await c.list_tools_page(first.next_cursor)
    assert names(second.items) == ["change", "edit"] and second.next_cursor is not None
    rest: list[Any] = []
    cursor: str | None = second.next_cursor
    while cursor is not None:
        page = await c.list_tools_page(cursor)
        rest += page.items
        cursor = page.next_cursor
    assert names(rest) == ["gamma", "touch"]
    # The full list is the pages, in order.
    assert names(await c.list_tools()) == ["alpha", "beta", "change", "edit", "gamma", "touch"]
    resources = await c.list_resources_page()
    assert [r.uri for r in resources.items] == ["test://ask", "test://note"] and resources.next_cursor is None
    assert (resources.ttl_ms, resources.cache_scope) == (60_000, "public")
    templates = await c.list_resource_templates_page()
    assert templates.items == [] and templates.next_cursor is None and templates.ttl_ms == 60_000
    prompts = await c.list_prompts_page()
    assert prompts.items == [] and prompts.cache_scope == "public"
    read = await c.read_resource("test://note")
    assert (read.ttl_ms, read.cache_scope) == (60_000, "private")
    assert (read.value.ttl_ms, read.value.cache_scope) == (60_000, "private")


@both
async def test_pages_carry_cursor_and_hints_over_http() -> None:
    async with served(build_app()) as url, HttpClient(url, make_client()) as c:
        await walk_pages(c)


@both
async def test_pages_carry_cursor_and_hints_over_stdio() -> None:
    async with StdioClient([sys.executable, APP], make_client(), stderr=subprocess.DEVNULL) as c:
        await walk_pages(c)


@both
async def test_an_initialize_era_server_sends_no_hints_and_nothing_is_cached() -> None:
    store = MemoryStore(clock=Clock())
    async with served(build_app()) as url, HttpClient(url, make_client(era=True), cache=ResponseCache(store)) as c:
        page = await c.list_tools_page()
        assert c.client.initialize_era
        assert names(page.items) == ["alpha", "beta"] and page.next_cursor is not None
        assert (page.ttl_ms, page.cache_scope) == (None, None)
        read = await c.read_resource("test://note")
        assert (read.ttl_ms, read.cache_scope) == (None, None)
        await c.call_tool("touch")
        assert "added1" in names(await c.list_tools())
        assert text(await c.read_resource("test://note")) == "first #2"
        assert len(store) == 0 and c.cache is not None and c.cache.hits == 0


# -- reuse and expiry -------------------------------------------------------------------------------


@both
async def test_a_fresh_result_is_reused_until_its_ttl_passes() -> None:
    clock = Clock()
    cache = ResponseCache(MemoryStore(clock=clock))
    async with served(build_app(ttl_ms=5_000)) as url, HttpClient(url, make_client(), cache=cache) as c:
        before = names(await c.list_tools())
        assert text(await c.read_resource("test://note")) == "first #1"
        await c.call_tool("touch")  # a new tool, announced to no one
        clock.now += 4.999
        assert names(await c.list_tools()) == before  # every page from the cache
        assert text(await c.read_resource("test://note")) == "first #1"
        hits = cache.hits
        assert hits == 4  # three pages and the read
        clock.now += 0.001  # 5,000 ms after: stale
        assert "added1" in names(await c.list_tools())
        assert text(await c.read_resource("test://note")) == "first #2"
        assert cache.hits == hits


@both
async def test_a_page_asked_by_cursor_is_cached_by_its_cursor() -> None:
    clock = Clock()
    cache = ResponseCache(MemoryStore(clock=clock))
    async with served(build_app()) as url, HttpClient(url, make_client(), cache=cache) as c:
        first = await c.list_tools_page()
        assert first.next_cursor is not None
        second = await c.list_tools_page(first.next_cursor)
        again = await c.list_tools_page(first.next_cursor)
        assert names(again.items) == names(second.items) == ["change", "edit"]
        assert again.result.raw == second.result.raw and again.result.request_id != second.result.request_id
        assert cache.hits == 1 and cache.stored == 2


@both
async def test_ttl_zero_is_never_reused() -> None:
    store = MemoryStore(clock=Clock())
    cache = ResponseCache(store)
    async with served(build_app(ttl_ms=0)) as url, HttpClient(url, make_client(), cache=cache) as c:
        page = await c.list_tools_page()
        assert (page.ttl_ms, page.cache_scope) == (0, "public")
        assert text(await c.read_resource("test://note")) == "first #1"
        assert text(await c.read_resource("test://note")) == "first #2"
        await c.call_tool("touch")
        assert "added1" in names(await c.list_tools())
        assert len(store) == 0 and cache.hits == 0 and cache.stored == 0


@both
async def test_a_read_that_needed_input_is_not_cached() -> None:
    store = MemoryStore(clock=Clock())
    async with served(build_app()) as url, HttpClient(url, make_client(), cache=ResponseCache(store),
                                                      on_input=answer_word) as c:
        first = await c.read_resource("test://ask")
        assert text(first) == "pear #1" and first.ttl_ms == 60_000  # cacheable, but reached through a round
        assert text(await c.read_resource("test://ask")) == "pear #2"
        assert len(store) == 0


def test_a_request_carrying_input_responses_is_not_cacheable() -> None:
    client = make_client()
    plain = client.read_resource("test://ask")
    answered = client.request("resources/read", {"uri": "test://ask", "inputResponses": {}})
    stated = client.request("resources/read", {"uri": "test://ask", "requestState": "s"})
    assert ResponseCache.cacheable(plain)
    assert not ResponseCache.cacheable(answered) and not ResponseCache.cacheable(stated)
    assert not ResponseCache.cacheable(client.call_tool("echo", {}))


# -- scope --------------------------------------------------------------------------------------------


@both
async def test_private_results_stay_in_their_authorization_context_and_public_ones_are_shared() -> None:
    cache = ResponseCache(MemoryStore(clock=Clock()))
    async with served(build_app(scope="public", read_scope="private")) as url:
        ada = HttpClient(url, make_client(), cache=cache, extra_headers=[(b"authorization", b"Bearer ada")])
        bob = HttpClient(url, make_client(), cache=cache, extra_headers=[(b"authorization", b"Bearer bob")])
        async with ada, bob:
            tools = names(await ada.list_tools())
            assert text(await ada.read_resource("test://note")) == "first #1"
            await ada.call_tool("touch")
            # Public: bob, another context on the same server, reuses ada's pages.
            assert names(await bob.list_tools()) == tools
            # Private: bob's read is his own; each then reuses only its own.
            assert text(await bob.read_resource("test://note")) == "first #2"
            assert text(await ada.read_resource("test://note")) == "first #1"
            assert text(await bob.read_resource("test://note")) == "first #2"
        async with HttpClient(url, make_client(), cache=cache, extra_headers=[(b"authorization", b"Bearer ada")]) as again:
            assert text(await again.read_resource("test://note")) == "first #1"  # same context, new session


@both
async def test_public_entries_are_not_shared_across_servers() -> None:
    cache = ResponseCache(MemoryStore(clock=Clock()))
    async with served(build_app()) as one, served(build_app()) as two:
        async with HttpClient(one, make_client(), cache=cache) as a, HttpClient(two, make_client(), cache=cache) as b:
            await a.list_tools()
            await a.call_tool("touch")
            await b.call_tool("touch")
            assert "added1" in names(await b.list_tools())
            assert "added1" not in names(await a.list_tools())


# -- invalidation -------------------------------------------------------------------------------------


@both
async def test_list_changed_and_resource_updated_on_a_listen_stream_invalidate() -> None:
    cache = ResponseCache(MemoryStore(clock=Clock()))
    async with served(build_app()) as url, HttpClient(url, make_client(), cache=cache) as c:
        before = names(await c.list_tools())
        assert text(await c.read_resource("test://note")) == "first #1"
        async with c.listen({"toolsListChanged": True, "resourceSubscriptions": ["test://note"]}) as sub:
            await sub.__anext__()  # the acknowledgement
            await c.call_tool("touch")
            assert names(await c.list_tools()) == before  # cached: nobody said anything
            await c.call_tool("change")
            assert isinstance(await sub.__anext__(), ListChanged)
            assert names(await c.list_tools()) == sorted([*before, "added1", "added2"])  # every page asked again
            assert text(await c.read_resource("test://note")) == "first #1"
            await c.call_tool("edit", {"text": "second"})
            event = await sub.__anext__()
            assert isinstance(event, ResourceUpdated) and event.uri == "test://note"
            assert text(await c.read_resource("test://note")) == "second #2"


@both
async def test_list_changed_over_stdio_invalidates() -> None:
    cache = ResponseCache(MemoryStore(clock=Clock()))
    async with StdioClient([sys.executable, APP, "--page-size", "100"], make_client(), cache=cache,
                           stderr=subprocess.DEVNULL) as c:
        await c.list_tools()
        async with c.listen({"toolsListChanged": True}) as sub:
            await sub.__anext__()
            await c.call_tool("touch")
            assert "added1" not in names(await c.list_tools())
            await c.call_tool("change")
            assert isinstance(await sub.__anext__(), ListChanged)
            assert {"added1", "added2"} <= set(names(await c.list_tools()))


@both
async def test_an_initialize_era_session_stream_invalidates_a_shared_cache() -> None:
    # One cache, two sessions on one server: a modern one that keeps the tools (public), and an
    # initialize-era one whose GET stream brings the list change.
    cache = ResponseCache(MemoryStore(clock=Clock()))
    async with served(build_app()) as url:
        async with HttpClient(url, make_client(), cache=cache) as modern, \
                HttpClient(url, make_client(era=True), cache=cache) as old:
            before = names(await modern.list_tools())
            await old.connect()  # the session the GET stream belongs to
            async with old.listen({"toolsListChanged": True}) as sub:
                await modern.call_tool("touch")
                assert names(await modern.list_tools()) == before
                await old.call_tool("change")
                event = await sub.__anext__()
                assert isinstance(event, ListChanged) and event.subscription_id is None
            assert {"added1", "added2"} <= set(names(await modern.list_tools()))


# -- the store ----------------------------------------------------------------------------------------


@both
async def test_the_memory_store_is_bounded_least_recently_used_first() -> None:
    clock = Clock()
    store = MemoryStore(max_entries=2, clock=clock)
    await store.set("a", b"1", 1000)
    await store.set("b", b"2", 1000)
    assert await store.get("a") == b"1"  # a is now the most recently used
    await store.set("c", b"3", 1000)
    assert (await store.get("b"), await store.get("a"), await store.get("c")) == (None, b"1", b"3")
    assert store.evicted == 1 and len(store) == 2
    clock.now += 1.0
    assert await store.get("a") is None and len(store) == 1  # expired: gone, not evicted
    await store.set("x:1", b"", 10)
    await store.clear("x:")
    assert len(store) == 1
    await store.delete("c")
    assert len(store) == 0
    with pytest.raises(ValueError):
        MemoryStore(max_entries=0)


@both
async def test_a_session_cache_over_a_small_store_evicts() -> None:
    store = MemoryStore(max_entries=2, clock=Clock())
    cache = ResponseCache(store)
    async with served(build_app(page_size=100)) as url, HttpClient(url, make_client(), cache=cache) as c:
        await c.list_tools()
        await c.list_resources()
        assert text(await c.read_resource("test://note")) == "first #1"  # evicts tools/list
        await c.call_tool("touch")
        assert "added1" in names(await c.list_tools())
        assert store.evicted == 2 and len(store) == 2


@both
async def test_keys_cannot_run_into_each_other() -> None:
    store = MemoryStore(clock=Clock())
    cache = ResponseCache(store)
    client = make_client()

    def read(uri: str) -> OutgoingRequest:
        return client.read_resource(uri)

    result = ResultReceived(request_id=1, method="resources/read", value=None,
                            data={"contents": [], "ttlMs": 1000, "cacheScope": "public"},
                            raw=b'{"contents":[],"ttlMs":1000,"cacheScope":"public"}')
    assert await cache.put('a" "b', "", read("c"), result)
    assert await cache.get("a", "", read('b" "c')) is None
    assert await cache.get('a" "b', "anyone", read("c")) == result.raw
    # resources/updated for one URI leaves a URI it is a prefix of.
    assert await cache.put("s", "", read("test://n"), result)
    assert await cache.put("s", "", read("test://note"), result)
    await cache.resource_updated("s", "test://n")
    assert await cache.get("s", "", read("test://n")) is None
    assert await cache.get("s", "", read("test://note")) == result.raw
    other = ResponseCache(store, namespace="other")
    assert await other.put("s", "", read("test://note"), result)
    await cache.clear()
    assert await cache.get("s", "", read("test://note")) is None
    assert await other.get("s", "", read("test://note")) == result.raw


def test_the_cacheable_methods_are_the_schema_s() -> None:
    assert CACHEABLE_METHODS == WIRE_CACHEABLE


def test_a_page_of_a_broken_result_keeps_the_items_that_decode() -> None:
    client = make_client()
    data = {"tools": [{"name": "ok", "inputSchema": {"type": "object"}}, {"name": 3}], "nextCursor": "n"}
    result = ResultReceived(request_id=1, method="tools/list", value=None, data=data, raw=msgspec.json.encode(data))
    page = Page.of(client, result)
    assert names(page.items) == ["ok"] and page.next_cursor == "n" and (page.ttl_ms, page.cache_scope) == (None, None)


@both
async def test_a_walk_restarts_when_a_kept_page_names_a_cursor_the_server_let_expire() -> None:
    store = MemoryStore(max_entries=2, clock=Clock())
    cache = ResponseCache(store)
    async with served(build_app()) as url, HttpClient(url, make_client(), cache=cache) as c:
        before = names(await c.list_tools())  # three pages: the third evicts the first
        await c.list_tools_page()  # the first again, which evicts the second
        await c.call_tool("touch")  # the catalog changes: the kept first page's cursor expires
        assert names(await c.list_tools()) == sorted([*before, "added1"])
        assert cache.hits == 1  # the kept first page, then a fresh walk
