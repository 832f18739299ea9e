"""A client's response cache: results reused while their ``ttlMs`` says they are fresh.

The six cacheable results (server/discover, tools/list, prompts/list, resources/list,
resources/templates/list, resources/read) carry ``ttlMs`` and ``cacheScope`` (specification:
caching, SEP-2549; schema ``$defs.CacheableResult``). ``ttlMs`` 0 means immediately stale, a
positive value fresh for that many milliseconds; a ``"public"`` result may be shared across
authorization contexts, a ``"private"`` one only within one. :class:`ResponseCache` applies
exactly that, for a :class:`~mcpwire_adapters.client.session.Session` given ``cache=``::

    cache = ResponseCache(MemoryStore(max_entries=1000))
    async with HttpClient(url, cache=cache) as c:
        await c.list_tools()     # from the server
        await c.list_tools()     # from the cache, while the tools/list result is fresh

What is kept, and under which key:

- one entry per request: method, server (the URL; for stdio the command line and working
  directory) and the request's one distinguishing parameter, the ``cursor`` of a list page or
  the ``uri`` of a read. A ``"private"`` entry is also keyed by the authorization context (over
  HTTP a digest of the ``Authorization`` header the request went with, so a refreshed token is a
  new context; over stdio a digest of the server's environment, where its credentials come
  from); a ``"public"`` one is not, so every session on the same server may reuse it;
- never: a result without both hints (initialize-era servers send none, and nothing at all is
  cached on an initialize-era session), a ``ttlMs`` of 0, a result reached through
  ``input_required`` rounds, or a request that itself carries ``inputResponses`` or
  ``requestState``.

Invalidation: a ``notifications/{tools,prompts,resources}/list_changed`` read from any listen
stream of the session (a ``subscriptions/listen`` stream, or an initialize-era session's GET
stream or stdio notifications) drops every entry of that list on that server, in every
authorization context; ``notifications/resources/updated`` drops the reads of that URI
(``resources/list_changed`` drops the resource templates too). The session sees an event before
the listener gets it, so a list asked for after a ``ListChanged`` is a fresh one.

The store is pluggable (:class:`CacheStore`): :class:`MemoryStore` is a bounded, least
recently used map in this process. Another store, say Redis, implements the five coroutines
over its client: ``get`` is ``GET``, ``set`` is ``SET key value PX ttl_ms``, ``delete`` is
``DEL``, ``clear(prefix)`` deletes the keys that start with ``prefix`` (``SCAN MATCH`` on the
prefix with glob characters escaped, then ``DEL``). Values are the results' exact bytes, keys
are strings; a shared store should be given a ``namespace`` of its own.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol

import msgspec

from mcpwire import OutgoingRequest, ResultReceived

from ..errors import UsageError

__all__ = ["CACHEABLE_METHODS", "CacheStore", "MemoryStore", "ResponseCache", "http_where", "stdio_where"]

CACHEABLE_METHODS = frozenset({
    "server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read",
})
"""The methods whose results carry ``ttlMs`` and ``cacheScope`` (schema ``$defs.CacheableResult``)."""
_ROUND_KEYS = ("inputResponses", "requestState")  # a request answering input rounds: never cached
_LISTS = {"tools": ("tools/list",), "prompts": ("prompts/list",),
          "resources": ("resources/list", "resources/templates/list")}


class CacheStore(Protocol):
    """Where a :class:`ResponseCache` keeps results: bytes under string keys, each for a time.

    An entry set with ``ttl_ms`` is gone (``get`` returns ``None``) once that many milliseconds
    have passed; the store may also drop entries earlier, to stay within its bounds."""

    async def get(self, key: str) -> bytes | None:
        """The value under ``key``, or ``None`` when there is none or it expired."""
        ...

    async def set(self, key: str, value: bytes, ttl_ms: int) -> None:
        """Keep ``value`` under ``key`` for ``ttl_ms`` milliseconds (> 0), replacing any other."""
        ...

    async def delete(self, key: str) -> None:
        """Drop the entry under ``key``, if any."""
        ...

    async def clear(self, prefix: str = "") -> None:
        """Drop every entry whose key starts with ``prefix`` (all of them by default)."""
        ...


class MemoryStore:
    """A :class:`CacheStore` in this process: at most ``max_entries`` entries, the least recently
    used dropped first (counted in :attr:`evicted`); expiry is read from ``clock``, seconds
    (default ``time.monotonic``)."""

    def __init__(self, max_entries: int = 1024, *, clock: Callable[[], float] = time.monotonic) -> None:
        if max_entries < 1:
            raise UsageError("max_entries must be at least 1")
        self.max_entries = max_entries
        self.clock = clock
        self.evicted = 0
        """Entries dropped to stay within ``max_entries`` (expired ones are not counted)."""
        self._entries: OrderedDict[str, tuple[float, bytes]] = OrderedDict()  # key -> (expires at, value)

    def __len__(self) -> int:
        return len(self._entries)

    async def get(self, key: str) -> bytes | None:
        found = self._entries.get(key)
        if found is None:
            return None
        if self.clock() >= found[0]:
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return found[1]

    async def set(self, key: str, value: bytes, ttl_ms: int) -> None:
        self._entries[key] = (self.clock() + ttl_ms / 1000, value)
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
            self.evicted += 1

    async def delete(self, key: str) -> None:
        self._entries.pop(key, None)

    async def clear(self, prefix: str = "") -> None:
        for key in [k for k in self._entries if k.startswith(prefix)]:
            del self._entries[key]


_encode = msgspec.json.Encoder().encode


def _key(*parts: str | None) -> str:
    # Each part is a JSON string (or null): self-delimiting, so the key of one (server, method,
    # parameter, scope) is never the key, nor a prefix, of another's.
    return " ".join(_encode(part).decode() for part in parts) + " "


class ResponseCache:
    """The response cache a :class:`~mcpwire_adapters.client.session.Session` consults (``cache=``),
    over a :class:`CacheStore` (default: a :class:`MemoryStore` of 1,024 entries). Keys start
    with ``namespace``. One cache may serve several sessions: public entries are shared by the
    sessions on the same server. :attr:`hits` and :attr:`stored` count what it did. An error the
    store raises is the request's (nothing is retried around it): a store over the network
    that should fail open catches its own errors and answers ``None``."""

    def __init__(self, store: CacheStore | None = None, *, namespace: str = "mcpwire") -> None:
        self.store: CacheStore = store if store is not None else MemoryStore()
        self.namespace = namespace
        self.hits = 0
        self.stored = 0

    @staticmethod
    def cacheable(request: OutgoingRequest) -> bool:
        """Whether ``request`` may be answered from, and its result kept in, the cache."""
        return request.method in CACHEABLE_METHODS and not any(k in request.params for k in _ROUND_KEYS)

    def _prefix(self, server: str, method: str) -> str:
        return _key(self.namespace, server, method)

    def _keys(self, server: str, request: OutgoingRequest, context: str) -> tuple[str, str]:
        param = request.params.get("uri" if request.method == "resources/read" else "cursor")
        base = self._prefix(server, request.method) + _key(param if isinstance(param, str) else None)
        return base + _key("public"), base + _key("private", context)

    async def get(self, server: str, context: str, request: OutgoingRequest) -> bytes | None:
        """The kept result for ``request`` to ``server`` in authorization context ``context``:
        a public entry, else a private one of that context; ``None`` when neither is fresh."""
        if not self.cacheable(request):
            return None
        for key in self._keys(server, request, context):
            found = await self.store.get(key)
            if found is not None:
                self.hits += 1
                return found
        return None

    async def put(self, server: str, context: str, request: OutgoingRequest, result: ResultReceived) -> bool:
        """Keep ``result`` (the answer to ``request``, no input rounds in between) if its hints
        allow: a positive ``ttlMs`` and a ``cacheScope``. Returns whether it was kept."""
        ttl, scope = result.ttl_ms, result.cache_scope
        if not self.cacheable(request) or result.method != request.method or result.result_type != "complete" \
                or ttl is None or scope is None or ttl == 0 or not result.raw:
            return False
        public, private = self._keys(server, request, context)
        keep, other = (public, private) if scope == "public" else (private, public)
        await self.store.set(keep, result.raw, ttl)
        await self.store.delete(other)  # the newer answer's scope wins
        self.stored += 1
        return True

    async def clear(self) -> None:
        """Drop every entry under this cache's ``namespace`` (another namespace's stay)."""
        await self.store.clear(_key(self.namespace))

    async def list_changed(self, server: str, kind: str) -> None:
        """Drop every page of the ``kind`` list (``"tools"``, ``"prompts"``, ``"resources"``:
        with the resource templates) kept for ``server``, in every authorization context."""
        for method in _LISTS.get(kind, ()):
            await self.store.clear(self._prefix(server, method))

    async def resource_updated(self, server: str, uri: str) -> None:
        """Drop the kept reads of ``uri`` on ``server``, in every authorization context."""
        await self.store.clear(self._prefix(server, "resources/read") + _key(uri))


def _digest(parts: Iterable[bytes]) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(b"%d:%s" % (len(part), part))
    return h.hexdigest()


def http_where(url: str, headers: Sequence[tuple[bytes, bytes]], access_token: str | None) -> tuple[str, str]:
    """An HTTP session's server and authorization context for the cache: the URL, and a digest
    of the ``Authorization`` headers among ``headers`` (the host's own) and the OAuth access
    token, if any. Without either, every session on ``url`` shares the anonymous context."""
    auth = [v for k, v in headers if k.lower() == b"authorization"]
    return url, _digest([*auth, (access_token or "").encode()])


def stdio_where(command: Sequence[str], cwd: str | os.PathLike[str] | None, env: Mapping[str, str]) -> tuple[str, str]:
    """A stdio session's server and authorization context for the cache: the command line in its
    working directory, and a digest of the environment the server runs with (where a stdio
    server's credentials come from)."""
    server = _encode(["stdio", list(command), os.fspath(cwd) if cwd is not None else None]).decode()
    return server, _digest(f"{k}={v}".encode() for k, v in sorted(env.items()))
