"""A session list is newest first on open, even when the start of a session is only known
once it has been read."""

from __future__ import annotations

from pathlib import Path

from textual.app import App

from replay.core.corpus.scan import SessionSummary
from replay.core.detection.empty import DEFAULT_RULES
from replay.core.readers.base import SessionEntry
from replay.ui.screens.picker import PickerRow, SessionPicker
from replay.ui.widgets.session_table import SessionTable
from tests.ui.conftest import wait_until


async def test_undated_sessions_are_sorted_newest_first_once_counted(tmp_path: Path) -> None:
    starts = {"old": 1_700_000_000.0, "newest": 1_760_000_000.0, "middle": 1_730_000_000.0}
    # Listed without a start (the glance could not date them): only reading them tells.
    entries = {name: SessionEntry(key=name, path=tmp_path / name, own_file=True)
               for name in starts}
    picker = SessionPicker(str(tmp_path), [PickerRow(entry=e) for e in entries.values()],
                           DEFAULT_RULES)
    app: App[None] = App()
    async with app.run_test(size=(140, 20)) as pilot:
        await app.push_screen(picker)
        await wait_until(pilot, lambda: picker.query_one(SessionTable).row_count == 3)
        for name, entry in entries.items():
            summary = SessionSummary(label=name, started=starts[name], turns=2, empty=0,
                                     subagents=0, format="chat-json")
            picker.show_summary(entry, summary, None)
        await wait_until(pilot, lambda: picker.drawn)
        await pilot.pause()
        table = picker.query_one(SessionTable)
        labels = [str(table.get_row_at(row)[4]) for row in range(table.row_count)]
        assert labels == ["newest", "middle", "old"]
