"""Reading a package's imports from its source, for the tests that hold its floors
(tests/integration/test_import_hygiene.py for the core, tests/adapters/test_layers.py for the
adapters): every import counts, at module level, inside a function or under TYPE_CHECKING."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path


def module_name(path: Path, top: Path, package: str) -> str:
    """The dotted name of the module in ``path``, under ``top`` imported as ``package``."""
    parts = list(path.relative_to(top).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([package, *parts])


def imports(name: str, path: Path) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(module, names) for every import statement of module ``name`` (its source in ``path``),
    relative imports resolved: ``from m import a, b`` gives ``(m, (a, b))``, ``import m`` gives
    ``(m, ())``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package.split(".")
                module = ".".join(base[: len(base) - (node.level - 1)] + ([module] if module else []))
            yield module, tuple(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, ()


def find_cycle(edges: Mapping[str, set[str]]) -> list[str]:
    """One import circle, as a path that returns to its start, or [] when there is none."""
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for target in sorted(edges.get(node, ())):
            if state.get(target) == 1:
                return [*stack[stack.index(target):], target]
            if target not in state and (found := visit(target)):
                return found
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(edges):
        if node not in state and (found := visit(node)):
            return found
    return []
