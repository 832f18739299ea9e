"""The app the response cache tests talk to, in process over HTTP or as a stdio script.

Every cacheable result carries the same ``ttlMs`` and ``cacheScope`` (``resources/read``:
``--read-scope``); lists come ``--page-size`` items a page. ``touch`` adds a tool without
telling anyone (a cached tools/list then hides it); ``change`` adds one and announces it;
``edit`` changes ``test://note`` and announces that. ``test://note`` counts its reads in its
text; ``test://ask`` asks the client for a word first (a multi round-trip read).

Usage: python tests/adapters/client/_cache_app.py [--ttl-ms N] [--scope public|private]
[--read-scope public|private] [--page-size N]. Diagnostics go to stderr only.
"""

from __future__ import annotations

import argparse
from typing import Any

import trio
from mcpwire import CachePolicy, Keyring
from mcpwire_adapters import App, Context, NeedInput, serve_stdio

LISTS = ("server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list")


def build_app(ttl_ms: int = 60_000, scope: str = "public", read_scope: str = "private", page_size: int = 2) -> App:
    cache = {method: CachePolicy(ttl_ms=ttl_ms, scope=scope) for method in LISTS}  # type: ignore[arg-type]
    cache["resources/read"] = CachePolicy(ttl_ms=ttl_ms, scope=read_scope)  # type: ignore[arg-type]
    app = App("cache-test", "1.0", keyring=Keyring.single(b"C" * 32), resource_subscribe=True, page_size=page_size,
              cache=cache)
    counts = {"reads": 0, "added": 0}
    state = {"note": "first"}

    for name in ("alpha", "beta", "gamma"):
        @app.tool(name, description=f"Answer {name}")
        async def fixed(ctx: Context, arguments: dict[str, Any], _name: str = name) -> str:
            return _name

    def add_tool() -> None:
        counts["added"] += 1

        @app.tool(f"added{counts['added']}", description="A tool added while the app runs")
        async def added(ctx: Context, arguments: dict[str, Any]) -> str:
            return "added"

    @app.tool(description="Add a tool and tell no one")
    async def touch(ctx: Context, arguments: dict[str, Any]) -> str:
        add_tool()
        return "touched"

    @app.tool(description="Add a tool and announce that the tools list changed")
    async def change(ctx: Context, arguments: dict[str, Any]) -> str:
        add_tool()
        ctx.app.notify_list_changed("tools")
        return "changed"

    @app.tool(description="Change test://note and announce it")
    async def edit(ctx: Context, arguments: dict[str, Any]) -> str:
        state["note"] = str(arguments.get("text", "edited"))
        ctx.app.notify_resource_updated("test://note")
        return "edited"

    @app.resource("test://note", name="note", mime_type="text/plain")
    def note(ctx: Context) -> str:
        counts["reads"] += 1
        return f"{state['note']} #{counts['reads']}"

    @app.resource("test://ask", name="ask", mime_type="text/plain")
    def ask(ctx: Context) -> Any:
        answer = ctx.input_responses.get("word")
        if answer is None:
            schema = {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}
            return NeedInput(requests={"word": {"method": "elicitation/create",
                                                "params": {"message": "Word?", "requestedSchema": schema}}})
        counts["reads"] += 1
        return f"{answer['content']['word']} #{counts['reads']}"

    return app


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ttl-ms", type=int, default=60_000)
    parser.add_argument("--scope", default="public")
    parser.add_argument("--read-scope", default="private")
    parser.add_argument("--page-size", type=int, default=2)
    options = parser.parse_args()
    app = build_app(options.ttl_ms, options.scope, options.read_scope, options.page_size)
    trio.run(lambda: serve_stdio(app, grace_period=5))


if __name__ == "__main__":
    main()
