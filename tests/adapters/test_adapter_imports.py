"""What importing a part of mcpwire_adapters loads, checked in a fresh interpreter (as
tests/integration/test_import_hygiene.py does for the core): the stdio client needs no h11, the
transport-neutral client session neither h11 nor trio, and NeedInput (the one type every
adapter, example and the fixture answer "ask the client first" with) nothing but msgspec.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _modules_after(statement: str) -> set[str]:
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True, cwd=str(REPO))
    return set(json.loads(done.stdout))


def _family(modules: set[str], name: str) -> set[str]:
    return {m for m in modules if m == name or m.startswith(name + ".")}


def test_the_stdio_client_does_not_load_h11() -> None:
    loaded = _modules_after("import mcpwire_adapters.client.stdio")
    assert "mcpwire_adapters.client.stdio" in loaded and "mcpwire_adapters.client.session" in loaded
    assert not _family(loaded, "h11"), sorted(_family(loaded, "h11"))
    assert "mcpwire_adapters.client.http" not in loaded


@pytest.mark.parametrize("name", ["h11", "trio"])
def test_the_client_session_loads_no_transport(name: str) -> None:
    loaded = _modules_after("import mcpwire_adapters.client.session")
    assert not _family(loaded, name), sorted(_family(loaded, name))


def test_the_check_sees_h11_when_it_is_loaded() -> None:
    assert "h11" in _modules_after("import mcpwire_adapters.client.http")


def test_shared_client_names_are_one_object_wherever_imported() -> None:
    from mcpwire_adapters.client import http as http_client, session, stdio as stdio_client

    for name in ("Session", "Subscription", "ServerError", "TransportError", "InputHandler", "ListenEvent"):
        assert getattr(http_client, name) is getattr(session, name), name
    assert issubclass(stdio_client.StdioClient, session.Session)
    assert issubclass(http_client.HttpClient, session.Session)


@pytest.mark.parametrize("name", ["anyio", "trio", "h11", "mcpwire_adapters.app.app"])
def test_need_input_loads_no_event_loop_library(name: str) -> None:
    loaded = _modules_after("from mcpwire_adapters import NeedInput")
    assert "mcpwire_adapters.app.need_input" in loaded
    assert not _family(loaded, name), sorted(_family(loaded, name))


def test_the_app_layer_is_still_importable_from_the_package() -> None:
    import mcpwire_adapters
    from mcpwire_adapters import App, Context, asgi_app, serve_stdio

    assert App is mcpwire_adapters.app.app.App and Context is mcpwire_adapters.app.app.Context
    assert callable(asgi_app) and callable(serve_stdio)
    assert set(mcpwire_adapters.__all__) <= set(dir(mcpwire_adapters)) | set(mcpwire_adapters._LAZY)


def _load(path: Path, name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_one_need_input_type_for_app_example_and_fixture() -> None:
    import mcpwire_adapters
    from mcpwire_adapters import app

    assert app.NeedInput is mcpwire_adapters.NeedInput
    example = _load(REPO / "examples" / "asyncio_server.py", "asyncio_server_example")
    assert example.NeedInput is mcpwire_adapters.NeedInput
    if str(REPO / "conformance") not in sys.path:  # the fixture imports its sibling fixture_tasks
        sys.path.insert(0, str(REPO / "conformance"))
    fixture = _load(REPO / "conformance" / "fixture.py", "conformance_fixture_imports")
    assert fixture.NeedInput is mcpwire_adapters.NeedInput


def test_no_other_need_input_is_defined() -> None:
    definition = re.compile(r"^\s*(class NeedInput\b|NeedInput\s*=)", re.M)
    found = sorted(
        str(path.relative_to(REPO))
        for folder in ("adapters", "conformance", "examples", "docs", "tests", "mcpwire")
        for path in (REPO / folder).rglob("*")
        if path.suffix in (".py", ".md") and definition.search(path.read_text())
    )
    assert found == ["adapters/app/need_input.py"]


# -- the anyio drivers: no trio -------------------------------------------------------------------

ANYIO_DRIVERS = ["mcpwire_adapters.client.http", "mcpwire_adapters.client.stdio", "mcpwire_adapters.serve.stdio",
                 "mcpwire_adapters.client.blocking"]


@pytest.mark.parametrize("module", ANYIO_DRIVERS)
def test_the_anyio_drivers_do_not_load_trio(module: str) -> None:
    loaded = _modules_after(f"import {module}")
    assert module in loaded and "anyio" in loaded
    assert not _family(loaded, "trio"), sorted(_family(loaded, "trio"))


def test_the_check_sees_trio_when_it_is_loaded() -> None:
    assert "trio" in _modules_after("import mcpwire_adapters.serve.trio_h11.server")  # the HTTP server stays on trio


# A client process where `import trio` fails, on asyncio: HttpClient against the URL given, then
# StdioClient against tests/stdio_app.py on asyncio, itself started with trio blocked the same way.
_WITHOUT_TRIO = """
import asyncio, json, sys
sys.modules["trio"] = None  # from here on, any import of trio raises ImportError
from mcpwire_adapters.client.http import HttpClient
from mcpwire_adapters.client.stdio import StdioClient

SERVER = ("import runpy, sys; sys.modules['trio'] = None; sys.argv = ['stdio_app', '--backend', 'asyncio']; "
          f"runpy.run_path({sys.argv[2]!r}, run_name='__main__')")

def text(result):
    return result.data["content"][0]["text"]

async def main(url):
    async with HttpClient(url) as c:
        over_http = text(await c.call_tool("echo", {"text": "over http"}))
    async with StdioClient([sys.executable, "-c", SERVER]) as c:
        over_stdio = text(await c.call_tool("echo", {"text": "over stdio"}))
    print(json.dumps([over_http, over_stdio, c.returncode]))

asyncio.run(main(sys.argv[1]))
"""


def test_the_clients_and_serve_stdio_run_on_asyncio_with_trio_unimportable() -> None:
    import anyio
    from mcpwire_adapters import App, Context

    from _backends import run, served

    app = App("no-trio", "1.0")

    @app.tool(description="Echo the text back")
    async def echo(ctx: Context, arguments: dict[str, object]) -> str:
        return str(arguments.get("text", ""))

    async def main() -> None:
        async with served(app) as server:
            done = await anyio.run_process([sys.executable, "-c", _WITHOUT_TRIO, server.url,
                                            str(REPO / "tests" / "stdio_app.py")], check=False)
        assert done.returncode == 0, done.stderr.decode()
        assert json.loads(done.stdout) == ["over http", "over stdio", 0]

    run(main, "asyncio", timeout=60)
