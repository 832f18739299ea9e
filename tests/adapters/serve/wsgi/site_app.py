"""The App the WSGI tests serve, and its WSGI application (``application``, and ``wsgi``, the
:class:`WsgiApp` the servers' shutdown hooks close): run by ``tests/wsgi_serve.py`` under gunicorn or
waitress, in a process of its own.

Tools: ``echo``; ``progress`` (three progress notifications, 0.2 s apart, then ``done``);
``slow`` (one progress notification when ``report`` is set, then waits until cancelled);
``touch`` (tells listen streams the tool list changed); ``pid`` (the serving process).
``slow`` leaves marks in the folder ``WSGI_TEST_MARKS`` names: ``<key>.started`` and
``<key>.cancelled``, which the tests wait for. A resource ``test://note`` (subscribable).
``WSGI_TEST_STREAMS`` (``on``/``off``) forces ``WsgiConfig.streams``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
from mcpwire_adapters import App, Context, WsgiApp, WsgiConfig

from mcpwire import HttpPolicy, Keyring

MAX_BODY = 1024
KEYRING = Keyring.single(b"wsgi-tests-keyring-0123456789abc")  # every process of a test verifies the others' tokens


def _mark(name: str) -> None:
    folder = os.environ.get("WSGI_TEST_MARKS")
    if folder:
        Path(folder, name).touch()


def build_app(path: str = "/mcp") -> App:
    app = App("wsgi-test", "1.0", keyring=KEYRING, http=HttpPolicy(path=path, max_body_bytes=MAX_BODY),
              resource_subscribe=True, logging=True)

    @app.tool(description="Echo the text back")
    async def echo(ctx: Context, arguments: dict[str, Any]) -> str:
        return str(arguments.get("text", ""))

    @app.tool(description="Report progress three times, 0.2 s apart, then answer")
    async def progress(ctx: Context, arguments: dict[str, Any]) -> str:
        for step in (1, 2, 3):
            await ctx.progress(step, total=3, message=f"step {step}")
            await anyio.sleep(0.2)
        return "done"

    @app.tool(description="Optionally report progress, then wait until cancelled")
    async def slow(ctx: Context, arguments: dict[str, Any]) -> str:
        key = str(arguments["key"])
        if arguments.get("report"):
            await ctx.progress(1, total=2)
        _mark(f"{key}.started")
        try:
            await anyio.sleep(60)
        except anyio.get_cancelled_exc_class():
            _mark(f"{key}.cancelled")
            raise
        return "finished"

    @app.tool(description="Tell listen streams the tool list changed")
    async def touch(ctx: Context, arguments: dict[str, Any]) -> str:
        ctx.app.notify_list_changed("tools")
        return "touched"

    @app.tool(description="The id of the serving process")
    async def pid(ctx: Context, arguments: dict[str, Any]) -> str:
        return str(os.getpid())

    @app.resource("test://note", name="note", mime_type="text/plain", description="A note")
    def note(ctx: Context) -> str:
        return "a note"

    return app


def config() -> WsgiConfig:
    streams = {"on": True, "off": False}.get(os.environ.get("WSGI_TEST_STREAMS", ""))
    return WsgiConfig(streams=streams, max_streams=2, sse_keepalive_interval=1.0, departure_interval=0.1)


wsgi = WsgiApp(build_app(), config=config())
application = wsgi
