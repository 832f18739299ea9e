"""Coverage-guided harness: bytes -> StdioConnection (the server side of stdio).

Input format: byte 0 picks the chunk size (1 to 64 bytes, or whole when 0), byte 1 the line
limit (4 MiB, 64 or 300 bytes; low bits) and the first host plan; every other byte is stdin.

Invariants: ``receive_data``/``receive_eof`` never raise; every byte of output is whole NDJSON
lines of documented messages; the outputs for the stream fed whole and fed in chunks are the
same; every exchange and listen stream then answered by a host plan emits documented lines.

Run: ``python fuzz/atheris_ndjson.py fuzz/corpus/ndjson -max_total_time=600 -print_final_stats=1``
"""

from __future__ import annotations

from typing import Any

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # when run as a script
from fuzz._harness import instrumented, main  # noqa: E402

with instrumented(__name__ == "__main__"):
    import mcpwire
    from fuzz import host, invariants, targets

SERVER = targets.make_server()
LIMITS = (4 * 1024 * 1024, 64, 300, 4 * 1024 * 1024)


def summarize(outputs: list[Any]) -> list[Any]:
    """Outputs as comparable values (exchanges by id and event, streams by id)."""
    out: list[Any] = []
    for item in outputs:
        if isinstance(item, bytes):
            out.append(invariants.line_invariants(item))
        elif isinstance(item, mcpwire.StdioExchange):
            out.append(("exchange", item.request_id, type(item.event).__name__))
        elif isinstance(item, mcpwire.StdioListenStream):
            out.append(("listen", item.request_id, item.filter))
        elif isinstance(item, mcpwire.Cancelled):
            out.append(item)
        else:
            raise invariants.Undocumented(f"StdioConnection produced {item!r}")
    return out


def feed(stream: bytes, chunk: int, limit: int) -> tuple[mcpwire.StdioConnection, list[Any]]:
    conn = mcpwire.StdioConnection(SERVER, max_line_bytes=limit)
    outputs: list[Any] = []
    step = chunk or max(len(stream), 1)
    for start in range(0, len(stream), step):
        outputs += conn.receive_data(stream[start:start + step], now=targets.NOW)
    outputs += conn.receive_eof(now=targets.NOW)
    return conn, outputs


def answer(outputs: list[Any], first_plan: int) -> None:
    for index, item in enumerate(outputs):
        if isinstance(item, mcpwire.StdioExchange):
            out, _host_error = host.drive(item, host.PLANS[(first_plan + index) % len(host.PLANS)])
            invariants.lines_invariants(out)
            item.cancel()
        elif isinstance(item, mcpwire.StdioListenStream):
            lines = [item.start()]
            for delivery in (SERVER.list_changed("tools"), SERVER.resource_updated("test://static-text"),
                             SERVER.close_listeners()):
                lines += [out for target, out in delivery if target is item]
            item.cancel()
            invariants.lines_invariants([line for line in lines if line])


def test_one_input(data: bytes) -> None:
    if len(data) < 2:
        return
    chunk = data[0] % 65
    limit = LIMITS[data[1] % len(LIMITS)]
    stream = data[2:]
    _, whole = feed(stream, 0, limit)
    expected = summarize(whole)
    for item in whole:  # the first run's exchanges and streams are not answered: close them
        if isinstance(item, (mcpwire.StdioExchange, mcpwire.StdioListenStream)):
            item.cancel()
    _, chunked = feed(stream, chunk, limit)
    got = summarize(chunked)
    if got != expected:
        raise invariants.Undocumented(f"chunking changed the outputs:\n{expected!r}\n{got!r}")
    answer(chunked, data[1] >> 2)
    assert SERVER.open_listeners == 0


if __name__ == "__main__":
    main(test_one_input)
