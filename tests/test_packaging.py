"""The distribution as users get it: build the wheel, install it into a fresh virtualenv.

Checks what an editable install hides: both packages ship ``py.typed``; the adapters ship as
``mcpwire_adapters`` and never as a bare top-level ``adapters``; the core's one unconditional
dependency is msgspec (installing the wheel alone brings nothing else); the console script, when
``[project.scripts]`` declares one, is in the wheel and installed.

Needs PyPI for the build backend (setuptools, in pip's isolated build) and for msgspec and
anyio; about 20 s in all. The installed interpreter runs isolated (``-I``) from a folder outside
the repository, so it can only import what the wheel installed.
"""

from __future__ import annotations

import email.parser
import shutil
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())

# Left out of the copy that is built: setuptools reuses a stale build/ folder, so files deleted
# from the source could still reach the wheel.
_NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis", "results"
)


def _run(*args: str | Path, cwd: Path) -> str:
    result = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True)
    assert result.returncode == 0, f"{' '.join(map(str, args))} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "src"
    shutil.copytree(REPO, source, ignore=_NOT_SOURCE, symlinks=True)
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", tmp / "dist", source, cwd=tmp)
    [built] = (tmp / "dist").glob("mcpwire-*.whl")
    return built


def _new_venv(tmp_path_factory: pytest.TempPathFactory, requirement: str) -> Path:
    env = tmp_path_factory.mktemp("venv") / "v"
    _run(sys.executable, "-m", "venv", env, cwd=env.parent)
    _run(env / "bin" / "python", "-m", "pip", "install", "--quiet", requirement, cwd=env)
    return env


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The wheel alone. Shared by the tests of this module, so none may install into it: what
    one test added would be seen by the others in whatever order they run."""
    yield _new_venv(tmp_path_factory, str(wheel))


@pytest.fixture(scope="module")
def asgi_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The wheel with its ``asgi`` extra, in a virtualenv of its own."""
    yield _new_venv(tmp_path_factory, f"{wheel}[asgi]")


def _metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as zf:
        [name] = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        return email.parser.Parser().parsestr(zf.read(name).decode())


def test_wheel_layout(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert "mcpwire/py.typed" in names
    assert "mcpwire_adapters/py.typed" in names
    assert "mcpwire/types/__init__.py" in names
    top = {n.split("/", 1)[0] for n in names}
    assert {t for t in top if not t.endswith(".dist-info")} == {"mcpwire", "mcpwire_adapters"}, top
    # The adapters' modules all shipped, under their package name.
    shipped = {n.removeprefix("mcpwire_adapters/") for n in names if n.startswith("mcpwire_adapters/")}
    assert {p.name for p in (REPO / "adapters").glob("*.py")} <= shipped


def test_core_depends_on_msgspec_alone(wheel: Path) -> None:
    requires = _metadata(wheel).get_all("Requires-Dist") or []
    unconditional = [r for r in requires if ";" not in r]
    assert [r.split(">", 1)[0].split("=", 1)[0].split("<", 1)[0].strip() for r in unconditional] == ["msgspec"]
    # Everything else hangs on an extra.
    assert all("extra ==" in r for r in requires if ";" in r), requires


def test_installed_core_imports_with_msgspec_only(venv: Path) -> None:
    py = venv / "bin" / "python"  # run from the venv's folder: the repository is not on sys.path
    out = _run(py, "-I", "-c", "import mcpwire; print(mcpwire.__version__, mcpwire.__file__)", cwd=venv)
    version, where = out.split()
    assert version == PYPROJECT["project"]["version"]
    assert "site-packages" in where and not where.startswith(str(REPO))
    installed = _run(py, "-m", "pip", "list", "--format=freeze", "--exclude", "pip", "--exclude", "setuptools",
                     cwd=venv)
    assert sorted(line.split("==")[0].lower() for line in installed.split()) == ["mcpwire", "msgspec"]
    # The adapters are there under their own name; a bare `adapters` is not.
    code = "import importlib.util as u; print(u.find_spec('mcpwire_adapters').origin, u.find_spec('adapters'))"
    out = _run(py, "-I", "-c", code, cwd=venv)
    origin, bare = out.split()
    assert "site-packages" in origin and bare == "None"


def test_installed_adapters_import_with_their_extra(asgi_venv: Path) -> None:
    py = asgi_venv / "bin" / "python"  # run from the venv's folder: the repository is not on sys.path
    code = "import mcpwire_adapters as a; print(a.App.__module__, a.AsgiApp.__module__)"
    out = _run(py, "-I", "-c", code, cwd=asgi_venv)
    assert out.split() == ["mcpwire_adapters.app", "mcpwire_adapters.asgi"]


def test_console_script(wheel: Path, venv: Path) -> None:
    scripts = PYPROJECT["project"].get("scripts", {})
    if "mcpwire" not in scripts:
        pytest.skip("pyproject.toml declares no `mcpwire` console script")
    with zipfile.ZipFile(wheel) as zf:
        [name] = [n for n in zf.namelist() if n.endswith(".dist-info/entry_points.txt")]
        entry_points = zf.read(name).decode()
        module = scripts["mcpwire"].split(":", 1)[0]
        assert module.replace(".", "/") + ".py" in zf.namelist(), f"{module} is not in the wheel"
    assert f"mcpwire = {scripts['mcpwire']}" in entry_points
    assert (venv / "bin" / "mcpwire").exists()
