"""The documentation stays true to the code.

- ``docs/state-machines.md`` is exactly what ``python -m mcpwire._diagrams`` prints, so the diagrams
  are generated from the transition tables and never edited by hand (STYLE 7);
- every relative link in README.md and docs/ points to a file that exists;
- every name in ``mcpwire.__all__`` resolves, is documented, and is on an API reference page;
- ``mkdocs build --strict`` succeeds (broken links, anchors, pages missing from the nav, and
  docstrings mkdocstrings cannot render all fail it);
- protocol rules are cited from public sources a reader can follow: links to the 2026-07-28
  specification pages (and anchors known to exist there), the JSON-RPC 2.0 specification, RFCs;
  never by bare section numbers of some other document.

The code examples themselves run in ``tests/integration/test_doc_examples.py``.
"""

from __future__ import annotations

import importlib.util
import inspect
import re
import subprocess
import sys
import types
import typing
from pathlib import Path

import pytest

import mcpwire

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def _markdown_files() -> list[Path]:
    return [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]


def _relative_links(text: str) -> list[str]:
    text = _CODE_SPAN.sub("", _FENCE.sub("", text))
    links = []
    for target in _LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
            continue  # a URL (http:, mailto:) or an anchor on the same page
        links.append(target)
    return links


def test_state_machines_page_is_generated_from_the_tables() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "mcpwire._diagrams"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    page = (DOCS / "state-machines.md").read_text()
    assert page == out, "docs/state-machines.md is stale: regenerate with `python -m mcpwire._diagrams > docs/state-machines.md`"


def test_link_extraction() -> None:
    text = "[a](x.md) [b](https://e.org/y) [c](#top) [d](sub/z.md#part) `[e](no.md)`\n```\n[f](no.md)\n```\n"
    assert _relative_links(text) == ["x.md", "sub/z.md#part"]


@pytest.mark.parametrize("page", _markdown_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_point_to_existing_files(page: Path) -> None:
    broken = []
    for target in _relative_links(page.read_text()):
        path = target.split("#", 1)[0]
        if path and not (page.parent / path).exists():
            broken.append(target)
    assert not broken, f"{page.relative_to(REPO)} links to missing files: {broken}"


def _is_alias_or_constant(obj: object) -> bool:
    # A type alias (Union, Literal, Callable[...], X | Y, list[...]) or a constant: documented by
    # the comment or string beside its assignment, which Python does not keep at run time.
    if isinstance(obj, (str, bytes, int, float, tuple, frozenset, dict, types.UnionType, types.GenericAlias)):
        return True
    return typing.get_origin(obj) is not None


def test_every_public_name_resolves_and_is_documented() -> None:
    assert len(set(mcpwire.__all__)) == len(mcpwire.__all__), "duplicates in mcpwire.__all__"
    undocumented = []
    for name in mcpwire.__all__:
        obj = getattr(mcpwire, name)  # AttributeError names the missing one
        if inspect.isclass(obj):
            doc = obj.__dict__.get("__doc__")  # its own, not one inherited from a base class
        elif inspect.isfunction(obj) or inspect.ismodule(obj):
            doc = obj.__doc__
        elif _is_alias_or_constant(obj):
            continue
        else:
            doc = getattr(obj, "__doc__", None)
        if not (doc and doc.strip()):
            undocumented.append(name)
    assert not undocumented, f"public names without a docstring: {undocumented}"


def test_api_reference_covers_the_public_surface() -> None:
    # The wire types have a page of their own (`::: mcpwire.types`, every public member);
    # docs/api/core.md lists the rest of mcpwire.__all__ one directive each, grouped by topic.
    listed = re.findall(r"^::: mcpwire\.(\w+)\s*$", (DOCS / "api" / "core.md").read_text(), re.M)
    expected = set(mcpwire.__all__) - set(mcpwire.types.__all__) - {"types", "__version__"}
    assert len(listed) == len(set(listed)), "a name is listed twice in docs/api/core.md"
    assert not expected - set(listed), f"add to docs/api/core.md: {sorted(expected - set(listed))}"
    assert not set(listed) - expected, f"not public, remove from docs/api/core.md: {sorted(set(listed) - expected)}"
    assert re.search(r"^::: mcpwire\.types\s*$", (DOCS / "api" / "types.md").read_text(), re.M)


def test_mkdocs_build_strict(tmp_path: Path) -> None:
    missing = [m for m in ("mkdocs", "mkdocstrings", "mkdocstrings_handlers.python") if not _importable(m)]
    if missing:
        pytest.skip(f"the docs extra is not installed (missing {', '.join(missing)}): pip install -e '.[docs]'")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO, capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    # The reference was generated, adapters included (griffe found mcpwire_adapters in adapters/).
    adapters = (tmp_path / "site" / "api" / "adapters" / "index.html").read_text()
    assert 'id="mcpwire_adapters.app.app.App"' in adapters
    assert 'id="mcpwire.Server"' in (tmp_path / "site" / "api" / "core" / "index.html").read_text()


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


# -- citations -------------------------------------------------------------------------------------
SPEC = "https://modelcontextprotocol.io/specification/2026-07-28"
# The specification pages the docs link to: docs/specification/2026-07-28/<page>.mdx in the
# modelcontextprotocol/modelcontextprotocol repository (a folder's index.mdx is the folder's
# own page). With each, the anchors checked to exist there: headings the specification's own
# pages link to, and on the schema page the `$defs` type names, lowercased. Add a page or an
# anchor here only after checking it in that repository.
SPEC_ANCHORS: dict[str, frozenset[str]] = {
    # 2025-11-25, the initialize-era revision mcpwire serves with its own rules (sessions, its
    # experimental tasks): the pages cited, their anchors checked against the specification's
    # source (docs/specification/2025-11-25 of modelcontextprotocol/modelcontextprotocol).
    "2025-11-25/basic/transports": frozenset({
        "session-management", "protocol-version-header", "sending-messages-to-the-server",
        "listening-for-messages-from-the-server", "resumability-and-redelivery", "security-warning", "stdio",
        "streamable-http", "backwards-compatibility"}),
    "2025-11-25/basic/lifecycle": frozenset({"version-negotiation", "initialization"}),
    "2025-11-25/basic/security_best_practices": frozenset({"session-hijacking"}),
    "2025-11-25/basic/utilities/ping": frozenset({"behavior-requirements"}),
    "2025-11-25/basic/utilities/tasks": frozenset({"protocol-errors", "input-required-status", "result-retrieval"}),
    "2025-11-25/basic": frozenset({"messages", "notifications", "responses", "result-responses", "error-responses"}),
    "2025-11-25/basic/authorization": frozenset({
        "authorization-server-location", "error-handling", "protected-resource-metadata-discovery-requirements",
        "runtime-insufficient-scope-errors", "token-handling"}),
    # The older initialize-era revisions the probe checks (mcpwire probe and fuzz: docs/probing.md), each
    # page and anchor checked in docs/specification/<revision> of the same repository.
    "2025-06-18/basic": frozenset({"messages", "notifications", "responses"}),
    "2025-06-18/basic/authorization": frozenset({"authorization-server-location", "error-handling", "token-handling"}),
    "2025-06-18/basic/lifecycle": frozenset({"initialization", "version-negotiation"}),
    "2025-06-18/basic/transports": frozenset({
        "listening-for-messages-from-the-server", "protocol-version-header", "resumability-and-redelivery",
        "security-warning", "sending-messages-to-the-server", "session-management", "stdio", "streamable-http",
        "backwards-compatibility"}),
    "2025-06-18/basic/utilities/ping": frozenset({"behavior-requirements"}),
    "2025-03-26/basic": frozenset({"batching", "messages", "notifications", "responses"}),
    "2025-03-26/basic/authorization": frozenset({"error-handling", "token-handling"}),
    "2025-03-26/basic/lifecycle": frozenset({"initialization", "version-negotiation"}),
    "2025-03-26/basic/transports": frozenset({
        "listening-for-messages-from-the-server", "resumability-and-redelivery", "security-warning",
        "sending-messages-to-the-server", "session-management", "stdio", "streamable-http", "backwards-compatibility"}),
    "2025-03-26/basic/utilities/ping": frozenset({"behavior-requirements"}),
    "2024-11-05/basic": frozenset(),
    "2024-11-05/basic/messages": frozenset({"responses"}),
    "2024-11-05/basic/lifecycle": frozenset({"initialization", "version-negotiation"}),
    "2024-11-05/basic/transports": frozenset({"http-with-sse", "security-warning", "stdio"}),
    "2024-11-05/basic/utilities/ping": frozenset({"behavior-requirements"}),
    "basic": frozenset({"error-codes", "ref-resolution", "responses", "messages", "json-schema-usage"}),
    "basic/authorization": frozenset({"token-handling", "error-handling", "scope-selection-strategy",
                                      "runtime-insufficient-scope-errors"}),
    "basic/authorization/authorization-server-discovery": frozenset({
        "authorization-server-location", "protected-resource-metadata-discovery-requirements"}),
    "basic/versioning": frozenset({"protocol-version-negotiation", "extension-negotiation",
                                   "backward-compatibility-with-initialization-based-versions"}),
    "basic/transports/streamable-http": frozenset({
        "backward-compatibility", "protocol-version-header", "server-validation", "request-metadata",
        "custom-headers-from-tool-parameters", "value-encoding", "schema-extension", "message-flow",
        "server-behavior-for-custom-headers",
    }),
    "basic/transports/stdio": frozenset({"backward-compatibility"}),
    "basic/patterns/cancellation": frozenset({"transport-specific-cancellation"}),
    "basic/patterns/mrtr": frozenset({"inputrequiredresult", "inputrequests", "multi-round-trip-requests"}),
    "basic/patterns/subscriptions": frozenset(),
    "basic/patterns/progress": frozenset(),
    "server/tools": frozenset({"x-mcp-header", "calling-tools", "error-handling"}),
    "server/resources": frozenset({"error-handling", "reading-resources", "annotations"}),
    "server/prompts": frozenset({"getting-a-prompt"}),
    "server/discover": frozenset(),
    "server/utilities/caching": frozenset(),
    "server/utilities/pagination": frozenset(),
    "server/utilities/logging": frozenset(),
    "server/utilities/completion": frozenset(),
    "client/elicitation": frozenset({"capabilities"}),
    "schema": frozenset({
        "headermismatcherror", "missingrequiredclientcapabilityerror", "unsupportedprotocolversionerror",
        "requestid", "jsonrpcerrorresponse", "requestmetaobject", "calltoolresult", "subscriptionfilter",
        "inputrequiredresult",
    }),
}
_SPEC_LINK = re.compile(r"https://modelcontextprotocol\.io/specification/([^/#)\s>\"']+)/?([^#)\s>\"']*)(?:#([^)\s>\"']*))?")
# "section 12", "13.2 step 6": section numbers of some document the reader cannot see. A section
# number is fine right after the public document it belongs to ("RFC 8259 section 8.1").
_SECTION = re.compile(r"\b(?:sections?|§)\s*\d+(?:\.\d+)*|\b\d+(?:\.\d+)+ steps? \d+", re.I)
_CITABLE = re.compile(r"(?:RFC \d+|JSON-RPC 2\.0|\[RFC \d+)\s*$")


def _top_level_pages() -> list[Path]:
    return [REPO / "README.md", *sorted(DOCS.glob("*.md"))]


@pytest.mark.parametrize("page", _top_level_pages(), ids=lambda p: str(p.relative_to(REPO)))
def test_protocol_rules_are_cited_from_public_sources(page: Path) -> None:
    text = page.read_text()
    problems = []
    flat = " ".join(text.lower().split())
    for phrase in ("wire reference", "presa"):
        if phrase in flat:
            problems.append(f"mentions {phrase!r}")
    for match in _SECTION.finditer(text):
        before = text[max(0, match.start() - 40): match.start()]
        if not _CITABLE.search(before):
            problems.append(f"bare section number {match.group(0)!r} after {before[-30:]!r}")
    problems += spec_link_problems(text)
    assert not problems, f"{page.relative_to(REPO)}: {problems}"


def spec_link_problems(text: str) -> list[str]:
    """What is wrong with the specification links in ``text``: a version other than 2026-07-28
    and the initialize-era revisions, a page or an anchor not in SPEC_ANCHORS (the one list of
    checked pages and anchors; another revision's pages are keyed with its prefix)."""
    problems = []
    for version, path, anchor in _SPEC_LINK.findall(text):
        path = path.rstrip("/")
        if version not in ("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"):
            problems.append(f"specification link to version {version!r}")
            continue
        if version != "2026-07-28":
            path = f"{version}/{path}"
        if path not in SPEC_ANCHORS:
            problems.append(f"specification page {path!r} is not known (add it to SPEC_ANCHORS once checked)")
        elif anchor and anchor not in SPEC_ANCHORS[path]:
            problems.append(f"anchor #{anchor} on {path!r} is not known to exist")
    return problems


def test_citation_check_catches_private_section_numbers() -> None:
    assert _SECTION.search("answered -32602 (section 12)")
    assert _SECTION.search("a BOM is skipped (13.2 step 6)")
    assert _CITABLE.search("as [RFC 8259 ")
    assert not _CITABLE.search("the wire reference ")
    found = _SPEC_LINK.findall(f"[x]({SPEC}/basic/patterns/cancellation#transport-specific-cancellation)")
    assert found == [("2026-07-28", "basic/patterns/cancellation", "transport-specific-cancellation")]
