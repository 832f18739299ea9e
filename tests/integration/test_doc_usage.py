"""What the usage docs tell a reader, held to the code (the examples themselves run in
``test_doc_examples.py``):

- ``completion/complete``: docs/client.md says what ``ref`` is, both reference types, and its
  examples complete with each;
- results are read one way in the examples (``result.value``, the typed result), and
  docs/client.md says when ``data`` is the one to read;
- docs/embedding.md's table of what ``exchange.complete`` takes per kind of request is what the
  engine accepts and refuses;
- server.md and asgi.md tell that handlers under ASGI run on the host's loop, and asgi.md's
  anyio handler does run under uvicorn on asyncio where ``trio.sleep`` fails as it says.
"""

from __future__ import annotations

import logging
import re
import time
import typing
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from _asgi_servers import serve_uvicorn

import mcpwire
from mcpwire import (Client, HttpExchange, HttpRequest, HttpResponseParser, LocalProtocolError, ResponseHead, ResultReceived,
                     Server)
from mcpwire.types import (CallToolResult, CompleteResult, Completion, GetPromptResult, Implementation, ListToolsResult, Prompt,
                           ReadResourceResult, Resource, Tool)
from mcpwire_adapters import App, asgi_app

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
_FENCE = re.compile(r"^```python\n(.*?)^```", re.M | re.S)


def _python_blocks(page: Path) -> list[str]:
    return _FENCE.findall(page.read_text())


def _pages() -> list[Path]:
    return [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]


# -- completion/complete: what ref is -----------------------------------------------------------
def test_client_docs_say_what_ref_is_and_complete_with_both_kinds() -> None:
    page = (DOCS / "client.md").read_text()
    assert "### Completions: what `ref` is" in page
    section = page.split("### Completions: what `ref` is", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    for kind in ('{"type": "ref/prompt", "name":', '{"type": "ref/resource", "uri":'):
        assert kind in section, kind
    for name in ("PromptReference", "ResourceTemplateReference"):
        assert name in section, name
    code = "\n".join(_python_blocks(DOCS / "client.md"))
    calls = re.findall(r"\.complete\((\w+)", code)
    assert {"prompt", "template"} <= set(calls), calls
    assert '"ref/prompt"' in code and '"ref/resource"' in code
    # Every other mention of complete(ref, ...) on the page leads to the explanation.
    for paragraph in page.replace(section, "").split("\n\n"):
        if "complete(ref" in paragraph:
            assert "#completions-what-ref-is" in paragraph, paragraph


# -- result.value or result.data ----------------------------------------------------------------
def test_examples_read_results_as_value() -> None:
    for page in _pages():
        for block in _python_blocks(page):
            assert not re.search(r'\.data\["(content|structuredContent|contents|messages|completion)"\]', block), (
                f"{page.name}: read the typed result, result.value..., in examples")


def test_client_docs_say_when_to_read_data() -> None:
    page = (DOCS / "client.md").read_text()
    section = page.split("### Reading a result: `value` or `data`", 1)[1].split("\n#", 1)[0]
    for point in ("typed result", "exactly as the server sent it", "`value` is `None`", "problem"):
        assert point in section, point


# -- what exchange.complete takes ---------------------------------------------------------------
def _complete_table() -> dict[str, list[str]]:
    """docs/embedding.md's table: event class -> the result types in its second column."""
    text = (DOCS / "embedding.md").read_text()
    start = text.index("| `exchange.event` | `complete(result)` takes |")
    rows = {}
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        event_cell, takes_cell = line.split("|")[1:3]
        event = re.findall(r"`(\w+)`", event_cell)[0]
        rows[event] = re.findall(r"`(\w+)`", takes_cell)
    return rows


def _server() -> Server:
    server = Server(Implementation(name="table", version="1"), keyring=mcpwire.Keyring.single(b"k" * 32),
                    completions=True)
    server.add_tool(Tool(name="t", input_schema={"type": "object"}))
    server.add_resource(Resource(uri="test://r", name="r"))
    server.add_prompt(Prompt(name="p"))
    server.hand_over_lists(["tools/list"])
    return server


REQUESTS = {
    "ToolCall": lambda c: c.call_tool("t", {}),
    "ResourceRead": lambda c: c.read_resource("test://r"),
    "PromptGet": lambda c: c.get_prompt("p"),
    "CompletionRequest": lambda c: c.complete({"type": "ref/prompt", "name": "p"}, "x", ""),
    "ListRequest": lambda c: c.list_tools(),
}
RESULTS: dict[str, Any] = {
    "str": "done",
    "CallToolResult": CallToolResult(content=[]),
    "ReadResourceResult": ReadResourceResult(contents=[]),
    "GetPromptResult": GetPromptResult(messages=[]),
    "CompleteResult": CompleteResult(completion=Completion(values=["a"])),
    "ListToolsResult": ListToolsResult(tools=[], ttl_ms=0, cache_scope="private"),
}


def _exchange(server: Server, kind: str) -> HttpExchange:
    client = Client(Implementation(name="c", version="1"))
    request = REQUESTS[kind](client)
    answer = server.receive_http(HttpRequest(method="POST", target="/mcp", headers=request.headers, body=request.body),
                                 now=time.time())
    assert isinstance(answer, HttpExchange) and type(answer.event).__name__ == kind, answer
    return answer


def test_the_embedding_table_lists_every_kind_of_exchange() -> None:
    # Every event an exchange answered by complete() carries (a TaskResultWanted is answered by
    # the task, not by the host's result).
    kinds = {kind.__name__ for kind in typing.get_args(mcpwire.ServerEvent)} - {"TaskResultWanted"}
    assert set(_complete_table()) == set(REQUESTS) == kinds


@pytest.mark.parametrize("kind", sorted(REQUESTS))
def test_exchange_complete_takes_what_the_table_says(kind: str) -> None:
    server = _server()
    takes = _complete_table()[kind]
    assert takes and set(takes) <= set(RESULTS), takes
    for name in takes:
        head, *_ = _exchange(server, kind).complete(RESULTS[name])
        assert isinstance(head, ResponseHead) and head.status == 200, (name, head)
    for name in set(RESULTS) - set(takes):
        with pytest.raises(LocalProtocolError, match="must be answered with"):
            _exchange(server, kind).complete(RESULTS[name])


# -- handlers under ASGI run on the host's loop ---------------------------------------------------
def test_server_and_asgi_docs_say_handlers_run_on_the_hosts_loop() -> None:
    server_page = " ".join((DOCS / "server.md").read_text().split())
    asgi_page = " ".join((DOCS / "asgi.md").read_text().split())
    assert "## Handlers run on the host's event loop" in asgi_page
    for page in (server_page, asgi_page):
        assert "anyio.sleep" in page and "trio.sleep" in page and "RuntimeError: must be called from async context" in page


def _call(url: str, name: str, arguments: dict[str, Any]) -> Any:
    client = Client(Implementation(name="c", version="1"))
    request = client.call_tool(name, arguments)
    http = urllib.request.Request(url, data=request.body, headers=request.header_dict)
    with urllib.request.urlopen(http, timeout=30) as response:
        parser = HttpResponseParser(client, request, status=response.status,
                                    content_type=response.headers.get("Content-Type"))
        events = parser.feed(response.read()) + parser.close()
    assert isinstance(events[-1], ResultReceived), events
    return events[-1].value


def test_the_anyio_handler_of_asgi_md_runs_on_asyncio_where_trio_sleep_fails(caplog: pytest.LogCaptureFixture) -> None:
    [block] = [b for b in _python_blocks(DOCS / "asgi.md") if "anyio.sleep" in b]
    namespace: dict[str, Any] = {"__name__": "asgi_md"}
    exec(compile(block, "docs/asgi.md", "exec"), namespace)  # noqa: S102 - the page's own example
    waits: App = namespace["waits"]

    @waits.tool()
    async def trio_nap() -> str:
        """What the page warns against."""
        import trio

        await trio.sleep(0.01)
        return "slept"

    with serve_uvicorn(asgi_app(waits)) as port:  # uvicorn: asyncio
        url = f"http://127.0.0.1:{port}/mcp"
        assert _call(url, "wait", {"seconds": 1}).content[0].text == "waited 1 s"
        with caplog.at_level(logging.ERROR, logger="mcpwire_adapters.app"):
            failed = _call(url, "trio_nap", {})
        assert failed.is_error and failed.content[0].text == "Tool 'trio_nap' failed"
        [logged] = [r.getMessage() for r in caplog.records if "trio_nap" in r.getMessage()]
        assert "a trio call in a handler running on asyncio: write handlers with anyio" in logged, logged
