"""ASGI servers for tests, each in a thread on 127.0.0.1 with a port of its own:
:func:`serve_uvicorn` (either HTTP parser) and :func:`serve_hypercorn` (asyncio or trio). Each is
a context manager yielding the port; leaving it stops the server within :data:`TIMEOUT`."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio

__all__ = ["serve_hypercorn", "serve_uvicorn"]

TIMEOUT = 10.0


def _listening() -> tuple[socket.socket, int]:
    sock = socket.create_server(("127.0.0.1", 0))
    return sock, sock.getsockname()[1]


@contextmanager
def serve_uvicorn(asgi: Any, http: str = "auto") -> Iterator[int]:
    """``asgi`` under uvicorn on 127.0.0.1 (``http``: its HTTP parser, ``h11`` or ``httptools``)."""
    import uvicorn

    sock, port = _listening()
    config = uvicorn.Config(
        asgi, http=http, lifespan="on", log_config=None, access_log=False, timeout_graceful_shutdown=1
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + TIMEOUT
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        yield port
    finally:
        server.should_exit = True
        thread.join(TIMEOUT)
        sock.close()
        assert not thread.is_alive(), "uvicorn did not stop"


@contextmanager
def serve_hypercorn(asgi: Any, backend: str) -> Iterator[int]:
    from hypercorn.config import Config

    if backend == "trio":
        from hypercorn.trio import serve
    else:
        from hypercorn.asyncio import serve  # type: ignore[assignment]

    sock, port = _listening()
    config = Config()
    config.bind = [f"fd://{sock.detach()}"]
    config.graceful_timeout = 1.0
    config.errorlog = None
    stop = threading.Event()
    errors: list[BaseException] = []

    async def shutdown_trigger() -> None:
        while not stop.is_set():
            await anyio.sleep(0.02)

    def run() -> None:
        try:
            anyio.run(lambda: serve(asgi, config, shutdown_trigger=shutdown_trigger), backend=backend)
        except BaseException as exc:  # noqa: BLE001 - reported by the fixture
            errors.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield port  # the socket already listens: connections wait in its backlog until served
    finally:
        stop.set()
        thread.join(TIMEOUT)
        assert not thread.is_alive(), "hypercorn did not stop"
        assert not errors, errors
