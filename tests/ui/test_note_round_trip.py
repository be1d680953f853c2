"""A note read back from the journal into the note field is drawn literally and safely (no
markup, no control sequence, no invisible character reaching the terminal) and saved back
exactly as it was, edited or not."""

from __future__ import annotations

from pathlib import Path

from replay.cli import main
from replay.core.annotate.journal import Journal
from replay.ui.widgets.annotation_bar import NoteInput
from tests.ui.conftest import build_app, ready
from tests.ui.screen import screen_segments, screen_text
from tests.ui.test_hostile_text import assert_terminal_safe

NOTE = "[/] [link=x]L[/link] list[int] \x1b]0;T\x07 \u202eevil\u202c zw\u200b c1\x85 [b]end"
SEEN = ("[/] [link=x]L[/link] list[int] ␛[ESC]]0;T[BEL] <U+202E>evil<U+202C> zw<U+200B> "
        "c1\\x85 [b]end")


def _labelled(chat_file: Path, journal: Path) -> None:
    assert main(["label", str(chat_file), "--turn", "#10", "--label", "continue",
                 "--note", NOTE, "--annotations", str(journal), "--reviewer", "ada"]) == 0


def _notes(journal: Path) -> list[str]:
    return [record.get("note") for record in Journal(journal).load().records]


async def test_a_hostile_note_is_shown_literally_and_saved_back_unchanged(
        chat_file: Path, tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    _labelled(chat_file, journal)
    app = build_app(chat_file, annotations=journal, reviewer="ada")
    async with app.run_test(size=(160, 40)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None
        screen.go(9)
        await pilot.pause()
        field = screen.query_one(NoteInput)
        assert field.value == NOTE
        assert SEEN in screen_text(app), screen_text(app)
        assert_terminal_safe(app)
        # Focused, cursor at the end, then on the hidden characters: still safe, still literal.
        await pilot.press("tab")
        await pilot.pause()
        assert SEEN in screen_text(app)
        assert_terminal_safe(app)
        await pilot.press("home", *["right"] * 40, "shift+right", "shift+right")
        await pilot.pause()
        assert_terminal_safe(app)
        await pilot.press("enter")
        await pilot.pause()
        assert screen.store.get("m009").note == NOTE  # type: ignore[union-attr]
        # Edited: tab then typing adds to the note (it is not selected on focus, so typing
        # does not replace it); the rest is kept to the character.
        await pilot.press("tab", *" ok", "enter")
        await pilot.pause()
        assert screen.store.get("m009").note == NOTE + " ok"  # type: ignore[union-attr]
        assert_terminal_safe(app)
    assert _notes(journal)[0] == NOTE and _notes(journal)[-1] == NOTE + " ok"


async def test_the_cursor_moves_over_a_marked_character_in_one_step(
        chat_file: Path, tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    _labelled(chat_file, journal)
    app = build_app(chat_file, annotations=journal, reviewer="ada")
    async with app.run_test(size=(160, 40)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None
        screen.go(9)
        await pilot.pause()
        field = screen.query_one(NoteInput)
        await pilot.press("tab", "home")
        start = NOTE.index("\u202e")
        await pilot.press(*["right"] * start)
        await pilot.pause()
        # The cursor is drawn over the whole mark (one segment of its own, styled apart from
        # the text around it); one delete removes the one hidden character.
        assert field.cursor_position == start
        row = next(line for line in screen_segments(app)
                   if "list[int]" in "".join(segment.text for segment in line))
        drawn = [segment.text for segment in row if segment.text.strip() and not segment.control]
        assert "<U+202E>" in drawn, drawn
        await pilot.press("delete", "enter")
        await pilot.pause()
        assert screen.store.get("m009").note == NOTE.replace("\u202e", "")  # type: ignore[union-attr]
