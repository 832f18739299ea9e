"""Node 22 and pinned npm packages, installed on first use into a cache folder outside the
repository (``~/.cache/mcpwire-conformance``, or ``$MCPWIRE_CONFORMANCE_CACHE``).

One place for what the conformance runner (``conformance/run.py``) and the interop tests
(``tests/interop``, the TypeScript SDK pinned there) need from npm::

    node = ensure_node()                                           # Node 22, from npm
    folder = ensure_package("@modelcontextprotocol/sdk", "1.32.2", prefix=CACHE / "interop")

Each pinned set lives under its own prefix, so one package's dependencies never move
another's. ``npm`` must be on the path the first time; afterwards nothing is downloaded.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["CACHE", "NODE_VERSION", "NpmError", "ensure_node", "ensure_package"]

NODE_VERSION = "22.23.3"
CACHE = Path(os.environ.get("MCPWIRE_CONFORMANCE_CACHE") or Path.home() / ".cache" / "mcpwire-conformance")
INSTALL_TIMEOUT = 900.0


class NpmError(Exception):
    """npm is missing, an install failed, or what is installed is not what was pinned."""


def _node_package() -> str:
    system = {"linux": "linux", "darwin": "darwin"}.get(sys.platform)
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine().lower())
    if system is None or arch is None:
        raise NpmError(f"no node-<os>-<arch> npm package for {sys.platform}/{platform.machine()}")
    return f"node-{system}-{arch}"


def installed_version(prefix: Path, package: str) -> str | None:
    try:
        return str(json.loads((prefix / "node_modules" / package / "package.json").read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def _install(prefix: Path, specs: list[str]) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise NpmError(f"npm is required to install {' '.join(specs)}")
    print(f"installing {' '.join(specs)} into {prefix}", flush=True)
    prefix.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([npm, "install", "--prefix", str(prefix), *specs], timeout=INSTALL_TIMEOUT, check=False)
    if done.returncode:
        raise NpmError(f"npm install of {' '.join(specs)} failed")


def ensure_package(package: str, version: str, *, prefix: Path = CACHE, with_node: bool = False) -> Path:
    """The folder of ``package`` at exactly ``version`` under ``prefix``, installed if needed
    (with Node 22 beside it when ``with_node``)."""
    node_package = _node_package()
    wanted = [f"{package}@{version}"]
    if with_node and installed_version(prefix, node_package) != NODE_VERSION:
        wanted.append(f"{node_package}@{NODE_VERSION}")
    if installed_version(prefix, package) != version or len(wanted) > 1:
        _install(prefix, wanted)
    found = installed_version(prefix, package)
    if found != version:
        raise NpmError(f"{prefix / 'node_modules' / package} has version {found}, expected the pinned {version}")
    return prefix / "node_modules" / package


def ensure_node(prefix: Path = CACHE) -> Path:
    """A working Node 22 binary under ``prefix``, installed from npm if needed."""
    node_package = _node_package()
    node = prefix / "node_modules" / node_package / "bin" / "node"
    if not os.access(node, os.X_OK):
        _install(prefix, [f"{node_package}@{NODE_VERSION}"])
    probe = subprocess.run([str(node), "--version"], capture_output=True, text=True, timeout=30, check=False)
    if not probe.stdout.startswith("v22."):
        raise NpmError(f"{node} is not a working Node 22: {(probe.stdout or probe.stderr).strip()!r}")
    return node
