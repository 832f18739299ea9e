"""Run a test site under a real WSGI server, on 127.0.0.1 and a port the OS picks:

    python wsgi_serve.py gunicorn-sync|gunicorn-gthread|waitress MODULE [--workers N] [--threads N]

``MODULE``, imported from the working directory (the WSGI tests' ``site_app``, ``flask_site``,
``django_wsgi``; the middleware tests' ``middleware_wsgi``), names the WSGI application
(``MODULE.application``) and its :class:`WsgiApp` (``MODULE.wsgi``). Prints one line
``{"url": "http://127.0.0.1:PORT"}`` once the socket listens, and serves until its stdin
ends (the test that started it is done, or gone), then stops: gunicorn as on SIGTERM (its
workers end their listen streams first, docs/wsgi.md), waitress by closing its sockets.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import signal
import socket
import sys
import threading
from typing import Any

sys.path.insert(0, os.getcwd())  # the test folder of MODULE (_wsgi_servers.served runs this there)


def _until_stdin_ends(then: Any) -> None:
    def wait() -> None:
        while os.read(sys.stdin.fileno(), 65536):
            pass
        then()

    threading.Thread(target=wait, daemon=True).start()


def gunicorn(module: str, sock: socket.socket, worker_class: str, workers: int, threads: int) -> None:
    from gunicorn.app.base import BaseApplication  # type: ignore[import-untyped]

    def post_worker_init(worker: Any) -> None:
        # SIGTERM: end the listen streams first, so that the graceful stop does not wait for them.
        wsgi = importlib.import_module(module).wsgi

        def stop(sig: int, frame: Any) -> None:
            wsgi.close_streams()
            worker.handle_exit(sig, frame)

        signal.signal(signal.SIGTERM, stop)

    def worker_exit(server: Any, worker: Any) -> None:
        importlib.import_module(module).wsgi.close(grace=1.0)

    class Gunicorn(BaseApplication):  # type: ignore[misc]
        def load_config(self) -> None:
            options = {
                "bind": [f"fd://{sock.fileno()}"], "worker_class": worker_class, "workers": workers,
                "threads": threads if worker_class == "gthread" else 1,  # sync with threads is gthread
                "graceful_timeout": 3, "timeout": 30, "loglevel": "warning",
                "post_worker_init": post_worker_init, "worker_exit": worker_exit,
            }
            for key, value in options.items():
                self.cfg.set(key, value)

        def load(self) -> Any:
            return importlib.import_module(module).application

    _until_stdin_ends(lambda: os.kill(os.getpid(), signal.SIGTERM))  # the arbiter's graceful stop
    Gunicorn().run()


def waitress(module: str, sock: socket.socket, threads: int) -> None:
    from waitress.server import create_server  # type: ignore[import-untyped]

    site = importlib.import_module(module)
    # channel_request_lookahead: waitress then reads on while a request runs, and sees a client leave.
    server = create_server(site.application, sockets=[sock], threads=threads, channel_request_lookahead=5)

    def stop() -> None:
        # End the streams, let the requests in flight finish (5 s at most), then close the sockets.
        site.wsgi.close_streams()
        server.task_dispatcher.shutdown(cancel_pending=True, timeout=5)
        server.close()

    _until_stdin_ends(stop)
    server.run()
    site.wsgi.close(grace=1.0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("server", choices=("gunicorn-sync", "gunicorn-gthread", "waitress"))
    parser.add_argument("module")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--threads", type=int, default=8)
    args = parser.parse_args()
    sock = socket.create_server(("127.0.0.1", 0))
    sock.set_inheritable(True)
    print(json.dumps({"url": f"http://127.0.0.1:{sock.getsockname()[1]}"}), flush=True)
    if args.server == "waitress":
        waitress(args.module, sock, args.threads)
    else:
        gunicorn(args.module, sock, args.server.removeprefix("gunicorn-"), args.workers, args.threads)


if __name__ == "__main__":
    main()
