"""`replay scan` / `report` of an Aider history through the scan cache: the unchanged file is
read from its rows (kept a thousand reports to a row, however many chats), a history appended
to scans only its last kept chat and the new ones, and a history rewritten is scanned whole,
always to the bytes `--no-cache` prints."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from replay.cli import main
from replay.core.corpus import pool, rows
from replay.core.corpus.tasks import SessionTask
from replay.core.readers import aider
from tests.core.test_aider import HISTORY
from tests.core.test_aider_chats import _more_files

OLD = 1_700_000_000


def _age(path: Path, when: int = OLD) -> Path:
    os.utime(path, (when, when))
    return path


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What was scanned: "whole" for each task read (`scan_task`), "from N" for a history
    read from its chat N on (`aider.history_stream(one=)`)."""
    seen: list[str] = []
    task_scan, stream = pool.scan_task, aider.history_stream

    def by_task(task: SessionTask):  # type: ignore[no-untyped-def]
        seen.append("whole")
        return task_scan(task)

    def streamed(*args: Any, **kwargs: Any) -> Iterator[Any]:
        one = kwargs.get("one")
        if one is not None:
            seen.append(f"from {one.number}")
        return stream(*args, **kwargs)

    monkeypatch.setattr(pool, "scan_task", by_task)
    monkeypatch.setattr(aider, "history_stream", streamed)
    return seen


def _copies(tmp_path: Path) -> list[Path]:
    """Every Aider test file (`_more_files`: some are real files shared with other tests),
    copied: these tests age and append to them."""
    made = tmp_path / "copies"
    made.mkdir()
    copies = []
    (tmp_path / "made").mkdir()
    for number, path in enumerate(_more_files(tmp_path / "made")):
        copy = made / f"{number}-{path.name}"
        copy.write_bytes(path.read_bytes())
        copies.append(copy)
    return copies


def _run(capsysbinary: pytest.CaptureFixture[bytes], *args: str) -> bytes:
    main(list(args))
    return capsysbinary.readouterr()[0]


def _scan(capsysbinary: pytest.CaptureFixture[bytes], path: Path, *more: str) -> bytes:
    return _run(capsysbinary, "scan", "--json", "--jobs", "1", *more, str(path))


@pytest.mark.parametrize("chunk", [3, rows.CHUNK_REPORTS])
def test_an_unchanged_history_is_scanned_once(
        tmp_path: Path, scans: list[str], capsysbinary: pytest.CaptureFixture[bytes],
        monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    """Every Aider test file (id collisions, hostile titles, ...), its reports kept a few to
    a row (and, spilled past memory, still kept)."""
    monkeypatch.setattr(rows, "CHUNK_REPORTS", chunk)
    monkeypatch.setattr("replay.core.corpus.spill.MEMORY_BYTES", 1000)
    for path in _copies(tmp_path):
        _age(path)
        if not len(aider.list_chats(path)):
            continue
        expected = _scan(capsysbinary, path, "--no-cache")
        scans.clear()
        assert _scan(capsysbinary, path) == expected
        assert scans == ["whole"], path.name
        scans.clear()
        assert _scan(capsysbinary, path) == expected, path.name
        assert scans == [], path.name
        report = _run(capsysbinary, "report", "--jobs", "1", str(path))
        assert scans == [] and report == _run(capsysbinary, "report", "--no-cache", str(path))


def _appended(path: Path) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("#### and one more thing  \n\nDone.\n\n" + HISTORY * 5)
    _age(path, OLD + 60)


def test_an_appended_history_scans_only_its_last_kept_chat_and_the_new_ones(
        tmp_path: Path, scans: list[str], capsysbinary: pytest.CaptureFixture[bytes],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rows, "CHUNK_REPORTS", 7)
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(HISTORY * 40, encoding="utf-8")
    _age(path)
    old = len(aider.list_chats(path))
    _scan(capsysbinary, path)
    _appended(path)
    scans.clear()
    grown = _scan(capsysbinary, path)
    assert scans == [f"from {old}"]  # (chat numbers count from 1: the last one kept)
    assert grown == _scan(capsysbinary, path, "--no-cache")
    assert len(grown.splitlines()) == len(aider.list_chats(path)) > old
    # The grown history is kept whole now, and grows again from there.
    scans.clear()
    assert _scan(capsysbinary, path) == grown and scans == []
    _appended(path)
    os.utime(path, (OLD + 120, OLD + 120))
    scans.clear()
    again = _scan(capsysbinary, path)
    assert scans == [f"from {len(grown.splitlines())}"]
    assert again == _scan(capsysbinary, path, "--no-cache")


def test_every_aider_test_file_appended_to_gives_the_whole_scan_s_bytes(
        tmp_path: Path, scans: list[str], capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    for path in _copies(tmp_path):
        _age(path)
        if not len(aider.list_chats(path)):
            continue
        _scan(capsysbinary, path)
        _appended(path)
        scans.clear()
        grown = _scan(capsysbinary, path)
        assert grown == _scan(capsysbinary, path, "--no-cache"), path.name
        assert "whole" not in scans[:1], path.name


def test_a_history_rewritten_then_longer_is_scanned_whole(
        tmp_path: Path, scans: list[str], capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(HISTORY * 30, encoding="utf-8")
    _age(path)
    _scan(capsysbinary, path)
    # An early chat changed, and the file is longer: nothing kept is trusted.
    path.write_text(HISTORY.replace("keep the tests green", "keep the tests red") * 30
                    + HISTORY * 2, encoding="utf-8")
    _age(path, OLD + 60)
    scans.clear()
    rewritten = _scan(capsysbinary, path)
    assert scans == ["whole"]
    assert rewritten == _scan(capsysbinary, path, "--no-cache")
    # Other rules: their own rows.
    scans.clear()
    other = _scan(capsysbinary, path, "--missing-replies")
    assert scans == ["whole"] and other == _scan(capsysbinary, path, "--missing-replies",
                                                 "--no-cache")
