"""The WSGI kinds of the end-to-end benchmark, and the WSGI call made in process.

Two applications under the same gunicorn (its ``gthread`` worker, one worker process,
``THREADS`` threads, the settings a site would use for an MCP endpoint with streams):
``WsgiApp`` serving :func:`tests.bench._workload.our_app`, and :func:`plain_app`, a WSGI
function that reads the body and answers the very bytes the engine answers the small call
with. The plain app's rate is the server's ceiling on this machine; ``WsgiApp`` over it is the
adapter's share of that ceiling, measured in one run.

:func:`environ_for` and :func:`call` drive a WSGI application in process the way a server's
thread does (``bench_instructions.py``: no socket, no server).
"""

from __future__ import annotations

import io
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any

from ._workload import CALL, CALL_HEADERS, NOW, echo_result, http, small_server

THREADS = 8
"""gunicorn's ``--threads`` for both WSGI kinds."""

Application = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def engine_answer() -> tuple[str, list[tuple[str, str]], bytes]:
    """The status line, headers and body our engine answers the small call with."""
    from mcpwire import HttpExchange, ResponseBody, ResponseHead

    exchange = small_server().receive_http(http(CALL, CALL_HEADERS), now=NOW)
    assert isinstance(exchange, HttpExchange)
    outputs = exchange.complete(echo_result("hello"))
    head = next(item for item in outputs if isinstance(item, ResponseHead))
    body = b"".join(item.data for item in outputs if isinstance(item, ResponseBody))
    headers = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in head.headers]
    return f"{head.status} OK", headers, body


def plain_app() -> Application:
    """The ceiling's application: reads the body (``CONTENT_LENGTH`` bytes), answers fixed bytes."""
    status, headers, body = engine_answer()
    whole = [body]

    def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        length = environ.get("CONTENT_LENGTH")
        if length:
            environ["wsgi.input"].read(int(length))
        start_response(status, headers)
        return whole

    return application


def ours_app() -> Application:
    from mcpwire_adapters import WsgiApp

    from ._workload import our_app

    wsgi: Application = WsgiApp(our_app())
    return wsgi


def serve_gunicorn(build: Callable[[], Application]) -> None:
    """Serve ``build()`` (made in the worker) under gunicorn gthread on a free loopback port:
    print the port, stop gracefully when stdin closes."""
    from gunicorn.app.base import BaseApplication  # type: ignore[import-untyped]

    sock = socket.create_server(("127.0.0.1", 0))
    sock.set_inheritable(True)  # the worker serves this very socket

    class Gunicorn(BaseApplication):  # type: ignore[misc]
        def load_config(self) -> None:
            options = {"bind": [f"fd://{sock.fileno()}"], "worker_class": "gthread", "workers": 1, "threads": THREADS,
                       "graceful_timeout": 3, "loglevel": "warning"}
            for key, value in options.items():
                self.cfg.set(key, value)

        def load(self) -> Application:
            return build()

    def stop_on_stdin_eof() -> None:
        sys.stdin.read()
        os.kill(os.getpid(), signal.SIGTERM)  # the arbiter's graceful stop

    print(sock.getsockname()[1], flush=True)
    threading.Thread(target=stop_on_stdin_eof, daemon=True).start()
    Gunicorn().run()


def environ_for(port: int = 8000) -> dict[str, Any]:
    """The environ gunicorn makes for the small call (without its ``wsgi.input``)."""
    environ: dict[str, Any] = {
        "REQUEST_METHOD": "POST", "SCRIPT_NAME": "", "PATH_INFO": "/mcp", "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1", "SERVER_PORT": str(port), "SERVER_PROTOCOL": "HTTP/1.1",
        "wsgi.version": (1, 0), "wsgi.url_scheme": "http", "wsgi.errors": sys.stderr,
        "wsgi.multithread": True, "wsgi.multiprocess": False, "wsgi.run_once": False,
        "wsgi.input_terminated": True,
    }
    for name, value in CALL_HEADERS:
        key = name.decode().upper().replace("-", "_")
        text = f"127.0.0.1:{port}" if name == b"host" else value.decode("latin-1")
        environ[key if key in ("CONTENT_TYPE", "CONTENT_LENGTH") else f"HTTP_{key}"] = text
    return environ


def call(application: Application, template: dict[str, Any]) -> bytes:
    """One request through ``application`` as a server's thread makes it; the body it answered."""
    environ = dict(template)
    environ["wsgi.input"] = io.BytesIO(CALL)
    started: list[str] = []

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[[bytes], Any]:
        started.append(status)
        return _no_write

    body = application(environ, start_response)
    try:
        data = b"".join(body)
    finally:
        close = getattr(body, "close", None)
        if close is not None:
            close()
    if started != ["200 OK"]:
        raise AssertionError(f"the WSGI app answered {started}: {data[:300]!r}")
    return data


def _no_write(data: bytes) -> None:
    raise AssertionError("write() is not used")
