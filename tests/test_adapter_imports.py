"""What importing a part of mcpwire_adapters loads, checked in a fresh interpreter (as
tests/test_import_hygiene.py does for the core): the stdio client needs no h11, and the
transport-neutral client session neither h11 nor trio.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _modules_after(statement: str) -> set[str]:
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True, cwd=str(REPO))
    return set(json.loads(done.stdout))


def _family(modules: set[str], name: str) -> set[str]:
    return {m for m in modules if m == name or m.startswith(name + ".")}


def test_the_stdio_client_does_not_load_h11() -> None:
    loaded = _modules_after("import mcpwire_adapters.stdio_client")
    assert "mcpwire_adapters.stdio_client" in loaded and "mcpwire_adapters.session" in loaded
    assert not _family(loaded, "h11"), sorted(_family(loaded, "h11"))
    assert "mcpwire_adapters.http_client" not in loaded


@pytest.mark.parametrize("name", ["h11", "trio"])
def test_the_client_session_loads_no_transport(name: str) -> None:
    loaded = _modules_after("import mcpwire_adapters.session")
    assert not _family(loaded, name), sorted(_family(loaded, name))


def test_the_check_sees_h11_when_it_is_loaded() -> None:
    assert "h11" in _modules_after("import mcpwire_adapters.http_client")


def test_shared_client_names_are_one_object_wherever_imported() -> None:
    from mcpwire_adapters import http_client, session, stdio_client

    for name in ("Session", "Subscription", "ServerError", "TransportError", "InputHandler", "ListenEvent"):
        assert getattr(http_client, name) is getattr(session, name), name
    assert issubclass(stdio_client.StdioClient, session.Session)
    assert issubclass(http_client.HttpClient, session.Session)
