"""An Aider history's chats held compactly (`ChatIndex`, `HistoryCounts`): listed from their
header lines alone, each chat's Session read from its own bytes the same as the whole
reader gives it, counted the same as the scan counts, in bounded memory per chat."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

import pytest

from replay.core.corpus.scan import summarize
from replay.core.discovery.history import HistoryCounts
from replay.core.readers import ReaderError, aider, load_sessions
from tests.core.test_aider import HISTORY
from tests.core.test_aider_windows import _files, _sessions

HOSTILE = "[/] [link=x]click[/link] \x1b]0;PWNED\x07 \x1b[2J [bold]b[/bold] list[int] \\\" ]}"


def _more_files(tmp_path: Path) -> list[Path]:
    """Every Aider history the other tests use, and histories of ids that collide."""
    same = tmp_path / "same.chat.history.md"  # one time thrice, then a header that is
    # literally the id the second one got
    same.write_text("".join(f"# aider chat started at {when}\n#### hi {n}\nok\n\n"
                            for n, when in enumerate(["2024-05-01 10:00:00"] * 3
                                                     + ["2024-05-01 10:00:00 #2", ""])),
                    encoding="utf-8")
    hostile = tmp_path / "hostile.chat.history.md"
    hostile.write_text(f"# aider chat started at {HOSTILE}\n#### {HOSTILE}\n{HOSTILE}\n\n"
                       f"# aider chat started at 2024-05-01 10:00:00\n#### x\n",
                       encoding="utf-8")
    blank = tmp_path / "blank.chat.history.md"
    blank.write_text("\n\n   \n", encoding="utf-8")
    return [*_files(tmp_path), same, hostile, blank]


def test_each_chat_read_alone_is_the_chat_the_whole_reader_gives(tmp_path: Path) -> None:
    for path in _more_files(tmp_path):
        whole = load_sessions(path)
        index = aider.list_chats(path)
        chats: list[aider._Chat] = []
        for _ in aider._stream(path, chats):
            pass
        assert list(index) == chats, path.name
        if not chats:  # white space only: nothing to list (the app reads it whole)
            assert whole[0].warnings == [aider.EMPTY_FILE]
            continue
        assert [index.session_id(n) for n in range(len(index))] == \
            [s.session_id for s in whole], path.name
        assert [index.title(n) for n in range(len(index))] == [s.title for s in whole]
        assert _sessions([index.read(n) for n in range(len(index))]) == _sessions(whole), \
            path.name
        # Read backwards, the same (each alone: no state carried from the one before).
        assert _sessions([index.read(n) for n in reversed(range(len(index)))]) == \
            _sessions(list(reversed(whole)))


def test_the_counts_are_the_scan_s_and_the_header_gives_the_start(tmp_path: Path) -> None:
    for path in _more_files(tmp_path):
        index = aider.list_chats(path)
        if not len(index):
            continue
        counts = HistoryCounts(index)
        assert [counts.summary(n) for n in range(len(counts))] == [None] * len(counts)
        done = list(counts.count())
        assert done == list(range(1, len(counts) + 1)) and counts.error is None
        for number, session in enumerate(load_sessions(path)):
            summary = counts.summary(number)
            expected = summarize(session)
            assert summary is not None
            assert (summary.label, summary.turns, summary.empty, summary.subagents,
                    summary.format) == (expected.label, expected.turns, expected.empty, 0,
                                        "aider"), (path.name, number)
            # Its start is the header's time (the whole reader dates only a banner turn).
            assert summary.started == index.started(number)
            if expected.started is not None:
                assert summary.started == expected.started


def test_a_chat_whose_file_changed_since_it_was_listed_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(HISTORY * 20, encoding="utf-8")
    index = aider.list_chats(path)
    counts = HistoryCounts(index)
    path.write_text(HISTORY * 5, encoding="utf-8")  # shorter
    with pytest.raises(ReaderError, match="shorter than when it was listed") as caught:
        index.read(50)
    assert "\n" not in str(caught.value)
    path.write_text(HISTORY.replace("2024-05-01", "2025-01-01") * 20, encoding="utf-8")
    with pytest.raises(ReaderError, match="changed since the file was listed"):
        index.read(3)
    assert list(counts.count()) == []  # the first chat already differs
    assert counts.error is not None and "changed since its chats were listed" in counts.error


def _held(chats: int, tmp_path: Path) -> tuple[int, int]:
    """(bytes held after listing and counting, peak while listing) for a history of `chats`."""
    path = tmp_path / f"{chats}.chat.history.md"
    path.write_text(HISTORY * (chats // 3), encoding="utf-8")
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        counts = HistoryCounts.of(path)
        listing_peak = tracemalloc.get_traced_memory()[1] - base
        for _ in counts.count():
            pass
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert len(counts) == chats
    return held, listing_peak


def test_a_history_is_held_in_a_few_bytes_a_chat(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # Windows smaller than either file: what grows with the chats is what a chat costs.
    monkeypatch.setattr(aider, "WINDOW_BYTES", 1 << 16)
    small_held, small_peak = _held(1_200, tmp_path)
    big_held, big_peak = _held(4_800, tmp_path)
    per_chat = (big_held - small_held) / 3_600
    # The index and counts: offsets, lines, numbers, times, header text, turns, empty (the
    # Session the whole reader made was 1.2 KB a chat).
    assert per_chat < 120, per_chat
    assert (big_peak - small_peak) / 3_600 < 250  # listing: the ids seen, not the chats


@pytest.mark.parametrize("window", [1 << 14, 7])
def test_a_long_chat_read_back_by_exchanges_is_the_whole_chat(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, window: int) -> None:
    # Every chat taken as long: held as columns, each exchange read again alone.
    from replay.core.readers import aider_turns

    monkeypatch.setattr(aider, "LONG_CHAT_BYTES", 0)
    monkeypatch.setattr(aider, "READ_BACK_BYTES", window)
    monkeypatch.setattr(aider_turns, "CACHE", 2)
    for path in _more_files(tmp_path):
        if window < 64 and path.stat().st_size > 200_000:
            continue  # windows of a few bytes: the small files only
        whole = load_sessions(path)
        indexed = load_sessions(path, indexed=True)
        index = aider.list_chats(path)
        opened = [index.read(n) for n in range(len(index))] if len(index) else whole
        for held in (indexed, opened):
            assert all(isinstance(s.turns, aider_turns.ExchangeTurns) for s in held) or not \
                len(index)
            assert _sessions(held) == _sessions(whole), path.name
            for mine, theirs in zip(held, whole, strict=True):  # backwards, one at a time
                assert [mine.turns[n].id for n in reversed(range(len(mine.turns)))] == \
                    [turn.id for turn in reversed(theirs.turns)]
                assert [t.index for t in mine.turns] == list(range(len(theirs.turns)))


def test_a_long_chat_is_never_held_whole(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from replay.core.readers import aider_turns

    monkeypatch.setattr(aider_turns, "CACHE", 128)  # what is held: 128 turns read back
    monkeypatch.setattr(aider, "WINDOW_BYTES", 1 << 16)  # the file: far more than a window
    path = tmp_path / ".aider.chat.history.md"
    body = "".join(f"#### step {n}\n\n{'reply text ' * 40}{n}\n\n> Tokens: 1k sent, 2 received."
                   f"\n\n" for n in range(12_000))
    path.write_text("# aider chat started at 2024-05-01 10:00:00\n\n" + body, encoding="utf-8")
    size = path.stat().st_size
    assert size > aider.LONG_CHAT_BYTES
    small = tmp_path / "small.chat.history.md"
    small.write_text(HISTORY, encoding="utf-8")
    load_sessions(small, indexed=True)  # the modules imported before measuring
    gc.collect()
    tracemalloc.start()
    try:
        [session] = load_sessions(path, indexed=True)
        held, read_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        turns = session.turns
        assert isinstance(turns, aider_turns.ExchangeTurns) and len(turns) == 36_000
        texts = sum(len(turn.parts[0].text) for turn in turns)  # every turn, in order
        assert turns[30_001].id == "1-30002" and turns[4].parts[0].text.startswith("reply")
        walk_peak = tracemalloc.get_traced_memory()[1] - held
    finally:
        tracemalloc.stop()
    assert texts > size // 2
    # Whole, its turns were about 4 times the chat; now 8 bytes a turn, the marks (about
    # 32 bytes an exchange) and a few turns read back.
    assert read_peak < size // 3, (read_peak, size)
    assert held < size // 5, (held, size)
    assert walk_peak < size // 5, (walk_peak, size)
