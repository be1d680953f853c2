"""An Aider history's per-chat counts kept in the scan cache: the next count of the unchanged
file scans nothing, a history appended to scans only its last chat kept and the new ones, and
a history rewritten (or other rules) is counted whole again, always to the counts a fresh
count gives."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from replay.core.detection.empty import DEFAULT_RULES
from replay.core.discovery import history as history_module
from replay.core.discovery.history import HistoryCounts
from replay.core.readers import aider
from tests.core.test_aider import HISTORY
from tests.core.test_aider_chats import _more_files

OLD = 1_700_000_000


def _age(path: Path, when: int = OLD) -> Path:
    os.utime(path, (when, when))
    return path


@pytest.fixture
def scanned(monkeypatch: pytest.MonkeyPatch) -> list[tuple[bool, int]]:
    """Each scan counting made: (from a later chat, chats it scanned)."""
    seen: list[tuple[bool, int]] = []
    real = history_module.scan_stream

    def counting(*args: Any, **kwargs: Any) -> Iterator[Any]:
        seen.append((kwargs.get("items") is not None, 0))
        for report in real(*args, **kwargs):
            seen[-1] = (seen[-1][0], seen[-1][1] + 1)
            yield report

    monkeypatch.setattr(history_module, "scan_stream", counting)
    return seen


def _figures(counts: HistoryCounts) -> list[Any]:
    return [counts.summary(number) for number in range(len(counts))]


def _count(path: Path, cache: bool = True, rules: Any = DEFAULT_RULES) -> tuple[
        HistoryCounts, list[int]]:
    counts = HistoryCounts(aider.list_chats(path))
    done = list(counts.count(rules, cache=cache))
    assert counts.error is None
    return counts, done


def test_the_second_count_of_an_unchanged_history_scans_nothing(
        tmp_path: Path, scanned: list[tuple[bool, int]]) -> None:
    for path in _more_files(tmp_path):
        _age(path)
        if not len(aider.list_chats(path)):
            continue
        scanned.clear()
        first, _ = _count(path)
        assert scanned and scanned[0][0] is False, path.name
        scanned.clear()
        again, done = _count(path)
        assert scanned == [] and done == [len(again)], path.name  # all at once
        assert _figures(again) == _figures(first)
        assert (again.most_turns, again.most_empty) == (first.most_turns, first.most_empty)
        assert _figures(_count(path, cache=False)[0]) == _figures(first)


def test_an_appended_history_scans_only_its_last_chat_kept_and_the_new_ones(
        tmp_path: Path, scanned: list[tuple[bool, int]]) -> None:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(HISTORY * 40, encoding="utf-8")
    _age(path)
    before, _ = _count(path)
    old = len(before)
    # Aider appends: the last chat goes on (a new exchange), then new chats start.
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("#### and one more thing  \n\nDone.\n\n" + HISTORY * 5)
    _age(path, OLD + 60)
    scanned.clear()
    after, done = _count(path)
    assert scanned == [(True, len(after) - old + 1)]
    assert done[0] == old - 1 and done[-1] == len(after) > old
    fresh, _ = _count(path, cache=False)
    assert _figures(after) == _figures(fresh)
    assert after.turns[old - 1] > before.turns[old - 1]  # the grown chat counted again
    # And that grown history is now kept whole.
    scanned.clear()
    assert _figures(_count(path)[0]) == _figures(fresh) and scanned == []


def test_a_history_rewritten_or_counted_under_other_rules_is_counted_whole(
        tmp_path: Path, scanned: list[tuple[bool, int]]) -> None:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(HISTORY * 30, encoding="utf-8")
    _age(path)
    _count(path)
    # Rewritten, then longer: an early chat changed, so nothing kept is trusted.
    path.write_text(HISTORY.replace("keep the tests green", "keep the tests red") * 30
                    + HISTORY * 2, encoding="utf-8")
    _age(path, OLD + 60)
    scanned.clear()
    rewritten, _ = _count(path)
    assert scanned == [(False, len(rewritten))]
    assert _figures(rewritten) == _figures(_count(path, cache=False)[0])
    # Another rule in force: its own counts, never the ones kept for the defaults.
    rules = DEFAULT_RULES.with_options(missing_replies=True)
    scanned.clear()
    other, _ = _count(path, rules=rules)
    assert scanned == [(False, len(other))]
    assert _figures(other) == _figures(_count(path, cache=False, rules=rules)[0])


def test_a_history_written_a_moment_ago_is_not_kept(
        tmp_path: Path, scanned: list[tuple[bool, int]]) -> None:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(HISTORY * 6, encoding="utf-8")
    _count(path)
    scanned.clear()
    _count(path)
    assert len(scanned) == 1  # (its stamp could miss a write within the same tick)


def test_a_count_stopped_half_way_goes_on_from_there_next_time(
        tmp_path: Path, scanned: list[tuple[bool, int]]) -> None:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(HISTORY * 30, encoding="utf-8")
    _age(path)
    stopped = HistoryCounts(aider.list_chats(path))
    for _ in stopped.count(cache=True, cancelled=lambda: stopped.counted >= 25):
        pass
    assert stopped.counted == 25 < len(stopped)
    scanned.clear()
    again, steps = _count(path)
    assert steps[0] == 25 and steps[-1] == len(again)
    assert scanned == [(True, len(again) - 25)]
    assert _figures(again) == _figures(_count(path, cache=False)[0])
