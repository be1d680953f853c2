"""An Aider history of thousands of chats in the app: its list shows at once from the header
lines, counts fill in with progress, only the rows on screen are ever made, and scrolling,
sorting, filtering and opening work on the virtual list."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from replay.core.detection.empty import DEFAULT_RULES, is_stop
from replay.core.readers import load_sessions
from replay.ui.history_list import HistoryRows
from replay.ui.screens.picker import SessionPicker
from replay.ui.widgets.session_table import SessionTable
from tests.core.test_aider import HISTORY
from tests.core.test_aider_chats import HOSTILE
from tests.ui.conftest import build_app, ready, wait_until

CHATS = 3_000


@pytest.fixture
def history(tmp_path: Path) -> Path:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(HISTORY * (CHATS // 3), encoding="utf-8")
    return path


def _title(picker: SessionPicker) -> str:
    return str(picker.query_one("#picker-title").render())


async def _listed(pilot: Any, app: Any) -> tuple[SessionPicker, SessionTable]:
    await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker)
                     and bool(app.screen.query(SessionTable))
                     and app.screen.query_one(SessionTable).row_count > 0)
    picker = app.screen
    assert isinstance(picker, SessionPicker)
    return picker, picker.query_one(SessionTable)


async def _counted(pilot: Any, picker: SessionPicker) -> None:
    await wait_until(pilot, lambda: picker._waiting == 0 and "counting" not in _title(picker),
                     rounds=3_000)
    await pilot.pause()


async def test_the_list_shows_before_any_chat_is_counted_and_makes_only_the_rows_shown(
        history: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from replay.core.discovery import history as history_module

    release = threading.Event()
    scan_stream = history_module.scan_stream

    def slow(*args: Any, **kwargs: Any) -> Iterator[Any]:
        release.wait(20)  # a huge history: counting takes a while
        yield from scan_stream(*args, **kwargs)

    monkeypatch.setattr(history_module, "scan_stream", slow)
    made: list[int] = []
    make = HistoryRows.__getitem__

    def counted_make(self: HistoryRows, number: int) -> Any:
        made.append(number)
        return make(self, number)

    monkeypatch.setattr(HistoryRows, "__getitem__", counted_make)
    app = build_app(history)
    async with app.run_test(size=(140, 30)) as pilot:
        picker, table = await _listed(pilot, app)
        assert isinstance(picker.rows, HistoryRows) and table.row_count == CHATS
        await pilot.pause()
        assert f"{CHATS:,} sessions" in _title(picker)
        assert f"counting turns, 0 / {CHATS:,}" in _title(picker)
        assert [str(cell) for cell in table.get_row_at(0)][1:3] == ["…", "…"]
        assert "…" in table.render_line(1).text  # drawn as pending
        release.set()
        await _counted(pilot, picker)
        assert str(table.get_row_at(0)[1]) != "…"
        await pilot.press("end", "home", "pagedown")
        await pilot.pause()
    # Rows are made as they are drawn: a screenful at a time, never one per chat.
    assert 0 < len(made) < CHATS // 3, len(made)


async def test_scrolling_to_a_chat_and_opening_it_shows_that_chat(history: Path) -> None:
    whole = {session.session_id: session for session in load_sessions(history)}
    app = build_app(history)
    async with app.run_test(size=(140, 30)) as pilot:
        picker, table = await _listed(pilot, app)
        await _counted(pilot, picker)
        await pilot.press("end")
        await pilot.pause()
        assert table.cursor_row == CHATS - 1
        last = table.get_row_at(CHATS - 1)
        height = table.scrollable_content_region.height
        assert str(last[4]) in table.render_line(height - 1).text  # the last row, at the bottom
        await pilot.press("home", "pagedown")
        assert table.cursor_row == height - 2  # a page: the rows below the header, less one
        assert table.scroll_y == 0
        await pilot.press("pagedown")
        assert table.scroll_y > 0 and str(table.get_row_at(table.cursor_row)[4]) in \
            table.render_line(table.cursor_row - int(table.scroll_y) + 1).text
        # A chat with empty turns, far down the list.
        counts = picker.rows.counts  # type: ignore[attr-defined]
        wanted = next(place for place in range(CHATS - 1, 0, -1)
                      if counts.empty[table.number_at(place)])
        table.move_cursor(row=wanted)
        number = table.number_at(wanted)
        await pilot.press("enter")
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None
        expected = whole[counts.index.session_id(number)]
        assert screen.session.session_id == expected.session_id
        assert [t.id for t in screen.session.turns] == [t.id for t in expected.turns]
        assert screen.navigator.empty_indices == [
            t.index for t in expected.turns if is_stop(expected, t.index, DEFAULT_RULES)]
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is picker)
        assert table.cursor_row == wanted  # back where it was


async def test_filtering_and_sorting_the_virtual_list(history: Path) -> None:
    sessions = load_sessions(history)
    app = build_app(history)
    async with app.run_test(size=(140, 30)) as pilot:
        picker, table = await _listed(pilot, app)
        await _counted(pilot, picker)
        await pilot.press("slash", *"10:20")
        await pilot.pause()
        expected = sum("10:20" in session.label for session in sessions)
        assert 0 < table.row_count == expected < CHATS
        assert f"{expected:,} shown for '10:20'" in _title(picker)
        assert all("10:20" in str(table.get_row_at(row)[4]) for row in range(table.row_count))
        await pilot.press("enter", "escape")  # keep it, then clear it
        await pilot.pause()
        assert table.row_count == CHATS and picker.filter_text == ""
        await pilot.press("s")  # by empty turns, most first
        await pilot.pause()
        empties = [int(str(cell)) for cell in table.get_column("empty")]
        assert empties == sorted(empties, reverse=True) and empties[0] > empties[-1]
        assert "most empty turns first" in _title(picker)
        await pilot.click(SessionTable, offset=(20, 0))  # the "turns" header: most first
        await pilot.pause()
        turns = [int(str(cell).replace(",", "")) for cell in table.get_column("turns")]
        assert picker.sorted_by == "turns" and turns == sorted(turns, reverse=True)
        await pilot.click(SessionTable, offset=(20, 0))  # again: the other way round
        await pilot.pause()
        turns = [int(str(cell).replace(",", "")) for cell in table.get_column("turns")]
        assert turns == sorted(turns)
        await pilot.click(SessionTable, offset=(50, 0))  # the title, A to Z
        await pilot.pause()
        titles = [str(cell) for cell in table.get_column("session")]
        assert titles == sorted(titles)


async def test_markup_and_escapes_in_a_chat_s_title_are_shown_as_text(tmp_path: Path) -> None:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(f"# aider chat started at {HOSTILE}\n#### {HOSTILE}\n{HOSTILE}\n\n"
                    "# aider chat started at list[int] [red]x\n#### [/]\n"
                    + HISTORY * 2, encoding="utf-8")
    app = build_app(path)
    async with app.run_test(size=(160, 30)) as pilot:
        picker, table = await _listed(pilot, app)
        await _counted(pilot, picker)
        height = table.scrollable_content_region.height
        lines = [table.render_line(y).text for y in range(1, height)]
        assert any("aider chat list[int] [red]x" in line for line in lines)
        place = next(row for row in range(table.row_count)
                     if "[link=x]" in str(table.get_row_at(row)[4]))
        text = table.render_line(place - int(table.scroll_y) + 1).text
        assert "[/] [link=x]click[/link] ␛[ESC]]0;PWNED[BEL]" in text
        assert "\x1b" not in text and "\x07" not in text
        table.move_cursor(row=place)
        await pilot.press("enter")
        await ready(pilot, app)
        assert app.replay_screen is not None
        assert app.replay_screen.session.session_id == HOSTILE.strip()


async def test_an_80_column_terminal_shows_the_counts_first(history: Path) -> None:
    app = build_app(history)
    async with app.run_test(size=(80, 24)) as pilot:
        picker, table = await _listed(pilot, app)
        await _counted(pilot, picker)
        line = table.render_line(1).text
        assert len(line) == table.scrollable_content_region.width  # beside the scroll bar
        day, _, turns, empty = line.split()[:4]
        assert day.count("-") == 2 and turns.replace(",", "").isdigit() and empty.isdigit()
        await pilot.press("right", "right", "right")
        await pilot.pause()
        assert table.scroll_x > 0  # the rest of the row is a scroll away


async def test_a_long_chat_opens_with_its_turns_read_back_by_exchanges(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from replay.core.readers import aider, aider_turns

    monkeypatch.setattr(aider, "LONG_CHAT_BYTES", 0)  # this chat counts as long
    monkeypatch.setattr(aider_turns, "CACHE", 16)
    path = tmp_path / ".aider.chat.history.md"
    body = "".join(f"#### step {n}\n\nreply {n}\n\n> Tokens: 1k sent, 2 received.\n\n"
                   + ("#### <blank>\n\n" if n % 9 == 0 else "") for n in range(1_500))
    path.write_text("# aider chat started at 2024-05-01 10:00:00\n\n" + body, encoding="utf-8")
    [whole] = load_sessions(path)
    empties = [t.index for t in whole.turns if is_stop(whole, t.index, DEFAULT_RULES)]
    app = build_app(path)
    async with app.run_test(size=(140, 30)) as pilot:
        await ready(pilot, app)
        screen = app.replay_screen
        assert screen is not None
        turns = screen.session.turns
        assert isinstance(turns, aider_turns.ExchangeTurns)
        assert len(turns) == len(whole.turns)
        assert screen.navigator.empty_indices == empties
        await pilot.press("home", "right_square_bracket")
        assert screen.index == empties[0]
        await pilot.press("G")
        assert screen.index == len(whole.turns) - 1
        assert turns[screen.index].id == whole.turns[-1].id
        assert len(turns._cache) <= 16
