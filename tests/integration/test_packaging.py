"""The distribution as users get it: build the sdist and the wheel, install the wheel into a
fresh virtualenv.

Checks what an editable install hides: both packages ship ``py.typed``; the adapters ship as
``mcpwire_adapters`` and never as a bare top-level ``adapters``; the core's one unconditional
dependency is msgspec (installing the wheel alone brings nothing else); the console script, when
``[project.scripts]`` declares one, is in the wheel and installed. The sdist stands alone: it
carries every tracked file but ``.ci/`` and ``.gitignore`` (the tests, their vendored schemas,
the conformance fixture, fuzz, docs, examples, scripts), LICENSE and CHANGELOG.md; both pass
``twine check --strict``, and the metadata is what PyPI accepts (known classifiers, license).

Both are built as for publishing, by ``python -m build`` (the wheel from the sdist). Needs PyPI
for the build backend (setuptools, in build's isolated environment) and for msgspec and anyio;
about 30 s in all. The installed interpreter runs isolated (``-I``) from a folder outside
the repository, so it can only import what the wheel installed.
"""

from __future__ import annotations

import email.parser
import hashlib
import json
import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from _dists import built_dists

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())


def _run(*args: str | Path, cwd: Path) -> str:
    result = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True)
    assert result.returncode == 0, f"{' '.join(map(str, args))} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sdist, and the wheel built from it, as ``python -m build`` makes them for PyPI (built
    once per session, shared with test_extras_install.py: ``tests/_dists.py``)."""
    return built_dists(tmp_path_factory)


@pytest.fixture(scope="module")
def wheel(dists: dict[str, Path]) -> Path:
    return dists["wheel"]


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


@pytest.fixture(scope="module")
def client_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The wheel with its ``client`` extra (anyio, h11), in a virtualenv of its own."""
    yield _new_venv(tmp_path_factory, f"{wheel}[client]")


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
    assert {p.relative_to(REPO / "adapters").as_posix() for p in (REPO / "adapters").rglob("*.py")} <= shipped


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
    assert out.split() == ["mcpwire_adapters.app.app", "mcpwire_adapters.serve.asgi.app"]


def test_console_script(wheel: Path, venv: Path) -> None:
    scripts = PYPROJECT["project"].get("scripts", {})
    if "mcpwire" not in scripts:
        pytest.skip("pyproject.toml declares no `mcpwire` console script")
    with zipfile.ZipFile(wheel) as zf:
        [name] = [n for n in zf.namelist() if n.endswith(".dist-info/entry_points.txt")]
        entry_points = zf.read(name).decode()
        module = scripts["mcpwire"].split(":", 1)[0]
        path = module.replace(".", "/")
        assert {f"{path}.py", f"{path}/__init__.py"} & set(zf.namelist()), f"{module} is not in the wheel"
    assert f"mcpwire = {scripts['mcpwire']}" in entry_points
    assert (venv / "bin" / "mcpwire").exists()


# -- the sdist, and what PyPI checks ------------------------------------------------------------


def _source_files() -> list[str]:
    """The repository's files: tracked ones in a git checkout, else (an unpacked sdist) all."""
    top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=REPO, capture_output=True, text=True)
    if top.returncode == 0 and Path(top.stdout.strip()).resolve() == REPO.resolve():
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True, check=True)
        return [n for n in listed.stdout.split("\0") if n]
    skip = {".venv", "build", "dist", "__pycache__", ".hypothesis", "results"}
    return [p.relative_to(REPO).as_posix() for p in REPO.rglob("*")
            if (p.is_file() or p.is_symlink()) and not skip & set(p.relative_to(REPO).parts)
            and not p.relative_to(REPO).parts[0].endswith((".egg-info", "_cache"))]


def _expected_in_sdist() -> set[str]:
    names = _source_files()
    expected: set[str] = set()
    for name in names:
        if name.startswith(".ci/") or name == ".gitignore":
            continue
        path = REPO / name
        if path.is_symlink() and path.is_dir():  # stored as a copy of the folder it points at
            target = path.resolve().relative_to(REPO.resolve()).as_posix()
            expected |= {name + n[len(target):] for n in names if n.startswith(target + "/")}
        else:
            expected.add(name)
    return expected


def test_sdist_carries_what_its_tests_need(dists: dict[str, Path], tmp_path: Path) -> None:
    with tarfile.open(dists["sdist"]) as tf:
        if hasattr(tarfile, "data_filter"):  # 3.11.4+
            tf.extractall(tmp_path, filter="data")
        else:  # pragma: no cover
            tf.extractall(tmp_path)
    [root] = tmp_path.iterdir()
    assert root.name == f"mcpwire-{PYPROJECT['project']['version']}"
    files = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    missing = _expected_in_sdist() - files
    assert not missing, f"not in the sdist (MANIFEST.in): {sorted(missing)}"
    for name in ("LICENSE", "CHANGELOG.md", "README.md", "pyproject.toml", "MANIFEST.in", "mkdocs.yml",
                 "tests/conftest.py", "tests/wire/test_types_schema.py", "tests/schema_check.py",
                 "conformance/fixture.py", "scripts/test", "typings/mcpwire_adapters/app/app.py"):
        assert name in files, name
    # The vendored schemas, byte for byte as their provenance records them, with their license.
    schemas = root / "tests" / "data" / "schemas"
    provenance = json.loads((schemas / "provenance.json").read_text())
    assert provenance["schemas"] and (schemas / provenance["licenseFile"]["file"]).is_file()
    for entry in provenance["schemas"]:
        assert hashlib.sha256((schemas / entry["file"]).read_bytes()).hexdigest() == entry["sha256"], entry["file"]
    # Nothing built, cached or generated slipped in.
    stray = [f for f in files if {"__pycache__", ".hypothesis", "results", ".venv"} & set(f.split("/"))]
    assert not stray


def test_twine_check_strict(dists: dict[str, Path]) -> None:
    out = _run(sys.executable, "-m", "twine", "check", "--strict", dists["sdist"], dists["wheel"], cwd=REPO)
    assert out.count("PASSED") == 2, out


def test_metadata_for_publishing(dists: dict[str, Path]) -> None:
    from trove_classifiers import classifiers as known

    meta = _metadata(dists["wheel"])
    with tarfile.open(dists["sdist"]) as tf:
        [info] = [m for m in tf.getmembers() if m.name.count("/") == 1 and m.name.endswith("/PKG-INFO")]
        extracted = tf.extractfile(info)
        assert extracted is not None
        sdist_meta = email.parser.Parser().parsestr(extracted.read().decode())
    for m in (meta, sdist_meta):
        assert m["License-Expression"] == "MIT"
        assert m.get_all("License-File") == ["LICENSE"]
        assert m["Description-Content-Type"] == "text/markdown"
        classifiers = set(m.get_all("Classifier") or [])
        assert classifiers <= known, classifiers - known  # PyPI refuses an upload with unknown ones
        assert {"Programming Language :: Python :: 3.11", "Programming Language :: Python :: 3.12",
                "Programming Language :: Python :: 3.13", "Framework :: Trio", "Framework :: AnyIO",
                "Typing :: Typed"} <= classifiers
        assert any(c.startswith("Development Status :: ") for c in classifiers)
        assert any(c.startswith("Topic :: ") for c in classifiers)
    names = zipfile.ZipFile(dists["wheel"]).namelist()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), names


def test_installed_clients_run_on_asyncio_with_the_client_extra_alone(client_venv: Path) -> None:
    """The ``client`` extra brings no trio, and the clients need none: a StdioClient on asyncio
    talks to a stdio server (a few lines of Python, the venv's own interpreter) and leaves."""
    py = client_venv / "bin" / "python"
    installed = _run(py, "-m", "pip", "list", "--format=freeze", "--exclude", "pip", "--exclude", "setuptools",
                     cwd=client_venv)
    names = {line.split("==")[0].lower() for line in installed.split()}
    assert {"anyio", "h11", "msgspec", "mcpwire"} <= names and "trio" not in names, names
    server = (
        "import sys, json\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if m.get('method') == 'server/discover':\n"
        "        r = {'supportedVersions': ['2026-07-28'], 'capabilities': {}}\n"
        "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': r}), flush=True)\n"
    )
    code = (
        "import asyncio, sys\n"
        "import mcpwire_adapters.client.http\n"
        "from mcpwire_adapters.client.stdio import StdioClient\n"
        "async def main():\n"
        f"    async with StdioClient([sys.executable, '-c', {server!r}]) as c:\n"
        "        opened = await c.connect()\n"
        "        print(opened.method, c.protocol_version)\n"
        "asyncio.run(main())\n"
        "print('trio' in sys.modules)\n"
    )
    assert _run(py, "-I", "-c", code, cwd=client_venv).split() == ["server/discover", "2026-07-28", "False"]


def test_the_demo_runs_with_the_extras_scripts_demo_installs(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """README's first command (``bash scripts/demo``) installs the extras it names and runs
    examples/demo.py: the wheel with exactly those extras runs the demo to its end (it failed
    once, its raw-schema tools needing the jsonschema extra the script did not install)."""
    script = (REPO / "scripts" / "demo").read_text()
    found = re.search(r"-e '\.\[([a-z,]+)\]'", script)
    assert found, "scripts/demo names its extras as -e '.[a,b]'"
    env = _new_venv(tmp_path_factory, f"{wheel}[{found.group(1)}]")
    out = _run(env / "bin" / "python", "-I", str(REPO / "examples" / "demo.py"), cwd=env)
    assert out.rstrip().endswith("done: every step above went over HTTP on 127.0.0.1."), out[-2000:]
