"""What a new user fell through at 80 columns and while typing (#23 item 8): the header
keeps `+N new turns (f)`, the footer offers no key that goes into the note, the help's first
paragraph is wrapped whole, and the session screen's footer says that escape goes back."""

from __future__ import annotations

from pathlib import Path

from replay.ui.screens.help import HelpScreen
from replay.ui.screens.picker import SessionPicker
from replay.ui.screens.replay_screen import ReplayScreen
from tests.ui.conftest import build_app, ready, wait_until
from tests.ui.screen import screen_text
from tests.ui.sessions import write_chat


def screen_of(app: object) -> ReplayScreen:
    screen = app.replay_screen  # type: ignore[attr-defined]
    assert isinstance(screen, ReplayScreen)
    return screen


def footer_line(app: object) -> str:
    return screen_text(app).splitlines()[-1]  # type: ignore[arg-type]


async def test_the_header_at_80_columns_keeps_the_new_turns(chat_file: Path,
                                                            tmp_path: Path) -> None:
    app = build_app(chat_file, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        screen.following = True
        screen.paused_at_empty = True
        screen.live.at_live_end = False
        screen.live.new_turns = 12
        screen.show()
        await pilot.pause()
        header = screen_text(app).splitlines()[0]
        # Shortened to fit beside the session, the position and the following state.
        assert "+12 new (f)" in header, header
        assert "turn 10 / 30" in header and "at empty turn" in header
        assert "migration" in header and "following (paused)" in header
        assert screen.status_text().cell_len <= 80
        await pilot.resize_terminal(160, 45)
        await pilot.pause()
        header = screen_text(app).splitlines()[0]
        assert "+12 new turns (f)" in header and "paused at empty turn" in header, header


async def test_the_header_at_80_columns_keeps_the_session_and_following(
        tmp_path: Path) -> None:
    """At 80 columns the speed, the app's name and the format give way, and the session's
    name is cut, before the position, the play state or following do; at 160 all show."""
    title = "Refactor the importers [/] [link=x] list[int] into one registry of readers"
    path = write_chat(tmp_path / "long.json", title=title)
    app = build_app(path, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        screen = screen_of(app)
        screen.following = True
        screen.live.at_live_end = True
        screen.show()
        await pilot.pause()
        header = screen_text(app).splitlines()[0]
        # Cut to 24 cells, the counts still beside it.
        assert header.startswith(" Refactor the importers [… · turn 10 / 30 · paused · "
                                 "0 / 2 annotated · following"), header
        assert "replay ·" not in header and "chat-json" not in header and "1x" not in header
        assert screen.status_text().cell_len <= 80
        await pilot.resize_terminal(160, 45)
        await pilot.pause()
        header = screen_text(app).splitlines()[0]
        assert header.startswith(" replay · Refactor the importers [/] [link=x] lis…"
                                 " · chat-json · turn 10 / 30 · paused · "), header
        assert "x · 0 / 2 annotated · following" in header, header


async def test_typing_a_note_the_footer_offers_no_key_that_types(chat_file: Path,
                                                                  tmp_path: Path) -> None:
    app = build_app(chat_file, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(120, 36)) as pilot:
        await ready(pilot, app)
        assert "/ Search" in footer_line(app)
        await pilot.press("tab", *"a/b")
        await pilot.pause()
        footer = footer_line(app)
        assert "Search" not in footer and "Export" not in footer, footer
        assert "Back" in footer  # escape leaves the field (enter saves: the field says so)
        assert screen_of(app).annotation.note == "a/b"
        await pilot.press("escape")
        await pilot.pause()
        assert "/ Search" in footer_line(app) and "Back" not in footer_line(app)


async def test_the_help_wraps_its_first_paragraph_whole(chat_file: Path,
                                                         tmp_path: Path) -> None:
    app = build_app(chat_file, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.pause()
        lines = [line.strip(" ┃│║▌▐█") for line in screen_text(app).splitlines()]
        start = next(at for at, line in enumerate(lines) if line.startswith("replay steps"))
        paragraph = []
        for line in lines[start:]:
            if not line.strip():
                break
            paragraph.append(line.strip())
        widest = max(len(line) for line in paragraph)
        # Lines cut by hand left short pieces of sentences ("empty turn.") between long ones.
        assert all(len(line) > widest - 16 for line in paragraph[:-1]), paragraph


async def test_the_session_screen_footer_says_escape_goes_back(tmp_path: Path) -> None:
    from tests.core.test_opencode import TURNS, build_database

    database = build_database(tmp_path / "opencode.db", list(TURNS))
    app = build_app(database, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker))
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen))
        await pilot.pause()
        assert "esc Back" in footer_line(app), footer_line(app)
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker))


async def test_a_single_session_offers_no_back(chat_file: Path, tmp_path: Path) -> None:
    app = build_app(chat_file, annotations=tmp_path / "j.jsonl")
    async with app.run_test(size=(160, 30)) as pilot:
        await ready(pilot, app)
        assert "Back" not in footer_line(app)
