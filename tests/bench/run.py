"""The benchmark command: every measurement side by side in one run, ratios, targets, JSON.

    .venv/bin/python tests/bench/run.py [--quick] [--json PATH] [--no-sdk] [--no-e2e] [--parallel N] [--profile]
    .venv/bin/python tests/bench/run.py --fuzz [--fuzz-seconds S]   (the fuzzer's cases/s instead: bench_fuzz.py)
    .venv/bin/python tests/bench/run.py --scale [--quick] [--no-sdk]   (1, 2, 4 processes on Redis against the
                                                                        SDK's workers, and fan-out: bench_scale.py)
    .venv/bin/python tests/bench/run.py --instructions [--quick]   (AsgiApp and the raw ASGI app under uvicorn's
                          protocol without a socket, and instructions per request under valgrind: bench_instructions.py)

Stages, in order: in-process timings (the msgspec floor, our engines, the SDK's ASGI app and
types, all interleaved in the same rounds), memory per in-flight request / listen stream,
import cost, end to end over loopback HTTP, N parallel calls on one client (ours against the
SDK's client, same server), and optionally a cProfile of our small tools/call.
Prints one markdown table of measurements and one of targets (MET / MISSED), and writes
everything (with per-round samples and the machine description) as JSON. ``--quick`` finishes
in under a minute; the full run in a few minutes. See docs/performance.md.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import math
import os
import pstats
import sys
import time
import warnings
from pathlib import Path
from collections.abc import Callable
from typing import Any

if __package__ in (None, ""):  # run as a script: make `tests.bench` importable from the repo root
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench import bench_e2e, bench_engine, bench_memory, bench_parallel, bench_stdio, bench_stdio_p99
from tests.bench._harness import Variant, machine, run_interleaved
from tests.bench.bench_memory import OWN_PACKAGES
from tests.bench._workload import LIST_TOOLS, PROGRESS_FRAMES, sdk_available

DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "latest.json"

QUICK = {"rounds": 15, "target_ms": 10.0, "mem_n": 300, "import_samples": 3,
         "e2e": {"conns": 8, "requests": 1000, "seconds": 3.0, "rounds": 3, "warmup": 200},
         "parallel": {"n": 8, "sleep_ms": 50.0, "repeats": 5, "seconds": 1.5, "rounds": 1},
         "stdio": {"n": 1000, "rounds": 1, "window": 128},
         "stdio_p99": {"conns": 64, "seconds": 1.0, "rounds": 1, "warmup": 0.3}}
FULL = {"rounds": 41, "target_ms": 50.0, "mem_n": 2000, "import_samples": 11,
        "e2e": {"conns": 8, "requests": 20000, "seconds": 25.0, "rounds": 5, "warmup": 1000},
        "parallel": {"n": 8, "sleep_ms": 50.0, "repeats": 15, "seconds": 4.0, "rounds": 3},
        "stdio": {"n": 5000, "rounds": 3, "window": 128},
        "stdio_p99": {"conns": 64, "seconds": 3.0, "rounds": 3, "warmup": 1.0}}

# --scale (issue 17): per server the same load as the end-to-end rows, six servers interleaved
SCALE_QUICK = {"conns": 16, "requests": 1000, "seconds": 3.0, "rounds": 3, "warmup": 200, "trials": 30}
SCALE_FULL = {"conns": 16, "requests": 20000, "seconds": 15.0, "rounds": 3, "warmup": 1000, "trials": 200}
# --instructions (issue 16): rounds of the timed rows under uvicorn; the two counted runs' sizes
INSTRUCTIONS_QUICK = {"rounds": 5, "n1": 200, "n2": 600}
INSTRUCTIONS_FULL = {"rounds": 21, "n1": 1000, "n2": 3000}

# Targets of the issue: (key, description, threshold text)
TARGETS = [
    ("floor", "server engine small tools/call <= 3x the msgspec floor"),
    ("sdk_cpu", ">= 20x less CPU per in-process tools/call than the SDK's ASGI path"),
    ("e2e_rps", ">= 3x the SDK's requests/s end to end (same load, same concurrency)"),
    ("e2e_p99", "lower p99 latency than the SDK end to end"),
    ("e2e_bare", "trio/h11 server >= 60% of the bare trio + h11 + msgspec server's requests/s (issue 16)"),
    ("engine_5x", "server engine small tools/call <= 5x the msgspec floor (issue 16)"),
    ("asgi_inproc", "AsgiApp in-process <= 2x the engine's own cost per call, the ASGI server's share (a null app) "
                    "taken out (issue 16)"),
    ("asgi_raw", "AsgiApp under uvicorn + httptools + uvloop >= 90% of the raw ASGI app calling the engine (issue 16)"),
    ("asgi_sdk", "AsgiApp under uvicorn + httptools + uvloop >= 5x the SDK under uvicorn's defaults (issue 16)"),
    ("stdio", "stdio: >= 5x the SDK's stdio server in calls/s, small calls pipelined (issue 16)"),
    ("stdio_p99", "stdio p99 at 64 connections no worse than the SDK's (64 processes, and 64 in flight on one; "
                  "issue 16)"),
    ("import_ms", "import mcpwire < 50 ms (CPU time of the import, fresh interpreter)"),
    ("import_modules", "import mcpwire loads a small fraction (<= 10%) of the modules of import mcp.server"),
]


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# -- stages -------------------------------------------------------------------------------------------


def stage_inprocess(cfg: dict[str, Any], with_sdk: bool) -> tuple[dict[str, Variant], dict[str, str]]:
    """Build every variant (a failure becomes a note, not an abort), then time them together."""
    from tests.bench._asgi import AsgiDriver

    drivers: list[AsgiDriver] = []
    todo = bench_engine.factories(drivers)
    if with_sdk:
        from tests.bench import bench_sdk

        todo += bench_sdk.factories(drivers)
    variants: list[Variant] = []
    failed: dict[str, str] = {}
    for key, build in todo:
        try:
            variants.append(build())
        except Exception as exc:
            failed[key] = f"{type(exc).__name__}: {exc}"[:300]
            log(f"variant {key} could not be built: {failed[key]}")
    client, client_note = bench_engine.client_variants()
    variants += client
    if client_note is not None:
        failed["client"] = client_note
    log(f"in-process: {len(variants)} variants x {cfg['rounds']} rounds of ~{cfg['target_ms']:.0f} ms")
    try:
        run_interleaved(variants, rounds=cfg["rounds"], target_ms=cfg["target_ms"], progress=log)
    finally:
        for d in drivers:
            d.close()
    return {v.key: v for v in variants}, failed


def stage_memory(cfg: dict[str, Any], with_sdk: bool) -> dict[str, Any]:
    n = cfg["mem_n"]
    log(f"memory: {n} in-flight requests / listen streams per measurement")
    todo: list[tuple[str, Any]] = [
        ("ours.engine_in_flight", bench_memory.engine_in_flight), ("ours.app_in_flight", bench_memory.app_in_flight),
        ("ours.asgi_in_flight", bench_memory.asgi_in_flight), ("ours.listen_stream", bench_memory.listen_streams),
    ]
    if with_sdk:
        todo.append(("sdk.in_flight", bench_memory.sdk_in_flight))
    out: dict[str, Any] = {}
    for key, measure in todo:
        try:
            out[key] = float(measure(n))
        except Exception as exc:
            out[key] = f"{type(exc).__name__}: {exc}"[:300]
            log(f"memory {key} failed: {out[key]}")
    return out


def stage_import(cfg: dict[str, Any], with_sdk: bool) -> dict[str, dict[str, Any]]:
    modules = ["msgspec", "mcpwire", "mcpwire_adapters"] + (["mcp.server"] if with_sdk else [])
    log(f"import: {cfg['import_samples']} fresh interpreters per module ({', '.join(modules)})")
    return bench_memory.import_cost(modules, cfg["import_samples"])


def _reported(stage: str, measure: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """A stage's results, or its failure as ``{"error": ...}`` (logged), so the other stages still run."""
    try:
        return measure()
    except Exception as exc:
        log(f"{stage} failed: {exc}")
        return {"error": f"{type(exc).__name__}: {exc}"[:500]}


def stage_e2e(cfg: dict[str, Any], with_sdk: bool) -> dict[str, Any]:
    e = cfg["e2e"]
    kinds = ["bare", "ours", "raw-asgi-fast", "raw-asgi-fast-busy", "ours-asgi-fast", "ours-asgi", "wsgi-plain", "wsgi",
             "workers-1", "workers-2"]
    kinds += ["sdk", "sdk-fast"] if with_sdk else []
    log(f"end to end: {', '.join(kinds)}; {e['conns']} connections, {e['requests']} requests "
        f"(cap {e['seconds']:.0f} s), {e['rounds']} round(s)")
    return _reported("end to end", lambda: bench_e2e.measure(
        kinds, conns=e["conns"], requests=e["requests"], seconds=e["seconds"], rounds=e["rounds"],
        warmup=e["warmup"], progress=log))


def stage_stdio(cfg: dict[str, Any], with_sdk: bool) -> dict[str, Any]:
    s = cfg["stdio"]
    kinds = ["ours"] + (["sdk"] if with_sdk else [])
    log(f"stdio: {s['n']} small tools/call pipelined ({s['window']} in flight) to {', '.join(kinds)}, "
        f"{s['rounds']} round(s)")
    out = _reported("stdio", lambda: bench_stdio.measure(
        kinds, n=s["n"], rounds=s["rounds"], window=s["window"], progress=log))
    p = cfg["stdio_p99"]
    log(f"stdio p99: {p['conns']} callers: {p['conns']} server processes, then {p['conns']} in flight on one "
        f"connection ({', '.join(kinds)}), {p['seconds']:g} s x {p['rounds']} round(s)")
    out["p99"] = _reported("stdio p99", lambda: bench_stdio_p99.measure(
        kinds, conns=p["conns"], seconds=p["seconds"], rounds=p["rounds"], warmup=p["warmup"], progress=log))
    return out


def stage_parallel(cfg: dict[str, Any], with_sdk: bool) -> dict[str, Any]:
    p = cfg["parallel"]
    kinds = ["ours", "ours-asyncio"] + (["sdk"] if with_sdk else [])
    log(f"parallel: {p['n']} concurrent tools/call on one client ({', '.join(kinds)}), a {p['sleep_ms']:.0f} ms "
        f"tool x {p['repeats']} tries, then {p['seconds']:.1f} s of an immediate tool; {p['rounds']} round(s)")
    return _reported("parallel", lambda: bench_parallel.measure(
        kinds, n=p["n"], sleep_ms=p["sleep_ms"], repeats=p["repeats"], seconds=p["seconds"], rounds=p["rounds"],
        progress=log))


def stage_profile(n: int = 30000, top: int = 25) -> str:
    """cProfile of the engine's small tools/call (receive_http -> complete), top by own time."""
    from tests.bench._workload import CALL, CALL_HEADERS, NOW, echo_result, http, small_server

    server = small_server()
    req = http(CALL, CALL_HEADERS)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(n):
        ex = server.receive_http(req, now=NOW)
        ex.complete(echo_result(ex.event.arguments.text))  # type: ignore[union-attr]
    prof.disable()
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf)
    stats.strip_dirs().sort_stats("tottime").print_stats(top)
    buf.write("\n")
    stats.sort_stats("cumulative").print_stats(top)
    return f"{n} calls\n" + buf.getvalue()


# -- the report ------------------------------------------------------------------------------------------


def _us(v: dict[str, Variant], key: str) -> float | None:
    return v[key].median_ns / 1000 if key in v else None


def _fmt(x: float | None, digits: int = 1) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.{digits}f}"


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


INPROCESS_ROWS = [
    # key, measurement, unit, ratio against (key), ratio label
    ("floor.call", "floor: msgspec decodes the tools/call bytes into a typed envelope, encodes the same "
     "response bytes", "us/op", None, ""),
    ("ours.call", "ours: small tools/call, HttpRequest -> Server.receive_http -> HttpExchange.complete -> bytes "
     "(Struct-typed tool)", "us/op", "floor.call", "x floor"),
    ("ours.call_no_lane", "ours: same call with Server(call_memo=0): every call admitted the full way, no lane",
     "us/op", "floor.call", "x floor"),
    ("ours.session_call", "ours: same call on a 2025-11-25 session (Mcp-Session-Id; store lookup, era shaping)",
     "us/op", "floor.call", "x floor"),
    ("ours.call_jsonschema", "ours: same call, tool declared by raw JSON Schema (jsonschema validator)", "us/op",
     "floor.call", "x floor"),
    ("ours.stdio_call", "ours: same call as an NDJSON line through StdioConnection", "us/op", "floor.call", "x floor"),
    ("ours.app_call", "ours: same call through the adapters' App.dispatch (trio; the handler runs)", "us/op",
     "floor.call", "x floor"),
    ("ours.asgi_call", "ours: same call into our adapters' ASGI app (AsgiApp on asyncio; handler runs)", "us/op",
     "floor.call", "x floor"),
    ("asgi.null", "the in-process ASGI driver alone: a null app reading the body and answering {} (the ASGI "
     "server's share of the row above)", "us/op", None, ""),
    ("ours.list_1000", f"ours: tools/list of {LIST_TOOLS:,} tools, paging through all 10 pages of 100", "us/listing",
     None, ""),
    ("floor.read_1mib", "floor: msgspec decodes the resources/read bytes, encodes the same 1 MiB response", "us/op",
     None, ""),
    ("ours.read_1mib", "ours: resources/read of 1 MiB text", "us/op", "floor.read_1mib", "x floor"),
    ("ours.progress_sse", f"ours: progress-streaming call ({PROGRESS_FRAMES} progress frames + final, SSE)", "us/op",
     "floor.call", "x floor"),
    ("ours.mrtr_2_rounds", "ours: MRTR, round 1 input_required + requestState, round 2 retry verified", "us/op",
     "floor.call", "x floor"),
    ("ours.task_create", "ours: same call becomes a task (tasks extension): create_task, then its result recorded",
     "us/op", "floor.call", "x floor"),
    ("ours.task_poll", "ours: tasks/get of a working task, answered by the engine from the in-memory store",
     "us/op", "floor.call", "x floor"),
    ("client.build_call", "ours client engine: build the tools/call (body + headers)", "us/op", "floor.call",
     "x floor"),
    ("client.parse_json", "ours client engine: parse the JSON response (HttpResponseParser)", "us/op", "floor.call",
     "x floor"),
    ("client.parse_sse", f"ours client engine: parse the SSE response ({PROGRESS_FRAMES} progress + final)", "us/op",
     "floor.call", "x floor"),
    ("sdk.call", "SDK: same tools/call into its ASGI app (stateless, json_response=True)", "us/op", "ours.call",
     "x ours engine"),
    ("sdk.call_sse_mode", "SDK: same, default response mode (json_response=False, SSE-capable)", "us/op", "ours.call",
     "x ours engine"),
    ("sdk.session_call", "SDK: same call on a 2025-11-25 session of its ASGI app (stateful, json_response=True)",
     "us/op", "ours.session_call", "x ours session"),
    ("sdk.call@asgi", "SDK ASGI tools/call vs our ASGI app (same driver, both run the handler)", "", "ours.asgi_call",
     "x ours ASGI"),
    ("sdk.list_1000", f"SDK: tools/list of {LIST_TOOLS:,} tools into its ASGI app (one page: it does not paginate)",
     "us/listing", "ours.list_1000", "x ours"),
    ("sdk.types_call", "SDK types: pydantic parses the request, serializes the same response", "us/op", "floor.call",
     "x floor"),
]

PARALLEL_LABELS = {"ours": "ours (HttpClient, trio)", "ours-asyncio": "ours (HttpClient, asyncio)",
                   "sdk": "SDK (mcp.Client, streamable HTTP, asyncio)"}

E2E_LABELS = {"bare": "bare trio + h11 + msgspec (no MCP rules; our trio driver's stack limit)",
              "ours": "ours (trio + h11 driver, App)", "ours-asgi": "ours (uvicorn + h11, our AsgiApp)",
              "raw-asgi-fast": "raw ASGI app calling the engine + App.dispatch (uvicorn + httptools + uvloop; "
                               "our ASGI driver's stack limit)",
              "raw-asgi-fast-busy": "calibration: the raw ASGI app spinning 1 us more per request in pure Python",
              "ours-asgi-fast": "ours (uvicorn + httptools + uvloop, our AsgiApp)",
              "wsgi-plain": "plain WSGI function answering fixed bytes (gunicorn gthread, 1 worker, 8 threads; "
                            "the WSGI server's ceiling)",
              "wsgi": "ours (gunicorn gthread, 1 worker, 8 threads, our WsgiApp)",
              "workers-1": "ours: mcpwire serve --workers 1 (trio + h11, SO_REUSEPORT)",
              "workers-2": "ours: mcpwire serve --workers 2 (two processes on one port)",
              "sdk": "SDK (uvicorn + h11, its Starlette app)",
              "sdk-fast": "SDK (uvicorn + httptools + uvloop, its Starlette app)"}


def build_rows(v: dict[str, Variant], failed: dict[str, str], mem: dict[str, Any], imp: dict[str, dict[str, Any]],
               e2e: dict[str, Any], with_sdk: bool, par: dict[str, Any] | None = None,
               stdio: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []

    def row(section: str, label: str, value: float | None, unit: str, ratio: float | None = None,
            against: str = "", key: str = "") -> None:
        rows.append({"section": section, "measurement": label, "value": value, "unit": unit, "ratio": ratio,
                     "against": against, "key": key})

    for key, label, unit, base, against in INPROCESS_ROWS:
        if key.startswith("sdk.") and not with_sdk:
            continue
        if key == "sdk.call@asgi":  # a ratio only
            if "sdk.call" in v and "ours.asgi_call" in v:
                row("in-process", label, None, "", _ratio(_us(v, "sdk.call"), _us(v, base or "")), against, key)
            continue
        if key.startswith("client.") and "client" in failed:
            if key == "client.build_call":
                row("in-process", f"TODO client engine: not available ({failed['client']})", None, "", key="client")
            continue
        if key not in v:
            reason = failed.get(key, "not measured")
            row("in-process", f"{label} -- FAILED: {reason}", None, unit, key=key)
            continue
        row("in-process", label, _us(v, key), unit, _ratio(_us(v, key), _us(v, base)) if base else None, against, key)

    sdk = e2e.get("sdk") if isinstance(e2e.get("sdk"), dict) else None
    for kind, r in e2e.items():
        if isinstance(r, str):
            row("end to end", f"{E2E_LABELS.get(kind, kind)} -- FAILED: {r}", None, "")
            continue
        label = E2E_LABELS.get(kind, kind)
        theirs = sdk if kind != "sdk" else None
        row("end to end", f"{label}: requests/s, {r['conns']} keep-alive connections", r["rps"], "req/s",
            _ratio(r["rps"], theirs["rps"]) if theirs else None, "x SDK", f"e2e.{kind}.rps")
        bare = e2e.get("bare")
        if kind == "ours" and isinstance(bare, dict):
            row("end to end", f"{label}: requests/s against the bare trio + h11 + msgspec server (same run)", None, "",
                _ratio(r["rps"], bare["rps"]), "x bare", "e2e.ours.rps@bare")
        one = e2e.get("workers-1")
        if kind == "workers-2" and isinstance(one, dict):
            row("end to end", f"{label}: requests/s against one worker (same run)", None, "",
                _ratio(r["rps"], one["rps"]), "x 1 worker", "e2e.workers-2.rps@1")
        raw = e2e.get("raw-asgi-fast")
        if kind == "raw-asgi-fast-busy" and isinstance(raw, dict):
            row("end to end", f"{label}: requests/s against the raw ASGI app (same run)", None, "",
                _ratio(r["rps"], raw["rps"]), "x raw ASGI", "e2e.raw-asgi-fast-busy.rps@raw")
        if kind == "ours-asgi-fast" and isinstance(raw, dict):
            row("end to end", f"{label}: requests/s against the raw ASGI app on the same uvicorn (same run)", None, "",
                _ratio(r["rps"], raw["rps"]), "x raw ASGI", "e2e.ours-asgi-fast.rps@raw")
        plain = e2e.get("wsgi-plain")
        if kind == "wsgi" and isinstance(plain, dict):
            paired = sorted(x["rps"] / y["rps"] for x, y in zip(r.get("rounds", []), plain.get("rounds", [])) if y["rps"])
            rounds = f"; per round {', '.join(f'{p:.2f}' for p in paired)}" if len(paired) > 1 else ""
            row("end to end", f"{label}: requests/s against the plain WSGI app on the same gunicorn (same run{rounds})",
                None, "", _ratio(r["rps"], plain["rps"]), "x plain WSGI", "e2e.wsgi.rps@plain")
        row("end to end", f"{label}: p50 latency", r["p50_ms"], "ms",
            _ratio(r["p50_ms"], theirs["p50_ms"]) if theirs else None, "x SDK", f"e2e.{kind}.p50")
        row("end to end", f"{label}: p99 latency", r["p99_ms"], "ms",
            _ratio(r["p99_ms"], theirs["p99_ms"]) if theirs else None, "x SDK", f"e2e.{kind}.p99")
        row("end to end", f"{label}: server process CPU per request", r["server_cpu_us_per_request"], "us/req",
            _ratio(r["server_cpu_us_per_request"], theirs["server_cpu_us_per_request"]) if theirs else None,
            "x SDK", f"e2e.{kind}.cpu")

    stdio = stdio or {}
    sdk_stdio = stdio.get("sdk") if isinstance(stdio.get("sdk"), dict) else None
    for kind, r in stdio.items():
        if kind == "p99":
            _p99_rows(row, r)
            continue
        label = {"ours": "ours (mcpwire serve --transport stdio)", "sdk": "SDK (MCPServer.run stdio)"}.get(kind, kind)
        if not isinstance(r, dict):
            row("stdio", f"{label} -- FAILED: {r}", None, "")
            continue
        theirs = sdk_stdio if kind != "sdk" else None
        row("stdio", f"{label}: small tools/call pipelined ({r['window']} in flight), calls/s", r["calls_per_s"],
            "calls/s", _ratio(r["calls_per_s"], theirs["calls_per_s"]) if theirs else None, "x SDK", f"stdio.{kind}")
        row("stdio", f"{label}: server CPU per call", r["server_cpu_us_per_call"], "us/call",
            _ratio(r["server_cpu_us_per_call"], theirs["server_cpu_us_per_call"]) if theirs else None, "x SDK",
            f"stdio.{kind}.cpu")

    par = par or {}
    n, sleep_ms = par.get("n"), par.get("sleep_ms")
    sdk_par = par.get("sdk") if isinstance(par.get("sdk"), dict) else None
    if "error" in par:
        row("one client", f"N parallel calls -- FAILED: {par['error']}", None, "")
    for kind in ("ours", "ours-asyncio", "sdk"):
        r = par.get(kind)
        if r is None:
            continue
        label = PARALLEL_LABELS[kind]
        if isinstance(r, str):
            row("one client", f"{label} -- FAILED: {r}", None, "")
            continue
        theirs = sdk_par if kind != "sdk" else None
        row("one client", f"{label}: 1 tools/call of a {sleep_ms:.0f} ms tool, wall time", r["one_ms"], "ms",
            key=f"parallel.{kind}.one")
        row("one client", f"{label}: {n} concurrent tools/call of that tool on the one client, wall time", r["n_ms"],
            "ms", _ratio(r["n_ms"], r["one_ms"]), "x 1 call", f"parallel.{kind}.n")
        if theirs is not None:
            row("one client", f"{label}: {n} concurrent calls against the SDK's client", None, "",
                _ratio(r["n_ms"], theirs["n_ms"]), "x SDK", f"parallel.{kind}.n@sdk")
        row("one client", f"{label}: {n} concurrent callers of an immediate tool, calls/s", r["calls_per_s"], "calls/s",
            _ratio(r["calls_per_s"], theirs["calls_per_s"]) if theirs else None, "x SDK", f"parallel.{kind}.rate")
        row("one client", f"{label}: client process CPU per call (same run)", r["client_cpu_us_per_call"], "us/call",
            _ratio(r["client_cpu_us_per_call"], theirs["client_cpu_us_per_call"]) if theirs else None, "x SDK",
            f"parallel.{kind}.cpu")

    labels = {
        "ours.engine_in_flight": "ours engine: per in-flight request (HttpRequest + exchange + event)",
        "ours.app_in_flight": "ours App under trio (task parked in the handler): per in-flight request",
        "ours.asgi_in_flight": "ours AsgiApp on asyncio (task parked in the handler): per in-flight request",
        "sdk.in_flight": "SDK ASGI app on asyncio (task parked in the tool): per in-flight request",
        "ours.listen_stream": "ours engine: per open subscriptions/listen stream (admitted and started)",
    }
    for key, label in labels.items():
        if key not in mem:
            continue
        value = mem[key]
        if isinstance(value, str):
            row("memory", f"{label} -- FAILED: {value}", None, "bytes", key=f"mem.{key}")
            continue
        base = mem.get("sdk.in_flight")
        comparable = key.endswith("in_flight") and key != "sdk.in_flight" and isinstance(base, float)
        ratio = _ratio(value, base) if comparable else None
        row("memory", label, value, "bytes", ratio, "x SDK", f"mem.{key}")

    base_imp = imp.get("mcp.server")
    for module, r in imp.items():
        cmp = base_imp is not None and module != "mcp.server"
        row("import", f"import {module}: wall time (fresh interpreter, median)", r["ms"], "ms",
            _ratio(r["ms"], base_imp["ms"]) if cmp and base_imp else None, "x SDK", f"import.{module}.ms")
        row("import", f"import {module}: CPU time (same samples)", r["cpu_ms"], "ms",
            _ratio(r["cpu_ms"], base_imp["cpu_ms"]) if cmp and base_imp else None, "x SDK", f"import.{module}.cpu_ms")
        row("import", f"import {module}: modules added to sys.modules", r["modules"], "modules",
            _ratio(r["modules"], base_imp["modules"]) if cmp and base_imp else None, "x SDK",
            f"import.{module}.modules")
        if module != "msgspec":
            row("import", f"import {module}: of which outside its own packages ({', '.join(OWN_PACKAGES[module])})",
                r["foreign_modules"], "modules",
                _ratio(r["foreign_modules"], base_imp["foreign_modules"]) if cmp and base_imp else None, "x SDK",
                f"import.{module}.foreign")
    return rows


STDIO_SHAPES = {"procs": "{n} server processes, a caller each", "pipe": "{n} calls in flight on one connection"}


def _p99_rows(row: Callable[..., None], result: dict[str, Any]) -> None:
    if "error" in result:
        row("stdio", f"p99 at 64 callers -- FAILED: {result['error']}", None, "")
        return
    for shape, by_kind in result.items():
        sdk = by_kind.get("sdk")
        for kind, r in by_kind.items():
            label = f"{'ours' if kind == 'ours' else 'SDK'}: {STDIO_SHAPES[shape].format(n=r['conns'])}"
            theirs = sdk if kind != "sdk" else None
            for p in ("p50", "p99"):
                row("stdio", f"{label}, small tools/call, {p} latency", r[f"{p}_ms"], "ms",
                    _ratio(r[f"{p}_ms"], theirs[f"{p}_ms"]) if theirs else None, "x SDK", f"stdio.{shape}.{kind}.{p}")
            row("stdio", f"{label}: load generator CPU per call (one epoll thread; busy "
                f"{100 * r['generator_busy']:.0f}% of the time)", r["generator_cpu_us_per_call"], "us/call",
                key=f"stdio.{shape}.{kind}.generator")


def build_targets(v: dict[str, Variant], imp: dict[str, dict[str, Any]], e2e: dict[str, Any],
                  stdio: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def target(key: str, measured: str, ok: bool | None) -> None:
        text = dict(TARGETS)[key]
        out.append({"key": key, "target": text, "measured": measured,
                    "status": "n/a" if ok is None else ("MET" if ok else "MISSED")})

    floor, ours = _us(v, "floor.call"), _us(v, "ours.call")
    r = _ratio(ours, floor)
    target("floor", f"{_fmt(r, 2)}x floor ({_fmt(ours, 2)} vs {_fmt(floor, 2)} us)", None if r is None else r <= 3)
    target("engine_5x", f"{_fmt(r, 2)}x floor", None if r is None else r <= 5)
    asgi, null = _us(v, "ours.asgi_call"), _us(v, "asgi.null")
    r = _ratio(asgi - null, ours) if asgi is not None and null is not None else None
    target("asgi_inproc", f"{_fmt(r, 2)}x ({_fmt(asgi, 2)} - {_fmt(null, 2)} us of the null app, vs {_fmt(ours, 2)} us)"
           if r is not None else "not measured", None if r is None else r <= 2)
    sdk = _us(v, "sdk.call")
    r = _ratio(sdk, ours)
    target("sdk_cpu", f"SDK/ours = {_fmt(r, 1)}x ({_fmt(sdk, 1)} vs {_fmt(ours, 2)} us)" if r else "not measured",
           None if r is None else r >= 20)
    o, k = e2e.get("ours"), e2e.get("sdk")
    if isinstance(o, dict) and isinstance(k, dict):
        r = o["rps"] / k["rps"]
        # Also the median of per-round ratios (each round runs both back to back): less
        # sensitive to the machine's load drifting between rounds.
        paired = sorted(a["rps"] / b["rps"] for a, b in zip(o.get("rounds", []), k.get("rounds", []), strict=False))
        extra = f"; per-round ratios {', '.join(f'{p:.2f}' for p in paired)}" if len(paired) > 1 else ""
        target("e2e_rps", f"{r:.2f}x ({o['rps']:,.0f} vs {k['rps']:,.0f} req/s{extra})", r >= 3)
        target("e2e_p99", f"{o['p99_ms']:.2f} vs {k['p99_ms']:.2f} ms", o["p99_ms"] < k["p99_ms"])
    else:
        target("e2e_rps", "not measured", None)
        target("e2e_p99", "not measured", None)
    b = e2e.get("bare")
    if isinstance(o, dict) and isinstance(b, dict):
        r = o["rps"] / b["rps"]
        paired = sorted(x["rps"] / y["rps"] for x, y in zip(o.get("rounds", []), b.get("rounds", []), strict=False))
        extra = f"; per-round ratios {', '.join(f'{p:.2f}' for p in paired)}" if len(paired) > 1 else ""
        target("e2e_bare", f"{r:.2f}x bare ({o['rps']:,.0f} vs {b['rps']:,.0f} req/s{extra})", r >= 0.6)
    else:
        target("e2e_bare", "not measured", None)
    fast, raw = e2e.get("ours-asgi-fast"), e2e.get("raw-asgi-fast")
    for key, theirs, goal, what in (("asgi_raw", raw, 0.9, "raw ASGI"), ("asgi_sdk", k, 5.0, "SDK")):
        if isinstance(fast, dict) and isinstance(theirs, dict):
            r = fast["rps"] / theirs["rps"]
            paired = sorted(x["rps"] / y["rps"] for x, y in zip(fast.get("rounds", []), theirs.get("rounds", []), strict=False))
            extra = f"; per-round ratios {', '.join(f'{p:.2f}' for p in paired)}" if len(paired) > 1 else ""
            cpu, their_cpu = fast.get("server_cpu_us_per_request"), theirs.get("server_cpu_us_per_request")
            if cpu and their_cpu:
                extra += f"; server CPU per request {cpu:.0f} vs {their_cpu:.0f} us"
            busy = e2e.get("raw-asgi-fast-busy")
            if key == "asgi_raw" and isinstance(busy, dict):
                extra += f"; the raw app spinning 1 us more per request: {busy['rps'] / theirs['rps']:.2f}x"
            target(key, f"{r:.2f}x {what} ({fast['rps']:,.0f} vs {theirs['rps']:,.0f} req/s{extra})", r >= goal)
        else:
            target(key, "not measured", None)
    so, ss = (stdio or {}).get("ours"), (stdio or {}).get("sdk")
    if isinstance(so, dict) and isinstance(ss, dict):
        r = so["calls_per_s"] / ss["calls_per_s"]
        target("stdio", f"{r:.2f}x ({so['calls_per_s']:,.0f} vs {ss['calls_per_s']:,.0f} calls/s)", r >= 5)
    else:
        target("stdio", "not measured", None)
    p99 = (stdio or {}).get("p99") or {}
    if all(isinstance(p99.get(shape), dict) and {"ours", "sdk"} <= set(p99[shape]) for shape in STDIO_SHAPES):
        parts = [f"{shape}: {p99[shape]['ours']['p99_ms']:.1f} vs {p99[shape]['sdk']['p99_ms']:.1f} ms "
                 f"({p99[shape]['ours']['p99_ms'] / p99[shape]['sdk']['p99_ms']:.2f}x)" for shape in STDIO_SHAPES]
        ok = all(p99[shape]["ours"]["p99_ms"] <= p99[shape]["sdk"]["p99_ms"] for shape in STDIO_SHAPES)
        target("stdio_p99", "; ".join(parts), ok)
    else:
        target("stdio_p99", "not measured", None)
    m = imp.get("mcpwire")
    # Judged on CPU time: on a loaded machine the wall clock also counts other processes' turns.
    floor_ms = imp["msgspec"]["cpu_ms"] if "msgspec" in imp else float("nan")
    measured = f"{m['cpu_ms']:.1f} ms CPU, {m['ms']:.1f} ms wall (msgspec alone: {floor_ms:.1f} ms CPU)" if m else ""
    target("import_ms", measured or "not measured", None if m is None else m["cpu_ms"] < 50)
    base = imp.get("mcp.server")
    if m and base:
        r = m["modules"] / base["modules"]
        target("import_modules", f"{m['modules']:.0f} vs {base['modules']:.0f} modules ({100 * r:.0f}%)", r <= 0.10)
    else:
        target("import_modules", "not measured", None)
    return out


def _load(info: dict[str, Any]) -> str:
    def first(la: Any) -> str:
        return "?" if not la else f"{la[0]:.1f}"

    return f"{first(info.get('loadavg_at_start'))} at start, {first(info.get('loadavg_at_end'))} at end"


def render(rows: list[dict[str, Any]], targets: list[dict[str, Any]], cfg_name: str, info: dict[str, Any]) -> str:
    lines = [
        f"mcpwire benchmarks ({cfg_name}) on {info['nproc']} x {info['cpu_model']}, Python {info['python']}, "
        f"msgspec {info['versions'].get('msgspec', '?')}, mcp {info['versions'].get('mcp', 'absent')}; "
        f"load average {_load(info)}",
        "",
        "| section | measurement | value | unit | ratio |",
        "|---|---|---:|---|---:|",
    ]
    for r in rows:
        ratio = f"{_fmt(r['ratio'], 2)} {r['against']}" if r["ratio"] is not None else ""
        if r["value"] is not None:
            value = _fmt(r["value"], 2 if r["unit"] in ("us/op", "ms") else 1)
        else:
            value = "TODO" if r["key"] == "client" else ("" if r["ratio"] is not None else "n/a")
        lines.append(f"| {r['section']} | {r['measurement']} | {value} | {r['unit']} | {ratio} |")
    lines += ["", "| target | measured | status |", "|---|---|---|"]
    for t in targets:
        lines.append(f"| {t['target']} | {t['measured']} | **{t['status']}** |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds and requests: under a minute")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help=f"results file (default {DEFAULT_JSON})")
    parser.add_argument("--no-sdk", action="store_true", help="skip every SDK measurement")
    parser.add_argument("--no-e2e", action="store_true", help="skip the loopback HTTP runs (parallel calls included)")
    parser.add_argument("--parallel", type=int, metavar="N", help="concurrent calls on one client (default 8)")
    parser.add_argument("--profile", action="store_true", help="also print a cProfile of our small tools/call")
    parser.add_argument("--rounds", type=int, help="override the number of in-process rounds")
    parser.add_argument("--conns", type=int, help="override the end-to-end concurrency")
    parser.add_argument("--fuzz", action="store_true", help="only the fuzzer's throughput (cases/s, HTTP and stdio)")
    parser.add_argument("--fuzz-seconds", type=float, default=20.0, help="seconds of fuzzing per transport (default 20)")
    parser.add_argument("--scale", action="store_true",
                        help="only scaling out: mcpwire serve --redis with 1, 2, 4 processes against the SDK under "
                             "uvicorn --workers 1, 2, 4, and the notification fan-out latency across processes")
    parser.add_argument("--scale-trials", type=int, help="fan-out trials per path (default 200; --quick 30)")
    parser.add_argument("--instructions", action="store_true",
                        help="only the ASGI apps under uvicorn's protocol without a socket, and instructions per "
                             "request counted by valgrind (the engine, the floor, both ASGI apps)")
    args = parser.parse_args(argv)
    if args.fuzz:
        return _fuzz_mode(args.fuzz_seconds, args.json)
    if args.instructions:
        return _instructions_mode(INSTRUCTIONS_QUICK if args.quick else INSTRUCTIONS_FULL, args.json)
    if args.scale:
        cfg_scale = dict(SCALE_QUICK if args.quick else SCALE_FULL)
        if args.conns:
            cfg_scale["conns"] = args.conns
        if args.scale_trials:
            cfg_scale["trials"] = args.scale_trials
        return _scale_mode(cfg_scale, not args.no_sdk and sdk_available(), args.json)

    cfg: dict[str, Any] = json.loads(json.dumps(QUICK if args.quick else FULL))
    if args.rounds:
        cfg["rounds"] = args.rounds
    if args.conns:
        cfg["e2e"]["conns"] = args.conns
    if args.parallel:
        cfg["parallel"]["n"] = args.parallel
    with_sdk = not args.no_sdk
    if with_sdk and not sdk_available():
        log("the official SDK is not installed (pip install -e '.[bench]'): SDK rows skipped")
        with_sdk = False
    warnings.simplefilter("ignore")  # the SDK's deprecation notices would clutter the output

    started = time.perf_counter()
    info = machine()
    v, failed = stage_inprocess(cfg, with_sdk)
    mem = stage_memory(cfg, with_sdk)
    imp = stage_import(cfg, with_sdk)
    e2e = {} if args.no_e2e else stage_e2e(cfg, with_sdk)
    par = {} if args.no_e2e else stage_parallel(cfg, with_sdk)
    stdio = {} if args.no_e2e else stage_stdio(cfg, with_sdk)
    profile = stage_profile() if args.profile else None
    elapsed = time.perf_counter() - started
    info["loadavg_at_end"] = os.getloadavg() if hasattr(os, "getloadavg") else None

    rows = build_rows(v, failed, mem, imp, e2e, with_sdk, par, stdio)
    targets = build_targets(v, imp, e2e, stdio)
    cfg_name = "quick" if args.quick else "full"
    print(render(rows, targets, cfg_name, info))
    print(f"\n(wall time {elapsed:.0f} s; in-process figures are medians of {cfg['rounds']} interleaved rounds)")
    if profile is not None:
        print("\n## cProfile: ours small tools/call\n")
        print(profile)

    args.json.parent.mkdir(parents=True, exist_ok=True)
    results = {
        "mode": cfg_name, "config": cfg, "machine": info, "wall_seconds": elapsed, "failed": failed,
        "rows": rows, "targets": targets,
        "inprocess": {k: var.summary() | {"samples_ns": var.samples} for k, var in v.items()},
        "memory_bytes": mem, "import": imp, "e2e": e2e, "parallel": par, "stdio": stdio,
        "profile": profile,
    }
    args.json.write_text(json.dumps(results, indent=1, default=str))
    log(f"results written to {args.json}")
    return 0


def _fuzz_mode(seconds: float, where: Path) -> int:
    from tests.bench import bench_fuzz

    log(f"fuzzing the conformance fixture for {seconds:g} s over HTTP, then over stdio")
    result = bench_fuzz.measure(seconds)
    print(bench_fuzz.render(result, seconds))
    where = where.with_name("fuzz.json") if where == DEFAULT_JSON else where
    where.parent.mkdir(parents=True, exist_ok=True)
    where.write_text(json.dumps({"mode": "fuzz", "machine": machine(), "fuzz": result}, indent=1, default=str))
    log(f"results written to {where}")
    return 0


def _instructions_mode(cfg: dict[str, int], where: Path) -> int:
    from tests.bench import bench_instructions

    log(f"AsgiApp and the raw ASGI app under uvicorn's protocol, {cfg['rounds']} interleaved rounds; then "
        + (f"instructions per operation ({cfg['n1']} and {cfg['n2']} operations under valgrind)"
           if bench_instructions.VALGRIND else "no instruction counts (valgrind is not installed)"))
    started = time.perf_counter()
    info = machine()
    result = bench_instructions.measure(rounds=cfg["rounds"], n1=cfg["n1"], n2=cfg["n2"], progress=log)
    _finish_mode("instructions", bench_instructions.render(result), cfg, result, started, info, where)
    return 0


def _scale_mode(cfg: dict[str, Any], with_sdk: bool, where: Path) -> int:
    from tests.bench import bench_scale

    log(f"scaling out: 1, 2, 4 processes{' and SDK workers' if with_sdk else ''}; {cfg['conns']} keep-alive "
        f"connections, {cfg['requests']} requests (cap {cfg['seconds']:g} s), {cfg['rounds']} interleaved rounds; "
        f"then {cfg['trials']} fan-out trials per path")
    started = time.perf_counter()
    info = machine()
    result = bench_scale.measure(conns=cfg["conns"], requests=cfg["requests"], seconds=cfg["seconds"],
                                 rounds=cfg["rounds"], warmup=cfg["warmup"], trials=cfg["trials"],
                                 with_sdk=with_sdk, progress=log)
    _finish_mode("scale", bench_scale.render(result), cfg, result, started, info, where)
    return 0


def _finish_mode(mode: str, report: str, cfg: dict[str, Any], result: Any, started: float, info: dict[str, Any],
                 where: Path) -> None:
    """The end of a mode run on its own: its report with the wall time and the machine under it,
    and its JSON (``MODE.json`` beside the default results file unless ``--json`` named one)."""
    info["loadavg_at_end"] = os.getloadavg() if hasattr(os, "getloadavg") else None
    print(report)
    print(f"\n(wall time {time.perf_counter() - started:.0f} s; load average {_load(info)}; {info.get('nproc')} CPUs, {info.get('cpu_model')}, Python {info.get('python')})")
    where = where.with_name(f"{mode}.json") if where == DEFAULT_JSON else where
    where.parent.mkdir(parents=True, exist_ok=True)
    where.write_text(json.dumps({"mode": mode, "config": cfg, "machine": info, mode: result}, indent=1, default=str))
    log(f"results written to {where}")


if __name__ == "__main__":
    raise SystemExit(main())
