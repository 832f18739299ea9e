"""Instructions per request, counted by valgrind, and the ASGI apps timed under uvicorn's own
protocol code without a socket: ``python tests/bench/run.py --instructions``.

On a shared 2-core machine the end-to-end ratio of ``AsgiApp`` to the raw ASGI app swings from
round to round (0.73-1.06 in one run), because the raw app's rate does. Two measurements here do
not depend on the load generator or the kernel:

- **under uvicorn, in-process**: uvicorn's ``HttpToolsProtocol`` on a uvloop loop, fed the
  benchmark's request bytes over a transport that keeps what is written (no socket, no load
  generator), serving either app. Everything uvicorn does per request runs (httptools parsing,
  the scope, the task, the response framing, the keep-alive timer); what is left out is the
  socket and the process on the other end. Timed in interleaved rounds like the other in-process rows.
- **instructions per request**: each kind runs in a child process under
  ``valgrind --tool=cachegrind --cache-sim=no`` twice, with ``N1`` and ``N2`` requests after
  the same warm-up and with ``PYTHONHASHSEED=0``; ``(I(N2) - I(N1)) / (N2 - N1)`` is the count
  per request, free of start-up and teardown. Two invocations agree within 0.3%. Needs
  valgrind (Debian: ``apt-get install valgrind``); without it only the timed rows are printed.

Instructions are not time: the drivers' Python code runs fewer instructions per nanosecond than
httptools, msgspec and uvloop, so a ratio of instructions is kinder than the ratio of time. What
a count gives is a figure that a change moves and noise does not.

The kinds: ``floor.call`` (msgspec alone) and ``ours.call`` (the engine), as in the in-process
table; ``uvicorn.raw`` (:func:`tests.bench.bench_e2e.raw_asgi`) and ``uvicorn.ours``
(``AsgiApp``), both on :func:`tests.bench._workload.our_app`; ``wsgi.plain`` (a WSGI function
answering the engine's bytes) and ``wsgi.ours`` (``WsgiApp`` on the same App), each called in
process from one thread as a WSGI server's thread calls it (``_wsgi.py``: the environ gunicorn
makes, no socket, no server). ``WsgiApp``'s count includes its loop thread's work (valgrind
counts every thread); its time is a request's two threads handing over to each other, with no
other thread asking for the interpreter at the same time.
"""

from __future__ import annotations

import asyncio
import gc
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from time import perf_counter_ns
from typing import Any

from ._harness import Variant, run_interleaved
from .bench_e2e import _request_bytes

VALGRIND = shutil.which("valgrind")
KINDS = ("floor.call", "ours.call", "uvicorn.raw", "uvicorn.ours", "wsgi.plain", "wsgi.ours")
WARMUP = 300  # requests before counting: first-call paths, caches, the lru caches filled


class _Transport(asyncio.Transport):
    """What uvicorn writes to, kept instead of sent: the last write and how many there were."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0
        self.last = b""

    def write(self, data: Any) -> None:
        self.writes += 1
        self.last = bytes(data)

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 40000)}.get(name, default)

    def is_closing(self) -> bool:
        return False

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def close(self) -> None:
        pass


class UvicornFeed:
    """One keep-alive connection of uvicorn's httptools protocol on ``loop``, serving ``app``:
    :meth:`serve` hands it ``n`` requests, one after the other, each answered before the next."""

    def __init__(self, app: Any, loop: asyncio.AbstractEventLoop) -> None:
        from uvicorn.config import Config
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
        from uvicorn.server import ServerState

        config = Config(app, http="httptools", loop="none", lifespan="off", log_config=None, access_log=False)
        config.load()
        self.loop = loop
        self.transport = _Transport()
        self.protocol = HttpToolsProtocol(config, ServerState(), {}, _loop=loop)
        self.protocol.connection_made(self.transport)
        self.request = _request_bytes(8000)  # the port the transport says it listens on

    async def serve(self, n: int) -> int:
        """``n`` requests; the ns they took. Each one's app runs within the ``sleep(0)`` after it."""
        feed, request = self.protocol.data_received, self.request
        t0 = perf_counter_ns()
        for _ in range(n):
            feed(request)
            await asyncio.sleep(0)
        return perf_counter_ns() - t0

    def answer(self) -> bytes:
        """Serve one request; the last bytes uvicorn wrote for it (the body of a JSON answer)."""
        writes = self.transport.writes
        self.loop.run_until_complete(self.serve(1))
        if self.transport.writes == writes:
            raise AssertionError("uvicorn wrote no answer")
        return self.transport.last

    def close(self) -> None:
        self.protocol.connection_lost(None)


def _app(kind: str) -> Any:
    from mcpwire_adapters import AsgiApp

    from .bench_e2e import raw_asgi
    from ._workload import our_app

    return raw_asgi(our_app()) if kind == "uvicorn.raw" else AsgiApp(our_app())


def _new_loop() -> asyncio.AbstractEventLoop:
    try:
        import uvloop
    except ImportError:  # pragma: no cover - the bench extra installs it (not on Windows)
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def _wsgi_calls(kind: str) -> tuple[Callable[[int], None], Callable[[], None]]:
    """``kind`` (``wsgi.plain`` or ``wsgi.ours``) as ``n`` calls from this thread, after checking
    its answer; and what closes it."""
    from . import _wsgi

    app = _wsgi.plain_app() if kind == "wsgi.plain" else _wsgi.ours_app()
    template = _wsgi.environ_for()
    if b'"text":"hello"' not in _wsgi.call(app, template):
        raise AssertionError(f"{kind} did not echo the call")
    call = _wsgi.call

    def calls(n: int) -> None:
        for _ in range(n):
            call(app, template)

    close = getattr(app, "close", None)
    return calls, (close if close is not None else lambda: None)


def wsgi_variants() -> tuple[list[Variant], Callable[[], None]]:
    """The two WSGI apps called in process, as timed variants; and what closes them."""
    made = {kind: _wsgi_calls(kind) for kind in ("wsgi.plain", "wsgi.ours")}

    def timed(calls: Callable[[int], None]) -> Callable[[int], int]:
        def batch(n: int) -> int:
            t0 = perf_counter_ns()
            calls(n)
            return perf_counter_ns() - t0

        return batch

    def close() -> None:
        for _, closing in made.values():
            closing()

    return [Variant(kind, timed(calls)) for kind, (calls, _) in made.items()], close


def uvicorn_variants() -> tuple[list[Variant], Callable[[], None]]:
    """The two apps under uvicorn's protocol, as timed variants (one loop for both), after
    checking that both answer the call with the same bytes; and what closes them."""
    loop = _new_loop()
    feeds = {kind: UvicornFeed(_app(kind), loop) for kind in ("uvicorn.raw", "uvicorn.ours")}
    answers = {kind: feed.answer() for kind, feed in feeds.items()}
    if answers["uvicorn.raw"] != answers["uvicorn.ours"] or b'"result"' not in answers["uvicorn.ours"]:
        raise AssertionError(f"the apps answer differently under uvicorn: {answers!r}")

    def timed(feed: UvicornFeed) -> Callable[[int], int]:
        return lambda n: int(loop.run_until_complete(feed.serve(n)))

    def close() -> None:
        for feed in feeds.values():
            feed.close()
        loop.close()

    return [Variant(kind, timed(feed)) for kind, feed in feeds.items()], close


def _operation(kind: str) -> Callable[[int], None]:
    """``kind``'s operation run ``n`` times (in the counted child process)."""
    if kind in ("floor.call", "ours.call"):
        from . import bench_engine

        variant = bench_engine.floor_call_variant() if kind == "floor.call" else bench_engine.engine_call_variant()

        def calls(n: int) -> None:
            variant.batch(n)

        return calls
    if kind.startswith("wsgi."):
        return _wsgi_calls(kind)[0]
    feed = UvicornFeed(_app(kind), _new_loop())
    feed.answer()

    def requests(n: int) -> None:
        feed.loop.run_until_complete(feed.serve(n))

    return requests


def child(kind: str, n: int) -> None:
    """In the process valgrind watches: the warm-up, then ``n`` operations, then exit at once
    (no teardown that could depend on ``n``)."""
    run = _operation(kind)
    run(WARMUP)
    gc.collect()
    gc.freeze()
    run(n)
    sys.stdout.flush()
    os._exit(0)


_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _child(kind: str, n: int, wrapper: list[str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [*wrapper, sys.executable, "-m", "tests.bench.bench_instructions", "child", kind, str(n)],
        cwd=_REPO, env={**os.environ, "PYTHONHASHSEED": "0"}, capture_output=True, text=True, timeout=900,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the run of {kind} failed: {done.stderr[-1500:]}")
    return done


def count(kind: str, n1: int, n2: int) -> float:
    """Instructions per operation of ``kind``: the difference of two counted runs. A first run
    outside valgrind writes the bytecode caches (where Python may), so that neither counted run
    compiles a module the other loads compiled."""
    assert VALGRIND is not None
    _child(kind, 1, [])
    counted = []
    for n in (n1, n2):
        done = _child(kind, n, [VALGRIND, "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"])
        found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
        if found is None:
            raise RuntimeError(f"valgrind printed no count for {kind}: {done.stderr[-1500:]}")
        counted.append(int(found.group(1).replace(",", "")))
    return (counted[1] - counted[0]) / (n2 - n1)


def measure(*, rounds: int, n1: int, n2: int, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The timed rows under uvicorn (medians of ``rounds``), and, with valgrind, the counts."""
    variants, close = uvicorn_variants()
    wsgi, close_wsgi = wsgi_variants()
    try:
        run_interleaved(variants + wsgi, rounds=rounds, target_ms=10.0, progress=progress)
    finally:
        close()
        close_wsgi()
    variants += wsgi
    result: dict[str, Any] = {"timed_ns": {v.key: v.summary() for v in variants}, "instructions": None}
    if VALGRIND is not None:
        counts = {}
        for kind in KINDS:
            if progress is not None:
                progress(f"counting {kind} ({n1} and {n2} operations under valgrind)")
            counts[kind] = count(kind, n1, n2)
        result["instructions"] = counts
    return result


def render(result: dict[str, Any]) -> str:
    timed = {k: v["median_ns"] / 1000 for k, v in result["timed_ns"].items()}
    raw, ours = timed["uvicorn.raw"], timed["uvicorn.ours"]
    lines = [
        "## Under uvicorn's protocol, in-process (httptools + uvloop, no socket)\n",
        "| app | µs per request | raw / app |", "|---|---:|---:|",
        f"| the raw ASGI app calling the engine | {raw:.2f} | 1.00 |",
        f"| AsgiApp | {ours:.2f} | {raw / ours:.3f} |",
        "",
        "## WSGI, in process (called from one thread as a server's thread calls it; no socket)\n",
        "| app | µs per request | plain / app |", "|---|---:|---:|",
        f"| a plain WSGI function answering the engine's bytes | {timed['wsgi.plain']:.2f} | 1.00 |",
        f"| WsgiApp (the App on its loop thread) | {timed['wsgi.ours']:.2f} | "
        f"{timed['wsgi.plain'] / timed['wsgi.ours']:.3f} |",
    ]
    counts = result["instructions"]
    lines.append("")
    if counts is None:
        lines.append("(instruction counts skipped: valgrind is not installed; Debian: apt-get install valgrind)")
        return "\n".join(lines)
    lines += [
        "## Instructions per operation (valgrind, deterministic)\n",
        "| kind | instructions | ratio |", "|---|---:|---|",
        f"| floor.call (msgspec alone) | {counts['floor.call']:,.0f} | |",
        f"| ours.call (the engine) | {counts['ours.call']:,.0f} | {counts['ours.call'] / counts['floor.call']:.2f} x the floor |",
        f"| uvicorn.raw (raw ASGI app, uvicorn's work included) | {counts['uvicorn.raw']:,.0f} | |",
        f"| uvicorn.ours (AsgiApp, uvicorn's work included) | {counts['uvicorn.ours']:,.0f} | raw / AsgiApp "
        f"{counts['uvicorn.raw'] / counts['uvicorn.ours']:.3f}; the driver adds "
        f"{counts['uvicorn.ours'] - counts['uvicorn.raw']:,.0f} |",
        f"| wsgi.plain (a WSGI function answering the engine's bytes) | {counts['wsgi.plain']:,.0f} | |",
        f"| wsgi.ours (WsgiApp and its loop thread, the engine and App included) | {counts['wsgi.ours']:,.0f} | "
        f"{counts['wsgi.ours'] - counts['wsgi.plain']:,.0f} more than wsgi.plain, of which "
        f"{counts['wsgi.ours'] - counts['wsgi.plain'] - counts['ours.call']:,.0f} beyond the engine's own "
        f"(ours.call): the adapter, its loop and App.dispatch |",
    ]
    return "\n".join(lines)


if __name__ == "__main__" and sys.argv[1:2] == ["child"]:
    child(sys.argv[2], int(sys.argv[3]))
