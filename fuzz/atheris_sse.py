"""Coverage-guided harness: bytes -> SSEReader.

Input format: byte 0 picks the event size limit (low 2 bits: 4 MiB, 16, 64, 1024 bytes) and
the chunk size (the other bits: 1 to 64 bytes); every other byte is the stream.

Invariants: ``feed``/``close`` raise nothing but :class:`~mcpwire.RemoteProtocolError`
(-32600, an event over the limit), and then every later call raises
:class:`~mcpwire.LocalProtocolError`; the stream fed whole, in fixed chunks, byte by byte, and
cut where its own bytes say, gives the same events and breaks the limit after the same events;
the reader never holds more than the limit.

Run: ``python fuzz/atheris_sse.py fuzz/corpus/sse -max_total_time=600 -print_final_stats=1``
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # when run as a script
from fuzz._harness import instrumented, main  # noqa: E402

with instrumented(__name__ == "__main__"):
    import mcpwire
    from fuzz import invariants

LIMITS = (4 * 1024 * 1024, 16, 64, 1024)


def read(stream: bytes, cuts: list[int], limit: int) -> tuple[list[mcpwire.framing.SSEEvent], int | None]:
    reader = mcpwire.framing.SSEReader(max_event_bytes=limit)
    bounds = [0, *cuts, len(stream)]
    events: list[mcpwire.framing.SSEEvent] = []
    try:
        for start, end in zip(bounds, bounds[1:]):
            events += reader.feed(stream[start:end])
            if reader.buffered_bytes > limit:
                raise invariants.Undocumented(f"reader holds {reader.buffered_bytes} bytes over {limit}")
        events += reader.close()
    except mcpwire.RemoteProtocolError as exc:
        if exc.code != -32600:
            raise invariants.Undocumented(f"SSE limit error with code {exc.code}") from None
        for more in (b"x", None):
            try:
                reader.feed(more) if more is not None else reader.close()
            except mcpwire.LocalProtocolError:
                continue
            raise invariants.Undocumented("a broken reader accepted another call") from None
        return events, len(events)
    return events, None


def test_one_input(data: bytes) -> None:
    if not data:
        return
    limit = LIMITS[data[0] & 3]
    chunk = (data[0] >> 2) + 1
    stream = data[1:]
    expected = read(stream, [], limit)
    variants = {
        "chunks": list(range(chunk, len(stream), chunk)),
        "bytes": list(range(1, len(stream))),
        "own": sorted({b % (len(stream) + 1) for b in stream[:16]}),
    }
    for name, cuts in variants.items():
        got = read(stream, cuts, limit)
        if got != expected:
            raise invariants.Undocumented(f"cutting ({name}) changed the events:\n{expected!r}\n{got!r}")


if __name__ == "__main__":
    main(test_one_input)
