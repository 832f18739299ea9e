"""The core does no I/O (STYLE habit 1): importing mcpwire loads no I/O, concurrency, logging
or randomness module, and no module of mcpwire imports one.

The module check runs a fresh interpreter. msgspec itself may load some modules (for example
``_socket`` and ``time`` through ``uuid``/``datetime``); for any listed module that
``import msgspec`` alone already loads on this Python, the test asserts only that mcpwire adds
nothing beyond msgspec's own set.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import mcpwire

FORBIDDEN_LOADED = ("socket", "asyncio", "trio", "threading", "selectors", "ssl", "h11", "logging", "random")
FORBIDDEN_IMPORTS = {"time", "random", "socket", "threading", "asyncio", "logging", "trio", "h11"}
PACKAGE = Path(mcpwire.__file__).parent


def _modules_after(statement: str) -> set[str]:
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True,
                          cwd=str(PACKAGE.parent))
    return set(json.loads(done.stdout))


@pytest.fixture(scope="module")
def loaded() -> tuple[set[str], set[str]]:
    return _modules_after("import msgspec"), _modules_after("import mcpwire")


def _family(modules: set[str], name: str) -> set[str]:
    return {m for m in modules if m == name or m.startswith(name + ".")}


@pytest.mark.parametrize("name", FORBIDDEN_LOADED)
def test_import_mcpwire_loads_no_io_module(loaded: tuple[set[str], set[str]], name: str) -> None:
    baseline, after = loaded
    assert "mcpwire" in after
    added = _family(after, name) - _family(baseline, name)
    assert not added, f"import mcpwire loads {sorted(added)}"
    if not _family(baseline, name):
        assert not _family(after, name)


def test_optional_validator_library_is_not_imported(loaded: tuple[set[str], set[str]]) -> None:
    _, after = loaded
    assert not _family(after, "jsonschema") and not _family(after, "mcpwire_adapters")


def _sources() -> list[Path]:
    files = sorted(PACKAGE.rglob("*.py"))
    assert any(f.name == "_server.py" for f in files) and any(f.parent.name == "types" for f in files)
    return files


def _imported_roots(tree: ast.AST) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) in (
                "__import__", "import_module"):
            for arg in node.args[:1]:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    roots.add(arg.value.split(".")[0])
    return roots


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_source_imports_nothing_forbidden(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    bad = _imported_roots(tree) & FORBIDDEN_IMPORTS
    assert not bad, f"{path.name} imports {sorted(bad)}"


def test_the_scanner_sees_nested_and_dynamic_imports() -> None:
    tree = ast.parse("def f():\n    import time\n    from asyncio import sleep\n    __import__('random')\n")
    assert _imported_roots(tree) >= {"time", "asyncio", "random"}
