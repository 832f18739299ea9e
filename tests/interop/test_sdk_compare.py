"""One small server written twice, on mcpwire's ``App`` (``examples/sdk_compare_mcpwire.py``) and
on the official Python SDK's ``MCPServer`` (``examples/sdk_compare_mcpserver.py``; ``mcp`` 2.3.0,
pinned by the dev extra), held equal:

- ours is no longer than theirs, counted in code lines (:func:`code_lines`: every line holding
  code, a docstring included, but not a blank line, a comment, or the module's own docstring,
  which explains how to run the file), and writes no JSON Schema by hand;
- the SDK's own client, its ``ClientSession`` over its Streamable HTTP client (an ``initialize``
  session, 2025-11-25) and its ``Client`` (which probes and speaks 2026-07-28), lists the same
  tools, resource and prompt on both, and gets the same results from each tool, the resource and
  the prompt. Ours is served by ``mcpwire serve FILE`` (the trio driver, ``serve_http``, in a
  process of its own) and as ASGI (``asgi_app``) under uvicorn; theirs as the SDK serves it,
  its ``streamable_http_app()`` under uvicorn (what ``mcp.run(transport="streamable-http")``
  builds). Every server listens on 127.0.0.1, on a port of its own.

What differs, each difference written out once here and in docs/server.md ("Next to the
official SDK's MCPServer"): pydantic titles every property (``"title": "A"`` for ``a``), which
:func:`untitled` takes out of their schemas; a tool returning text (``-> int``, ``-> str``) has
an ``outputSchema`` ``{"result": ...}`` and that ``structuredContent`` on theirs and neither on
ours (:func:`expected_of_ours`); the text block of a structured result is indented JSON on theirs
and compact on ours (compared as JSON); theirs sends ``isError: false``, the default ours leaves
out; refused arguments are ``isError`` on both, each library with its own text.

The last test holds the schemas of more signatures against the SDK's, straight from both
registries: any difference but the property titles is a bug of ours or one the docs name.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import enum
import importlib.util
import io
import json
import os
import re
import select
import subprocess
import sys
import time
import tokenize
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any, Literal, Optional

import anyio
import msgspec
import pytest
from _asgi_servers import serve_uvicorn

from mcpwire_adapters import App, asgi_app

from mcp import Client as SdkClient, ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver import MCPServer

REPO = Path(__file__).resolve().parents[2]
OURS = REPO / "examples" / "sdk_compare_mcpwire.py"
THEIRS = REPO / "examples" / "sdk_compare_mcpserver.py"
TIMEOUT = 60.0  # every server and session together; the module takes a few seconds
ERAS = ["2025-11-25", "2026-07-28"]
OUR_SERVERS = ["serve_http", "asgi"]
Transcript = dict[str, Any]


@pytest.fixture(autouse=True)
def _quiet_deprecations() -> Iterator[None]:
    with warnings.catch_warnings():  # the SDK warns that the initialize-era features are deprecated
        warnings.simplefilter("ignore")
        yield


# -- the two files ----------------------------------------------------------------------------------
def code_lines(source: str) -> int:
    """The lines of ``source`` that hold code: a line with any token but a comment, the module's
    docstring left out (a docstring of a function counts: it is the tool's description)."""
    tree = ast.parse(source)
    skipped: set[int] = set()
    first = tree.body[0] if tree.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        skipped = set(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    lines: set[int] = set()
    layout = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
              tokenize.ENCODING, tokenize.ENDMARKER}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in layout:
            lines.update(range(token.start[0], token.end[0] + 1))
    return len(lines - skipped)


def test_code_lines_counts_code_only() -> None:
    source = ('"""The module\'s docstring,\n\nover three lines."""\n\n# a comment\nimport os  # trailing\n\n'
              'def f() -> str:\n    """A tool\'s description."""\n    return "# not a comment"\n')
    assert code_lines(source) == 4  # import, def, its docstring, return


def test_ours_is_no_longer_than_the_sdks() -> None:
    ours, theirs = code_lines(OURS.read_text()), code_lines(THEIRS.read_text())
    assert ours <= theirs, f"{OURS.name}: {ours} code lines, {THEIRS.name}: {theirs}"


SCHEMA_KEYWORDS = frozenset({"type", "properties", "required", "items", "anyOf", "oneOf", "enum", "$ref", "$defs",
                             "additionalProperties"})


def test_ours_writes_no_json_schema() -> None:
    tree = ast.parse(OURS.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword):
            assert node.arg not in ("input_schema", "output_schema", "arguments_type", "output_type"), node.arg
        if isinstance(node, ast.Dict):
            keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
            assert not keys & SCHEMA_KEYWORDS, f"line {node.lineno}: a JSON Schema written by hand"


# -- serving both -----------------------------------------------------------------------------------
def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"sdk_compare_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def mcpwire_serve(path: Path) -> Iterator[str]:
    """``mcpwire serve PATH --port 0``: the URL it announces on stderr; stopped with SIGTERM (a
    graceful stop), killed if it has not ended within 15 s."""
    process = subprocess.Popen([sys.executable, "-m", "mcpwire_adapters.cli", "serve", str(path), "--port", "0"],
                               cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert process.stderr is not None
    try:
        announced = b""
        deadline = time.monotonic() + 30
        while not (found := re.search(rb"at (http://127\.0\.0\.1:\d+/mcp)", announced)):
            ready, _, _ = select.select([process.stderr], [], [], max(0.0, deadline - time.monotonic()))
            chunk = os.read(process.stderr.fileno(), 4096) if ready else b""
            assert chunk, f"mcpwire serve did not start: {announced!r}"
            announced += chunk
        yield found.group(1).decode()
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stderr.close()


def _dump(model: Any) -> Any:
    """A result as the SDK's client read it: the fields the server sent, by their wire names."""
    return model.model_dump(mode="json", by_alias=True, exclude_unset=True)


async def _use(session: Any, version: str) -> Transcript:
    """Everything the comparison looks at, through one SDK session (a ClientSession or a Client:
    the same verbs)."""
    seen: Transcript = {"version": version, "progress": []}

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen["progress"].append((progress, total, message))

    seen["tools"] = sorted((_dump(t) for t in (await session.list_tools()).tools), key=lambda t: t["name"])
    seen["resources"] = [_dump(r) for r in (await session.list_resources()).resources]
    seen["prompts"] = [_dump(p) for p in (await session.list_prompts()).prompts]
    seen["add"] = _dump(await session.call_tool("add", {"a": 2, "b": 40}))
    seen["countdown"] = _dump(await session.call_tool("countdown", {"start": 3}, progress_callback=on_progress))
    seen["countdown_labelled"] = _dump(await session.call_tool("countdown", {"start": 1, "label": "go"}))
    seen["forecast"] = _dump(await session.call_tool("forecast", {"city": "Oslo"}))
    seen["bad_arguments"] = _dump(await session.call_tool("add", {"a": "two"}))
    seen["settings"] = _dump(await session.read_resource("config://settings"))
    seen["review"] = _dump(await session.get_prompt("review_code", {"code": "print(1)"}))
    seen["review_go"] = _dump(await session.get_prompt("review_code", {"code": "fmt.Println(1)", "language": "Go"}))
    return seen


async def _transcript(url: str, era: str) -> Transcript:
    if era == "2025-11-25":  # the SDK's ClientSession: initialize, then the session's requests
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
            opened = await session.initialize()
            return await _use(session, opened.protocol_version)
    async with SdkClient(url) as client:  # probes server/discover: 2026-07-28
        return await _use(client, str(client.session.protocol_version))


@pytest.fixture(scope="module")
def transcripts() -> dict[tuple[str, str], Transcript]:
    """(server, era) -> what the SDK's client saw: ours served both ways, theirs the SDK's way."""
    theirs = _load(THEIRS).mcp
    ours = _load(OURS).app
    urls: dict[str, str] = {}
    with contextlib.ExitStack() as stack:
        urls["serve_http"] = stack.enter_context(mcpwire_serve(OURS))
        urls["asgi"] = f"http://127.0.0.1:{stack.enter_context(serve_uvicorn(asgi_app(ours)))}/mcp"
        urls["mcpserver"] = f"http://127.0.0.1:{stack.enter_context(serve_uvicorn(theirs.streamable_http_app()))}/mcp"

        async def every() -> dict[tuple[str, str], Transcript]:
            with anyio.fail_after(TIMEOUT):
                return {(server, era): await _transcript(url, era) for server, url in urls.items() for era in ERAS}

        return anyio.run(every)


# -- the comparison ---------------------------------------------------------------------------------
def untitled(schema: Any) -> Any:
    """``schema`` without the ``title`` pydantic gives every property (``"title": "A"`` for ``a``),
    at any depth; every other key, the titles of objects included, stays."""
    if isinstance(schema, list):
        return [untitled(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: untitled({k: v for k, v in prop.items() if k != "title"}) for name, prop in value.items()}
        else:
            out[key] = untitled(value)
    return out


def _text_like(schema: dict[str, Any]) -> bool:
    """Whether the SDK's outputSchema is its wrapper of a result mcpwire gives as text alone."""
    result = schema.get("properties", {}).get("result", {})
    return set(schema) == {"type", "title", "properties", "required"} and schema["required"] == ["result"] \
        and set(schema["properties"]) == {"result"} and result.get("type") in ("string", "integer", "number", "boolean")


def expected_of_ours(tool: dict[str, Any]) -> dict[str, Any]:
    """The SDK's listing of a tool as ours lists it: property titles out, and no outputSchema for
    a tool whose result is text (``-> int``, ``-> str``), which the SDK wraps as ``{"result": ...}``."""
    tool = untitled(tool)
    if "outputSchema" in tool and _text_like(tool["outputSchema"]):
        assert tool["outputSchema"]["title"] == f"{tool['name']}Output"
        del tool["outputSchema"]
    return tool


def _same_result(ours: dict[str, Any], theirs: dict[str, Any], output_schema: dict[str, Any] | None) -> None:
    """A tool result of ours against the SDK's, with the documented differences: the SDK's
    wrapper of a text result, its indented JSON text, and ``isError: false`` (the default) that
    the SDK always sends and mcpwire leaves out."""
    theirs = dict(theirs)
    assert theirs.pop("isError") is False and "isError" not in ours
    if output_schema is not None and _text_like(output_schema):  # their wrapper of a text result
        [block] = theirs["content"]
        is_string = output_schema["properties"]["result"]["type"] == "string"
        assert theirs.pop("structuredContent") == {"result": block["text"] if is_string else json.loads(block["text"])}
    if "structuredContent" in theirs:  # one text block of the same JSON, indented on theirs
        assert [json.loads(b["text"]) for b in ours["content"]] == [json.loads(b["text"]) for b in theirs["content"]]
        ours, theirs = {**ours, "content": None}, {**theirs, "content": None}
    assert ours == theirs


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("server", OUR_SERVERS)
def test_the_sdk_client_lists_the_same_tools(transcripts: dict[tuple[str, str], Transcript], server: str, era: str) -> None:
    ours, theirs = transcripts[server, era], transcripts["mcpserver", era]
    assert ours["version"] == theirs["version"] == era
    assert [t["name"] for t in ours["tools"]] == [t["name"] for t in theirs["tools"]] == ["add", "countdown", "forecast"]
    assert ours["tools"] == [expected_of_ours(t) for t in theirs["tools"]]
    # The differences above are the only ones: names, descriptions and schemas match exactly.
    add, countdown, forecast = ours["tools"]
    assert add["inputSchema"] == {"title": "addArguments", "type": "object", "required": ["a", "b"],
                                  "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}
    assert countdown["inputSchema"]["properties"]["label"] == {"type": "string", "default": "liftoff"}
    assert countdown["inputSchema"]["required"] == ["start"] and "outputSchema" not in countdown
    assert untitled(theirs["tools"][2]["outputSchema"]) == forecast["outputSchema"] == {
        "title": "Forecast", "type": "object", "required": ["city", "celsius", "summary"],
        "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}, "summary": {"type": "string"}}}


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("server", OUR_SERVERS)
def test_the_sdk_client_lists_the_same_resource_and_prompt(
    transcripts: dict[tuple[str, str], Transcript], server: str, era: str
) -> None:
    ours, theirs = transcripts[server, era], transcripts["mcpserver", era]
    assert ours["resources"] == theirs["resources"] == [{
        "name": "settings", "uri": "config://settings", "description": "The application's settings.",
        "mimeType": "application/json"}]
    assert ours["prompts"] == theirs["prompts"]
    assert ours["prompts"][0]["arguments"] == [{"name": "code", "required": True},
                                               {"name": "language", "required": False}]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("server", OUR_SERVERS)
def test_the_sdk_client_gets_the_same_results(
    transcripts: dict[tuple[str, str], Transcript], server: str, era: str
) -> None:
    ours, theirs = transcripts[server, era], transcripts["mcpserver", era]
    schemas = {t["name"]: t.get("outputSchema") for t in theirs["tools"]}
    for call, tool in (("add", "add"), ("countdown", "countdown"), ("countdown_labelled", "countdown"),
                       ("forecast", "forecast")):
        _same_result(ours[call], theirs[call], schemas[tool])
    assert [b["text"] for b in ours["add"]["content"]] == ["42"]
    assert ours["forecast"]["structuredContent"] == {"city": "Oslo", "celsius": 21.5, "summary": "sunny"}
    assert ours["progress"] == theirs["progress"] == [(1, 3, "2 to go"), (2, 3, "1 to go"), (3, 3, "0 to go")]
    # Arguments their types refuse: a tool execution error on both (the texts are each library's own).
    assert ours["bad_arguments"]["isError"] is theirs["bad_arguments"]["isError"] is True
    assert ours["settings"] == theirs["settings"]
    assert ours["settings"]["contents"] == [{"uri": "config://settings", "mimeType": "application/json",
                                             "text": '{"theme": "dark", "language": "en"}'}]
    assert ours["review"] == theirs["review"] and ours["review_go"] == theirs["review_go"]
    assert ours["review_go"]["messages"] == [{"role": "user", "content": {
        "type": "text", "text": "Please review this Go code:\n\nfmt.Println(1)"}}]


# -- schemas of more signatures, straight from both registries ----------------------------------------
class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class Box:
    width: int
    label: str = "box"


def _defaults(a: int, b: float = 1.5, c: str | None = None, d: Optional[int] = None, e: bool = False) -> str:  # noqa: UP045 - as older code spells it
    return ""


def _collections(items: list[int], tags: dict[str, str], pair: tuple[int, str] = (1, "a")) -> str:
    return ""


def _mutable_defaults(xs: list[int] = [1, 2], ys: dict[str, int] = {"a": 1}) -> str:  # noqa: B006 - copied per call
    return ""


def _unions(needed: float | None, value: int | str = 1, maybe: int | None = None) -> str:
    return ""


def _nested(box: Box, spare: Box | None = None, color: Color = Color.RED) -> str:
    return ""


def _literal(mode: Literal["fast", "slow"]) -> str:
    return ""


def _constrained(n: Annotated[int, msgspec.Meta(ge=0)] = 3) -> str:
    return ""


SIGNATURES: list[Callable[..., str]] = [_defaults, _collections, _mutable_defaults, _unions, _nested, _literal, _constrained]


def _sdk_schema(function: Callable[..., str]) -> Any:
    server = MCPServer("x")
    server.tool()(function)
    [tool] = anyio.run(server.list_tools)
    return json.loads(json.dumps(tool.input_schema))  # as a client reads it (a tuple default is a list)


def _our_schema(function: Callable[..., str]) -> Any:
    app = App("x", "1")
    app.tool()(function)
    return msgspec.json.decode(msgspec.json.encode(app.tools[function.__name__].input_schema))


# Where msgspec and pydantic write the same thing differently and the schemas mean the same: an
# enum or a Literal without "type" (and an Enum's values sorted), msgspec's "$defs" copy of the
# top object, "items": false after prefixItems; and the ge/le of msgspec.Meta, which pydantic
# does not read.
KNOWN: dict[str, Callable[[Any], Any]] = {
    "_literal": lambda s: {**s, "properties": {"mode": {**s["properties"]["mode"], "type": "string"}}},
    "_nested": lambda s: {**s, "$defs": {"Box": s["$defs"]["Box"],
                                         "Color": {"title": "Color", "type": "string", "enum": ["red", "blue"]}}},
    "_constrained": lambda s: {**s, "properties": {"n": {"type": "integer", "default": 3}}},
    "_collections": lambda s: {**s, "properties": {**s["properties"], "pair": {
        k: v for k, v in s["properties"]["pair"].items() if k != "items"}}},
}


@pytest.mark.parametrize("function", SIGNATURES, ids=lambda f: f.__name__)
def test_schemas_of_signatures_match_the_sdks(function: Callable[..., str]) -> None:
    """Required and optional parameters, defaults (mutable ones too: copied per call, and still
    listed), unions, None, containers, nested types: the same schema but for the titles."""
    ours = _our_schema(function)
    ours = KNOWN.get(function.__name__, lambda s: s)(ours)
    theirs = untitled(_sdk_schema(function))
    if ours.get("required") == [] and "required" not in theirs:
        ours = {k: v for k, v in ours.items() if k != "required"}  # msgspec lists an empty one
    assert ours == theirs
