"""FileTail: each complete line exactly once, through partial lines, truncation and replacement."""

from __future__ import annotations

import io
import os
import random
from pathlib import Path

from replay.core.live.tail import FileTail
from replay.core.readers.base import iter_lines


def _append(path: Path, data: bytes) -> None:
    with open(path, "ab") as handle:
        handle.write(data)


def test_partial_line_is_held_back_until_its_newline(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b"')
    tail = FileTail(path)
    first = tail.read_new()
    assert first.lines == [(b'{"a": 1}', 0, 1)]
    assert first.reset is False
    assert tail.offset == 9 and tail.pending == b'{"b"'
    assert tail.read_new().lines == []
    _append(path, b': 2}\n')
    assert tail.read_new().lines == [(b'{"b": 2}', 9, 2)]
    assert (tail.offset, tail.lineno, tail.pending) == (18, 2, b"")


def test_blank_and_crlf_lines_follow_iter_lines_conventions(tmp_path: Path) -> None:
    data = b"one\r\n\n  \ntwo\nthree\n"
    path = tmp_path / "s.txt"
    path.write_bytes(data[:7])
    tail = FileTail(path)
    seen = list(tail.read_new().lines)
    path.write_bytes(data)
    seen += tail.read_new().lines
    assert seen == list(iter_lines(io.BytesIO(data)))
    assert seen == [(b"one", 0, 1), (b"two", 9, 4), (b"three", 13, 5)]


def test_random_chunks_give_the_same_lines_as_one_read(tmp_path: Path) -> None:
    generator = random.Random(7)
    records = [(f'{{"n": {n}, "pad": "' + "x" * generator.randrange(0, 300) + '"}\n').encode()
               for n in range(400)]
    data = b"".join(records)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"")
    tail = FileTail(path)
    seen: list[tuple[bytes, int, int]] = []
    written = 0
    while written < len(data):
        step = generator.randrange(1, 700)
        _append(path, data[written : written + step])
        written += step
        read = tail.read_new()
        assert read.reset is False
        seen += read.lines
    assert seen == list(iter_lines(io.BytesIO(data)))
    assert len(seen) == 400


def test_max_bytes_reads_in_batches(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(b"line %d\n" % n for n in range(100)))
    tail = FileTail(path)
    seen = []
    calls = 0
    while True:
        read = tail.read_new(max_bytes=50)
        calls += 1
        seen += [line for line, _, _ in read.lines]
        if not read.more:
            break
    assert seen == [b"line %d" % n for n in range(100)]
    assert calls == 16  # 790 bytes / 50 per call, rounded up


def test_truncation_resets_and_reads_from_zero(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"aaaa\nbbbb\ncccc\n")
    tail = FileTail(path)
    assert len(tail.read_new().lines) == 3
    path.write_bytes(b"dd\n")
    read = tail.read_new()
    assert read.reset is True
    assert read.lines == [(b"dd", 0, 1)]
    assert tail.resets == 1


def test_rewrite_to_a_longer_file_is_noticed(tmp_path: Path) -> None:
    # Truncate-and-rewrite between two looks: the size grew, but the bytes already read differ.
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"first\n")
    tail = FileTail(path)
    assert tail.read_new().lines == [(b"first", 0, 1)]
    with open(path, "r+b") as handle:
        handle.truncate(0)
        handle.write(b"other record\nsecond\n")
    read = tail.read_new()
    assert read.reset is True
    assert read.lines == [(b"other record", 0, 1), (b"second", 13, 2)]


def test_replacement_by_rename_reopens(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"old 1\nold 2\n")
    tail = FileTail(path)
    assert len(tail.read_new().lines) == 2
    temporary = tmp_path / "s.jsonl.tmp"
    temporary.write_bytes(b"old 1\nold 2\nnew 3\n")
    os.replace(temporary, path)
    read = tail.read_new()
    assert read.reset is True
    assert [line for line, _, _ in read.lines] == [b"old 1", b"old 2", b"new 3"]
    _append(path, b"new 4\n")
    assert tail.read_new().lines == [(b"new 4", 18, 4)]


def test_missing_file_is_not_an_error(tmp_path: Path) -> None:
    path = tmp_path / "later.jsonl"
    tail = FileTail(path)
    assert tail.read_new().lines == []
    path.write_bytes(b"one\n")
    assert tail.read_new().lines == [(b"one", 0, 1)]
    path.unlink()
    gone = tail.read_new()
    assert (gone.lines, gone.reset) == ([], False)
    path.write_bytes(b"two\nthree\n")
    back = tail.read_new()
    assert back.reset is True
    assert [line for line, _, _ in back.lines] == [b"two", b"three"]


def test_unchanged_file_reads_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"one\n")
    tail = FileTail(path)
    tail.read_new()
    again = tail.read_new()
    assert (again.lines, again.reset, again.more) == ([], False, False)


def test_flush_pending_takes_a_last_line_without_newline(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"one\ntwo")
    tail = FileTail(path)
    assert tail.read_new().lines == [(b"one", 0, 1)]
    assert tail.flush_pending() == [(b"two", 4, 2)]
    assert tail.flush_pending() == []
    _append(path, b"\nthree\n")  # the newline of "two" came late: no reset, no repeat
    read = tail.read_new()
    assert (read.reset, read.lines) == (False, [(b"three", 8, 3)])
    assert (tail.offset, tail.lineno) == (14, 3)


def test_flushed_line_that_grows_restarts(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"one\ntw")
    tail = FileTail(path)
    tail.read_new()
    assert tail.flush_pending() == [(b"tw", 4, 2)]
    _append(path, b"o\n")
    read = tail.read_new()
    assert read.reset is True
    assert [line for line, _, _ in read.lines] == [b"one", b"two"]
