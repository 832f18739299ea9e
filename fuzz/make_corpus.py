"""Writes the seed corpora of the atheris harnesses: ``python fuzz/make_corpus.py``.

Every seed is real traffic: requests built by the client engine (so headers are right) and
answers produced by the server engine, framed in each harness's input format. Deterministic:
running it again rewrites the same files.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import mcpwire  # noqa: E402
from fuzz import host, targets  # noqa: E402
from fuzz.atheris_client import CONTENT_TYPES, STATUSES, _requests  # noqa: E402

CORPUS = ROOT / "fuzz" / "corpus"


def write(harness: str, data: bytes) -> None:
    folder = CORPUS / harness
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"seed-{hashlib.sha1(data).hexdigest()[:12]}").write_bytes(data)


def learned_client() -> mcpwire.Client:
    """A client that has listed the fuzz server's tools (so it sends Mcp-Param-* headers)."""
    client = targets.make_client()
    server = targets.make_server(page_size=100)
    request = client.list_tools()
    head, body = server.receive_http(http_request(request), now=targets.NOW)  # type: ignore[misc]
    parser = mcpwire.HttpResponseParser(client, request, status=head.status, content_type=b"application/json")
    parser.feed(body.data)
    parser.close()
    return client


def http_request(request: mcpwire.OutgoingRequest) -> mcpwire.HttpRequest:
    return mcpwire.HttpRequest(method="POST", target="/mcp", headers=list(request.headers), body=request.body)


def seeds(client: mcpwire.Client) -> list[tuple[mcpwire.OutgoingRequest, int]]:
    """Requests worth seeding, each with the host plan that answers it."""
    return [
        (client.discover(), 0),
        (client.list_tools(), 0),
        (client.call_tool("echo", {"a": [1, {"b": None}]}, progress_token="p1", log_level="debug"), 1),
        (client.call_tool("region", {"region": "eu west", "n": 3, "flag": True}), 2),
        (client.call_tool("typed", {"a": 1, "b": "x"}), 4),
        (client.call_tool("structured", {}), 0),
        (client.read_resource("test://template/42/data", progress_token=9), 1),
        (client.get_prompt("greet", {"who": "ann"}), 6),
        (client.complete({"type": "ref/prompt", "name": "pair"}, "arg1", "a"), 0),
        (client.listen({"toolsListChanged": True, "resourceSubscriptions": ["test://static-text"]}), 0),
    ]


def main() -> None:
    client = learned_client()
    server = targets.make_server()
    requests = seeds(client)
    # -- http: the request as the harness's structured text
    for request, plan in requests:
        lines = [b"POST /mcp"] + [name + b": " + value for name, value in request.headers]
        lines.append(b"x-fuzz-plan: %d" % plan)
        write("http", b"\n".join(lines) + b"\n\n" + request.body)
    write("http", b"GET /mcp\nAccept: */*\n\n")
    cancel = client.cancel(requests[2][0], "stop")
    # -- ndjson: a stream of lines, with a cancellation and a garbage line
    stream = b"".join(r.line for r, _ in requests) + cancel + b"{oops\n" + b'{"jsonrpc":"2.0","id":99,"result":{}}\n'
    write("ndjson", bytes([0, 0]) + stream)
    write("ndjson", bytes([7, 1]) + requests[3][0].line + requests[0][0].line)
    write("ndjson", bytes([1, 4]) + requests[9][0].line + client.cancel(requests[9][0]))
    # -- sse and client: what the server answers, as the client reads it
    fresh = targets.make_client()
    reqs = _requests(fresh)
    for index, plan in ((0, 0), (2, 1), (3, 2), (4, 1), (5, 3), (7, 0), (11, 0)):
        request = reqs[index]
        answer = server.receive_http(http_request(request), now=targets.NOW)
        events: list[Any]
        if isinstance(answer, tuple):
            events = list(answer)
        elif isinstance(answer, mcpwire.HttpExchange):
            events, _ = host.drive(answer, host.PLANS[plan])
        else:
            assert isinstance(answer, mcpwire.HttpListenStream), answer  # a stateless server answers nothing else here
            events = list(answer.start()) + [e for s, out in server.list_changed("tools") if s is answer for e in out]
            events += [e for s, out in server.close_listeners() if s is answer for e in out]
        head, body = events[0], b"".join(e.data for e in events[1:])
        ctype = dict((k.lower(), v) for k, v in head.headers).get(b"content-type")
        if ctype == b"text/event-stream":
            write("sse", bytes([0]) + body)
            write("sse", bytes([(7 << 2) | 2]) + body)
        write("client", bytes([index | CONTENT_TYPES.index(ctype) << 5, STATUSES.index(head.status) | 8]) + body)
    # stdio: a server's stdout answering the twelve requests of atheris_client, ids 1 to 12
    conn = mcpwire.StdioConnection(server)
    stdout = b""
    for i, item in enumerate(conn.receive_data(b"".join(r.line for r in reqs), now=targets.NOW)):
        if isinstance(item, bytes):
            stdout += item
        elif isinstance(item, mcpwire.StdioExchange):
            out, _ = host.drive(item, host.PLANS[i % 4])
            stdout += b"".join(out)
        elif isinstance(item, mcpwire.StdioListenStream):
            stdout += item.start() + b"".join(o for s, o in server.list_changed("tools") if s is item)
            stdout += b"".join(o for s, o in server.close_listeners() if s is item)
    write("client", bytes([0x10, 0]) + stdout)
    write("client", bytes([0x10, 0x38]) + stdout[: len(stdout) // 2])
    for harness in ("http", "ndjson", "sse", "client"):
        print(harness, len(list((CORPUS / harness).iterdir())), "seeds")


if __name__ == "__main__":
    main()
