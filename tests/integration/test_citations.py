"""Docstrings and comments cite what a reader of the repository can follow.

Every ``.py`` file under ``mcpwire/``, ``adapters/``, ``conformance/``, ``fuzz/`` and
``examples/`` is scanned for citations of a document the reader does not have: the phrase
"wire reference", a bare "section 12" / "sections 8.3, 11" (a section number is fine right after
the public document it belongs to: "RFC 8259 section 8.1", "JSON-RPC 2.0 section 5"), "13.2 step
7", "reference 10.3", and the names "presa" and "snodo". Cite instead the 2026-07-28
specification's pages (a URL, or the short form "specification: Basic > Transports > stdio"),
the schema's ``$defs`` names, JSON-RPC 2.0 or an RFC, or say plainly that the rule is
mcpwire's own ("mcpwire's order", "mcpwire's bound"). ``tests/integration/test_docs.py`` holds README.md
and docs/*.md to the same rule.

A specification link in the code must name a page, and an anchor, known to exist there
(``SPEC_ANCHORS`` in ``tests/integration/test_docs.py``, the one list of checked pages and anchors).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_docs import spec_link_problems

REPO = Path(__file__).resolve().parents[2]
SCANNED = ("mcpwire", "adapters", "conformance", "fuzz", "examples")

ALLOWED: frozenset[str] = frozenset()

_PRIVATE = re.compile(
    r"\bwire(?:\s|#)+reference\b"  # also across a line break inside a comment block
    r"|\bsections?\s+\d+(?:\.\d+)*|§\s*\d+(?:\.\d+)*"
    r"|\b\d+(?:\.\d+)+\s+steps?\s+\d+"
    r"|\breference\s+(?:section\s+)?\d+(?:\.\d+)*"
    r"|\bpresa\b|\bsnodo\b",
    re.I,
)
# A section number right after the public document it belongs to.
_PUBLIC_DOCUMENT = re.compile(r"(?:\bRFC ?\d+|\bJSON-RPC 2\.0|\bOAuth 2\.1|\bOpenID Connect Discovery(?: 1\.0)?)\s*$")


def private_citations(text: str) -> list[tuple[int, str]]:
    """(line number, matched text) of every citation of a private document in ``text``."""
    found: list[tuple[int, str]] = []
    for match in _PRIVATE.finditer(text):
        if match.group(0)[:1] in "sS§" and _PUBLIC_DOCUMENT.search(text[max(0, match.start() - 40):match.start()]):
            continue
        found.append((text.count("\n", 0, match.start()) + 1, " ".join(match.group(0).split())))
    return found


def _scanned_files() -> list[Path]:
    files: list[Path] = []
    for top in SCANNED:
        files.extend(p for p in (REPO / top).rglob("*.py") if ".venv" not in p.parts)
    return sorted(files)


def _relative(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def test_the_scanner_catches_planted_mentions() -> None:
    text = (
        '"""Owns (wire reference sections 2 and 2.1).\n'
        "\n"
        'Step 9 (section 2 step 9).\n"""\n'
        "# The 256-byte bound (wire\n"
        "# reference 1) is the envelope's.\n"
        "x = 1  # Section 12: 400 on HTTP; see also (13.2 steps 1-5)\n"
        "# as snodo's client uses; Presa does the same; reference 10.3; §14\n"
    )
    assert private_citations(text) == [
        (1, "wire reference"), (1, "sections 2"), (3, "section 2"), (5, "wire # reference"),
        (7, "Section 12"), (7, "13.2 steps 1"), (8, "snodo"), (8, "Presa"), (8, "reference 10.3"),
        (8, "§14"),
    ]


def test_the_scanner_lets_public_citations_and_ordinary_words_through() -> None:
    text = (
        "# JSON text must be UTF-8 throughout (RFC 8259 section 8.1).\n"
        "# null otherwise (JSON-RPC 2.0 section 5; RFC 3986 section 3.1; RFC 9112 section 9.3)\n"
        '"""$defs.ResourceLink: a reference to a resource; steps 1-4 of mcpwire\'s order."""\n'
        'step1 = {"step1": ask("Step 1: What is your name?")}  # representation, wirereference\n'
        "# https://modelcontextprotocol.io/specification/2026-07-28/basic#error-codes\n"
    )
    assert private_citations(text) == []


def test_the_allow_list_names_only_files_still_being_cleaned() -> None:
    stale = []
    for name in sorted(ALLOWED):
        path = REPO / name
        if not path.is_file():
            stale.append(f"{name} does not exist")
        elif not private_citations(path.read_text()):
            stale.append(f"{name} has no private citation left: remove it from ALLOWED")
    assert not stale, stale


def test_code_cites_only_what_a_reader_can_follow() -> None:
    files = _scanned_files()
    assert len(files) > 50, "the scan found too few files: is SCANNED right?"
    problems = []
    for path in files:
        if _relative(path) in ALLOWED:
            continue
        for line, found in private_citations(path.read_text()):
            problems.append(f"{_relative(path)}:{line}: {found!r}")
    assert not problems, "cite the specification, the schema, JSON-RPC 2.0 or an RFC, or say the rule is mcpwire's:\n" + "\n".join(problems)


@pytest.mark.parametrize("top", SCANNED)
def test_specification_links_in_code_name_known_pages(top: str) -> None:
    problems = []
    for path in _scanned_files():
        if not _relative(path).startswith(top + "/"):
            continue
        problems += [f"{_relative(path)}: {problem}" for problem in spec_link_problems(path.read_text())]
    assert not problems, problems
