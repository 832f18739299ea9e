"""Timing harness: variants interleaved in rounds, medians, and a description of the machine.

Every variant is a function ``batch(n) -> elapsed_ns`` that performs ``n`` operations and times
them itself with ``time.perf_counter_ns`` (so an asyncio or trio variant can leave its event
loop's start-up out of the measurement). Each variant is first calibrated to a batch size that
runs for about ``target_ms``; then every round runs one batch of every variant, in an order
shuffled per round, so that the machine's noise (a shared, 2-core box) falls on all variants
alike. The reported figure is the median of the per-round ns/op; ratios are taken between
medians of the same run.
"""

from __future__ import annotations

import gc
import os
import platform
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from collections.abc import Callable
from typing import Any

Batch = Callable[[int], int]


@dataclass
class Variant:
    key: str
    batch: Batch
    n: int = 1
    samples: list[float] = field(default_factory=list)  # ns per operation, one per round

    @property
    def median_ns(self) -> float:
        return statistics.median(self.samples)

    def summary(self) -> dict[str, Any]:
        s = sorted(self.samples)
        q = statistics.quantiles(s, n=4) if len(s) >= 2 else [s[0], s[0], s[0]]
        return {
            "median_ns": self.median_ns, "min_ns": s[0], "max_ns": s[-1], "q1_ns": q[0], "q3_ns": q[2],
            "rounds": len(s), "ops_per_batch": self.n,
        }


def calibrate(batch: Batch, target_ns: int, max_n: int = 1_000_000) -> int:
    """The batch size for which ``batch`` runs about ``target_ns`` (at least 1)."""
    batch(1)  # warm caches, lazy imports, first-call paths
    n = 1
    while True:
        elapsed = max(batch(n), 1)
        if elapsed >= target_ns // 4 or n >= max_n:
            break
        n = min(max_n, n * 4)
    return max(1, min(max_n, round(n * target_ns / elapsed)))


def run_interleaved(
    variants: list[Variant], *, rounds: int, target_ms: float, seed: int = 2026,
    progress: Callable[[str], None] | None = None,
) -> None:
    """Calibrate each variant, then run ``rounds`` shuffled rounds of one batch per variant."""
    target_ns = int(target_ms * 1e6)
    # Everything built so far (1,000-tool catalogs, the SDK's apps) moves to the permanent
    # generation: the collection before each batch then only walks what the batches made.
    gc.collect()
    gc.freeze()
    try:
        for v in variants:
            v.n = calibrate(v.batch, target_ns)
            v.samples.clear()
        rng = random.Random(seed)
        order = list(variants)
        for r in range(rounds):
            rng.shuffle(order)
            for v in order:
                gc.collect()
                v.samples.append(v.batch(v.n) / v.n)
            if progress is not None:
                progress(f"round {r + 1}/{rounds}")
    finally:
        gc.unfreeze()


def percentile(sorted_values: list[float], p: float) -> float:
    """Nearest-rank percentile of already sorted values (p in 0..100)."""
    if not sorted_values:
        return float("nan")
    k = max(0, min(len(sorted_values) - 1, round(p / 100 * len(sorted_values) + 0.5) - 1))
    return sorted_values[k]


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    versions: dict[str, str] = {}
    from importlib import metadata

    for dist in ("msgspec", "mcpwire", "trio", "h11", "mcp", "pydantic", "starlette", "uvicorn", "anyio"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    return {
        "nproc": os.cpu_count(),
        "cpu_model": model,
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "loadavg_at_start": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "versions": versions,
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }
