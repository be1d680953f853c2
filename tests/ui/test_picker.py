"""The session list of a listed source: shown before any session is read, counts filled in
one session at a time, counting paused while a session is open and resumed on return."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from textual.widgets import DataTable

from replay.core.readers import load_sessions
from replay.ui.screens.picker import SessionPicker
from replay.ui.screens.replay_screen import ReplayScreen
from tests.core.test_claude_code import _project
from tests.ui.conftest import build_app, wait_until


def cells(table: DataTable[object], row: int) -> list[str]:
    return [str(cell) for cell in table.get_row_at(row)]


async def test_a_project_folder_lists_at_once_and_counts_as_it_reads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import replay.ui.app as app_module

    project = _project(tmp_path)
    expected = {s.label: len(s.turns) for s in load_sessions(project)}
    read_entry = app_module.read_entry
    release = threading.Event()

    def slow_read(reader: object, entry: object) -> object:
        release.wait(10)  # a big session: counting takes a while
        return read_entry(reader, entry)  # type: ignore[arg-type]

    monkeypatch.setattr(app_module, "read_entry", slow_read)
    app = build_app(project)
    async with app.run_test(size=(140, 30)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker)
                         and app.screen.query_one(DataTable).row_count == 3)
        picker = app.screen
        assert isinstance(picker, SessionPicker)
        table = picker.query_one(DataTable)
        assert "…" in cells(table, 0)  # listed before any session was read
        await pilot.press("enter")  # open the newest at once: counting stops meanwhile
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen)
                         and not app.screen.indexing)
        assert all(row.summary is None for row in picker.rows)
        release.set()
        await pilot.press("escape")
        assert app.screen is picker
        await wait_until(pilot, lambda: all(row.summary is not None for row in picker.rows))
        shown = {cells(table, row)[4]: int(cells(table, row)[1].replace(",", ""))
                 for row in range(table.row_count)}
        assert shown == expected
        # Newest first; the session without any timestamp last.
        assert cells(table, 2)[0] == "?" and cells(table, 0)[0] >= cells(table, 1)[0]
