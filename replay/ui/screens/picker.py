"""Choose one session of a multi-session source, newest first, with turn and empty counts.

A listed source (a Claude Code project folder, an opencode database or storage folder, or
every session discovered on this machine) shows its sessions at once; their counts fill in
as a worker reads them one by one and lets each go, so neither the wait nor the memory grows
with the whole folder. `/` filters the rows by what is typed (title, project, id, agent,
folder); `s` or a click on a header sorts by that column (again: the other way round).
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input, Static

from replay.core.corpus.scan import SessionSummary, summarize
from replay.core.detection.empty import DetectionRules
from replay.core.discovery.found import FoundSession
from replay.core.readers.base import Reader, SessionEntry
from replay.core.session.model import Session
from replay.core.session.text import one_line, plural
from replay.ui.literal import shown
from replay.ui.messages import (
    CountRequested,
    HistoryCounted,
    OpenChatRequested,
    OpenEntryRequested,
    OpenSessionRequested,
)
from replay.ui.widgets.session_table import SessionTable

COLUMNS = ("started", "turns", "empty", "subagents", "session", "format", "folder")
"""Counts before the long session name: on a narrow terminal they stay in sight."""
DISCOVERED_COLUMNS = ("written", "turns", "empty", "agent", "session", "project", "id")
"""The columns of the list of every session found on this machine."""
PENDING = Text("…", justify="right", style="dim")
FLUSH_SECONDS = 0.2
"""How often rows whose counts came in are redrawn."""


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
    found: FoundSession | None = None
    """What discovery found out about it (agent, project, id), for a machine-wide list."""
    read: Callable[[], Session] | None = None
    """How to read it when it is opened, for a row of a compact list (a chat of a history
    listed from its headers)."""

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


def _folder(row: PickerRow, root: str, folders: dict[Path, str] | None = None) -> Text:
    """Where the session lives under the listed folder (blank when directly in it, or in
    the listed file itself).

    `folders` keeps what each source gave: whether a source is a folder is a stat, and the
    cell is made each time its row is drawn, sorted or measured (every chat of a history
    shares the history's path: 6,003 stats for a list of 3,000 chats, one with it)."""
    source = row.entry.path if row.entry is not None else \
        Path(row.session.path) if row.session is not None else None
    if source is None:
        return Text("")
    text = folders.get(source) if folders is not None else None
    if text is None:
        # A listed file holding many sessions (an Aider history, `opencode.db`) is its own
        # sessions' place: blank, not ".." (its parent relative to itself).
        folder = "." if os.path.abspath(source) == os.path.abspath(root) else \
            os.path.relpath(source if source.is_dir() else source.parent, root)
        text = "" if folder == "." else shown(folder)[-50:]
        if folders is not None:
            folders[source] = text
    return Text(text, style="dim")


def row_cells(row: PickerRow, format_name: str, root: str,
              folders: dict[Path, str] | None = None) -> tuple[Text, ...]:
    """Started, turns, empty turns, subagents, title, format, folder (`folders`: what
    `_folder` found for each source already)."""
    summary = row.summary
    folder = _folder(row, root, folders)
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
                    problem, Text(format_name, style="dim"), folder)
        return (_when(row.started), PENDING, PENDING, Text(""),
                Text(one_line(shown(label), 70)), Text(format_name), folder)
    return (_when(row.started), Text(f"{summary.turns:,}", justify="right"),
            Text(str(summary.empty), justify="right", style="bold" if summary.empty else "dim"),
            Text(f"{summary.subagents}" if summary.subagents else "", justify="right"),
            Text(one_line(shown(summary.label), 70)), Text(summary.format), folder)


def _tail(text: str, width: int) -> str:
    """The end of a long path (the project's own name), `…` in front."""
    return text if len(text) <= width else "…" + text[-(width - 1):]


TITLE_WIDTH = 60
"""Characters of a discovered session's title shown: with the project's 28 and the other
columns, the list fits 160 columns with the id (what `replay ID` takes) still whole."""

PROJECT_WIDTH = 28
"""Characters of a discovered session's project shown (its end: the project's own name)."""


def discovered_cells(row: PickerRow) -> tuple[Text, ...]:
    """Written, turns, empty turns, agent, title, project and id of a discovered session."""
    from replay.core.discovery import AGENT_TITLES

    found = row.found
    assert found is not None
    summary = row.summary
    dim = "dim" if row.problem else ""
    written = Text(_when(found.newest or None).plain, style=dim)
    agent = Text(AGENT_TITLES.get(found.agent, found.agent), style=dim)
    project = Text(_tail(shown(found.project or ""), PROJECT_WIDTH), style="dim")
    ident = Text(shown(found.session_id or "")[:13], style="dim")
    if row.problem:
        reason = row.problem.removeprefix("skipped ").removeprefix(f"{found.path}: ")
        name = Text(one_line(f"{shown(found.path.name)} · unreadable: {shown(reason)}",
                             TITLE_WIDTH), style="dim italic")
        return written, Text(""), Text(""), agent, name, project, ident
    if summary is None:
        label = found.title or found.session_id or found.path.name
        return (written, PENDING, PENDING, agent, Text(one_line(shown(label), TITLE_WIDTH)),
                project, ident)
    label = found.title or summary.label
    return (written, Text(f"{summary.turns:,}", justify="right"),
            Text(str(summary.empty), justify="right", style="bold" if summary.empty else "dim"),
            agent, Text(one_line(shown(label), TITLE_WIDTH)), project, ident)


def row_text(row: PickerRow) -> str:
    """Everything the filter looks in: title, project, id, agent, file and folder."""
    parts = [row.summary.label if row.summary is not None else ""]
    if row.found is not None:
        from replay.core.discovery import AGENT_TITLES

        found = row.found
        parts += [found.title or "", found.project or "", found.session_id or "", found.agent,
                  AGENT_TITLES.get(found.agent, ""), str(found.path)]
    if row.entry is not None:
        parts += [row.entry.title or "", row.entry.key, str(row.entry.path)]
    if row.session is not None:
        parts += [row.session.label, row.session.session_id or "", row.session.path]
    return "\n".join(parts).casefold()


class CompactRows(Protocol):
    """Rows made when asked for (a history of 144,510 chats): the picker keeps none of them,
    only their numbers in the order shown."""

    def __len__(self) -> int: ...

    def __getitem__(self, number: int) -> PickerRow: ...

    @property
    def waiting(self) -> int:
        """Rows whose counts are not in yet."""
        ...

    def newest_first(self) -> array[int]:
        """Every row's number, newest first."""
        ...

    def matches(self, number: int, needle: str) -> bool:
        """`needle in row_text(self[number])`, without making the row."""
        ...

    def sort_value(self, column: str) -> Callable[[int], object] | None:
        """A key ordering rows as `_sort_value` of their cells in this column does, without
        making the row (None: make the row)."""
        ...

    def widths(self) -> dict[str, int]:
        """The widest cell of each column so far."""
        ...


SORTS = {"started": "recent start", "written": "recently written", "empty": "empty turns",
         "turns": "turns", "subagents": "subagents", "session": "title", "agent": "agent",
         "project": "project", "format": "format", "folder": "folder", "id": "id"}
"""Columns the list sorts by (`s` cycles, a header click picks; again, the other way round)."""
ASCENDING = frozenset({"session", "agent", "project", "format", "folder", "id"})
"""Columns sorted A to Z first; the others newest or most first."""


def _sort_value(cell: object) -> tuple[int, str | int]:
    """A cell as a sort key: numbers as numbers, `…` and `?` below everything."""
    text = str(cell).replace(",", "").strip()
    if text.isdigit():
        return 1, int(text)
    return (0, "") if text in ("", "…", "?") else (1, text)


class SessionPicker(Screen[None]):
    """The list of sessions in a directory or database, or of every session found here."""

    BINDINGS = [
        Binding("escape", "escape", "Quit", id="picker-quit",
                tooltip="Clear the filter, or quit"),
        Binding("s", "sort", "Sort", id="picker-sort",
                tooltip="Sort by the next column (a header click sorts by it)"),
        Binding("slash", "filter", "Filter", id="picker-filter",
                tooltip="Type to show only the sessions whose title, project, id or agent "
                        "holds the text"),
    ]
    DEFAULT_CSS = """
    SessionPicker > #picker-title { height: 1; padding: 0 1; background: $panel; }
    SessionPicker > SessionTable { height: 1fr; }
    SessionPicker > #picker-filter { display: none; height: 1; border: none; padding: 0 1; }
    SessionPicker > #picker-filter.shown { display: block; }
    """

    def __init__(self, path: str, rows: list[PickerRow] | CompactRows, rules: DetectionRules,
                 reader: Reader | None = None, *, heading: str | None = None) -> None:
        super().__init__()
        compact = None if isinstance(rows, list) else rows
        discovered = compact is None and bool(rows) and all(row.found is not None
                                                            for row in rows)
        self.columns = DISCOVERED_COLUMNS if discovered else COLUMNS
        """The columns shown: a folder's, or those of every session found here."""
        newest = (lambda row: row.found.newest if row.found is not None else 0.0) \
            if discovered else (lambda row: row.started or 0.0)
        self.compact: CompactRows | None = compact  # type: ignore[assignment]
        """The rows when they are made as they are drawn (else `rows` is a list)."""
        self.rows: Sequence[PickerRow] = rows if compact is not None \
            else sorted(rows, key=newest, reverse=True)
        """Newest first (a compact list: in its own order; `_base` is newest first)."""
        self._base: array[int] = compact.newest_first() if compact is not None \
            else array("l", range(len(self.rows)))
        """Every row's number, newest first: the order before any filter or sort."""
        self.path = path
        self.heading = heading
        """What the title says the list is of (default: the sessions in `path`)."""
        self.rules = rules
        self.reader = reader
        """The reader of a listed source (None when every session was read already)."""
        self.sorted_by = "written" if discovered else "started"
        """The column the list is sorted by."""
        self.sort_reverse = True
        """Highest, newest or last first."""
        self.filter_text = ""
        """What the shown rows must hold (casefolded), "" for all."""
        self._dirty: set[int] = set()
        """Rows whose counts came in and are not drawn yet."""
        self._flush_timer: Timer | None = None
        self._folders: dict[Path, str] = {}
        """The folder cell of each source met, by its path (`_folder`)."""
        self._number_of = {} if compact is not None else {
            id(row.entry): number for number, row in enumerate(self.rows)
            if row.entry is not None}
        self._waiting = compact.waiting if compact is not None else sum(
            row.summary is None and row.problem is None for row in self.rows)
        """Listed sessions whose counts are not in yet."""

    @classmethod
    def of_sessions(cls, path: str, sessions: list[Session],
                    rules: DetectionRules) -> SessionPicker:
        """The list of sessions read whole already."""
        return cls(path, [PickerRow(session=s, summary=summarize(s, rules)) for s in sessions],
                   rules)

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="picker-title", markup=False)
        yield Input(placeholder="filter: title, project, id or agent (enter keeps it, "
                                "escape clears it)", id="picker-filter")
        yield SessionTable(self.columns, self._row_cells, id="picker-table")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(SessionTable)
        if self.compact is not None:
            table.widen(self.compact.widths())
        else:
            table.widen(self._widths(range(len(self.rows))))
        self._fill()
        table.focus()

    def _row_cells(self, number: int) -> tuple[Text, ...]:
        return self._cells(self.rows[number])

    def _widths(self, numbers: Sequence[int] | set[int]) -> dict[str, int]:
        """The widest cell of each column among these rows."""
        widths = dict.fromkeys(self.columns, 0)
        for number in numbers:
            for column, cell in zip(self.columns, self._row_cells(number), strict=True):
                if cell.cell_len > widths[column]:
                    widths[column] = cell.cell_len
        return widths

    def _cells(self, row: PickerRow) -> tuple[Text, ...]:
        if row.found is not None and self.columns is DISCOVERED_COLUMNS:
            return discovered_cells(row)
        return row_cells(row, self._format_name(row), self.path, self._folders)

    def _fill(self) -> None:
        """(Re)build the rows shown: those the filter keeps, in the current sort."""
        table = self.query_one(SessionTable)
        needle = self.filter_text
        order = self._base
        if needle:
            compact = self.compact
            keeps: Callable[[int], bool] = (
                (lambda number: compact.matches(number, needle)) if compact is not None
                else (lambda number: needle in row_text(self.rows[number])))
            order = array("l", filter(keeps, order))
        if self.sorted_by != self.columns[0] or not self.sort_reverse:
            order = self._sorted(order)
        table.show_rows(order)

    def _sorted(self, order: Sequence[int]) -> array[int]:
        """These rows in the current sort (stable: rows alike keep their order)."""
        column = self.sorted_by
        key: Callable[[int], Any] | None = \
            self.compact.sort_value(column) if self.compact is not None else None
        if key is None:
            place = self.columns.index(column)

            def key(number: int) -> tuple[int, str | int]:
                return _sort_value(self._row_cells(number)[place])

        return array("l", sorted(order, key=key, reverse=self.sort_reverse))

    def _title(self) -> Text:
        what = self.heading or f"in {shown(self.path)}"
        title = Text(f" {plural(len(self.rows), 'session')} {what}")
        if self.filter_text:
            try:
                count = self.query_one(SessionTable).row_count
            except Exception:  # noqa: BLE001 - before mount: nothing filtered yet
                count = len(self.rows)
            title.append(f" · {count:,} shown for '{shown(self.filter_text)}'", style="bold")
        waiting = self._waiting
        if waiting:
            title.append(f" · counting turns, {len(self.rows) - waiting:,} / {len(self.rows):,}",
                         style="italic")
        if self.sorted_by != self.columns[0] or not self.sort_reverse:
            name = SORTS[self.sorted_by]
            if self.sorted_by in ASCENDING:
                title.append(f" · by {name}, {'Z to A' if self.sort_reverse else 'A to Z'}")
            else:
                title.append(f" · {'most' if self.sort_reverse else 'least'} {name} first")
        title.append(" · enter opens one · / filters · s sorts")
        return title

    def _retitle(self) -> None:
        for title in self.query("#picker-title").results(Static):
            title.update(self._title())

    def action_sort(self) -> None:
        columns = [column for column in SORTS if column in self.columns]
        following = columns[(columns.index(self.sorted_by) + 1) % len(columns)] \
            if self.sorted_by in columns else columns[0]
        self.sort_by(following)

    def sort_by(self, column: str, reverse: bool | None = None) -> None:
        """Sort by a column: numbers and times highest first, names A to Z (`reverse`
        overrides); rows still being counted go last."""
        self.sorted_by = column
        self.sort_reverse = column not in ASCENDING if reverse is None else reverse
        # The table sorts what it shows: counts that came in but wait for the next redraw
        # would sort as "still counting".
        self._draw_dirty()
        for table in self.query(SessionTable).results(SessionTable):
            row = table.cursor_row
            table.show_rows(self._sorted(table.order))
            table.move_cursor(row=row)  # as DataTable's sort: the cursor stays on its line
        self._retitle()

    @on(SessionTable.HeaderSelected)
    def sort_by_header(self, event: SessionTable.HeaderSelected) -> None:
        column = event.column
        if column in SORTS:
            # The column it is sorted by already: the other way round.
            self.sort_by(column, not self.sort_reverse if column == self.sorted_by else None)

    def action_filter(self) -> None:
        """Show the filter line and type into it."""
        field = self.query_one("#picker-filter", Input)
        field.add_class("shown")
        field.focus()

    def action_escape(self) -> None:
        """Clear the filter (and hide it) when there is one; else quit."""
        field = self.query_one("#picker-filter", Input)
        if field.has_class("shown") or self.filter_text:
            field.value = ""
            field.remove_class("shown")
            self.query_one(SessionTable).focus()
            return
        self.run_action("app.quit")

    @on(Input.Changed, "#picker-filter")
    def filter_changed(self, event: Input.Changed) -> None:
        self.filter_text = event.value.strip().casefold()
        self._fill()
        self._retitle()

    @on(Input.Submitted, "#picker-filter")
    def filter_kept(self) -> None:
        self.query_one(SessionTable).focus()

    def _format_name(self, row: PickerRow) -> str:
        if row.session is not None:
            return row.session.format
        if row.entry is not None and row.entry.format is not None:
            return row.entry.format
        return self.reader.name if self.reader is not None else ""

    def on_screen_resume(self) -> None:
        # Shown, or back from a session: read on the sessions whose counts are missing.
        if self.compact is not None:
            return  # a compact list is counted by its own worker, started with it
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
        # Counts arrive one by one, fast for small sessions: the rows are redrawn a few
        # times a second, not once per count, so the list stays quick to filter and move in.
        self._dirty.add(number)
        if self._flush_timer is None:
            self._flush_timer = self.set_timer(FLUSH_SECONDS, self._flush)

    @property
    def drawn(self) -> bool:
        """True when every count that came in is on screen."""
        return not self._dirty

    def _flush(self) -> None:
        """Draw the rows whose counts came in since the last time."""
        self._flush_timer = None
        if not self._draw_dirty():
            return
        self._retitle()
        if not self._waiting:
            # Every count is in, and with them the start of sessions a glance could not
            # date: sort once more, so the list is newest first without pressing s.
            self.sort_by(self.sorted_by, self.sort_reverse)

    def _draw_dirty(self) -> bool:
        """Draw the rows whose counts came in and are not on screen yet; False when the
        table is not composed (its rows are drawn from `self.rows` when it is)."""
        tables = self.query(SessionTable)
        if not tables:
            return False
        table = tables.first()
        dirty, self._dirty = self._dirty, set()
        # Only the rows on screen are drawn: the rest are drawn from `self.rows` when
        # scrolled to. Columns only widen (a narrower cell leaves its column as it is).
        table.widen(self._widths(dirty))
        return True

    @on(HistoryCounted)
    def counted(self, event: HistoryCounted) -> None:
        """A compact list's counts came in: `waiting` rows are still to count."""
        if self.compact is None:
            return
        if event.error:
            self.notify(shown(event.error), title="Counting stopped", severity="warning",
                        markup=False, timeout=10)
        # Counting that stopped says so once; its rows stay uncounted, not "counting".
        waiting = self._waiting = 0 if event.error else event.waiting
        for table in self.query(SessionTable).results(SessionTable):
            table.widen(self.compact.widths())
        self._retitle()
        if not waiting:
            self.sort_by(self.sorted_by, self.sort_reverse)

    @on(SessionTable.RowSelected)
    def open_selected(self, event: SessionTable.RowSelected) -> None:
        # Loading is the app's business: the picker only says what was picked.
        row = self.rows[event.number]
        if row.read is not None:
            self.post_message(OpenChatRequested(row.read))
        elif row.session is not None:
            self.post_message(OpenSessionRequested(row.session))
        elif row.entry is not None and self.reader is not None:
            self.post_message(OpenEntryRequested(self.reader, row.entry))
