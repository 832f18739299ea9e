"""OAuth in the ``mcpwire`` command, end to end on 127.0.0.1: ``mcpwire serve --oauth-issuer``
protects a served app; ``mcpwire call --oauth`` gets a token through the browser (here
``BROWSER`` is a script that follows the authorization server's redirect, as a person's
browser would) and a loopback redirect URI, keeps it in a 0600 file, and uses it again
without the browser. The authorization server is tests/oauth_as.py, keys generated per run."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from _lines import LineQueue
from test_cli import CLI, REPO, TIMEOUT, expected_failure, run_cli

TESTS = REPO / "tests"
AUTH_SERVER = (
    "import sys, trio\n"
    f"sys.path.insert(0, {str(TESTS)!r})\n"
    "from oauth_as import AuthServer\n"
    "async def main():\n"
    "    auth = AuthServer()\n"
    "    async with trio.open_nursery() as nursery:\n"
    "        await nursery.start(auth.serve)\n"
    "        print(auth.issuer, flush=True)\n"
    "        await trio.to_thread.run_sync(sys.stdin.read)\n"
    "        nursery.cancel_scope.cancel()\n"
    "trio.run(main)\n"
)
BROWSER = "import sys, urllib.request\nurllib.request.urlopen(sys.argv[1], timeout=10).read()\n"


def stop(process: subprocess.Popen[str]) -> None:
    if process.stdin is not None:
        process.stdin.close()
    process.send_signal(2)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:  # pragma: no cover
        process.kill()
        process.wait()


@pytest.fixture(scope="module")
def issuer() -> Iterator[str]:
    process = subprocess.Popen([sys.executable, "-c", AUTH_SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True)
    assert process.stdout is not None
    try:
        yield LineQueue(process.stdout).wait_for(r"^http://\S+$").group(0)
    finally:
        stop(process)


@pytest.fixture(scope="module")
def protected(issuer: str) -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [*CLI, "serve", f"{TESTS / 'stdio_app.py'}:build_app", "--port", str(port), "--oauth-issuer", issuer,
               "--oauth-jwks-url", f"{issuer}/jwks", "--oauth-scope", "mcp:basic"]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    try:
        LineQueue(process.stderr).wait_for(r"serving stdio-test")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(process)


def browser(tmp_path: Path) -> dict[str, str]:
    script = tmp_path / "browser.py"
    script.write_text(BROWSER)
    return {**os.environ, "BROWSER": f"{sys.executable} {script} %s"}


def test_a_protected_server_refuses_a_call_without_a_token(protected: str) -> None:
    stderr = expected_failure(run_cli("call", protected, "echo", '{"text": "hi"}'), 3)
    assert "HTTP 401" in stderr and "try --oauth" in stderr


def test_call_authorizes_through_the_browser_and_keeps_the_token(protected: str, tmp_path: Path) -> None:
    store = tmp_path / "tokens.json"
    args = [*CLI, "call", protected, "echo", '{"text": "hi"}', "--oauth", "--token-store", str(store)]
    done = subprocess.run(args, env=browser(tmp_path), capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0 and done.stdout == "hi\n", done.stderr
    assert "authorize in your browser" in done.stderr
    assert stat.S_IMODE(store.stat().st_mode) == 0o600 and "access_token" in store.read_text()
    # Again: the stored token serves; a browser that fails shows it is not asked.
    again = subprocess.run(args, env={**os.environ, "BROWSER": "false"}, capture_output=True, text=True, timeout=TIMEOUT)
    assert again.returncode == 0 and again.stdout == "hi\n" and "authorize in your browser" not in again.stderr


def test_oauth_command_lines_that_cannot_work(tmp_path: Path) -> None:
    assert "--oauth is for HTTP servers" in expected_failure(run_cli("inspect", "--oauth", "--", sys.executable, "x"), 4)
    assert "needs --oauth-jwks-url" in expected_failure(
        run_cli("serve", "x:app", "--port", "8123", "--oauth-issuer", "https://auth.example.com"), 4)
    assert "need --oauth-issuer" in expected_failure(run_cli("serve", "x:app", "--oauth-scope", "s"), 4)
    assert "--oauth-resource" in expected_failure(
        run_cli("serve", "x:app", "--port", "0", "--oauth-issuer", "https://a.example", "--oauth-jwks-url", "https://a.example/j"), 4)
