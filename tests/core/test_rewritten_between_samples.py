"""A file rewritten in place and grown, whose only other change lies between the sampled
blocks of its stamp (one record's word, the same length), is told, not read back as the new
text: a file of up to `FULL_BYTES` is digested whole; the regions a larger one's turns are read
back from are digested as they are first read, and checked again once it has been written.
#27 (seams-r7)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from replay.core.index.file_stamp import FULL_BYTES, SAMPLE_BLOCKS, SAMPLE_BYTES
from replay.core.index.turn_index import CACHE, TAIL, TurnIndex
from replay.core.readers import load_sessions


def _chat(path: Path, size: int) -> Path:
    # Messages of ~1 KB, each naming its number.
    count = size // 1_000
    path.write_text(json.dumps({"id": "c", "messages": [
        {"role": "user" if n % 2 == 0 else "assistant",
         "content": f"apple {n:06d} " + "words of the message " * 45} for n in range(count)]}))
    return path


def _held(path: Path) -> TurnIndex:
    [session] = load_sessions(path, indexed=True)
    assert isinstance(session.turns, TurnIndex)
    return session.turns


def _sparse_samples(size: int) -> list[tuple[int, int]]:
    """The blocks a stamp samples of a file too big to digest whole: the first, the last and
    evenly spaced ones between."""
    step = (size - SAMPLE_BYTES) / (SAMPLE_BLOCKS - 1)
    return [(round(n * step), SAMPLE_BYTES) for n in range(SAMPLE_BLOCKS)]


def _between_samples(path: Path) -> int:
    """The number of a message whose word `apple` no sampled block holds."""
    data = path.read_bytes()
    spans = _sparse_samples(len(data))
    for number in range(len(data) // 2_000, len(data) // 1_000):
        at = data.find(f"apple {number:06d}".encode())
        if at >= 0 and not any(start <= at + 20 and at < start + length
                               for start, length in spans):
            return number
    raise AssertionError("every message is sampled")


def _rewrite_one_and_grow(path: Path, number: int) -> None:
    """One message's word changed (the same length) and one more message at the end, written
    into the same file: only the changed word and the end differ."""
    document = json.loads(path.read_text())
    message = document["messages"][number]
    message["content"] = message["content"].replace("apple", "mango")
    document["messages"].append({"role": "user", "content": "one more"})
    time.sleep(0.01)
    with open(path, "r+b") as handle:
        handle.write(json.dumps(document).encode())


def _shown(turns: TurnIndex, number: int) -> str:
    """The text of turn `number`, read back from the file (other turns fill the cache)."""
    others = [n for n in range(len(turns) - TAIL) if n != number][:CACHE + 1]
    assert len(others) == CACHE + 1
    for other in others:
        turns[other]
    return turns[number].parts[0].text


@pytest.mark.parametrize("size", [600_000, FULL_BYTES + 2_000_000], ids=["whole", "regions"])
def test_a_file_changed_between_its_samples_and_grown_is_told(tmp_path: Path,
                                                              size: int) -> None:
    # Up to `FULL_BYTES` the file is digested whole; past it, the region a turn was read back
    # from (here while the file was as it was read).
    path = _chat(tmp_path / "c.json", size)
    turns = _held(path)
    number = _between_samples(path)
    if size > FULL_BYTES:
        assert f"apple {number:06d}" in _shown(turns, number)
    _rewrite_one_and_grow(path, number)
    shown = _shown(turns, number)
    assert "mango" not in shown
    assert "rewritten in place since it was read, and is longer now" in shown


def test_a_big_file_appended_to_still_reads_back(tmp_path: Path) -> None:
    path = _chat(tmp_path / "c.json", FULL_BYTES + 2_000_000)
    turns = _held(path)
    number = _between_samples(path)
    assert f"apple {number:06d}" in _shown(turns, number)
    document = json.loads(path.read_text())
    document["messages"].append({"role": "user", "content": "one more"})
    time.sleep(0.01)
    with open(path, "r+b") as handle:  # every byte before the closing brackets kept
        handle.write(json.dumps(document).encode())
    assert f"apple {number:06d}" in _shown(turns, number)
