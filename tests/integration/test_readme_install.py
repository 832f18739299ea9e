"""README.md shows a user the ``pip install`` line beside the two set-up commands of the
repository, and which extra each role needs, naming only extras pyproject.toml declares."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _install_paragraph() -> tuple[list[str], str]:
    """The README's first indented block (its commands) and the paragraph right after it."""
    lines = (REPO / "README.md").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("    "))
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith("    "))
    block = [line.strip() for line in lines[start:end]]
    rest = lines[end:]
    first = next(i for i, line in enumerate(rest) if line.strip())
    after = next((i for i in range(first, len(rest)) if not rest[i].strip()), len(rest))
    return block, " ".join(rest[first:after])


def test_the_first_commands_stay_the_set_up_ones() -> None:
    block, _ = _install_paragraph()
    assert [line.split("#")[0].strip() for line in block[:2]] == ["bash scripts/demo", "bash scripts/test"]


def test_the_install_line_follows_them_with_the_extra_of_each_role() -> None:
    _, paragraph = _install_paragraph()
    assert paragraph.startswith("Install: `pip install 'mcpwire[trio]'`"), paragraph
    extras = set(tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    named = set(re.findall(r"mcpwire\[([a-z]+)\]", paragraph))
    assert named <= extras, named - extras
    assert {"trio", "client", "asgi", "probe", "oauth", "redis"} <= named, named
    for role in ("serve_http", "`mcpwire` command", "BlockingClient", "serve_stdio", "ASGI", "probe", "OAuth", "Redis"):
        assert role in paragraph, role
