"""Choose one session of a multi-session source, newest first, with turn and empty counts.

A listed source (a Claude Code project folder, an opencode database or storage folder)
shows its sessions at once; their counts fill in as a worker reads them one by one and lets
each go, so neither the wait nor the memory grows with the whole folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from replay.core.corpus.scan import SessionSummary, summarize
from replay.core.detection.empty import DetectionRules
from replay.core.readers.base import Reader, SessionEntry
from replay.core.session.model import Session
from replay.core.session.text import one_line, plural
from replay.ui.literal import shown
from replay.ui.messages import CountRequested, OpenEntryRequested, OpenSessionRequested

COLUMNS = ("started", "turns", "empty", "subagents", "session", "format", "folder")
"""Counts before the long session name: on a narrow terminal they stay in sight."""
PENDING = Text("…", justify="right", style="dim")


@dataclass(slots=True)
class PickerRow:
    """One session in the list: read already, or listed and maybe summarised since."""

    entry: SessionEntry | None = None
    """How to read it, for a listed source."""
    session: Session | None = None
    """The session itself, for a source that was read whole."""
    summary: SessionSummary | None = None
    """Its counts, once known."""
    error: str | None = None
    """Why it could not be read, if it could not."""

    @property
    def problem(self) -> str | None:
        """Why it cannot be read: found when it was read, or already when it was listed."""
        if self.error is not None:
            return self.error
        return self.entry.problem if self.entry is not None else None

    @property
    def started(self) -> float | None:
        if self.summary is not None and self.summary.started is not None:
            return self.summary.started
        return self.entry.started if self.entry is not None else None


def _when(started: float | None) -> Text:
    return Text(datetime.fromtimestamp(started).strftime("%Y-%m-%d %H:%M") if started else "?")


def _folder(row: PickerRow, root: str) -> Text:
    """Where the session lives under the listed folder (blank when directly in it)."""
    source = row.entry.path if row.entry is not None else \
        Path(row.session.path) if row.session is not None else None
    if source is None:
        return Text("")
    folder = os.path.relpath(source if source.is_dir() else source.parent, root)
    return Text("" if folder == "." else shown(folder)[-50:], style="dim")


def row_cells(row: PickerRow, format_name: str, root: str) -> tuple[Text, ...]:
    """Started, turns, empty turns, subagents, title, format, folder."""
    summary = row.summary
    if summary is None:
        entry = row.entry
        label = (entry.title or entry.key) if entry is not None else "?"
        if row.problem:
            # Greyed: listed so nothing is dropped unsaid, but nothing there to open.
            reason = row.problem
            if entry is not None:
                reason = reason.removeprefix("skipped ").removeprefix(f"{entry.path}: ")
            named = f"{entry.key} · " if entry is not None else ""
            problem = Text(one_line(f"{shown(named)}unreadable: {shown(reason)}", 70),
                           style="dim italic")
            return (Text(_when(row.started).plain, style="dim"), Text(""), Text(""), Text(""),
                    problem, Text(format_name, style="dim"), _folder(row, root))
        return (_when(row.started), PENDING, PENDING, Text(""),
                Text(one_line(shown(label), 70)), Text(format_name), _folder(row, root))
    return (_when(row.started), Text(f"{summary.turns:,}", justify="right"),
            Text(str(summary.empty), justify="right", style="bold" if summary.empty else "dim"),
            Text(f"{summary.subagents}" if summary.subagents else "", justify="right"),
            Text(one_line(shown(summary.label), 70)), Text(summary.format), _folder(row, root))


SORTS = {"started": "start", "empty": "empty turns", "turns": "turns"}
"""Columns the list sorts by (`s` cycles, a header click picks), newest or most first."""


def _sort_value(cell: object) -> tuple[int, str | int]:
    """A cell as a sort key: numbers as numbers, `…` and `?` below everything."""
    text = str(cell).replace(",", "").strip()
    if text.isdigit():
        return 1, int(text)
    return (0, "") if text in ("", "…", "?") else (1, text)


class SessionPicker(Screen[None]):
    """The list of sessions in a directory or database."""

    BINDINGS = [
        Binding("escape", "app.quit", "Quit", id="picker-quit"),
        Binding("s", "sort", "Sort", id="picker-sort",
                tooltip="Sort by start, by empty turns or by turns"),
    ]
    DEFAULT_CSS = """
    SessionPicker > #picker-title { height: 1; padding: 0 1; background: $panel; }
    SessionPicker > DataTable { height: 1fr; }
    """

    def __init__(self, path: str, rows: list[PickerRow], rules: DetectionRules,
                 reader: Reader | None = None) -> None:
        super().__init__()
        self.rows = sorted(rows, key=lambda row: row.started or 0.0, reverse=True)
        """Newest first."""
        self.path = path
        self.rules = rules
        self.reader = reader
        """The reader of a listed source (None when every session was read already)."""
        self.sorted_by = "started"
        """The column the list is sorted by."""
        self._number_of = {id(row.entry): number for number, row in enumerate(self.rows)
                           if row.entry is not None}
        self._waiting = sum(row.summary is None and row.problem is None for row in self.rows)
        """Listed sessions whose counts are not in yet."""

    @classmethod
    def of_sessions(cls, path: str, sessions: list[Session],
                    rules: DetectionRules) -> SessionPicker:
        """The list of sessions read whole already."""
        return cls(path, [PickerRow(session=s, summary=summarize(s, rules)) for s in sessions],
                   rules)

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="picker-title", markup=False)
        yield DataTable(cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for column in COLUMNS:
            table.add_column(column, key=column)
        for number, row in enumerate(self.rows):
            table.add_row(*row_cells(row, self._format_name(row), self.path), key=str(number))
        table.focus()

    def _title(self) -> Text:
        title = Text(f" {plural(len(self.rows), 'session')} in {shown(self.path)}")
        waiting = self._waiting
        if waiting:
            title.append(f" · counting turns, {len(self.rows) - waiting} / {len(self.rows)}",
                         style="italic")
        if self.sorted_by != "started":
            title.append(f" · most {SORTS[self.sorted_by]} first")
        title.append(" · enter opens one · s sorts")
        return title


    def action_sort(self) -> None:
        columns = list(SORTS)
        self.sort_by(columns[(columns.index(self.sorted_by) + 1) % len(columns)])

    def sort_by(self, column: str) -> None:
        """Sort by a column, highest first; rows still being counted go last."""
        self.sorted_by = column
        self.query_one(DataTable).sort(column, key=_sort_value, reverse=True)
        self.query_one("#picker-title", Static).update(self._title())

    @on(DataTable.HeaderSelected)
    def sort_by_header(self, event: DataTable.HeaderSelected) -> None:
        if str(event.column_key.value) in SORTS:
            self.sort_by(str(event.column_key.value))

    def _format_name(self, row: PickerRow) -> str:
        if row.session is not None:
            return row.session.format
        if row.entry is not None and row.entry.format is not None:
            return row.entry.format
        return self.reader.name if self.reader is not None else ""

    def on_screen_resume(self) -> None:
        # Shown, or back from a session: read on the sessions whose counts are missing.
        waiting = [row.entry for row in self.rows
                   if row.entry is not None and row.summary is None and row.problem is None]
        if waiting and self.reader is not None:
            self.post_message(CountRequested(self.reader, waiting))

    def show_summary(self, entry: SessionEntry, summary: SessionSummary | None,
                     error: str | None) -> None:
        """Fill in the row of a listed session that was just read."""
        number = self._number_of.get(id(entry))
        if number is None:
            return
        row = self.rows[number]
        if row.summary is None and row.problem is None:
            self._waiting -= 1
        row.summary, row.error = summary, error
        table = self.query_one(DataTable)
        for column, cell in zip(COLUMNS, row_cells(row, self._format_name(row), self.path),
                                strict=True):
            table.update_cell(str(number), column, cell, update_width=True)
        self.query_one("#picker-title", Static).update(self._title())
        if not self._waiting:
            # Every count is in, and with them the start of sessions a glance could not
            # date: sort once more, so the list is newest first without pressing s.
            self.sort_by(self.sorted_by)

    @on(DataTable.RowSelected)
    def open_selected(self, event: DataTable.RowSelected) -> None:
        # Loading is the app's business: the picker only says what was picked.
        row = self.rows[int(str(event.row_key.value))]
        if row.session is not None:
            self.post_message(OpenSessionRequested(row.session))
        elif row.entry is not None and self.reader is not None:
            self.post_message(OpenEntryRequested(self.reader, row.entry))
