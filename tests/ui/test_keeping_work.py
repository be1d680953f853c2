"""Work is never lost without a word: undo restores the whole bar, quitting with annotations
only in memory asks first, and `e` never replaces an earlier export."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from replay.core.annotate.journal import Journal
from replay.ui.screens.prompt import PromptScreen
from replay.ui.screens.quit import QuitScreen
from replay.ui.screens.replay_screen import ReplayScreen
from replay.ui.widgets.annotation_bar import AnnotationBar
from tests.ui.conftest import build_app, ready, wait_until
from tests.ui.screen import screen_text


def screen_of(app: object) -> ReplayScreen:
    screen = app.replay_screen  # type: ignore[attr-defined]
    assert isinstance(screen, ReplayScreen)
    return screen


async def test_undo_restores_the_previous_bar_note_included(chat_file: Path,
                                                            tmp_path: Path) -> None:
    app = build_app(chat_file, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        bar = screen.query_one(AnnotationBar)
        await pilot.press("2", "tab", *"first note", "enter")
        await pilot.press("3", "c", "tab", "ctrl+u", *"second note", "enter")
        await pilot.pause()
        assert screen.store.get("m009").note == "second note"  # type: ignore[union-attr]
        await pilot.press("z")
        await pilot.pause()
        assert bar.note == "first note" and screen.annotation.confidence == "medium"
        assert "first note" in screen_text(app) and "second note" not in screen_text(app)
        await pilot.press("z")
        await pilot.pause()
        assert bar.note == "" and screen.store.get("m009") is None
        assert "first note" not in screen_text(app)
        await pilot.press("enter")  # accepts the suggestion, with no note
        await pilot.pause()
        assert screen.store.get("m009").note == ""  # type: ignore[union-attr]


def unwritable(tmp_path: Path) -> Path:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the journal directory should be", encoding="utf-8")
    return blocker / "j.jsonl"


async def test_quit_with_work_only_in_memory_asks_and_can_stay(chat_file: Path,
                                                               tmp_path: Path) -> None:
    app = build_app(chat_file, annotations=unwritable(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        await pilot.press("4", "enter", "ctrl+q")
        await wait_until(pilot, lambda: isinstance(app.screen, QuitScreen))
        await pilot.pause()
        assert "1 annotation(s) could not be written" in screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
        assert app.is_running and isinstance(app.screen, ReplayScreen)


async def test_quit_and_export(chat_file: Path, tmp_path: Path,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    app = build_app(chat_file, annotations=unwritable(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        await pilot.press("4", "enter", "ctrl+q")
        await wait_until(pilot, lambda: isinstance(app.screen, QuitScreen))
        await pilot.press("e")
        await wait_until(pilot, lambda: not app.is_running)
    [export] = tmp_path.glob("*-annotations.csv")
    with open(export, encoding="utf-8-sig", newline="") as stream:
        assert ("m009", "reflect") in [(r["turn_id"], r["label"]) for r in csv.DictReader(stream)]


async def test_quit_and_save_elsewhere(chat_file: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.jsonl"
    app = build_app(chat_file, annotations=unwritable(tmp_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        await pilot.press("4", "enter", "ctrl+q")
        await wait_until(pilot, lambda: isinstance(app.screen, QuitScreen))
        await pilot.press("s")
        await wait_until(pilot, lambda: isinstance(app.screen, PromptScreen))
        await pilot.press("ctrl+u", *str(elsewhere), "enter")
        await wait_until(pilot, lambda: not app.is_running)
    records = Journal(elsewhere).load().records
    assert [(r["turn_id"], r["label"]) for r in records] == [("m009", "reflect")]


async def test_quit_with_everything_on_disk_does_not_ask(chat_file: Path,
                                                         tmp_path: Path) -> None:
    app = build_app(chat_file, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        await pilot.press("4", "enter", "ctrl+q")
        await wait_until(pilot, lambda: not app.is_running)


async def test_export_never_replaces_an_earlier_one_and_says_where(
        chat_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    app = build_app(chat_file, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(160, 45), notifications=True) as pilot:
        await ready(pilot, app)
        await pilot.press("6", "enter", "e")
        await app.workers.wait_for_complete()
        first = tmp_path / "migration-annotations.csv"
        before = first.read_bytes()
        await pilot.press("right_square_bracket", "7", "enter", "e")
        await app.workers.wait_for_complete()
        await pilot.pause()
        second = tmp_path / "migration-annotations-2.csv"
        assert first.read_bytes() == before and second.is_file()
        messages = [n.message for n in app._notifications]
        assert any(str(second) in m and "earlier migration-annotations.csv is kept" in m
                   for m in messages), messages


async def test_a_failed_export_leaves_no_file(chat_file: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import replay.core.publish.export as export_module

    def broken(rows: object, stream: object) -> int:
        stream.write("turn_id,label\r\nhalf")  # type: ignore[attr-defined]
        raise OSError(28, "No space left on device")

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(export_module, "write_csv", broken)
    app = build_app(chat_file, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(160, 45), notifications=True) as pilot:
        await ready(pilot, app)
        await pilot.press("e")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert any("No space left on device" in n.message for n in app._notifications)
    assert [p.name for p in tmp_path.iterdir()] == ["migration.json"]  # no CSV, no temp file
