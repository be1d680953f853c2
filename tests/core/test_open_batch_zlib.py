"""A list compressed a batch at a time reads its open batch as it is: read (iterated,
written, looked up) it is not compressed to be decompressed at once. A history of many
short chats writes a report per chat, each holding fewer elements than a batch: every one
cost a compression and a decompression for nothing."""

from __future__ import annotations

import pickle
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from replay.core.corpus import spill as spill_module
from replay.core.corpus.encoded import BATCH_BYTES, EncodedList, json_line_pieces
from replay.core.corpus.spill import SpilledReports, spill
from replay.core.detection.packed import BATCH, PackedList
from replay.core.safe import json_line


@pytest.fixture
def zlib_calls(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Calls of `zlib.compress` and `zlib.decompress` from now on (still made)."""
    calls: Counter[str] = Counter()

    def counted(name: str, real: Callable[..., bytes]) -> Callable[..., bytes]:
        def call(*args: Any, **kwargs: Any) -> bytes:
            calls[name] += 1
            return real(*args, **kwargs)
        return call

    monkeypatch.setattr(zlib, "compress", counted("compress", zlib.compress))
    monkeypatch.setattr(zlib, "decompress", counted("decompress", zlib.decompress))
    return calls


def _reports(count: int, start: int = 0) -> list[dict[str, Any]]:
    return [{"index": number, "id": f"turn-{number}", "reason": "blank-text",
             "evidence": ["no text", f"gap before: {number} s"]}
            for number in range(start, start + count)]


def test_a_short_encoded_list_is_read_and_written_without_zlib(
        zlib_calls: Counter[str]) -> None:
    reports = _reports(5)
    encoded = EncodedList(reports)
    assert list(encoded) == reports
    assert encoded[3] == reports[3] and encoded[1:3] == reports[1:3]
    line = {"path": "history.md", "empty_turns": encoded}
    assert b"".join(json_line_pieces(line)) == json_line({**line, "empty_turns": reports})
    assert zlib_calls == Counter()
    # Stored or sent (the cache, a worker's result), it is compressed, once.
    assert EncodedList.from_batches(list(encoded.batches()), len(encoded)) == reports
    assert zlib_calls == Counter(compress=1, decompress=1)


def test_a_long_encoded_list_decompresses_only_its_closed_batches(
        zlib_calls: Counter[str]) -> None:
    reports = _reports(3000)
    encoded = EncodedList(reports)
    closed = zlib_calls["compress"]
    assert closed >= 2, "the reports should pass a batch"
    assert sum(len(json_line(report)) for report in reports) > 2 * BATCH_BYTES
    assert list(encoded) == reports
    assert zlib_calls == Counter(compress=closed, decompress=closed)
    # Appended to after a read: the next reads see every element, in order.
    more = _reports(10, start=3000)
    for report in more:
        encoded.append(report)
    assert list(encoded) == reports + more and len(encoded) == 3010
    assert b"".join(encoded.pieces()) == json_line(reports + more).rstrip(b"\n")


@dataclass(frozen=True)
class Entry:
    number: int
    words: tuple[str, ...]


def _entries(count: int, start: int = 0) -> list[tuple[Any, ...]]:
    return [(Entry(number, ("a", str(number))), number * 2)
            for number in range(start, start + count)]


def test_a_packed_list_reads_its_open_batch_without_zlib(zlib_calls: Counter[str]) -> None:
    packed = PackedList()
    entries = _entries(BATCH + 10)
    for entry in entries:
        packed.append(*entry)
    assert zlib_calls == Counter(compress=1)
    assert list(packed) == entries
    assert packed.at(BATCH + 3) == entries[BATCH + 3]
    assert zlib_calls == Counter(compress=1, decompress=1)
    assert packed.at(2) == entries[2]
    assert zlib_calls == Counter(compress=1, decompress=2)


def test_a_packed_list_read_then_appended_to_finds_every_entry() -> None:
    """Read before its batch was full, then given more: entry `n` is still entry `n`."""
    packed = PackedList()
    entries = _entries(10)
    for entry in entries:
        packed.append(*entry)
    assert list(packed) == entries and packed.at(4) == entries[4]
    more = _entries(2 * BATCH, start=10)
    for entry in more:
        packed.append(*entry)
    every = entries + more
    assert [packed.at(position) for position in range(len(every))] == every
    assert list(packed) == every
    assert list(packed.drain()) == every and len(packed) == 0


def test_a_short_encoded_list_is_pickled_without_zlib(
        zlib_calls: Counter[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A report per chat is pickled (spilled to disk, sent from a worker), then written."""
    monkeypatch.setattr(spill_module, "MEMORY_BYTES", 64 << 10)
    reports = _reports(3)
    line = {"path": "history.md", "empty_turns": EncodedList(reports)}
    back = pickle.loads(pickle.dumps(line, protocol=pickle.HIGHEST_PROTOCOL))
    assert isinstance(back["empty_turns"], EncodedList)
    assert b"".join(json_line_pieces(back)) == json_line({**line, "empty_turns": reports})
    assert zlib_calls == Counter()
    back["empty_turns"].append(reports[0])
    assert list(back["empty_turns"]) == [*reports, reports[0]]
    spilled = spill([{"path": str(number), "empty_turns": EncodedList(reports)}
                     for number in range(2000)])
    assert isinstance(spilled, SpilledReports)
    assert [list(report["empty_turns"]) for report in spilled] == [reports] * 2000
    assert zlib_calls == Counter()


def test_a_long_open_batch_is_pickled_compressed(zlib_calls: Counter[str]) -> None:
    reports = _reports(200)
    encoded = EncodedList(reports)
    assert zlib_calls == Counter()
    data = pickle.dumps(encoded)
    assert zlib_calls == Counter(compress=1)
    assert len(data) < sum(len(json_line(report)) for report in reports) / 4
    back = pickle.loads(data)
    assert list(back) == reports and len(back) == 200
