"""The session list of a listed source: shown before any session is read, counts filled in
one session at a time, counting paused while a session is open and resumed on return."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from replay.core.readers import load_sessions
from replay.ui.screens.picker import SessionPicker
from replay.ui.screens.replay_screen import ReplayScreen
from replay.ui.widgets.session_table import SessionTable
from tests.core.test_claude_code import _project
from tests.ui.conftest import build_app, wait_until


def cells(table: SessionTable, row: int) -> list[str]:
    return [str(cell) for cell in table.get_row_at(row)]


async def test_a_project_folder_lists_at_once_and_counts_as_it_reads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from replay.core.discovery import counts

    project = _project(tmp_path)
    expected = {s.label: len(s.turns) for s in load_sessions(project)}
    scan_task = counts.scan_task
    release = threading.Event()

    def slow_scan(task: object) -> object:
        release.wait(10)  # a big session: counting takes a while
        return scan_task(task)  # type: ignore[arg-type]

    monkeypatch.setattr(counts, "scan_task", slow_scan)
    app = build_app(project)
    async with app.run_test(size=(140, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker)
                         and bool(app.screen.query(SessionTable))
                         and app.screen.query_one(SessionTable).row_count == 3)
        picker = app.screen
        assert isinstance(picker, SessionPicker)
        table = picker.query_one(SessionTable)
        assert "…" in cells(table, 0)  # listed before any session was read
        assert "counting turns, 0 / 3" in str(picker.query_one("#picker-title").render())
        await pilot.press("enter")  # open the newest at once: counting stops meanwhile
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen)
                         and not app.screen.indexing)
        assert all(row.summary is None for row in picker.rows)
        release.set()
        await pilot.press("escape")
        assert app.screen is picker
        await wait_until(pilot, lambda: all(row.summary is not None for row in picker.rows)
                         and picker.drawn)
        await pilot.pause()
        assert "counting" not in str(picker.query_one("#picker-title").render())
        shown = {cells(table, row)[4]: int(cells(table, row)[1].replace(",", ""))
                 for row in range(table.row_count)}
        assert shown == expected
        # Newest first; the session without any timestamp last.
        assert cells(table, 2)[0] == "?" and cells(table, 0)[0] >= cells(table, 1)[0]


async def test_a_session_that_cannot_be_read_leaves_the_list_up(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import replay.ui.app as app_module
    from replay.core.corpus import tasks
    from replay.core.readers import ReaderError
    from tests.core.test_opencode import TURNS, build_database

    database = build_database(tmp_path / "opencode.db", list(TURNS))
    read_entry = app_module.read_entry

    def failing(reader: object, entry: object, **options: bool) -> object:
        if getattr(entry, "key", "") == newest:
            raise ReaderError(f"{database}: session {newest} is no longer there")
        return read_entry(reader, entry, **options)  # type: ignore[arg-type]

    newest = load_sessions(database)[-1].session_id
    # Gone when it is counted and when it is opened.
    monkeypatch.setattr(app_module, "read_entry", failing)
    monkeypatch.setattr(tasks, "read_entry", failing)  # (the lists count by `scan_task`)
    app = build_app(database)
    async with app.run_test(size=(140, 30), notifications=True) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker)
                         and all(row.summary or row.error for row in app.screen.rows)
                         and app.screen.drawn)
        picker = app.screen
        assert isinstance(picker, SessionPicker) and picker.rows[0].entry is not None
        assert picker.rows[0].entry.key == newest and picker.rows[0].error
        assert cells(picker.query_one(SessionTable), 0)[4].startswith(f"{newest} · unreadable: ")
        await pilot.press("enter")
        await pilot.pause(0.3)
        assert app.screen is picker and app.is_running
        assert any("no longer there" in str(n.message) for n in app._notifications)


async def test_s_sorts_by_empty_turns_then_turns_and_enter_opens_the_row_shown(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import replay.ui.screens.picker as picker_module
    from tests.core.test_opencode import TURNS, build_database

    # Counts that came in but wait for the next redraw are sorted as counts, not as "…"
    # (seen under load: the redraw came after the key).
    monkeypatch.setattr(picker_module, "FLUSH_SECONDS", 60.0)
    database = build_database(tmp_path / "opencode.db", list(TURNS))
    sessions = load_sessions(database)
    app = build_app(database)
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker)
                         and all(row.summary for row in app.screen.rows))
        picker = app.screen
        assert isinstance(picker, SessionPicker)
        table = picker.query_one(SessionTable)
        await pilot.press("s")
        empties = [int(cells(table, row)[2]) for row in range(table.row_count)]
        assert empties == sorted(empties, reverse=True) and empties[0] > 0
        assert "most empty turns first" in str(picker.query_one("#picker-title").render())
        await pilot.press("s")
        turns = [int(cells(table, row)[1].replace(",", "")) for row in range(table.row_count)]
        assert turns == sorted(turns, reverse=True) == sorted(
            (len(s.turns) for s in sessions), reverse=True)
        await pilot.press("enter")  # the first row shown: the longest session
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen))
        assert len(app.screen.session.turns) == turns[0]  # type: ignore[attr-defined]


async def test_files_that_cannot_be_read_are_listed_greyed_with_the_reason(
        tmp_path: Path) -> None:
    project = _project(tmp_path)
    (project / "loop.jsonl").symlink_to("loop.jsonl")
    (project / "foreign.jsonl").write_text('{"hello": "world"}\n')
    app = build_app(project)
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker)
                         and all(row.summary or row.problem for row in app.screen.rows)
                         and app.screen.drawn)
        picker = app.screen
        assert isinstance(picker, SessionPicker)
        table = picker.query_one(SessionTable)
        shown = {cells(table, row)[4] for row in range(table.row_count)}
        assert "loop.jsonl · unreadable: symbolic link loop" in shown
        assert "foreign.jsonl · unreadable: not a Claude Code session file" in shown
        # Greyed: the whole row is dim, the reason in italics.
        row = next(number for number in range(table.row_count)
                   if "loop" in cells(table, number)[4])
        reason = table.get_row_at(row)[4]
        assert "dim" in str(reason.style)
        assert "counting" not in str(picker.query_one("#picker-title").render())


async def test_prose_beside_the_sessions_is_not_listed_but_a_broken_candidate_is(
        tmp_path: Path) -> None:
    from tests.core.test_folder_candidates import _listable_folder

    app = build_app(_listable_folder(tmp_path))
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker)
                         and all(row.summary or row.problem for row in app.screen.rows)
                         and bool(app.screen.query(SessionTable)) and app.screen.drawn)
        table = app.screen.query_one(SessionTable)
        shown = " | ".join(" ".join(cells(table, row)) for row in range(table.row_count))
        assert table.row_count == 4, shown
        assert "README" not in shown and "notes.txt" not in shown
        assert "broken.json · unreadable: " in shown and "loop.jsonl · unreadable: " in shown


async def test_a_long_session_title_in_the_list_ends_with_an_ellipsis(tmp_path: Path) -> None:
    from tests.ui.sessions import write_chat

    folder = tmp_path / "sessions"
    folder.mkdir()
    title = ("Tested various edge cases including markdown formatting, long text, tool "
             "errors, system messages")
    write_chat(folder / "a.json", title=title)
    write_chat(folder / "b.json", title="short")
    app = build_app(folder)
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker)
                         and bool(app.screen.query(SessionTable))
                         and app.screen.query_one(SessionTable).row_count == 2)
        table = app.screen.query_one(SessionTable)
        shown = {cells(table, row)[4] for row in range(table.row_count)}
        assert f"{title[:69]}…" in shown and "short" in shown, shown
