"""Tests of mcpwire.wire.sse: the WHATWG event-stream rules, limits, lifecycle and chunking."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpwire.wire.errors import ErrorCode, LocalProtocolError, RemoteProtocolError
from mcpwire.wire.sse import SSEEvent, SSEReader, encode_comment, encode_event


def read(stream: bytes, **kwargs: int) -> list[SSEEvent]:
    """Feed ``stream`` whole, then close."""
    reader = SSEReader(**kwargs)
    return reader.feed(stream) + reader.close()


def read_bytewise(stream: bytes) -> list[SSEEvent]:
    reader = SSEReader()
    events: list[SSEEvent] = []
    for i in range(len(stream)):
        events += reader.feed(stream[i : i + 1])
    return events + reader.close()


def ev(data: str, event: str = "message", id: str | None = None, retry: int | None = None) -> SSEEvent:
    return SSEEvent(event=event, data=data, id=id, retry=retry)


def both(stream: bytes) -> list[SSEEvent]:
    """Read whole and byte by byte; both must agree."""
    whole = read(stream)
    assert read_bytewise(stream) == whole
    return whole


# --- encoder ---------------------------------------------------------------------------


def test_encode_event_common_case() -> None:
    assert encode_event(b'{"jsonrpc":"2.0"}') == b'data: {"jsonrpc":"2.0"}\n\n'


def test_encode_event_with_event_and_id() -> None:
    assert encode_event(b"{}", event="message", id="7") == b"event: message\nid: 7\ndata: {}\n\n"
    assert encode_event(b"{}", id="") == b"id: \ndata: {}\n\n"


def test_encode_event_splits_every_line_break() -> None:
    assert encode_event(b"a\nb\r\nc\rd") == b"data: a\ndata: b\ndata: c\ndata: d\n\n"
    assert encode_event(b"a\n") == b"data: a\ndata: \n\n"
    assert encode_event(b"") == b"data: \n\n"


@pytest.mark.parametrize("bad", ["a\nb", "a\rb", "a\0b", "\ud800"])
@pytest.mark.parametrize("field", ["event", "id"])
def test_encode_event_rejects_bad_fields(field: str, bad: str) -> None:
    with pytest.raises(LocalProtocolError):
        encode_event(b"{}", **{field: bad})


def test_encode_comment() -> None:
    assert encode_comment() == b":\n\n"
    assert encode_comment("keepalive") == b": keepalive\n\n"
    assert encode_comment("a\r\nb") == b": a\n: b\n\n"
    with pytest.raises(LocalProtocolError):
        encode_comment("\udfff")
    assert read(encode_comment("keepalive") + encode_comment("x\ny")) == []


# --- WHATWG examples ---------------------------------------------------------------------


def test_spec_example_multiline_data() -> None:
    assert both(b"data: YHOO\ndata: +2\ndata: 10\n\n") == [ev("YHOO\n+2\n10")]


def test_spec_example_comments_and_ids() -> None:
    stream = b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n"
    # "id" with no colon resets the last event ID to empty, reported as None.
    assert both(stream) == [ev("first event", id="1"), ev("second event"), ev(" third event")]


def test_spec_example_empty_data_lines() -> None:
    assert both(b"data\n\ndata\ndata\n\ndata:") == [ev(""), ev("\n")]


def test_spec_example_one_space_stripped() -> None:
    assert both(b"data:test\n\ndata: test\n\n") == [ev("test"), ev("test")]


def test_spec_example_event_types() -> None:
    stream = b"event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\nevent: add\ndata: 113411\n\n"
    assert both(stream) == [ev("73857293", "add"), ev("2153", "remove"), ev("113411", "add")]


# --- line endings ------------------------------------------------------------------------


@pytest.mark.parametrize("eol", [b"\n", b"\r", b"\r\n"])
def test_each_line_ending(eol: bytes) -> None:
    stream = b"data: a" + eol + b"data: b" + eol + eol + b"data: c" + eol + eol
    assert both(stream) == [ev("a\nb"), ev("c")]


def test_mixed_line_endings() -> None:
    assert both(b"data: a\rdata: b\r\ndata: c\n\r\n") == [ev("a\nb\nc")]
    # CR then CRLF is two line breaks: the second one is the blank line.
    assert both(b"data: a\r\r\ndata: b\n\n") == [ev("a"), ev("b")]


def test_crlf_split_across_chunks_is_one_line_break() -> None:
    reader = SSEReader()
    assert reader.feed(b"data: a\r") == []
    assert reader.feed(b"\ndata: b\r") == []
    assert reader.feed(b"\n\r") == [ev("a\nb")]
    assert reader.feed(b"\n") == []  # the LF of the CRLF above, not a blank line
    assert reader.feed(b"data: c\n\n") == [ev("c")]


def test_cr_at_chunk_end_dispatches_without_waiting() -> None:
    reader = SSEReader()
    assert reader.feed(b"data: a\r\r") == [ev("a")]
    assert reader.feed(b"data: b\n\n") == [ev("b")]


def test_lf_after_cr_skipped_only_once_and_across_empty_chunks() -> None:
    reader = SSEReader()
    assert reader.feed(b"data: a\r") == []
    assert reader.feed(b"") == []
    assert reader.feed(b"\n\n") == [ev("a")]


# --- decoding ----------------------------------------------------------------------------


def test_bom_stripped_once_at_start() -> None:
    assert both(b"\xef\xbb\xbfdata: x\n\n") == [ev("x")]
    # A second BOM is a character of the first field name, so that line is ignored.
    assert both(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\ndata: y\n\n") == [ev("y")]
    # Not at the start: kept as U+FEFF.
    assert both(b"data: \xef\xbb\xbfx\n\n") == [ev("\ufeffx")]


def test_bom_split_across_chunks() -> None:
    reader = SSEReader()
    assert reader.feed(b"\xef") == []
    assert reader.feed(b"") == []
    assert reader.feed(b"\xbb") == []
    assert reader.feed(b"\xbfdata: x\n\n") == [ev("x")]


def test_bom_prefix_that_is_not_a_bom() -> None:
    reader = SSEReader()
    assert reader.feed(b"\xef\xbb") == []
    assert reader.feed(b"A\ndata: x\n\n") == [ev("x")]
    assert read(b"\xef\xbb") == []


def test_multibyte_character_split_across_chunks() -> None:
    text = "é€😀 ünïcode"
    assert both(b"data: " + text.encode() + b"\n\n") == [ev(text)]
    reader = SSEReader()
    assert reader.feed(b"event: \xe2\x82") == []
    assert reader.feed(b"\xac\ndata: \xf0\x9f") == []
    assert reader.feed(b"\x98\x80\n\n") == [ev("😀", "€")]


def test_invalid_utf8_replaced() -> None:
    assert both(b"data: \xff\xfe\n\n") == [ev("\ufffd\ufffd")]
    # A sequence cut short by a line break is one U+FFFD, as when decoding the whole stream.
    assert both(b"data: \xe2\x82\ndata: x\n\n") == [ev("\ufffd\nx")]
    assert both(b"id: \xc3\ndata: x\n\n") == [ev("x", id="\ufffd")]


# --- fields ------------------------------------------------------------------------------


def test_comments_ignored() -> None:
    assert both(b":\n: hello\ndata: x\n:data: y\n\n") == [ev("x")]
    assert both(b":\n\n:\n\n") == []


def test_line_without_colon_is_field_with_empty_value() -> None:
    assert both(b"data\n\n") == [ev("")]
    assert both(b"event\ndata: x\n\n") == [ev("x")]


def test_only_one_leading_space_stripped() -> None:
    assert both(b"data:  x\n\n") == [ev(" x")]
    assert both(b"data:\tx\n\n") == [ev("\tx")]
    assert both(b"data: x \n\n") == [ev("x ")]
    assert both(b"data: a:b\n\n") == [ev("a:b")]


def test_field_names_are_exact() -> None:
    assert both(b"Data: x\n\ndata : y\n\n data: z\n\n") == []
    assert both(b"foo: bar\ndata: x\n\n") == [ev("x")]


def test_event_type_reset_after_dispatch_and_after_empty_block() -> None:
    assert both(b"event: a\ndata: 1\n\ndata: 2\n\n") == [ev("1", "a"), ev("2")]
    assert both(b"event: a\n\ndata: 2\n\n") == [ev("2")]
    assert both(b"event: a\nevent: b\ndata: 1\n\n") == [ev("1", "b")]
    assert both(b"event:\ndata: 1\n\n") == [ev("1")]


def test_last_event_id_persists_and_resets() -> None:
    stream = b"id: 1\ndata: a\n\ndata: b\n\nid:\ndata: c\n\nid: 2\n\ndata: d\n\n"
    assert both(stream) == [ev("a", id="1"), ev("b", id="1"), ev("c"), ev("d", id="2")]


def test_id_with_nul_ignored() -> None:
    assert both(b"id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n") == [ev("a", id="1"), ev("b", id="1")]


def test_last_event_id_property_updates_at_blank_line() -> None:
    reader = SSEReader()
    assert reader.last_event_id is None
    assert reader.feed(b"id: 5\n") == []
    assert reader.last_event_id is None  # the buffer, not yet the stream's last event ID
    assert reader.feed(b"\n") == []  # no data: no event, but the ID is taken
    assert reader.last_event_id == "5"
    assert reader.feed(b"id: 6\ndata: x") == []
    assert reader.close() == []
    assert reader.last_event_id == "5"


def test_retry() -> None:
    stream = b"retry: 1500\ndata: a\n\ndata: b\n\nretry: 007\n\ndata: c\n\n"
    assert both(stream) == [ev("a", retry=1500), ev("b", retry=1500), ev("c", retry=7)]
    reader = SSEReader()
    assert reader.retry is None
    reader.feed(b"retry: 250\n")
    assert reader.retry == 250  # takes effect at once, no blank line needed


@pytest.mark.parametrize(
    "value",
    [b"", b" 10", b"10 ", b"1a", b"-1", b"+1", b"1.5", "١٢".encode(), b"1" * 19, b"9" * 5000],
)
def test_retry_not_only_ascii_digits_ignored(value: bytes) -> None:
    reader = SSEReader()
    assert reader.feed(b"retry: 3\n\nretry: " + value + b"\ndata: x\n\n") == [ev("x", retry=3)]
    assert reader.retry == 3


def test_retry_long_zero_padding_accepted() -> None:
    assert both(b"retry: " + b"0" * 5000 + b"42\ndata: x\n\n") == [ev("x", retry=42)]


# --- limits ------------------------------------------------------------------------------


def test_event_exactly_at_limit_accepted() -> None:
    stream = b"data: abc\n\n"  # "data: abc" and its LF: 10 bytes
    assert read(stream, max_event_bytes=10) == [ev("abc")]
    with pytest.raises(RemoteProtocolError):
        read(stream, max_event_bytes=9)


def test_oversize_event_is_remote_error_then_unusable() -> None:
    reader = SSEReader(max_event_bytes=16)
    with pytest.raises(RemoteProtocolError) as info:
        reader.feed(b"data: " + b"x" * 20 + b"\n\n")
    assert info.value.code == ErrorCode.INVALID_REQUEST
    assert info.value.code == -32600
    assert info.value.message == "SSE event exceeds 16 bytes"
    with pytest.raises(LocalProtocolError):
        reader.feed(b"data: x\n\n")
    with pytest.raises(LocalProtocolError):
        reader.close()


def test_oversize_counts_all_lines_of_the_event() -> None:
    reader = SSEReader(max_event_bytes=64)
    for _ in range(6):
        assert reader.feed(b"data: 123\n") == []  # 10 bytes each
    with pytest.raises(RemoteProtocolError):
        reader.feed(b"data: 123\n")


def test_blank_line_resets_the_count() -> None:
    reader = SSEReader(max_event_bytes=64)
    for _ in range(100):
        assert reader.feed(b"data: 123\n\n") == [ev("123")]


def test_oversize_unfinished_line() -> None:
    reader = SSEReader(max_event_bytes=16)
    assert reader.feed(b"data: 0123456789") == []
    with pytest.raises(RemoteProtocolError):
        reader.feed(b"abcdef")


def test_events_before_the_oversize_one_are_returned_first() -> None:
    reader = SSEReader(max_event_bytes=16)
    assert reader.feed(b"data: a\n\ndata: " + b"x" * 20) == [ev("a")]
    with pytest.raises(RemoteProtocolError):
        reader.feed(b"more")
    with pytest.raises(LocalProtocolError):
        reader.feed(b"more")

    reader = SSEReader(max_event_bytes=16)
    assert reader.feed(b"data: a\n\ndata: " + b"x" * 20 + b"\n\n") == [ev("a")]
    with pytest.raises(RemoteProtocolError):
        reader.close()


def test_memory_bounded_on_endless_line() -> None:
    limit, chunk = 1024 * 1024, 64 * 1024
    reader = SSEReader(max_event_bytes=limit)
    reader.feed(b"data: ")
    with pytest.raises(RemoteProtocolError):
        for _ in range(50 * 1024 * 1024 // chunk):
            reader.feed(b"x" * chunk)
            assert reader.buffered_bytes <= limit
    assert reader.buffered_bytes == 0


def test_memory_bounded_on_endless_event() -> None:
    reader = SSEReader(max_event_bytes=1024 * 1024)
    line = b"data: " + b"x" * 1000 + b"\n"
    with pytest.raises(RemoteProtocolError):
        for _ in range(50_000):
            reader.feed(line * 64)
            assert reader.buffered_bytes <= 1024 * 1024


def test_bad_limit() -> None:
    with pytest.raises(LocalProtocolError):
        SSEReader(max_event_bytes=0)


# --- lifecycle ---------------------------------------------------------------------------


def test_close_discards_unterminated_event() -> None:
    reader = SSEReader()
    assert reader.feed(b"data: a\n\ndata: b\n") == [ev("a")]
    assert reader.close() == []
    assert reader.buffered_bytes == 0
    assert reader.close() == []  # idempotent
    with pytest.raises(LocalProtocolError):
        reader.feed(b"\n")


def test_feed_accepts_bytearray_and_memoryview() -> None:
    reader = SSEReader()
    buf = bytearray(b"data: a")
    assert reader.feed(buf) == []
    buf[:] = b"XXXXXXX"  # the reader kept a copy, not a view
    assert reader.feed(memoryview(b"b\n\n")) == [ev("ab")]


# --- properties --------------------------------------------------------------------------

_LINE = re.compile(r"\r\n|\r|\n")


def reference(stream: bytes) -> list[SSEEvent]:
    """The WHATWG algorithm, literally: decode the whole stream, then split and interpret."""
    if stream.startswith(b"\xef\xbb\xbf"):
        stream = stream[3:]
    pieces = _LINE.split(stream.decode("utf-8", "replace"))
    pieces.pop()  # no line break after it: not a line, discarded at end of stream
    events: list[SSEEvent] = []
    data: list[str] = []
    event_type, id_buffer, retry = "", "", None
    for line in pieces:
        if line == "":
            if data:
                events.append(ev("\n".join(data), event_type or "message", id_buffer or None, retry))
            data, event_type = [], ""
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            data.append(value)
        elif name == "event":
            event_type = value
        elif name == "id" and "\0" not in value:
            id_buffer = value
        elif name == "retry" and value and all("0" <= c <= "9" for c in value):
            retry = int(value)
    return events


_field_text = st.text(st.characters(codec="utf-8", exclude_characters="\r\n\0"), max_size=8)
_framed = st.one_of(
    st.builds(
        lambda data, event, id: encode_event(data, event=event, id=id),
        st.binary(max_size=20),
        st.none() | _field_text,
        st.none() | _field_text,
    ),
    st.builds(encode_comment, st.text(max_size=8)),
    st.sampled_from([b"retry: 10\n", b"id: \x00\n", b"event\n", b"\r\n", b"\r", b"\n", b"\xef\xbb\xbf"]),
    st.binary(max_size=12),
)
_streams = st.lists(_framed, max_size=12).map(b"".join)


def read_chunked(stream: bytes, cuts: list[int], limit: int) -> tuple[list[SSEEvent], bool]:
    """Events read with the stream cut at ``cuts``, and whether the size limit broke."""
    bounds = [0, *sorted(cuts), len(stream)]
    reader = SSEReader(max_event_bytes=limit)
    events: list[SSEEvent] = []
    try:
        for start, end in itertools.pairwise(bounds):
            events += reader.feed(stream[start:end])
        events += reader.close()
    except RemoteProtocolError:
        return events, True
    return events, False


@settings(max_examples=300)
@given(stream=_streams, data=st.data())
def test_chunking_never_changes_the_events(stream: bytes, data: st.DataObject) -> None:
    cuts = data.draw(st.lists(st.integers(0, len(stream)), max_size=10))
    limit = data.draw(st.sampled_from([4 * 1024 * 1024, 8, 32, 100]))
    assert read_chunked(stream, cuts, limit) == read_chunked(stream, [], limit)


@settings(max_examples=300)
@given(stream=_streams)
def test_matches_reference_algorithm(stream: bytes) -> None:
    assert read(stream) == reference(stream)
    assert read_bytewise(stream) == reference(stream)


@given(
    st.lists(
        st.tuples(st.binary(max_size=40), st.none() | _field_text, st.none() | _field_text),
        max_size=6,
    )
)
def test_round_trip(items: list[tuple[bytes, str | None, str | None]]) -> None:
    expected: list[SSEEvent] = []
    last_id: str | None = None
    for data, event, id in items:
        if id is not None:
            last_id = id or None
        text = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").decode("utf-8", "replace")
        expected.append(ev(text, event or "message", last_id))
    stream = b"".join(encode_event(d, event=e, id=i) + encode_comment("keepalive") for d, e, i in items)
    assert read(stream) == expected
    assert read_bytewise(stream) == expected
