"""Pilot tests of annotating in the app: pick, note, confidence, save, undo, resume, export."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from replay.core.annotate.journal import Journal
from replay.ui.screens.replay_screen import ReplayScreen
from tests.ui.conftest import build_app, ready
from tests.ui.sessions import write_chat


def screen_of(app: object) -> ReplayScreen:
    screen = app.replay_screen  # type: ignore[attr-defined]
    assert isinstance(screen, ReplayScreen)
    return screen


async def test_pick_note_confidence_and_save(chat_file: Path, tmp_path: Path) -> None:
    journal = tmp_path / "notes.jsonl"
    app = build_app(chat_file, annotations=journal, reviewer="ada")
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        assert screen.index == 9
        await pilot.press("2")
        assert screen.annotation.pending_label == "approval"
        await pilot.press("c")
        assert screen.annotation.confidence == "high"
        await pilot.press("tab", *"said ok", "enter")
        await pilot.pause()
        saved = screen.store.get("m009")
        assert saved is not None and saved.label == "approval"
        assert saved.note == "said ok" and saved.confidence == "high"
        assert "1 / 2 annotated" in str(screen.status_text())
    records = Journal(journal).load().records
    assert [(r["turn_id"], r["label"], r["reviewer"]) for r in records] == [
        ("m009", "approval", "ada")]


async def test_enter_accepts_the_suggestion(chat_file: Path, tmp_path: Path) -> None:
    app = build_app(chat_file, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        suggestion = screen.empty_turn(9).suggestion  # type: ignore[union-attr]
        assert suggestion
        await pilot.press("enter")
        assert screen.store.get("m009").label == suggestion  # type: ignore[union-attr]


async def test_labels_only_at_empty_turns(chat_file: Path, tmp_path: Path) -> None:
    app = build_app(chat_file, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        await pilot.press("right", "3", "enter")
        assert screen.annotation.pending_label is None
        assert screen.store.all() == {}


async def test_undo_and_resume_at_first_unannotated(chat_file: Path, tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    app = build_app(chat_file, annotations=journal)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        await pilot.press("1", "enter", "right_square_bracket", "8", "enter")
        assert set(screen.store.all()) == {"m009", "m020"}
        await pilot.press("z")
        assert set(screen.store.all()) == {"m009"}
        assert screen.index == 20
    reopened = build_app(chat_file, annotations=journal)
    async with reopened.run_test(size=(120, 36)) as pilot:
        await ready(pilot, reopened)
        screen = screen_of(reopened)
        assert screen.store.get("m009").label == "continue"  # type: ignore[union-attr]
        assert screen.index == 20
        await pilot.press("u")
        assert screen.index == 20


async def test_unwritable_journal_keeps_the_work(chat_file: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the journal directory should be", encoding="utf-8")
    app = build_app(chat_file, annotations=blocker / "j.jsonl")
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        await pilot.press("4", "enter")
        assert screen.store.get("m009").label == "reflect"  # type: ignore[union-attr]
        assert len(screen.store.unsaved) == 1
        assert any("not saved" in (n.title or "") for n in app._notifications)
        assert "NOT WRITTEN" in str(screen.query_one("#annotation-state").render())


async def test_export_key_writes_csv(chat_file: Path, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    app = build_app(chat_file, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        await pilot.press("6", "enter", "e")
        await app.workers.wait_for_complete()
        await pilot.pause()
    files = list(tmp_path.glob("*-annotations.csv"))
    assert len(files) == 1
    with open(files[0], encoding="utf-8-sig", newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert [(row["turn_id"], row["label"]) for row in rows] == [("m009", "thinking"),
                                                                ("m020", "")]


async def test_custom_label_set_with_letter_keys(chat_file: Path, tmp_path: Path) -> None:
    from replay.core.session.labels import load_label_set

    labels_file = tmp_path / "labels.toml"
    labels_file.write_text(
        '[[label]]\nname = "nudge"\nkey = "a"\ntitle = "Nudge"\ndescription = "A push."\n'
        '[[label]]\nname = "glitch"\nkey = "b"\ntitle = "Glitch"\ndescription = "Tooling."\n',
        encoding="utf-8")
    app = build_app(chat_file, annotations=tmp_path / "j.jsonl",
                    labels=load_label_set(labels_file))
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        await pilot.press("b", "enter")
        assert screen.store.get("m009").label == "glitch"  # type: ignore[union-attr]
        await pilot.press("1")
        assert screen.annotation.pending_label is None


async def test_export_key_counts_one_row_in_the_singular(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    app = build_app(write_chat(tmp_path / "one.json", empty_at=(9,)),
                    annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await ready(pilot, app)
        await pilot.press("6", "enter", "e")
        await app.workers.wait_for_complete()
        await pilot.pause()
        said = [str(n.message) for n in app._notifications if n.title == "Export"]
    assert said and said[-1].startswith("Exported 1 row to "), said
