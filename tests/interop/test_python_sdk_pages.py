"""Pages and the response cache against the official Python SDK's server (``peers/sdk_server.py``).

On the initialize-era revision it sends no caching hints: pages read ``ttl_ms`` and
``cache_scope`` as ``None`` and nothing is cached. Spoken to in 2026-07-28 (the unpinned client
probes and finds it speaks it) it sends ``ttlMs: 0``, ``private``: the hints are read, and
still nothing is reused. Either way a page is the whole list (it does not paginate).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
import trio

from mcpwire import PROTOCOL_VERSION, Client
from mcpwire.types import Implementation
from mcpwire_adapters.client.cache import MemoryStore, ResponseCache
from mcpwire_adapters.client.http import HttpClient
from mcpwire_adapters.client.session import Session
from mcpwire_adapters.client.stdio import StdioClient

from _peers import SDK_SERVER, served

TIMEOUT = 60.0
TOOLS = ["ask_llm", "chatty", "count", "echo", "greet", "touch"]


@pytest.fixture
def sdk_url() -> Iterator[str]:
    with served(SDK_SERVER, "http") as url:
        yield url


def make_client(pinned: bool) -> Client:
    return Client(Implementation(name="mcpwire-interop", version="1.0"),
                  protocol_version="2025-11-25" if pinned else PROTOCOL_VERSION)


async def pages(c: Session, store: MemoryStore, hints: tuple[int | None, str | None]) -> None:
    page = await c.list_tools_page()
    assert sorted(t.name for t in page.items) == TOOLS and page.next_cursor is None
    assert (page.ttl_ms, page.cache_scope) == hints
    resources = await c.list_resources_page()
    assert [r.uri for r in resources.items] == ["test://note"] and (resources.ttl_ms, resources.cache_scope) == hints
    read = await c.read_resource("test://note")
    assert read.data["contents"][0]["text"] == "a note" and (read.ttl_ms, read.cache_scope) == hints
    assert sorted(t.name for t in await c.list_tools()) == TOOLS
    assert len(store) == 0 and c.cache is not None and c.cache.hits == 0 and c.cache.stored == 0


@pytest.mark.parametrize(("pinned", "hints"), [(True, (None, None)), (False, (0, "private"))])
def test_pages_from_the_sdk_server_over_http(sdk_url: str, pinned: bool, hints: tuple[int | None, str | None]) -> None:
    async def main() -> None:
        store = MemoryStore()
        with trio.fail_after(TIMEOUT):
            async with HttpClient(sdk_url, make_client(pinned), cache=ResponseCache(store)) as c:
                await pages(c, store, hints)
                assert c.client.initialize_era is pinned

    trio.run(main)


def test_pages_from_the_sdk_server_over_stdio() -> None:
    async def main() -> None:
        store = MemoryStore()
        with trio.fail_after(TIMEOUT):
            async with StdioClient([sys.executable, SDK_SERVER, "stdio"], make_client(True), cache=ResponseCache(store),
                                   stderr=subprocess.DEVNULL) as c:
                await pages(c, store, (None, None))

    trio.run(main)
