"""Running the client under test: its command line filled in (:func:`fill`), the process run in
a process group of its own with its output drained and its memory sampled, stopped at a deadline
and its whole group killed at the end (:func:`run_client`), and what came of it
(:class:`ProcessOutcome`).

Memory is the resident set size of every process of the group (read from ``/proc``; not sampled
where there is none), the hostile stdio server excluded, every :data:`SAMPLE_SECONDS`.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import trio

__all__ = ["SAMPLE_SECONDS", "TAIL_BYTES", "ProcessOutcome", "crash_signs", "fill", "run_client"]

TAIL_BYTES: Final = 4096
SAMPLE_SECONDS: Final = 0.1
STOP_GRACE: Final = 1.0  # seconds between SIGTERM and SIGKILL at the deadline
_STDIO_SERVER: Final = b"mcpwire_adapters.testing.client_probe.stdio_server"
_PAGE: Final = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


@dataclass
class ProcessOutcome:
    """How a client run went: ``argv``; ``exit_code`` (negative: the signal that ended it; None:
    it was still running at the deadline and was killed, ``timed_out``); ``seconds`` it ran;
    the last :data:`TAIL_BYTES` of ``stdout`` and ``stderr`` and their sizes; ``found``: which
    of the watched strings appeared in stdout; ``memory``: (time, bytes) samples of the resident
    memory of its processes."""

    argv: list[str]
    exit_code: int | None = None
    timed_out: bool = False
    started: float = 0.0
    seconds: float = 0.0
    stdout: bytes = b""
    stderr: bytes = b""
    stdout_size: int = 0
    stderr_size: int = 0
    found: set[str] = field(default_factory=set)
    memory: list[tuple[float, int]] = field(default_factory=list)


def fill(command: str, *, url: str | None = None, server: Sequence[str] | None = None) -> list[str]:
    """``command`` split as a shell would, with ``{url}`` replaced by ``url`` and ``{server}`` by
    the hostile stdio server's command: as several words where it is a word of its own, as one
    shell-quoted line inside a longer word (``--stdio={server}``)."""
    words: list[str] = []
    for word in shlex.split(command):
        if server is not None and word == "{server}":
            words += list(server)
            continue
        if server is not None:
            word = word.replace("{server}", shlex.join(server))
        if url is not None:
            word = word.replace("{url}", url)
        words.append(word)
    return words


# A frame of a stack trace as runtimes print one for an exception nobody caught (Python, a
# JavaScript runtime, Go, Java, Rust): the trace ends the output of a process that crashed.
_FRAME: Final = re.compile(r'^\s*File ".*", line \d+|^\s+at \S|^Node\.js v\d|^\t.+\.go:\d+|^\tat .+\(.*\)$|panicked at')
_TRACE_LINES: Final = 4  # of the last lines of stderr, how many may hold the trace's frames


def crash_signs(outcome: ProcessOutcome) -> str | None:
    """Why the run looks like a crash, or None: death by a signal, or a failure whose stderr ends
    with a stack trace (an exception nothing caught; a library that logs a trace and fails
    cleanly after it is no crash)."""
    if outcome.exit_code is not None and outcome.exit_code < 0 and not outcome.timed_out:
        return f"ended by signal {-outcome.exit_code} ({_signal_name(-outcome.exit_code)})"
    if outcome.timed_out or not outcome.exit_code:
        return None
    lines = [line for line in outcome.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    if any(_FRAME.search(line) for line in lines[-_TRACE_LINES:]):
        return f"exit {outcome.exit_code} after a stack trace on stderr"
    return None


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return "unknown"


async def run_client(argv: Sequence[str], *, timeout: float, env: Mapping[str, str] | None = None,
                     watch: Sequence[str] = (), cwd: str | None = None) -> ProcessOutcome:
    """Run ``argv`` (stdin empty) until it exits or ``timeout`` seconds pass (then SIGTERM, and
    SIGKILL after :data:`STOP_GRACE`), then kill what is left of its process group."""
    outcome = ProcessOutcome(list(argv), started=time.monotonic())
    tails = {"stdout": bytearray(), "stderr": bytearray()}
    keys = [w.encode() for w in watch]
    process = await trio.lowlevel.open_process(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                               stderr=subprocess.PIPE, start_new_session=True,
                                               env=dict(env) if env is not None else None, cwd=cwd)
    group = process.pid

    drained = {"stdout": trio.Event(), "stderr": trio.Event()}

    async def drain(stream: trio.abc.ReceiveStream | None, name: str) -> None:
        try:
            if stream is not None:
                await _drain(stream, name)
        finally:
            drained[name].set()

    async def _drain(stream: trio.abc.ReceiveStream, name: str) -> None:
        tail = tails[name]
        overlap = max((len(k) for k in keys), default=0)
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            while data := await stream.receive_some(65536):
                if name == "stdout":
                    outcome.stdout_size += len(data)
                    window = bytes(tail[-overlap:]) + data if overlap else data
                    outcome.found |= {w for w, k in zip(watch, keys, strict=True) if k in window}
                else:
                    outcome.stderr_size += len(data)
                tail += data
                del tail[:-TAIL_BYTES]

    async def sample() -> None:
        while True:
            size = _group_memory(group)
            if size:
                outcome.memory.append((time.monotonic(), size))
            await trio.sleep(SAMPLE_SECONDS)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(drain, process.stdout, "stdout")
        nursery.start_soon(drain, process.stderr, "stderr")
        nursery.start_soon(sample)
        with trio.move_on_after(timeout) as waited:
            await process.wait()
        if waited.cancelled_caught:
            outcome.timed_out = True
            _kill_group(group, signal.SIGTERM)
            with trio.move_on_after(STOP_GRACE):
                await process.wait()
        _kill_group(group, signal.SIGKILL)  # what the client left running (a stdio server, say)
        await process.wait()
        with trio.move_on_after(2.0):  # the pipes close once every holder is gone
            for event in drained.values():
                await event.wait()
        nursery.cancel_scope.cancel()
    outcome.seconds = time.monotonic() - outcome.started
    outcome.exit_code = None if outcome.timed_out else process.returncode
    outcome.stdout, outcome.stderr = bytes(tails["stdout"]), bytes(tails["stderr"])
    return outcome


def _kill_group(group: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, sig)


def _group_memory(group: int) -> int:
    """The resident memory of the processes of ``group``, the hostile stdio server's excepted (0
    without ``/proc``)."""
    total = 0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return 0
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_bytes()
            fields = stat[stat.rindex(b")") + 2:].split()
            if int(fields[2]) != group:  # pgrp
                continue
            args = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            if args[1:3] == [b"-m", _STDIO_SERVER]:
                continue
            total += int(Path(f"/proc/{entry}/statm").read_bytes().split()[1]) * _PAGE
        except (OSError, ValueError, IndexError):
            continue
    return total
