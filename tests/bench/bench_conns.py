"""Memory per idle connection and per open listen stream, at N of each, ours against the SDK.

Each server runs in a process of its own on 127.0.0.1 (``ours``: our trio/h11 server and App,
with ``max_connections`` and the engine's ``max_listen_streams`` raised past N; ``sdk``: its
Starlette app under uvicorn, h11 + asyncio). A client process opens N keep-alive connections and
holds them: idle (nothing sent), kept alive after one answered small ``tools/call`` (``kept``:
what a client's pooled connection costs between calls), or each carrying one
``subscriptions/listen`` whose acknowledgement has arrived (an open SSE stream). The figure is
the server's resident memory (``VmRSS``) with them open minus before, divided by N, read
``SETTLE_SECONDS`` after the last connection is ready (enough for our server's timer to end the
reader task of a kept-alive connection that went idle). The connections are opened 200 at a time.

    python -m tests.bench.bench_conns serve ours|sdk                # prints the port; stdin EOF stops
    python -m tests.bench.bench_conns hold PORT N idle|kept|listen  # prints "ready", holds until stdin EOF
    python -m tests.bench.bench_conns [N]                            # both servers, every shape
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from typing import Any

from .bench_e2e import REPO, ServerProcess, _uvicorn, serve_trio

MODULE = "tests.bench.bench_conns"
SHAPES = ("idle", "kept", "listen")
SETTLE_SECONDS = 2.5  # our server's timer ticks every second (its default timeouts)


def serve(kind: str, n: int = 20000) -> None:
    from ._workload import sdk_asgi, sdk_small_server

    if kind == "sdk":
        _uvicorn(sdk_asgi(sdk_small_server()))
        return
    from mcpwire_adapters import App, Context, HttpServerConfig

    from mcpwire import Keyring
    from mcpwire.types import CallToolResult

    from ._workload import SECRET, EchoArgs, echo_result

    app = App("bench", "1.0", keyring=Keyring.single(SECRET), validator=None, max_listen_streams=n)

    @app.tool(description="Echo the text back", arguments_type=EchoArgs)
    async def echo(ctx: Context, args: EchoArgs) -> CallToolResult:
        return echo_result(args.text)

    serve_trio(app, HttpServerConfig(max_connections=n))


def _listen_bytes(port: int) -> bytes:
    from .bench_memory import LISTEN, LISTEN_HEADERS

    head = [b"POST /mcp HTTP/1.1"]
    for name, value in LISTEN_HEADERS:
        head.append(name + b": " + (f"127.0.0.1:{port}".encode() if name == b"host" else value))
    return b"\r\n".join(head) + b"\r\n\r\n" + LISTEN


async def _read_answer(reader: asyncio.StreamReader) -> None:
    """One whole response (Content-Length or chunked), which must be a 200."""
    head = await reader.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head[:200]
    lines = head.lower().split(b"\r\n")
    if any(line.startswith(b"transfer-encoding:") and b"chunked" in line for line in lines):
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            await reader.readexactly(size + 2)
            if size == 0:
                return
    length = next((int(line.split(b":")[1]) for line in lines if line.startswith(b"content-length:")), -1)
    assert length >= 0, head[:200]
    await reader.readexactly(length)


async def _hold(port: int, n: int, shape: str) -> None:
    from .bench_e2e import _request_bytes

    request = _listen_bytes(port) if shape == "listen" else _request_bytes(port) if shape == "kept" else b""
    held: list[Any] = []

    async def one() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        if shape == "kept":
            writer.write(request)
            await _read_answer(reader)
        elif request:
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200"), head[:200]
            await reader.readuntil(b"subscriptions/acknowledged")  # the first SSE event: the stream is open
        held.append((reader, writer))

    try:
        for start in range(0, n, 200):
            await asyncio.wait_for(asyncio.gather(*(one() for _ in range(min(200, n - start)))), 30)
    except (TimeoutError, AssertionError, OSError, asyncio.IncompleteReadError) as exc:
        print(f"failed after {len(held)}: {type(exc).__name__}: {str(exc)[:300]}", flush=True)
        return
    print("ready", len(held), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    for _reader, writer in held:
        writer.close()


def _rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def measure(kinds: list[str], n: int, shapes: tuple[str, ...] = SHAPES,
            progress: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in kinds:
        for shape in shapes:
            server = ServerProcess(kind, module=MODULE)
            try:
                time.sleep(0.5)
                before = _rss_bytes(server.proc.pid)
                holder = subprocess.Popen([sys.executable, "-m", MODULE, "hold", str(server.port), str(n), shape],
                                          cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True)
                assert holder.stdout is not None and holder.stdin is not None
                line = holder.stdout.readline()
                if not line.startswith("ready"):
                    holder.kill()
                    holder.wait()
                    out[f"{kind}.{shape}"] = line.strip() or "failed"
                    if progress is not None:
                        progress(f"conns {kind} {shape}: {out[f'{kind}.{shape}']}")
                    continue
                time.sleep(SETTLE_SECONDS)
                after = _rss_bytes(server.proc.pid)
                holder.stdin.close()
                holder.wait(60)
                out[f"{kind}.{shape}"] = {"n": n, "bytes_per": (after - before) / n, "rss_before": before,
                                          "rss_after": after}
                if progress is not None:
                    progress(f"conns {kind} {shape}: {(after - before) / n:,.0f} bytes each at {n}")
            finally:
                server.stop()
    return out


def main(argv: list[str]) -> int:
    if argv[:1] == ["serve"]:
        serve(argv[1])
        return 0
    if argv[:1] == ["hold"]:
        asyncio.run(_hold(int(argv[1]), int(argv[2]), argv[3]))
        return 0
    n = int(argv[0]) if argv else 10000
    result = measure(["ours", "sdk"], n, progress=lambda m: print(m, file=sys.stderr))
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
