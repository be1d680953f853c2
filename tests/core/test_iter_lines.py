"""Line reading across read boundaries: the first reads are small and grow, so a line may
start in one read and end several reads later."""

from __future__ import annotations

import io
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replay.core.readers import base
from replay.core.readers.base import iter_lines


def expected(data: bytes, final: bool) -> list[tuple[bytes, int, int]]:
    """The records, offsets and 1-based line numbers, worked out line by line (LF, CRLF or a
    lone CR ends a line; a leading byte-order mark is skipped)."""
    found, offset = [], 0
    if data.startswith(b"\xef\xbb\xbf"):
        offset = 3
    pieces = re.split(rb"(\r\n|\r|\n)", data[offset:])
    ends = [*pieces[1::2], b""]
    for number, (piece, end) in enumerate(zip(pieces[::2], ends, strict=True), start=1):
        # A lone CR at the very end may be the first half of a CRLF: not a line end yet.
        complete = end != b"" and not (end == b"\r" and offset + len(piece) + 1 == len(data))
        if piece.strip() and (complete or final):
            found.append((piece.rstrip(b"\r"), offset, number))
        offset += len(piece) + len(end)
    return found


lines = st.lists(st.one_of(st.binary(max_size=40).filter(lambda b: b"\n" not in b),
                           st.just(b""), st.just(b"  \r"), st.just(b"x" * 300),
                           st.just(b"a\rb"), st.just(b"\r")), max_size=30)


@given(lines=lines, trailing=st.booleans(), first=st.integers(1, 50), most=st.integers(1, 200),
       final=st.booleans(), bom=st.booleans())
def test_records_offsets_and_numbers_do_not_depend_on_read_sizes(
        lines: list[bytes], trailing: bool, first: int, most: int, final: bool,
        bom: bool) -> None:
    data = (b"\xef\xbb\xbf" if bom else b"") + b"\n".join(lines) + (b"\n" if trailing else b"")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(base, "FIRST_CHUNK_BYTES", first)
        patch.setattr(base, "CHUNK_BYTES", max(first, most))
        assert list(iter_lines(io.BytesIO(data), final=final)) == expected(data, final)


blank_led = st.lists(st.one_of(st.binary(max_size=20).filter(lambda b: b"\n" not in b),
                               st.sampled_from([b"", b" ", b"\t{}", b" x ", b"\x0b", b"{}"])),
                     max_size=30)


@given(lines=st.one_of(lines, blank_led), trailing=st.booleans(), first=st.integers(1, 50),
       most=st.integers(1, 200), final=st.booleans(), bom=st.booleans())
def test_views_are_the_same_records_as_copies(
        lines: list[bytes], trailing: bool, first: int, most: int, final: bool,
        bom: bool) -> None:
    # What a scan reads (memoryviews into the chunk) is what every other reader reads.
    data = (b"\xef\xbb\xbf" if bom else b"") + b"\n".join(lines) + (b"\n" if trailing else b"")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(base, "FIRST_CHUNK_BYTES", first)
        patch.setattr(base, "CHUNK_BYTES", max(first, most))
        viewed = [(bytes(line), offset, number) for line, offset, number
                  in iter_lines(io.BytesIO(data), final=final, views=True)]
    assert viewed == expected(data, final)


def test_a_line_many_times_the_first_read_comes_whole() -> None:
    data = b'{"a": "' + b"y" * (5 * base.FIRST_CHUNK_BYTES) + b'"}\n{"b": 1}\n'
    records = list(iter_lines(io.BytesIO(data)))
    assert [(len(r), offset, number) for r, offset, number in records] == [
        (5 * base.FIRST_CHUNK_BYTES + 9, 0, 1), (8, 5 * base.FIRST_CHUNK_BYTES + 10, 2)]


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"])
def test_every_line_end_and_a_bom_give_the_same_records(end: bytes) -> None:
    data = b"\xef\xbb\xbf" + end.join([b'{"a": 1}', b'{"b": 2}', b""])
    assert [record for record, _, _ in iter_lines(io.BytesIO(data))] == [b'{"a": 1}', b'{"b": 2}']
