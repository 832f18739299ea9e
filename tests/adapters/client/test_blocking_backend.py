"""Which event loop :class:`BlockingClient` runs on: trio when it is installed, asyncio when it is
not (``pip install 'mcpwire[client]'`` brings anyio and h11, no trio), and an explicit
``backend=`` that cannot run is a :class:`UsageError` naming what to install.

The no-trio cases run in a fresh interpreter where ``sys.modules["trio"] = None`` makes every
``import trio`` fail, as it does where trio is not installed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from mcpwire_adapters import App, BlockingClient, Context
from mcpwire_adapters.errors import UsageError

from _backends import run, served

REPO = Path(__file__).resolve().parents[3]
STDIO_APP = REPO / "tests" / "stdio_app.py"

# The script a user of `pip install 'mcpwire[client]'` writes, as docs/client.md shows it, with
# trio made unimportable first; the stdio server it starts is blocked from trio the same way.
_WITHOUT_TRIO = """
import json, sys
sys.modules["trio"] = None  # from here on, `import trio` raises ImportError
from mcpwire_adapters import BlockingClient
from mcpwire_adapters.errors import UsageError

SERVER = ("import runpy, sys; sys.modules['trio'] = None; sys.argv = ['stdio_app', '--backend', 'asyncio']; "
          f"runpy.run_path({sys.argv[2]!r}, run_name='__main__')")

async def loop_name():
    import asyncio
    try:
        asyncio.current_task()
    except RuntimeError:
        return "not asyncio"
    return "asyncio"

def text(result):
    return result.data["content"][0]["text"]

out = {}
with BlockingClient.http(sys.argv[1]) as c:
    out["http"] = text(c.call_tool("echo", {"text": "over http"}))
    out["http_loop"] = c.run(loop_name)
with BlockingClient.stdio([sys.executable, "-c", SERVER]) as c:
    out["stdio"] = text(c.call_tool("echo", {"text": "over stdio"}))
try:
    BlockingClient.http(sys.argv[1], backend="trio")
except UsageError as exc:
    out["explicit_trio"] = str(exc)
print(json.dumps(out))
"""


def make_app() -> App:
    app = App("blocking-backend", "1.0")

    @app.tool(description="Echo the text back")
    async def echo(ctx: Context, arguments: dict[str, object]) -> str:
        return str(arguments.get("text", ""))

    return app


def test_without_trio_the_blocking_client_runs_on_asyncio() -> None:
    async def main() -> None:
        import anyio

        async with served(make_app()) as server:
            done = await anyio.run_process([sys.executable, "-c", _WITHOUT_TRIO, server.url, str(STDIO_APP)],
                                           check=False, cwd=str(REPO))
        assert done.returncode == 0, done.stderr.decode()
        out = json.loads(done.stdout)
        assert out["http"] == "over http" and out["stdio"] == "over stdio"
        assert out["http_loop"] == "asyncio"
        # backend="trio" asked for by name, trio missing: the extra to install, not anyio's LookupError.
        assert "mcpwire[trio]" in out["explicit_trio"], out["explicit_trio"]

    run(main, "trio", timeout=60)


def test_with_trio_installed_the_default_is_still_trio() -> None:
    async def loop_name() -> str:
        import asyncio

        try:
            asyncio.current_task()
        except RuntimeError:
            return "trio"
        return "asyncio"

    async def main() -> None:
        import anyio

        async with served(make_app()) as server:
            def blocking() -> tuple[str, str]:
                with BlockingClient.http(server.url) as c, BlockingClient.http(server.url, backend="asyncio") as a:
                    return c.run(loop_name), a.run(loop_name)

            assert await anyio.to_thread.run_sync(blocking) == ("trio", "asyncio")

    run(main, "trio", timeout=60)


def test_an_unknown_backend_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="'asyncio' or 'trio'"):
        BlockingClient.http("http://127.0.0.1:1/mcp", backend="curio")

