"""``mcpwire serve --allowed-host HOST`` (and ``MCPWIRE_ALLOWED_HOSTS``): the engine's Host check
(``HttpPolicy.allowed_hosts``, the DNS-rebinding defence docs/security.md asks loopback servers
to turn on), through the command run as a subprocess on 127.0.0.1 port 0 and stopped by
SIGINT. Requests are written on raw sockets, so the ``Host`` header is exactly what we say."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from _lines import LineQueue

TIMEOUT = 20.0
CLI = [sys.executable, "-m", "mcpwire_adapters.cli"]
VERSION = "2026-07-28"
APP_SOURCE = '''
from mcpwire_adapters import App

app = App("hosts-app", "1.0")


@app.tool(description="Echo the text back")
async def echo(ctx, arguments):
    return str(arguments.get("text", ""))
'''


@pytest.fixture
def app_dir(tmp_path: Path) -> Path:
    (tmp_path / "hosts_app.py").write_text(APP_SOURCE)
    return tmp_path


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MCPWIRE_ALLOWED_HOSTS"}
    return {**env, **extra}


@contextmanager
def served(app_dir: Path, *options: str, env: dict[str, str] | None = None) -> Iterator[tuple[int, LineQueue]]:
    """``mcpwire serve hosts_app:app --port 0 OPTIONS``: its port and its stderr lines; stopped by
    SIGINT at the end (exit 0)."""
    process = subprocess.Popen([*CLI, "serve", "hosts_app:app", "--port", "0", *options], cwd=app_dir,
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               env=env if env is not None else environment())
    assert process.stderr is not None
    try:
        lines = LineQueue(process.stderr, timeout=TIMEOUT)
        port = int(lines.wait_for(r"serving hosts-app 1\.0 at http://127\.0\.0\.1:(\d+)/mcp").group(1))
        yield port, lines
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=TIMEOUT) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def status_with_host(port: int, host: str) -> int:
    """POST server/discover with ``Host: host``: the status of the answer."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": {}}}}).encode()
    head = (f"POST /mcp HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n"
            f"accept: application/json, text/event-stream\r\nmcp-protocol-version: {VERSION}\r\n"
            f"mcp-method: server/discover\r\ncontent-length: {len(body)}\r\nconnection: close\r\n\r\n")
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as sock:
        sock.sendall(head.encode() + body)
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    return int(raw.split(b" ", 2)[1])


def test_allowed_host_turns_the_host_check_on(app_dir: Path) -> None:
    with served(app_dir, "--allowed-host", "localhost", "--allowed-host", "127.0.0.1") as (port, lines):
        lines_seen = "".join(lines.seen)
        assert "answering only requests whose Host is 127.0.0.1, localhost" in lines_seen
        assert status_with_host(port, f"127.0.0.1:{port}") == 200
        assert status_with_host(port, "LOCALHOST") == 200
        assert status_with_host(port, "evil.example") == 403
        assert status_with_host(port, f"evil.example:{port}") == 403
        assert status_with_host(port, f"127.0.0.1:{port}.evil.example") == 403  # a look-alike, parsed strictly


def test_without_the_option_there_is_no_host_check(app_dir: Path) -> None:
    with served(app_dir) as (port, _lines):
        assert status_with_host(port, "evil.example") == 200


def test_the_environment_variable_stands_in_for_the_option(app_dir: Path) -> None:
    with served(app_dir, env=environment(MCPWIRE_ALLOWED_HOSTS="localhost, ::1")) as (port, _lines):
        assert status_with_host(port, f"localhost:{port}") == 200
        assert status_with_host(port, f"[::1]:{port}") == 200
        assert status_with_host(port, f"127.0.0.1:{port}") == 403
    with served(app_dir, "--allowed-host", "127.0.0.1", env=environment(MCPWIRE_ALLOWED_HOSTS="localhost")) as (port, _lines):
        assert status_with_host(port, f"127.0.0.1:{port}") == 200  # the option wins
        assert status_with_host(port, f"localhost:{port}") == 403


@pytest.mark.parametrize("options, complaint", [
    (("--allowed-host", "http://localhost"), "--allowed-host: 'http://localhost' is not a host name or IP address"),
    (("--allowed-host", "localhost:8000"), "--allowed-host: 'localhost:8000' is not a host name or IP address"),
    (("--allowed-host", ""), "--allowed-host: '' is not a host name or IP address"),
    (("--transport", "stdio", "--allowed-host", "localhost"), "--allowed-host is for HTTP"),
])
def test_a_bad_allowed_host_is_a_usage_error(app_dir: Path, options: tuple[str, ...], complaint: str) -> None:
    done = subprocess.run([*CLI, "serve", "hosts_app:app", "--port", "0", *options], cwd=app_dir, capture_output=True,
                          text=True, timeout=TIMEOUT, env=environment(), stdin=subprocess.DEVNULL)
    assert done.returncode == 4, (done.returncode, done.stderr)
    assert complaint in done.stderr and "Traceback" not in done.stderr, done.stderr
