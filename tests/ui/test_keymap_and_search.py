"""Keymap clashes are reported and help shows the keys in effect; search counts and marks
its matches; a small terminal keeps the header's essentials and readable context."""

from __future__ import annotations

from pathlib import Path

from textual.binding import Binding

from replay.config import Settings
from replay.ui.keymap import clashes, effective_keys
from replay.ui.screens.help import HelpScreen
from replay.ui.screens.replay_screen import ReplayScreen
from replay.ui.widgets.turn_view import MATCH_STYLE, TurnLines
from tests.ui.conftest import build_app, ready, wait_until
from tests.ui.screen import screen_segments, screen_text

BINDINGS = [b for b in ReplayScreen.BINDINGS if isinstance(b, Binding)]


def test_a_key_bound_twice_names_both_ids() -> None:
    [line] = clashes(BINDINGS, {"next-empty-turn": "n"})
    assert "'n'" in line and "next-empty-turn" in line and "search-next" in line
    assert clashes(BINDINGS, {"next-empty-turn": "right_square_bracket,w"}) == []


def test_effective_keys_drop_a_key_the_keymap_took() -> None:
    keys = effective_keys(BINDINGS, {"next-empty-turn": "n"})
    assert keys["next-empty-turn"] == ["n"] and keys["search-next"] == []
    assert keys["next-turn"] == ["right", "l"]


async def test_clash_reported_once_at_start_and_help_shows_effective_keys(
        chat_file: Path, tmp_path: Path) -> None:
    settings = Settings(animations=False, keymap={"next-empty-turn": "n"})
    app = build_app(chat_file, settings=settings, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(160, 60), notifications=True) as pilot:
        await ready(pilot, app)
        keymap_notes = [n for n in app._notifications if n.title == "Keymap"]
        assert len(keymap_notes) == 1
        assert "next-empty-turn" in keymap_notes[0].message
        assert "search-next" in keymap_notes[0].message
        await pilot.press("n")  # the keymap's binding has it
        await pilot.pause()
        assert app.replay_screen is not None and app.replay_screen.index == 20
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause()
        rows = [line for line in screen_text(app).splitlines() if "search-next" in line
                or "next-empty-turn" in line]
        assert any("(no key)" in row and "search-next" in row for row in rows), rows
        assert sum(" n " in row for row in rows) == 1, rows


async def test_search_counts_and_highlights_matches(chat_file: Path, tmp_path: Path) -> None:
    app = build_app(chat_file, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None
        await pilot.press("home", "slash", *"SCHEMA", "enter")
        await pilot.pause()
        hits = screen.navigator.matches("schema")
        assert screen.index == hits[0]
        assert f"match 1 / {len(hits)}" in screen_text(app)
        await pilot.press("n")
        await pilot.pause()
        assert f"match 2 / {len(hits)}" in screen_text(app)
        current = screen.query_one("#current", TurnLines)
        region = current.content_region
        marked = ""
        for row in screen_segments(app)[region.y:region.bottom]:
            marked += "".join(s.text for s in row if s.style and s.style.reverse
                              and s.style.bold and "schema" in s.text.lower())
        assert "schema" in marked.lower(), marked
        assert MATCH_STYLE.reverse


async def test_small_terminal_keeps_header_and_folds_context(chat_file: Path,
                                                             tmp_path: Path) -> None:
    app = build_app(chat_file, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None
        await pilot.press("slash", *"migration", "enter")
        await pilot.pause()
        header = screen_text(app).splitlines()[0]
        # (the speed gives way first: the session's name stays)
        for piece in ("migration", "turn ", "paused", "annotated", "match "):
            assert piece in header, header
        before = screen.query_one("#before", TurnLines)
        after = screen.query_one("#after", TurnLines)
        assert before.display and not after.display
        assert before.content_region.height >= 4
        await pilot.press("vertical_line")
        await pilot.pause()
        assert after.display and not before.display and after.content_region.height >= 4
        assert "After (3 turns) · | shows Before" in screen_text(app)
        await pilot.resize_terminal(160, 45)
        await pilot.pause()
        assert before.display and after.display
        assert before.content_region.height >= 4 and after.content_region.height >= 4
        assert " replay · migration · chat-json · " in screen_text(app).splitlines()[0]


async def test_one_turn_is_singular_and_moving_on_clears_the_pause_mark(
        chat_file: Path, tmp_path: Path) -> None:
    app = build_app(chat_file, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None
        await pilot.press("home", "right")
        await pilot.pause()
        assert "Before (1 turn)" in screen_text(app)
        await pilot.press("home", "space")
        await wait_until(pilot, lambda: screen.paused_at_empty)
        assert "paused at empty turn" in screen_text(app)
        await pilot.press("right")
        await pilot.pause()
        assert "paused at empty turn" not in screen_text(app)


async def test_an_automatic_compaction_is_not_said_to_be_asked_for(chat_file: Path,
                                                                   tmp_path: Path) -> None:
    from replay.core.detection.empty import EmptyTurn
    from replay.core.session.model import Kind, Part, Turn

    app = build_app(chat_file, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None
        for name, expected in (("auto", "the user turn is an automatic compaction"),
                               ("manual", "the user asked for a compaction")):
            turn = Turn(id="c", role="user", parts=[Part(Kind.COMPACTION, name=name)])
            turn.index = 9
            empty = EmptyTurn(9, "c", "user", None, "compaction-request")
            assert expected in screen.banner_text(turn, empty).plain
