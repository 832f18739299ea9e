"""The pinned TypeScript SDK v1 (and v2's server and client packages) and Node 22 for the interop tests,
installed on first use (``conformance/npm.py``) into their own folders of the cache, beside the
conformance runner."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "conformance"))
from npm import CACHE, NpmError, ensure_node, ensure_package  # noqa: E402 - conformance/ is not a package

__all__ = ["PEERS", "TS_SDK2_VERSION", "TS_SDK_VERSION", "NodeSetup", "node_setup", "node_setup_client_v2",
           "node_setup_v2", "url_printed_by"]

TS_SDK, TS_SDK_VERSION = "@modelcontextprotocol/sdk", "1.32.2"
PEERS = Path(__file__).resolve().parent / "peers"
PREFIX = CACHE / "interop-ts-sdk"
# The TypeScript SDK v2 ships its server as a package of its own (with zod beside it).
TS_SDK2, TS_SDK2_VERSION = "@modelcontextprotocol/server", "2.4.0"
PREFIX2 = CACHE / "interop-ts-sdk2"
# ... and its client as another, of the same release, in a prefix of its own.
TS_CLIENT2 = "@modelcontextprotocol/client"
PREFIX_CLIENT2 = CACHE / "interop-ts-client2"


class NodeSetup:
    def __init__(self, node: Path, modules: Path) -> None:
        self.node = node
        self.modules = modules
        self.env = {**os.environ, "NODE_PATH": str(modules)}

    def command(self, script: str, *args: str) -> list[str]:
        return [str(self.node), str(PEERS / script), *args]


def node_setup() -> NodeSetup:
    """Node 22 and the SDK pinned at TS_SDK_VERSION (raises NpmError when they cannot be had)."""
    ensure_package(TS_SDK, TS_SDK_VERSION, prefix=PREFIX)
    return NodeSetup(ensure_node(), PREFIX / "node_modules")


def node_setup_v2() -> NodeSetup:
    """Node 22 and the v2 server package pinned at TS_SDK2_VERSION (raises NpmError when they
    cannot be had). ES modules ignore NODE_PATH: a peer takes ``modules`` as an argument."""
    ensure_package(TS_SDK2, TS_SDK2_VERSION, prefix=PREFIX2)
    return NodeSetup(ensure_node(), PREFIX2 / "node_modules")


def node_setup_client_v2() -> NodeSetup:
    """Node 22 and the v2 client package, pinned at TS_SDK2_VERSION as the server package is
    (raises NpmError when they cannot be had). ES modules ignore NODE_PATH: a peer takes
    ``modules`` as an argument."""
    ensure_package(TS_CLIENT2, TS_SDK2_VERSION, prefix=PREFIX_CLIENT2)
    return NodeSetup(ensure_node(), PREFIX_CLIENT2 / "node_modules")


def node_or_skip(setup: Callable[[], NodeSetup] = node_setup) -> NodeSetup:
    """``setup()``, or the test skipped when Node 22 and the package cannot be installed (a
    machine without npm)."""
    try:
        return setup()
    except NpmError as exc:  # pragma: no cover - a machine without npm
        pytest.skip(f"Node 22 and the TypeScript SDK ({setup.__name__}) cannot be installed: {exc}")


__all__ += ["NpmError", "node_or_skip"]


@asynccontextmanager
async def url_printed_by(command: Sequence[str], *, env: Mapping[str, str] | None = None,
                         timeout: float = 60.0) -> AsyncIterator[str]:
    """Start a peer server that prints ``{"url": ...}`` on its first stdout line and stops at the
    end of its stdin; yield that URL; stop it (killed after 5 s)."""
    process = await trio.lowlevel.open_process(list(command), env=dict(env) if env is not None else None,
                                               stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    try:
        line = b""
        with trio.fail_after(timeout):
            while not line.endswith(b"\n"):
                chunk = await process.stdout.receive_some(4096)
                assert chunk, f"{command[1] if len(command) > 1 else command[0]} exited before printing its URL"
                line += chunk
        yield str(json.loads(line)["url"])
    finally:
        with trio.CancelScope(shield=True):
            await process.stdin.aclose()
            with trio.move_on_after(5):
                await process.wait()
            if process.returncode is None:  # pragma: no cover
                process.kill()
                await process.wait()
