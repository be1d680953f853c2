"""`feed_lines` hands a scan's builder the lines `iter_lines(views=True)` yields, in one loop.

The two are held against each other: the same records (bytes), offsets and line numbers, and
`tick` after the same records, on line ends of every kind, byte-order marks, blank and
white-space lines, lines longer than the read buffer and a last line without its end.
"""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replay.core.readers import base
from replay.core.readers.base import BOM, feed_lines, feed_records, iter_lines

Taken = list[tuple[bytes, int, int]]
Ticks = list[tuple[int, int]]


def _expected(data: bytes, mask: int) -> tuple[Taken, Ticks]:
    taken, ticks = [], []
    for line, offset, lineno in iter_lines(io.BytesIO(data), views=True):
        taken.append((bytes(line), offset, lineno))
        if not lineno & mask:
            ticks.append((lineno, offset))
    return taken, ticks


def _fed(data: bytes, mask: int) -> tuple[Taken, Ticks, bool]:
    taken: Taken = []
    ticks: Ticks = []

    def take(line: bytes, offset: int, lineno: int) -> None:
        taken.append((bytes(line), offset, lineno))  # a view: copied while it is valid

    def tick(lineno: int, offset: int) -> None:
        ticks.append((lineno, offset))

    any_taken = feed_lines(io.BytesIO(data), take, tick, mask)
    return taken, ticks, any_taken


def _same(data: bytes, mask: int = 3) -> None:
    expected, expected_ticks = _expected(data, mask)
    taken, ticks, any_taken = _fed(data, mask)
    assert taken == expected
    assert ticks == expected_ticks
    assert any_taken == bool(expected)


CASES = [
    b"",
    b"\n",
    b"\n\n\n",
    b'{"a":1}',
    b'{"a":1}\n',
    b'{"a":1}\n{"b":2}\n',
    b'{"a":1}\n\n   \n\t\n{"b":2}',
    b' {"a":1}\n  \x0b\x0c \n',
    b'{"a":1}\r\n{"b":2}\r\n',
    b'{"a":1}\r{"b":2}\r',
    b'{"a":1}\n{"b":2}\r\n{"c":3}\r{"d":4}\n',
    BOM + b'{"a":1}\n{"b":2}\n',
    BOM,
    b"\xef",
    b"\xef\xbb",
    b'{"a":1}\n' + BOM + b'{"b":2}\n',
    b'{"a":"\\r\\n"}\n{"b":"\\u000d"}\n',
    b"x" * 10 + b"\n" * 70 + b"y\n" * 70,
]


@pytest.mark.parametrize("data", CASES, ids=range(len(CASES)))
def test_the_same_lines_as_iter_lines(data: bytes) -> None:
    _same(data)
    _same(data, 63)
    _same(data, 0)


def test_lines_across_reads_and_longer_than_the_buffer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "FIRST_CHUNK_BYTES", 16)
    monkeypatch.setattr(base, "CHUNK_BYTES", 64)
    lines = [b'{"n":%d,"pad":"%s"}' % (n, b"x" * (n * 7 % 150)) for n in range(300)]
    data = b"\n".join(lines) + b"\n"
    _same(data)
    _same(data[:-1])  # the last line without its end
    _same(data.replace(b"\n", b"\n\n  \n"))
    _same(data[:5000] + b"\r\n" + data[5000:])  # a carriage return far into the file
    expected, _ = _expected(data, 63)
    assert [line for line, _, _ in expected] == lines


def test_a_carriage_return_after_lines_were_taken_keeps_them_taken(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "FIRST_CHUNK_BYTES", 16)
    data = b'{"a":1}\n' * 8 + b"\r\n"  # the second read holds the CR: nothing after it
    taken, _, any_taken = _fed(data, 63)
    assert len(taken) == 8 and any_taken


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([b"{}", b'{"a":"b"}', b"", b" ", b"\t", b"\n", b"\r", b"\r\n",
                                 b"\xef\xbb\xbf", b"x" * 40]), max_size=40),
       st.integers(min_value=8, max_value=48), st.sampled_from([0, 1, 3, 63]))
def test_any_mix_of_pieces(pieces: list[bytes], chunk: int, mask: int) -> None:
    data = b"".join(pieces)
    original = base.FIRST_CHUNK_BYTES, base.CHUNK_BYTES
    base.FIRST_CHUNK_BYTES, base.CHUNK_BYTES = chunk, chunk * 4
    try:
        _same(data, mask)
    finally:
        base.FIRST_CHUNK_BYTES, base.CHUNK_BYTES = original


def test_feed_records_is_the_same_loop_over_an_iterator() -> None:
    data = b'{"a":1}\n\n{"b":2}\n{"c":3}\n{"d":4}'
    taken: list[tuple[bytes, int, int]] = []
    ticks: list[tuple[int, int]] = []
    fed = feed_records(iter_lines(io.BytesIO(data)), lambda *record: taken.append(record),
                       lambda *at: ticks.append(at), 1)
    assert fed and taken == [(b'{"a":1}', 0, 1), (b'{"b":2}', 9, 3), (b'{"c":3}', 17, 4),
                             (b'{"d":4}', 25, 5)]
    assert ticks == [(4, 17)]
    assert not feed_records(iter(()), taken.append, ticks.append, 1)
