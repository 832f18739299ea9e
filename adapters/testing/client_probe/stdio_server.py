"""The hostile server over stdio, a process the client under test starts itself:

    python -m mcpwire_adapters.testing.client_probe.stdio_server SETUP.json

``SETUP.json`` (written by the probe) names the scenario, holds the rows to answer with, the
file to write the records to (one JSON object a line, each naming the process that wrote it: a
record when its request arrives and again when its answer is written, the last one of an index
winning; in between, before each await point, the times at which more of its messages were
written; a client may start the server more than once, and every process appends to the same
file) and a deadline in seconds,
after which the process exits whatever happens. It reads NDJSON on stdin (lines of at most
:data:`MAX_LINE_BYTES`) and writes its answers on stdout, one at a time in the order of the
requests; an answer's await point waits for the client's answers to the server's requests while
stdin is still read. It exits half a second after the end of stdin (the client's way to stop a
stdio server), after an answer that ends ``cut`` (stdout closed), or at the deadline.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, TextIO

import trio

from .hostile import HostileServer, Plan, Record, Seen
from .scenarios import by_name
from .script import Await, answer_from_json

__all__ = ["MAX_LINE_BYTES", "main", "read_records", "write_setup"]

MAX_LINE_BYTES: Final = 16 * 1024 * 1024
_POLL: Final = 0.02
_GRACE: Final = 0.5


def write_setup(path: Path, *, scenario: str, answers: Sequence[dict[str, Any]], own: int, records: Path,
                deadline: float) -> None:
    """Write the setup file the stdio server reads."""
    path.write_text(json.dumps({"scenario": scenario, "answers": list(answers), "own": own,
                                "records": str(records), "deadline": deadline}), encoding="utf-8")


def read_records(path: Path) -> list[Record]:
    """The records the stdio servers of a run wrote (the last line of each index of each
    process), in the order their requests arrived, numbered again in that order; each tells
    which process (``connection``, 1, 2, ... in the order they were first written to) got it."""
    by_key: dict[tuple[int, int], Record] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                data = json.loads(line)
                key = (int(data.pop("pid")), int(data["index"]))
                if "more" in data:
                    by_key[key].delivered += [float(t) for t in data["more"]]
                    continue
                by_key[key] = Record.from_json(data)
            except (ValueError, KeyError, TypeError):
                continue  # a line cut short when the process was killed
    connections: dict[int, int] = {}
    for pid, _ in by_key:
        connections.setdefault(pid, len(connections) + 1)
    records = sorted(by_key.items(), key=lambda item: (item[1].at, connections[item[0][0]], item[0][1]))
    for number, ((pid, _), record) in enumerate(records):
        record.index, record.connection = number, connections[pid]
    return [record for _, record in records]


class _Run:
    def __init__(self, server: HostileServer, log: TextIO) -> None:
        self.server = server
        self.log = log
        self.plans: tuple[trio.MemorySendChannel[Plan | None], trio.MemoryReceiveChannel[Plan | None]] = \
            trio.open_memory_channel(1000)
        self.stdout = trio.lowlevel.FdStream(os.dup(1))
        self.logged: dict[int, int] = {}
        self.pid = os.getpid()

    def note(self, record: Record) -> None:
        self.log.write(json.dumps({"pid": self.pid, **record.to_json()}) + "\n")
        self.log.flush()
        self.logged[record.index] = len(record.delivered)

    def note_progress(self, record: Record) -> None:
        """The times of the messages written since the record was last logged."""
        done = self.logged.get(record.index, 0)
        if len(record.delivered) > done:
            self.log.write(json.dumps({"pid": self.pid, "index": record.index, "more": record.delivered[done:]}) + "\n")
            self.log.flush()
            self.logged[record.index] = len(record.delivered)

    async def read(self) -> None:
        stdin = trio.lowlevel.FdStream(os.dup(0))
        buffer = bytearray()
        async with stdin:
            while True:
                data = await stdin.receive_some(65536)
                if not data:
                    break
                buffer += data
                while b"\n" in buffer:
                    line, _, rest = bytes(buffer).partition(b"\n")
                    buffer = bytearray(rest)
                    await self.line(line)
                if len(buffer) > MAX_LINE_BYTES:  # recorded (cut), then no more reading: the framing is lost
                    await self.line(bytes(buffer))
                    buffer.clear()
                    break
        if buffer.strip():
            await self.line(bytes(buffer))
        await self.plans[0].send(None)

    async def line(self, line: bytes) -> None:
        if not line.strip():
            return
        plan = self.server.receive(Seen("LINE", "", (), line, time.monotonic()))
        self.note(self.server.records[plan.record])
        await self.plans[0].send(plan)

    async def write(self) -> None:
        async for plan in self.plans[1]:
            if plan is None:
                return
            ended = "open"
            written = bytearray()
            count = 0
            try:
                for part in plan.parts:
                    if isinstance(part, Await):
                        self.note_progress(self.server.records[plan.record])
                        while not self.server.all_answered(part.ids):
                            await trio.sleep(_POLL)
                        continue
                    written += part[:16 * 1024] if len(written) < 16 * 1024 else b""
                    began = time.monotonic()  # the client may answer before this task runs again: time the start
                    await self.stdout.send_all(part)
                    count += len(part)
                    self.server.wrote(plan.record, count, began)
                ended = plan.end if plan.end != "done" else "done"
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                ended = "gone"
            finally:
                self.server.finished(plan.record, ended, time.monotonic(), bytes(written))
                self.note(self.server.records[plan.record])
            if ended in ("cut", "gone"):
                return


async def _serve(setup: dict[str, Any]) -> None:
    scenario = by_name(setup["scenario"])
    answers = tuple(answer_from_json(a) for a in setup["answers"])
    server = HostileServer(scenario, answers, own=int(setup["own"]), stdio=True)
    with open(setup["records"], "a", encoding="utf-8") as log, trio.move_on_after(float(setup["deadline"])):
        run = _Run(server, log)
        async with trio.open_nursery() as nursery:
            async def write_then_stop() -> None:
                await run.write()  # returns at the end of stdin, or after a cut: then stop reading too
                nursery.cancel_scope.cancel()

            nursery.start_soon(write_then_stop)
            await run.read()
            await trio.sleep(_GRACE)  # the end of stdin: what is left to write has this long
            nursery.cancel_scope.cancel()
        for record in server.records:
            if not record.ended:
                record.ended = "open"
                run.note(record)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        sys.stderr.write("usage: python -m mcpwire_adapters.testing.client_probe.stdio_server SETUP.json\n")
        return 2
    setup = json.loads(Path(args[0]).read_text(encoding="utf-8"))
    trio.run(_serve, setup)
    return 0


if __name__ == "__main__":
    sys.exit(main())
