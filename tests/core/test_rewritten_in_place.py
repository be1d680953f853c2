"""A file rewritten in place while its index is held (records of the same shape at the same
offsets) is told, not read back as other text: every read-back turn says so in one line."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from replay.core.index.file_stamp import FileStamp
from replay.core.index.turn_index import TurnIndex
from replay.core.readers import load_sessions


def _chat(path: Path, word: str, count: int = 300) -> Path:
    path.write_text(json.dumps({"id": "c", "messages": [
        {"role": "user" if n % 2 == 0 else "assistant", "content": f"{word} {n:04d}"}
        for n in range(count)]}))
    return path


def _rewrite_in_place(path: Path, old: str, new: str) -> None:
    """The same bytes but one word, written into the same file (same inode, same size)."""
    assert len(old) == len(new)
    data = path.read_bytes().replace(old.encode(), new.encode())
    time.sleep(0.01)  # a later modification time than the one read, on any clock tick
    with open(path, "r+b") as handle:
        handle.write(data)


def _held(path: Path) -> TurnIndex:
    [session] = load_sessions(path, indexed=True)
    turns = session.turns
    assert isinstance(turns, TurnIndex), type(turns)
    return turns


@pytest.mark.parametrize("read_before", [True, False], ids=["file-open", "file-not-open-yet"])
def test_a_turn_of_a_file_rewritten_in_place_says_so_and_shows_no_other_text(
        tmp_path: Path, read_before: bool) -> None:
    path = _chat(tmp_path / "c.json", "apple")
    turns = _held(path)
    told: list[str] = []
    turns.on_rewritten = told.append
    if read_before:  # the index's descriptor is open on the file already
        assert "apple 0000" in turns[0].parts[0].text
    _rewrite_in_place(path, "apple", "mango")
    shown = [turns[n] for n in range(len(turns) - 100)]  # past the whole tail: read back
    texts = [part.text for turn in shown for part in turn.parts]
    assert not any("mango" in text for text in texts), "other text shown as the old turns"
    read_back = [t for t in shown if t.parts and t.parts[0].name == "unreadable"]
    assert read_back, "no turn said the file changed"
    message = read_back[-1].parts[0].text
    assert "\n" not in message and str(path) in message
    assert "rewritten in place since it was read (the same size" in message
    assert len(told) == 1 and "rewritten in place" in told[0]


def test_a_file_appended_to_still_reads_back(tmp_path: Path) -> None:
    path = _chat(tmp_path / "c.json", "apple")
    turns = _held(path)
    with open(path, "ab") as handle:
        handle.write(b"\n\n")
    assert all("apple" in turns[n].parts[0].text for n in range(len(turns)))


def test_the_stamp_tells_each_change() -> None:
    stamp = FileStamp((1, 2), 100, 10, 20)

    def now(size: int, modified: int = 10, changed: int = 20, inode: int = 2) -> os.stat_result:
        return os.stat_result((0o100644, inode, 1, 1, 0, 0, size, 0, 0, 0,
                               0.0, 0.0, 0.0, 0, modified, changed))

    assert stamp.differs(now(100)) is None
    assert stamp.differs(now(150, 99, 99)) is None  # appended to
    assert "shorter than when it was read (100 bytes then, 40 now)" in str(
        stamp.differs(now(40)))
    assert "rewritten in place" in str(stamp.differs(now(100, 11, 21)))
    assert "rewritten in place" in str(stamp.differs(now(100, 10, 21)))  # touch -m back
    assert "replaced by another file" in str(stamp.differs(now(100, 11, 21, inode=3)))


def _longer_rewrite(path: Path, old: str, new: str) -> None:
    """The file written out again, one word changed and one more message at its end (an
    editor or a tool saving the session again): the same inode, a larger size."""
    document = json.loads(path.read_text())
    for message in document["messages"]:
        message["content"] = message["content"].replace(old, new)
    document["messages"].append({"role": "user", "content": f"{new} [/] list[int] \x1b[2J"})
    time.sleep(0.01)
    with open(path, "r+b") as handle:
        handle.write(json.dumps(document).encode())


@pytest.mark.parametrize("read_before", [True, False], ids=["file-open", "file-not-open-yet"])
def test_a_file_rewritten_in_place_and_grown_says_so_and_shows_no_other_text(
        tmp_path: Path, read_before: bool) -> None:
    # Before: a file that grew was taken as appended to, and the old turns read back as the
    # new text.
    path = _chat(tmp_path / "c.json", "apple")
    turns = _held(path)
    told: list[str] = []
    turns.on_rewritten = told.append
    if read_before:
        assert "apple 0000" in turns[0].parts[0].text
    _longer_rewrite(path, "apple", "mango")
    shown = [turns[n] for n in range(len(turns) - 100)]
    texts = [part.text for turn in shown for part in turn.parts]
    assert not any("mango" in text for text in texts), "other text shown as the old turns"
    read_back = [t for t in shown if t.parts and t.parts[0].name == "unreadable"]
    assert read_back, "no turn said the file changed"
    message = read_back[-1].parts[0].text
    assert "\n" not in message and str(path) in message
    assert "rewritten in place since it was read, and is longer now" in message
    assert len(told) == 1 and "rewritten in place" in told[0]


def test_a_record_inserted_at_the_start_of_a_big_file_is_seen(tmp_path: Path) -> None:
    # Every byte after it moves: the sampled blocks of a file far larger than the samples
    # (here ~1 MB) no longer match.
    path = _chat(tmp_path / "c.json", "apple " + "x" * 3000, count=300)
    turns = _held(path)
    document = json.loads(path.read_text())
    document["messages"].insert(0, {"role": "user", "content": "inserted"})
    time.sleep(0.01)
    path.write_text(json.dumps(document))  # the same inode (truncated and written again)
    part = turns[150].parts[0]
    assert part.name == "unreadable" and "rewritten in place" in part.text


def test_a_whole_document_written_again_with_one_more_message_still_reads_back(
        tmp_path: Path) -> None:
    # Only the closing brackets changed: what was read is all there (`END_SLACK`).
    path = _chat(tmp_path / "c.json", "apple")
    turns = _held(path)
    told: list[str] = []
    turns.on_rewritten = told.append
    document = json.loads(path.read_text())
    document["messages"].append({"role": "user", "content": "one more"})
    time.sleep(0.01)
    with open(path, "r+b") as handle:
        handle.write(json.dumps(document).encode())
    assert all("apple" in turns[n].parts[0].text for n in range(len(turns)))
    assert told == []


def test_the_samples_are_read_once_per_write_of_a_grown_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _chat(tmp_path / "c.json", "apple")
    turns = _held(path)
    with open(path, "ab") as handle:
        handle.write(b"\n\n")
    from replay.core.index import file_stamp
    reads: list[int] = []
    digest = file_stamp.sample_digest
    monkeypatch.setattr(file_stamp, "sample_digest",
                        lambda fd, size: reads.append(size) or digest(fd, size))
    assert all("apple" in turns[n].parts[0].text for n in range(len(turns) - 100))
    assert len(reads) == 1


def test_the_samples_cover_the_whole_small_file_and_spread_over_a_big_one() -> None:
    from replay.core.index.file_stamp import END_SLACK, SAMPLE_BLOCKS, SAMPLE_BYTES, sample_spans
    assert sample_spans(0) == []
    assert sample_spans(1000) == [(0, 1000 - END_SLACK)]
    big = 10_000_000
    spans = sample_spans(big)
    assert len(spans) == SAMPLE_BLOCKS and spans[0] == (0, SAMPLE_BYTES)
    assert spans[-1] == (big - END_SLACK - SAMPLE_BYTES, SAMPLE_BYTES)
    assert all(a[0] + a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))
