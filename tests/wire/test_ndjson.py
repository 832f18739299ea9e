"""Tests of mcpwire.wire.ndjson: line splitting, whitespace, limits, lifecycle and chunking."""

from __future__ import annotations

import itertools
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpwire.wire.errors import LocalProtocolError
from mcpwire.wire.ndjson import LineReader, OversizeLine, encode_line

Item = bytes | OversizeLine


def read(stream: bytes, limit: int = 4 * 1024 * 1024) -> list[Item]:
    reader = LineReader(max_line_bytes=limit)
    return reader.feed(stream) + reader.close()


def read_bytewise(stream: bytes, limit: int = 4 * 1024 * 1024) -> list[Item]:
    reader = LineReader(max_line_bytes=limit)
    items: list[Item] = []
    for i in range(len(stream)):
        items += reader.feed(stream[i : i + 1])
    return items + reader.close()


def test_encode_line() -> None:
    assert encode_line(b'{"a":1}') == b'{"a":1}\n'
    assert encode_line(b"a\rb") == b"a\rb\n"
    with pytest.raises(LocalProtocolError):
        encode_line(b'{"a":\n1}')


def test_lines_split_on_lf() -> None:
    stream = b'{"id":1}\n{"id":2}\n'
    assert read(stream) == [b'{"id":1}', b'{"id":2}']
    assert read_bytewise(stream) == [b'{"id":1}', b'{"id":2}']


def test_one_trailing_cr_stripped() -> None:
    assert read(b"a\r\nb\r\r\nc\rd\n") == [b"a", b"b\r", b"c\rd"]


def test_blank_and_whitespace_lines_skipped() -> None:
    assert read(b"\n\r\n  \n\t \r\n{}\n \n") == [b"{}"]
    # Other control bytes are not JSON whitespace: left for the JSON decoder to reject.
    assert read(b"\x0c\n\x0b\n") == [b"\x0c", b"\x0b"]
    # Surrounding whitespace of a real line is not this layer's business.
    assert read(b"  {} \t\n") == [b"  {} \t"]


def test_final_line_without_newline_returned_by_close() -> None:
    reader = LineReader()
    assert reader.feed(b"{}\n{") == [b"{}"]
    assert reader.feed(b'"a":1}') == []
    assert reader.close() == [b'{"a":1}']
    assert reader.buffered_bytes == 0
    assert read(b"{}\n  \r") == [b"{}"]
    assert read(b"{}\r") == [b"{}"]


def test_close_idempotent_and_feed_after_close() -> None:
    reader = LineReader()
    assert reader.close() == []
    assert reader.close() == []
    with pytest.raises(LocalProtocolError):
        reader.feed(b"{}\n")


def test_oversize_line_in_one_chunk() -> None:
    assert read(b"12345\nabc\n", limit=4) == [OversizeLine(size_seen=5), b"abc"]
    assert read(b"1234\n", limit=4) == [b"1234"]


def test_oversize_line_across_chunks_one_marker_then_discard() -> None:
    reader = LineReader(max_line_bytes=4)
    assert reader.feed(b"{}\n123") == [b"{}"]
    assert reader.feed(b"45") == [OversizeLine(size_seen=5)]
    assert reader.buffered_bytes == 0
    assert reader.feed(b"6789") == []
    assert reader.feed(b"0\n{") == []
    assert reader.feed(b"}\n") == [b"{}"]


def test_oversize_joined_partial_never_materialised() -> None:
    reader = LineReader(max_line_bytes=4)
    assert reader.feed(b"123") == []
    assert reader.feed(b"456789\nab\n") == [OversizeLine(size_seen=9), b"ab"]


def test_oversize_then_eof() -> None:
    reader = LineReader(max_line_bytes=4)
    assert reader.feed(b"123456") == [OversizeLine(size_seen=6)]
    assert reader.close() == []
    assert read(b"{}\n123456", limit=4) == [b"{}", OversizeLine(size_seen=6)]


def test_cr_counts_toward_the_limit_whatever_the_chunking() -> None:
    assert read(b"abcd\r\n", limit=4) == [OversizeLine(size_seen=5)]
    assert read_bytewise(b"abcd\r\n", limit=4) == [OversizeLine(size_seen=5)]


def test_whitespace_oversize_line_still_reported() -> None:
    assert read(b" " * 10 + b"\n", limit=4) == [OversizeLine(size_seen=10)]


def test_memory_bounded_on_endless_line() -> None:
    limit, chunk = 1024 * 1024, 64 * 1024
    reader = LineReader(max_line_bytes=limit)
    markers: list[Item] = []
    tracemalloc.start()
    try:
        for _ in range(50 * 1024 * 1024 // chunk):
            markers += reader.feed(b"x" * chunk)  # a fresh object each time
            assert reader.buffered_bytes <= limit
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < limit + 4 * chunk
    assert markers == [OversizeLine(size_seen=limit + chunk)]
    assert reader.feed(b"x\n{}\n") == [b"{}"]


def test_long_line_in_small_chunks() -> None:
    reader = LineReader()
    piece = b"0123456789abcdef" * 4
    for _ in range(16 * 1024):
        assert reader.feed(piece) == []
    (line,) = reader.feed(b"\n")
    assert line == piece * 16 * 1024


def test_lines_are_owned_bytes() -> None:
    reader = LineReader()
    buf = bytearray(b"{}\n{")
    (first,) = reader.feed(buf)
    buf[:] = b"XXXX"
    (second,) = reader.feed(memoryview(b"1}\n"))
    assert first == b"{}" and type(first) is bytes
    assert second == b"{1}" and type(second) is bytes


def test_bad_limit() -> None:
    with pytest.raises(LocalProtocolError):
        LineReader(max_line_bytes=0)


# --- properties --------------------------------------------------------------------------


def reference(stream: bytes, limit: int) -> list[Item]:
    items: list[Item] = []
    for line in stream.split(b"\n"):
        if len(line) > limit:
            items.append(OversizeLine(size_seen=len(line)))
        elif line.removesuffix(b"\r").strip(b" \t\r"):
            items.append(line.removesuffix(b"\r"))
    return items


def normalized(items: list[Item]) -> list[Item]:
    return [OversizeLine(size_seen=0) if isinstance(i, OversizeLine) else i for i in items]


_pieces = st.one_of(
    st.binary(max_size=30).filter(lambda b: b"\n" not in b).map(encode_line),
    st.sampled_from([b"\n", b"\r\n", b"\r", b" \t", b"\x00"]),
    st.binary(max_size=12),
)
_streams = st.lists(_pieces, max_size=12).map(b"".join)


@settings(max_examples=300)
@given(stream=_streams, data=st.data())
def test_chunking_never_changes_the_lines(stream: bytes, data: st.DataObject) -> None:
    limit = data.draw(st.sampled_from([4 * 1024 * 1024, 4, 16]))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    bounds = [0, *cuts, len(stream)]
    reader = LineReader(max_line_bytes=limit)
    items: list[Item] = []
    for start, end in itertools.pairwise(bounds):
        items += reader.feed(stream[start:end])
        assert reader.buffered_bytes <= limit
    items += reader.close()
    whole = read(stream, limit)
    assert whole == reference(stream, limit)
    assert normalized(items) == normalized(whole)
    assert all(i.size_seen > limit for i in items if isinstance(i, OversizeLine))


@given(st.lists(st.binary(max_size=40).filter(lambda b: b"\n" not in b), max_size=10))
def test_round_trip(messages: list[bytes]) -> None:
    stream = b"".join(encode_line(m) for m in messages)
    expected = [m.removesuffix(b"\r") for m in messages if m.removesuffix(b"\r").strip(b" \t\r")]
    assert read(stream) == expected
    assert read_bytewise(stream) == expected
