"""Every ```python block of README.md and docs/ runs, and uses public names only.

How a page runs: its blocks are executed in order in one namespace (a page reads top to bottom,
and a later block may use what an earlier one defined), from the repository root, with
``__name__`` set to ``"docs_example"``. A block that would serve until interrupted keeps that
part under ``if __name__ == "__main__":``; what it defined (an ``App``, an ASGI app, a serve
function) is then exercised by this file, on 127.0.0.1 and port 0. Names the prose tells the
reader to provide are put in the namespace first (``url`` on the client page: the endpoint of
the demo server, which this file starts).

Two markers, an HTML comment on the line before the fence, excuse a block from running:

- ``<!-- excerpt: PATH -->``: the block quotes PATH, a file another test runs; every line of
  the block must still be in PATH, in order (``...`` and ``# ...`` lines mark left-out lines);
- ``<!-- not-run: REASON -->``: a fragment, with the reason it cannot run. Keep these rare.

Public names (what the examples may import): ``mcpwire`` for engines, events, errors and
configuration; ``mcpwire.types`` for the wire types (``Tool``, ``Implementation``...), never
through ``mcpwire`` itself; ``mcpwire_adapters`` top-level names, and a public submodule of it
(``mcpwire_adapters.client.http``) only for a name the top level does not export.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import importlib
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
import types
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import mcpwire
import mcpwire.types
import mcpwire_adapters

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
PAGE_TIMEOUT = 120  # seconds for one page, its exercise included
PUBLIC_MODULES = frozenset({"mcpwire.framing", "mcpwire.sessions", "mcpwire.tasks", "mcpwire.auth"})  # their __all__ is public

_FENCE = re.compile(r"^(?P<fence>```|~~~)(?P<info>[^\n]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S)
_MARKER = re.compile(r"<!--\s*(?P<kind>not-run|excerpt):\s*(?P<arg>.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # line of the opening fence, 1-based
    code: str
    marker: str | None  # "not-run", "excerpt" or None
    argument: str  # the reason, or the excerpted path

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def _pages() -> list[Path]:
    return [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]


def _blocks(page: Path) -> list[Block]:
    return _parse_blocks(page, page.read_text())


def _parse_blocks(page: Path, text: str) -> list[Block]:
    out = []
    for match in _FENCE.finditer(text):
        language = match.group("info").strip().split(" ")[0].lower()
        if language not in ("python", "py", "python3"):
            continue
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        found = _MARKER.search(before)
        out.append(Block(
            page=page,
            line=text.count("\n", 0, match.start()) + 1,
            code=match.group("body"),
            marker=found.group("kind") if found else None,
            argument=found.group("arg") if found else "",
        ))
    return out


ALL_BLOCKS = [block for page in _pages() for block in _blocks(page)]
RUN_PAGES = sorted({block.page for block in ALL_BLOCKS if block.marker is None})


def test_block_extraction() -> None:
    text = (
        "intro\n```python\nx = 1\n```\n<!-- not-run: needs a terminal -->\n```python\ninput()\n```\n"
        "```console\n$ ls\n```\n<!-- excerpt: examples/demo.py -->\n```py\nimport trio\n```\n"
    )
    blocks = _parse_blocks(REPO / "example.md", text)
    assert [(b.code, b.marker, b.argument, b.line) for b in blocks] == [
        ("x = 1\n", None, "", 2),
        ("input()\n", "not-run", "needs a terminal", 6),
        ("import trio\n", "excerpt", "examples/demo.py", 13),
    ]


def test_docs_have_python_examples() -> None:
    # A changed fence syntax must not make this whole file pass by finding nothing.
    assert len(ALL_BLOCKS) >= 20
    assert {p.name for p in RUN_PAGES} >= {"README.md", "server.md", "client.md", "asgi.md", "embedding.md"}


def test_excused_blocks_say_why_and_are_rare() -> None:
    not_run = [b for b in ALL_BLOCKS if b.marker == "not-run"]
    assert all(b.argument for b in not_run), [b.where for b in not_run if not b.argument]
    assert len(not_run) <= 3, f"too many blocks excused from running: {[b.where for b in not_run]}"
    for block in ALL_BLOCKS:
        if block.marker == "excerpt":
            assert (REPO / block.argument).is_file(), f"{block.where}: no file {block.argument}"


# -- excerpts ----------------------------------------------------------------------------------------
def _elided(line: str) -> bool:
    return line in ("...", "# ...") or line.startswith("# ...")


@pytest.mark.parametrize(
    "block", [b for b in ALL_BLOCKS if b.marker == "excerpt"], ids=lambda b: b.where
)
def test_excerpt_is_quoted_from_its_file(block: Block) -> None:
    source = [line.strip() for line in (REPO / block.argument).read_text().splitlines()]
    position = 0
    for line in (line.strip() for line in block.code.splitlines()):
        if not line or _elided(line):
            continue
        try:
            position = source.index(line, position) + 1
        except ValueError:
            pytest.fail(f"{block.where}: not in {block.argument} (after line {position}): {line!r}")
    # The quoted file must itself be run by a test.
    tests = " ".join(path.read_text() for path in (REPO / "tests").rglob("test_*.py") if path.name != Path(__file__).name)
    assert Path(block.argument).name in tests, f"no test runs {block.argument}"


# -- public names ------------------------------------------------------------------------------------
def _public_name_problems(code: str) -> list[str]:
    tree = ast.parse(code)
    wire = set(mcpwire.types.__all__)
    core = set(mcpwire.__all__) - wire
    adapters = set(mcpwire_adapters.__all__)
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] in ("mcpwire", "mcpwire_adapters") and any(p.startswith("_") for p in parts):
                    problems.append(f"import {alias.name}: private module")
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            module, names = node.module, [a.name for a in node.names]
            if module == "mcpwire":
                problems += [f"from mcpwire import {n}: a wire type, import it from mcpwire.types"
                             for n in names if n in wire]
                problems += [f"from mcpwire import {n}: not public" for n in names if n not in core | wire | {"types"}]
            elif module == "mcpwire.types":
                problems += [f"from mcpwire.types import {n}: not a wire type" for n in names if n not in wire]
            elif module == "mcpwire_adapters":
                problems += [f"from mcpwire_adapters import {n}: not public" for n in names if n not in adapters]
            elif module.startswith("mcpwire_adapters."):
                sub = module.split(".", 1)[1]
                if any(part.startswith("_") for part in sub.split(".")):
                    problems.append(f"from {module}: private module")
                    continue
                exported = set(getattr(importlib.import_module(module), "__all__", ()))
                for n in names:
                    if n in adapters:
                        problems.append(f"from {module} import {n}: import it from mcpwire_adapters")
                    elif n not in exported:
                        problems.append(f"from {module} import {n}: not public")
            elif module in PUBLIC_MODULES:
                exported = set(importlib.import_module(module).__all__)
                problems += [f"from {module} import {n}: not public" for n in names if n not in exported]
            elif module.split(".")[0] == "mcpwire":
                problems.append(f"from {module}: only mcpwire, mcpwire.types and {', '.join(sorted(PUBLIC_MODULES))} "
                                "are public")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "mcpwire":
            if node.attr in wire:
                problems.append(f"mcpwire.{node.attr}: a wire type, use mcpwire.types.{node.attr}")
            elif node.attr not in core | {"types", "framing"}:
                problems.append(f"mcpwire.{node.attr}: not public")
        elif (
            isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
            and isinstance(node.value.value, ast.Name) and node.value.value.id == "mcpwire"
            and node.value.attr == "types" and node.attr not in wire
        ):
            problems.append(f"mcpwire.types.{node.attr}: not a wire type")
    return problems


def test_public_name_check() -> None:
    assert _public_name_problems("from mcpwire import Client\nfrom mcpwire.types import Tool\nmcpwire.Server") == []
    assert _public_name_problems("from mcpwire import Tool") == [
        "from mcpwire import Tool: a wire type, import it from mcpwire.types"
    ]
    assert _public_name_problems("import mcpwire._client") == ["import mcpwire._client: private module"]
    assert _public_name_problems("from mcpwire._client import Client") == [
        "from mcpwire._client: only mcpwire, mcpwire.types and mcpwire.auth, mcpwire.framing, mcpwire.sessions, mcpwire.tasks are public"
    ]
    assert _public_name_problems("from mcpwire.auth import ClientAuth\nfrom mcpwire.sessions import INITIALIZE_ERA") == []
    assert _public_name_problems("from mcpwire.auth import _b64url") == ["from mcpwire.auth import _b64url: not public"]
    assert _public_name_problems("from mcpwire_adapters.app.app import App") == [
        "from mcpwire_adapters.app.app import App: import it from mcpwire_adapters"
    ]
    assert _public_name_problems("from mcpwire_adapters.state.sqlite_tasks import SqliteTaskStore") == []
    assert _public_name_problems("from mcpwire_adapters.serve._x import y") == ["from mcpwire_adapters.serve._x: private module"]
    assert _public_name_problems("from mcpwire.server.engine import Server") == [
        "from mcpwire.server.engine: only mcpwire, mcpwire.types and mcpwire.auth, mcpwire.framing, mcpwire.sessions, mcpwire.tasks are public"
    ]
    assert _public_name_problems("from mcpwire.framing import SSEReader\nmcpwire.framing.SSEReader") == []
    assert _public_name_problems("x = mcpwire.Implementation") == [
        "mcpwire.Implementation: a wire type, use mcpwire.types.Implementation"
    ]


@pytest.mark.parametrize("block", ALL_BLOCKS, ids=lambda b: b.where)
def test_example_uses_public_names(block: Block) -> None:
    assert _public_name_problems(block.code) == [], block.where


# -- running the pages -------------------------------------------------------------------------------
@contextlib.contextmanager
def _deadline(seconds: int) -> Iterator[None]:
    """Fail instead of hanging: SIGALRM raises TimeoutError in whatever the page is running."""

    def expire(signum: int, frame: types.FrameType | None) -> None:
        raise TimeoutError(f"the page's examples did not finish within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="module")
def demo_url() -> Iterator[str]:
    """The demo server (examples/demo.py) over HTTP on 127.0.0.1, a free port, as client.md says."""
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpwire_adapters.cli", "serve", "examples/demo.py:build_demo_app", "--port", "0"],
        cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    assert process.stderr is not None
    try:
        deadline = time.monotonic() + 30
        announced = b""
        while b"\n" not in announced:
            ready, _, _ = select.select([process.stderr], [], [], max(0.0, deadline - time.monotonic()))
            chunk = os.read(process.stderr.fileno(), 4096) if ready else b""
            if not chunk:
                pytest.fail(f"the demo server did not start: {announced!r}")
            announced += chunk
        found = re.search(rb"at (http://127\.0\.0\.1:\d+/mcp)", announced)
        assert found, announced
        yield found.group(1).decode()
    finally:
        process.terminate()  # SIGTERM: a graceful stop
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stderr.close()


def _run_page(page: Path, context: dict[str, Any]) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "docs_example", **context}
    for block in _blocks(page):
        if block.marker is not None:
            continue
        try:
            exec(compile(block.code, block.where, "exec"), namespace)  # noqa: S102 - the docs' own code
        except Exception as exc:
            raise AssertionError(f"the example at {block.where} failed: {exc!r}") from exc
    return namespace


@pytest.mark.parametrize("page", RUN_PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_page_examples_run(page: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    name = str(page.relative_to(REPO))
    for module in NEEDS.get(name, ()):
        pytest.importorskip(module)
    context = {key: request.getfixturevalue(fixture) for key, fixture in CONTEXT.get(name, {}).items()}
    monkeypatch.chdir(REPO)  # the examples name files such as examples/demo.py
    with _deadline(PAGE_TIMEOUT):
        namespace = _run_page(page, context)
        exercise = EXERCISES.get(name)
        if exercise is not None:
            exercise(namespace)


# -- what each page's examples must then do ------------------------------------------------------------
def _post(url: str, request: Any) -> Any:
    """POST one OutgoingRequest; its final client event (blocking: run it in a thread)."""
    http = urllib.request.Request(url, data=request.body, headers={k.decode(): v.decode() for k, v in request.headers})
    try:
        response = urllib.request.urlopen(http, timeout=30)
    except urllib.error.HTTPError as refused:
        response = refused
    with response:
        parser = mcpwire.HttpResponseParser(
            CLIENT, request, status=response.status, content_type=response.headers.get("Content-Type")
        )
        events = parser.feed(response.read()) + parser.close()
    return events[-1]


CLIENT = mcpwire.Client(mcpwire.types.Implementation(name="docs-test", version="1"))


def _text(event: Any) -> str:
    assert isinstance(event, mcpwire.ResultReceived), event
    return str(event.data["content"][0]["text"])


def _call_add_over_trio(app: Any) -> list[Any]:
    """Serve ``app`` with the trio driver on a free port; call its ``add`` tool with progress."""
    import trio
    from mcpwire_adapters import serve_http
    from mcpwire_adapters.client.http import HttpClient

    progress: list[Any] = []

    async def main() -> str:
        with trio.fail_after(30):
            async with trio.open_nursery() as nursery:
                host, port = await nursery.start(serve_http, app, "127.0.0.1", 0)
                async with HttpClient(f"http://{host}:{port}/mcp") as client:
                    result = await client.call_tool("add", {"a": 2, "b": 40}, on_progress=progress.append)
                nursery.cancel_scope.cancel()
        return _text(result)

    assert trio.run(main) == "42"
    return progress


def _exercise_readme(ns: dict[str, Any]) -> None:
    _call_add_over_trio(ns["app"])


def _exercise_server(ns: dict[str, Any]) -> None:
    assert ns["answer"].state.name == "DONE"
    assert b'"text":"42"' in ns["output"].data
    assert ns["conn"].in_flight == 0
    progress = _call_add_over_trio(ns["app"])
    assert [p.progress for p in progress] == [1]


def _exercise_client(ns: dict[str, Any]) -> None:
    assert isinstance(ns["event"], mcpwire.ResultReceived) and ns["event"].method == "tools/list"
    assert {tool.name for tool in ns["tools"]} == {"add", "count", "greet"}
    assert ns["pages"].truncated is False
    # The version fallback ran: the server refused 2027-01-01, the client moved to 2026-07-28.
    assert ns["client"].protocol_version == "2026-07-28"
    assert ns["proc"].returncode == 0
    # Blocking use: the elicitation handler answered, the stdio server stopped on close().
    assert ns["greeting"] == "Hello, Ada!" and ns["counted"].value.content[0].text == "counted to 3"
    assert ns["added"] == "2.0 + 40.0 = 42.0" and ns["c"].closed and ns["c"].session.returncode == 0


async def _serving(serve: Callable[..., Any], application: Any, check: Callable[[str], None]) -> None:
    """Run one of asgi.md's serve functions on a free port, check it, then stop it."""
    stop = asyncio.Event()
    with socket.create_server(("127.0.0.1", 0)) as sock:
        port = sock.getsockname()[1]
        serving = asyncio.create_task(serve(application, sock, stop))
        for _ in range(500):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            await asyncio.sleep(0.01)
        try:
            await asyncio.to_thread(check, f"http://127.0.0.1:{port}")
        finally:
            stop.set()
            await asyncio.wait_for(serving, 30)


def _exercise_asgi(ns: dict[str, Any]) -> None:
    def add(base: str) -> None:
        assert _text(_post(base + "/mcp", CLIENT.call_tool("add", {"a": 2, "b": 40}))) == "42"

    def mounted(base: str) -> None:
        assert isinstance(_post(base + "/mcp/", CLIENT.discover()), mcpwire.ResultReceived)
        with urllib.request.urlopen(base + "/", timeout=30) as home:
            assert b"/mcp/" in home.read()

    asyncio.run(_serving(ns["serve_with_uvicorn"], ns["asgi"], add))
    asyncio.run(_serving(ns["serve_with_hypercorn"], ns["asgi"], add))
    asyncio.run(_serving(ns["serve_with_uvicorn"], ns["site"], mounted))


def _exercise_embedding(ns: dict[str, Any]) -> None:
    server = mcpwire.Server(
        mcpwire.types.Implementation(name="embedded", version="1"), keyring=mcpwire.Keyring.single(b"k" * 32),
        resources=False, prompts=False, list_changed=True,
    )
    server.add_tool(mcpwire.types.Tool(name="work", description="Works", input_schema={"type": "object"}))
    handle: Callable[..., list[Any]] = ns["handle"]

    def send(request: Any) -> list[Any]:
        return handle(server, "POST", "/mcp", list(request.headers), request.body)

    head, body = send(CLIENT.call_tool("work", {}))
    assert head.status == 200 and b'"text":"done"' in body.data
    head, body = send(CLIENT.discover())
    assert head.status == 200 and b'"supportedVersions"' in body.data
    head, ack = send(CLIENT.listen({"toolsListChanged": True}))
    assert dict(head.headers)[b"content-type"] == b"text/event-stream" and b"acknowledged" in ack.data
    head, body = handle(server, "GET", "/mcp", [], b"")
    assert head.status == 405


EXERCISES: dict[str, Callable[[dict[str, Any]], None]] = {
    "README.md": _exercise_readme,
    "docs/server.md": _exercise_server,
    "docs/client.md": _exercise_client,
    "docs/asgi.md": _exercise_asgi,
    "docs/embedding.md": _exercise_embedding,
}
# Names a page's prose tells the reader to provide, and the fixture that provides each.
CONTEXT: dict[str, dict[str, str]] = {
    "docs/client.md": {"url": "demo_url"}, "docs/probing.md": {"url": "demo_url"}, "docs/fuzzing.md": {"url": "demo_url"},
}
# Third-party modules a page's examples import beyond the package's own (the dev extra has them).
NEEDS: dict[str, tuple[str, ...]] = {"docs/asgi.md": ("uvicorn", "hypercorn", "starlette")}
