"""`replay` with no PATH: one list of every session found on this machine (agent and project
columns, counts filling in), typed filter and sort by any column; none found: the sample,
saying so in the header."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from textual.widgets import Input

from replay.resources import default_sample
from replay.ui.launch import _chosen
from replay.ui.screens.picker import SessionPicker
from replay.ui.screens.replay_screen import ReplayScreen
from replay.ui.widgets.session_table import SessionTable
from tests.core.homes import build_home
from tests.ui.conftest import build_app, wait_until


def no_path_app():  # type: ignore[no-untyped-def]
    """The app as `replay` with no PATH builds it."""
    return build_app(default_sample(), discover=True)


def column(table: SessionTable, name: str) -> list[str]:
    return [str(cell) for cell in table.get_column(name)]


async def test_the_list_of_every_session_filters_sorts_and_opens(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = build_home(tmp_path / "home")
    monkeypatch.setenv("HOME", str(home.root))
    app = no_path_app()
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker)
                         and bool(app.screen.query(SessionTable))
                         and app.screen.query_one(SessionTable).row_count > 0)
        picker = app.screen
        assert isinstance(picker, SessionPicker)
        table = picker.query_one(SessionTable)
        assert [str(c.label) for c in table.columns.values()][:6] == [
            "written", "turns", "empty", "agent", "session", "project"]
        assert set(column(table, "agent")) == {"Claude Code", "Codex", "opencode", "Gemini CLI"}
        # Counts fill in from the background.
        # (the rows show counts as soon as they come; the title says so at the next redraw)
        await wait_until(pilot, lambda: "…" not in column(table, "turns") and picker.drawn)
        assert "counting" not in str(picker.query_one("#picker-title").render())
        await pilot.press("slash")
        assert isinstance(app.focused, Input)
        await pilot.press(*"dark-factory")
        assert table.row_count == 3
        assert set(column(table, "agent")) == {"opencode"}
        await pilot.press("enter")  # keeps the filter, back to the list
        assert app.focused is table
        await pilot.click(SessionTable, offset=(20, 0))  # the "turns" header: most first
        await pilot.pause()
        assert picker.sorted_by == "turns"
        turns = [int(t.replace(",", "")) for t in column(table, "turns")]
        assert turns == sorted(turns, reverse=True)
        await pilot.click(SessionTable, offset=(20, 0))  # again: the other way round
        await pilot.pause()
        turns = [int(t.replace(",", "")) for t in column(table, "turns")]
        assert turns == sorted(turns)
        await pilot.press("escape")  # clears the filter
        assert table.row_count == 10
        picker.sort_by("agent")
        await pilot.pause()
        agents = column(table, "agent")
        assert agents == sorted(agents)
        table.move_cursor(row=0)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen)
                         and app.first_screen_painted.is_set())
        await pilot.pause()


async def test_an_unreadable_file_is_a_greyed_row_with_its_reason(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = build_home(tmp_path / "home")
    (home.claude_projects / "-experiments-ideas" / "broken.jsonl").write_text(
        '{"text": "[/] [link=x]not a session"}\n')
    monkeypatch.setenv("HOME", str(home.root))
    app = no_path_app()
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker)
                         and bool(app.screen.query(SessionTable))
                         and app.screen.query_one(SessionTable).row_count > 0)
        table = app.screen.query_one(SessionTable)
        names = column(table, "session")
        assert any("broken.jsonl · unreadable: not a Claude Code session file" in name
                   for name in names)


async def test_with_no_session_found_the_sample_says_so_in_the_header() -> None:
    app = no_path_app()
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen)
                         and app.first_screen_painted.is_set())
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        assert "no sessions found on this machine" in screen.status_text().plain
        assert screen.session.label  # the sample itself


async def test_an_id_of_a_database_session_opens_that_session(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from replay.arguments import settle_paths

    home = build_home(tmp_path / "home")
    monkeypatch.setenv("HOME", str(home.root))
    args = argparse.Namespace(path="ses_39b3d0", follow=False)
    assert settle_paths(args) is None
    sessions = _chosen(args)
    assert [s.session_id for s in sessions] == ["ses_39b3d0892ffeaCoiaHPszzRI8d"]
    app = build_app(Path(args.path), discovered=sessions, chosen=True)
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen)
                         and app.first_screen_painted.is_set())
        await pilot.pause()
        assert app.screen.session.session_id == "ses_39b3d0892ffeaCoiaHPszzRI8d"


async def test_at_160_columns_the_id_to_open_a_session_by_is_shown_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The title (70) and project (40) columns pushed the id to its first three characters.
    home = build_home(tmp_path / "home")
    monkeypatch.setenv("HOME", str(home.root))
    app = no_path_app()
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker)
                         and bool(app.screen.query(SessionTable))
                         and app.screen.query_one(SessionTable).row_count > 0)
        await wait_until(pilot, lambda: "…" not in column(
            app.screen.query_one(SessionTable), "turns"))
        await pilot.pause()
        shown = app.screen.query_one(SessionTable).render_line(2).text
        ids = [str(cell) for cell in app.screen.query_one(SessionTable).get_column("id")]
        assert any(ident and ident in shown for ident in ids), (shown, ids)
