"""A deliberately broken MCP client over Streamable HTTP, standard library only, for the tests
that show the client probe can fail a client:

    python _broken_client.py no-version URL   2026-07-28, every POST without MCP-Protocol-Version
    python _broken_client.py same-ids URL     2025-11-25, every request of the session with id 1
    python _broken_client.py fragile URL      2026-07-28, correct, but reads the call's result
                                              without a check (a mutated answer crashes it)
    python _broken_client.py eager-resume URL 2025-11-25, resumes a cut stream at once, whatever
                                              its retry field says
    python _broken_client.py blind-oauth URL  follows the server's 401 to an authorization server
                                              and asks it for a code whatever its metadata says
                                              (no issuer check, no PKCE, no resource)
"""

from __future__ import annotations

import json
import re
import sys
from urllib.parse import urlencode, urlsplit
import urllib.error
import urllib.request
from typing import Any

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "broken", "version": "1"}}


def post(url: str, message: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, json.dumps(message).encode(), method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers})
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def result(body: bytes) -> Any:
    text = body.decode()
    if text.startswith(("data:", "event:", "id:", ":")):  # the first data line of an SSE body
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:") and line[5:].strip())
    return json.loads(text)["result"]


def modern(url: str, *, version: bool) -> str:
    def headers(method: str, name: str | None = None) -> dict[str, str]:
        out = {"Mcp-Method": method, **({"Mcp-Name": name} if name else {})}
        return {**out, "MCP-Protocol-Version": "2026-07-28"} if version else out

    post(url, {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}, headers("tools/list"))
    _, _, body = post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                            "params": {"name": "echo", "arguments": {}, "_meta": META}}, headers("tools/call", "echo"))
    return str(result(body)["content"][0]["text"])


def same_ids(url: str) -> str:
    _, head, _ = post(url, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "broken", "version": "1"}}}, {})
    session = {"Mcp-Session-Id": head.get("mcp-session-id", ""), "MCP-Protocol-Version": "2025-11-25"}
    post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    post(url, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, session)
    _, _, body = post(url, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo"}}, session)
    return str(result(body)["content"][0]["text"]) if body.startswith(b"{") else body.decode()[:80]


def get(url: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def eager_resume(url: str) -> str:
    _, head, _ = post(url, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "broken", "version": "1"}}}, {})
    session = {"Mcp-Session-Id": head.get("mcp-session-id", ""), "MCP-Protocol-Version": "2025-11-25"}
    post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    try:
        post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo"}}, session)
    except Exception as exc:  # noqa: BLE001 - the stream was cut: resume now
        events = re.findall(r"^id: (\S+)", str(getattr(exc, "partial", b""), "utf-8", "replace"), re.M)
        last = events[-1] if events else "ev-1"
        _, _, body = get(url, {**session, "Accept": "text/event-stream", "Last-Event-ID": last})
        return body.decode()[:80]
    return "not cut"


def blind_oauth(url: str) -> str:
    status, head, _ = post(url, {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}},
                           {"Mcp-Method": "tools/list", "MCP-Protocol-Version": "2026-07-28"})
    found = re.search(r'resource_metadata="([^"]+)"', head.get("www-authenticate", ""))
    if status != 401 or not found:
        return f"no challenge ({status})"
    _, _, prm = get(found.group(1), {"Accept": "application/json"})
    issuer = json.loads(prm)["authorization_servers"][0]
    parts = urlsplit(issuer)
    _, _, meta = get(f"{parts.scheme}://{parts.netloc}/.well-known/oauth-authorization-server{parts.path}",
                     {"Accept": "application/json"})
    endpoint = json.loads(meta)["authorization_endpoint"]
    status, _, _ = get(endpoint + "?" + urlencode({"response_type": "code", "client_id": "blind",
                                                    "redirect_uri": "http://127.0.0.1:1/callback"}), {})
    return f"authorize: {status}"


def main() -> int:
    mode, url = sys.argv[1], sys.argv[2]
    if mode == "eager-resume":
        print(eager_resume(url))
    elif mode == "blind-oauth":
        print(blind_oauth(url))
    elif mode == "same-ids":
        print(same_ids(url))
    else:
        print(modern(url, version=mode != "no-version"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
