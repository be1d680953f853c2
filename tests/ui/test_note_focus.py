"""Tab then typing at once: every key typed after tab lands in the note field, however soon
after tab it comes (a fast typist, or keys pasted, reach the app in one read)."""

from __future__ import annotations

from pathlib import Path

from textual import events

from replay.core.annotate.journal import Journal
from replay.ui.app import ReplayApp
from replay.ui.widgets.annotation_bar import NoteInput
from tests.ui.conftest import build_app, ready


def _typed_at_once(app: ReplayApp, keys: list[tuple[str, str | None]]) -> None:
    """The keys queued to the app in one go, as a terminal delivers keys typed within
    milliseconds: none is handled before the next is queued (Pilot's `press` waits for the
    app to be idle after each key, which hides the race)."""
    driver = app._driver
    assert driver is not None
    for key, char in keys:
        event = events.Key(key, char)
        event.set_sender(app)
        driver.send_message(event)


def _letters(text: str) -> list[tuple[str, str | None]]:
    names = {" ": "space", "2": "2"}
    return [(names.get(char, char), char) for char in text]


async def test_letters_typed_right_after_tab_land_in_the_note(chat_file: Path,
                                                               tmp_path: Path) -> None:
    journal = tmp_path / "notes.jsonl"
    app = build_app(chat_file, annotations=journal, reviewer="ada")
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None and screen.index == 9
        # Each of these letters is a key of the replayer too (o folds, c cycles the
        # confidence, 2 picks a label, space plays): none of them may act on the screen.
        before = (screen.index, screen.annotation.confidence, screen.annotation.pending_label)
        _typed_at_once(app, [("tab", "\t"), *_letters("cold o2 c")])
        await pilot.pause()
        await pilot.pause()
        note = screen.query_one("#annotation-note", NoteInput)
        assert note.value == "cold o2 c"
        assert note.has_focus
        assert (screen.index, screen.annotation.confidence,
                screen.annotation.pending_label) == before
        _typed_at_once(app, [("enter", "\r")])
        await pilot.pause()
        await pilot.pause()
    [record] = Journal(journal).load().records
    assert record["note"] == "cold o2 c"


async def test_tab_then_escape_at_once_leaves_the_note_and_keys_drive_again(
        chat_file: Path, tmp_path: Path) -> None:
    app = build_app(chat_file, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None
        _typed_at_once(app, [("tab", "\t"), ("x", "x"), ("escape", None), ("c", "c")])
        await pilot.pause()
        await pilot.pause()
        note = screen.query_one("#annotation-note", NoteInput)
        assert note.value == "x" and not note.has_focus
        assert screen.annotation.confidence == "high"  # c, after escape, went to the bar


async def test_keys_typed_right_after_enter_in_the_note_drive_the_replayer(
        chat_file: Path, tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    app = build_app(chat_file, annotations=journal)
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None and screen.index == 9
        _typed_at_once(app, [("2", "2"), ("tab", "\t"), *_letters("ok"), ("enter", "\r"),
                             ("right_square_bracket", "]")])
        await pilot.pause()
        await pilot.pause()
        note = screen.query_one("#annotation-note", NoteInput)
        assert screen.index == 20  # ] went to the next empty turn, not into the note
        assert not note.has_focus
    [record] = Journal(journal).load().records
    assert (record["label"], record["note"]) == ("approval", "ok")


async def test_the_note_is_still_known_once_its_field_is_gone(chat_file: Path,
                                                               tmp_path: Path) -> None:
    # The drafts kept at exit (SIGTERM, SIGHUP, the 2 s timer) ask the bar for its note
    # while the app is being torn down: the field may be gone (a NoMatches traceback, found
    # by the r5 fuzz's app trial).
    app = build_app(chat_file, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None
        await pilot.press("2", "tab", *"kept", "escape")
        note = screen.query_one("#annotation-note", NoteInput)
        await note.remove()
        [draft] = screen.annotation.unsaved_drafts()
        assert (draft.label, draft.note) == ("approval", "kept")
