"""The session list's folder cell asks the file system once per source, not once per row
drawn: every chat of an Aider history shares the history's path, and a list of 3,000 chats
made 6,003 stats as it was drawn, scrolled and sorted."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from replay.ui.screens import picker as picker_module
from replay.ui.screens.picker import SessionPicker
from replay.ui.widgets.session_table import SessionTable
from tests.core.test_aider import HISTORY
from tests.core.test_claude_code import _project
from tests.ui.conftest import build_app, wait_until

PICKER = os.path.normcase(picker_module.__file__)


def _count_picker_stats(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every `os.stat` made from the picker's own code (reading the sessions stats too)."""
    made: list[str] = []
    stat: Callable[..., Any] = os.stat

    def counted(path: Any, *args: Any, **kwargs: Any) -> Any:
        frame = sys._getframe(1)
        while frame is not None:
            if os.path.normcase(frame.f_code.co_filename) == PICKER:
                made.append(os.fspath(path))
                break
            frame = frame.f_back
        return stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", counted)
    return made


async def _listed(pilot: Any, app: Any, rows: int) -> tuple[SessionPicker, SessionTable]:
    await wait_until(pilot, lambda: isinstance(app.screen, SessionPicker)
                     and bool(app.screen.query(SessionTable))
                     and app.screen.query_one(SessionTable).row_count == rows)
    picker = app.screen
    assert isinstance(picker, SessionPicker)
    return picker, picker.query_one(SessionTable)


async def _browse(pilot: Any, picker: SessionPicker) -> None:
    """Wait for the counts, then scroll and sort by the folder column both ways."""
    await wait_until(pilot, lambda: picker._waiting == 0, rounds=3_000)
    await pilot.press("pagedown", "pagedown", "end", "home")
    picker.sort_by("folder")
    picker.sort_by("folder", reverse=True)
    await pilot.pause()


async def test_a_history_of_3000_chats_stats_its_path_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    history = tmp_path / ".aider.chat.history.md"
    history.write_text(HISTORY * 1_000, encoding="utf-8")
    made = _count_picker_stats(monkeypatch)
    app = build_app(history)
    async with app.run_test(size=(140, 30)) as pilot:
        picker, table = await _listed(pilot, app, 3_000)
        await _browse(pilot, picker)
        assert picker.sorted_by == "folder" and table.row_count == 3_000
        folders = {str(cell) for cell in table.get_column("folder")}
    assert folders == {""}  # the listed history is their place: blank, not ".."
    assert len(made) <= 2, (len(made), made[:3])


async def test_a_project_folder_stats_each_session_file_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = _project(tmp_path)
    made = _count_picker_stats(monkeypatch)
    app = build_app(project)
    async with app.run_test(size=(140, 30)) as pilot:
        picker, table = await _listed(pilot, app, 3)
        await _browse(pilot, picker)
        for _ in range(5):  # each redraw of every row, as counts come in or the list sorts
            picker.sort_by("turns")
            picker.sort_by("folder")
            await pilot.pause()
        sources = {str(row.entry.path) for row in picker.rows if row.entry is not None}
    assert len(sources) == 3
    assert len(made) <= len(sources), (len(made), sorted(set(made)))
