#!/usr/bin/env python3
"""The conformance fixture (``fixture.py``'s App, unchanged) served through the WSGI adapter
(``mcpwire_adapters.serve.wsgi``) under gunicorn with its gthread worker:

    python conformance/fixture_wsgi.py [--host 127.0.0.1] [--port N] [--threads 16]

The same handshake as ``fixture.py``: it binds ``--host`` on ``--port`` (0: the OS picks), prints
one line ``{"conformanceReady": true, "url": "http://127.0.0.1:<port>/mcp"}`` and serves until
its stdin ends, then stops as gunicorn stops on SIGTERM (the worker ends its listen streams
first: ``WsgiApp.close_streams``, as docs/wsgi.md shows) and exits 0. One worker process, so
that every request meets the same App (its tasks and sessions live in memory); ``--threads``
threads, of which ``WsgiConfig.max_streams`` (half) may hold long-lived streams. An idle connection
is kept ``fixture.KEEPALIVE_IDLE`` seconds (gunicorn's own default is 2).
conformance/run.py starts it for ``--server wsgi-gunicorn``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fixture import KEEPALIVE_IDLE, build_app  # noqa: E402 - this folder is not a package
from gunicorn.app.base import BaseApplication  # type: ignore[import-untyped]  # noqa: E402
from mcpwire_adapters import WsgiApp, WsgiConfig  # noqa: E402


def _log(message: str) -> None:
    print(f"fixture: {message}", file=sys.stderr, flush=True)


class _Gunicorn(BaseApplication):  # type: ignore[misc]
    def __init__(self, wsgi: WsgiApp, options: dict[str, Any]) -> None:
        self.served, self.options = wsgi, options  # not self.wsgi: BaseApplication's own method
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> WsgiApp:
        return self.served


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=int(os.environ.get("MCP_PORT", "0")))
    parser.add_argument("--threads", type=int, default=16)
    args = parser.parse_args()
    wsgi = WsgiApp(build_app(), config=WsgiConfig(max_streams=args.threads // 2))
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    sock = socket.create_server((args.host, args.port), family=family)
    sock.set_inheritable(True)  # the worker serves this very socket

    def post_worker_init(worker: Any) -> None:
        def stop(sig: int, frame: Any) -> None:  # SIGTERM: the streams end first, with their result
            wsgi.close_streams()
            worker.handle_exit(sig, frame)

        signal.signal(signal.SIGTERM, stop)

    def worker_exit(server: Any, worker: Any) -> None:
        wsgi.close(grace=1.0)

    options = {
        "bind": [f"fd://{sock.fileno()}"], "worker_class": "gthread", "workers": 1, "threads": args.threads,
        "graceful_timeout": 2, "keepalive": round(KEEPALIVE_IDLE), "loglevel": "warning", "post_worker_init": post_worker_init, "worker_exit": worker_exit,
    }
    host, port = sock.getsockname()[:2]
    authority = f"[{host}]" if ":" in host else host
    url = f"http://{authority}:{port}{wsgi.app.server.http.path}"
    sys.stdout.write(json.dumps({"conformanceReady": True, "url": url}) + "\n")
    sys.stdout.flush()
    _log(f"serving {url} through WsgiApp under gunicorn (gthread); close stdin to stop")

    def until_stdin_ends() -> None:
        while os.read(sys.stdin.fileno(), 65536):
            pass
        _log("stdin closed; shutting down")
        os.kill(os.getpid(), signal.SIGTERM)  # the arbiter's graceful stop

    threading.Thread(target=until_stdin_ends, daemon=True).start()
    _Gunicorn(wsgi, options).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
