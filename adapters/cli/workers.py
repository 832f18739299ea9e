"""``mcpwire serve --workers N``: N server processes on one port (``SO_REUSEPORT``), each a
whole ``mcpwire serve`` of its own (its App, its trio loop, its connections).

The parent reserves the port (binding without listening, so ``--port 0`` picks one port for
all), makes the keyring every worker signs with (``--keys FILE`` or ``MCPWIRE_KEYS``; without
either, a random one made once here, so that a ``requestState`` or cursor signed by one worker
is accepted by the others), then forks the workers before any of them loads the App. Each
worker runs in a process group of its own: the terminal's Ctrl-C reaches the parent, which
passes SIGINT and SIGTERM on to every worker (the first one a graceful stop, a second one
stops at once, as with one process). The parent exits when every worker has, with the first
failing worker's exit code.

What is kept in memory stays per process: initialize-era sessions (a client's requests land
on whichever worker its connection reaches), listen subscriptions, and tasks under
``--tasks-db :memory:`` (the default SQLite file is shared). The stateless 2026-07-28
revision needs nothing more.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
import traceback
from collections.abc import Callable
from types import FrameType

import mcpwire

from .terminal import EXIT_UNREACHABLE, EXIT_USAGE, CliError, Terminal, os_reason
from .keys import serving_keyring
from ..serve.trio_h11.listeners import reuse_port_available
from ..state.keys import new_keyring

__all__ = ["check_workers", "serve_workers"]


def check_workers(args: argparse.Namespace) -> int | None:
    """The number of workers asked for, or None without ``--workers``; :class:`CliError` when
    they cannot be had here (stdio, or no ``SO_REUSEPORT``)."""
    workers: int | None = args.workers
    if workers is None:
        return None
    if args.transport == "stdio":
        raise CliError("--workers is for HTTP: a stdio server has one client, on its one pipe", EXIT_USAGE)
    if workers < 1:
        raise CliError("--workers: expected a number of processes, at least 1", EXIT_USAGE)
    if not reuse_port_available():
        raise CliError(f"--workers needs SO_REUSEPORT, which this platform ({sys.platform}) lacks: "
                       "run one process per port behind a load balancer instead", EXIT_USAGE)
    return workers


def serve_workers(
    args: argparse.Namespace, term: Terminal, workers: int,
    serve_one: Callable[[argparse.Namespace, Terminal, mcpwire.Keyring, str], int],
) -> int:
    """Run ``serve_one(args, term, keyring, name)`` in ``workers`` forked processes on one port."""
    reserved = _reserve(args.host, args.port)
    args.port = reserved.getsockname()[1]
    keyring = serving_keyring(args.keys) or new_keyring()
    term.say(f"mcpwire: {workers} worker processes on port {args.port} (parent pid {os.getpid()})")
    children: list[int] = []
    try:
        for number in range(1, workers + 1):
            pid = os.fork()
            if pid == 0:  # the worker: never returns
                os.setpgid(0, 0)  # the terminal's signals go to the parent, which passes them on
                reserved.close()
                code = 1
                try:
                    code = serve_one(args, term, keyring, f"worker {number}/{workers} (pid {os.getpid()})")
                except CliError as exc:
                    term.say(f"error: {exc}")
                    code = exc.exit_code
                except BaseException:  # noqa: BLE001 - reported, then the worker exits
                    traceback.print_exc(file=term.stderr)
                finally:
                    term.stderr.flush()
                    os._exit(code)
            children.append(pid)
        return _wait(children)
    finally:
        reserved.close()


def _reserve(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` with ``SO_REUSEPORT`` and never listening: it holds the
    port (the one ``--port 0`` picked) for the workers, and takes no connection itself."""
    try:
        family, kind, proto, _name, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(address)
    except OSError as exc:
        raise CliError(f"cannot listen on {host}:{port}: {os_reason(exc)}", EXIT_UNREACHABLE) from None
    return sock


def _wait(children: list[int]) -> int:
    """Pass SIGINT and SIGTERM on to the workers until every one has exited; the first
    non-zero exit code, else 0."""

    def forward(signum: int, _frame: FrameType | None) -> None:
        for pid in children:
            try:
                os.kill(pid, signum)
            except ProcessLookupError:
                pass

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGINT, signal.SIGTERM)}
    code = 0
    try:
        running = set(children)
        while running:
            pid, status = os.waitpid(-1, 0)
            if pid in running:
                running.discard(pid)
                exit_code = os.waitstatus_to_exitcode(status)
                if exit_code and not code:
                    code = exit_code if exit_code > 0 else 128 - exit_code
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return code
