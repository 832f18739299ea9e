"""The core does no I/O (STYLE habit 1): importing mcpwire loads no I/O, concurrency, logging
or randomness module, and no module of mcpwire imports one.

The module check runs a fresh interpreter. msgspec itself may load some modules (for example
``_socket`` and ``time`` through ``uuid``/``datetime``); for any listed module that
``import msgspec`` alone already loads on this Python, the test asserts only that mcpwire adds
nothing beyond msgspec's own set.
"""

from __future__ import annotations

import ast
import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest
from _import_graph import find_cycle, imports, module_name

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
    assert {f.parent.name for f in files} >= {"wire", "server", "client", "types"}
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


# -- the import graph (STYLE: imports run one way) ------------------------------------------------

ROOMS = ("types", "wire", "server", "client", "auth")
PRIVATE_ROOMS = ("wire", "server", "client")
# What each room may import from mcpwire. Top-level modules (mcpwire/__init__.py, framing.py,
# _diagrams.py) assemble the rooms and may import any of them.
ALLOWED = {
    "types": {"types"},
    "wire": {"types", "wire"},
    "server": {"types", "wire", "server"},
    "client": {"types", "wire", "client"},
    "auth": {"wire", "auth"},  # OAuth: its own public path (mcpwire.auth), the state machine from wire
}
PUBLIC_MODULES = {"mcpwire", "mcpwire.types", "mcpwire.framing", "mcpwire.sessions", "mcpwire.tasks", "mcpwire.auth"}
OUTSIDE = ("adapters", "conformance", "fuzz", "examples", "docs/_ext")


def _module_name(path: Path) -> str:
    return module_name(path, PACKAGE, "mcpwire")


def _core_edges() -> dict[str, set[str]]:
    """Every module of mcpwire and the mcpwire modules it imports, wherever the import stands
    (module level, inside a function, under TYPE_CHECKING)."""
    modules = {_module_name(f): f for f in _sources()}
    edges: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for module, names in imports(name, path):
            candidates = [module] + [f"{module}.{n}" for n in names]
            targets |= {c for c in candidates if c in modules and c != name}
        # importing a.b.c runs a/__init__ and a/b/__init__ too; those are not dependencies of note
        edges[name] = {t for t in targets if not (modules[t].name == "__init__.py" and t in name)}
    return edges


def _room(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ROOMS else None


def test_the_core_has_no_import_cycle() -> None:
    edges = _core_edges()
    assert len(edges) > 30
    assert find_cycle(edges) == []


def test_rooms_import_one_way() -> None:
    wrong = []
    for module, targets in _core_edges().items():
        room = _room(module)
        if room is None:
            continue
        for target in targets:
            target_room = _room(target)
            if target_room is None or target_room not in ALLOWED[room]:
                wrong.append(f"{module} imports {target}")
    assert not wrong, wrong


def test_the_cycle_check_can_fail() -> None:
    assert find_cycle({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == ["a", "b", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) == []


def _outside_sources() -> list[Path]:
    root = PACKAGE.parent
    return sorted(p for d in OUTSIDE for p in (root / d).rglob("*.py"))


def _private_uses(tree: ast.AST) -> list[str]:
    """Imports of anything but the public modules, or of private names from them."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.split(".")[0] == "mcpwire":
            if node.module not in PUBLIC_MODULES:
                found.append(f"from {node.module} import ...")
            found += [f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_") and a.name != "__version__"]
        elif isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names
                      if a.name.split(".")[0] == "mcpwire" and a.name not in PUBLIC_MODULES]
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "mcpwire"
              and (node.attr.startswith("_") and node.attr != "__version__" or node.attr in PRIVATE_ROOMS)):
            found.append(f"mcpwire.{node.attr}")
    return found


@pytest.mark.parametrize("path", _outside_sources(), ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_code_outside_the_core_uses_public_names_only(path: Path) -> None:
    bad = _private_uses(ast.parse(path.read_text(encoding="utf-8")))
    assert not bad, f"{path.relative_to(PACKAGE.parent)} uses private parts of mcpwire: {bad}"


def test_the_private_use_scanner_can_fail() -> None:
    tree = ast.parse("from mcpwire.server.engine import Server\nimport mcpwire.wire.meta\n"
                     "from mcpwire import _x\nmcpwire._meta\nmcpwire.server\nfrom mcpwire.types import Tool\n")
    assert _private_uses(tree) == ["from mcpwire.server.engine import ...", "import mcpwire.wire.meta",
                                   "mcpwire._x", "mcpwire._meta", "mcpwire.server"]


def test_the_public_surface_is_narrow() -> None:
    assert 35 <= len(mcpwire.__all__) <= 55, len(mcpwire.__all__)
    assert len(set(mcpwire.__all__)) == len(mcpwire.__all__)
    for name in mcpwire.__all__:
        value = getattr(mcpwire, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert (getattr(value, "__doc__", None) or "").strip(), f"mcpwire.{name} has no docstring"
