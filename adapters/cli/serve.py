"""``mcpwire serve``: load an App from ``MODULE:APP`` and serve it over HTTP (optionally behind
OAuth, optionally checking the Host header: ``--allowed-host``) or stdio until Ctrl-C (HTTP: a
graceful stop first) or the end of stdin. An App with tasks keeps them in an SQLite file
(``--tasks-db``, default ``./mcpwire-tasks.db``)."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import inspect as pyinspect
import ipaddress
import logging
import os
import re
import signal
import sqlite3
import sys
import traceback
from pathlib import Path
from typing import Any

import msgspec
import trio

from .terminal import EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE, CliError, Terminal, os_reason, trio_run
from mcpwire.tasks import MemoryTaskStore

from mcpwire import Keyring

from .keys import serving_keyring
from .redis import use_shared_state
from .workers import check_workers, serve_workers
from ..app.app import App
from ..state.sqlite_tasks import SqliteTaskStore

__all__ = ["ALLOWED_HOSTS_ENV", "DEFAULT_TASKS_DB", "allowed_hosts", "load_app", "serve", "use_allowed_hosts", "use_task_store"]

DEFAULT_TASKS_DB = "mcpwire-tasks.db"
"""Where ``serve`` keeps an App's tasks without ``--tasks-db`` (in the working directory)."""


# -- serve -----------------------------------------------------------------------------------------------
def load_app(spec: str) -> App:
    """The App named by ``MODULE[:ATTR]`` or ``path/to/file.py[:ATTR]`` (ATTR defaults to
    ``app``): an App instance, or a zero-argument callable returning one."""
    module_name, _, attr = spec.partition(":")
    attr = attr or "app"
    if not module_name:
        raise CliError(f"expected MODULE:APP, got {spec!r}", EXIT_USAGE)
    try:
        if module_name.endswith(".py") or "/" in module_name or os.sep in module_name:
            path = Path(module_name).resolve()
            if not path.is_file():
                raise CliError(f"no such file: {module_name}", EXIT_USAGE)
            sys.path.insert(0, str(path.parent))
            found = importlib.util.spec_from_file_location(path.stem, path)
            assert found is not None and found.loader is not None
            module = importlib.util.module_from_spec(found)
            sys.modules[path.stem] = module
            found.loader.exec_module(module)
        else:
            if os.getcwd() not in sys.path and "" not in sys.path:  # as `python -m` does
                sys.path.insert(0, os.getcwd())
            module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module_name + ".").startswith(exc.name + "."):
            raise CliError(f"cannot import {module_name!r}: {exc}", EXIT_USAGE) from None
        raise CliError(f"importing {module_name!r} failed:\n{traceback.format_exc()}", EXIT_USAGE) from None
    except CliError:
        raise
    except Exception:
        raise CliError(f"importing {module_name!r} failed:\n{traceback.format_exc()}", EXIT_USAGE) from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise CliError(f"{module_name!r} has no attribute {attr!r}", EXIT_USAGE)
        obj = getattr(obj, part)
    if isinstance(obj, App):
        return obj
    if callable(obj):
        try:
            pyinspect.signature(obj).bind()
        except TypeError:
            raise CliError(f"{spec} is neither an App nor callable without arguments", EXIT_USAGE) from None
        except ValueError:
            pass  # no signature to check: just call it
        made = obj()
        if isinstance(made, App):
            return made
        raise CliError(f"{spec}() returned {type(made).__name__}, not a mcpwire_adapters.App", EXIT_USAGE)
    raise CliError(f"{spec} is a {type(obj).__name__}, not a mcpwire_adapters.App", EXIT_USAGE)


async def serve_http(app: App, host: str, port: int, grace: float, term: Terminal, guard: Any = None,
                     worker: str | None = None) -> None:
    from ..serve.trio_h11.server import HttpServerConfig, serve_http_until

    config = HttpServerConfig(auth=guard, reuse_port=worker is not None)  # --workers: SO_REUSEPORT

    stop = trio.Event()
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:

            async def run_server(task_status: trio.TaskStatus[Any] = trio.TASK_STATUS_IGNORED) -> None:
                await serve_http_until(app, host, port, stop=stop, grace_period=grace, task_status=task_status,
                                       config=config)
                nursery.cancel_scope.cancel()  # stopped: end the signal watcher too

            bound = await nursery.start(run_server)
            authority = f"[{host}]" if ":" in host else host
            info = app.server.info
            term.say(f"mcpwire: {worker + ' ' if worker else ''}serving {info.name} {info.version} at "
                     f"http://{authority}:{bound[1]}{app.server.http.path} (Ctrl-C to stop)")
            async for _ in signals:
                if stop.is_set():
                    term.say("mcpwire: stopping now")
                    nursery.cancel_scope.cancel()
                    return
                term.say(f"mcpwire: stopping (finishing requests for up to {grace:g} s; Ctrl-C again to force)")
                stop.set()


async def serve_stdio(app: App, grace: float, term: Terminal) -> None:
    from ..serve.stdio import serve_stdio as serve

    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:

            async def run_server() -> None:
                await serve(app, grace_period=grace, quiet=True, handle_signals=False)
                nursery.cancel_scope.cancel()

            nursery.start_soon(run_server)
            term.say(f"mcpwire: serving {app.server.info.name} {app.server.info.version} on stdio (NDJSON); "
                     "close stdin to stop")
            async for _ in signals:
                nursery.cancel_scope.cancel()
                return


def use_task_store(app: App, where: str | None, term: Terminal) -> SqliteTaskStore | None:
    """Give ``app``'s tasks the store ``--tasks-db`` names: an SQLite file, or ``:memory:``.
    Without the option, an App on the in-memory store gets :data:`DEFAULT_TASKS_DB`, and an
    App that brought another store keeps it. Returns the store to close after serving."""
    tasks = app.server.tasks
    if tasks is None:
        if where is not None:
            raise CliError("--tasks-db: the App serves no tasks (make it with App(..., tasks=True))", EXIT_USAGE)
        return None
    if where == ":memory:":
        if type(tasks.store) is not MemoryTaskStore:
            tasks.store = MemoryTaskStore()
        term.say("mcpwire: tasks kept in memory (lost when the server stops)")
        return None
    if where is None:
        if type(tasks.store) is not MemoryTaskStore:
            return None  # the App's own store
        where = DEFAULT_TASKS_DB
    try:
        store = SqliteTaskStore(where)
    except (OSError, sqlite3.Error) as exc:
        reason = os_reason(exc) if isinstance(exc, OSError) else str(exc)
        raise CliError(f"cannot open the task store {where}: {reason} (choose another with --tasks-db PATH, "
                       "or --tasks-db :memory:)", EXIT_USAGE) from None
    tasks.store = store
    term.say(f"mcpwire: tasks kept in {where}")
    return store


def use_keys(app: App, path: str | None) -> None:
    """Sign with the shared keyring (``--keys FILE`` or ``MCPWIRE_KEYS``), if one is given."""
    keyring = serving_keyring(path)
    if keyring is not None:
        app.server.set_keyring(keyring)


ALLOWED_HOSTS_ENV = "MCPWIRE_ALLOWED_HOSTS"
"""The hosts of ``--allowed-host``, comma-separated, when the option is not given."""

_HOST_NAME = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*")


def allowed_hosts(args: argparse.Namespace) -> frozenset[str] | None:
    """The Host check ``--allowed-host`` (repeatable; else ``MCPWIRE_ALLOWED_HOSTS``,
    comma-separated) asks for: the hosts, lowercase, or None for no check. Each is a host name
    or an IP address without a port (IPv6 with or without brackets); anything else is a usage
    error, so a mistyped host fails at start rather than as 403s."""
    given: list[str] | None = getattr(args, "allowed_hosts", None)
    if given is not None:
        source = "--allowed-host"
        if args.transport == "stdio":
            raise CliError("--allowed-host is for HTTP: stdio has no Host header", EXIT_USAGE)
    else:
        env = os.environ.get(ALLOWED_HOSTS_ENV, "")
        if args.transport == "stdio" or not env.strip():
            return None
        source, given = ALLOWED_HOSTS_ENV, env.split(",")
    hosts = set()
    for entry in given:
        host = entry.strip().lower()
        bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
        if _HOST_NAME.fullmatch(host) is None:
            try:
                host = "[" + ipaddress.IPv6Address(bare).compressed + "]"
            except ValueError:
                raise CliError(f"{source}: {entry.strip()!r} is not a host name or IP address (no scheme, port or "
                               "path: --allowed-host localhost)", EXIT_USAGE) from None
        hosts.add(host)
    return frozenset(hosts)


def use_allowed_hosts(app: App, hosts: frozenset[str] | None, term: Terminal) -> None:
    """Turn on the engine's Host check (``HttpPolicy.allowed_hosts``) for ``hosts``, in place of
    any the App set; nothing without hosts."""
    if hosts is None:
        return
    app.server.http = msgspec.structs.replace(app.server.http, allowed_hosts=hosts)
    term.say(f"mcpwire: answering only requests whose Host is {', '.join(sorted(hosts))} (any other: 403)")


def serve(args: argparse.Namespace, term: Terminal) -> int:
    logging.basicConfig(level=logging.WARNING, stream=term.stderr, format="mcpwire: %(levelname)s %(name)s: %(message)s")
    args.allowed_hosts = allowed_hosts(args)  # checked once, before any worker starts
    workers = check_workers(args)  # --workers N: N processes on one port (_cli_workers.py)
    if workers is not None:
        return serve_workers(args, term, workers, _serve_worker)
    if args.transport == "stdio":
        # stdout carries protocol lines only (the driver writes to fd 1 directly): a print() in
        # the app, at import or in a handler, goes to stderr instead.
        with contextlib.redirect_stdout(term.stderr):
            app = load_app(args.app)
            use_keys(app, args.keys)
            store = use_shared_state(app, args, term) or use_task_store(app, args.tasks_db, term)
            with store if store is not None else contextlib.nullcontext():  # closed after serving
                trio_run(serve_stdio, app, args.grace_period, term)
    else:
        guard = None
        if args.oauth_issuer or args.oauth_jwks_url or args.oauth_resource or args.oauth_scope:
            from .oauth import resource_guard

            guard = resource_guard(args)
        app = load_app(args.app)
        use_keys(app, args.keys)
        _serve_http_app(app, args, term, guard, None)
    term.say("mcpwire: stopped")
    return EXIT_OK


def _serve_http_app(app: App, args: argparse.Namespace, term: Terminal, guard: Any, worker: str | None) -> None:
    use_allowed_hosts(app, args.allowed_hosts, term)
    store = use_shared_state(app, args, term) or use_task_store(app, args.tasks_db, term)
    with store if store is not None else contextlib.nullcontext():  # closed after serving
        try:
            trio_run(serve_http, app, args.host, args.port, args.grace_period, term, guard, worker)
        except OSError as exc:
            raise CliError(f"cannot listen on {args.host}:{args.port}: {os_reason(exc)}", EXIT_UNREACHABLE) from None


def _serve_worker(args: argparse.Namespace, term: Terminal, keyring: Keyring, worker: str) -> int:
    """One process of ``--workers``: the App loaded here, signing with the workers' keyring."""
    guard = None
    if args.oauth_issuer or args.oauth_jwks_url or args.oauth_resource or args.oauth_scope:
        from .oauth import resource_guard

        guard = resource_guard(args)
    app = load_app(args.app)
    app.server.set_keyring(keyring)
    _serve_http_app(app, args, term, guard, worker)
    term.say(f"mcpwire: {worker} stopped")
    return EXIT_OK

