"""The adapters' floors, read from the source: every import of every module under adapters/,
at module level, under ``if TYPE_CHECKING:`` and inside functions alike, must run downward.

    cli                       may import anything below it
    testing   serve           app, client, oauth, state (and errors, callbacks); not each other
    app       client          oauth, state; never each other
    oauth                     state
    state     errors  callbacks  tracing   only the core (tracing: and OpenTelemetry)

No module imports a module that imports it back (no circle, type-only imports counted), and no
name with a leading underscore is imported across modules, so one package never leans on
another's private parts. The checks are tried on a small made-up graph too, so that they can fail.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from _import_graph import find_cycle, imports, module_name

import mcpwire_adapters
from mcpwire_adapters._moved import MOVED
from mcpwire_adapters.errors import McpwireAdapterError

ADAPTERS = Path(mcpwire_adapters.__file__).resolve().parent
ROOT = "mcpwire_adapters"
BOTTOM = {"errors", "callbacks", "tracing"}
ALLOWED: dict[str, set[str]] = {
    "cli": {"testing", "serve", "app", "client", "oauth", "state", *BOTTOM},
    "testing": {"app", "client", "oauth", "state", *BOTTOM},
    "serve": {"app", "client", "oauth", "state", *BOTTOM},
    "app": {"oauth", "state", *BOTTOM},
    "client": {"oauth", "state", *BOTTOM},
    "oauth": {"state", *BOTTOM},
    "state": set(),
    "errors": set(),
    "callbacks": set(),
    "tracing": set(),
}


def _sources() -> dict[str, Path]:
    return {module_name(p, ADAPTERS, ROOT): p for p in sorted(ADAPTERS.rglob("*.py"))}


def _imports(name: str, path: Path) -> Iterator[tuple[str, str]]:
    """(imported module, imported name or "") for every import of mcpwire_adapters in the file."""
    for module, names in imports(name, path):
        if module.split(".")[0] != ROOT:
            continue
        if not names:
            yield module, ""
        for imported in names:
            # `from . import x` names a module when x is one
            yield (f"{module}.{imported}", "") if f"{module}.{imported}" in SOURCES else (module, imported)


SOURCES = _sources()
EDGES: dict[str, set[str]] = {
    name: {module for module, _ in _imports(name, path) if module != name} for name, path in SOURCES.items()
}


def _part(module: str) -> str:
    """The package (or bottom module) of mcpwire_adapters a module belongs to; "" for the root."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def floor_violations(edges: Mapping[str, set[str]]) -> list[str]:
    bad = []
    for source, targets in edges.items():
        part = _part(source)
        if part in ("", "_moved"):  # the package's own front door and its alias table
            continue
        for target in targets:
            other = _part(target)
            if other != part and other not in ALLOWED[part]:
                bad.append(f"{source} -> {target}")
    return sorted(bad)


def test_every_package_is_in_the_floor_table() -> None:
    parts = {_part(name) for name in SOURCES} - {"", "_moved"}
    assert parts == set(ALLOWED), parts ^ set(ALLOWED)


def test_imports_run_down_the_floors() -> None:
    assert floor_violations(EDGES) == []


def test_app_and_client_never_import_each_other() -> None:
    crossing = [f"{s} -> {t}" for s, ts in EDGES.items() for t in ts if {_part(s), _part(t)} == {"app", "client"}]
    assert crossing == []


def test_no_import_circle_in_the_adapters() -> None:
    # A package's __init__ is left out as a target: importing a.b runs a/__init__.py first, but
    # an __init__ here imports its modules only on first use (module __getattr__) or not at all.
    edges = {s: {t for t in ts if SOURCES.get(t, Path()).name != "__init__.py"} for s, ts in EDGES.items()}
    assert find_cycle(edges) == []


def test_no_private_name_is_imported_from_another_module() -> None:
    bad = []
    for name, path in SOURCES.items():
        for module, imported in _imports(name, path):
            if module == name or _part(name) == "":
                continue
            last = imported or module.rpartition(".")[2]
            if last.startswith("_") and not last.startswith("__"):
                bad.append(f"{name}: {module} {imported}".strip())
    assert bad == []


def test_the_checks_can_fail() -> None:
    made_up = {
        f"{ROOT}.state.a": {f"{ROOT}.app.b"},   # state reaches up
        f"{ROOT}.app.b": {f"{ROOT}.client.c"},  # app takes client
        f"{ROOT}.client.c": {f"{ROOT}.app.b"},  # and back: a circle
    }
    assert floor_violations(made_up) == [
        f"{ROOT}.app.b -> {ROOT}.client.c", f"{ROOT}.client.c -> {ROOT}.app.b", f"{ROOT}.state.a -> {ROOT}.app.b",
    ]
    assert find_cycle(made_up) == [f"{ROOT}.app.b", f"{ROOT}.client.c", f"{ROOT}.app.b"]


# -- one error root ---------------------------------------------------------------------------------
def _all_modules() -> list[str]:
    names = [info.name for info in pkgutil.walk_packages(mcpwire_adapters.__path__, f"{ROOT}.")]
    return sorted(n for n in names if not n.endswith("__main__"))


def test_every_error_the_adapters_define_has_the_one_root() -> None:
    outside = []
    seen = 0
    for name in _all_modules():
        module = importlib.import_module(name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == name and issubclass(cls, BaseException):
                seen += 1
                if not issubclass(cls, McpwireAdapterError):
                    outside.append(f"{name}.{cls.__qualname__}")
    assert outside == []
    assert seen >= 15, seen  # the walk did find the errors


def test_usage_errors_are_value_errors_too() -> None:
    from mcpwire_adapters.client.http import HttpClient
    from mcpwire_adapters.errors import UsageError

    with pytest.raises(UsageError) as caught:
        HttpClient("ftp://127.0.0.1/mcp")
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, McpwireAdapterError)


# -- the old flat paths, for one release ------------------------------------------------------------
@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_module_path_warns_and_is_the_new_module(old: str) -> None:
    new = importlib.import_module(f"{ROOT}.{MOVED[old]}")
    sys.modules.pop(f"{ROOT}.{old}", None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(f"{ROOT}.{old}")
    assert module is new
    messages = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    assert messages == [f"{ROOT}.{old} has moved to {ROOT}.{MOVED[old]}; the old path goes in the next release"]
    assert caught[0].filename == __file__  # the warning points at the import that used the old path


def test_the_old_paths_name_existing_modules_only() -> None:
    assert all(f"{ROOT}.{new}" in SOURCES for new in MOVED.values())
    assert not set(MOVED) & {name.split(".")[1] for name in SOURCES if "." in name}


def test_the_findings_old_attribute_names_warn_and_give_the_subject() -> None:
    from mcpwire_adapters.testing.verdict import Finding, Outcome

    finding = Finding.of("the subject", Outcome("pass"))
    with pytest.warns(DeprecationWarning, match="Finding.check is now Finding.subject"):
        assert finding.check == "the subject"
    with pytest.warns(DeprecationWarning, match="Failure.steps is now Failure.subject"):
        assert finding.steps == "the subject"
