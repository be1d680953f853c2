"""Line reading across read boundaries: the first reads are small and grow, so a line may
start in one read and end several reads later."""

from __future__ import annotations

import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replay.core.readers import base
from replay.core.readers.base import iter_lines


def expected(data: bytes, final: bool) -> list[tuple[bytes, int, int]]:
    """The records, offsets and 1-based line numbers, worked out line by line."""
    found, offset = [], 0
    pieces = data.split(b"\n")
    for number, piece in enumerate(pieces, start=1):
        last = number == len(pieces)
        if piece.strip() and (not last or final):
            found.append((piece.rstrip(b"\r"), offset, number))
        offset += len(piece) + 1
    return found


lines = st.lists(st.one_of(st.binary(max_size=40).filter(lambda b: b"\n" not in b),
                           st.just(b""), st.just(b"  \r"), st.just(b"x" * 300)), max_size=30)


@given(lines=lines, trailing=st.booleans(), first=st.integers(1, 50), most=st.integers(1, 200),
       final=st.booleans())
def test_records_offsets_and_numbers_do_not_depend_on_read_sizes(
        lines: list[bytes], trailing: bool, first: int, most: int, final: bool) -> None:
    data = b"\n".join(lines) + (b"\n" if trailing else b"")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(base, "FIRST_CHUNK_BYTES", first)
        patch.setattr(base, "CHUNK_BYTES", max(first, most))
        assert list(iter_lines(io.BytesIO(data), final=final)) == expected(data, final)


def test_a_line_many_times_the_first_read_comes_whole() -> None:
    data = b'{"a": "' + b"y" * (5 * base.FIRST_CHUNK_BYTES) + b'"}\n{"b": 1}\n'
    records = list(iter_lines(io.BytesIO(data)))
    assert [(len(r), offset, number) for r, offset, number in records] == [
        (5 * base.FIRST_CHUNK_BYTES + 9, 0, 1), (8, 5 * base.FIRST_CHUNK_BYTES + 10, 2)]
