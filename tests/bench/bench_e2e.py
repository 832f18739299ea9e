"""End to end over loopback HTTP: our trio/h11 server, our ASGI app under uvicorn and the SDK's
app under uvicorn, each in its own process, driven by one bounded load generator in another;
beside them the bare trio + h11 + msgspec server (``bare``: parse the request, decode the
typed envelope, encode the result; no MCP rules), the limit of our trio driver's own stack, and
a raw ASGI app that calls the engine and ``App.dispatch`` directly (``raw-asgi-fast``: no
driver rules, no timeouts, no disconnect watching), the limit of our ASGI driver's own stack,
and the same app spinning 1 µs more per request (``raw-asgi-fast-busy``): what a microsecond
more of work in process costs end to end, to read the driver's ratio by.
The ``-fast`` kinds run under uvicorn with httptools + uvloop; the others under uvicorn's
pure-Python defaults (h11 + asyncio). The WSGI kinds run under gunicorn's gthread worker (one
process, 8 threads; ``_wsgi.py``): our ``WsgiApp`` (``wsgi``) and a plain WSGI function
answering the engine's response bytes (``wsgi-plain``: the server's own ceiling).

Three roles, one module (so every process runs the same code)::

    python -m tests.bench.bench_e2e serve KIND   # prints the bound port (KINDS below),
                                                                 # serves until stdin closes
    python -m tests.bench.bench_e2e load PORT CONNS REQUESTS SECONDS   # prints a JSON result

The load generator opens CONNS keep-alive connections to 127.0.0.1:PORT and sends the small
``tools/call`` (the same bytes as the in-process rows) back to back on each, until REQUESTS
answers have come back or SECONDS have passed, whichever is first. It checks every answer
(status 200, the echoed text) and reports requests/s and latency percentiles. Its HTTP/1.1
client is minimal on purpose (pre-built request bytes, Content-Length framing) so that it
costs the generator little and both servers get the same client.

When ``wrk`` is installed (Debian: ``apt-get install wrk``) the measured rounds run it instead
(one thread, CONNS connections, the same request, for REQUESTS / 5,000 seconds within SECONDS):
the issue's own method, and a C generator leaves the two shared cores to the servers. The
warm-up before the rounds is the Python generator's, which checks each server's answers.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import tempfile
import sys
import threading
import time
from functools import partial
from pathlib import Path
from collections.abc import Callable
from typing import Any

REPO = Path(__file__).resolve().parents[2]


# -- servers ----------------------------------------------------------------------------------------


def _stop_on_stdin_eof(stop: Any) -> None:
    def wait() -> None:
        sys.stdin.read()
        stop()

    threading.Thread(target=wait, daemon=True).start()


def serve_trio(app: Any, config: Any = None) -> None:
    """Serve ``app`` with our trio server on a free port: print the port, stop when stdin closes."""
    import trio

    from mcpwire_adapters import HttpServerConfig, serve_http

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            start = partial(serve_http, app, "127.0.0.1", 0, config=config or HttpServerConfig())
            _host, port = await nursery.start(start)
            print(port, flush=True)
            await trio.to_thread.run_sync(sys.stdin.read, abandon_on_cancel=True)
            nursery.cancel_scope.cancel()

    trio.run(main)


def serve_ours() -> None:
    from ._workload import our_app

    serve_trio(our_app())


def serve_bare() -> None:
    """The bare-stack baseline: trio + h11 + msgspec, one task per connection, keep-alive; the
    floor's typed decode and encode (the same response bytes as the engine's), no MCP rules."""
    import h11
    import msgspec
    import trio

    from .bench_engine import _SERVER_META, _FCallRequest, _FCallResponse, _FCallResult, _FText

    dec = msgspec.json.Decoder(_FCallRequest)
    enc = msgspec.json.Encoder()

    async def connection(stream: trio.SocketStream) -> None:
        conn = h11.Connection(h11.SERVER)
        body: list[bytes] = []
        try:
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    conn.receive_data(await stream.receive_some(65536))
                elif isinstance(event, h11.Data):
                    body.append(bytes(event.data))
                elif isinstance(event, h11.EndOfMessage):
                    req = dec.decode(b"".join(body))
                    body.clear()
                    result = _FCallResult("complete", [_FText(req.params.arguments.text)], _SERVER_META)
                    data = enc.encode(_FCallResponse("2.0", req.id, result))
                    head = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
                    await stream.send_all(conn.send(h11.Response(status_code=200, headers=head))
                                          + conn.send(h11.Data(data=data)) + conn.send(h11.EndOfMessage()))
                    conn.start_next_cycle()
                elif isinstance(event, h11.ConnectionClosed):
                    return
        except (trio.BrokenResourceError, trio.ClosedResourceError, h11.ProtocolError):
            return
        finally:
            await trio.aclose_forcefully(stream)

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
            print(listeners[0].socket.getsockname()[1], flush=True)
            nursery.start_soon(trio.serve_listeners, connection, listeners)
            await trio.to_thread.run_sync(sys.stdin.read, abandon_on_cancel=True)
            nursery.cancel_scope.cancel()

    trio.run(main)


def serve_workers(n: int) -> None:
    """``mcpwire serve --workers N`` (our trio server in N processes on one port, SO_REUSEPORT)
    with the same App: print the port once every worker serves, stop them when stdin closes."""
    import re
    import signal

    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpwire_adapters.cli", "serve", "tests.bench._workload:our_app", "--port", "0",
         "--workers", str(n)], cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    port, serving = "", 0
    while serving < n:
        line = proc.stderr.readline()
        if not line:
            raise SystemExit(f"mcpwire serve --workers {n} exited: {proc.wait()}")
        found = re.search(r"serving .* at http://127\.0\.0\.1:(\d+)/", line)
        if found:
            port, serving = found[1], serving + 1
    print(port, flush=True)
    sys.stdin.read()
    proc.send_signal(signal.SIGINT)
    proc.wait(30)


def serve_ours_asgi() -> None:
    from mcpwire_adapters import asgi_app

    from ._workload import our_app

    _uvicorn(asgi_app(our_app()))


def serve_ours_asgi_fast() -> None:
    from mcpwire_adapters import asgi_app

    from ._workload import our_app

    _uvicorn(asgi_app(our_app()), fast=True)


def serve_sdk() -> None:
    from ._workload import sdk_asgi, sdk_small_server

    _uvicorn(sdk_asgi(sdk_small_server()))


def serve_sdk_fast() -> None:
    from ._workload import sdk_asgi, sdk_small_server

    _uvicorn(sdk_asgi(sdk_small_server()), fast=True)


def raw_asgi(app: Any, busy_ns: int = 0) -> Any:
    """The ASGI baseline: the engine and ``App.dispatch`` called straight from ASGI, with none
    of :class:`AsgiApp`'s driver rules (no check before the body, no body or send timeout, no
    disconnect watching, no SSE or listen streams). ``busy_ns``: first spin that long per
    request in pure Python (the calibration kind, ``raw-asgi-fast-busy``)."""
    import time as _time

    from mcpwire import HttpExchange, HttpRequest, ResponseHead

    server = app.server

    async def asgi(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if busy_ns:
            spun = _time.perf_counter_ns() + busy_ns
            while _time.perf_counter_ns() < spun:
                pass
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        reply = server.receive_http(HttpRequest(method=scope["method"], target=scope["path"],
                                                headers=scope["headers"], body=b"".join(chunks)), now=_time.time())
        outputs: list[Any] = []
        if isinstance(reply, HttpExchange):
            async def collect(out: Any) -> None:
                outputs.extend(out)
            await app.dispatch(reply, collect)
        else:
            outputs.extend(reply)
        for item in outputs:
            if isinstance(item, ResponseHead):
                await send({"type": "http.response.start", "status": item.status, "headers": list(item.headers)})
            else:
                await send({"type": "http.response.body", "body": item.data, "more_body": item.more})

    return asgi


def serve_raw_asgi_fast() -> None:
    from ._workload import our_app

    _uvicorn(raw_asgi(our_app()), fast=True)


BUSY_NS = 1000
"""The calibration kind's spin per request: what this much more work in process costs end to end."""


def serve_raw_asgi_fast_busy() -> None:
    from ._workload import our_app

    _uvicorn(raw_asgi(our_app(), busy_ns=BUSY_NS), fast=True)


def serve_wsgi() -> None:
    from ._wsgi import ours_app, serve_gunicorn

    serve_gunicorn(ours_app)


def serve_wsgi_plain() -> None:
    from ._wsgi import plain_app, serve_gunicorn

    serve_gunicorn(plain_app)


def _uvicorn(app: Any, *, fast: bool = False) -> None:
    """Serve an ASGI app under uvicorn on a free loopback port: h11 + asyncio (uvicorn's
    pure-Python defaults), or with ``fast`` httptools + uvloop."""
    import logging
    import socket

    import uvicorn

    logging.disable(logging.INFO)
    # proto=IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets that say so (as uvicorn's own
    # bind does); with proto 0 every response body would wait ~40 ms on Nagle + delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    config = uvicorn.Config(app, http="httptools" if fast else "h11", loop="uvloop" if fast else "asyncio",
                            lifespan="on", log_level="warning", access_log=False)
    server = uvicorn.Server(config)
    print(sock.getsockname()[1], flush=True)

    def stop() -> None:
        server.should_exit = True

    _stop_on_stdin_eof(stop)
    server.run(sockets=[sock])


# -- load generator -----------------------------------------------------------------------------------


def _request_bytes(port: int) -> bytes:
    from ._workload import CALL, CALL_HEADERS

    head = [b"POST /mcp HTTP/1.1"]
    for name, value in CALL_HEADERS:
        head.append(name + b": " + (f"127.0.0.1:{port}".encode() if name == b"host" else value))
    return b"\r\n".join(head) + b"\r\n\r\n" + CALL


async def _load(port: int, conns: int, requests: int, seconds: float) -> dict[str, Any]:
    payload = _request_bytes(port)
    latencies: list[int] = []
    errors: list[str] = []
    budget = [requests]
    deadline = time.perf_counter() + seconds

    async def worker() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while budget[0] > 0 and time.perf_counter() < deadline:
                budget[0] -= 1
                t0 = time.perf_counter_ns()
                writer.write(payload)
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.split(b"\r\n")
                status = int(lines[0].split(b" ", 2)[1])
                length = -1
                chunked = False
                for line in lines[1:]:
                    name, _, value = line.partition(b":")
                    name = name.strip().lower()
                    if name == b"content-length":
                        length = int(value)
                    elif name == b"transfer-encoding" and b"chunked" in value.lower():
                        chunked = True
                if chunked:
                    body = b""
                    while True:
                        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                        body += await reader.readexactly(size + 2)
                        if size == 0:
                            break
                else:
                    body = await reader.readexactly(length)
                latencies.append(time.perf_counter_ns() - t0)
                if status != 200 or b'"text":"hello"' not in body:
                    errors.append(f"{status} {body[:200]!r}")
        finally:
            writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(conns)))
    elapsed = time.perf_counter() - started
    lat = sorted(latencies)

    def pct(p: float) -> float:
        if not lat:
            return float("nan")
        return lat[min(len(lat) - 1, max(0, round(p / 100 * len(lat) + 0.5) - 1))] / 1e6

    return {
        "requests": len(lat), "errors": len(errors), "first_error": errors[0] if errors else None,
        "seconds": elapsed, "rps": len(lat) / elapsed if elapsed else 0.0,
        "p50_ms": pct(50), "p90_ms": pct(90), "p99_ms": pct(99), "max_ms": lat[-1] / 1e6 if lat else float("nan"),
        "conns": conns, "hit_time_cap": len(lat) < requests,
    }


# -- the parent's side ---------------------------------------------------------------------------------


def _cpu_seconds(pid: int) -> float:
    """CPU time of ``pid`` and of its live descendants (the worker processes of ``--workers``)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    total = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return total
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                children = f.read().split()
        except OSError:
            continue
        total += sum(_cpu_seconds(int(child)) for child in children)
    return total


class ServerProcess:
    """A server in a child process we started (``python -m MODULE serve KIND``, which prints
    the bound port); stopped by closing its stdin, then by its pid."""

    def __init__(self, kind: str, module: str = "tests.bench.bench_e2e") -> None:
        self.kind = kind
        self.proc = subprocess.Popen(
            [sys.executable, "-m", module, "serve", kind], cwd=REPO,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.strip().isdigit():
            self.stop()
            raise RuntimeError(f"{kind} server did not start: {line!r} {self.stderr()}")
        self.port = int(line)

    def cpu_seconds(self) -> float:
        return _cpu_seconds(self.proc.pid)

    def stderr(self) -> str:
        return self.proc.stderr.read()[-2000:] if self.proc.stderr and self.proc.poll() is not None else ""

    def stop(self) -> None:
        if self.proc.poll() is None and self.proc.stdin is not None:
            self.proc.stdin.close()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.terminate()
                try:
                    self.proc.wait(5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()


WRK = shutil.which("wrk")
"""The C load generator the issue measured with (Debian: ``apt-get install wrk``), or None."""
WRK_REQUESTS_PER_S = 5000  # the duration a wrk run gets: REQUESTS at about this rate, within SECONDS


def _wrk_script() -> str:
    """wrk's Lua: the same request as the Python generator's, and a JSON summary line at the end."""
    from ._workload import CALL, CALL_HEADERS

    lines = ['wrk.method = "POST"', f"wrk.body = {json.dumps(CALL.decode())}"]
    lines += [f"wrk.headers[{json.dumps(name.decode())}] = {json.dumps(value.decode())}"
              for name, value in CALL_HEADERS if name.lower() not in (b"host", b"content-length")]
    lines.append("""function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK {"requests":%d,"us":%d,"p50":%d,"p90":%d,"p99":%d,"max":%d,"errors":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max, e.status + e.connect + e.read + e.write + e.timeout))
end""")
    return "\n".join(lines) + "\n"


def _wrk_load(port: int, conns: int, requests: int, seconds: float) -> dict[str, Any]:
    """One wrk run (one thread, ``conns`` keep-alive connections) for about ``requests`` requests'
    worth of time. wrk counts every non-2xx/3xx answer and socket error; the bodies were checked by
    the Python generator's warm-up run against the same server."""
    assert WRK is not None
    duration = max(1, min(round(seconds), round(requests / WRK_REQUESTS_PER_S)))
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as script:
        script.write(_wrk_script())
        script.flush()
        done = subprocess.run([WRK, "-t1", f"-c{conns}", f"-d{duration}s", "-s", script.name,
                               f"http://127.0.0.1:{port}/mcp"], capture_output=True, text=True, timeout=duration + 60)
    if done.returncode != 0 or "WRK " not in done.stdout:
        raise RuntimeError(f"wrk failed: {done.stdout[-1000:]} {done.stderr[-1000:]}")
    r = json.loads(done.stdout.split("WRK ", 1)[1].splitlines()[0])
    elapsed = r["us"] / 1e6
    return {
        "requests": r["requests"], "errors": r["errors"], "first_error": "see wrk" if r["errors"] else None,
        "seconds": elapsed, "rps": r["requests"] / elapsed if elapsed else 0.0,
        "p50_ms": r["p50"] / 1000, "p90_ms": r["p90"] / 1000, "p99_ms": r["p99"] / 1000, "max_ms": r["max"] / 1000,
        "conns": conns, "hit_time_cap": False, "generator": "wrk",
    }


def run_load(port: int, conns: int, requests: int, seconds: float, *, check: bool = False) -> dict[str, Any]:
    """One load run: wrk when installed (it costs the shared cores far less than a Python
    generator, so the servers, not the generator, set the pace), else the Python generator
    in a fresh process (never sharing a GIL with a server). ``check``: the Python generator,
    which checks every answer's body, whatever is installed."""
    if WRK is not None and not check:
        return _wrk_load(port, conns, requests, seconds)
    done = subprocess.run(
        [sys.executable, "-m", "tests.bench.bench_e2e", "load", str(port), str(conns), str(requests), str(seconds)],
        cwd=REPO, capture_output=True, text=True, timeout=seconds + 60,
    )
    if done.returncode != 0:
        raise RuntimeError(f"load generator failed: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def interleaved_rounds(servers: dict[str, ServerProcess], runs: dict[str, list[dict[str, Any]]], *, rounds: int,
                       conns: int, requests: int, seconds: float, progress: Any, label: str) -> None:
    """``rounds`` rounds of the same load against each server of ``runs``, in alternating order
    (the machine's drift falls on all alike); each round's result, with the server's CPU per
    request, appended to ``runs[kind]``."""
    for r in range(rounds):
        order = list(runs) if r % 2 == 0 else list(reversed(runs))
        for kind in order:
            server = servers[kind]
            cpu0 = server.cpu_seconds()
            result = run_load(server.port, conns, requests, seconds)
            cpu = server.cpu_seconds() - cpu0
            result["server_cpu_us_per_request"] = cpu * 1e6 / result["requests"] if result["requests"] else None
            runs[kind].append(result)
            if progress is not None:
                errors = f", {result['errors']} errors" if result["errors"] else ""
                progress(f"{label} {kind} round {r + 1}/{rounds}: {result['rps']:.0f} req/s, "
                         f"p99 {result['p99_ms']:.2f} ms{errors}")


def measure(
    kinds: list[str], *, conns: int, requests: int, seconds: float, rounds: int, warmup: int,
    progress: Any = None,
) -> dict[str, Any]:
    """Start each server, then alternate load runs across them for ``rounds`` rounds.

    Per server: the median round by requests/s, plus the per-round figures.
    """
    servers: dict[str, ServerProcess] = {}
    failed: dict[str, str] = {}
    runs: dict[str, list[dict[str, Any]]] = {}
    try:
        for kind in kinds:
            try:
                servers[kind] = ServerProcess(kind)
                run_load(servers[kind].port, conns, warmup, 30, check=True)
                runs[kind] = []
            except Exception as exc:  # report it; the other servers still run
                failed[kind] = f"{type(exc).__name__}: {exc}"[:500]
        interleaved_rounds(servers, runs, rounds=rounds, conns=conns, requests=requests, seconds=seconds,
                           progress=progress, label="e2e")
    finally:
        for server in servers.values():
            server.stop()
    out: dict[str, Any] = {}
    for kind in kinds:
        if kind in failed:
            out[kind] = failed[kind]
            continue
        results = runs[kind]
        ranked = sorted(results, key=lambda x: x["rps"])
        median = dict(ranked[len(ranked) // 2])
        median["rounds"] = results
        out[kind] = median
    return out


KINDS: dict[str, Callable[[], None]] = {
    "ours": serve_ours, "ours-asgi": serve_ours_asgi, "ours-asgi-fast": serve_ours_asgi_fast, "sdk": serve_sdk,
    "sdk-fast": serve_sdk_fast, "bare": serve_bare, "raw-asgi-fast": serve_raw_asgi_fast,
    "raw-asgi-fast-busy": serve_raw_asgi_fast_busy, "wsgi": serve_wsgi, "wsgi-plain": serve_wsgi_plain,
    "workers-1": partial(serve_workers, 1), "workers-2": partial(serve_workers, 2),
}


def main(argv: list[str]) -> int:
    if argv[:1] == ["serve"]:
        KINDS[argv[1]]()
        return 0
    if argv[:1] == ["load"]:
        port, conns, requests, seconds = int(argv[1]), int(argv[2]), int(argv[3]), float(argv[4])
        print(json.dumps(asyncio.run(_load(port, conns, requests, seconds))))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
