"""Keys from configuration (issue 17, the first item): the keyring document, key files and their
modes, rotation in three steps, ``mcpwire keys`` and ``mcpwire serve --keys``: two server
processes given one key file accept each other's ``requestState``; without it they do not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import mcpwire
from mcpwire_adapters.state.keys import ENV, add_key, drop_key, load_keyring, make_current, new_keyring, write_keyring

CLI = [sys.executable, "-m", "mcpwire_adapters.cli"]
TIMEOUT = 30.0
KEY = "a" * 43  # base64url of 32 bytes

APP_SOURCE = '''
from mcpwire_adapters import App, NeedInput

app = App("keys-test", "1.0")

@app.tool(description="Ask a name, then greet", input_schema={"type": "object"})
async def ask(ctx, arguments):
    answer = ctx.input_responses.get("name")
    if answer is None:
        return NeedInput(requests={"name": {"method": "elicitation/create", "params": {
            "message": "Name?", "requestedSchema": {"type": "object", "properties": {}}}}}, state={"asked": 1})
    return f"Hello, {answer['content']['name']} ({ctx.state['asked']})"
'''


def test_the_keyring_document_round_trips_and_its_errors_name_no_key() -> None:
    keyring = mcpwire.Keyring.from_json(json.dumps({"current": "k2", "keys": {"k1": KEY, "k2": "b" * 43}}))
    assert keyring.key_ids == ("k1", "k2") and keyring.current == "k2"
    assert mcpwire.Keyring.from_json(keyring.to_json()).key_ids == ("k1", "k2")
    bad = {
        "not json": "{",
        "unknown member": json.dumps({"current": "k1", "keys": {"k1": KEY}, "extra": 1}),
        "short key": json.dumps({"current": "k1", "keys": {"k1": "c" * 20}}),
        "not base64url": json.dumps({"current": "k1", "keys": {"k1": "!" * 43}}),
        "current missing": json.dumps({"current": "k9", "keys": {"k1": KEY}}),
        "bad id": json.dumps({"current": "k 1", "keys": {"k 1": KEY}}),
    }
    for case, document in bad.items():
        with pytest.raises(mcpwire.LocalProtocolError) as refused:
            mcpwire.Keyring.from_json(document)
        assert KEY not in str(refused.value) and "c" * 20 not in str(refused.value), case


def test_key_files_must_be_private_and_the_environment_may_hold_the_document(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "keys.json"
    write_keyring(new_keyring(), path)
    assert path.stat().st_mode & 0o777 == 0o600
    assert load_keyring(path).key_ids == ("k1",)
    path.chmod(0o640)
    with pytest.raises(mcpwire.LocalProtocolError, match="readable by others"):
        load_keyring(path)
    with pytest.raises(mcpwire.LocalProtocolError, match="cannot read key file"):
        load_keyring(tmp_path / "missing.json")
    monkeypatch.delenv(ENV, raising=False)
    with pytest.raises(mcpwire.LocalProtocolError, match=ENV):
        load_keyring(None)
    monkeypatch.setenv(ENV, json.dumps({"current": "k1", "keys": {"k1": KEY}}))
    assert load_keyring(None).current == "k1"


def test_rotation_in_three_steps_keeps_tokens_in_flight_until_the_old_key_is_dropped() -> None:
    one = new_keyring()
    step1 = add_key(one, "k2")
    assert step1.current == "k1" and step1.key_ids == ("k1", "k2")
    step2 = make_current(step1, "k2")
    with pytest.raises(mcpwire.LocalProtocolError, match="current key"):
        drop_key(step2, "k2")
    step3 = drop_key(step2, "k1")
    assert step3.key_ids == ("k2",)
    with pytest.raises(mcpwire.LocalProtocolError, match="already"):
        add_key(step3, "k2")
    # A cursor signed with k1 verifies on every step that still holds k1, and not after.
    from mcpwire.types import Implementation, Tool

    def server(keyring: mcpwire.Keyring) -> mcpwire.Server:
        s = mcpwire.Server(Implementation(name="s", version="1"), keyring=keyring, page_size=1)
        for name in ("a", "b"):
            s.add_tool(Tool(name=name, input_schema={"type": "object"}))
        return s

    def list_tools(s: mcpwire.Server, cursor: str | None) -> dict[str, Any]:
        params: dict[str, Any] = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                             "io.modelcontextprotocol/clientCapabilities": {}}}
        if cursor is not None:
            params["cursor"] = cursor
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params}).encode()
        headers = [("content-type", "application/json"), ("accept", "application/json, text/event-stream"),
                   ("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/list")]
        answer = s.receive_http(mcpwire.HttpRequest(method="POST", target="/mcp", headers=headers, body=body),
                                now=1_800_000_000.0)
        assert isinstance(answer, tuple)
        return dict(json.loads(answer[1].data))

    cursor = list_tools(server(one), None)["result"]["nextCursor"]
    for keyring in (step1, step2):
        assert [t["name"] for t in list_tools(server(keyring), cursor)["result"]["tools"]] == ["b"]
    assert list_tools(server(step3), cursor)["error"]["code"] == -32602


def test_mcpwire_keys_makes_and_rotates_a_key_file(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"

    def keys(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*CLI, "keys", *args], capture_output=True, text=True, timeout=TIMEOUT)

    assert keys("new", str(path)).stdout == f"{path}: keys k1; current k1\n"
    assert path.stat().st_mode & 0o777 == 0o600
    assert keys("new", str(path)).returncode == 4  # never overwritten
    assert keys("add", str(path), "k2").stdout == f"{path}: keys k1, k2; current k1\n"
    assert keys("current", str(path), "k2").stdout == f"{path}: keys k1, k2; current k2\n"
    refused = keys("drop", str(path), "k2")
    assert refused.returncode == 4 and "current key" in refused.stderr
    assert keys("drop", str(path), "k1").stdout == f"{path}: keys k2; current k2\n"
    assert keys("show", str(path)).stdout == f"{path}: keys k2; current k2\n"
    secret = json.loads(path.read_text())["keys"]["k2"]
    assert all(secret not in out for out in (keys("show", str(path)).stdout, keys("show", str(path)).stderr))


def _round_then_retry(app_dir: Path, first: list[str], second: list[str]) -> dict[str, Any]:
    """Round 1 of the ``ask`` tool on one stdio server process, its retry on another."""
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ask", "arguments": {}, "_meta": meta}}
    one = subprocess.run([*CLI, "serve", "keys_app:app", "--transport", "stdio", *first], input=json.dumps(call) + "\n",
                         capture_output=True, text=True, timeout=TIMEOUT, cwd=app_dir, env=_env())
    assert one.returncode == 0, one.stderr
    token = json.loads(one.stdout.splitlines()[0])["result"]["requestState"]
    retry = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "ask", "arguments": {}, "_meta": meta, "requestState": token,
        "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}}}}
    two = subprocess.run([*CLI, "serve", "keys_app:app", "--transport", "stdio", *second], input=json.dumps(retry) + "\n",
                         capture_output=True, text=True, timeout=TIMEOUT, cwd=app_dir, env=_env())
    assert two.returncode == 0, two.stderr
    answer: dict[str, Any] = json.loads(two.stdout.splitlines()[0])
    return answer


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop(ENV, None)
    return env


def test_two_server_processes_on_one_key_file_accept_each_others_request_state(tmp_path: Path) -> None:
    (tmp_path / "keys_app.py").write_text(APP_SOURCE)
    path = tmp_path / "keys.json"
    write_keyring(new_keyring(), path)
    shared = _round_then_retry(tmp_path, ["--keys", str(path)], ["--keys", str(path)])
    assert shared["result"]["content"][0]["text"] == "Hello, Ada (1)"
    apart = _round_then_retry(tmp_path, [], [])  # each process with a random key of its own
    assert apart["error"]["code"] == -32602
    path.chmod(0o644)
    refused = subprocess.run([*CLI, "serve", "keys_app:app", "--transport", "stdio", "--keys", str(path)],
                             input="", capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp_path, env=_env())
    assert refused.returncode == 4 and "readable by others" in refused.stderr and "Traceback" not in refused.stderr
